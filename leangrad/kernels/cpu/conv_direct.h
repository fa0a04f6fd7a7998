// conv2d by oneDNN's direct convolution (kernels/onednn/onednn_conv.cpp; stand-ins in
// kernels/no_onednn/ that decline everything): the second CPU implementation beside im2col + GEMM
// (kernels/cpu/conv.cpp, which chooses between them, Note [Which CPU convolution]); and conv3d's
// only CPU kernel (kernels/ops_conv.cpp, Note [Direct 3-D convolution]). float32,
// plain NCHW tensors in and out, as the GEMM path takes them: x (N, C_in, H, W), w (C_out,
// C_in / groups, kH, kW), y (N, C_out, H_out, W_out). Inside, oneDNN's kernels read and write
// channel-blocked layouts (nChw16c on AVX-512, nChw8c on AVX2); the reorders to and from them
// are part of every call.
//
// Each entry returns false, having written nothing, when oneDNN has no direct (generated, jit)
// implementation of the problem on this CPU, only its reference loop or its own im2col + GEMM,
// or when this build has no oneDNN; the caller then runs the GEMM path. Primitives are built
// once per (problem, thread count) and kept in a process-wide cache (a mutex guards it; each
// call has its own scratch memory, so calls may run concurrently). Threads: set_num_threads, one
// chunk of the batch per thread as the GEMM path splits it (Note [Direct convolution threads]);
// inside a parallel region, the calling thread alone.
#pragma once

#include <array>
#include <compare>
#include <cstdint>

#include <leangrad/kernels/conv_geometry.h>

namespace leangrad::kernels::cpu::onednn {

// Every size of one 3-D convolution, checked and filled in by kernels/ops_conv.cpp: x (N, C_in,
// D, H, W), w (C_out, C_in / groups, kD, kH, kW), y (N, C_out, D_out, H_out, W_out); each array
// is (depth, height, width).
struct Conv3dGeometry {
  std::int64_t batch = 0;
  std::int64_t in_channels = 0;
  std::int64_t out_channels = 0;
  std::int64_t groups = 1;
  std::array<std::int64_t, 3> in{}, kernel{}, out{};
  std::array<std::int64_t, 3> stride{1, 1, 1}, pad{0, 0, 0}, dilation{1, 1, 1};
  friend auto operator<=>(const Conv3dGeometry&, const Conv3dGeometry&) = default;
};

// y = conv2d(x, w) (+ bias[c_out] when bias is not null).
bool conv2d_direct_forward(const Conv2dGeometry& g, float* y, const float* x, const float* w,
                           const float* bias);
// dx = the gradient of the input from dy (N, C_out, H_out, W_out) and w.
bool conv2d_direct_input_grad(const Conv2dGeometry& g, float* dx, const float* dy, const float* w);
// dw = the gradient of the weight from dy and x (written, not accumulated).
bool conv2d_direct_weight_grad(const Conv2dGeometry& g, float* dw, const float* dy, const float* x);

// The same three for a 3-D convolution, plain NCDHW in and out.
bool conv3d_direct_forward(const Conv3dGeometry& g, float* y, const float* x, const float* w,
                           const float* bias);
bool conv3d_direct_input_grad(const Conv3dGeometry& g, float* dx, const float* dy, const float* w);
bool conv3d_direct_weight_grad(const Conv3dGeometry& g, float* dw, const float* dy, const float* x);
// Whether oneDNN has generated kernels for all three passes of g (each built and cached here, so
// the entries above then succeed), with a bias or without.
bool conv3d_direct_available(const Conv3dGeometry& g, bool has_bias);

}  // namespace leangrad::kernels::cpu::onednn
