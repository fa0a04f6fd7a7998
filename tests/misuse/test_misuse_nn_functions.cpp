// Misuse of the neural-network functions (autograd/nn_functions.h): convolution, pooling,
// normalization, activations, dropout, softmax, linear, pixel shuffle and the losses (and
// autograd/losses.h's), called
// with wrong ranks, mismatched channels, dtypes and targets, and parameters out of range or too
// large for the size arithmetic. Tables of the misuse suite (tests/misuse/misuse_testing.h).
#include <cstdint>
#include <limits>
#include <vector>

#include <leangrad/autograd/activations.h>
#include <leangrad/autograd/functions.h>
#include <leangrad/autograd/losses.h>
#include <leangrad/autograd/margin_losses.h>
#include <leangrad/autograd/nn_functions.h>
#include <leangrad/autograd/volumetric_functions.h>
#include <leangrad/core/creation.h>
#include <leangrad/kernels/creation.h>
#include <leangrad/kernels/ops.h>
#include <leangrad/nn/conv.h>
#include "misuse/misuse_testing.h"

namespace leangrad::test {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr std::int64_t k2Pow32 = std::int64_t{1} << 32;
constexpr std::int64_t k2Pow40 = std::int64_t{1} << 40;

Tensor image() {
  return ones({1, 3, 5, 5});  // (N, C, H, W)
}
Tensor kernel() {
  return ones({2, 3, 3, 3});  // (C_out, C_in, kH, kW)
}
Tensor targets(std::vector<std::int64_t> values) {
  return tensor(values);
}

std::vector<MisuseCase> conv_cases() {
  MisuseTable t;
  // 3-D is an unbatched input (Note [Unbatched convolutions]); 2-D is neither.
  t.add("conv2d_2d_input", Raises::ShapeError, {"conv2d", "4-D input", "[5, 5]"}, [] {
    conv2d(ones({5, 5}), kernel());
  });
  t.add("conv2d_2d_weight", Raises::ShapeError, {"conv2d", "4-D weight", "[2, 27]"}, [] {
    conv2d(image(), ones({2, 27}));
  });
  t.add("conv2d_channels_differ", Raises::ShapeError, {"conv2d", "[2, 2, 3, 3]", "[1, 3, 5, 5]"},
        [] {
          conv2d(image(), ones({2, 2, 3, 3}));
        });
  t.add("conv2d_zero_groups", Raises::ShapeError, {"conv2d", "groups", "0"}, [] {
    conv2d(image(), kernel(), {}, {1, 1}, {0, 0}, {1, 1}, 0);
  });
  t.add("conv2d_groups_do_not_divide_channels", Raises::ShapeError,
        {"conv2d", "channels 3", "groups = 2"}, [] {
          conv2d(image(), ones({2, 1, 3, 3}), {}, {1, 1}, {0, 0}, {1, 1}, 2);
        });
  t.add("conv2d_zero_stride", Raises::ShapeError, {"conv2d", "stride (0, 1)"}, [] {
    conv2d(image(), kernel(), {}, {0, 1});
  });
  t.add("conv2d_negative_padding", Raises::ShapeError, {"conv2d", "padding (-1, 0)"}, [] {
    conv2d(image(), kernel(), {}, {1, 1}, {-1, 0});
  });
  t.add("conv2d_zero_dilation", Raises::ShapeError, {"conv2d", "dilation (1, 0)"}, [] {
    conv2d(image(), kernel(), {}, {1, 1}, {0, 0}, {1, 0});
  });
  t.add("conv2d_kernel_larger_than_input", Raises::ShapeError, {"conv2d", "(3, 3)", "(2, 2)"}, [] {
    conv2d(ones({1, 3, 2, 2}), kernel());
  });
  t.add("conv2d_dilated_kernel_larger_than_input", Raises::ShapeError,
        {"conv2d", "size (3, 3)", "dilation (3, 3)", "(5, 5)"}, [] {
          conv2d(image(), kernel(), {}, {1, 1}, {0, 0}, {3, 3});
        });
  t.add("conv2d_huge_stride", Raises::ShapeError, {"conv2d", "2^31", "1099511627776"}, [] {
    conv2d(image(), kernel(), {}, {k2Pow40, 1});
  });
  t.add("conv2d_huge_padding", Raises::ShapeError, {"conv2d", "2^31", "1099511627776"}, [] {
    conv2d(image(), kernel(), {}, {1, 1}, {0, k2Pow40});
  });
  t.add("conv2d_bias_shape", Raises::ShapeError, {"conv2d", "bias", "(2)", "[3]"},
        [] { conv2d(image(), kernel(), ones({3})); });
  t.add("conv2d_dtypes_differ", Raises::DTypeError, {"conv2d", "float32", "float64"},
        [] { conv2d(image(), kernel().to(kFloat64)); });
  t.add("conv2d_bias_dtype", Raises::DTypeError, {"conv2d", "bias", "float64"},
        [] { conv2d(image(), kernel(), ones({2}, kFloat64)); });
  t.add("conv2d_integral", Raises::DTypeError, {"conv2d", "int64"},
        [] { conv2d(image().to(kInt64), kernel().to(kInt64)); });
  t.add("conv2d_undefined_weight", Raises::Error, {"conv2d", "weight"},
        [] { conv2d(image(), Tensor()); });
  t.add("conv_transpose1d_4d_input", Raises::ShapeError,
        {"conv_transpose1d", "(N, C_in, L)", "[1, 3, 5, 5]"}, [] {
          conv_transpose1d(image(), ones({3, 2, 3}));
        });
  t.add("conv_transpose1d_4d_weight", Raises::ShapeError,
        {"conv_transpose1d", "(C_in, C_out / groups, k)", "[3, 2, 3, 3]"}, [] {
          conv_transpose1d(ones({2, 3, 7}), ones({3, 2, 3, 3}));
        });
  t.add("conv_transpose1d_output_padding_too_large", Raises::Error,
        {"conv_transpose2d", "output_padding"}, [] {
          conv_transpose1d(ones({2, 3, 7}), ones({3, 2, 3}), Tensor(), 2, 0, 2);
        });
  // Padding by rule (autograd/conv_padding.cpp): kSame only at stride 1, and the convolution's
  // own errors name the caller's shapes.
  t.add("conv2d_same_strided", Raises::ShapeError, {"conv2d", "kSame", "stride 1", "[2, 1]"}, [] {
    conv2d(image(), kernel(), Tensor(), {2, 1}, kSame);
  });
  t.add("conv1d_same_strided", Raises::ShapeError, {"conv1d", "kSame", "[3]"}, [] {
    conv1d(ones({1, 3, 8}), ones({2, 3, 2}), Tensor(), 3, kSame);
  });
  t.add("conv3d_same_strided", Raises::ShapeError, {"conv3d", "kSame", "[1, 1, 2]"}, [] {
    conv3d(ones({1, 1, 4, 4, 4}), ones({1, 1, 2, 2, 2}), Tensor(), {1, 1, 2}, kSame);
  });
  t.add("conv2d_same_channels_differ", Raises::ShapeError, {"conv2d", "[1, 3, 5, 5]"}, [] {
    conv2d(image(), ones({2, 2, 2, 2}), Tensor(), {1, 1}, kSame);
  });
  t.add("conv1d_same_zero_dilation", Raises::ShapeError, {"conv1d", "dilation"}, [] {
    conv1d(ones({1, 3, 8}), ones({2, 3, 2}), Tensor(), 1, kSame, 0);
  });
  t.add("conv2d_same_dilation_overflows", Raises::Error, {"conv2d"}, [] {
    conv2d(image(), kernel(), Tensor(), {1, 1}, kSame, {std::int64_t{1} << 62, 1});
  });
  t.add("Conv2d_same_strided", Raises::ShapeError, {"Conv2d", "kSame", "[2, 2]"},
        [] { nn::Conv2d(nn::Conv2dOptions(3, 2, 3).padding(kSame).stride(2)); });
  t.add("Conv1d_same_strided", Raises::ShapeError, {"Conv1d", "kSame", "[2]"},
        [] { nn::Conv1d(nn::Conv1dOptions(3, 2, 3).stride(2).padding(kSame)); });
  return t.cases();
}
LG_MISUSE_SUITE(Conv, conv_cases());

std::vector<MisuseCase> pool_cases() {
  MisuseTable t;
  t.add("max_pool2d_2d_input", Raises::ShapeError, {"max_pool2d", "[4, 4]"}, [] {
    max_pool2d(ones({4, 4}), {2, 2});
  });
  t.add("max_pool2d_5d_input", Raises::ShapeError, {"max_pool2d", "[1, 1, 1, 4, 4]"}, [] {
    max_pool2d(ones({1, 1, 1, 4, 4}), {2, 2});
  });
  t.add("max_pool2d_zero_kernel", Raises::Error, {"max_pool2d", "[0, 2]"}, [] {
    max_pool2d(image(), {0, 2});
  });
  t.add("max_pool2d_negative_stride", Raises::Error, {"max_pool2d", "[-1, -1]"}, [] {
    max_pool2d(image(), {2, 2}, {-1, -1});
  });
  t.add("max_pool2d_padding_over_half_kernel", Raises::Error, {"max_pool2d", "padding", "[2, 2]"},
        [] {
          max_pool2d(image(), {2, 2}, {1, 1}, {2, 2});
        });
  t.add("max_pool2d_negative_padding", Raises::Error, {"max_pool2d", "padding", "[-1, 0]"}, [] {
    max_pool2d(image(), {2, 2}, {1, 1}, {-1, 0});
  });
  t.add("max_pool2d_input_smaller_than_kernel", Raises::ShapeError,
        {"max_pool2d", "[1, 1, 1, 1]", "[2, 2]"}, [] {
          max_pool2d(ones({1, 1, 1, 1}), {2, 2});
        });
  t.add("max_pool2d_integral", Raises::DTypeError, {"max_pool2d", "int64"}, [] {
    max_pool2d(image().to(kInt64), {2, 2});
  });
  t.add("avg_pool2d_huge_kernel", Raises::Error, {"avg_pool2d", "2^31", "1099511627776"}, [] {
    avg_pool2d(image(), {k2Pow40, k2Pow40});
  });
  t.add("avg_pool2d_huge_stride", Raises::Error, {"avg_pool2d", "2^31", "1099511627776"}, [] {
    avg_pool2d(image(), {2, 2}, {k2Pow40, 1});
  });
  t.add("avg_pool2d_undefined", Raises::Error, {"avg_pool2d", "undefined"}, [] {
    avg_pool2d(Tensor(), {2, 2});
  });
  t.add("max_pool2d_zero_dilation", Raises::Error,
        {"max_pool2d", "positive dilation", "[0, 1]", "[1, 3, 5, 5]"}, [] {
          max_pool2d(image(), {2, 2}, {2, 2}, {0, 0}, {0, 1});
        });
  t.add("max_pool2d_negative_dilation", Raises::Error, {"max_pool2d", "dilation", "[1, -2]"}, [] {
    max_pool2d_with_indices(image(), {2, 2}, {2, 2}, {0, 0}, {1, -2});
  });
  t.add("max_pool2d_huge_dilation", Raises::Error, {"max_pool2d", "2^31", "1099511627776"}, [] {
    max_pool2d(image(), {2, 2}, {1, 1}, {0, 0}, {k2Pow40, 1});
  });
  t.add("max_pool2d_dilated_window_larger_than_input", Raises::ShapeError,
        {"max_pool2d", "output size [-1, -1]", "[1, 3, 5, 5]", "dilation [3, 3]", "[7, 7]"}, [] {
          max_pool2d(image(), {3, 3}, {1, 1}, {0, 0}, {3, 3});
        });
  t.add("avg_pool2d_ceil_mode_padding_over_half_kernel", Raises::Error,
        {"avg_pool2d", "padding", "[2, 2]", "ceil_mode true"}, [] {
          avg_pool2d(image(), {2, 2}, {2, 2}, {2, 2}, /*ceil_mode=*/true);
        });
  t.add("avg_pool2d_ceil_mode_output_too_small", Raises::ShapeError,
        {"avg_pool2d", "output size [0, 0]", "[1, 1, 1, 1]", "kernel [4, 4]", "ceil_mode true"},
        [] {
          avg_pool2d(ones({1, 1, 1, 1}), {4, 4}, {1, 1}, {1, 1}, /*ceil_mode=*/true);
        });
  t.add("avg_pool2d_zero_divisor_override", Raises::Error,
        {"avg_pool2d", "divisor_override", "[1, 3, 5, 5]"}, [] {
          avg_pool2d(image(), {2, 2}, {0, 0}, {0, 0}, false, true, 0);
        });
  t.add("adaptive_avg_pool2d_2d_input", Raises::ShapeError, {"adaptive_avg_pool2d", "[4, 4]"}, [] {
    adaptive_avg_pool2d(ones({4, 4}), {2, 2});
  });
  // An output size of 0 gives an empty output, as PyTorch (test_misuse_defined.cpp).
  t.add("adaptive_avg_pool2d_negative_output", Raises::ShapeError,
        {"adaptive_avg_pool2d", "non-negative output size", "[-1, 2]"}, [] {
          adaptive_avg_pool2d(image(), {-1, 2});
        });
  // To 1 x 1 an empty plane gives NaN, the mean of nothing, as PyTorch (test_misuse_defined.cpp).
  t.add("adaptive_avg_pool2d_empty_plane", Raises::ShapeError,
        {"adaptive_avg_pool2d", "non-empty plane", "[1, 3, 0, 5]"}, [] {
          adaptive_avg_pool2d(ones({1, 3, 0, 5}), {2, 2});
        });
  t.add("adaptive_avg_pool2d_integral", Raises::DTypeError, {"adaptive_avg_pool2d", "int64"}, [] {
    adaptive_avg_pool2d(ones({1, 3, 5, 5}, kInt64), {1, 1});
  });
  t.add("adaptive_max_pool2d_2d_input", Raises::ShapeError, {"adaptive_max_pool2d", "[4, 4]"}, [] {
    adaptive_max_pool2d(ones({4, 4}), {2, 2});
  });
  t.add("adaptive_max_pool2d_negative_output", Raises::ShapeError,
        {"adaptive_max_pool2d", "non-negative output size", "[2, -1]", "[1, 3, 5, 5]"}, [] {
          adaptive_max_pool2d_with_indices(image(), {2, -1});
        });
  t.add("adaptive_max_pool2d_empty_plane", Raises::ShapeError,
        {"adaptive_max_pool2d", "non-zero size", "[1, 3, 0, 5]"}, [] {
          adaptive_max_pool2d(ones({1, 3, 0, 5}), {1, 1});
        });
  t.add("adaptive_max_pool2d_no_channels", Raises::ShapeError,
        {"adaptive_max_pool2d", "non-zero size", "[2, 0, 4, 4]"}, [] {
          adaptive_max_pool2d(ones({2, 0, 4, 4}), {1, 1});
        });
  t.add("adaptive_max_pool2d_integral", Raises::DTypeError, {"adaptive_max_pool2d", "int64"}, [] {
    adaptive_max_pool2d(ones({1, 3, 5, 5}, kInt64), {1, 1});
  });
  t.add("adaptive_max_pool2d_output_too_large", Raises::ShapeError,
        {"adaptive_max_pool2d", "2^31", "[1099511627776, 1099511627776]"}, [] {
          adaptive_max_pool2d(image(), {k2Pow40, k2Pow40});
        });
  t.add("adaptive_max_pool1d_4d_input", Raises::ShapeError,
        {"adaptive_max_pool1d", "(N, C, L)", "[1, 3, 5, 5]"},
        [] { adaptive_max_pool1d(image(), 2); });
  t.add("adaptive_max_pool1d_negative_output", Raises::ShapeError,
        {"adaptive_max_pool1d", "non-negative output size", "-1", "[2, 3, 7]"}, [] {
          adaptive_max_pool1d(ones({2, 3, 7}), -1);
        });
  t.add("adaptive_max_pool1d_empty_length", Raises::ShapeError,
        {"adaptive_max_pool1d", "non-zero size", "[2, 3, 0]"}, [] {
          adaptive_max_pool1d(ones({2, 3, 0}), 2);
        });
  t.add("adaptive_max_pool1d_bool", Raises::DTypeError, {"adaptive_max_pool1d", "bool"}, [] {
    adaptive_max_pool1d(ones({2, 3, 7}, kBool), 2);
  });
  // The 1-d poolings check in their own names.
  t.add("max_pool1d_4d_input", Raises::ShapeError, {"max_pool1d", "(N, C, L)", "[1, 3, 5, 5]"},
        [] { max_pool1d(image(), 2); });
  t.add("max_pool1d_zero_kernel", Raises::Error, {"max_pool1d", "kernel_size must be positive"},
        [] {
          max_pool1d(ones({2, 3, 7}), 0);
        });
  t.add("max_pool1d_padding_over_half", Raises::Error,
        {"max_pool1d", "padding must be in [0, kernel_size / 2] = [0, 1], got 2"}, [] {
          max_pool1d(ones({2, 3, 7}), 3, 1, 2);
        });
  t.add("max_pool1d_huge_dilation", Raises::Error, {"max_pool1d", "below 2^31"}, [] {
    max_pool1d(ones({2, 3, 7}), 3, 1, 0, std::int64_t{1} << 62);
  });
  t.add("max_pool1d_too_short", Raises::ShapeError,
        {"max_pool1d", "[2, 3, 4] is too short for kernel_size 3, dilation 2"}, [] {
          max_pool1d(ones({2, 3, 4}), 3, 1, 0, 2);
        });
  t.add("avg_pool1d_negative_stride", Raises::Error, {"avg_pool1d", "stride must be positive"}, [] {
    avg_pool1d(ones({2, 3, 7}), 3, -1);
  });
  t.add("avg_pool1d_integral", Raises::DTypeError, {"avg_pool1d", "int64"}, [] {
    avg_pool1d(ones({2, 3, 7}, kInt64), 3);
  });
  t.add("adaptive_avg_pool1d_negative_output", Raises::ShapeError,
        {"adaptive_avg_pool1d", "non-negative output size", "-2"}, [] {
          adaptive_avg_pool1d(ones({2, 3, 7}), -2);
        });
  // The backward entry, called with indices of another shape or dtype.
  t.add("adaptive_max_pool2d_backward_indices_shape", Raises::ShapeError,
        {"adaptive_max_pool2d_backward", "[1, 3, 2, 2]", "[1, 3, 2, 1]"}, [] {
          ops::adaptive_max_pool2d_backward(ones({1, 3, 2, 2}), zeros({1, 3, 2, 1}, kInt64),
                                            {1, 3, 5, 5});
        });
  t.add("adaptive_max_pool2d_backward_float_indices", Raises::ShapeError,
        {"adaptive_max_pool2d_backward", "int64", "float32"}, [] {
          ops::adaptive_max_pool2d_backward(ones({1, 3, 2, 2}), zeros({1, 3, 2, 2}), {1, 3, 5, 5});
        });
  t.add("adaptive_avg_pool2d_output_too_large", Raises::ShapeError, {"adaptive_avg_pool2d"}, [] {
    adaptive_avg_pool2d(image(), {k2Pow40, k2Pow40});
  });
  return t.cases();
}
LG_MISUSE_SUITE(Pooling, pool_cases());

std::vector<MisuseCase> norm_and_activation_cases() {
  MisuseTable t;
  t.add("group_norm_groups_do_not_divide", Raises::ShapeError,
        {"group_norm", "num_groups (4)", "(6)"}, [] {
          group_norm(ones({2, 6, 4}), 4);
        });
  t.add("group_norm_zero_groups", Raises::ShapeError, {"group_norm", "num_groups (0)"}, [] {
    group_norm(ones({2, 6, 4}), 0);
  });
  t.add("group_norm_negative_groups", Raises::ShapeError, {"group_norm", "num_groups (-2)"}, [] {
    group_norm(ones({2, 6, 4}), -2);
  });
  t.add("group_norm_1d_input", Raises::ShapeError, {"group_norm", "[6]"},
        [] { group_norm(ones({6}), 2); });
  t.add("group_norm_weight_shape", Raises::ShapeError, {"group_norm", "weight", "(6)", "[4]"}, [] {
    group_norm(ones({2, 6, 4}), 2, ones({4}));
  });
  t.add("group_norm_bias_dtype", Raises::DTypeError, {"group_norm", "bias", "float64", "float32"},
        [] {
          group_norm(ones({2, 6}), 2, ones({6}), ones({6}, kFloat64));
        });
  t.add("group_norm_integral", Raises::DTypeError, {"group_norm", "int64"}, [] {
    group_norm(ones({2, 6}, kInt64), 2);
  });
  t.add("tanhexp_integral", Raises::DTypeError, {"tanhexp", "int64"},
        [] { tanhexp(ones({2}, kInt64)); });
  t.add("tanhexp_undefined", Raises::Error, {"tanhexp", "undefined"}, [] { tanhexp(Tensor()); });
  t.add("softmax_dim_out_of_range", Raises::ShapeError, {"softmax", "dimension 2", "2-d"}, [] {
    softmax(ones({2, 3}), 2);
  });
  t.add("softmax_dim_of_0d", Raises::ShapeError, {"softmax", "3", "0-d"},
        [] { softmax(full({}, 1.0), 3); });
  t.add("log_softmax_dim_out_of_range", Raises::ShapeError, {"log_softmax", "-3"}, [] {
    log_softmax(ones({2, 3}), -3);
  });
  t.add("softmax_integral", Raises::DTypeError, {"softmax", "int64"},
        [] { softmax(ones({2}, kInt64), 0); });
  t.add("dropout_negative_p", Raises::Error, {"dropout", "-0.1"},
        [] { dropout(ones({4}), -0.1, true); });
  t.add("dropout_p_above_one", Raises::Error, {"dropout", "1.5"},
        [] { dropout(ones({4}), 1.5, true); });
  t.add("dropout_nan_p", Raises::Error, {"dropout", "nan"},
        [] { dropout(ones({4}), kNaN, false); });
  t.add("dropout_integral", Raises::DTypeError, {"dropout", "int64"},
        [] { dropout(ones({4}, kInt64), 0.5, true); });
  t.add("gelu_unknown_approximate", Raises::Error, {"gelu", "'none' or 'tanh'", "'fast'"},
        [] { gelu(ones({2}), "fast"); });
  t.add("softplus_zero_beta", Raises::Error, {"softplus", "finite beta > 0", "0"},
        [] { softplus(ones({2}), 0.0); });
  t.add("softplus_nan_beta", Raises::Error, {"softplus", "nan"}, [] { softplus(ones({2}), kNaN); });
  t.add("hardtanh_min_above_max", Raises::Error, {"hardtanh", "min_val <= max_val", "2", "1"},
        [] { hardtanh(ones({2}), 2.0, 1.0); });
  t.add("leaky_relu_integral", Raises::DTypeError, {"leaky_relu", "floating", "int64"},
        [] { leaky_relu(ones({2}, kInt64)); });
  t.add("elu_integral", Raises::DTypeError, {"elu", "floating", "int64"},
        [] { elu(ones({2}, kInt64)); });
  t.add("gelu_undefined", Raises::Error, {"gelu", "undefined"}, [] { gelu(Tensor()); });
  t.add("celu_zero_alpha", Raises::Error, {"celu", "finite alpha != 0", "0"},
        [] { celu(ones({2}), 0.0); });
  t.add("softshrink_negative_lambda", Raises::Error, {"softshrink", "lambda >= 0", "-0.5"},
        [] { softshrink(ones({2}), -0.5); });
  t.add("threshold_value_overflows_float16", Raises::Error,
        {"threshold", "threshold or value 100000", "float16"},
        [] { threshold(ones({2}, kFloat16), 0.0, 1e5); });
  t.add("hardshrink_lambda_overflows_bfloat16", Raises::Error, {"hardshrink", "lambda", "bfloat16"},
        [] { hardshrink(ones({2}, kBFloat16), 1e39); });
  t.add("hardswish_integral", Raises::DTypeError, {"hardswish", "floating", "int64"},
        [] { hardswish(ones({2}, kInt64)); });
  t.add("log_sigmoid_undefined", Raises::Error, {"log_sigmoid", "undefined"},
        [] { log_sigmoid(Tensor()); });
  t.add("prelu_weight_per_channel_mismatch", Raises::ShapeError,
        {"prelu", "one per channel (dim 1 of the input, 3)", "[4]", "[2, 3, 5]"}, [] {
          prelu(ones({2, 3, 5}), ones({4}));
        });
  t.add("prelu_weight_dtype", Raises::DTypeError, {"prelu", "float64", "float32"}, [] {
    prelu(ones({2, 3}), ones({3}, kFloat64));
  });
  t.add("prelu_2d_weight", Raises::ShapeError, {"prelu", "[3, 1]"}, [] {
    prelu(ones({2, 3}), ones({3, 1}));
  });
  t.add("glu_odd_dim", Raises::ShapeError, {"glu", "dim 1 must have an even size, got 5", "[2, 5]"},
        [] {
          glu(ones({2, 5}), 1);
        });
  t.add("glu_0d", Raises::ShapeError, {"glu", "0-d"}, [] { glu(full({}, 1.0)); });
  t.add("glu_dim_out_of_range", Raises::ShapeError, {"glu"}, [] { glu(ones({2, 4}), 2); });
  return t.cases();
}
LG_MISUSE_SUITE(NormAndActivation, norm_and_activation_cases());

std::vector<MisuseCase> layer_cases() {
  MisuseTable t;
  t.add("linear_in_features_differ", Raises::ShapeError, {"linear", "[2, 3]", "[4, 5]"}, [] {
    linear(ones({2, 3}), ones({4, 5}));
  });
  t.add("linear_1d_weight", Raises::ShapeError, {"linear", "weight", "[3]"}, [] {
    linear(ones({2, 3}), ones({3}));
  });
  t.add("linear_0d_input", Raises::ShapeError, {"linear", "[]"}, [] {
    linear(full({}, 1.0), ones({2, 1}));
  });
  t.add("linear_bias_shape", Raises::ShapeError, {"linear", "bias", "[4]", "[3]"}, [] {
    linear(ones({2, 3}), ones({4, 3}), ones({3}));
  });
  t.add("linear_dtypes_differ", Raises::DTypeError, {"linear", "float64", "float32"}, [] {
    linear(ones({2, 3}, kFloat64), ones({4, 3}));
  });
  t.add("linear_undefined_weight", Raises::Error, {"linear", "weight"}, [] {
    linear(ones({2, 3}), Tensor());
  });
  t.add("pixel_shuffle_zero_factor", Raises::Error, {"pixel_shuffle", "0"}, [] {
    pixel_shuffle(ones({1, 4, 2, 2}), 0);
  });
  t.add("pixel_shuffle_channels_indivisible", Raises::ShapeError,
        {"pixel_shuffle", "channel dim 3", "[1, 3, 2, 2]", "= 4"}, [] {
          pixel_shuffle(ones({1, 3, 2, 2}), 2);
        });
  t.add("pixel_shuffle_2d_input", Raises::ShapeError, {"pixel_shuffle", "[4, 4]"}, [] {
    pixel_shuffle(ones({4, 4}), 2);
  });
  // factor^2 overflows int64 (it was computed unchecked: a division by zero).
  t.add("pixel_shuffle_huge_factor", Raises::ShapeError, {"pixel_shuffle", "4294967296"}, [] {
    pixel_shuffle(ones({1, 4, 2, 2}), k2Pow32);
  });
  t.add("pixel_unshuffle_indivisible", Raises::ShapeError, {"pixel_unshuffle", "[1, 1, 3, 4]", "2"},
        [] {
          pixel_unshuffle(ones({1, 1, 3, 4}), 2);
        });
  // C factor^2 overflows for a (1, 2^40, 0, 0) input and factor 2^20.
  t.add("pixel_unshuffle_channels_overflow", Raises::ShapeError,
        {"pixel_unshuffle", "1099511627776"}, [] {
          pixel_unshuffle(zeros({1, 1, 0, 0}).expand({1, k2Pow40, 0, 0}), 1 << 20);
        });
  return t.cases();
}
LG_MISUSE_SUITE(Layers, layer_cases());

std::vector<MisuseCase> loss_cases() {
  MisuseTable t;
  t.add("cross_entropy_float_target", Raises::DTypeError, {"cross_entropy", "int64", "float32"},
        [] {
          cross_entropy(ones({2, 3}), ones({2}));
        });
  t.add("cross_entropy_target_past_classes", Raises::Error,
        {"cross_entropy", "target 3", "index 1", "3 classes"}, [] {
          cross_entropy(ones({2, 3}), targets({0, 3}));
        });
  t.add("cross_entropy_negative_target", Raises::Error, {"cross_entropy", "target -1", "index 0"},
        [] {
          cross_entropy(ones({2, 3}), targets({-1, 0}));
        });
  t.add("cross_entropy_target_int64_max", Raises::Error, {"cross_entropy", "9223372036854775807"},
        [] {
          cross_entropy(ones({1, 3}), targets({std::numeric_limits<std::int64_t>::max()}));
        });
  t.add("cross_entropy_target_count", Raises::ShapeError, {"cross_entropy", "[3]", "[2, 3]"}, [] {
    cross_entropy(ones({2, 3}), targets({0, 1, 2}));
  });
  // Input of any rank takes the target of its shape without the class dim (Note [Class-index
  // losses of any rank]); a target of another shape but as many entries is refused, not
  // reshaped (PyTorch refuses these too; checked by tests/data/make_loss_nd.py).
  t.add("cross_entropy_unbatched_1d_target", Raises::ShapeError,
        {"cross_entropy", "0-d", "[3]", "[1]"}, [] { cross_entropy(ones({3}), targets({1})); });
  t.add("cross_entropy_0d_input", Raises::ShapeError, {"cross_entropy", "(C)", "[]"},
        [] { cross_entropy(ones({}), zeros({}, kInt64)); });
  t.add("nll_loss_0d_input", Raises::ShapeError, {"nll_loss", "(C)", "[]"},
        [] { nll_loss(ones({}), zeros({}, kInt64)); });
  t.add("cross_entropy_3d_target_shape", Raises::ShapeError,
        {"cross_entropy", "(N, d1, ...)", "[2, 3]", "[2, 4, 3]", "[2, 4]"}, [] {
          cross_entropy(ones({2, 4, 3}), zeros({2, 4}, kInt64));
        });
  t.add("nll_loss_4d_flattened_target", Raises::ShapeError,
        {"nll_loss", "[2, 3, 2]", "[2, 4, 3, 2]", "[2, 6]"}, [] {
          nll_loss(ones({2, 4, 3, 2}), zeros({2, 6}, kInt64));
        });
  t.add("cross_entropy_3d_smoothing_target_shape", Raises::ShapeError,
        {"cross_entropy", "[2, 3]", "[2, 4, 3]", "[6]"}, [] {
          cross_entropy(ones({2, 4, 3}), zeros({6}, kInt64), Reduction::None, -100, Tensor(), 0.1);
        });
  t.add("cross_entropy_3d_float_target", Raises::DTypeError, {"cross_entropy", "int64", "float32"},
        [] {
          cross_entropy(ones({2, 4, 3}), zeros({2, 3}));
        });
  t.add("cross_entropy_3d_target_past_classes", Raises::Error,
        {"cross_entropy", "target 5", "index 3", "4 classes"}, [] {
          cross_entropy(ones({1, 4, 2, 2}),
                        tensor(std::vector<std::int64_t>{0, 1, 2, 5}).view({1, 2, 2}));
        });
  t.add("cross_entropy_3d_weight_size", Raises::ShapeError,
        {"cross_entropy", "class weight", "[4]", "[2, 4, 3]", "[3]"}, [] {
          cross_entropy(ones({2, 4, 3}), zeros({2, 3}, kInt64), Reduction::Mean, -100, ones({3}));
        });
  t.add("nll_loss_unbatched_weight_size", Raises::ShapeError,
        {"nll_loss", "class weight", "[4]", "[3]"},
        [] { nll_loss(ones({4}), zeros({}, kInt64), Reduction::Mean, -100, ones({3})); });
  t.add("cross_entropy_zero_classes", Raises::Error, {"cross_entropy", "0 classes"}, [] {
    cross_entropy(zeros({2, 0}), targets({0, 0}));
  });
  t.add("cross_entropy_integral_input", Raises::DTypeError, {"cross_entropy", "int64"}, [] {
    cross_entropy(ones({2, 3}, kInt64), targets({0, 1}));
  });
  // The loss options: a class weight, label_smoothing, class-probability targets (PyTorch
  // refuses these too, except where docs/api-notes.md says leangrad is stricter; checked by
  // tests/data/make_loss_options.py).
  t.add("cross_entropy_weight_size", Raises::ShapeError,
        {"cross_entropy", "class weight", "[3]", "[2, 3]", "[2]", "float32", "cpu"}, [] {
          cross_entropy(ones({2, 3}), targets({0, 1}), Reduction::Mean, -100, ones({2}));
        });
  t.add("nll_loss_weight_2d", Raises::ShapeError, {"nll_loss", "[3]", "[3, 1]"}, [] {
    nll_loss(ones({2, 3}), targets({0, 1}), Reduction::Mean, -100, ones({3, 1}));
  });
  t.add("cross_entropy_weight_dtype", Raises::DTypeError, {"cross_entropy", "float32", "float64"},
        [] {
          cross_entropy(ones({2, 3}), targets({0, 1}), Reduction::Mean, -100, ones({3}, kFloat64));
        });
  t.add("cross_entropy_smoothing_weight_size", Raises::ShapeError, {"[3]", "[4]"}, [] {
    cross_entropy(ones({2, 3}), targets({0, 1}), Reduction::Mean, -100, ones({4}), 0.1);
  });
  t.add("cross_entropy_probabilities_weight_size", Raises::ShapeError,
        {"cross_entropy", "[3]", "[4]"}, [] {
          cross_entropy(ones({2, 3}), ones({2, 3}), Reduction::Mean, -100, ones({4}));
        });
  t.add("cross_entropy_label_smoothing_above_1", Raises::Error,
        {"cross_entropy", "label_smoothing", "[0, 1]", "1.5"}, [] {
          cross_entropy(ones({2, 3}), targets({0, 1}), Reduction::Mean, -100, Tensor(), 1.5);
        });
  t.add("cross_entropy_label_smoothing_negative", Raises::Error,
        {"cross_entropy", "label_smoothing", "-0.1"}, [] {
          cross_entropy(ones({2, 3}), ones({2, 3}), Reduction::Mean, -100, Tensor(), -0.1);
        });
  t.add("cross_entropy_label_smoothing_nan", Raises::Error, {"cross_entropy", "label_smoothing"},
        [] {
          cross_entropy(ones({2, 3}), targets({0, 1}), Reduction::Mean, -100, Tensor(),
                        std::numeric_limits<double>::quiet_NaN());
        });
  t.add("cross_entropy_int64_probabilities", Raises::DTypeError,
        {"cross_entropy", "probabilities", "int64", "float32"}, [] {
          cross_entropy(ones({2, 3}), zeros({2, 3}, kInt64));
        });
  t.add("cross_entropy_probabilities_dtype", Raises::DTypeError,
        {"cross_entropy", "float32", "float64"}, [] {
          cross_entropy(ones({2, 3}), ones({2, 3}, kFloat64));
        });
  t.add("cross_entropy_probabilities_ignore_index", Raises::Error,
        {"cross_entropy", "ignore_index 0", "probability"}, [] {
          cross_entropy(ones({2, 3}), ones({2, 3}), Reduction::Mean, 0);
        });
  t.add("cross_entropy_probabilities_0d", Raises::ShapeError, {"cross_entropy", "(C)", "[]"},
        [] { cross_entropy(ones({}), ones({})); });
  t.add("cross_entropy_unbatched_probabilities_dtype", Raises::DTypeError,
        {"cross_entropy", "float32", "float64", "int64 of shape []"},
        [] { cross_entropy(ones({3}), ones({3}, kFloat64)); });
  t.add("nll_loss_probabilities", Raises::DTypeError, {"nll_loss", "int64", "float32"}, [] {
    nll_loss(ones({2, 3}), ones({2, 3}));
  });
  t.add("nll_loss_target_past_classes", Raises::Error, {"nll_loss", "target 5", "3 classes"}, [] {
    nll_loss(ones({2, 3}), targets({5, 0}));
  });
  t.add("nll_loss_2d_target", Raises::ShapeError, {"nll_loss", "[2, 1]"}, [] {
    nll_loss(ones({2, 3}), zeros({2, 1}, kInt64));
  });
  t.add("mse_loss_shapes_differ", Raises::ShapeError, {"mse_loss", "[2]", "[3]"},
        [] { mse_loss(ones({2}), ones({3})); });
  t.add("mse_loss_integral", Raises::DTypeError, {"mse_loss", "int64"},
        [] { mse_loss(ones({2}, kInt64), ones({2}, kInt64)); });
  t.add("l1_loss_shapes_differ", Raises::ShapeError, {"l1_loss", "[2, 1]", "[2]"}, [] {
    l1_loss(ones({2, 1}), ones({2}));
  });
  t.add("l1_loss_integral", Raises::DTypeError, {"l1_loss", "int32"},
        [] { l1_loss(ones({2}, kInt32), ones({2}, kInt32)); });
  t.add("l1_loss_undefined_target", Raises::Error, {"l1_loss", "defined"},
        [] { l1_loss(ones({2}), Tensor()); });
  return t.cases();
}
LG_MISUSE_SUITE(Losses, loss_cases());

// autograd/losses.h.
std::vector<MisuseCase> binary_and_robust_loss_cases() {
  MisuseTable t;
  t.add("bce_shapes_differ", Raises::ShapeError, {"binary_cross_entropy", "[2, 3]", "[3]"}, [] {
    binary_cross_entropy(full({2, 3}, 0.5), full({3}, 0.5));
  });
  t.add("bce_dtypes_differ", Raises::DTypeError,
        {"binary_cross_entropy", "one dtype", "float32", "float64"},
        [] { binary_cross_entropy(full({2}, 0.5), full({2}, 0.5, kFloat64)); });
  t.add("bce_weight_not_broadcastable", Raises::ShapeError,
        {"binary_cross_entropy", "weight", "[2, 3]", "[2, 2]"}, [] {
          binary_cross_entropy(full({2, 3}, 0.5), full({2, 3}, 0.5), Reduction::Mean, ones({2, 2}));
        });
  t.add("bce_weight_requires_grad", Raises::Error,
        {"binary_cross_entropy", "weight requires grad", "detach"}, [] {
          binary_cross_entropy(full({2}, 0.5), full({2}, 0.5), Reduction::Mean,
                               ones({2}).requires_grad_());
        });
  t.add("bce_with_logits_integral_target", Raises::DTypeError,
        {"binary_cross_entropy_with_logits", "int64"},
        [] { binary_cross_entropy_with_logits(ones({2}), ones({2}, kInt64)); });
  t.add("bce_with_logits_pos_weight_not_broadcastable", Raises::ShapeError,
        {"binary_cross_entropy_with_logits", "pos_weight", "[4]", "[2, 3]"}, [] {
          binary_cross_entropy_with_logits(ones({2, 3}), ones({2, 3}), Reduction::Mean, Tensor(),
                                           ones({4}));
        });
  t.add("bce_with_logits_weight_on_another_dtype_kind", Raises::DTypeError,
        {"binary_cross_entropy_with_logits", "weight", "int64"}, [] {
          binary_cross_entropy_with_logits(ones({2}), ones({2}), Reduction::Mean,
                                           ones({2}, kInt64));
        });
  t.add("smooth_l1_negative_beta", Raises::Error, {"smooth_l1_loss", "beta", ">= 0", "-0.5"},
        [] { smooth_l1_loss(ones({2}), ones({2}), Reduction::Mean, -0.5); });
  t.add("smooth_l1_shapes_differ", Raises::ShapeError, {"smooth_l1_loss", "[2]", "[2, 1]"}, [] {
    smooth_l1_loss(ones({2}), ones({2, 1}));
  });
  t.add("huber_zero_delta", Raises::Error, {"huber_loss", "delta", "> 0", "0"},
        [] { huber_loss(ones({2}), ones({2}), Reduction::Mean, 0.0); });
  return t.cases();
}
LG_MISUSE_SUITE(BinaryAndRobustLosses, binary_and_robust_loss_cases());

// kl_div, poisson_nll_loss and gaussian_nll_loss (autograd/losses.h).
std::vector<MisuseCase> distribution_loss_cases() {
  MisuseTable t;
  t.add("kl_div_shapes_do_not_broadcast", Raises::ShapeError,
        {"kl_div", "input and target", "[2, 3]", "[2]"}, [] {
          kl_div(zeros({2, 3}), full({2}, 0.5));
        });
  t.add("kl_div_integral_target", Raises::DTypeError, {"kl_div", "target", "int64"},
        [] { kl_div(zeros({2}), ones({2}, kInt64)); });
  t.add("poisson_shapes_do_not_broadcast", Raises::ShapeError, {"poisson_nll_loss", "[3]", "[4]"},
        [] { poisson_nll_loss(ones({3}), ones({4})); });
  t.add("poisson_undefined_target", Raises::Error, {"poisson_nll_loss", "defined"},
        [] { poisson_nll_loss(ones({3}), Tensor()); });
  t.add("gaussian_var_of_another_shape", Raises::ShapeError,
        {"gaussian_nll_loss", "var", "[3]", "[2, 3]", "last dim"}, [] {
          gaussian_nll_loss(zeros({2, 3}), zeros({2, 3}), ones({3}));
        });
  t.add("gaussian_negative_var", Raises::Error, {"gaussian_nll_loss", "var", "negative"}, [] {
    gaussian_nll_loss(zeros({2, 3}), zeros({2, 3}), full({2, 1}, -1.0));
  });
  t.add("gaussian_integral_var", Raises::DTypeError, {"gaussian_nll_loss", "var", "int64"},
        [] { gaussian_nll_loss(zeros({2}), zeros({2}), ones({2}, kInt64)); });
  t.add("gaussian_targets_do_not_broadcast", Raises::ShapeError,
        {"gaussian_nll_loss", "input and target", "[2, 3]", "[2]"}, [] {
          gaussian_nll_loss(zeros({2, 3}), zeros({2}), ones({2, 3}));
        });
  return t.cases();
}
LG_MISUSE_SUITE(DistributionLosses, distribution_loss_cases());

// autograd/margin_losses.h.
std::vector<MisuseCase> margin_loss_cases() {
  MisuseTable t;
  t.add("margin_ranking_dims_differ", Raises::ShapeError,
        {"margin_ranking_loss", "number of dims", "[2, 3]", "[3]"}, [] {
          margin_ranking_loss(zeros({2, 3}), zeros({3}), ones({2, 3}));
        });
  t.add("margin_ranking_shapes_do_not_broadcast", Raises::ShapeError,
        {"margin_ranking_loss", "input1 and target", "[2, 3]", "[2, 2]"}, [] {
          margin_ranking_loss(zeros({2, 3}), zeros({1, 3}), ones({2, 2}));
        });
  t.add("margin_ranking_integral_input", Raises::DTypeError,
        {"margin_ranking_loss", "floating input", "int64"},
        [] { margin_ranking_loss(ones({2}, kInt64), ones({2}), ones({2})); });
  t.add("hinge_bool_target", Raises::DTypeError, {"hinge_embedding_loss", "target", "bool"},
        [] { hinge_embedding_loss(ones({2}), ones({2}, DType::Bool)); });
  t.add("hinge_shapes_do_not_broadcast", Raises::ShapeError,
        {"hinge_embedding_loss", "[2, 3]", "[2]"}, [] {
          hinge_embedding_loss(ones({2, 3}), ones({2}));
        });
  t.add("soft_margin_target_of_more_dims", Raises::ShapeError,
        {"soft_margin_loss", "target", "[2, 3]", "[3]"}, [] {
          soft_margin_loss(ones({3}), ones({2, 3}));
        });
  t.add("multilabel_soft_margin_0d_input", Raises::ShapeError,
        {"multilabel_soft_margin_loss", "class dim", "0-d"},
        [] { multilabel_soft_margin_loss(ones({}), ones({})); });
  t.add("multilabel_soft_margin_weight_not_broadcastable", Raises::ShapeError,
        {"multilabel_soft_margin_loss", "weight", "[4]", "[2, 3]"}, [] {
          multilabel_soft_margin_loss(ones({2, 3}), ones({2, 3}), ones({4}));
        });
  t.add("cosine_similarity_shapes_do_not_broadcast", Raises::ShapeError,
        {"cosine_similarity", "x1 and x2", "[2, 3]", "[2]"}, [] {
          cosine_similarity(ones({2, 3}), ones({2}));
        });
  t.add("cosine_similarity_dim_out_of_range", Raises::Error, {"cosine_similarity", "2"}, [] {
    cosine_similarity(ones({2, 3}), ones({2, 3}), 2);
  });
  t.add("pairwise_distance_p_below_1", Raises::Error, {"pairwise_distance", "p", ">= 1", "0.5"},
        [] {
          pairwise_distance(ones({2, 3}), ones({2, 3}), 0.5);
        });
  t.add("cosine_embedding_2d_target", Raises::ShapeError,
        {"cosine_embedding_loss", "0-d or 1-D target", "[2, 1]"}, [] {
          cosine_embedding_loss(ones({2, 3}), ones({2, 3}), ones({2, 1}));
        });
  t.add("cosine_embedding_3d_inputs", Raises::ShapeError,
        {"cosine_embedding_loss", "1-D target expects 2-D inputs", "[2, 3, 2]"}, [] {
          cosine_embedding_loss(ones({2, 3, 2}), ones({2, 3, 2}), ones({2}));
        });
  t.add("cosine_embedding_target_of_another_length", Raises::ShapeError,
        {"cosine_embedding_loss", "target", "[2]", "[3]"}, [] {
          cosine_embedding_loss(ones({2, 3}), ones({2, 3}), ones({3}));
        });
  t.add("triplet_dims_differ", Raises::ShapeError,
        {"triplet_margin_loss", "number of dims", "[2, 3]", "[3]"}, [] {
          triplet_margin_loss(ones({2, 3}), zeros({3}), ones({2, 3}));
        });
  t.add("triplet_p_of_0", Raises::Error, {"triplet_margin_loss", "p", ">= 1", "0"}, [] {
    triplet_margin_loss(ones({2, 3}), zeros({2, 3}), ones({2, 3}), 1.0, 0.0);
  });
  return t.cases();
}
LG_MISUSE_SUITE(MarginLosses, margin_loss_cases());

}  // namespace
}  // namespace leangrad::test
