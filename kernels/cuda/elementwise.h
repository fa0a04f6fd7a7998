// Raw-pointer launchers of the elementwise kernels in CUDA, on the current stream.
// Pointers are element 0 of each operand; the geometry gives shapes and strides. Asynchronous;
// called only by kernels/ops_elementwise.cpp, which has already checked dtypes, devices and shapes.
#pragma once

#include <cstdint>

#include "kernels/elementwise_geometry.h"
#include "kernels/ops.h"

namespace leangrad::kernels::cuda {

// out = a op b; out, a and b all of `dtype`.
void binary(BinaryOp op, DType dtype, const ElementwiseGeometry& g, void* out, const void* a,
            const void* b);
// out = a op s (s op a when scalar_first); s converted to dtype's math type first.
void binary_scalar(BinaryOp op, DType dtype, const ElementwiseGeometry& g, void* out, const void* a,
                   double s, bool scalar_first);
void unary(UnaryOp op, DType dtype, const ElementwiseGeometry& g, void* out, const void* a);
// out (bool) = a op b, a and b of `dtype`.
void compare(CompareOp op, DType dtype, const ElementwiseGeometry& g, bool* out, const void* a,
             const void* b);
void compare_scalar(CompareOp op, DType dtype, const ElementwiseGeometry& g, bool* out,
                    const void* a, double s);
// out = cond ? a : b; out, a, b of `dtype`.
void where(DType dtype, const ElementwiseGeometry& g, void* out, const bool* cond, const void* a,
           const void* b);
// out (out_dtype) = in (in_dtype) converted; with equal dtypes this is the strided copy.
void cast(DType out_dtype, DType in_dtype, const ElementwiseGeometry& g, void* out, const void* in);
void fill(DType dtype, const ElementwiseGeometry& g, void* out, double value);

}  // namespace leangrad::kernels::cuda
