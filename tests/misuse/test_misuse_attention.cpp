// Misuse of attention (autograd/attention.h, nn/attention.h, nn/transformer.h): query, key and
// value whose shapes, dtypes or lengths do not fit, masks of the wrong shape or dtype, options
// out of range, MultiheadAttention called with one tensor, and Transformer modules with bad
// options, and F::multi_head_attention_forward's weights, static keys and values. Tables of the
// misuse suite (tests/misuse/misuse_testing.h).
#include <limits>
#include <vector>

#include <leangrad/autograd/attention.h>
#include <leangrad/core/creation.h>
#include <leangrad/kernels/creation.h>
#include <leangrad/nn/attention.h>
#include <leangrad/nn/transformer.h>
#include "misuse/misuse_testing.h"

namespace leangrad::test {
namespace {

// (B, L, E), (B, S, E), (B, S, Ev)
Tensor query() {
  return ones({2, 3, 4});
}
Tensor key() {
  return ones({2, 5, 4});
}
Tensor value() {
  return ones({2, 5, 6});
}

std::vector<MisuseCase> attention_cases() {
  MisuseTable t;
  t.add("sdpa_key_features_differ", Raises::ShapeError,
        {"scaled_dot_product_attention", "[2, 3, 4]", "[2, 5, 3]", "[2, 5, 6]"}, [] {
          scaled_dot_product_attention(query(), ones({2, 5, 3}), value());
        });
  t.add("sdpa_key_and_value_lengths_differ", Raises::ShapeError,
        {"scaled_dot_product_attention", "[2, 5, 4]", "[2, 4, 6]"}, [] {
          scaled_dot_product_attention(query(), key(), ones({2, 4, 6}));
        });
  t.add("sdpa_vector_query", Raises::ShapeError, {"scaled_dot_product_attention", "[4]"},
        [] { scaled_dot_product_attention(ones({4}), key(), value()); });
  t.add("sdpa_mask_does_not_broadcast", Raises::ShapeError,
        {"scaled_dot_product_attention", "attn_mask of shape [3, 4]", "[2, 3, 5]"}, [] {
          scaled_dot_product_attention(query(), key(), value(), ones({3, 4}));
        });
  t.add("sdpa_causal_and_mask", Raises::Error,
        {"scaled_dot_product_attention", "is_causal and attn_mask"}, [] {
          scaled_dot_product_attention(query(), key(), value(), ones({3, 5}), 0.0, true);
        });
  t.add("sdpa_dtypes_differ", Raises::DTypeError,
        {"scaled_dot_product_attention", "float32, float64 and float32"},
        [] { scaled_dot_product_attention(query(), key().to(kFloat64), value()); });
  t.add("sdpa_integral_query", Raises::DTypeError, {"scaled_dot_product_attention", "int64"}, [] {
    scaled_dot_product_attention(ones({2, 3, 4}, kInt64), key(), value());
  });
  t.add("sdpa_integral_mask", Raises::DTypeError,
        {"scaled_dot_product_attention", "attn_mask must be Bool", "int64"}, [] {
          scaled_dot_product_attention(query(), key(), value(), ones({3, 5}, kInt64));
        });
  t.add("sdpa_dropout_one", Raises::Error,
        {"scaled_dot_product_attention", "dropout_p must be in [0, 1), got 1"},
        [] { scaled_dot_product_attention(query(), key(), value(), Tensor(), 1.0); });
  t.add("sdpa_infinite_scale", Raises::Error,
        {"scaled_dot_product_attention", "scale must be finite"}, [] {
          scaled_dot_product_attention(query(), key(), value(), Tensor(), 0.0, false,
                                       std::numeric_limits<double>::infinity());
        });
  t.add("sdpa_undefined_value", Raises::Error, {"scaled_dot_product_attention", "undefined"},
        [] { scaled_dot_product_attention(query(), key(), Tensor()); });

  t.add("mha_heads_do_not_divide", Raises::Error,
        {"MultiheadAttention", "embed_dim 10 is not a multiple of num_heads 3"},
        [] { nn::MultiheadAttention(10, 3); });
  t.add("mha_zero_heads", Raises::Error, {"MultiheadAttention", "positive embed_dim"},
        [] { nn::MultiheadAttention(8, 0); });
  t.add("mha_dropout_one", Raises::Error, {"MultiheadAttention", "dropout must be in [0, 1)"},
        [] { nn::MultiheadAttention(nn::MultiheadAttentionOptions(8, 2).dropout(1.0)); });
  t.add("mha_key_and_value_lengths_differ", Raises::ShapeError,
        {"MultiheadAttention", "one length S", "[3, 2, 4]", "[5, 2, 4]", "[6, 2, 4]"}, [] {
          nn::MultiheadAttention(4, 2)(ones({3, 2, 4}), ones({5, 2, 4}), ones({6, 2, 4}));
        });
  t.add("mha_ranks_differ", Raises::ShapeError,
        {"MultiheadAttention", "all 3-d (batched) or all 2-d (unbatched)", "[3, 4]"}, [] {
          nn::MultiheadAttention(4, 2)(ones({3, 2, 4}), ones({3, 2, 4}), ones({3, 4}));
        });
  t.add("mha_wrong_embed_dim", Raises::ShapeError,
        {"MultiheadAttention", "with 4, 4 and 4 features", "[3, 2, 5]"}, [] {
          nn::MultiheadAttention(4, 2)(ones({3, 2, 5}), ones({3, 2, 4}), ones({3, 2, 4}));
        });
  t.add("mha_padding_mask_shape", Raises::ShapeError,
        {"MultiheadAttention", "key_padding_mask of shape [2, 3] (N, S), got [3, 2]"}, [] {
          const Tensor x = ones({3, 2, 4});
          nn::MultiheadAttention(4, 2)(x, x, x, ones({3, 2}));
        });
  t.add("mha_attn_mask_shape", Raises::ShapeError,
        {"MultiheadAttention", "attn_mask of shape [3, 3] or [4, 3, 3]", "[2, 3, 3]"}, [] {
          const Tensor x = ones({3, 2, 4});
          nn::MultiheadAttention(4, 2)(x, x, x, Tensor(), true, ones({2, 3, 3}));
        });
  t.add("mha_integral_padding_mask", Raises::DTypeError,
        {"MultiheadAttention", "key_padding_mask must be Bool or floating, got int64"}, [] {
          const Tensor x = ones({3, 2, 4});
          nn::MultiheadAttention(4, 2)(x, x, x, ones({2, 3}, kInt64));
        });
  t.add("mha_one_tensor", Raises::Error, {"MultiheadAttention"}, [] {
    nn::MultiheadAttention(4, 2)->forward(ones({3, 2, 4}));
  });

  t.add("transformer_unknown_activation", Raises::Error,
        {"TransformerEncoderLayer", "activation \"tanh\" is not one of \"relu\" and \"gelu\""},
        [] { nn::TransformerEncoderLayerOptions(8, 2).activation("tanh"); });
  t.add("transformer_activation_not_relu", Raises::Error,
        {"TransformerEncoderLayer", "the activation is kReLU"},
        [] { nn::TransformerEncoderLayerOptions(8, 2).activation(kTanh); });
  t.add("transformer_heads_do_not_divide", Raises::Error,
        {"MultiheadAttention", "embed_dim 8 is not a multiple of num_heads 3"},
        [] { nn::TransformerEncoderLayer(8, 3); });
  t.add("transformer_no_feedforward", Raises::Error,
        {"TransformerEncoderLayer", "dim_feedforward must be positive, got 0"}, [] {
          nn::TransformerEncoderLayer(nn::TransformerEncoderLayerOptions(8, 2).dim_feedforward(0));
        });
  t.add("transformer_no_layers", Raises::Error,
        {"TransformerEncoder", "num_layers must be at least 1, got 0"},
        [] { nn::TransformerEncoder(nn::TransformerEncoderLayer(8, 2), 0); });
  t.add("transformer_empty_layer", Raises::Error,
        {"TransformerEncoder", "the layer to copy is empty"},
        [] { nn::TransformerEncoder(nn::TransformerEncoderLayer(nullptr), 2); });
  t.add("decoder_layer_one_tensor", Raises::Error, {"TransformerDecoderLayer"}, [] {
    nn::TransformerDecoderLayer(8, 2)->forward(ones({3, 2, 8}));
  });
  t.add("decoder_no_layers", Raises::Error,
        {"TransformerDecoder", "num_layers must be at least 1, got 0"},
        [] { nn::TransformerDecoder(nn::TransformerDecoderLayer(8, 2), 0); });
  t.add("transformer_batches_differ", Raises::ShapeError,
        {"Transformer", "one batch size", "[4, 2, 8]", "[3, 5, 8]"}, [] {
          nn::Transformer(nn::TransformerOptions(8, 2, 1, 1).dim_feedforward(16))(ones({4, 2, 8}),
                                                                                  ones({3, 5, 8}));
        });
  t.add("transformer_wrong_features", Raises::ShapeError,
        {"Transformer", "d_model = 8 features", "[4, 2, 6]"}, [] {
          nn::Transformer(nn::TransformerOptions(8, 2, 1, 1).dim_feedforward(16))(ones({4, 2, 6}),
                                                                                  ones({3, 2, 6}));
        });
  t.add("transformer_negative_mask_size", Raises::Error,
        {"generate_square_subsequent_mask", "sz must be >= 0, got -1"},
        [] { nn::TransformerImpl::generate_square_subsequent_mask(-1); });
  // F::multi_head_attention_forward with E = 4, 2 heads, (L, N, E) = (3, 2, 4), S = 5: each
  // row changes one thing from a call that works (mha_options below).
  const auto mha = [](const nn::functional::MultiheadAttentionForwardFuncOptions& o,
                      const Tensor& k = ones({5, 2, 4}), const Tensor& v = ones({5, 2, 4})) {
    nn::functional::multi_head_attention_forward(ones({3, 2, 4}), k, v, o);
  };
  const auto mha_options = [] {
    return nn::functional::MultiheadAttentionForwardFuncOptions(
        4, 2, ones({12, 4}), zeros({12}), Tensor(), Tensor(), false, 0.0, ones({4, 4}), zeros({4}));
  };
  t.add("mha_forward_embed_dim_to_check", Raises::ShapeError,
        {"multi_head_attention_forward", "embed_dim_to_check = 6", "[3, 2, 4]"}, [=] {
          mha(mha_options().embed_dim_to_check(6).in_proj_weight(ones({18, 6})));
        });
  t.add("mha_forward_heads_do_not_divide", Raises::Error,
        {"multi_head_attention_forward", "num_heads 3", "embed_dim_to_check 4"},
        [=] { mha(mha_options().num_heads(3)); });
  t.add("mha_forward_no_in_proj_weight", Raises::Error,
        {"multi_head_attention_forward", "in_proj_weight is required"},
        [=] { mha(mha_options().in_proj_weight(Tensor())); });
  t.add("mha_forward_in_proj_weight_shape", Raises::ShapeError,
        {"multi_head_attention_forward", "in_proj_weight of shape [12, 4]", "[4, 4]"}, [=] {
          mha(mha_options().in_proj_weight(ones({4, 4})));
        });
  t.add("mha_forward_kdim_needs_separate_weights", Raises::ShapeError,
        {"multi_head_attention_forward", "use_separate_proj_weight", "3 and 4 features"}, [=] {
          mha(mha_options(), ones({5, 2, 3}));
        });
  t.add("mha_forward_separate_weight_missing", Raises::Error,
        {"multi_head_attention_forward", "k_proj_weight is required"}, [=] {
          mha(mha_options()
                  .use_separate_proj_weight(true)
                  .q_proj_weight(ones({4, 4}))
                  .v_proj_weight(ones({4, 4})));
        });
  t.add("mha_forward_bias_k_without_bias_v", Raises::Error,
        {"multi_head_attention_forward", "bias_k and bias_v both or neither"}, [=] {
          mha(mha_options().bias_k(zeros({1, 1, 4})));
        });
  t.add("mha_forward_bias_k_with_static_k", Raises::Error,
        {"multi_head_attention_forward", "cannot be added to static_k"}, [=] {
          mha(mha_options()
                  .bias_k(zeros({1, 1, 4}))
                  .bias_v(zeros({1, 1, 4}))
                  .static_k(ones({4, 5, 2})));
        });
  t.add("mha_forward_static_k_shape", Raises::ShapeError,
        {"multi_head_attention_forward", "static_k", "(4, S, 2)", "[2, 5, 2]"}, [=] {
          mha(mha_options().static_k(ones({2, 5, 2})));
        });
  t.add("mha_forward_static_k_length", Raises::ShapeError,
        {"multi_head_attention_forward", "one length", "7 keys and 5 values"}, [=] {
          mha(mha_options().static_k(ones({4, 7, 2})));
        });
  t.add("mha_forward_dropout_one", Raises::Error,
        {"multi_head_attention_forward", "dropout_p must be in [0, 1)", "got 1"},
        [=] { mha(mha_options().dropout_p(1.0)); });
  t.add("mha_forward_no_out_proj_weight", Raises::Error,
        {"multi_head_attention_forward", "out_proj_weight is required"},
        [=] { mha(mha_options().out_proj_weight(Tensor())); });
  t.add("mha_forward_padding_mask_length", Raises::ShapeError,
        {"multi_head_attention_forward", "key_padding_mask of shape [2, 5]", "[2, 4]"}, [=] {
          mha(mha_options().key_padding_mask(zeros({2, 4}, kBool)));
        });
  return t.cases();
}
LG_MISUSE_SUITE(Attention, attention_cases());

}  // namespace
}  // namespace leangrad::test
