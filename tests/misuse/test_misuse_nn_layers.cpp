// Misuse of the nn layers (autograd/nn_functions.h, nn/layer_norm.h, nn/batch_norm.h,
// nn/embedding.h, nn/conv.h, nn/upsample.h): LayerNorm, BatchNorm, Embedding, ConvTranspose2d and
// interpolate called with wrong ranks and shapes, parameters of another shape or dtype, integral
// input, bad indices, missing running statistics. Tables of the misuse suite
// (tests/misuse/misuse_testing.h).
#include <cstdint>
#include <limits>
#include <optional>
#include <vector>

#include <leangrad/autograd/composed_layers.h>
#include <leangrad/autograd/ctc_loss.h>
#include <leangrad/autograd/dropout_functions.h>
#include <leangrad/autograd/fold_functions.h>
#include <leangrad/autograd/fractional_max_pool.h>
#include <leangrad/autograd/grid_sample.h>
#include <leangrad/autograd/margin_losses.h>
#include <leangrad/autograd/nn_functions.h>
#include <leangrad/autograd/volumetric_functions.h>
#include <leangrad/core/creation.h>
#include <leangrad/kernels/creation.h>
#include <leangrad/nn/adaptive.h>
#include <leangrad/nn/batch_norm.h>
#include <leangrad/nn/composed_layers.h>
#include <leangrad/nn/conv.h>
#include <leangrad/nn/dropout.h>
#include <leangrad/nn/embedding.h>
#include <leangrad/nn/fractional_max_pool.h>
#include <leangrad/nn/layer_norm.h>
#include <leangrad/nn/loss.h>
#include <leangrad/nn/upsample.h>
#include "misuse/misuse_testing.h"

