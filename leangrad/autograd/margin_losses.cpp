// margin_ranking_loss, hinge_embedding_loss, soft_margin_loss, multilabel_soft_margin_loss,
// cosine_similarity, pairwise_distance, cosine_embedding_loss and triplet_margin_loss
// (autograd/margin_losses.h), composed of the differentiable functions as PyTorch 1.13 composes
// them, so their values, kinks and broadcasting are PyTorch's.
#include <leangrad/autograd/margin_losses.h>

#include <algorithm>
#include <cmath>
#include <utility>
#include <vector>

#include <leangrad/autograd/autocast.h>
#include <leangrad/autograd/functions.h>
#include <leangrad/autograd/grad_mode.h>
#include <leangrad/autograd/graph.h>
#include <leangrad/autograd/indexing_functions.h>
#include <leangrad/autograd/nn_internal.h>
#include <leangrad/core/creation.h>
#include <leangrad/core/error.h>
#include <leangrad/core/profiler.h>
#include <leangrad/core/shape.h>

namespace leangrad {

using autograd::check_broadcast_loss;
using autograd::check_floating_input;
using autograd::check_loss_weight;
using autograd::clamp_min_straight_through;
using autograd::reduce_losses;
using autograd::softplus_of_negated;

namespace {

// A target of +1 / -1 labels or multi-hot rows: floating, or integral (converted to the input's
// dtype, as PyTorch's type promotion does); a bool one is refused.
Tensor label_target(const char* op, const Tensor& target, const Tensor& input) {
  LG_CHECK(target.defined(), op, ": expected a defined target");
  LG_CHECK_DTYPE(target.dtype() != DType::Bool, op,
                 ": expected a floating or integral target, got bool (shape ", target.shape(), ")");
  return is_floating(target.dtype()) ? target : target.to(input.dtype());
}

}  // namespace

Tensor margin_ranking_loss(const Tensor& input1_in, const Tensor& input2_in,
                           const Tensor& target_in, double margin, Reduction reduction) {
  LG_PROFILE_OP(input1_in, input2_in, target_in);
  const char* op = "margin_ranking_loss";
  const Tensor input1 = amp::autocast_operand(input1_in, amp::CastPolicy::Float32);
  const Tensor input2 = amp::autocast_operand(input2_in, amp::CastPolicy::Float32);
  check_floating_input(op, input1);
  const Tensor target =
      amp::autocast_operand(label_target(op, target_in, input1), amp::CastPolicy::Float32);
  LG_CHECK_SHAPE(input1.dim() == input2.dim() && input1.dim() == target.dim(), op,
                 ": expected input1, input2 and target of one number of dims, got shapes ",
                 input1.shape(), ", ", input2.shape(), " and ", target.shape());
  // Pairwise broadcastable sizes are broadcastable together.
  check_broadcast_loss(op, "input1", input1, "input2", input2);
  check_broadcast_loss(op, "input1", input1, "target", target);
  check_broadcast_loss(op, "input2", input2, "target", target);
  return reduce_losses(clamp_min(add(mul(neg(target), sub(input1, input2)), margin), 0.0),
                       reduction);
}

Tensor hinge_embedding_loss(const Tensor& input_in, const Tensor& target_in, double margin,
                            Reduction reduction) {
  LG_PROFILE_OP(input_in, target_in);
  const char* op = "hinge_embedding_loss";
  const Tensor input = amp::autocast_operand(input_in, amp::CastPolicy::Float32);
  check_floating_input(op, input);
  const Tensor target = label_target(op, target_in, input);
  check_broadcast_loss(op, "input", input, "target", target);
  // PyTorch's where(target != 1, clamp_min(margin - input, 0), 0) +
  // where(target != -1, input, 0).
  const Tensor margin_term = masked_fill(clamp_min(rsub(input, margin), 0.0), eq(target, 1.0), 0.0);
  const Tensor input_term = masked_fill(input, eq(target, -1.0), 0.0);
  return reduce_losses(add(margin_term, input_term), reduction);
}

Tensor soft_margin_loss(const Tensor& input_in, const Tensor& target_in, Reduction reduction) {
  LG_PROFILE_OP(input_in, target_in);
  const char* op = "soft_margin_loss";
  const Tensor input = amp::autocast_operand(input_in, amp::CastPolicy::Float32);
  check_floating_input(op, input);
  const Tensor target =
      amp::autocast_operand(label_target(op, target_in, input), amp::CastPolicy::Float32);
  check_broadcast_loss(op, "input", input, "target", target);
  LG_CHECK_SHAPE(broadcasts_to(target.shape(), input.shape()), op, ": target of shape ",
                 target.shape(), " does not broadcast to the input's shape ", input.shape());
  return reduce_losses(softplus_of_negated(mul(input, target)), reduction);
}

Tensor multilabel_soft_margin_loss(const Tensor& input_in, const Tensor& target_in,
                                   const Tensor& weight_in, Reduction reduction) {
  LG_PROFILE_OP(input_in, target_in, weight_in);
  const char* op = "multilabel_soft_margin_loss";
  const Tensor input = amp::autocast_operand(input_in, amp::CastPolicy::Float32);
  check_floating_input(op, input);
  LG_CHECK_SHAPE(input.dim() >= 1, op,
                 ": expected input with a class dim, (C) or (N, C), got a 0-d tensor");
  const Tensor target =
      amp::autocast_operand(label_target(op, target_in, input), amp::CastPolicy::Float32);
  const Tensor weight = amp::autocast_operand(weight_in, amp::CastPolicy::Float32);
  check_broadcast_loss(op, "input", input, "target", target);
  LG_CHECK_SHAPE(broadcasts_to(target.shape(), input.shape()), op, ": target of shape ",
                 target.shape(), " does not broadcast to the input's shape ", input.shape());
  check_loss_weight(op, "weight", weight, input);
  // -(target * logsigmoid(input) + (1 - target) * logsigmoid(-input)), as PyTorch writes it.
  Tensor losses = add(mul(target, softplus_of_negated(input)),
                      mul(rsub(target, 1.0), softplus_of_negated(neg(input))));
  if (weight.defined()) losses = mul(losses, weight);
  const double classes = static_cast<double>(input.shape().back());
  return reduce_losses(div(sum(losses, {-1}), classes), reduction);
}

namespace {

// The p-norm of x over dim (already wrapped), p >= 1 or infinity, without a graph.
Tensor norm_value(const Tensor& x, double p, std::int64_t dim, bool keepdim) {
  if (p == 2.0) return sqrt(sum(mul(x, x), {dim}, keepdim));
  if (p == 1.0) return sum(abs(x), {dim}, keepdim);
  if (std::isinf(p)) return amax(abs(x), {dim}, keepdim);
  return pow(sum(pow(abs(x), p), {dim}, keepdim), 1.0 / p);
}

// Note [Vector norm gradient]
// ||x||_p over dim, recorded with PyTorch 1.13's norm_backward written with differentiable
// functions (so it differentiates again), for g the upstream gradient with dim kept:
//   p = 1: sign(x) g;  p = 2: x g / n;  p = inf: sign(x) g / k where |x| = n (k such entries);
//   else: sign(x) |x|^(p-1) g / n^(p-1);
// the latter two 0 where the norm n is 0 (the composed sqrt(sum(x * x)) would give 0 / 0).
Tensor vector_norm(const Tensor& x, double p, std::int64_t dim, bool keepdim) {
  Tensor out;
  {
    NoGradGuard no_grad;
    out = norm_value(x, p, dim, keepdim);
  }
  return autograd::record_op(
      "vector_norm", out, {x}, {x},
      [p, dim, keepdim](const autograd::BackwardContext& c) -> std::vector<Tensor> {
        const Tensor& v = c.saved[0];
        const Tensor g = keepdim ? c.grad : unsqueeze(c.grad, dim);
        if (p == 1.0) return {g * sign(v)};
        const Tensor n = vector_norm(v, p, dim, /*keepdim=*/true);
        if (std::isinf(p)) {
          const Tensor mask = eq(abs(v), n).to(v.dtype());
          return {sign(v) * (g / sum(mask, {dim}, true)) * mask};
        }
        const Tensor scale = masked_fill(p == 2.0 ? g / n : g / pow(n, p - 1.0), eq(n, 0.0), 0.0);
        return {p == 2.0 ? v * scale : sign(v) * pow(abs(v), p - 1.0) * scale};
      });
}

// The operands of a distance: floating, on one device, broadcast to one shape (PyTorch's
// expand_outplace) of at least one dim.
std::pair<Tensor, Tensor> broadcast_pair(const char* op, const char* name_a, const Tensor& a,
                                         const char* name_b, const Tensor& b) {
  const Shape shape = check_broadcast_loss(op, name_a, a, name_b, b);
  LG_CHECK_SHAPE(!shape.empty(), op, ": expected ", name_a, " and ", name_b,
                 " with at least one dim, got 0-d tensors");
  return {a.shape() == shape ? a : expand(a, shape), b.shape() == shape ? b : expand(b, shape)};
}

void check_norm_order(const char* op, double p) {
  LG_CHECK(p >= 1.0, op, ": p must be >= 1 (or infinity), got ", p,
           " (PyTorch's p < 1 norms are not here)");
}

}  // namespace

Tensor cosine_similarity(const Tensor& x1_in, const Tensor& x2_in, std::int64_t dim, double eps) {
  LG_PROFILE_OP(x1_in, x2_in);
  const char* op = "cosine_similarity";
  const auto [x1, x2] =
      broadcast_pair(op, "x1", amp::autocast_operand(x1_in, amp::CastPolicy::Float32), "x2",
                     amp::autocast_operand(x2_in, amp::CastPolicy::Float32));
  const std::int64_t d = wrap_dim(dim, x1.dim(), op);
  // Note [Cosine similarity's clamp]: PyTorch 1.13 clamps each squared norm at eps^2 in place
  // under no_grad and takes its sqrt in place, so the gradient passes the clamp as the identity
  // and the sqrt's derivative is taken at the clamped value: below eps a vector's norm moves
  // with it at rate x / eps, not x / ||x||.
  const auto norm = [d, eps](const Tensor& x) {
    return sqrt(clamp_min_straight_through(sum(mul(x, x), {d}, true), eps * eps));
  };
  return sum(mul(div(x1, norm(x1)), div(x2, norm(x2))), {d});
}

Tensor pairwise_distance(const Tensor& x1, const Tensor& x2, double p, double eps, bool keepdim) {
  LG_PROFILE_OP(x1, x2);
  const char* op = "pairwise_distance";
  check_norm_order(op, p);
  const Tensor a = amp::autocast_operand(x1, amp::CastPolicy::Float32);
  const Tensor b = amp::autocast_operand(x2, amp::CastPolicy::Float32);
  const Shape shape = check_broadcast_loss(op, "x1", a, "x2", b);
  LG_CHECK_SHAPE(!shape.empty(), op, ": expected x1 and x2 with at least one dim, got 0-d tensors");
  return vector_norm(add(sub(a, b), eps), p, static_cast<std::int64_t>(shape.size()) - 1, keepdim);
}

Tensor cosine_embedding_loss(const Tensor& input1_in, const Tensor& input2_in,
                             const Tensor& target_in, double margin, Reduction reduction) {
  LG_PROFILE_OP(input1_in, input2_in, target_in);
  const char* op = "cosine_embedding_loss";
  const Tensor input1 = amp::autocast_operand(input1_in, amp::CastPolicy::Float32);
  const Tensor input2 = amp::autocast_operand(input2_in, amp::CastPolicy::Float32);
  check_floating_input(op, input1);
  const Tensor target = label_target(op, target_in, input1);
  check_broadcast_loss(op, "input1", input1, "input2", input2);
  LG_CHECK_SHAPE(target.dim() <= 1, op, ": expected a 0-d or 1-D target, got shape ",
                 target.shape());
  const std::int64_t input_dim = target.dim() + 1;
  LG_CHECK_SHAPE(input1.dim() == input_dim && input2.dim() == input_dim, op, ": a ", target.dim(),
                 "-D target expects ", input_dim, "-D inputs, got shapes ", input1.shape(), " and ",
                 input2.shape());
  // PyTorch's EPSILON, added to the squared magnitudes: a float 1e-12, 9.99999996e-13 in float64
  // too (as binary_cross_entropy's floor), which a zero vector's gradient shows in its ninth digit.
  constexpr double kMagnitudeEpsilon = static_cast<double>(1e-12f);
  const std::int64_t d = target.dim();
  const Tensor dot = sum(mul(input1, input2), {d});
  const Tensor magnitude1 = add(sum(mul(input1, input1), {d}), kMagnitudeEpsilon);
  const Tensor magnitude2 = add(sum(mul(input2, input2), {d}), kMagnitudeEpsilon);
  const Tensor cos = div(dot, sqrt(mul(magnitude1, magnitude2)));
  check_broadcast_loss(op, "the cosines", cos, "target", target);
  const Tensor positive = masked_fill(rsub(cos, 1.0), ne(target, 1.0), 0.0);
  const Tensor negative = masked_fill(clamp_min(sub(cos, margin), 0.0), ne(target, -1.0), 0.0);
  return reduce_losses(add(positive, negative), reduction);
}

namespace {

// A triplet loss's operands: floating, of one number of dims (PyTorch's rule).
void check_triplet(const char* op, const Tensor& anchor, const Tensor& positive,
                   const Tensor& negative) {
  check_floating_input(op, anchor);
  check_floating_input(op, positive);
  check_floating_input(op, negative);
  LG_CHECK_SHAPE(anchor.dim() == positive.dim() && anchor.dim() == negative.dim(), op,
                 ": expected anchor, positive and negative of one number of dims, got shapes ",
                 anchor.shape(), ", ", positive.shape(), " and ", negative.shape());
}

}  // namespace

Tensor triplet_margin_loss(const Tensor& anchor_in, const Tensor& positive_in,
                           const Tensor& negative_in, double margin, double p, double eps,
                           bool swap, Reduction reduction) {
  LG_PROFILE_OP(anchor_in, positive_in, negative_in);
  const char* op = "triplet_margin_loss";
  check_norm_order(op, p);
  const Tensor anchor = amp::autocast_operand(anchor_in, amp::CastPolicy::Float32);
  const Tensor positive = amp::autocast_operand(positive_in, amp::CastPolicy::Float32);
  const Tensor negative = amp::autocast_operand(negative_in, amp::CastPolicy::Float32);
  check_triplet(op, anchor, positive, negative);
  check_broadcast_loss(op, "anchor", anchor, "positive", positive);
  check_broadcast_loss(op, "anchor", anchor, "negative", negative);
  check_broadcast_loss(op, "positive", positive, "negative", negative);
  const Tensor d_positive = pairwise_distance(anchor, positive, p, eps);
  Tensor d_negative = pairwise_distance(anchor, negative, p, eps);
  if (swap) d_negative = minimum(d_negative, pairwise_distance(positive, negative, p, eps));
  return reduce_losses(clamp_min(sub(add(d_positive, margin), d_negative), 0.0), reduction);
}

namespace {

// The class indices of a margin loss's target as host values; the Error names `op`.
std::vector<std::int64_t> host_classes(const char* op, const Tensor& target) {
  LG_CHECK(target.defined(), op, ": expected a defined target");
  LG_CHECK_DTYPE(target.dtype() == kInt64, op, ": expected int64 class indices as the target, got ",
                 target.dtype(), " (shape ", target.shape(), ")");
  const NoGradGuard no_grad;
  const Tensor values = target.to(Device::cpu()).contiguous();
  const std::int64_t* v = values.data_ptr<std::int64_t>();
  return std::vector<std::int64_t>(v, v + values.numel());
}

// input as (N, C): a (C) input is one sample. The Error names `op`.
Tensor samples_of(const char* op, const Tensor& input) {
  check_floating_input(op, input);
  LG_CHECK_SHAPE(input.dim() == 1 || input.dim() == 2, op,
                 ": expected input (N, C) or (C), got shape ", input.shape());
  LG_CHECK_SHAPE(input.size(-1) >= 1, op, ": expected at least one class, got input of shape ",
                 input.shape());
  return input.dim() == 1 ? unsqueeze(input, 0) : input;
}

Tensor host_tensor_on(const std::vector<double>& values, const Shape& shape, const Tensor& like) {
  return tensor(values, shape).to(like.dtype()).to(like.device());
}

}  // namespace

Tensor multi_margin_loss(const Tensor& input_in, const Tensor& target, std::int64_t p,
                         double margin, const Tensor& weight, Reduction reduction) {
  LG_PROFILE_OP(input_in, target);
  const char* op = "multi_margin_loss";
  LG_CHECK(p == 1 || p == 2, op, ": p must be 1 or 2, got ", p);
  const Tensor input = amp::autocast_operand(input_in, amp::CastPolicy::Float32);
  const Tensor x = samples_of(op, input);
  const std::int64_t n = x.size(0), classes = x.size(1);
  const Shape target_shape = input.dim() == 1 ? Shape{} : Shape{n};
  LG_CHECK_SHAPE(target.defined() && (target.shape() == target_shape ||
                                      (input.dim() == 1 && target.shape() == Shape{1})),
                 op, ": expected a target of shape ", target_shape, " for input of shape ",
                 input.shape(), ", got ", target.defined() ? target.shape() : Shape{});
  const std::vector<std::int64_t> y = host_classes(op, target);
  std::vector<double> is_target(static_cast<std::size_t>(n * classes), 0.0);
  for (std::size_t i = 0; i < y.size(); ++i) {
    LG_CHECK(y[i] >= 0 && y[i] < classes, op, ": target ", y[i], " of sample ", i,
             " is not a class in [0, ", classes, ")");
    is_target[i * static_cast<std::size_t>(classes) + static_cast<std::size_t>(y[i])] = 1.0;
  }
  if (weight.defined()) {
    LG_CHECK_SHAPE(weight.shape() == Shape{classes}, op, ": expected a class weight of shape (",
                   classes, "), got ", weight.shape());
    LG_CHECK_DTYPE(weight.dtype() == x.dtype() && weight.device() == x.device(), op,
                   ": expected the weight in the input's dtype ", x.dtype(), " and device ",
                   x.device(), ", got ", weight.dtype(), " on ", weight.device());
  }
  const Tensor index = tensor(y, {n, 1}).to(x.device());
  // max(0, margin - x[y] + x[i]) (^p) over every class, the target's own term masked out.
  Tensor z = relu(add(sub(x, gather(x, 1, index)), margin));
  if (p == 2) z = mul(z, z);
  z = mul(z, rsub(host_tensor_on(is_target, {n, classes}, x), 1.0));
  if (weight.defined()) z = mul(z, reshape(index_select(weight, 0, reshape(index, {n})), {n, 1}));
  Tensor losses = div(sum(z, {1}), static_cast<double>(classes));
  if (input.dim() == 1) losses = reshape(losses, {});
  return reduce_losses(losses, reduction);
}

Tensor multilabel_margin_loss(const Tensor& input_in, const Tensor& target, Reduction reduction) {
  LG_PROFILE_OP(input_in, target);
  const char* op = "multilabel_margin_loss";
  const Tensor input = amp::autocast_operand(input_in, amp::CastPolicy::Float32);
  const Tensor x = samples_of(op, input);
  const std::int64_t n = x.size(0), classes = x.size(1);
  LG_CHECK_SHAPE(target.defined() && target.shape() == input.shape(), op,
                 ": expected a target of the input's shape ", input.shape(), ", got ",
                 target.defined() ? target.shape() : Shape{});
  const std::vector<std::int64_t> y = host_classes(op, target);
  // Each sample's indices: the row up to its first -1.
  std::vector<std::vector<std::int64_t>> indices(static_cast<std::size_t>(n));
  std::size_t most = 0;
  std::vector<double> is_target(static_cast<std::size_t>(n * classes), 0.0);
  for (std::int64_t s = 0; s < n; ++s) {
    for (std::int64_t i = 0; i < classes; ++i) {
      const std::int64_t c = y[static_cast<std::size_t>(s * classes + i)];
      if (c == -1) break;
      LG_CHECK(c >= 0 && c < classes, op, ": target index ", c, " of sample ", s,
               " is neither a class in [0, ", classes, ") nor the end marker -1");
      indices[static_cast<std::size_t>(s)].push_back(c);
      is_target[static_cast<std::size_t>(s * classes + c)] = 1.0;
    }
    most = std::max(most, indices[static_cast<std::size_t>(s)].size());
  }
  Tensor losses;
  if (most == 0) {
    losses = mul(sum(x, {1}), 0.0);  // no sample names a class
  } else {
    // (N, K, C): 1 - x[j] + x[i] for the K index slots j of each sample (slots past its own
    // count, and the classes it names, masked out).
    const auto k = static_cast<std::int64_t>(most);
    std::vector<std::int64_t> slots(static_cast<std::size_t>(n * k), 0);
    std::vector<double> used(static_cast<std::size_t>(n * k), 0.0);
    for (std::size_t s = 0; s < indices.size(); ++s) {
      for (std::size_t j = 0; j < indices[s].size(); ++j) {
        slots[s * most + j] = indices[s][j];
        used[s * most + j] = 1.0;
      }
    }
    const Tensor x_j = gather(x, 1, tensor(slots, {n, k}).to(x.device()));
    const Tensor z = relu(add(sub(unsqueeze(x, 1), unsqueeze(x_j, 2)), 1.0));
    const Tensor mask = mul(unsqueeze(host_tensor_on(used, {n, k}, x), 2),
                            unsqueeze(rsub(host_tensor_on(is_target, {n, classes}, x), 1.0), 1));
    losses = div(sum(mul(z, mask), {1, 2}), static_cast<double>(classes));
  }
  if (input.dim() == 1) losses = reshape(losses, {});
  return reduce_losses(losses, reduction);
}

Tensor triplet_margin_with_distance_loss(const Tensor& anchor, const Tensor& positive,
                                         const Tensor& negative,
                                         const DistanceFunction& distance_function, double margin,
                                         bool swap, Reduction reduction) {
  LG_PROFILE_OP(anchor, positive, negative);
  const char* op = "triplet_margin_with_distance_loss";
  LG_CHECK(margin > 0.0, op, ": margin must be greater than 0, got ", margin);
  check_triplet(op, anchor, positive, negative);
  const DistanceFunction distance = distance_function
                                        ? distance_function
                                        : DistanceFunction([](const Tensor& a, const Tensor& b) {
                                            return pairwise_distance(a, b);
                                          });
  const Tensor d_positive = distance(anchor, positive);
  Tensor d_negative = distance(anchor, negative);
  if (swap) d_negative = minimum(d_negative, distance(positive, negative));
  return reduce_losses(clamp_min(sub(add(d_positive, margin), d_negative), 0.0), reduction);
}

}  // namespace leangrad
