// Scaled dot-product attention (autograd/attention.h).
#include <leangrad/autograd/attention.h>

#include <cmath>
#include <limits>

#include <leangrad/autograd/functions.h>
#include <leangrad/autograd/nn_functions.h>
#include <leangrad/autograd/nn_internal.h>
#include <leangrad/core/error.h>
#include <leangrad/core/profiler.h>
#include <leangrad/core/shape.h>
#include <leangrad/kernels/creation.h>

namespace leangrad {

// Note [Attention, composed]
// scaled_dot_product_attention is PyTorch's math path written with recorded functions:
//   scores = (q * scale) k^T        matmul: leading dims broadcast, (..., L, S)
//   scores = mask(scores)           Bool: masked_fill(-inf) where a pair may not attend;
//                                   floating: scores + mask
//   weights = softmax(scores, -1)   dropout(weights, p) when p > 0
//   out = weights v                 (..., L, Ev)
// - q is scaled before the product, as torch 1.13's multi_head_attention_forward divides q by
//   sqrt(E): the scores of 16-bit inputs then stay in range when E is large.
// - It keeps the (..., L, S) weights for backward, as PyTorch's math path: memory grows with
//   L * S per head. A fused kernel that recomputes them (flash attention) is not written.
// - A row masked out entirely is softmax of -inf everywhere: NaN, as PyTorch's math path gives
//   (its fused CUDA kernels give 0 or NaN depending on the kernel picked).
// - Under autocast the two products run in the autocast dtype and the softmax in float32, so
//   the weights are float32 and the second product casts them back (matmul's policy).
namespace {
// The weights of the (masked) scores, and the output they make of value.
std::pair<Tensor, Tensor> attend(const Tensor& scores, const Tensor& value, double dropout_p) {
  Tensor weights = softmax(scores, -1);
  if (dropout_p > 0.0) weights = dropout(weights, dropout_p, /*training=*/true);
  return {matmul(weights, value), weights};
}
}  // namespace

Tensor scaled_dot_product_attention(const Tensor& query, const Tensor& key, const Tensor& value,
                                    const Tensor& attn_mask, double dropout_p, bool is_causal,
                                    std::optional<double> scale) {
  LG_PROFILE_OP(query, key, value);
  const char* op = "scaled_dot_product_attention";
  autograd::check_floating_input(op, query);
  autograd::check_floating_input(op, key);
  autograd::check_floating_input(op, value);
  LG_CHECK_DTYPE(query.dtype() == key.dtype() && key.dtype() == value.dtype(), op,
                 ": expected query, key and value of one dtype, got ", query.dtype(), ", ",
                 key.dtype(), " and ", value.dtype());
  LG_CHECK_DEVICE(query.device() == key.device() && key.device() == value.device(), op,
                  ": expected query, key and value on one device, got ", query.device(), ", ",
                  key.device(), " and ", value.device());
  LG_CHECK_SHAPE(query.dim() >= 2 && key.dim() >= 2 && value.dim() >= 2, op,
                 ": expected query (..., L, E), key (..., S, E) and value (..., S, Ev), got ",
                 query.shape(), ", ", key.shape(), " and ", value.shape());
  const std::int64_t e = query.shape()[query.dim() - 1];
  LG_CHECK_SHAPE(key.shape()[key.dim() - 1] == e &&
                     key.shape()[key.dim() - 2] == value.shape()[value.dim() - 2],
                 op, ": expected query (..., L, E), key (..., S, E) and value (..., S, Ev), got ",
                 query.shape(), ", ", key.shape(), " and ", value.shape());
  LG_CHECK(dropout_p >= 0.0 && dropout_p < 1.0, op, ": dropout_p must be in [0, 1), got ",
           dropout_p);
  LG_CHECK(!(is_causal && attn_mask.defined()), op,
           ": is_causal and attn_mask cannot be given together (fold the causal triangle into "
           "the mask)");
  const double s =
      scale.has_value() ? *scale : (e > 0 ? 1.0 / std::sqrt(static_cast<double>(e)) : 1.0);
  LG_CHECK(std::isfinite(s), op, ": scale must be finite, got ", s);

  Tensor scores = matmul(mul(query, s), key.transpose(-2, -1));
  const std::int64_t l = scores.shape()[scores.dim() - 2];
  const std::int64_t n = scores.shape()[scores.dim() - 1];
  constexpr double kMinusInf = -std::numeric_limits<double>::infinity();
  if (is_causal) {
    // Key j is out of query i's reach where j > i.
    const TensorOptions positions = TensorOptions().dtype(kInt64).device(query.device());
    const Tensor later = gt(arange(static_cast<double>(n), positions).unsqueeze(0),
                            arange(static_cast<double>(l), positions).unsqueeze(1));
    scores = masked_fill(scores, later, kMinusInf);
  } else if (attn_mask.defined()) {
    LG_CHECK_DTYPE(attn_mask.dtype() == kBool || is_floating(attn_mask.dtype()), op,
                   ": attn_mask must be Bool (true: may attend) or floating (added to the "
                   "scores), got ",
                   attn_mask.dtype());
    LG_CHECK_DEVICE(attn_mask.device() == query.device(), op, ": attn_mask is on ",
                    attn_mask.device(), ", query on ", query.device());
    LG_CHECK_SHAPE(broadcasts_to(attn_mask.shape(), scores.shape()), op, ": attn_mask of shape ",
                   attn_mask.shape(), " does not broadcast to the scores' shape ", scores.shape(),
                   " (query ", query.shape(), ", key ", key.shape(), ")");
    scores = attn_mask.dtype() == kBool ? masked_fill(scores, eq(attn_mask, 0.0), kMinusInf)
                                        : add(scores, attn_mask);
  }
  return attend(scores, value, dropout_p).first;
}

std::pair<Tensor, Tensor> detail::attention_with_weights(const Tensor& query, const Tensor& key,
                                                         const Tensor& value,
                                                         const Tensor& additive_mask,
                                                         double dropout_p, double scale) {
  Tensor scores = matmul(mul(query, scale), key.transpose(-2, -1));
  if (additive_mask.defined()) scores = add(scores, additive_mask);
  return attend(scores, value, dropout_p);
}

}  // namespace leangrad
