// Misuse of attention (autograd/attention.h, nn/attention.h, nn/transformer.h): query, key and
// value whose shapes, dtypes or lengths do not fit, masks of the wrong shape or dtype, options
// out of range, MultiheadAttention called with one tensor, and Transformer modules with bad
// options. Tables of the misuse suite (tests/misuse/misuse_testing.h).
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
  return t.cases();
}
LG_MISUSE_SUITE(Attention, attention_cases());

}  // namespace
}  // namespace leangrad::test
