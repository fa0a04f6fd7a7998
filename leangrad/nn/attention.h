// nn::MultiheadAttention, configured and called as LibTorch's:
//   nn::MultiheadAttention attn(nn::MultiheadAttentionOptions(512, 8).dropout(0.1));
//   auto [out, weights] = attn(query, key, value);              // (L, N, E), (N, L, S)
//   auto [y, w] = attn(x, x, x, /*key_padding_mask=*/pad, /*need_weights=*/false);
// Inputs are (L, N, E) (sequence first, LibTorch's layout), (N, L, E) with batch_first(true)
// (PyTorch's Python option), or unbatched (L, E). The heads are computed by
// scaled_dot_product_attention (autograd/attention.h), so the module runs on every device and
// differentiates to any order. Parameters and their names are PyTorch's (in_proj_weight,
// in_proj_bias, out_proj.weight, out_proj.bias; q/k/v_proj_weight when kdim or vdim differ from
// embed_dim; bias_k, bias_v with add_bias_kv), so PyTorch's state dicts load. The computation is
// F::multi_head_attention_forward (below), which takes the weights as arguments.
#pragma once

#include <cstdint>
#include <string>
#include <tuple>

#include <leangrad/core/macros.h>
#include <leangrad/nn/any_module.h>
#include <leangrad/nn/linear.h>
#include <leangrad/nn/module_holder.h>

namespace leangrad::nn {

class MultiheadAttentionOptions {
 public:
  // kdim and vdim default to embed_dim, as LibTorch's.
  MultiheadAttentionOptions(std::int64_t embed_dim, std::int64_t num_heads)
      : embed_dim_(embed_dim), num_heads_(num_heads), kdim_(embed_dim), vdim_(embed_dim) {}

  LG_ARG(std::int64_t, embed_dim);
  LG_ARG(std::int64_t, num_heads);  // must divide embed_dim
  LG_ARG(double, dropout) = 0.0;    // on the attention weights, in training mode
  LG_ARG(bool, bias) = true;        // in_proj_bias and out_proj.bias
  LG_ARG(bool, add_bias_kv) = false;
  LG_ARG(bool, add_zero_attn) = false;
  LG_ARG(std::int64_t, kdim);
  LG_ARG(std::int64_t, vdim);
  LG_ARG(bool, batch_first) = false;  // PyTorch's Python option; LibTorch 1.13 has none
};

class MultiheadAttentionImpl : public Module {
 public:
  MultiheadAttentionImpl(std::int64_t embed_dim, std::int64_t num_heads);
  explicit MultiheadAttentionImpl(const MultiheadAttentionOptions& options);

  // query (L, N, E), key (S, N, kdim), value (S, N, vdim) (or batch first, or unbatched without
  // N) -> (attention output (L, N, E), weights (N, L, S), averaged over the heads unless
  // !average_attn_weights: (N, num_heads, L, S)); the weights are undefined when !need_weights.
  // The weights are those the output was made with: after dropout, as PyTorch 1.13's.
  // key_padding_mask (N, S): Bool, true for keys to ignore, or floating, added to the scores.
  // attn_mask (L, S) or (N * num_heads, L, S): Bool, true where a query may NOT attend (PyTorch's
  // convention for this module), or floating, added.
  std::tuple<Tensor, Tensor> forward(const Tensor& query, const Tensor& key, const Tensor& value,
                                     const Tensor& key_padding_mask = Tensor(),
                                     bool need_weights = true, const Tensor& attn_mask = Tensor(),
                                     bool average_attn_weights = true);
  using ForwardSignature = std::tuple<Tensor, Tensor>(const Tensor&, const Tensor&, const Tensor&,
                                                      const Tensor&, bool, const Tensor&, bool);
  LEANGRAD_FORWARD_HAS_DEFAULT_ARGS({3, AnyValue(Tensor())}, {4, AnyValue(true)},
                                    {5, AnyValue(Tensor())}, {6, AnyValue(true)})
  // The single-input form throws: attention needs query, key and value.
  using Module::forward;
  std::string extra_repr() const override;
  // PyTorch's initialisation: xavier_uniform_ for the input projections, zeros for their bias
  // and out_proj's, xavier_normal_ for bias_k and bias_v; out_proj.weight keeps Linear's.
  void reset_parameters();

