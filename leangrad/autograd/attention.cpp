// Scaled dot-product attention (autograd/attention.h).
#include <leangrad/autograd/attention.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include <leangrad/autograd/autocast.h>
#include <leangrad/autograd/engine.h>
#include <leangrad/autograd/functions.h>
#include <leangrad/autograd/graph.h>
#include <leangrad/autograd/nn_functions.h>
#include <leangrad/autograd/nn_internal.h>
#include <leangrad/core/error.h>
#include <leangrad/core/generator.h>
#include <leangrad/core/profiler.h>
#include <leangrad/core/shape.h>
#include <leangrad/kernels/creation.h>
#include <leangrad/kernels/ops.h>

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
//   L * S per head. The fused CPU kernel (SDPBackend::FlashAttention, Note [Fused attention] in
//   kernels/cpu/attention.cpp) keeps one logsumexp per row instead, where it applies.
// - A row masked out entirely is softmax of -inf everywhere: NaN, as PyTorch's math path gives
//   (its fused CUDA kernels give 0 or NaN depending on the kernel picked).
// - Under autocast the two products run in the autocast dtype and the softmax in float32, so
//   the weights are float32 and the second product casts them back (matmul's policy).
namespace {
// The weights of the (masked) scores, and the output they make of value. Dropout draws from the
// default generator, or, given `replay`, from that generator state: the mask an earlier draw at
// that state made (the fused backward's create_graph path redraws the forward's mask so).
std::pair<Tensor, Tensor> attend(const Tensor& scores, const Tensor& value, double dropout_p,
                                 const Generator::State* replay = nullptr) {
  Tensor weights = softmax(scores, -1);
  if (dropout_p > 0.0 && replay == nullptr) {
    weights = dropout(weights, dropout_p, /*training=*/true);
  } else if (dropout_p > 0.0) {
    Generator generator;
    generator.set_state(*replay);
    const Tensor keep = ops::dropout(weights.detach(), dropout_p, generator).mask;
    weights = mul(mul(weights, keep.to(weights.dtype())), 1.0 / (1.0 - dropout_p));
  }
  return {matmul(weights, value), weights};
}
}  // namespace

namespace {

// The backends SdpaKernelGuard allows on this thread, one bit per SDPBackend.
constexpr unsigned kAllBackends = 0b11;
thread_local unsigned allowed_backends = kAllBackends;

unsigned bit(SDPBackend backend) {
  return 1u << static_cast<unsigned>(backend);
}

// scaled_dot_product_attention composed (Note [Attention, composed]).
Tensor attention_math(const Tensor& query, const Tensor& key, const Tensor& value,
                      const Tensor& attn_mask, double dropout_p, bool is_causal, double s,
                      const Generator::State* replay = nullptr) {
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
    scores = attn_mask.dtype() == kBool ? masked_fill(scores, eq(attn_mask, 0.0), kMinusInf)
                                        : add(scores, attn_mask);
  }
  return attend(scores, value, dropout_p, replay).first;
}

// Why the fused kernel cannot take this call, or nullptr when it can (Note [Fused attention]
// in kernels/cpu/attention.cpp).
const char* fused_refusal(const Tensor& query, const Tensor& key, const Tensor& value,
                          const Tensor& attn_mask) {
  if (!query.device().is_cpu()) return "it runs on the CPU only";
  if (amp::is_autocast_enabled(DeviceType::CPU)) return "it does not run under autocast";
  const Shape lead(query.shape().begin(), query.shape().end() - 2);
  if (key.dim() != query.dim() || value.dim() != query.dim() ||
      !std::equal(lead.begin(), lead.end(), key.shape().begin()) ||
      !std::equal(lead.begin(), lead.end(), value.shape().begin()))
    return "it needs query, key and value of the same leading dims (no broadcasting)";
  if (attn_mask.defined() && attn_mask.dtype() != kBool && attn_mask.dtype() != query.dtype())
    return "it needs a Bool mask or one of the query's dtype";
  if (attn_mask.defined() && autograd::any_requires_grad({&attn_mask}))
    return "it gives no gradient for the mask";
  return nullptr;
}

