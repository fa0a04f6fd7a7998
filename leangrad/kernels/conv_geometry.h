// The index math of a 2-D convolution, shared by the CPU im2col kernels (kernels/cpu/conv.cpp) and
// the CUDA implicit-GEMM kernels (kernels/cuda/conv.cu), so the CPU tests exercise the same
// formulas the GPU runs. Layouts are NCHW throughout:
//   x (N, C_in, H, W), weight (C_out, C_in / groups, kH, kW), y (N, C_out, H_out, W_out).
#pragma once

#include <compare>
#include <cstdint>

#include <leangrad/core/macros.h>

namespace leangrad {

// One output size along one spatial dim (as torch.nn.Conv2d documents it); <= 0 when the
// dilated kernel does not fit into the padded input.
template <typename Int>
LG_HOST_DEVICE LG_INLINE Int conv_output_size(Int in, Int kernel, Int stride, Int padding,
                                              Int dilation) {
  const Int span = dilation * (kernel - 1) + 1;  // the dilated kernel's extent
  if (in + 2 * padding < span) return 0;
  return (in + 2 * padding - span) / stride + 1;
}

// The input coordinate that kernel tap `tap` of output position `out` reads (may lie in the
// padding: outside [0, in_size)).
template <typename Int>
LG_HOST_DEVICE LG_INLINE Int conv_input_coord(Int out, Int tap, Int stride, Int padding,
                                              Int dilation) {
  return out * stride - padding + tap * dilation;
}

// The inverse, for the input gradient (the "gather" formulation): the output position whose tap
// `tap` reads input coordinate `in`, if there is one. With stride > 1 most (in, tap) pairs have
// none: in + padding - tap * dilation must be a non-negative multiple of the stride, and the
// quotient a valid output position.
template <typename Int>
LG_HOST_DEVICE LG_INLINE bool conv_output_coord(Int in, Int tap, Int stride, Int padding,
                                                Int dilation, Int out_size, Int* out) {
  const Int numerator = in + padding - tap * dilation;
  if (numerator < 0 || numerator % stride != 0) return false;
  *out = numerator / stride;
  return *out < out_size;
}

// The helpers above are templates on the integer type: the CPU calls them with int64_t, the
// CUDA kernels with int (they check that every tensor has fewer than 2^31 elements).

// Every size of one convolution, checked and filled in by kernels/ops_conv.cpp.
struct Conv2dGeometry {
  std::int64_t batch = 0;        // N
  std::int64_t in_channels = 0;  // C_in
  std::int64_t in_h = 0, in_w = 0;
  std::int64_t out_channels = 0;  // C_out
  std::int64_t kernel_h = 0, kernel_w = 0;
  std::int64_t out_h = 0, out_w = 0;
  std::int64_t stride_h = 1, stride_w = 1;
  std::int64_t pad_h = 0, pad_w = 0;
  std::int64_t dilation_h = 1, dilation_w = 1;
  std::int64_t groups = 1;

  LG_HOST_DEVICE std::int64_t in_channels_per_group() const { return in_channels / groups; }
  LG_HOST_DEVICE std::int64_t out_channels_per_group() const { return out_channels / groups; }
  LG_HOST_DEVICE std::int64_t kernel_taps() const { return kernel_h * kernel_w; }
  // K of the forward GEMM: one row of the im2col matrix per (c_in in group, kh, kw).
  LG_HOST_DEVICE std::int64_t patch_size() const { return in_channels_per_group() * kernel_taps(); }
  LG_HOST_DEVICE std::int64_t in_pixels() const { return in_h * in_w; }
  LG_HOST_DEVICE std::int64_t out_pixels() const { return out_h * out_w; }

  // Field by field: the caches of planned convolutions (cuDNN's choices, oneDNN's primitives)
  // key on the whole geometry.
  friend bool operator==(const Conv2dGeometry&, const Conv2dGeometry&) = default;
  friend auto operator<=>(const Conv2dGeometry&, const Conv2dGeometry&) = default;
};

}  // namespace leangrad
