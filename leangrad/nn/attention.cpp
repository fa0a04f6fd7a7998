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

void check_mask(const char* op, const Tensor& mask, const char* name, const Tensor& query) {
  if (!mask.defined()) return;
  LG_CHECK_DTYPE(mask.dtype() == kBool || is_floating(mask.dtype()), op, ": ", name,
                 " must be Bool or floating, got ", mask.dtype(), " (shape ", mask.shape(), ")");
  LG_CHECK_DEVICE(mask.device() == query.device(), op, ": ", name, " is on ", mask.device(),
                  ", query on ", query.device());
}

// An optional parameter of the functional form: undefined, or of shape `want`.
void check_weight(const char* op, const Tensor& t, const char* name, const Shape& want,
                  bool required) {
  LG_CHECK(t.defined() || !required, op, ": ", name, " is required here and is undefined");
  if (!t.defined()) return;
  LG_CHECK_SHAPE(t.shape() == want, op, ": expected ", name, " of shape ", want, ", got ",
                 t.shape());
}

// F::multi_head_attention_forward's computation, `op` naming the caller in Errors: query, key and
// value (L, N, E), (S, N, kdim), (S, N, vdim), or unbatched without N.
std::tuple<Tensor, Tensor> attention_forward(
    const char* op, const Tensor& query_in, const Tensor& key_in, const Tensor& value_in,
    const functional::MultiheadAttentionForwardFuncOptions& o) {
  LG_CHECK(query_in.defined() && key_in.defined() && value_in.defined(), op,
           ": expected defined query, key and value");
  // Batched (L, N, E) or unbatched (L, E), as PyTorch 1.13's _mha_shape_check.
  const bool batched = query_in.dim() == 3;
  LG_CHECK_SHAPE((query_in.dim() == 3 || query_in.dim() == 2) && key_in.dim() == query_in.dim() &&
                     value_in.dim() == query_in.dim(),
                 op,
                 ": expected query, key and value all 3-d (batched) or all 2-d (unbatched), "
                 "got ",
                 query_in.shape(), ", ", key_in.shape(), " and ", value_in.shape());
  const auto layout = [&](const Tensor& t) { return batched ? t : t.unsqueeze(1); };
  const Tensor query = layout(query_in), key = layout(key_in), value = layout(value_in);
  const std::int64_t e = o.embed_dim_to_check(), heads = o.num_heads();
  LG_CHECK(heads > 0 && e > 0 && e % heads == 0, op, ": expected num_heads > 0 dividing ",
           "embed_dim_to_check, got num_heads ", heads, " and embed_dim_to_check ", e);
  const std::int64_t head_dim = e / heads;
  const std::int64_t l = query.shape()[0], n = query.shape()[1];
  LG_CHECK_SHAPE(query.shape()[2] == e, op, ": expected query with embed_dim_to_check = ", e,
                 " features, got ", query_in.shape());
  LG_CHECK_SHAPE(key.shape()[1] == n && value.shape()[1] == n && value.shape()[0] == key.shape()[0],
                 op, ": expected key and value of one length S and the batch of query, got query ",
                 query_in.shape(), ", key ", key_in.shape(), " and value ", value_in.shape());
  const std::int64_t kdim = key.shape()[2], vdim = value.shape()[2];
  if (o.use_separate_proj_weight()) {
    check_weight(op, o.q_proj_weight(), "q_proj_weight", {e, e}, true);
    check_weight(op, o.k_proj_weight(), "k_proj_weight", {e, kdim}, !o.static_k().defined());
    check_weight(op, o.v_proj_weight(), "v_proj_weight", {e, vdim}, !o.static_v().defined());
  } else {
    check_weight(op, o.in_proj_weight(), "in_proj_weight", {3 * e, e}, true);
    LG_CHECK_SHAPE(kdim == e && vdim == e, op, ": key and value of ", kdim, " and ", vdim,
                   " features need separate projection weights (use_separate_proj_weight); ",
                   "in_proj_weight takes ", e);
  }
  check_weight(op, o.in_proj_bias(), "in_proj_bias", {3 * e}, false);
  LG_CHECK(o.bias_k().defined() == o.bias_v().defined(), op,
           ": expected bias_k and bias_v both or neither");
  LG_CHECK(!o.bias_k().defined() || (!o.static_k().defined() && !o.static_v().defined()), op,
           ": bias_k and bias_v cannot be added to static_k and static_v");
  check_weight(op, o.bias_k(), "bias_k", {1, 1, e}, false);
  check_weight(op, o.bias_v(), "bias_v", {1, 1, e}, false);
  check_weight(op, o.out_proj_weight(), "out_proj_weight", {e, e}, true);
  check_weight(op, o.out_proj_bias(), "out_proj_bias", {e}, false);
  for (const auto& [t, name] : {std::pair{o.static_k(), "static_k"}, {o.static_v(), "static_v"}}) {
    if (!t.defined()) continue;
    LG_CHECK_SHAPE(t.dim() == 3 && t.shape()[0] == n * heads && t.shape()[2] == head_dim, op,
                   ": expected ", name, " of shape (N * num_heads, S, head_dim) = (", n * heads,
                   ", S, ", head_dim, "), got ", t.shape());
  }
  LG_CHECK(o.dropout_p() >= 0.0 && o.dropout_p() < 1.0, op, ": dropout_p must be in [0, 1), got ",
           o.dropout_p());
  check_mask(op, o.key_padding_mask(), "key_padding_mask", query);
  check_mask(op, o.attn_mask(), "attn_mask", query);

  // The masks' key length: the keys' given (static_k's, or key's), before bias_k and
  // add_zero_attn append theirs.
  const std::int64_t s_masks = o.static_k().defined() ? o.static_k().shape()[1] : key.shape()[0];
  Tensor key_padding_mask = o.key_padding_mask(), attn_mask = o.attn_mask();
  if (key_padding_mask.defined()) {
    const Shape want = batched ? Shape{n, s_masks} : Shape{s_masks};
    LG_CHECK_SHAPE(o.key_padding_mask().shape() == want, op,
                   ": expected key_padding_mask of shape ", want, " (", batched ? "N, S" : "S",
                   "), got ", o.key_padding_mask().shape());
    if (!batched) key_padding_mask = key_padding_mask.unsqueeze(0);
  }
  if (attn_mask.defined()) {
    const Shape two_d{l, s_masks};
    const Shape three_d{batched ? n * heads : heads, l, s_masks};
    LG_CHECK_SHAPE(o.attn_mask().shape() == two_d || o.attn_mask().shape() == three_d, op,
                   ": expected attn_mask of shape ", two_d, " or ", three_d,
                   batched ? " (N * num_heads, L, S)" : " (num_heads, L, S)", ", got ",
                   o.attn_mask().shape());
    if (attn_mask.dim() == 2) attn_mask = attn_mask.unsqueeze(0);
  }

  // Input projections: rows [0, E), [E, 2E), [2E, 3E) of in_proj_weight and its bias, or the
  // separate weights; a static key or value replaces its projection.
  const auto bias_of = [&](std::int64_t i) {
    return o.in_proj_bias().defined() ? o.in_proj_bias().slice(0, i * e, (i + 1) * e) : Tensor();
  };
  const auto weight_of = [&](std::int64_t i, const Tensor& separate) {
    return o.use_separate_proj_weight() ? separate
                                        : o.in_proj_weight().slice(0, i * e, (i + 1) * e);
  };
  // (len, N, E) -> (N * heads, len, head_dim): head h of sample b is row b * heads + h.
  const auto split_heads = [&](const Tensor& t) {
    return t.reshape({t.shape()[0], n * heads, head_dim}).transpose(0, 1);
  };
  Tensor q = linear(query, weight_of(0, o.q_proj_weight()), bias_of(0));
  Tensor k =
      o.static_k().defined() ? Tensor() : linear(key, weight_of(1, o.k_proj_weight()), bias_of(1));
  Tensor v = o.static_v().defined() ? Tensor()
                                    : linear(value, weight_of(2, o.v_proj_weight()), bias_of(2));
  if (o.bias_k().defined()) {
    k = cat({k, o.bias_k().expand({1, n, e})}, 0);
    v = cat({v, o.bias_v().expand({1, n, e})}, 0);
    attn_mask = pad_key(attn_mask);
    key_padding_mask = pad_key(key_padding_mask);
  }
  q = split_heads(q);
  k = o.static_k().defined() ? o.static_k() : split_heads(k);
  v = o.static_v().defined() ? o.static_v() : split_heads(v);
  LG_CHECK_SHAPE(k.shape()[1] == v.shape()[1], op, ": expected keys and values of one length, got ",
                 k.shape()[1], " keys and ", v.shape()[1], " values (static_k ",
                 o.static_k().defined() ? "given" : "not given", ", static_v ",
                 o.static_v().defined() ? "given" : "not given", ")");
  if (o.add_zero_attn()) {
    const Tensor zero = zeros({n * heads, 1, head_dim}, k.options());
    k = cat({k, zero}, 1);
    v = cat({v, zero}, 1);
    attn_mask = pad_key(attn_mask);
    key_padding_mask = pad_key(key_padding_mask);
  }
  const std::int64_t s = k.shape()[1];

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
  const double dropout_p = o.training() ? o.dropout_p() : 0.0;
  const double scale = 1.0 / std::sqrt(static_cast<double>(head_dim));
  // Without weights to return, scaled_dot_product_attention may take the fused kernel, which
  // keeps no (L, S) weights for backward (PyTorch's need_weights=False path); it drops the same
  // weights the composed path would.
  Tensor heads_out, weights;
  if (!o.need_weights()) {
    heads_out = scaled_dot_product_attention(q, k, v, mask, dropout_p, false, scale);
  } else {
    std::tie(heads_out, weights) = detail::attention_with_weights(q, k, v, mask, dropout_p, scale);
  }

  // (N * heads, L, head_dim) -> (L, N, E), then the output projection.
  Tensor out =
      linear(heads_out.transpose(0, 1).reshape({l, n, e}), o.out_proj_weight(), o.out_proj_bias());
  if (!batched) out = out.squeeze(1);
  if (!o.need_weights()) return {out, Tensor()};
  weights = weights.reshape({n, heads, l, s});
  if (o.average_attn_weights()) weights = div(sum(weights, {1}), static_cast<double>(heads));
  if (!batched) weights = weights.squeeze(0);
  return {out, weights};
}

}  // namespace