  MultiheadAttentionOptions options;
  std::int64_t head_dim = 0;
  Tensor in_proj_weight;  // (3 E, E), when kdim == vdim == E
  Tensor q_proj_weight;   // (E, E), (E, kdim), (E, vdim) otherwise
  Tensor k_proj_weight;
  Tensor v_proj_weight;
  Tensor in_proj_bias;  // (3 E,), with bias
  Linear out_proj{nullptr};
  Tensor bias_k;  // (1, 1, E), with add_bias_kv
  Tensor bias_v;
};
LEANGRAD_MODULE(MultiheadAttention);

namespace functional {

// The options of F::multi_head_attention_forward, LibTorch's: the ten required values in
// LibTorch's order (out_proj_bias, in_proj_bias, bias_k and bias_v may be undefined), then the
// rest by name.
class MultiheadAttentionForwardFuncOptions {
 public:
  MultiheadAttentionForwardFuncOptions(std::int64_t embed_dim_to_check, std::int64_t num_heads,
                                       Tensor in_proj_weight, Tensor in_proj_bias, Tensor bias_k,
                                       Tensor bias_v, bool add_zero_attn, double dropout_p,
                                       Tensor out_proj_weight, Tensor out_proj_bias);
  LG_ARG(std::int64_t, embed_dim_to_check);
  LG_ARG(std::int64_t, num_heads);
  LG_ARG(Tensor, in_proj_weight);  // (3 E, E), unless use_separate_proj_weight
  LG_ARG(Tensor, in_proj_bias);    // (3 E)
  LG_ARG(Tensor, bias_k);          // (1, 1, E): a key appended to every sequence, with bias_v
  LG_ARG(Tensor, bias_v);
  LG_ARG(bool, add_zero_attn);
  LG_ARG(double, dropout_p);
  LG_ARG(Tensor, out_proj_weight);  // (E, E)
  LG_ARG(Tensor, out_proj_bias);    // (E)
  LG_ARG(bool, training) = true;    // dropout_p applies only when training
  LG_ARG(Tensor, key_padding_mask);
  LG_ARG(bool, need_weights) = true;
  LG_ARG(Tensor, attn_mask);
  LG_ARG(bool, use_separate_proj_weight) = false;
  LG_ARG(Tensor, q_proj_weight);  // (E, E), (E, kdim), (E, vdim) with use_separate_proj_weight
  LG_ARG(Tensor, k_proj_weight);
  LG_ARG(Tensor, v_proj_weight);
  // Keys and values already projected and split into heads, (N * num_heads, S, E / num_heads),
  // used in place of key's and value's projections (not with bias_k).
  LG_ARG(Tensor, static_k);
  LG_ARG(Tensor, static_v);
  LG_ARG(bool, average_attn_weights) = true;
};

// Multi-head attention from explicit weights, as torch.nn.functional.multi_head_attention_forward
// (LibTorch's F::multi_head_attention_forward): query (L, N, E) or unbatched (L, E), key
// (S, N, kdim), value (S, N, vdim) -> (output (L, N, E), weights (N, L, S) averaged over the heads
// or (N, num_heads, L, S); undefined unless need_weights). nn::MultiheadAttention's forward is
// this function on its parameters (batch_first transposed around it). The masks are the module's.
std::tuple<Tensor, Tensor> multi_head_attention_forward(
    const Tensor& query, const Tensor& key, const Tensor& value,
    const MultiheadAttentionForwardFuncOptions& options);

}  // namespace functional

}  // namespace leangrad::nn