// The fused kernel recorded as one op; its backward recomputes the weights from the saved
// logsumexp, or differentiates attention_math under create_graph (as Note [Normalizations
// differentiated twice]: the first derivatives then equal the kernel's to rounding).
Tensor attention_fused(const Tensor& query, const Tensor& key, const Tensor& value,
                       const Tensor& attn_mask, double dropout_p, bool is_causal, double s) {
  ops::AttentionOutput forward = ops::attention(query, key, value, attn_mask, is_causal, s,
                                                dropout_p, &default_generator(query.device()));
  const Generator::State drawn{forward.dropout_seed, forward.dropout_offset};
  std::vector<Tensor> saved = {query, key, value, forward.output, forward.logsumexp};
  if (attn_mask.defined()) saved.push_back(attn_mask);
  return autograd::record_op(
      "scaled_dot_product_attention", forward.output, {query, key, value}, saved,
      [dropout_p, is_causal, s, drawn](const autograd::BackwardContext& c) -> std::vector<Tensor> {
        const Tensor mask = c.saved.size() > 5 ? c.saved[5] : Tensor();
        if (autograd::any_requires_grad({&c.grad, &c.saved[0], &c.saved[1], &c.saved[2]})) {
          std::vector<Tensor> operands;
          for (int k = 0; k < 3; ++k) {
            const Tensor& t = c.saved[static_cast<std::size_t>(k)];
            operands.push_back(t.requires_grad() ? t : t.detach().requires_grad_());
          }
          const Tensor y = attention_math(operands[0], operands[1], operands[2], mask, dropout_p,
                                          is_causal, s, &drawn);
          std::vector<Tensor> grads = autograd::grad({y}, operands, {c.grad}, std::nullopt,
                                                     /*create_graph=*/true, /*allow_unused=*/true);
          for (int k = 0; k < 3; ++k)
            if (!c.needs(k)) grads[static_cast<std::size_t>(k)] = Tensor();
          return grads;
        }
        ops::AttentionGrads g = ops::attention_backward(
            c.grad, c.saved[0], c.saved[1], c.saved[2], c.saved[3], c.saved[4], mask, is_causal, s,
            dropout_p, drawn.seed, drawn.offset, c.needs(0), c.needs(1), c.needs(2));
        return {g.grad_query, g.grad_key, g.grad_value};
      });
}

}  // namespace

SdpaKernelGuard::SdpaKernelGuard(std::vector<SDPBackend> backends) : previous_(allowed_backends) {
  LG_CHECK(!backends.empty(), "SdpaKernelGuard: expected at least one backend");
  unsigned allowed = 0;
  for (const SDPBackend backend : backends)
    allowed |= bit(backend);
  allowed_backends = allowed;
}

SdpaKernelGuard::~SdpaKernelGuard() {
  allowed_backends = previous_;
}

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
  if (attn_mask.defined()) {
    LG_CHECK_DTYPE(attn_mask.dtype() == kBool || is_floating(attn_mask.dtype()), op,
                   ": attn_mask must be Bool (true: may attend) or floating (added to the "
                   "scores), got ",
                   attn_mask.dtype());
    LG_CHECK_DEVICE(attn_mask.device() == query.device(), op, ": attn_mask is on ",
                    attn_mask.device(), ", query on ", query.device());
    Shape scores_shape = broadcast_shapes(Shape(query.shape().begin(), query.shape().end() - 2),
                                          Shape(key.shape().begin(), key.shape().end() - 2), op);
    scores_shape.push_back(query.shape()[query.dim() - 2]);
    scores_shape.push_back(key.shape()[key.dim() - 2]);
    LG_CHECK_SHAPE(broadcasts_to(attn_mask.shape(), scores_shape), op, ": attn_mask of shape ",
                   attn_mask.shape(), " does not broadcast to the scores' shape ", scores_shape,
                   " (query ", query.shape(), ", key ", key.shape(), ")");
  }

  const char* refusal = fused_refusal(query, key, value, attn_mask);
  if ((allowed_backends & bit(SDPBackend::FlashAttention)) != 0 && refusal == nullptr)
    return attention_fused(query, key, value, attn_mask, dropout_p, is_causal, s);
  LG_CHECK((allowed_backends & bit(SDPBackend::Math)) != 0, op,
           ": SdpaKernelGuard allows only the fused kernel, which cannot take this call: ", refusal,
           " (query ", query.shape(), " ", query.dtype(), " on ", query.device(), ", key ",
           key.shape(), ", value ", value.shape(), ", dropout_p ", dropout_p, ")");
  return attention_math(query, key, value, attn_mask, dropout_p, is_causal, s);
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