std::tuple<Tensor, Tensor> MultiheadAttentionImpl::forward(
    const Tensor& query_in, const Tensor& key_in, const Tensor& value_in,
    const Tensor& key_padding_mask, bool need_weights, const Tensor& attn_mask,
    bool average_attn_weights) {
  LG_PROFILE_OP(query_in, key_in, value_in);
  const std::int64_t e = options.embed_dim();
  LG_CHECK(query_in.defined() && key_in.defined() && value_in.defined(), kOp,
           ": expected defined query, key and value");
  const bool batched = query_in.dim() == 3;
  LG_CHECK_SHAPE((query_in.dim() == 3 || query_in.dim() == 2) && key_in.dim() == query_in.dim() &&
                     value_in.dim() == query_in.dim(),
                 kOp,
                 ": expected query, key and value all 3-d (batched) or all 2-d (unbatched), "
                 "got ",
                 query_in.shape(), ", ", key_in.shape(), " and ", value_in.shape());
  // The functional form's (L, N, E) layout; its Errors would name the transposed shapes, so the
  // module checks what depends on batch_first and on its own options first.
  const bool transposed = batched && options.batch_first();
  const auto layout = [&](const Tensor& t) { return transposed ? t.transpose(0, 1) : t; };
  const Tensor query = layout(query_in), key = layout(key_in), value = layout(value_in);
  LG_CHECK_SHAPE(query.shape().back() == e && key.shape().back() == options.kdim() &&
                     value.shape().back() == options.vdim(),
                 kOp, ": expected query, key and value with ", e, ", ", options.kdim(), " and ",
                 options.vdim(), " features (embed_dim, kdim, vdim), got ", query_in.shape(), ", ",
                 key_in.shape(), " and ", value_in.shape());
  LG_CHECK_SHAPE(
      (!batched || (key.shape()[1] == query.shape()[1] && value.shape()[1] == query.shape()[1])) &&
          value.shape()[0] == key.shape()[0],
      kOp, ": expected key and value of one length S and the batch of query, got query ",
      query_in.shape(), ", key ", key_in.shape(), " and value ", value_in.shape(),
      options.batch_first() ? " (batch_first)" : "");
  auto [out, weights] = attention_forward(
      kOp, query, key, value,
      functional::MultiheadAttentionForwardFuncOptions(
          e, options.num_heads(), in_proj_weight, in_proj_bias, bias_k, bias_v,
          options.add_zero_attn(), options.dropout(), out_proj->weight, out_proj->bias)
          .training(is_training())
          .key_padding_mask(key_padding_mask)
          .need_weights(need_weights)
          .attn_mask(attn_mask)
          .use_separate_proj_weight(!in_proj_weight.defined())
          .q_proj_weight(q_proj_weight)
          .k_proj_weight(k_proj_weight)
          .v_proj_weight(v_proj_weight)
          .average_attn_weights(average_attn_weights));
  if (transposed) out = out.transpose(0, 1);
  return {out, weights};
}

namespace functional {

MultiheadAttentionForwardFuncOptions::MultiheadAttentionForwardFuncOptions(
    std::int64_t embed_dim_to_check, std::int64_t num_heads, Tensor in_proj_weight,
    Tensor in_proj_bias, Tensor bias_k, Tensor bias_v, bool add_zero_attn, double dropout_p,
    Tensor out_proj_weight, Tensor out_proj_bias)
    : embed_dim_to_check_(embed_dim_to_check),
      num_heads_(num_heads),
      in_proj_weight_(std::move(in_proj_weight)),
      in_proj_bias_(std::move(in_proj_bias)),
      bias_k_(std::move(bias_k)),
      bias_v_(std::move(bias_v)),
      add_zero_attn_(add_zero_attn),
      dropout_p_(dropout_p),
      out_proj_weight_(std::move(out_proj_weight)),
      out_proj_bias_(std::move(out_proj_bias)) {}

std::tuple<Tensor, Tensor> multi_head_attention_forward(
    const Tensor& query, const Tensor& key, const Tensor& value,
    const MultiheadAttentionForwardFuncOptions& options) {
  LG_PROFILE_OP(query, key, value);
  return attention_forward("multi_head_attention_forward", query, key, value, options);
}

}  // namespace functional

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
