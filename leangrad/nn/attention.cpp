// nn::MultiheadAttention (nn/attention.h).
#include <leangrad/nn/attention.h>

#include <cmath>
#include <limits>
#include <sstream>
#include <tuple>

#include <leangrad/autograd/attention.h>
#include <leangrad/autograd/functions.h>
#include <leangrad/autograd/grad_mode.h>
#include <leangrad/autograd/nn_functions.h>
#include <leangrad/core/creation.h>
#include <leangrad/core/error.h>
#include <leangrad/core/profiler.h>
#include <leangrad/kernels/creation.h>
#include <leangrad/nn/init.h>

namespace leangrad::nn {

MultiheadAttentionImpl::MultiheadAttentionImpl(std::int64_t embed_dim, std::int64_t num_heads)
    : MultiheadAttentionImpl(MultiheadAttentionOptions(embed_dim, num_heads)) {}

MultiheadAttentionImpl::MultiheadAttentionImpl(const MultiheadAttentionOptions& opts)
    : Module("MultiheadAttention"), options(opts) {
  const std::int64_t e = opts.embed_dim();
  LG_CHECK(e > 0 && opts.num_heads() > 0, "MultiheadAttention: expected a positive embed_dim and ",
           "num_heads, got ", e, " and ", opts.num_heads());
  LG_CHECK(e % opts.num_heads() == 0, "MultiheadAttention: embed_dim ", e,
           " is not a multiple of num_heads ", opts.num_heads());
  LG_CHECK(opts.kdim() > 0 && opts.vdim() > 0, "MultiheadAttention: expected positive kdim and ",
           "vdim, got ", opts.kdim(), " and ", opts.vdim());
  LG_CHECK(opts.dropout() >= 0.0 && opts.dropout() < 1.0,
           "MultiheadAttention: dropout must be in [0, 1), got ", opts.dropout());
  head_dim = e / opts.num_heads();
  // PyTorch's registration order, so parameters() lists them as named_parameters() does.
  if (opts.kdim() == e && opts.vdim() == e) {
    in_proj_weight = register_parameter("in_proj_weight", empty({3 * e, e}));
  } else {
    q_proj_weight = register_parameter("q_proj_weight", empty({e, e}));
    k_proj_weight = register_parameter("k_proj_weight", empty({e, opts.kdim()}));
    v_proj_weight = register_parameter("v_proj_weight", empty({e, opts.vdim()}));
  }
  if (opts.bias()) in_proj_bias = register_parameter("in_proj_bias", empty({3 * e}));
  if (opts.add_bias_kv()) {
    bias_k = register_parameter("bias_k", empty({1, 1, e}));
    bias_v = register_parameter("bias_v", empty({1, 1, e}));
  }
  out_proj = register_module("out_proj", Linear(LinearOptions(e, e).bias(opts.bias())));
  reset_parameters();
}

void MultiheadAttentionImpl::reset_parameters() {
  NoGradGuard no_grad;
  if (in_proj_weight.defined()) {
    init::xavier_uniform_(in_proj_weight);
  } else {
    init::xavier_uniform_(q_proj_weight);
    init::xavier_uniform_(k_proj_weight);
    init::xavier_uniform_(v_proj_weight);
  }
  if (in_proj_bias.defined()) {
    init::constant_(in_proj_bias, 0.0);
    init::constant_(out_proj->bias, 0.0);
  }
  if (bias_k.defined()) {
    init::xavier_normal_(bias_k);
    init::xavier_normal_(bias_v);
  }
}

namespace {

constexpr const char* kOp = "MultiheadAttention";

// A key padding or attention mask as scores to add: Bool true -> -inf (the pair is left out),
// floating as given. PyTorch 1.13 turns its merged mask into this form too.
Tensor additive(const Tensor& mask, DType dtype) {
  if (mask.dtype() != kBool) return mask;
  return masked_fill(zeros(mask.shape(), TensorOptions().dtype(dtype).device(mask.device())), mask,
                     -std::numeric_limits<double>::infinity());
}

// One zero column appended to the last dim of a mask (the key that add_bias_kv or add_zero_attn
// appends is not masked), as PyTorch's pad(mask, (0, 1)).
Tensor pad_key(const Tensor& mask) {
  if (!mask.defined()) return mask;
  Shape shape = mask.shape();
  shape.back() = 1;
  return cat({mask, zeros(shape, mask.options())}, -1);
}

void check_mask(const Tensor& mask, const char* name, const Tensor& query) {
  if (!mask.defined()) return;
  LG_CHECK_DTYPE(mask.dtype() == kBool || is_floating(mask.dtype()), kOp, ": ", name,
                 " must be Bool or floating, got ", mask.dtype(), " (shape ", mask.shape(), ")");
  LG_CHECK_DEVICE(mask.device() == query.device(), kOp, ": ", name, " is on ", mask.device(),
                  ", query on ", query.device());
}

}  // namespace

std::tuple<Tensor, Tensor> MultiheadAttentionImpl::forward(
    const Tensor& query_in, const Tensor& key_in, const Tensor& value_in,
    const Tensor& key_padding_mask_in, bool need_weights, const Tensor& attn_mask_in,
    bool average_attn_weights) {
  LG_PROFILE_OP(query_in, key_in, value_in);
  const std::int64_t e = options.embed_dim();
  const std::int64_t heads = options.num_heads();
  LG_CHECK(query_in.defined() && key_in.defined() && value_in.defined(), kOp,
           ": expected defined query, key and value");
  // Batched (L, N, E) or unbatched (L, E), as PyTorch 1.13's _mha_shape_check.
  const bool batched = query_in.dim() == 3;
  LG_CHECK_SHAPE((query_in.dim() == 3 || query_in.dim() == 2) && key_in.dim() == query_in.dim() &&
                     value_in.dim() == query_in.dim(),
                 kOp,
                 ": expected query, key and value all 3-d (batched) or all 2-d (unbatched), "
                 "got ",
                 query_in.shape(), ", ", key_in.shape(), " and ", value_in.shape());
  // The (L, N, E) layout inside, as PyTorch's.
  auto layout = [&](const Tensor& t) {
    if (!batched) return t.unsqueeze(1);
    return options.batch_first() ? t.transpose(0, 1) : t;
  };
  const Tensor query = layout(query_in), key = layout(key_in), value = layout(value_in);
  const std::int64_t l = query.shape()[0], n = query.shape()[1];
  std::int64_t s = key.shape()[0];
  LG_CHECK_SHAPE(query.shape()[2] == e && key.shape()[2] == options.kdim() &&
                     value.shape()[2] == options.vdim(),
                 kOp, ": expected query, key and value with ", e, ", ", options.kdim(), " and ",
                 options.vdim(), " features (embed_dim, kdim, vdim), got ", query_in.shape(), ", ",
                 key_in.shape(), " and ", value_in.shape());
  LG_CHECK_SHAPE(key.shape()[1] == n && value.shape()[1] == n && value.shape()[0] == s, kOp,
                 ": expected key and value of one length S and the batch of query, got query ",
                 query_in.shape(), ", key ", key_in.shape(), " and value ", value_in.shape(),
                 options.batch_first() ? " (batch_first)" : "");
  check_mask(key_padding_mask_in, "key_padding_mask", query);
  check_mask(attn_mask_in, "attn_mask", query);

  // Masks in the batched layout: key_padding_mask (N, S), attn_mask (1 or N * heads, L, S).
  Tensor key_padding_mask = key_padding_mask_in;
  if (key_padding_mask.defined()) {
    const Shape want = batched ? Shape{n, s} : Shape{s};
    LG_CHECK_SHAPE(key_padding_mask.shape() == want, kOp, ": expected key_padding_mask of shape ",
                   want, " (", batched ? "N, S" : "S", "), got ", key_padding_mask.shape());
    if (!batched) key_padding_mask = key_padding_mask.unsqueeze(0);
  }
  Tensor attn_mask = attn_mask_in;
  if (attn_mask.defined()) {
    const Shape two_d{l, s};
    const Shape three_d{batched ? n * heads : heads, l, s};
    LG_CHECK_SHAPE(attn_mask.shape() == two_d || attn_mask.shape() == three_d, kOp,
                   ": expected attn_mask of shape ", two_d, " or ", three_d,
                   batched ? " (N * num_heads, L, S)" : " (num_heads, L, S)", ", got ",
                   attn_mask.shape());
    if (attn_mask.dim() == 2) attn_mask = attn_mask.unsqueeze(0);
  }

  // Input projections: one (3E, E) matrix, or three when kdim or vdim differ.
  Tensor q, k, v;
  const auto bias_of = [&](std::int64_t i) {
    return in_proj_bias.defined() ? in_proj_bias.slice(0, i * e, (i + 1) * e) : Tensor();
  };
  if (in_proj_weight.defined()) {
    q = linear(query, in_proj_weight.slice(0, 0, e), bias_of(0));
    k = linear(key, in_proj_weight.slice(0, e, 2 * e), bias_of(1));
    v = linear(value, in_proj_weight.slice(0, 2 * e, 3 * e), bias_of(2));
  } else {
    q = linear(query, q_proj_weight, bias_of(0));
    k = linear(key, k_proj_weight, bias_of(1));
    v = linear(value, v_proj_weight, bias_of(2));
  }
  if (bias_k.defined()) {
    k = cat({k, bias_k.expand({1, n, e})}, 0);
    v = cat({v, bias_v.expand({1, n, e})}, 0);
    attn_mask = pad_key(attn_mask);
    key_padding_mask = pad_key(key_padding_mask);
  }
  // (len, N, E) -> (N * heads, len, head_dim): head h of sample b is row b * heads + h.
  const auto split_heads = [&](const Tensor& t) {
    return t.reshape({t.shape()[0], n * heads, head_dim}).transpose(0, 1);
  };
  q = split_heads(q);
  k = split_heads(k);
  v = split_heads(v);
  if (options.add_zero_attn()) {
    const Tensor zero = zeros({n * heads, 1, head_dim}, k.options());
    k = cat({k, zero}, 1);
    v = cat({v, zero}, 1);
    attn_mask = pad_key(attn_mask);
    key_padding_mask = pad_key(key_padding_mask);
  }
  s = k.shape()[1];

  // One additive mask of (N * heads or 1, L or 1, S).
  Tensor mask;
  if (attn_mask.defined()) mask = additive(attn_mask, q.dtype());
  if (key_padding_mask.defined()) {
    const Tensor padding = additive(key_padding_mask, q.dtype())
                               .reshape({n, 1, 1, s})
                               .expand({n, heads, 1, s})
                               .reshape({n * heads, 1, s});
    mask = mask.defined() ? add(mask, padding) : padding;
  }
  const double dropout_p = is_training() ? options.dropout() : 0.0;
  const double scale = 1.0 / std::sqrt(static_cast<double>(head_dim));
  // Without weights to return, scaled_dot_product_attention may take the fused kernel, which
  // keeps no (L, S) weights for backward (PyTorch's need_weights=False path); it drops the same
  // weights the composed path would.
  Tensor heads_out, weights;
  if (!need_weights) {
    heads_out = scaled_dot_product_attention(q, k, v, mask, dropout_p, false, scale);
  } else {
    std::tie(heads_out, weights) = detail::attention_with_weights(q, k, v, mask, dropout_p, scale);
  }

  // (N * heads, L, head_dim) -> (L, N, E), then the output projection.
  Tensor out = out_proj->forward(heads_out.transpose(0, 1).reshape({l, n, e}));
  if (!batched) {
    out = out.squeeze(1);
  } else if (options.batch_first()) {
    out = out.transpose(0, 1);
  }
  if (!need_weights) return {out, Tensor()};
  weights = weights.reshape({n, heads, l, s});
  if (average_attn_weights) weights = div(sum(weights, {1}), static_cast<double>(heads));
  if (!batched) weights = weights.squeeze(0);
  return {out, weights};
}

std::string MultiheadAttentionImpl::extra_repr() const {
  std::ostringstream out;
  out << "embed_dim=" << options.embed_dim() << ", num_heads=" << options.num_heads()
      << ", dropout=" << options.dropout() << ", bias=" << (options.bias() ? "true" : "false");
  if (options.kdim() != options.embed_dim() || options.vdim() != options.embed_dim())
    out << ", kdim=" << options.kdim() << ", vdim=" << options.vdim();
  if (options.add_bias_kv()) out << ", add_bias_kv=true";
  if (options.add_zero_attn()) out << ", add_zero_attn=true";
  if (options.batch_first()) out << ", batch_first=true";
  return out.str();
}

}  // namespace leangrad::nn
