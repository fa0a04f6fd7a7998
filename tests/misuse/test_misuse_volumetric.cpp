// Misuse of the 3-d layers (autograd/volumetric_functions.h, nn::Conv3d and the 3-d pooling
// modules): inputs of the wrong rank or dtype, weights that do not fit, options out of range and
// volumes too small for the window, each named in the 3-d function's own words. Tables of the
// misuse suite (tests/misuse/misuse_testing.h).
#include <cstdint>
#include <vector>

#include <leangrad/autograd/volumetric_functions.h>
#include <leangrad/core/creation.h>
#include <leangrad/kernels/creation.h>
#include <leangrad/nn/conv.h>
#include <leangrad/nn/pooling.h>
#include "misuse/misuse_testing.h"

namespace leangrad::test {
namespace {

Tensor volume() {
  return ones({2, 3, 4, 5, 6});
}

std::vector<MisuseCase> volumetric_cases() {
  MisuseTable t;
  t.add("conv3d_4d_weight", Raises::ShapeError, {"conv3d", "(C_out, C_in / groups, kD, kH, kW)"},
        [] {
          conv3d(volume(), ones({4, 3, 3, 3}));
        });
  t.add("conv3d_3d_input", Raises::ShapeError, {"conv3d", "(N, C, D, H, W)", "[3, 5, 6]"}, [] {
    conv3d(ones({3, 5, 6}), ones({4, 3, 2, 2, 2}));
  });
  t.add("conv3d_channels", Raises::ShapeError, {"conv3d", "C_in = weight.size(1) * groups"}, [] {
    conv3d(volume(), ones({4, 2, 2, 2, 2}));
  });
  t.add("conv3d_too_shallow", Raises::ShapeError,
        {"conv3d", "smaller in depth than the kernel's span 5"}, [] {
          conv3d(volume(), ones({4, 3, 3, 2, 2}), Tensor(), {1, 1, 1}, {0, 0, 0}, {2, 1, 1});
        });
  // Height, width and the bias were left to the planes' conv2d, which named itself and the
  // gathered planes' shapes.
  t.add("conv3d_too_low", Raises::ShapeError,
        {"conv3d", "smaller in height than the kernel's span 9", "[4, 3, 2, 5, 2]"}, [] {
          conv3d(volume(), ones({4, 3, 2, 5, 2}), Tensor(), {1, 1, 1}, {0, 0, 0}, {1, 2, 1});
        });
  t.add("conv3d_bias_shape", Raises::ShapeError, {"conv3d", "bias of shape [4]", "got [5]"}, [] {
    conv3d(volume(), ones({4, 3, 2, 2, 2}), ones({5}));
  });
  t.add("conv3d_zero_stride", Raises::ShapeError, {"conv3d", "stride >= 1", "[1, 0, 1]"}, [] {
    conv3d(volume(), ones({4, 3, 2, 2, 2}), Tensor(), {1, 0, 1});
  });
  t.add("conv3d_integral_input", Raises::DTypeError, {"conv3d", "int64"}, [] {
    conv3d(ones({2, 3, 4, 5, 6}, kInt64), ones({4, 3, 2, 2, 2}));
  });
  t.add("conv3d_module_groups", Raises::ShapeError, {"Conv3d", "divisible by groups (2)"},
        [] { nn::Conv3d(nn::Conv3dOptions(3, 4, 2).groups(2)); });
  t.add("max_pool3d_padding_over_half", Raises::Error,
        {"max_pool3d", "at most half the kernel size", "[1, 1, 2]"}, [] {
          max_pool3d(volume(), {2, 2, 2}, {0, 0, 0}, {1, 1, 2});
        });
  t.add("max_pool3d_too_small", Raises::ShapeError, {"max_pool3d", "too small", "dim 2"}, [] {
    max_pool3d(volume(), {5, 2, 2});
  });
  t.add("max_pool3d_zero_kernel", Raises::Error, {"max_pool3d", "positive kernel_size"}, [] {
    max_pool3d(volume(), {2, 0, 2});
  });
  t.add("avg_pool3d_zero_divisor", Raises::Error, {"avg_pool3d", "divisor_override must not be 0"},
        [] {
          avg_pool3d(volume(), {2, 2, 2}, {0, 0, 0}, {0, 0, 0}, false, true, 0);
        });
  t.add("avg_pool3d_huge_stride", Raises::Error, {"avg_pool3d", "below 2^31"}, [] {
    avg_pool3d(volume(), {2, 2, 2}, {std::int64_t{1} << 40, 1, 1});
  });
  t.add("adaptive_avg_pool3d_negative", Raises::ShapeError,
        {"adaptive_avg_pool3d", "non-negative output size", "[2, -1, 2]"}, [] {
          adaptive_avg_pool3d(volume(), {2, -1, 2});
        });
  // The 2-d poolings they are made of named themselves and their (N, C D, H, W) views.
  t.add("adaptive_avg_pool3d_empty_depth", Raises::ShapeError,
        {"adaptive_avg_pool3d", "non-zero size", "[1, 2, 0, 5, 5]"}, [] {
          adaptive_avg_pool3d(ones({1, 2, 0, 5, 5}), {2, 2, 2});
        });
  t.add("adaptive_max_pool3d_no_channels", Raises::ShapeError,
        {"adaptive_max_pool3d", "non-zero size", "[1, 0, 5, 5, 5]"}, [] {
          adaptive_max_pool3d(ones({1, 0, 5, 5, 5}), {2, 2, 2});
        });
  t.add("adaptive_avg_pool3d_output_overflows", Raises::ShapeError,
        {"adaptive_avg_pool3d", "overflows int64"}, [] {
          const std::int64_t big = std::int64_t{1} << 32;
          adaptive_avg_pool3d(ones({1, 1, 2, 2, 2}), {big, big, big});
        });
  t.add("adaptive_max_pool3d_empty_depth", Raises::ShapeError,
        {"adaptive_max_pool3d", "non-zero size", "[2, 3, 0, 5, 6]"}, [] {
          adaptive_max_pool3d(ones({2, 3, 0, 5, 6}), {1, 1, 1});
        });
  t.add("max_pool3d_bool", Raises::DTypeError, {"max_pool3d", "bool"}, [] {
    max_pool3d(ones({2, 3, 4, 5, 6}, kBool), {2, 2, 2});
  });
  return t.cases();
}
LG_MISUSE_SUITE(Volumetric, volumetric_cases());

}  // namespace
}  // namespace leangrad::test