namespace leangrad::test {
namespace {

std::vector<MisuseCase> layer_norm_cases() {
  MisuseTable t;
  t.add("layer_norm_trailing_dims_differ", Raises::ShapeError,
        {"layer_norm", "normalized_shape [4]", "[2, 3]"}, [] {
          layer_norm(ones({2, 3}), {4});
        });
  t.add("layer_norm_normalized_shape_longer_than_input", Raises::ShapeError,
        {"layer_norm", "[2, 3, 4]", "[3, 4]"}, [] {
          layer_norm(ones({3, 4}), {2, 3, 4});
        });
  t.add("layer_norm_empty_normalized_shape", Raises::ShapeError, {"layer_norm", "[]"}, [] {
    layer_norm(ones({3, 4}), {});
  });
  t.add("layer_norm_weight_shape", Raises::ShapeError, {"layer_norm", "weight", "[4]", "[3]"}, [] {
    layer_norm(ones({2, 4}), {4}, ones({3}));
  });
  t.add("layer_norm_bias_dtype", Raises::DTypeError, {"layer_norm", "bias", "float64", "float32"},
        [] {
          layer_norm(ones({2, 4}), {4}, {}, ones({4}, kFloat64));
        });
  t.add("layer_norm_integral", Raises::DTypeError, {"layer_norm", "int64"}, [] {
    layer_norm(ones({2, 4}, kInt64), {4});
  });
  t.add("layer_norm_undefined", Raises::Error, {"layer_norm", "undefined"},
        [] { layer_norm(Tensor(), {4}); });
  t.add("layer_norm_module_bad_shape", Raises::ShapeError, {"LayerNorm", "[0, 2]"}, [] {
    nn::LayerNorm(nn::LayerNormOptions({0, 2}));
  });
  return t.cases();
}
LG_MISUSE_SUITE(LayerNorm, layer_norm_cases());

std::vector<MisuseCase> batch_norm_cases() {
  MisuseTable t;
  t.add("batch_norm_1d_input", Raises::ShapeError, {"batch_norm", "(N, C, *)", "[5]"},
        [] { batch_norm(ones({5}), {}, {}, {}, {}, true); });
  t.add("batch_norm_one_value_per_channel", Raises::ShapeError,
        {"batch_norm", "more than 1 value per channel", "[1, 3, 1, 1]"}, [] {
          batch_norm(ones({1, 3, 1, 1}), {}, {}, {}, {}, true);
        });
  t.add("batch_norm_weight_shape", Raises::ShapeError, {"batch_norm", "weight", "[3]", "[4]"}, [] {
    batch_norm(ones({2, 3, 2, 2}), {}, {}, ones({4}), {}, true);
  });
  t.add("batch_norm_running_mean_shape", Raises::ShapeError,
        {"batch_norm", "running_mean", "[3]", "[2]"}, [] {
          batch_norm(ones({2, 3, 2, 2}), zeros({2}), ones({2}), {}, {}, true);
        });
  t.add("batch_norm_running_var_integral", Raises::DTypeError,
        {"batch_norm", "running_var", "int64"}, [] {
          batch_norm(ones({2, 3, 2, 2}), zeros({3}), ones({3}, kInt64), {}, {}, true);
        });
  t.add("batch_norm_only_running_mean", Raises::Error,
        {"batch_norm", "running_mean and running_var"}, [] {
          batch_norm(ones({2, 3, 2, 2}), zeros({3}), {}, {}, {}, true);
        });
  t.add("batch_norm_eval_without_running_stats", Raises::Error,
        {"batch_norm", "training = false", "running_mean"}, [] {
          batch_norm(ones({2, 3, 2, 2}), {}, {}, {}, {}, false);
        });
  t.add("batch_norm_integral", Raises::DTypeError, {"batch_norm", "int32"}, [] {
    batch_norm(ones({2, 3}, kInt32), {}, {}, {}, {}, true);
  });
  t.add("batch_norm2d_3d_input", Raises::ShapeError, {"BatchNorm2d", "4-D", "[2, 3, 4]"}, [] {
    nn::BatchNorm2d bn(3);
    bn(ones({2, 3, 4}));
  });
  t.add("batch_norm2d_channels_differ", Raises::ShapeError,
        {"batch_norm", "weight", "[3]", "[2, 4, 3, 3]"}, [] {
          nn::BatchNorm2d bn(3);
          bn(ones({2, 4, 3, 3}));
        });
  t.add("batch_norm2d_zero_features", Raises::ShapeError, {"BatchNorm2d", "num_features", "0"},
        [] { nn::BatchNorm2d bn(0); });
  t.add("batch_norm1d_4d_input", Raises::ShapeError,
        {"BatchNorm1d", "2-D input (N, C) or 3-D input (N, C, L)", "[2, 3, 4, 5]"}, [] {
          nn::BatchNorm1d bn(3);
          bn(ones({2, 3, 4, 5}));
        });
  t.add("batch_norm3d_4d_input", Raises::ShapeError, {"BatchNorm3d", "5-D", "[2, 3, 4, 5]"}, [] {
    nn::BatchNorm3d bn(3);
    bn(ones({2, 3, 4, 5}));
  });
  t.add("batch_norm3d_zero_features", Raises::ShapeError, {"BatchNorm3d", "num_features", "0"},
        [] { nn::BatchNorm3d bn(0); });
  return t.cases();
}
LG_MISUSE_SUITE(BatchNorm, batch_norm_cases());

std::vector<MisuseCase> instance_norm_cases() {
  MisuseTable t;
  t.add("instance_norm_2d_input", Raises::ShapeError,
        {"instance_norm", "(N, C, *spatial)", "[2, 3]"}, [] {
          instance_norm(ones({2, 3}));
        });
  t.add("instance_norm_one_spatial_element", Raises::ShapeError,
        {"instance_norm", "more than 1 spatial element", "[4, 3, 1]"}, [] {
          instance_norm(ones({4, 3, 1}));
        });
  t.add("instance_norm_weight_shape", Raises::ShapeError, {"instance_norm", "weight", "[3]", "[4]"},
        [] {
          instance_norm(ones({2, 3, 4}), {}, {}, ones({4}));
        });
  t.add("instance_norm_only_running_var", Raises::Error,
        {"instance_norm", "running_mean and running_var"}, [] {
          instance_norm(ones({2, 3, 4}), {}, ones({3}));
        });
  t.add("instance_norm_running_stats_without_input_stats", Raises::Error,
        {"instance_norm", "use_input_stats = false", "running_mean"}, [] {
          instance_norm(ones({2, 3, 4}), {}, {}, {}, {}, false);
        });
  t.add("instance_norm_integral", Raises::DTypeError, {"instance_norm", "int64"}, [] {
    instance_norm(ones({2, 3, 4}, kInt64));
  });
  t.add("instance_norm_no_channels", Raises::ShapeError,
        {"instance_norm", "at least one channel", "[2, 0, 4]"}, [] {
          instance_norm(ones({2, 0, 4}));
        });
  t.add("instance_norm2d_2d_input", Raises::ShapeError,
        {"InstanceNorm2d", "3-D input (C, H, W) or 4-D input (N, C, H, W)", "[2, 3]"}, [] {
          nn::InstanceNorm2d norm(3);
          norm(ones({2, 3}));
        });
  t.add("instance_norm1d_affine_channels_differ", Raises::ShapeError,
        {"InstanceNorm1d", "num_features (3)", "[2, 4, 5]"}, [] {
          nn::InstanceNorm1d norm(nn::InstanceNorm1dOptions(3).affine(true));
          norm(ones({2, 4, 5}));
        });
  t.add("instance_norm3d_zero_features", Raises::ShapeError,
        {"InstanceNorm3d", "num_features", "0"}, [] { nn::InstanceNorm3d norm(0); });
  return t.cases();
}
LG_MISUSE_SUITE(InstanceNorm, instance_norm_cases());

std::vector<MisuseCase> conv1d_cases() {
  MisuseTable t;
  t.add("conv1d_4d_input", Raises::ShapeError, {"conv1d", "(N, C_in, L)", "[1, 2, 3, 4]"}, [] {
    conv1d(ones({1, 2, 3, 4}), ones({2, 2, 3}));
  });
  t.add("conv1d_2d_weight", Raises::ShapeError, {"conv1d", "weight", "[2, 6]"}, [] {
    conv1d(ones({1, 2, 5}), ones({2, 6}));
  });
  t.add("conv1d_channels_differ", Raises::ShapeError, {"conv1d", "[1, 3, 5]", "[2, 2, 3]"}, [] {
    conv1d(ones({1, 3, 5}), ones({2, 2, 3}));
  });
  t.add("conv1d_groups_do_not_divide", Raises::ShapeError, {"conv1d", "groups 2"}, [] {
    conv1d(ones({1, 4, 5}), ones({3, 2, 3}), {}, 1, 0, 1, 2);
  });
  t.add("conv1d_zero_stride", Raises::ShapeError, {"conv1d", "stride >= 1", "0"}, [] {
    conv1d(ones({1, 2, 5}), ones({2, 2, 3}), {}, 0);
  });
  t.add("conv1d_negative_padding", Raises::ShapeError, {"conv1d", "padding >= 0", "-1"}, [] {
    conv1d(ones({1, 2, 5}), ones({2, 2, 3}), {}, 1, -1);
  });
  t.add("conv1d_kernel_longer_than_input", Raises::ShapeError, {"conv1d", "span 7", "no output"},
        [] {
          conv1d(ones({1, 2, 5}), ones({2, 2, 4}), {}, 1, 0, 2);
        });
  t.add("conv1d_bias_shape", Raises::ShapeError, {"conv1d", "bias", "[2]", "[3]"}, [] {
    conv1d(ones({1, 2, 5}), ones({2, 2, 3}), ones({3}));
  });
  t.add("conv1d_integral", Raises::DTypeError, {"conv1d", "floating", "int32"}, [] {
    conv1d(ones({1, 2, 5}, kInt32), ones({2, 2, 3}));
  });
  t.add("conv1d_undefined", Raises::Error, {"conv1d", "defined"}, [] {
    conv1d(Tensor(), ones({2, 2, 3}));
  });
  t.add("conv1d_module_zero_kernel", Raises::ShapeError, {"Conv1d", "kernel_size", "0"},
        [] { nn::Conv1d conv(nn::Conv1dOptions(2, 2, 0)); });
  t.add("conv1d_module_groups", Raises::ShapeError, {"Conv1d", "divisible by groups (2)"},
        [] { nn::Conv1d conv(nn::Conv1dOptions(3, 2, 3).groups(2)); });
  return t.cases();
}
LG_MISUSE_SUITE(Conv1d, conv1d_cases());

std::vector<MisuseCase> embedding_cases() {
  MisuseTable t;
  t.add("embedding_index_past_end", Raises::Error, {"embedding", "index 5", "5 embeddings"}, [] {
    embedding(tensor(std::vector<std::int64_t>{0, 5}), ones({5, 3}));
  });
  t.add("embedding_negative_index", Raises::Error, {"embedding", "index -1", "[0, 4]"}, [] {
    embedding(tensor(std::vector<std::int64_t>{-1}), ones({5, 3}));
  });
  t.add("embedding_float_indices", Raises::DTypeError, {"embedding", "int64", "float32", "[2]"},
        [] {
          embedding(ones({2}), ones({5, 3}));
        });
  t.add("embedding_int32_indices", Raises::DTypeError, {"embedding", "int32"}, [] {
    embedding(ones({2}, kInt32), ones({5, 3}));
  });
  t.add("embedding_1d_weight", Raises::ShapeError, {"embedding", "(num_embeddings", "got [5]"},
        [] { embedding(tensor(std::vector<std::int64_t>{0}), ones({5})); });
  t.add("embedding_integral_weight", Raises::DTypeError, {"embedding", "weight", "int64"}, [] {
    embedding(tensor(std::vector<std::int64_t>{0}), ones({5, 3}, kInt64));
  });
  t.add("embedding_padding_idx_out_of_range", Raises::Error,
        {"embedding", "padding_idx 5", "5 embeddings"}, [] {
          embedding(tensor(std::vector<std::int64_t>{0}), ones({5, 3}), 5);
        });
  t.add("embedding_module_padding_idx", Raises::Error, {"Embedding", "padding_idx -6", "[-5, 4]"},
        [] { nn::Embedding(nn::EmbeddingOptions(5, 3).padding_idx(-6)); });
  t.add("embedding_module_zero_embeddings", Raises::ShapeError, {"Embedding", "num_embeddings"},
        [] { nn::Embedding(0, 3); });
  return t.cases();
}
LG_MISUSE_SUITE(Embedding, embedding_cases());

std::vector<MisuseCase> conv_transpose_cases() {
  MisuseTable t;
  t.add("conv_transpose2d_2d_input", Raises::ShapeError,
        {"conv_transpose2d", "4-D input", "3-D unbatched", "[5, 5]"}, [] {
          conv_transpose2d(ones({5, 5}), ones({3, 2, 3, 3}));
        });
  t.add("conv_transpose2d_channels_differ", Raises::ShapeError,
        {"conv_transpose2d", "[4, 2, 3, 3]", "[1, 3, 5, 5]"}, [] {
          conv_transpose2d(ones({1, 3, 5, 5}), ones({4, 2, 3, 3}));
        });
  t.add("conv_transpose2d_groups_do_not_divide", Raises::ShapeError,
        {"conv_transpose2d", "input channels 3", "groups = 2"}, [] {
          conv_transpose2d(ones({1, 3, 5, 5}), ones({3, 2, 3, 3}), {}, {1, 1}, {0, 0}, {0, 0}, 2);
        });
  t.add("conv_transpose2d_output_padding_not_below_stride", Raises::ShapeError,
        {"conv_transpose2d", "output_padding (2, 0)", "stride (2, 2)"}, [] {
          conv_transpose2d(ones({1, 3, 5, 5}), ones({3, 2, 3, 3}), {}, {2, 2}, {0, 0}, {2, 0});
        });
  t.add("conv_transpose2d_zero_stride", Raises::ShapeError, {"conv_transpose2d", "stride (0, 1)"},
        [] {
          conv_transpose2d(ones({1, 3, 5, 5}), ones({3, 2, 3, 3}), {}, {0, 1});
        });
  t.add("conv_transpose2d_padding_eats_output", Raises::ShapeError,
        {"conv_transpose2d", "output size", "[1, 3, 1, 1]"}, [] {
          conv_transpose2d(ones({1, 3, 1, 1}), ones({3, 2, 1, 1}), {}, {1, 1}, {1, 1});
        });
  t.add("conv_transpose2d_bias_shape", Raises::ShapeError,
        {"conv_transpose2d", "bias", "(2)", "[3]"}, [] {
          conv_transpose2d(ones({1, 3, 5, 5}), ones({3, 2, 3, 3}), ones({3}));
        });
  t.add("conv_transpose2d_dtypes_differ", Raises::DTypeError,
        {"conv_transpose2d", "float32", "float64"}, [] {
          conv_transpose2d(ones({1, 3, 5, 5}), ones({3, 2, 3, 3}, kFloat64));
        });
  t.add("conv_transpose2d_module_groups", Raises::ShapeError,
        {"ConvTranspose2d", "in_channels (3)", "groups (2)"},
        [] { nn::ConvTranspose2d(nn::ConvTranspose2dOptions(3, 4, 3).groups(2)); });
  t.add("conv_transpose3d_image_input", Raises::ShapeError,
        {"conv_transpose3d", "(N, C, D, H, W)", "[5, 5]"}, [] {
          conv_transpose3d(ones({5, 5}), ones({3, 2, 3, 3, 3}));
        });
  t.add("conv_transpose3d_4d_weight", Raises::ShapeError,
        {"conv_transpose3d", "weight", "(C_in, C_out / groups, kD, kH, kW)", "[3, 2, 3, 3]"}, [] {
          conv_transpose3d(ones({1, 3, 4, 5, 5}), ones({3, 2, 3, 3}));
        });
  t.add("conv_transpose3d_channels_differ", Raises::ShapeError,
        {"conv_transpose3d", "[4, 2, 3, 3, 3]", "[1, 3, 4, 5, 5]", "C_in"}, [] {
          conv_transpose3d(ones({1, 3, 4, 5, 5}), ones({4, 2, 3, 3, 3}));
        });
  t.add("conv_transpose3d_groups_do_not_divide", Raises::ShapeError,
        {"conv_transpose3d", "groups 2", "divisible"}, [] {
          conv_transpose3d(ones({1, 3, 4, 5, 5}), ones({3, 2, 3, 3, 3}), {}, {1, 1, 1}, {0, 0, 0},
                           {0, 0, 0}, 2);
        });
  t.add("conv_transpose3d_output_padding_not_below_stride", Raises::ShapeError,
        {"conv_transpose3d", "output_padding [0, 0, 2]", "stride [1, 1, 2]"}, [] {
          conv_transpose3d(ones({1, 3, 4, 5, 5}), ones({3, 2, 3, 3, 3}), {}, {1, 1, 2}, {0, 0, 0},
                           {0, 0, 2});
        });
  t.add("conv_transpose3d_zero_dilation", Raises::ShapeError,
        {"conv_transpose3d", "dilation [1, 0, 1]"}, [] {
          conv_transpose3d(ones({1, 3, 4, 5, 5}), ones({3, 2, 3, 3, 3}), {}, {1, 1, 1}, {0, 0, 0},
                           {0, 0, 0}, 1, {1, 0, 1});
        });
  t.add("conv_transpose3d_empty_kernel", Raises::ShapeError,
        {"conv_transpose3d", "at least one element", "[3, 2, 0, 3, 3]"}, [] {
          conv_transpose3d(ones({1, 3, 4, 5, 5}), ones({3, 2, 0, 3, 3}));
        });
  t.add("conv_transpose3d_padding_eats_output", Raises::ShapeError,
        {"conv_transpose3d", "output size [-1, 1, 1]", "[1, 3, 1, 1, 1]"}, [] {
          conv_transpose3d(ones({1, 3, 1, 1, 1}), ones({3, 2, 1, 1, 1}), {}, {1, 1, 1}, {1, 0, 0});
        });
  t.add("conv_transpose3d_huge_stride", Raises::ShapeError, {"conv_transpose3d", "overflow"}, [] {
    conv_transpose3d(ones({1, 3, 4, 5, 5}), ones({3, 2, 3, 3, 3}), {},
                     {std::int64_t{1} << 62, 1, 1});
  });
  t.add("conv_transpose3d_bias_shape", Raises::ShapeError,
        {"conv_transpose3d", "bias", "(2)", "[3]"}, [] {
          conv_transpose3d(ones({1, 3, 4, 5, 5}), ones({3, 2, 3, 3, 3}), ones({3}));
        });
  t.add("conv_transpose3d_dtypes_differ", Raises::DTypeError,
        {"conv_transpose3d", "float32", "float64"}, [] {
          conv_transpose3d(ones({1, 3, 4, 5, 5}), ones({3, 2, 3, 3, 3}, kFloat64));
        });
  t.add("conv_transpose3d_integral_input", Raises::DTypeError, {"conv_transpose3d", "int64"}, [] {
    conv_transpose3d(ones({1, 3, 4, 5, 5}, kInt64), ones({3, 2, 3, 3, 3}));
  });
  t.add("conv_transpose3d_undefined_weight", Raises::Error, {"conv_transpose3d", "weight"}, [] {
    conv_transpose3d(ones({1, 3, 4, 5, 5}), Tensor());
  });
  t.add("conv_transpose3d_module_groups", Raises::ShapeError,
        {"ConvTranspose3d", "in_channels (3)", "groups (2)"},
        [] { nn::ConvTranspose3d(nn::ConvTranspose3dOptions(3, 4, 3).groups(2)); });
  t.add("conv_transpose3d_module_zero_kernel", Raises::ShapeError,
        {"ConvTranspose3d", "kernel_size", "(2, 0, 2)"}, [] {
          nn::ConvTranspose3d(nn::ConvTranspose3dOptions(3, 4, Size3{2, 0, 2}));
        });
  return t.cases();
}
LG_MISUSE_SUITE(ConvTranspose, conv_transpose_cases());

std::vector<MisuseCase> dropout_cases() {
  MisuseTable t;
  t.add("dropout2d_probability_above_one", Raises::Error,
        {"dropout2d", "probability p in [0, 1]", "1.5"}, [] {
          dropout2d(ones({1, 2, 3, 3}), 1.5);
        });
  t.add("dropout1d_nan_probability", Raises::Error, {"dropout1d", "[0, 1]", "nan"}, [] {
    dropout1d(ones({1, 2, 3}), std::numeric_limits<double>::quiet_NaN());
  });
  t.add("dropout2d_of_a_volume", Raises::ShapeError,
        {"dropout2d", "4-D input (N, C, ...)", "3-D unbatched", "[1, 2, 3, 3, 3]"}, [] {
          dropout2d(ones({1, 2, 3, 3, 3}));
        });
  t.add("dropout3d_of_a_vector", Raises::ShapeError, {"dropout3d", "5-D", "[4]"},
        [] { dropout3d(ones({4})); });
  t.add("dropout1d_integral", Raises::DTypeError, {"dropout1d", "floating", "int64"}, [] {
    dropout1d(ones({1, 2, 3}, kInt64));
  });
  t.add("alpha_dropout_negative_probability", Raises::Error, {"alpha_dropout", "-0.1"},
        [] { alpha_dropout(ones({3}), -0.1); });
  t.add("alpha_dropout_undefined", Raises::Error, {"alpha_dropout", "undefined"},
        [] { alpha_dropout(Tensor()); });
  t.add("feature_alpha_dropout_of_a_vector", Raises::ShapeError,
        {"feature_alpha_dropout", "at least 2 dims", "[3]"},
        [] { feature_alpha_dropout(ones({3})); });
  t.add("dropout3d_module_probability", Raises::Error, {"Dropout3d", "[0, 1]", "2"},
        [] { nn::Dropout3d(2.0); });
  t.add("alpha_dropout_module_probability", Raises::Error, {"AlphaDropout", "[0, 1]", "-1"},
        [] { nn::AlphaDropout(-1.0); });
  return t.cases();
}
LG_MISUSE_SUITE(Dropouts, dropout_cases());

std::vector<MisuseCase> fold_cases() {
  MisuseTable t;
  t.add("unfold_of_a_vector", Raises::ShapeError, {"unfold", "(N, C, H, W)", "[5]"}, [] {
    unfold(ones({5}), {2, 2});
  });
  t.add("unfold_zero_kernel", Raises::ShapeError, {"unfold", "kernel_size", "[0, 2]"}, [] {
    unfold(ones({1, 1, 4, 4}), {0, 2});
  });
  t.add("unfold_negative_padding", Raises::ShapeError, {"unfold", "padding [-1, 0]"}, [] {
    unfold(ones({1, 1, 4, 4}), {2, 2}, {1, 1}, {-1, 0});
  });
  t.add("unfold_kernel_wider_than_the_image", Raises::ShapeError,
        {"unfold", "width of [1, 1, 4, 3]", "span 5", "no block"}, [] {
          unfold(ones({1, 1, 4, 3}), {2, 3}, {1, 2});
        });
  t.add("unfold_integral", Raises::DTypeError, {"unfold", "floating", "int64"}, [] {
    unfold(ones({1, 1, 4, 4}, kInt64), {2, 2});
  });
  t.add("unfold_huge_stride", Raises::ShapeError, {"unfold", "overflow"}, [] {
    unfold(ones({1, 1, 4, 4}), {2, 2}, {1, 1}, {std::int64_t{1} << 62, 0});
  });
  t.add("fold_rows_not_a_multiple_of_the_kernel", Raises::ShapeError,
        {"fold", "[1, 5, 9]", "5 rows", "multiple", "4 elements"}, [] {
          fold(ones({1, 5, 9}), {4, 4}, {2, 2});
        });
  t.add("fold_blocks_of_another_image", Raises::ShapeError,
        {"fold", "[1, 4, 8]", "8 blocks", "output_size [4, 4]", "gives 9"}, [] {
          fold(ones({1, 4, 8}), {4, 4}, {2, 2});
        });
  t.add("fold_zero_output_size", Raises::ShapeError, {"fold", "positive output_size", "[0, 4]"},
        [] {
          fold(ones({1, 4, 3}), {0, 4}, {2, 2});
        });
  t.add("fold_of_a_4d_input", Raises::ShapeError, {"fold", "(N, C kH kW, L)", "[1, 4, 3, 3]"}, [] {
    fold(ones({1, 4, 3, 3}), {4, 4}, {2, 2});
  });
  return t.cases();
}
LG_MISUSE_SUITE(Fold, fold_cases());

std::vector<MisuseCase> multi_margin_loss_cases() {
  MisuseTable t;
  t.add("multi_margin_p_three", Raises::Error, {"multi_margin_loss", "p must be 1 or 2", "3"}, [] {
    multi_margin_loss(ones({2, 3}), zeros({2}, kInt64), 3);
  });
  t.add("multi_margin_target_out_of_range", Raises::Error,
        {"multi_margin_loss", "target 3 of sample 1", "[0, 3)"}, [] {
          multi_margin_loss(ones({2, 3}), tensor<std::int64_t>({0, 3}));
        });
  t.add("multi_margin_target_of_another_batch", Raises::ShapeError,
        {"multi_margin_loss", "target of shape [2]", "[2, 3]", "got [3]"}, [] {
          multi_margin_loss(ones({2, 3}), zeros({3}, kInt64));
        });
  t.add("multi_margin_float_target", Raises::DTypeError, {"multi_margin_loss", "int64", "float32"},
        [] {
          multi_margin_loss(ones({2, 3}), zeros({2}));
        });
  t.add("multi_margin_weight_of_another_size", Raises::ShapeError,
        {"multi_margin_loss", "class weight of shape (3)", "[4]"}, [] {
          multi_margin_loss(ones({2, 3}), zeros({2}, kInt64), 1, 1.0, ones({4}));
        });
  t.add("multi_margin_three_dims", Raises::ShapeError,
        {"multi_margin_loss", "(N, C) or (C)", "[2, 3, 4]"}, [] {
          multi_margin_loss(ones({2, 3, 4}), zeros({2}, kInt64));
        });
  t.add("multilabel_margin_index_out_of_range", Raises::Error,
        {"multilabel_margin_loss", "target index 5 of sample 0", "-1"}, [] {
          multilabel_margin_loss(ones({1, 3}), tensor(std::vector<std::int64_t>{5, -1, 0}, {1, 3}));
        });
  t.add("multilabel_margin_target_shape", Raises::ShapeError,
        {"multilabel_margin_loss", "input's shape [2, 3]", "[2]"}, [] {
          multilabel_margin_loss(ones({2, 3}), zeros({2}, kInt64));
        });
  t.add("triplet_distance_margin_zero", Raises::Error,
        {"triplet_margin_with_distance_loss", "margin must be greater than 0", "0"}, [] {
          triplet_margin_with_distance_loss(ones({2, 3}), ones({2, 3}), ones({2, 3}), {}, 0.0);
        });
  t.add("triplet_distance_ranks_differ", Raises::ShapeError,
        {"triplet_margin_with_distance_loss", "one number of dims", "[3]"}, [] {
          triplet_margin_with_distance_loss(ones({2, 3}), ones({3}), ones({2, 3}));
        });
  t.add("multi_margin_module_p", Raises::Error, {"MultiMarginLoss", "p must be 1 or 2"},
        [] { nn::MultiMarginLoss(nn::MultiMarginLossOptions().p(0)); });
  return t.cases();
}
LG_MISUSE_SUITE(MultiMarginLosses, multi_margin_loss_cases());

std::vector<MisuseCase> composed_layer_cases() {
  MisuseTable t;
  t.add("lp_pool2d_zero_norm", Raises::Error, {"lp_pool2d", "non-zero norm_type", "0"}, [] {
    lp_pool2d(ones({1, 1, 4, 4}), 0.0, {2, 2});
  });
  t.add("lp_pool1d_integral", Raises::DTypeError, {"lp_pool1d", "floating", "int64"}, [] {
    lp_pool1d(ones({1, 1, 4}, kInt64), 2.0, 2);
  });
  t.add("local_response_norm_of_a_matrix", Raises::ShapeError,
        {"local_response_norm", "at least 3 dims", "[2, 3]"}, [] {
          local_response_norm(ones({2, 3}), 2);
        });
  t.add("local_response_norm_zero_size", Raises::Error, {"local_response_norm", "positive size"},
        [] {
          local_response_norm(ones({1, 2, 3}), 0);
        });
  t.add("bilinear_leading_shapes_differ", Raises::ShapeError,
        {"bilinear", "one leading shape", "[3, 4]", "[2, 5]"}, [] {
          bilinear(ones({3, 4}), ones({2, 5}), ones({1, 4, 5}));
        });
  t.add("bilinear_weight_of_other_features", Raises::ShapeError,
        {"bilinear", "weight of shape (out, 4, 5)", "[1, 5, 4]"}, [] {
          bilinear(ones({3, 4}), ones({3, 5}), ones({1, 5, 4}));
        });
  t.add("bilinear_bias_shape", Raises::ShapeError, {"bilinear", "bias of shape (2)", "[3]"}, [] {
    bilinear(ones({3, 4}), ones({3, 5}), ones({2, 4, 5}), ones({3}));
  });
  t.add("bilinear_dtypes_differ", Raises::DTypeError, {"bilinear", "float64", "float32"}, [] {
    bilinear(ones({3, 4}), ones({3, 5}, kFloat64), ones({2, 4, 5}));
  });
  t.add("channel_shuffle_groups_do_not_divide", Raises::ShapeError,
        {"channel_shuffle", "5 channels", "groups = 2"}, [] {
          channel_shuffle(ones({1, 5, 2}), 2);
        });
  t.add("channel_shuffle_of_a_matrix", Raises::ShapeError, {"channel_shuffle", "3 dims", "[4, 4]"},
        [] {
          channel_shuffle(ones({4, 4}), 2);
        });
  t.add("softmax2d_of_a_matrix", Raises::ShapeError, {"Softmax2d", "(N, C, H, W)", "[4, 4]"}, [] {
    nn::Softmax2d()(ones({4, 4}));
  });
  t.add("rrelu_bounds_crossed", Raises::Error, {"rrelu", "lower <= upper", "0.5", "0.2"},
        [] { rrelu(ones({3}), 0.5, 0.2, true); });
  t.add("rrelu_module_bounds_crossed", Raises::Error, {"RReLU", "lower <= upper"},
        [] { nn::RReLU(nn::RReLUOptions().lower(0.9).upper(0.1)); });
  t.add("max_unpool2d_index_outside", Raises::Error,
        {"max_unpool2d", "index 16", "outside the output plane of 16"}, [] {
          max_unpool2d(ones({1, 1, 2, 2}),
                       tensor(std::vector<std::int64_t>{0, 1, 2, 16}, {1, 1, 2, 2}), {2, 2});
        });
  t.add("max_unpool2d_indices_of_another_shape", Raises::ShapeError,
        {"max_unpool2d", "indices of the input's shape", "[1, 1, 2, 2]", "[1, 1, 4]"}, [] {
          max_unpool2d(ones({1, 1, 2, 2}), zeros({1, 1, 4}, kInt64), {2, 2});
        });
  t.add("max_unpool1d_output_size_too_far", Raises::ShapeError,
        {"max_unpool1d", "output size 8", "within one stride 2 of 4"}, [] {
          max_unpool1d(ones({1, 1, 2}), zeros({1, 1, 2}, kInt64), 2, 2, 0, 8);
        });
  t.add("max_unpool3d_int32_indices", Raises::DTypeError, {"max_unpool3d", "int64", "int32"}, [] {
    max_unpool3d(ones({1, 1, 1, 1, 1}), zeros({1, 1, 1, 1, 1}, kInt32), {2, 2, 2});
  });
  t.add("max_unpool2d_of_a_vector", Raises::ShapeError, {"max_unpool2d", "4 dims", "[3]"}, [] {
    max_unpool2d(ones({3}), zeros({3}, kInt64), {2, 2});
  });
  t.add("bilinear_module_zero_features", Raises::Error, {"Bilinear", "positive", "0"},
        [] { nn::Bilinear(0, 3, 2); });
  t.add("cross_map_lrn2d_three_dims", Raises::ShapeError,
        {"cross_map_lrn2d", "4-D input", "[2, 3, 4]"}, [] {
          cross_map_lrn2d(ones({2, 3, 4}), 3);
        });
  t.add("cross_map_lrn2d_size_zero", Raises::Error, {"cross_map_lrn2d", "positive size", "got 0"},
        [] {
          cross_map_lrn2d(ones({1, 3, 2, 2}), 0);
        });
  t.add("cross_map_lrn2d_module_size_zero", Raises::Error,
        {"CrossMapLRN2d", "positive size", "got 0"}, [] { nn::CrossMapLRN2d layer(0); });
  return t.cases();
}
LG_MISUSE_SUITE(ComposedLayers, composed_layer_cases());

std::vector<MisuseCase> ctc_loss_cases() {
  MisuseTable t;
  const auto lengths = [](std::vector<std::int64_t> v) { return tensor(v); };
  t.add("ctc_blank_out_of_range", Raises::Error, {"ctc_loss", "blank 4", "[0, 4)"}, [&] {
    ctc_loss(zeros({5, 2, 4}), zeros({2, 2}, kInt64), lengths({5, 5}), lengths({1, 1}), 4);
  });
  t.add("ctc_label_is_blank", Raises::Error, {"ctc_loss", "label 0 of sample 0", "blank 0"}, [&] {
    ctc_loss(zeros({5, 2, 4}), zeros({2, 2}, kInt64), lengths({5, 5}), lengths({1, 1}));
  });
  t.add("ctc_label_out_of_range", Raises::Error, {"ctc_loss", "label 7 of sample 1"}, [&] {
    ctc_loss(zeros({5, 2, 4}), tensor(std::vector<std::int64_t>{1, 2, 7, 1}, {2, 2}),
             lengths({5, 5}), lengths({2, 1}));
  });
  t.add("ctc_input_length_past_the_input", Raises::ShapeError,
        {"ctc_loss", "input length 6 of sample 1", "[0, 5]"}, [&] {
          ctc_loss(zeros({5, 2, 4}), ones({2, 2}, kInt64), lengths({5, 6}), lengths({1, 1}));
        });
  t.add("ctc_target_length_past_the_targets", Raises::ShapeError,
        {"ctc_loss", "target length 3 of sample 0", "[2, 2]"}, [&] {
          ctc_loss(zeros({5, 2, 4}), ones({2, 2}, kInt64), lengths({5, 5}), lengths({3, 1}));
        });
  t.add("ctc_flat_targets_left_over", Raises::ShapeError, {"ctc_loss", "sum to 2", "hold 3 labels"},
        [&] {
          ctc_loss(zeros({5, 2, 4}), ones({3}, kInt64), lengths({5, 5}), lengths({1, 1}));
        });
  t.add("ctc_lengths_of_another_batch", Raises::ShapeError,
        {"ctc_loss", "expected 2 input and target lengths", "got 3 and 2"}, [&] {
          ctc_loss(zeros({5, 2, 4}), ones({2, 2}, kInt64), lengths({5, 5, 5}), lengths({1, 1}));
        });
  t.add("ctc_float_lengths", Raises::DTypeError, {"ctc_loss", "integral input_lengths", "float32"},
        [&] {
          ctc_loss(zeros({5, 2, 4}), ones({2, 2}, kInt64), ones({2}), lengths({1, 1}));
        });
  t.add("ctc_four_dims", Raises::ShapeError, {"ctc_loss", "(T, N, C)", "[5, 2, 4, 1]"}, [&] {
    ctc_loss(zeros({5, 2, 4, 1}), ones({2, 2}, kInt64), lengths({5, 5}), lengths({1, 1}));
  });
  t.add("ctc_integral_log_probs", Raises::DTypeError, {"ctc_loss", "floating", "int64"}, [&] {
    ctc_loss(zeros({5, 2, 4}, kInt64), ones({2, 2}, kInt64), lengths({5, 5}), lengths({1, 1}));
  });
  t.add("ctc_module_negative_blank", Raises::Error, {"CTCLoss", "blank", "-1"},
        [] { nn::CTCLoss(nn::CTCLossOptions().blank(-1)); });
  return t.cases();
}
LG_MISUSE_SUITE(CTCLoss, ctc_loss_cases());

std::vector<MisuseCase> interpolate_cases() {
  MisuseTable t;
  t.add("interpolate_3d_input", Raises::ShapeError, {"interpolate", "4-D", "[3, 4, 4]"}, [] {
    interpolate(ones({3, 4, 4}), Size2{8, 8});
  });
  t.add("interpolate_size_and_scale", Raises::Error, {"interpolate", "exactly one", "both"}, [] {
    interpolate(ones({1, 1, 4, 4}), Size2{8, 8}, Scale2{2.0, 2.0});
  });
  t.add("interpolate_neither_size_nor_scale", Raises::Error, {"interpolate", "neither"}, [] {
    interpolate(ones({1, 1, 4, 4}), std::optional<Size2>{});
  });
  t.add("interpolate_nd_neither_size_nor_scale", Raises::Error, {"interpolate", "neither"}, [] {
    interpolate(ones({1, 1, 4}), std::optional<std::vector<std::int64_t>>{});
  });
  t.add("interpolate_nd_two_dims_input", Raises::ShapeError,
        {"interpolate", "3-D (N, C, L)", "5-D", "[4, 4]"}, [] {
          interpolate(ones({4, 4}), std::vector<std::int64_t>{8});
        });
  t.add("interpolate_nd_six_dims_input", Raises::ShapeError,
        {"interpolate", "5-D (N, C, D, H, W)", "[1, 1, 2, 2, 2, 2]"}, [] {
          interpolate(ones({1, 1, 2, 2, 2, 2}), std::vector<std::int64_t>{4, 4, 4, 4});
        });
  t.add("interpolate_nd_size_of_other_rank", Raises::ShapeError,
        {"interpolate", "size of 3 values", "[1, 1, 2, 3, 4]", "got 2"}, [] {
          interpolate(ones({1, 1, 2, 3, 4}), std::vector<std::int64_t>{4, 4});
        });
  t.add("interpolate_nd_scale_of_other_rank", Raises::ShapeError,
        {"interpolate", "scale_factor of 1 value", "[1, 1, 4]", "got 3"}, [] {
          interpolate(ones({1, 1, 4}), std::nullopt, std::vector<double>{2, 2, 2});
        });
  t.add("interpolate_linear_on_a_volume", Raises::ShapeError,
        {"interpolate", "linear", "3-D", "[1, 1, 2, 3, 4]"}, [] {
          interpolate(ones({1, 1, 2, 3, 4}), std::vector<std::int64_t>{4, 4, 4}, std::nullopt,
                      kLinear);
        });
  t.add("interpolate_trilinear_on_images", Raises::ShapeError,
        {"interpolate", "trilinear", "5-D", "[1, 1, 3, 4]"}, [] {
          interpolate(ones({1, 1, 3, 4}), Size2{4, 4}, std::nullopt, kTrilinear);
        });
  t.add("interpolate_bilinear_on_a_line", Raises::ShapeError,
        {"interpolate", "bilinear", "4-D", "[1, 1, 4]"}, [] {
          interpolate(ones({1, 1, 4}), std::vector<std::int64_t>{8}, std::nullopt, kBilinear);
        });
  t.add("interpolate_nd_nearest_align_corners", Raises::Error,
        {"interpolate", "align_corners", "trilinear", "nearest"}, [] {
          interpolate(ones({1, 1, 2, 2, 2}), std::vector<std::int64_t>{4, 4, 4}, std::nullopt,
                      kNearest, true);
        });
  t.add("interpolate_nd_zero_size", Raises::ShapeError,
        {"interpolate", "[1, 1, 2, 2, 2]", "output size 0", "dim 2"}, [] {
          interpolate(ones({1, 1, 2, 2, 2}), std::vector<std::int64_t>{0, 4, 4}, std::nullopt,
                      kTrilinear);
        });
  t.add("interpolate_nd_scale_to_nothing", Raises::ShapeError,
        {"interpolate", "[1, 1, 4]", "output size 0"}, [] {
          interpolate(ones({1, 1, 4}), std::nullopt, std::vector<double>{0.2}, kLinear);
        });
  t.add("interpolate_nd_nan_scale", Raises::Error, {"interpolate", "positive finite", "nan"}, [] {
    interpolate(ones({1, 1, 2, 2, 2}), std::nullopt,
                std::vector<double>{2, std::numeric_limits<double>::quiet_NaN(), 2});
  });
  t.add("interpolate_nd_integral", Raises::DTypeError, {"interpolate", "int64"}, [] {
    interpolate(ones({1, 1, 2, 2, 2}, kInt64), std::vector<std::int64_t>{4, 4, 4}, std::nullopt,
                kTrilinear);
  });
  t.add("upsample_module_rank_of_its_sizes", Raises::ShapeError,
        {"interpolate", "size of 2 values", "[1, 1, 2, 2]", "got 3"}, [] {
          nn::Upsample up(nn::UpsampleOptions().size(std::vector<std::int64_t>{4, 4, 4}));
          up(ones({1, 1, 2, 2}));
        });
  t.add("interpolate_zero_size", Raises::ShapeError, {"interpolate", "(0, 8)", "[1, 1, 4, 4]"}, [] {
    interpolate(ones({1, 1, 4, 4}), Size2{0, 8});
  });
  t.add("interpolate_scale_to_nothing", Raises::ShapeError, {"interpolate", "(1, 0)"}, [] {
    interpolate(ones({1, 1, 4, 4}), std::nullopt, Scale2{0.25, 0.2});
  });
  t.add("interpolate_negative_scale", Raises::Error, {"interpolate", "(-2, 2)"}, [] {
    interpolate(ones({1, 1, 4, 4}), std::nullopt, Scale2{-2.0, 2.0});
  });
  t.add("interpolate_nearest_exact_align_corners", Raises::Error,
        {"interpolate", "align_corners", "bilinear and bicubic", "nearest-exact"}, [] {
          interpolate(ones({1, 1, 4, 4}), Size2{8, 8}, std::nullopt, kNearestExact, false);
        });
  t.add("interpolate_nearest_align_corners", Raises::Error,
        {"interpolate", "align_corners", "nearest"}, [] {
          interpolate(ones({1, 1, 4, 4}), Size2{8, 8}, std::nullopt, kNearest, true);
        });
  t.add("interpolate_integral", Raises::DTypeError, {"interpolate", "int64"}, [] {
    interpolate(ones({1, 1, 4, 4}, kInt64), Size2{8, 8});
  });
  t.add("upsample_module_no_size", Raises::Error, {"Upsample", "neither"},
        [] { nn::Upsample up(nn::UpsampleOptions{}); });
  t.add("upsample_module_four_factors", Raises::Error,
        {"Upsample", "scale_factor", "1 to 3 values", "got 4"}, [] {
          nn::Upsample up(nn::UpsampleOptions().scale_factor(std::vector<double>{2, 2, 2, 2}));
        });
  t.add("upsample_module_nearest_align_corners", Raises::Error,
        {"Upsample", "align_corners", "trilinear", "nearest"}, [] {
          nn::Upsample up(
              nn::UpsampleOptions().size(std::vector<std::int64_t>{4}).align_corners(true));
        });
  t.add("interpolate_antialias_nearest", Raises::Error,
        {"interpolate", "antialias", "bilinear and bicubic", "nearest"}, [] {
          interpolate(ones({1, 1, 4, 4}), Size2{2, 2}, std::nullopt, kNearest, std::nullopt,
                      std::nullopt, true);
        });
  t.add("interpolate_antialias_trilinear", Raises::ShapeError,
        {"interpolate", "antialias", "4-D", "[1, 1, 4, 4, 4]"}, [] {
          interpolate(ones({1, 1, 4, 4, 4}), std::vector<std::int64_t>{2, 2, 2}, std::nullopt,
                      kTrilinear, std::nullopt, std::nullopt, true);
        });
  // The weight matrices were std::vectors: std::bad_alloc got out.
  t.add("interpolate_antialias_larger_than_memory", Raises::OutOfMemoryError,
        {"out of memory", "cpu"}, [] {
          interpolate(ones({1, 1, 4, 4}, kFloat64), Size2{std::int64_t{1} << 44, 2}, std::nullopt,
                      kBilinear, std::nullopt, std::nullopt, true);
        });
  t.add("interpolate_antialias_integral", Raises::DTypeError, {"interpolate", "int64"}, [] {
    interpolate(ones({1, 1, 4, 4}, kInt64), Size2{2, 2}, std::nullopt, kBilinear, std::nullopt,
                std::nullopt, true);
  });
  t.add("interpolate_recompute_with_size", Raises::Error,
        {"interpolate", "recompute_scale_factor", "explicit size"}, [] {
          interpolate(ones({1, 1, 4, 4}), Size2{2, 2}, std::nullopt, kBilinear, std::nullopt, true);
        });
  t.add("interpolate_3d_recompute_with_size", Raises::Error,
        {"interpolate", "recompute_scale_factor", "explicit size"}, [] {
          interpolate(ones({1, 1, 4}), std::vector<std::int64_t>{2}, std::nullopt, kLinear,
                      std::nullopt, true);
        });
  return t.cases();
}
LG_MISUSE_SUITE(Interpolate, interpolate_cases());

std::vector<MisuseCase> fractional_max_pool_cases() {
  MisuseTable t;
  const Tensor samples = full({1, 2, 2}, 0.5);
  t.add("fractional_max_pool2d_both_sizes", Raises::Error,
        {"fractional_max_pool2d", "exactly one of output_size and output_ratio", "both"}, [] {
          fractional_max_pool2d(ones({1, 2, 8, 8}), {2, 2}, Size2{3, 3}, Ratio2{0.5, 0.5});
        });
  t.add("fractional_max_pool2d_neither_size", Raises::Error,
        {"fractional_max_pool2d", "exactly one", "neither"}, [] {
          fractional_max_pool2d(ones({1, 2, 8, 8}), {2, 2}, std::nullopt);
        });
  t.add("fractional_max_pool2d_ratio_one", Raises::Error,
        {"fractional_max_pool2d", "output_ratio in (0, 1)", "got 1"}, [] {
          fractional_max_pool2d(ones({1, 2, 8, 8}), {2, 2}, std::nullopt, Ratio2{1.0, 0.5});
        });
  t.add(
      "fractional_max_pool2d_output_too_large", Raises::ShapeError,
      {"fractional_max_pool2d", "output size 8", "not in [1, 7]", "kernel size 2", "[1, 2, 8, 8]"},
      [] {
        fractional_max_pool2d(ones({1, 2, 8, 8}), {2, 2}, Size2{4, 8});
      });
  t.add("fractional_max_pool2d_kernel_zero", Raises::Error,
        {"fractional_max_pool2d", "kernel_size >= 1", "got 0"}, [] {
          fractional_max_pool2d(ones({1, 2, 8, 8}), {0, 2}, Size2{4, 4});
        });
  t.add("fractional_max_pool2d_of_a_matrix", Raises::ShapeError,
        {"fractional_max_pool2d", "4 dims", "unbatched of 3", "[8, 8]"}, [] {
          fractional_max_pool2d(ones({8, 8}), {2, 2}, Size2{4, 4});
        });
  t.add("fractional_max_pool2d_empty_plane", Raises::ShapeError,
        {"fractional_max_pool2d", "non-empty spatial dims", "[1, 2, 0, 8]"}, [] {
          fractional_max_pool2d(ones({1, 2, 0, 8}), {2, 2}, Size2{1, 4});
        });
  t.add("fractional_max_pool2d_samples_shape", Raises::ShapeError,
        {"fractional_max_pool2d", "random_samples of shape [2, 2, 2]", "got [1, 2, 2]"}, [samples] {
          fractional_max_pool2d(ones({2, 2, 8, 8}), {2, 2}, Size2{4, 4}, std::nullopt, samples);
        });
  t.add("fractional_max_pool2d_samples_integral", Raises::DTypeError,
        {"fractional_max_pool2d", "floating random_samples", "int64"}, [] {
          fractional_max_pool2d(ones({1, 2, 8, 8}), {2, 2}, Size2{4, 4}, std::nullopt,
                                zeros({1, 2, 2}, kInt64));
        });
  t.add("fractional_max_pool2d_sample_one", Raises::Error,
        {"fractional_max_pool2d", "random_samples in [0, 1)", "got 1", "element 3"}, [] {
          fractional_max_pool2d(ones({1, 2, 8, 8}), {2, 2}, Size2{4, 4}, std::nullopt,
                                tensor(std::vector<double>{0.5, 0.5, 0.5, 1.0}, {1, 2, 2}));
        });
  t.add("fractional_max_pool2d_sample_nan", Raises::Error,
        {"fractional_max_pool2d", "random_samples in [0, 1)", "nan"}, [] {
          fractional_max_pool2d(ones({1, 2, 8, 8}), {2, 2}, Size2{4, 4}, std::nullopt,
                                full({1, 2, 2}, std::numeric_limits<double>::quiet_NaN()));
        });
  t.add("fractional_max_pool3d_integral_input", Raises::DTypeError,
        {"fractional_max_pool3d", "int64"}, [] {
          fractional_max_pool3d(ones({1, 1, 4, 4, 4}, kInt64), {2, 2, 2}, Size3{2, 2, 2});
        });
  t.add("fractional_max_pool2d_module_no_size", Raises::Error,
        {"FractionalMaxPool2d", "either an output size, or a pooling ratio", "neither"},
        [] { nn::FractionalMaxPool2d pool(nn::FractionalMaxPool2dOptions(2)); });
  t.add("fractional_max_pool3d_module_ratio", Raises::Error,
        {"FractionalMaxPool3d", "output_ratio must be between 0 and 1", "got 1.5"},
        [] { nn::FractionalMaxPool3d pool(nn::FractionalMaxPool3dOptions(2).output_ratio(1.5)); });
  return t.cases();
}
LG_MISUSE_SUITE(FractionalMaxPool, fractional_max_pool_cases());

std::vector<MisuseCase> adaptive_log_softmax_cases() {
  MisuseTable t;
  using Options = nn::AdaptiveLogSoftmaxWithLossOptions;
  t.add("asm_no_cutoffs", Raises::Error, {"AdaptiveLogSoftmaxWithLoss", "length larger than 0"},
        [] { nn::AdaptiveLogSoftmaxWithLoss m(Options(8, 10, {})); });
  t.add("asm_cutoffs_unsorted", Raises::Error,
        {"AdaptiveLogSoftmaxWithLoss", "unique, positive integers sorted", "got 3 at position 1"},
        [] {
          nn::AdaptiveLogSoftmaxWithLoss m(Options(8, 10, {5, 3}));
        });
  t.add("asm_cutoff_n_classes", Raises::Error,
        {"AdaptiveLogSoftmaxWithLoss", "between 1 and n_classes-1", "got 10"}, [] {
          nn::AdaptiveLogSoftmaxWithLoss m(Options(8, 10, {4, 10}));
        });
  t.add("asm_div_value_zero", Raises::Error,
        {"AdaptiveLogSoftmaxWithLoss", "positive, finite div_value", "got 0"},
        [] { nn::AdaptiveLogSoftmaxWithLoss m(Options(8, 10, {4}).div_value(0.0)); });
  t.add("asm_target_out_of_range", Raises::Error,
        {"AdaptiveLogSoftmaxWithLoss", "target values should be in [0, 9]", "got 10", "position 1"},
        [] {
          nn::AdaptiveLogSoftmaxWithLoss m(Options(8, 10, {4}));
          m(ones({2, 8}), tensor(std::vector<std::int64_t>{3, 10}, {2}));
        });
  t.add("asm_batch_mismatch", Raises::ShapeError,
        {"AdaptiveLogSoftmaxWithLoss", "same size in the batch dimension", "[3, 8]", "[2]"}, [] {
          nn::AdaptiveLogSoftmaxWithLoss m(Options(8, 10, {4}));
          m(ones({3, 8}), zeros({2}, kInt64));
        });
  t.add("asm_features_mismatch", Raises::ShapeError,
        {"AdaptiveLogSoftmaxWithLoss", "(*, 8)", "[2, 7]"}, [] {
          nn::AdaptiveLogSoftmaxWithLoss m(Options(8, 10, {4}));
          m(ones({2, 7}), zeros({2}, kInt64));
        });
  t.add("asm_two_d_target", Raises::ShapeError,
        {"AdaptiveLogSoftmaxWithLoss", "0-D or 1-D target", "[2, 1]"}, [] {
          nn::AdaptiveLogSoftmaxWithLoss m(Options(8, 10, {4}));
          m(ones({2, 8}), zeros({2, 1}, kInt64));
        });
  t.add("asm_float_target", Raises::DTypeError, {"AdaptiveLogSoftmaxWithLoss", "int64", "float32"},
        [] {
          nn::AdaptiveLogSoftmaxWithLoss m(Options(8, 10, {4}));
          m(ones({2, 8}), zeros({2}));
        });
  t.add("asm_log_prob_of_a_vector", Raises::ShapeError,
        {"AdaptiveLogSoftmaxWithLoss", "log_prob", "(N, 8)", "[8]"}, [] {
          nn::AdaptiveLogSoftmaxWithLoss m(Options(8, 10, {4}));
          m->log_prob(ones({8}));
        });
  return t.cases();
}
LG_MISUSE_SUITE(AdaptiveLogSoftmax, adaptive_log_softmax_cases());

std::vector<MisuseCase> grid_sample_cases() {
  MisuseTable t;
  const auto image = [] { return ones({2, 3, 4, 5}); };
  t.add("grid_sample_3d_input", Raises::ShapeError, {"grid_sample", "(N, C, H, W)", "[3, 4, 5]"},
        [] {
          grid_sample(ones({3, 4, 5}), ones({1, 2, 2, 2}));
        });
  t.add("grid_sample_grid_last_dim", Raises::ShapeError,
        {"grid_sample", "(N, H_out, W_out, 2)", "[2, 3, 3, 3]"}, [&] {
          grid_sample(image(), ones({2, 3, 3, 3}));
        });
  t.add("grid_sample_batches_differ", Raises::ShapeError, {"grid_sample", "[1, 3, 3, 2]"}, [&] {
    grid_sample(image(), ones({1, 3, 3, 2}));
  });
  t.add("grid_sample_volume_grid_for_image", Raises::ShapeError, {"grid_sample", "[2, 1, 3, 3, 3]"},
        [&] {
          grid_sample(image(), ones({2, 1, 3, 3, 3}));
        });
  t.add("grid_sample_dtypes_differ", Raises::DTypeError, {"grid_sample", "float32", "float64"},
        [&] {
          grid_sample(image(), ones({2, 3, 3, 2}, kFloat64));
        });
  t.add("grid_sample_integral", Raises::DTypeError, {"grid_sample", "int64"}, [] {
    grid_sample(ones({2, 3, 4, 5}, kInt64), ones({2, 3, 3, 2}, kInt64));
  });
  t.add("grid_sample_empty_plane", Raises::ShapeError, {"grid_sample", "[2, 3, 0, 5]"}, [] {
    grid_sample(ones({2, 3, 0, 5}), ones({2, 3, 3, 2}));
  });
  t.add("grid_sample_bicubic_volume", Raises::Error, {"grid_sample", "bicubic", "4-D"}, [] {
    grid_sample(ones({1, 1, 2, 2, 2}), ones({1, 1, 1, 1, 3}), kBicubic);
  });
  t.add("grid_sample_area_mode", Raises::Error, {"grid_sample", "area"}, [&] {
    grid_sample(image(), ones({2, 3, 3, 2}), kArea);
  });
  t.add("grid_sample_undefined_grid", Raises::Error, {"grid_sample", "grid"},
        [&] { grid_sample(image(), Tensor()); });
  t.add("affine_grid_theta_shape", Raises::ShapeError, {"affine_grid", "(2, 2, 3)", "[2, 3, 3]"},
        [] {
          affine_grid(ones({2, 3, 3}), {2, 1, 4, 4});
        });
  t.add("affine_grid_size_rank", Raises::ShapeError, {"affine_grid", "[2, 4, 4]"}, [] {
    affine_grid(ones({2, 2, 3}), {2, 4, 4});
  });
  t.add("affine_grid_zero_size", Raises::ShapeError, {"affine_grid", "positive", "[1, 1, 0, 4]"},
        [] {
          affine_grid(ones({1, 2, 3}), {1, 1, 0, 4});
        });
  t.add("affine_grid_integral_theta", Raises::DTypeError, {"affine_grid", "int64"}, [] {
    affine_grid(ones({1, 2, 3}, kInt64), {1, 1, 2, 2});
  });
  return t.cases();
}
LG_MISUSE_SUITE(GridSample, grid_sample_cases());

}  // namespace
}  // namespace leangrad::test
