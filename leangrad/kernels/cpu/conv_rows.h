// The CPU convolution by rows of zero-padded planes, for stride 1 and few output channels
// (Note [Convolution by padded rows] in kernels/cpu/conv_rows.cpp; the choice: Note [Which CPU
// convolution] in kernels/cpu/conv.cpp).
#pragma once

#include <cstdint>

#include <leangrad/kernels/conv_geometry.h>

namespace leangrad::kernels::cpu {

// Whether the geometry is one these take: stride 1 and dilation 1 both ways, and padding of at
// most kernel - 1 each way (the input gradient pads dy by kernel - 1 - padding).
bool conv_rows_applies(const Conv2dGeometry& g);

// y = conv2d(x, w) + bias (bias may be null); dx = its input gradient; dw = its weight gradient
// (overwritten). T is float or double; g must satisfy conv_rows_applies.
template <typename T>
void conv2d_rows_forward(const Conv2dGeometry& g, T* y, const T* x, const T* w, const T* bias);
template <typename T>
void conv2d_rows_input_grad(const Conv2dGeometry& g, T* dx, const T* dy, const T* w);
template <typename T>
void conv2d_rows_weight_grad(const Conv2dGeometry& g, T* dw, const T* dy, const T* x);

}  // namespace leangrad::kernels::cpu
