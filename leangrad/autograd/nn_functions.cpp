// The neural-network functions of autograd/nn_functions.h, each forward beside its backward.
// Kernel-backed ops (TanhExp, GroupNorm, conv2d, pooling, dropout, softmax, the per-sample losses,
// embedding, interpolation) call kernels/ops.h and record a node with the backward their kernels
// provide (recorded as ops themselves where the backward can be differentiated again: Note
// [Fused backwards that differentiate again]):
//   tanhexp        saves only x: its derivative is recomputed from x in one fused kernel
//                  (ops::tanhexp_backward), which costs less than storing tanh(e^x) beside y
//   group_norm     saves x, the per-group mean and rstd the forward computed and the weight;
//                  ops::group_norm_backward computes only the gradients that are needed
//   layer_norm     saves x, the per-row mean and rstd and the weight, as group_norm, with
//                  kernels of its own (ops::layer_norm; Note [LayerNorm and BatchNorm as
//                  GroupNorm])
//   batch_norm     group_norm's kernels on a reshaped input (the same Note); in evaluation
//                  elementwise ops
//   conv2d         the input gradient (a convolution of grad with the flipped weight, gathered
//                  per input pixel), the weight gradient (grad correlated with the input over
//                  every sample and pixel), the bias gradient (grad summed over N, H, W)
//   conv_transpose2d  conv2d's kernels in other roles (Note [ConvTranspose2d as conv2d's
//                  gradient])
//   embedding      saves the indices; the weight gradient is a scatter-add of the upstream rows
//   interpolate    saves nothing: the backward adds each output's gradient into its taps
// Composite ops are written with the differentiable functions:
//   linear         matmul(x, W^T) + b: the bias gradient is add's broadcast reduction
//   pixel_shuffle  reshape -> permute -> reshape (one strided copy; views carry the gradient)
//   mse / l1       sub, mul / abs, mean / sum
// Loss reductions: a kernel gives per-sample losses (N,) and each sample's class weight (0 when
// ignored); Mean divides the sum of the losses by the sum of the weights, on the device (no
// synchronisation; all ignored gives 0/0 = NaN, as PyTorch). Input of any other rank, (C) or
// (N, C, d1, ...), is flattened into such rows first (Note [Class-index losses of any rank]).
// Label smoothing and class-probability targets are composed (Note [Label smoothing and
// probability targets]). Each function opens with LG_PROFILE_OP, as in functions.cpp.
#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include <leangrad/autograd/autocast.h>
#include <leangrad/autograd/engine.h>
#include <leangrad/autograd/functions.h>
#include <leangrad/autograd/grad_mode.h>
#include <leangrad/autograd/graph.h>
#include <leangrad/autograd/indexing_functions.h>
#include <leangrad/autograd/nn_functions.h>
#include <leangrad/autograd/nn_internal.h>
#include <leangrad/autograd/volumetric_functions.h>
#include <leangrad/core/creation.h>
#include <leangrad/core/generator.h>
#include <leangrad/core/profiler.h>
#include <leangrad/kernels/creation.h>
#include <leangrad/kernels/elementwise_geometry.h>
#include <leangrad/kernels/layers_math.h>
#include <leangrad/kernels/ops.h>

namespace leangrad {

using autograd::BackwardContext;
using autograd::check_elementwise_loss;
using autograd::record_op;
using autograd::reduce_losses;

namespace {

// Per-sample losses (N,) reduced; Mean divides their sum by the sum of the samples' class weights
// (the kernels' sample_weights: w[t], 0 for an ignored sample), as PyTorch's total_weight.
Tensor reduce_class_losses(const Tensor& losses, const Tensor& sample_weights,
                           Reduction reduction) {
  if (reduction != Reduction::Mean) return reduce_losses(losses, reduction);
  return div(sum(losses), sum(sample_weights));
}

// Note [Class-index losses of any rank]
// nll_loss and cross_entropy take class indices for input (N, C, d1, ..., dk) as a target
// (N, d1, ..., dk) (a segmentation's per-pixel classes), and for an unbatched input (C) as a 0-d
// target, as PyTorch; the kernels take rows only: (M, C) with a target (M,). class_rows turns the
// user's shapes into rows with differentiable ops: C moved last and the rest flattened,
// permute(0, 2, ..., k + 1, 1) then reshape (M, C) with M = N d1 ... dk, the target reshaped to
// (M,) (row m is the target's m-th entry in row-major order, so a target out of range is reported
// at its flat index); (C) is unsqueezed to (1, C); (N, C) passes through untouched. The row path
// then runs as it is, every option included: Mean divides the sum over all positions by the
// summed class weights of all positions not ignored, which is PyTorch's definition for K-d input
// (nll_loss2d's total_weight, not a mean of per-image means); None's (M,) losses are reshaped to
// the target's shape ((N, d1, ..., dk), or 0-d). Double backward needs nothing more: permute and
// reshape are differentiable.
// Why rows and not a kernel reading (N, C, S) in place: for k >= 1 the permute copies the logits
// once in the forward (the copy is what the loss saves for its backward) and the gradient once
// more on its way back, against a second layout in every loss kernel and its backward on both
// devices (on CUDA a thread per position over C rather than today's block per row, to keep reads
// coalesced), which this session could not run on a GPU. Measure the copy in bench/ before
// trading it for those kernels. Probability targets need neither: their composed loss reduces
// over dim 1 of any rank directly (cross_entropy_probabilities).
struct ClassRows {
  Tensor input;      // (M, C)
  Tensor target;     // (M,)
  Shape loss_shape;  // the target's: what Reduction::None returns
};

ClassRows class_rows(const char* op, const Tensor& input, const Tensor& target,
                     const Tensor& weight) {
  ops::check_class_targets(op, input, target);
  ops::check_class_weight(op, weight, input);
  if (input.dim() == 2) return {input, target, target.shape()};
  if (input.dim() == 1) return {unsqueeze(input, 0), reshape(target, {1}), target.shape()};
  std::vector<std::int64_t> class_last{0};  // (N, d1, ..., dk, C)
  for (std::int64_t d = 2; d < input.dim(); ++d)
    class_last.push_back(d);
  class_last.push_back(1);
  const std::int64_t M = target.numel();
  return {reshape(permute(input, class_last), {M, input.size(1)}), reshape(target, {M}),
          target.shape()};
}

// A loss of class_rows reduced: None's per-row losses (M,) in the target's shape.
Tensor in_target_shape(const Tensor& reduced, const ClassRows& rows, Reduction reduction) {
  return reduction == Reduction::None ? reshape(reduced, rows.loss_shape) : reduced;
}

// Whether each target is ignore_index (Bool, the target's shape), compared on the device.
Tensor ignored_targets(const Tensor& target, std::int64_t ignore_index) {
  // A double holds every integer up to 2^53 exactly (-100 too): compared as a scalar, with no copy
  // to the device. Beyond that it would lose the index (2^53 + 1 would equal 2^53), so the
  // comparison is then with an int64 tensor.
  constexpr std::int64_t kExactInDouble = std::int64_t{1} << 53;
  return ignore_index >= -kExactInDouble && ignore_index <= kExactInDouble
             ? eq(target, static_cast<double>(ignore_index))
             : eq(target, tensor(std::vector<std::int64_t>{ignore_index}).to(target.device()));
}

// A loss's class weight as the kernels take it: cast like the input under autocast, and a
// constant: no gradient flows into it (PyTorch does not differentiate nll_loss's weight either).
Tensor class_weight_operand(const Tensor& weight) {
  if (!weight.defined()) return weight;
  return amp::autocast_operand(weight, amp::CastPolicy::Float32).detach();
}

// nll_loss's per-sample losses (N,), recorded for backward, and the samples' class weights.
struct ClassLosses {
  Tensor losses;
  Tensor sample_weights;
};
ClassLosses nll_per_sample(const Tensor& logp, const Tensor& target, const Tensor& weight,
                           std::int64_t ignore_index);
Tensor softmax_backward_fn(const Tensor& g, const Tensor& y, std::int64_t dim, bool log);

// nll_loss's backward, linear in g: dlogp[i, t_i] = -w_{t_i} g_i. Its adjoint is nll_loss's
// forward, -w_{t_i} gg[i, t_i] (Note [Fused backwards that differentiate again]).
Tensor nll_loss_backward_fn(const Tensor& g, const Tensor& target, const Tensor& weight,
                            std::int64_t num_classes, std::int64_t ignore_index) {
  return record_op(
      "nll_loss_backward", ops::nll_loss_backward(g, target, weight, num_classes, ignore_index),
      {g}, {target, weight}, [ignore_index](const BackwardContext& c) -> std::vector<Tensor> {
        return {nll_per_sample(c.grad, c.saved[0], c.saved[1], ignore_index).losses};
      });
}

ClassLosses nll_per_sample(const Tensor& logp, const Tensor& target, const Tensor& weight,
                           std::int64_t ignore_index) {
  ops::NllLossResult r = ops::nll_loss(logp, target, weight, ignore_index);
  const std::int64_t num_classes = logp.size(1);
  const Tensor losses = record_op(
      "nll_loss", r.losses, {logp}, {target, weight},
      [num_classes, ignore_index](const BackwardContext& c) -> std::vector<Tensor> {
        return {nll_loss_backward_fn(c.grad, c.saved[0], c.saved[1], num_classes, ignore_index)};
      });
  return {losses, r.sample_weights};
}

// cross_entropy's backward with class indices, dx_i = g_i s_i (softmax(x_i) - onehot(t_i)) with
// s_i the sample's class weight (0 when ignored): the kernel's value, recorded with its
// derivatives written with the public functions (Note [Fused backwards that differentiate
// again]): for an upstream gg, dg_i = s_i sum_c gg_ic p_ic - s_i gg[i, t_i] (the second term is
// nll_loss's forward on gg) and dx = softmax's backward of (g s) gg at p = softmax(x).
Tensor cross_entropy_backward_fn(const Tensor& g, const Tensor& logits, const Tensor& logsumexp,
                                 const Tensor& target, const Tensor& weight,
                                 const Tensor& sample_weights, std::int64_t ignore_index) {
  return record_op("cross_entropy_backward",
                   ops::cross_entropy_backward(g, logits, logsumexp, target, weight, ignore_index),
                   {g, logits}, {g, logits, target, weight, sample_weights},
                   [ignore_index](const BackwardContext& c) -> std::vector<Tensor> {
                     const Tensor& gg = c.grad;
                     const Tensor& g_saved = c.saved[0];
                     const Tensor& x = c.saved[1];
                     const Tensor& target_saved = c.saved[2];
                     const Tensor& weight_saved = c.saved[3];
                     const Tensor& s = c.saved[4];
                     const Tensor p = softmax(x, 1);
                     std::vector<Tensor> grads(2);
                     if (c.needs(0)) {
                       grads[0] =
                           add(mul(s, sum(mul(gg, p), {1})),
                               nll_per_sample(gg, target_saved, weight_saved, ignore_index).losses);
                     }
                     if (c.needs(1)) {
                       grads[1] = softmax_backward_fn(mul(gg, unsqueeze(mul(g_saved, s), 1)), p, 1,
                                                      /*log=*/false);
                     }
                     return grads;
                   });
}

// Note [Label smoothing and probability targets]
// cross_entropy with class-probability targets, or with label smoothing, is composed of
// differentiable ops, as PyTorch 1.13 composes it (aten/src/ATen/native/LossNLL.cpp); only the
// plain class-index loss is one fused kernel. With ls = label_smoothing, w the class weight (all 1
// without one), logp = log_softmax(logits, 1) and C classes:
// - probabilities p (the input's shape): q = (1 - ls) p + ls / C, loss = -sum_c w_c q_c logp_c at
//   each sample (and position d1, ...); Mean divides by N * d1 * ..., not by weights. The target
//   gets a gradient too.
// - class indices t: loss_i = (1 - ls) * (-w_t logp_t) + (ls / C) * (-sum_c w_c logp_c), both
//   terms 0 for an ignored sample; Mean divides the sum by sum_i w_{t_i} over the samples not
//   ignored, for both terms (PyTorch's divisor for the smoothing term too: with a weight it is
//   the same total weight, not the number of samples).
Tensor cross_entropy_probabilities(const Tensor& logits, const Tensor& target, Reduction reduction,
                                   std::int64_t ignore_index, const Tensor& weight,
                                   double label_smoothing) {
  const char* op = "cross_entropy";
  LG_CHECK_DTYPE(is_floating(logits.dtype()), op, ": expected a floating input, got ",
                 logits.dtype());
  LG_CHECK_SHAPE(logits.dim() >= 1, op,
                 ": expected input of shape (C), (N, C) or (N, C, d1, ...) for class-probability "
                 "targets, got input and target of shape ",
                 logits.shape());
  LG_CHECK_DTYPE(target.dtype() == logits.dtype(), op,
                 ": a target of the input's shape holds class probabilities and must have the "
                 "input's dtype ",
                 logits.dtype(), ", got ", target.dtype(), " (class indices are int64 of shape ",
                 ops::class_target_shape(logits.shape()), ")");
  LG_CHECK_DEVICE(target.device() == logits.device(), op,
                  ": expected input and target on one device, got ", logits.device(), " and ",
                  target.device());
  LG_CHECK(ignore_index < 0, op, ": ignore_index ", ignore_index,
           " is not supported for class-probability targets (as PyTorch: only a negative one, "
           "which ignores nothing)");
  ops::check_class_weight(op, weight, logits);
  const std::int64_t class_dim = logits.dim() == 1 ? 0 : 1;  // unbatched (C): its only dim
  const std::int64_t C = logits.size(class_dim);
  const Tensor q = label_smoothing > 0.0 ? add(mul(target, 1.0 - label_smoothing),
                                               label_smoothing / static_cast<double>(C))
                                         : target;
  Tensor terms = mul(log_softmax(logits, class_dim), q);
  if (weight.defined()) {
    Shape per_class(logits.dim(), 1);  // (1, C, 1, ...), or (C)
    per_class[class_dim] = C;
    terms = mul(terms, weight.view(per_class));
  }
  return reduce_losses(neg(sum(terms, {class_dim})), reduction);
}

// Class indices with label smoothing, on class_rows' rows: logits (M, C), target (M,).
Tensor cross_entropy_smoothed(const Tensor& logits, const Tensor& target, Reduction reduction,
                              std::int64_t ignore_index, const Tensor& weight,
                              double label_smoothing) {
  const Tensor logp = log_softmax(logits, 1);
  const ClassLosses nll = nll_per_sample(logp, target, weight, ignore_index);
  const std::int64_t C = logits.size(1);
  const Tensor weighted = weight.defined() ? mul(logp, weight.view({1, C})) : logp;
  const Tensor smooth =
      masked_fill(neg(sum(weighted, {1})), ignored_targets(target, ignore_index), 0.0);
  // Each term reduced on its own, then mixed: under Mean a total weight of 0 then gives
  // 0 / 0 + s / 0 = NaN, as PyTorch's, where the mixed sum over 0 would be an infinity.
  return add(
      mul(reduce_class_losses(nll.losses, nll.sample_weights, reduction), 1.0 - label_smoothing),
      mul(reduce_class_losses(smooth, nll.sample_weights, reduction),
          label_smoothing / static_cast<double>(C)));
}

// The dims a per-channel quantity of an (N, C, *) tensor of `dim` dims sums over: all but dim 1
// (a normalization's bias gradient, BatchNorm's statistics).
DimList all_but_channels(std::int64_t dim) {
  DimList dims = {0};
  for (std::int64_t d = 2; d < dim; ++d)
    dims.push_back(d);
  return dims;
}

// GroupNorm without its bias, written with the public functions: what group_norm's backward
// differentiates under create_graph (Note [Normalizations differentiated twice]). 16-bit input
// is normalized in float32, as the kernel does.
Tensor composite_group_norm(const Tensor& x_in, std::int64_t num_groups, const Tensor& weight,
                            double eps) {
  const Tensor x = is_reduced_precision(x_in.dtype()) ? x_in.to(kFloat32) : x_in;
  const Tensor grouped = reshape(x, {x.size(0), num_groups, -1});
  const Tensor centred = sub(grouped, mean(grouped, {2}, /*keepdim=*/true));
  const Tensor variance = mean(mul(centred, centred), {2}, /*keepdim=*/true);
  Tensor y = reshape(div(centred, sqrt(add(variance, eps))), x.shape());
  if (weight.defined()) {
    Shape channel_shape(static_cast<std::size_t>(x.dim()), 1);
    channel_shape[1] = x.size(1);
    y = mul(y, reshape(weight.to(y.dtype()), channel_shape));
  }
  return y;
}

// Note [Normalizations differentiated twice]
// group_norm's, layer_norm's and batch_norm's backward kernels have no derivative of their own.
// Under create_graph, when the upstream gradient or a saved tensor requires grad, the gradients
// come instead from autograd::grad over the normalization written with the public functions
// (composite_group_norm, composite_layer_norm, composite_batch_norm: mean and variance
// recomputed from x; batch_norm in evaluation: the running statistics' mean and rstd, constants),
// with create_graph, so they carry a graph to any order:
// a gradient penalty through a LayerNorm critic, MAML through BatchNorm. These first derivatives
// equal the kernel's to rounding, not bit for bit (another summation order); a plain backward
// runs the kernel.
// A normalization's gradients under create_graph: x and the weight as the inputs of `composite`
// (the normalization without its bias), each the saved tensor itself when it requires grad (its
// history continues), else a leaf standing in for it; the bias's gradient is the upstream
// gradient summed over `bias_dims`.
std::vector<Tensor> norm_grads_with_graph(
    const BackwardContext& c, const Tensor& weight,
    const std::function<Tensor(const Tensor&, const Tensor&)>& composite,
    const DimList& bias_dims) {
  auto operand = [](const Tensor& t) {
    return t.defined() && !t.requires_grad() ? t.detach().requires_grad_() : t;
  };
  const Tensor x_in = operand(c.saved[0]);
  const Tensor w_in = operand(weight);
  std::vector<Tensor> wrt = {x_in};
  if (w_in.defined()) wrt.push_back(w_in);
  const Tensor y = composite(x_in, w_in);
  const std::vector<Tensor> grads = autograd::grad({y}, wrt, {c.grad.to(y.dtype())}, std::nullopt,
                                                   /*create_graph=*/true, /*allow_unused=*/true);
  std::vector<Tensor> result(3);
  if (c.needs(0)) result[0] = grads[0];
  if (c.needs(1)) result[1] = grads[1];
  if (c.needs(2)) result[2] = bias_dims.empty() ? c.grad : sum(c.grad, bias_dims);
  return result;
}

// An affine parameter or running statistic: undefined, or of `shape`, on x's device, and of
// x's dtype when `same_dtype` (running statistics may be float32 beside a 16-bit input).
void check_norm_tensor(const char* op, const char* name, const Tensor& t, const Tensor& x,
                       const Shape& shape, bool same_dtype = true) {
  if (!t.defined()) return;
  LG_CHECK_SHAPE(t.shape() == shape, op, ": expected ", name, " of shape ", shape, ", got ",
                 t.shape(), " (input of shape ", x.shape(), ")");
  LG_CHECK_DTYPE(same_dtype ? t.dtype() == x.dtype() : is_floating(t.dtype()), op, ": ", name,
                 " has dtype ", t.dtype(), ", the input ", x.dtype());
  LG_CHECK_DEVICE(t.device() == x.device(), op, ": ", name, " is on ", t.device(),
                  ", the input on ", x.device());
}

// batch_norm's and instance_norm's per-channel tensors: weight and bias (x's dtype) and the
// running statistics (any floating dtype), each (channels,) or undefined, on x's device, and the
// two statistics both given or neither.
void check_channel_statistics(const char* op, const Tensor& x, std::int64_t channels,
                              const Tensor& weight, const Tensor& bias, const Tensor& running_mean,
                              const Tensor& running_var) {
  check_norm_tensor(op, "weight", weight, x, {channels});
  check_norm_tensor(op, "bias", bias, x, {channels});
  check_norm_tensor(op, "running_mean", running_mean, x, {channels}, /*same_dtype=*/false);
  check_norm_tensor(op, "running_var", running_var, x, {channels}, /*same_dtype=*/false);
  LG_CHECK(running_mean.defined() == running_var.defined(), op,
           ": expected both running_mean and running_var or neither");
}

// running = (1 - momentum) running + momentum batch for both statistics, in place (`op` names
// them in errors); no grad.
void move_running_stats(const char* op, const Tensor& running_mean, const Tensor& running_var,
                        const Tensor& mean, const Tensor& var, double momentum) {
  // Both buffers checked before either changes: a failure leaves the statistics as they were.
  check_writable((std::string(op) + ": running_mean").c_str(), running_mean);
  check_writable((std::string(op) + ": running_var").c_str(), running_var);
  ops::binary_(BinaryOp::Mul, running_mean, 1.0 - momentum);
  ops::binary_(BinaryOp::Add, running_mean, mul(mean, momentum));
  ops::binary_(BinaryOp::Mul, running_var, 1.0 - momentum);
  ops::binary_(BinaryOp::Add, running_var, mul(var, momentum));
}

// running = (1 - momentum) running + momentum batch, in place, with the unbiased variance of the
// `count` values per channel. The batch's biased variance comes back from the rstd the kernel
// kept: var = rstd^-2 - eps has an absolute error of a few ulps of var + eps, which is what
// evaluation adds eps to again (Note [Normalization kernels of their own]).
void update_running_stats(const Tensor& running_mean, const Tensor& running_var,
                          const Tensor& batch_mean, const Tensor& batch_rstd, std::int64_t count,
                          double momentum, double eps) {
  const NoGradGuard no_grad;
  const std::int64_t channels = running_mean.numel();
  const Tensor mean = reshape(batch_mean, {channels});
  const double unbias = static_cast<double>(count) / static_cast<double>(count - 1);
  const Tensor var =
      mul(clamp_min(sub(pow(reshape(batch_rstd, {channels}), -2.0), eps), 0.0), unbias);
  move_running_stats("batch_norm", running_mean, running_var, mean, var, momentum);
}

}  // namespace

// ---- Backward kernels that differentiate again ----------------------------------------------
//
// Note [Fused backwards that differentiate again]
// tanhexp, conv2d, conv_transpose2d, dropout, softmax, log_softmax, embedding, interpolate,
// max_pool2d, avg_pool2d, nll_loss and cross_entropy compute their backward with a fused kernel.
// Each such kernel's result is recorded as an op of its own (tanhexp_backward, conv2d_input_grad,
// ...) whose backward is written with the public functions or with these recorded kernels, so a
// gradient taken with create_graph=true can be differentiated again: gradient penalties through a
// CNN, Hessian-vector products, and third derivatives, since those backwards record too.
// - The first derivative stays the kernel's, bit for bit with or without create_graph.
// - record_op records nothing when grad mode is off or nothing requires grad, so a plain
//   backward costs what it did.
// - The formulas, for an upstream gradient gg of the backward's result:
//   - a backward linear in g has its adjoint as the gradient with respect to g: dropout's is
//     itself, conv2d_input_grad's is conv2d, conv2d_weight_grad's is conv2d of x with gg as the
//     weight, upsample2d_backward's is upsample2d, avg_pool2d_backward's is avg_pool2d,
//     max_pool2d_backward's takes gg at each window's argmax (gather_at_argmax),
//     nll_loss_backward's is nll_loss, and embedding_backward's is the lookup of gg's rows (0
//     for the padding row, whose gradient the forward drops);
//   - conv2d's gradients are bilinear: d<gg, input_grad(g, w)>/dw = weight_grad(g, gg) and
//     d<gg, weight_grad(g, x)>/dx = input_grad(g, gg). conv_transpose2d is conv2d_input_grad
//     (Note [ConvTranspose2d as conv2d's gradient]), so it gets all of this by being recorded
//     as that op;
//   - softmax's dx = y (g - sum(g y)) is symmetric in g: its adjoint is itself; with respect to
//     y, gg (g - sum(g y)) - g sum(gg y). log_softmax's dx = g - e^y sum(g): gg - sum(gg e^y)
//     and -gg e^y sum(g);
//   - tanhexp's dx = g f'(x), f'(x) = t + x u s with u = e^x, t = tanh(u), s = sech^2(u): with
//     respect to g, tanhexp_backward again; with respect to x, gg g f''(x), f''(x) =
//     u s (2 + x - 2 x u t) (tanhexp_second_derivative).
// cross_entropy's backward g s (softmax(x) - onehot) is recorded with its derivatives in g and x
// (cross_entropy_backward_fn). The normalizations differentiate a composite instead (Note
// [Normalizations differentiated twice]). No built-in op records DoubleBackward::NotImplemented
// any more; it stays for a fused kernel added without a derivative (Note [Double backward] in
// engine.cpp).
namespace {

Tensor tanhexp_backward_fn(const Tensor& g, const Tensor& x);

// f''(x) of f(x) = x tanh(e^x), written with the differentiable functions. e^x is taken at
// min(x, 20): beyond 20, sech^2(e^x) < e^(-9.7e8) rounds to 0 in every dtype, so f'' is 0 there
// either way, and the clamp keeps e^x finite (e^x * 0 would be NaN past e^x = inf). sech^2(u) is
// 4w / (1 + w)^2 with w = e^(-2u), which has no cancellation (1 - tanh^2 would lose every digit
// as tanh(u) nears 1).
Tensor tanhexp_second_derivative(const Tensor& x) {
  const Tensor u = exp(clamp(x, std::nullopt, 20.0));
  const Tensor t = tanh(u);
  const Tensor w = exp(mul(u, -2.0));
  const Tensor one_plus_w = add(w, 1.0);
  const Tensor sech2 = div(mul(w, 4.0), mul(one_plus_w, one_plus_w));
  const Tensor bracket = sub(add(x, 2.0), mul(mul(mul(x, u), t), 2.0));
  return mul(mul(u, sech2), bracket);
}

Tensor tanhexp_backward_fn(const Tensor& g, const Tensor& x) {
  return record_op("tanhexp_backward", ops::tanhexp_backward(g, x), {g, x}, {g, x},
                   [](const BackwardContext& c) -> std::vector<Tensor> {
                     const Tensor& g_saved = c.saved[0];
                     const Tensor& x_saved = c.saved[1];
                     std::vector<Tensor> grads(2);
                     if (c.needs(0)) grads[0] = tanhexp_backward_fn(c.grad, x_saved);
                     if (c.needs(1))
                       grads[1] = mul(mul(c.grad, g_saved), tanhexp_second_derivative(x_saved));
                     return grads;
                   });
}

Tensor dropout_backward_fn(const Tensor& g, const Tensor& mask, double p) {
  return record_op("dropout_backward", ops::dropout_backward(g, mask, p), {g}, {mask},
                   [p](const BackwardContext& c) -> std::vector<Tensor> {
                     return {dropout_backward_fn(c.grad, c.saved[0], p)};
                   });
}

Tensor softmax_backward_fn(const Tensor& g, const Tensor& y, std::int64_t dim, bool log) {
  return record_op(log ? "log_softmax_backward" : "softmax_backward",
                   ops::softmax_backward(g, y, dim, log), {g, y}, {g, y},
                   [dim, log](const BackwardContext& c) -> std::vector<Tensor> {
                     const Tensor& gg = c.grad;
                     const Tensor& g_saved = c.saved[0];
                     const Tensor& y_saved = c.saved[1];
                     std::vector<Tensor> grads(2);
                     if (log) {
                       const Tensor p = exp(y_saved);
                       if (c.needs(0)) grads[0] = sub(gg, sum(mul(gg, p), {dim}, /*keepdim=*/true));
                       if (c.needs(1))
                         grads[1] = neg(mul(mul(gg, p), sum(g_saved, {dim}, /*keepdim=*/true)));
                     } else {
                       if (c.needs(0))
                         grads[0] = softmax_backward_fn(gg, y_saved, dim, /*log=*/false);
                       if (c.needs(1)) {
                         const Tensor g_dot_y = sum(mul(g_saved, y_saved), {dim}, /*keepdim=*/true);
                         const Tensor gg_dot_y = sum(mul(gg, y_saved), {dim}, /*keepdim=*/true);
                         grads[1] = sub(mul(gg, sub(g_saved, g_dot_y)), mul(g_saved, gg_dot_y));
                       }
                     }
                     return grads;
                   });
}

// conv2d with the parameters of `p`, no bias: the adjoint of conv2d_input_grad in g.
Tensor conv2d_with(const Tensor& x, const Tensor& w, const ops::Conv2dParams& p) {
  return conv2d(x, w, Tensor(), {p.stride_h, p.stride_w}, {p.pad_h, p.pad_w},
                {p.dilation_h, p.dilation_w}, p.groups);
}

Tensor conv2d_weight_grad_fn(const Tensor& g, const Tensor& x, const Shape& w_shape,
                             const ops::Conv2dParams& p);

// `name` names the node: conv_transpose2d is this op (Note [ConvTranspose2d as conv2d's gradient]).
Tensor conv2d_input_grad_fn(const Tensor& g, const Tensor& w, const Shape& x_shape,
                            const ops::Conv2dParams& p, const char* name = "conv2d_input_grad") {
  return record_op(name, ops::conv2d_input_grad(g, w, x_shape, p), {g, w}, {g, w},
                   [p](const BackwardContext& c) -> std::vector<Tensor> {
                     const Tensor& g_saved = c.saved[0];
                     const Tensor& w_saved = c.saved[1];
                     std::vector<Tensor> grads(2);
                     if (c.needs(0)) grads[0] = conv2d_with(c.grad, w_saved, p);
                     if (c.needs(1))
                       grads[1] = conv2d_weight_grad_fn(g_saved, c.grad, w_saved.shape(), p);
                     return grads;
                   });
}

Tensor conv2d_weight_grad_fn(const Tensor& g, const Tensor& x, const Shape& w_shape,
                             const ops::Conv2dParams& p) {
  return record_op("conv2d_weight_grad", ops::conv2d_weight_grad(g, x, w_shape, p), {g, x}, {g, x},
                   [p](const BackwardContext& c) -> std::vector<Tensor> {
                     const Tensor& g_saved = c.saved[0];
                     const Tensor& x_saved = c.saved[1];
                     std::vector<Tensor> grads(2);
                     if (c.needs(0)) grads[0] = conv2d_with(x_saved, c.grad, p);
                     if (c.needs(1))
                       grads[1] = conv2d_input_grad_fn(g_saved, c.grad, x_saved.shape(), p);
                     return grads;
                   });
}

// Interpolation is linear: upsample2d and upsample2d_backward are each other's adjoint.
struct Resize2d {
  ops::Pool2dSize out_size;
  ops::Resize2dScales scales;
  layers_math::ResizeMode mode;
  bool corners;
};

Tensor upsample2d_backward_fn(const Tensor& g, const Shape& x_shape, const Resize2d& r);

Tensor upsample2d_fn(const char* name, const Tensor& x, const Resize2d& r) {
  return record_op(name, ops::upsample2d(x, r.out_size, r.scales, r.mode, r.corners), {x}, {},
                   [r](const BackwardContext& c) -> std::vector<Tensor> {
                     return {upsample2d_backward_fn(c.grad, c.shape(0), r)};
                   });
}

Tensor upsample2d_backward_fn(const Tensor& g, const Shape& x_shape, const Resize2d& r) {
  return record_op("interpolate_backward",
                   ops::upsample2d_backward(g, x_shape, r.scales, r.mode, r.corners), {g}, {},
                   [r](const BackwardContext& c) -> std::vector<Tensor> {
                     return {upsample2d_fn("interpolate", c.grad, r)};
                   });
}

// The embedding's weight gradient is linear in g: row r sums the g_i with index_i = r, except
// the padding row. Its adjoint picks row index_i of gg for each i, 0 for the padding row.
Tensor embedding_fn(const Tensor& indices, const Tensor& weight, std::int64_t pad);

Tensor embedding_backward_fn(const Tensor& g, const Tensor& indices, std::int64_t num_embeddings,
                             std::int64_t pad) {
  return record_op("embedding_backward", ops::embedding_backward(g, indices, num_embeddings, pad),
                   {g}, {indices}, [pad](const BackwardContext& c) -> std::vector<Tensor> {
                     const Tensor& gg = c.grad;
                     if (pad < 0) return {embedding_fn(c.saved[0], gg, -1)};
                     Tensor rows = ones({gg.size(0), 1}, gg.options());
                     {
                       NoGradGuard no_grad;
                       ops::fill_(rows.select(0, pad), 0.0);
                     }
                     return {embedding_fn(c.saved[0], mul(gg, rows), -1)};
                   });
}

Tensor embedding_fn(const Tensor& indices, const Tensor& weight, std::int64_t pad) {
  const std::int64_t num_embeddings = weight.size(0);
  // Only the indices are saved: the weight gradient is a scatter-add of the upstream rows.
  return record_op("embedding", ops::embedding(weight, indices), {weight}, {indices},
                   [num_embeddings, pad](const BackwardContext& c) -> std::vector<Tensor> {
                     return {embedding_backward_fn(c.grad, c.saved[0], num_embeddings, pad)};
                   });
}

}  // namespace

// ---- TanhExp, normalization, conv2d ------------------------------------------------------------

Tensor tanhexp(const Tensor& x) {
  LG_PROFILE_OP(x);
  return record_op("tanhexp", ops::tanhexp(x), {x}, {x},
                   [](const BackwardContext& c) -> std::vector<Tensor> {
                     return {tanhexp_backward_fn(c.grad, c.saved[0])};
                   });
}

Tensor group_norm(const Tensor& x, std::int64_t num_groups, const Tensor& weight_in,
                  const Tensor& bias_in, double eps) {
  LG_PROFILE_OP(x, weight_in, bias_in);
  // Under autocast: x's dtype with float32 statistics; the affine parameters follow x.
  const Tensor weight = x.defined() ? amp::autocast_operand_to(weight_in, x.dtype()) : weight_in;
  const Tensor bias = x.defined() ? amp::autocast_operand_to(bias_in, x.dtype()) : bias_in;
  const ops::GroupNormOutput forward = ops::group_norm(x, num_groups, weight, bias, eps);
  std::vector<Tensor> saved = {x, forward.mean, forward.rstd};
  if (weight.defined()) saved.push_back(weight);
  return record_op("group_norm", forward.output, {x, weight, bias}, saved,
                   [num_groups, eps](const BackwardContext& c) -> std::vector<Tensor> {
                     const Tensor weight = c.saved.size() > 3 ? c.saved[3] : Tensor();
                     if (autograd::any_requires_grad({&c.grad, &c.saved[0], &weight})) {
                       return norm_grads_with_graph(
                           c, weight,
                           [num_groups, eps](const Tensor& x, const Tensor& w) {
                             return composite_group_norm(x, num_groups, w, eps);
                           },
                           all_but_channels(c.grad.dim()));
                     }
                     ops::GroupNormGrads g = ops::group_norm_backward(
                         c.grad, c.saved[0], c.saved[1], c.saved[2], weight, num_groups, c.needs(0),
                         c.needs(1), c.needs(2));
                     return {g.grad_input, g.grad_weight, g.grad_bias};
                   });
}

// Note [Normalization kernels of their own]
//   - layer_norm has kernels of its own (ops::layer_norm; Note [LayerNorm layout and math] in
//     kernels/group_norm_math.h): x (*, normalized_shape) seen as (R, M), M =
//     prod(normalized_shape), the per-feature affine map fused into the normalizing pass and its
//     gradients into the backward's. It once ran on group_norm's kernels as (R, 1, M), one
//     group per row, followed by an elementwise mul and add: three passes over memory, and the
//     normalized output saved for mul's backward beside x. Seeing x as (R, M) with GroupNorm's
//     per-channel affine instead fused the affine but put GroupNorm's kernels in their worst
//     layout (per-channel loops of one element): 14x slower for (4096, 768) on the CPU.
//   - batch_norm has kernels of its own too (ops::batch_norm; Note [BatchNorm layout and math]):
//     x (N, C, *) seen as (N, C, S), the batch's statistics per channel (training) or the
//     running ones (evaluation), one elementwise pass each way, and the statistics used saved
//     for backward; the batch's come back for the running statistics' update. It once ran, in
//     training, as GroupNorm of x transposed to (C, N, *) and seen as (1, C, N * S) (a copy of x
//     in and of y out, and of the gradients in backward: (4096, 4096)'s forward and backward
//     took 2.2x LibTorch's time at one thread, and 6 to 8x the own kernels', Note [Vectorised
//     BatchNorm]), and in evaluation as an elementwise mul and add.

// LayerNorm without its bias over the last `dims` dims, written with the public functions: what
// layer_norm's backward differentiates under create_graph (Note [Normalizations differentiated
// twice]). 16-bit input is normalized in float32, as the kernels do.
Tensor composite_layer_norm(const Tensor& x_in, std::int64_t dims, const Tensor& weight,
                            double eps) {
  const Tensor x = is_reduced_precision(x_in.dtype()) ? x_in.to(kFloat32) : x_in;
  DimList over;
  for (std::int64_t d = x.dim() - dims; d < x.dim(); ++d)
    over.push_back(d);
  const Tensor centred = sub(x, mean(x, over, /*keepdim=*/true));
  const Tensor variance = mean(mul(centred, centred), over, /*keepdim=*/true);
  Tensor y = div(centred, sqrt(add(variance, eps)));
  if (weight.defined()) y = mul(y, weight.to(y.dtype()));
  return y;
}

// BatchNorm without its bias, written with the public functions: what batch_norm's backward
// differentiates under create_graph (Note [Normalizations differentiated twice]). Training: the
// batch's statistics recomputed from x; evaluation: the forward's mean and rstd, constants.
// 16-bit input is normalized in float32, as the kernels do.
Tensor composite_batch_norm(const Tensor& x_in, const Tensor& weight, bool training,
                            const Tensor& saved_mean, const Tensor& saved_rstd, double eps) {
  const Tensor x = is_reduced_precision(x_in.dtype()) ? x_in.to(kFloat32) : x_in;
  Shape channel_shape(static_cast<std::size_t>(x.dim()), 1);
  channel_shape[1] = x.size(1);
  Tensor y;
  if (training) {
    const DimList over = all_but_channels(x.dim());
    const Tensor centred = sub(x, mean(x, over, /*keepdim=*/true));
    const Tensor variance = mean(mul(centred, centred), over, /*keepdim=*/true);
    y = div(centred, sqrt(add(variance, eps)));
  } else {
    y = mul(sub(x, reshape(saved_mean.to(x.dtype()), channel_shape)),
            reshape(saved_rstd.to(x.dtype()), channel_shape));
  }
  if (weight.defined()) y = mul(y, reshape(weight.to(y.dtype()), channel_shape));
  return y;
}

Tensor layer_norm(const Tensor& x, const Shape& normalized_shape, const Tensor& weight_in,
                  const Tensor& bias_in, double eps) {
  LG_PROFILE_OP(x, weight_in, bias_in);
  const char* op = "layer_norm";
  autograd::check_floating_input(op, x);
  const std::int64_t k = static_cast<std::int64_t>(normalized_shape.size());
  const bool trailing_match =
      k >= 1 && x.dim() >= k &&
      std::equal(normalized_shape.begin(), normalized_shape.end(), x.shape().end() - k);
  LG_CHECK_SHAPE(trailing_match, op,
                 ": expected an input whose trailing dims are normalized_shape ", normalized_shape,
                 ", got an input of shape ", x.shape());
  const Tensor weight = amp::autocast_operand_to(weight_in, x.dtype());
  const Tensor bias = amp::autocast_operand_to(bias_in, x.dtype());
  check_norm_tensor(op, "weight", weight, x, normalized_shape);
  check_norm_tensor(op, "bias", bias, x, normalized_shape);
  std::int64_t features = 1;
  for (std::int64_t d : normalized_shape)
    features *= d;
  if (features == 0) {  // no element to normalize: an empty output, zero parameter gradients
    Tensor y = composite_layer_norm(x, k, weight, eps).to(x.dtype());
    return bias.defined() ? add(y, bias) : y;
  }
  const ops::GroupNormOutput forward = ops::layer_norm(x, features, weight, bias, eps);
  std::vector<Tensor> saved = {x, forward.mean, forward.rstd};
  if (weight.defined()) saved.push_back(weight);
  return record_op(op, forward.output, {x, weight, bias}, saved,
                   [k, features, eps](const BackwardContext& c) -> std::vector<Tensor> {
                     const Tensor weight = c.saved.size() > 3 ? c.saved[3] : Tensor();
                     if (autograd::any_requires_grad({&c.grad, &c.saved[0], &weight})) {
                       DimList bias_dims;  // the leading dims
                       for (std::int64_t d = 0; d < c.grad.dim() - k; ++d)
                         bias_dims.push_back(d);
                       return norm_grads_with_graph(
                           c, weight,
                           [k, eps](const Tensor& x, const Tensor& w) {
                             return composite_layer_norm(x, k, w, eps);
                           },
                           bias_dims);
                     }
                     ops::GroupNormGrads g = ops::layer_norm_backward(
                         c.grad, c.saved[0], c.saved[1], c.saved[2], weight, features, c.needs(0),
                         c.needs(1), c.needs(2));
                     if (g.grad_bias.defined()) g.grad_bias = reshape(g.grad_bias, c.shape(2));
                     return {g.grad_input, g.grad_weight, g.grad_bias};
                   });
}

Tensor batch_norm(const Tensor& x, const Tensor& running_mean, const Tensor& running_var,
                  const Tensor& weight_in, const Tensor& bias_in, bool training, double momentum,
                  double eps) {
  LG_PROFILE_OP(x, weight_in, bias_in);
  const char* op = "batch_norm";
  // Before reshaping: group_norm's own check would name group_norm and the reshaped shapes.
  autograd::check_floating_input(op, x);
  LG_CHECK_SHAPE(x.dim() >= 2, op, ": expected an input of shape (N, C, *), got ", x.shape());
  const std::int64_t channels = x.size(1);
  const Tensor weight = amp::autocast_operand_to(weight_in, x.dtype());
  const Tensor bias = amp::autocast_operand_to(bias_in, x.dtype());
  check_channel_statistics(op, x, channels, weight, bias, running_mean, running_var);
  LG_CHECK(training || running_mean.defined(), op,
           ": evaluation (training = false) normalizes with running_mean and running_var, "
           "got undefined ones");
  const std::int64_t count = channels > 0 ? x.numel() / channels : 0;
  // One value per channel has no variance; none (an empty batch, no channels) gives an empty
  // result and leaves the running statistics as they were, as PyTorch's.
  LG_CHECK_SHAPE(!training || count != 1, op,
                 ": expected more than 1 value per channel when training, got an input of shape ",
                 x.shape());
  // The kernels (Note [BatchNorm layout and math]): the statistics used, the batch's or the
  // running ones, come back for backward and for the running statistics' update.
  const ops::GroupNormOutput forward =
      ops::batch_norm(x, weight, bias, running_mean, running_var, training, eps);
  std::vector<Tensor> saved = {x, forward.mean, forward.rstd};
  if (weight.defined()) saved.push_back(weight);
  const Tensor y = record_op(op, forward.output, {x, weight, bias}, saved,
                             [training, eps](const BackwardContext& c) -> std::vector<Tensor> {
                               const Tensor weight = c.saved.size() > 3 ? c.saved[3] : Tensor();
                               if (autograd::any_requires_grad({&c.grad, &c.saved[0], &weight})) {
                                 const Tensor mean = c.saved[1], rstd = c.saved[2];
                                 return norm_grads_with_graph(
                                     c, weight,
                                     [training, mean, rstd, eps](const Tensor& x, const Tensor& w) {
                                       return composite_batch_norm(x, w, training, mean, rstd, eps);
                                     },
                                     all_but_channels(c.grad.dim()));
                               }
                               ops::GroupNormGrads g = ops::batch_norm_backward(
                                   c.grad, c.saved[0], c.saved[1], c.saved[2], weight, training,
                                   c.needs(0), c.needs(1), c.needs(2));
                               return {g.grad_input, g.grad_weight, g.grad_bias};
                             });
  if (training && running_mean.defined() && count > 0)
    update_running_stats(running_mean, running_var, forward.mean, forward.rstd, count, momentum,
                         eps);
  return y;
}

// Note [InstanceNorm is GroupNorm]
//   Normalizing each (n, c) slice over its spatial elements is group_norm with one group per
//   channel, so instance_norm with the input's statistics runs group_norm's kernels forward and
//   backward (second derivatives included). The running statistics, when given, move towards
//   the batch's average of the slices' means and unbiased variances, as PyTorch's (which runs
//   batch_norm over (1, N C, *) against N copies of the running statistics, then averages the
//   copies): a second pass over x, in the running statistics' dtype, only then. Without the
//   input's statistics it is batch_norm in evaluation: per channel with the running ones.
Tensor instance_norm(const Tensor& x, const Tensor& running_mean, const Tensor& running_var,
                     const Tensor& weight, const Tensor& bias, bool use_input_stats,
                     double momentum, double eps) {
  LG_PROFILE_OP(x, weight, bias);
  const char* op = "instance_norm";
  autograd::check_floating_input(op, x);
  LG_CHECK_SHAPE(x.dim() >= 3, op, ": expected an input of shape (N, C, *spatial), got ",
                 x.shape());
  const std::int64_t batch = x.size(0), channels = x.size(1);
  check_channel_statistics(op, x, channels, weight, bias, running_mean, running_var);
  if (!use_input_stats) {
    LG_CHECK(running_mean.defined(), op,
             ": use_input_stats = false normalizes with running_mean and running_var, got "
             "undefined ones");
    return batch_norm(x, running_mean, running_var, weight, bias, /*training=*/false, momentum,
                      eps);
  }
  const std::int64_t spatial = shape_numel(Shape(x.shape().begin() + 2, x.shape().end()), op);
  LG_CHECK_SHAPE(spatial > 1, op,
                 ": expected more than 1 spatial element when using the input's statistics, got "
                 "an input of shape ",
                 x.shape());
  LG_CHECK_SHAPE(channels > 0, op, ": expected at least one channel, got an input of shape ",
                 x.shape());
  const Tensor y = group_norm(x, channels, weight, bias, eps);
  if (running_mean.defined() && batch > 0) {
    const NoGradGuard no_grad;
    const Tensor slices = x.detach().to(running_mean.dtype()).reshape({batch, channels, spatial});
    const Tensor mean = leangrad::mean(leangrad::mean(slices, {2}), {0});
    const Tensor var = leangrad::mean(leangrad::var(slices, {2}, /*unbiased=*/true), {0});
    move_running_stats(op, running_mean, running_var, mean, var, momentum);
  }
  return y;
}

// Note [Unbatched convolutions]
//   conv1d, conv2d and their transposes take an unbatched input, (C_in, L) or (C_in, H, W), as
//   torch's have since 1.11 (and conv3d here): a batch of one, whose output drops the batch dim
//   again; the views' backward gives the gradient the input's shape.
Tensor conv2d(const Tensor& x_in, const Tensor& weight_in, const Tensor& bias_in, Size2 stride,
              Size2 padding, Size2 dilation, std::int64_t groups) {
  if (x_in.defined() && x_in.dim() == 3) {  // Note [Unbatched convolutions]
    return squeeze(
        conv2d(unsqueeze(x_in, 0), weight_in, bias_in, stride, padding, dilation, groups), 0);
  }
  LG_PROFILE_OP(x_in, weight_in, bias_in);
  const Tensor x = amp::autocast_operand(x_in, amp::CastPolicy::LowerPrecision);
  const Tensor weight = amp::autocast_operand(weight_in, amp::CastPolicy::LowerPrecision);
  const Tensor bias = amp::autocast_operand(bias_in, amp::CastPolicy::LowerPrecision);
  ops::Conv2dParams p;
  p.stride_h = stride[0], p.stride_w = stride[1];
  p.pad_h = padding[0], p.pad_w = padding[1];
  p.dilation_h = dilation[0], p.dilation_w = dilation[1];
  p.groups = groups;
  const Tensor out = ops::conv2d(x, weight, bias, p);
  std::vector<Tensor> inputs = {x, weight};
  if (bias.defined()) inputs.push_back(bias);
  return record_op("conv2d", out, inputs, {x, weight},
                   [p](const BackwardContext& c) -> std::vector<Tensor> {
                     const Tensor& x_saved = c.saved[0];
                     const Tensor& w_saved = c.saved[1];
                     std::vector<Tensor> grads(c.inputs.size());
                     if (c.needs(0))
                       grads[0] = conv2d_input_grad_fn(c.grad, w_saved, x_saved.shape(), p);
                     if (c.needs(1))
                       grads[1] = conv2d_weight_grad_fn(c.grad, x_saved, w_saved.shape(), p);
                     if (c.inputs.size() == 3 && c.needs(2)) grads[2] = sum(c.grad, {0, 2, 3});
                     return grads;
                   });
}

// conv1d is conv2d over a height of 1: x (N, C, L) -> (N, C, 1, L), weight (C_out, C_in / groups,
// k) -> (C_out, C_in / groups, 1, k), stride, padding and dilation along the width; the views'
// backward brings the gradients back to the 1-D shapes. Its own checks come first, so that an
// error names conv1d and the shapes the caller passed.
Tensor conv1d(const Tensor& x, const Tensor& weight, const Tensor& bias, std::int64_t stride,
              std::int64_t padding, std::int64_t dilation, std::int64_t groups) {
  LG_CHECK(x.defined() && weight.defined(), "conv1d: expected a defined input and weight");
  if (x.dim() == 2) {  // Note [Unbatched convolutions]
    return squeeze(conv1d(unsqueeze(x, 0), weight, bias, stride, padding, dilation, groups), 0);
  }
  LG_CHECK_SHAPE(x.dim() == 3, "conv1d: expected input of shape (N, C_in, L) or unbatched ",
                 "(C_in, L), got ", x.shape());
  LG_CHECK_SHAPE(weight.dim() == 3, "conv1d: expected weight of shape (C_out, C_in / groups, k), ",
                 "got ", weight.shape());
  LG_CHECK_DTYPE(is_floating(x.dtype()) && is_floating(weight.dtype()),
                 "conv1d: expected floating input and weight, got ", x.dtype(), " and ",
                 weight.dtype());
  LG_CHECK_DEVICE(weight.device() == x.device() && (!bias.defined() || bias.device() == x.device()),
                  "conv1d: the input is on ", x.device(), ", the weight on ", weight.device(),
                  bias.defined() ? detail::str_cat(", the bias on ", bias.device()) : "");
  LG_CHECK_SHAPE(stride >= 1 && dilation >= 1 && padding >= 0 && groups >= 1,
                 "conv1d: expected stride >= 1, padding >= 0, dilation >= 1 and groups >= 1, got ",
                 stride, ", ", padding, ", ", dilation, ", ", groups);
  const std::int64_t c_out = weight.size(0);
  LG_CHECK_SHAPE(c_out % groups == 0 && x.size(1) == checked_mul(weight.size(1), groups, "conv1d"),
                 "conv1d: input ", x.shape(), " and weight ", weight.shape(), " with groups ",
                 groups, ": expected C_in = weight.size(1) * groups and C_out divisible by groups");
  LG_CHECK_SHAPE(!bias.defined() || bias.shape() == Shape({c_out}), "conv1d: expected bias of ",
                 "shape [", c_out, "], got ", bias.shape());
  // L_out = (L + 2 padding - dilation (k - 1) - 1) / stride + 1, in checked arithmetic.
  const std::int64_t span =
      checked_add(checked_mul(dilation, weight.size(2) - 1, "conv1d"), std::int64_t{1}, "conv1d");
  const std::int64_t padded = checked_add(x.size(2), checked_mul(padding, 2, "conv1d"), "conv1d");
  LG_CHECK_SHAPE(weight.size(2) >= 1 && padded >= span, "conv1d: input ", x.shape(), " padded by ",
                 padding, " on each side is shorter than the kernel's span ", span, " (weight ",
                 weight.shape(), ", dilation ", dilation, "): no output");
  return squeeze(conv2d(unsqueeze(x, 2), unsqueeze(weight, 2), bias, {1, stride}, {0, padding},
                        {1, dilation}, groups),
                 2);
}

Tensor conv_transpose1d(const Tensor& x, const Tensor& weight, const Tensor& bias,
                        std::int64_t stride, std::int64_t padding, std::int64_t output_padding,
                        std::int64_t groups, std::int64_t dilation) {
  LG_PROFILE_OP(x, weight, bias);
  const char* op = "conv_transpose1d";
  LG_CHECK(x.defined() && weight.defined(), op, ": expected a defined input and weight");
  if (x.dim() == 2) {  // Note [Unbatched convolutions]
    return squeeze(conv_transpose1d(unsqueeze(x, 0), weight, bias, stride, padding, output_padding,
                                    groups, dilation),
                   0);
  }
  LG_CHECK_SHAPE(x.dim() == 3, op,
                 ": expected input of shape (N, C_in, L) or unbatched (C_in, L), ", "got ",
                 x.shape());
  LG_CHECK_SHAPE(weight.dim() == 3, op, ": expected weight of shape (C_in, C_out / groups, k), ",
                 "got ", weight.shape());
  // The rest (strides, channels, output_padding < stride or dilation, dtypes, devices) is checked
  // by conv_transpose2d, over (N, C_in, 1, L): its messages give the 2-d shapes.
  return squeeze(conv_transpose2d(unsqueeze(x, 2), unsqueeze(weight, 2), bias, {1, stride},
                                  {0, padding}, {0, output_padding}, groups, {1, dilation}),
                 2);
}

// Note [ConvTranspose2d as conv2d's gradient]
//   A transposed convolution is the map whose matrix is the transpose of conv2d's: for the conv2d
//   C with input of shape (N, C_out, H_out, W_out), weight w (C_in, C_out / groups, kH, kW) and
//   the same stride, padding and dilation, conv_transpose2d(x, w) = C^T x. So
//     forward              = conv2d's input gradient of "grad_out" x   (ops::conv2d_input_grad)
//     dL/dx = C dy         = conv2d forward of dy with w               (ops::conv2d)
//     dL/dw                = conv2d's weight gradient with "grad_out" x and "input" dy
//                                                                      (ops::conv2d_weight_grad)
//   and every kernel (im2col + GEMM on the CPU, implicit GEMM or cuDNN on CUDA) is conv2d's.
//   output_padding adds rows at the bottom/right that no input reaches; conv2d of that larger
//   image still has H outputs as long as output_padding < stride, which is required here
//   (PyTorch also allows output_padding < dilation).
Tensor conv_transpose2d(const Tensor& x_in, const Tensor& weight_in, const Tensor& bias_in,
                        Size2 stride, Size2 padding, Size2 output_padding, std::int64_t groups,
                        Size2 dilation) {
  if (x_in.defined() && x_in.dim() == 3) {  // Note [Unbatched convolutions]
    return squeeze(conv_transpose2d(unsqueeze(x_in, 0), weight_in, bias_in, stride, padding,
                                    output_padding, groups, dilation),
                   0);
  }
  LG_PROFILE_OP(x_in, weight_in, bias_in);
  const char* op = "conv_transpose2d";
  const Tensor x = amp::autocast_operand(x_in, amp::CastPolicy::LowerPrecision);
  const Tensor weight = amp::autocast_operand(weight_in, amp::CastPolicy::LowerPrecision);
  const Tensor bias = amp::autocast_operand(bias_in, amp::CastPolicy::LowerPrecision);
  LG_CHECK(x.defined() && weight.defined(), op, ": expected defined input and weight");
  LG_CHECK_SHAPE(x.dim() == 4, op,
                 ": expected a 4-D input (N, C_in, H, W) or a 3-D unbatched one (C_in, H, W), got "
                 "shape ",
                 x.shape());
  LG_CHECK_SHAPE(weight.dim() == 4, op,
                 ": expected a 4-D weight (C_in, C_out / groups, kH, kW), got shape ",
                 weight.shape());
  LG_CHECK_SHAPE(groups >= 1 && x.size(1) % groups == 0, op, ": input channels ", x.size(1),
                 " (input shape ", x.shape(), ") must be divisible by groups = ", groups);
  LG_CHECK_SHAPE(weight.size(0) == x.size(1), op, ": weight of shape ", weight.shape(), " expects ",
                 weight.size(0), " input channels, but the input of shape ", x.shape(), " has ",
                 x.size(1));
  LG_CHECK_DTYPE(x.dtype() == weight.dtype(), op, ": expected input and weight of one dtype, got ",
                 x.dtype(), " and ", weight.dtype());
  LG_CHECK_DEVICE(x.device() == weight.device(), op,
                  ": expected input and weight on one device, got ", x.device(), " and ",
                  weight.device());
  for (int d = 0; d < 2; ++d) {
    LG_CHECK_SHAPE(stride[d] >= 1 && dilation[d] >= 1 && padding[d] >= 0 &&
                       output_padding[d] >= 0 && output_padding[d] < stride[d],
                   op, ": expected stride and dilation >= 1, padding >= 0 and 0 <= output_padding",
                   " < stride, got stride (", stride[0], ", ", stride[1], "), padding (",
                   padding[0], ", ", padding[1], "), output_padding (", output_padding[0], ", ",
                   output_padding[1], "), dilation (", dilation[0], ", ", dilation[1], ")");
  }
  const std::int64_t out_channels = checked_mul(weight.size(1), groups, op);
  std::int64_t out_size[2];
  for (int d = 0; d < 2; ++d) {
    // (in - 1) stride - 2 padding + dilation (kernel - 1) + output_padding + 1, checked.
    std::int64_t size = checked_mul(x.size(2 + d) - 1, stride[d], op);
    size = checked_add(size, -checked_mul(padding[d], 2, op), op);
    size = checked_add(size, checked_mul(dilation[d], weight.size(2 + d) - 1, op), op);
    out_size[d] = checked_add(size, output_padding[d] + 1, op);
  }
  LG_CHECK_SHAPE(out_size[0] >= 1 && out_size[1] >= 1, op, ": the output size (", out_size[0], ", ",
                 out_size[1], ") of input ", x.shape(), " with weight ", weight.shape(),
                 ", stride (", stride[0], ", ", stride[1], "), padding (", padding[0], ", ",
                 padding[1], ") is not positive");
  LG_CHECK_SHAPE(!bias.defined() || bias.shape() == Shape{out_channels}, op,
                 ": expected a bias of shape (", out_channels, ") for weight of shape ",
                 weight.shape(), " and groups = ", groups, ", got ",
                 bias.defined() ? bias.shape() : Shape{});
  LG_CHECK_DTYPE(!bias.defined() || bias.dtype() == x.dtype(), op, ": bias has dtype ",
                 bias.defined() ? bias.dtype() : x.dtype(), ", the input ", x.dtype());
  ops::Conv2dParams p;
  p.stride_h = stride[0], p.stride_w = stride[1];
  p.pad_h = padding[0], p.pad_w = padding[1];
  p.dilation_h = dilation[0], p.dilation_w = dilation[1];
  p.groups = groups;
  // See Note [ConvTranspose2d as conv2d's gradient].
  const Shape out_shape = {x.size(0), out_channels, out_size[0], out_size[1]};
  const Tensor out = conv2d_input_grad_fn(x, weight, out_shape, p, op);
  return bias.defined() ? add(out, reshape(bias, {out_channels, 1, 1})) : out;
}

// ---- Layers and losses --------------------------------------------------------------------------

// ---- Linear ----------------------------------------------------------------------------------

Tensor linear(const Tensor& x_in, const Tensor& weight_in, const Tensor& bias_in) {
  LG_PROFILE_OP(x_in, weight_in, bias_in);
  const Tensor x = amp::autocast_operand(x_in, amp::CastPolicy::LowerPrecision);
  const Tensor weight = amp::autocast_operand(weight_in, amp::CastPolicy::LowerPrecision);
  const Tensor bias = amp::autocast_operand(bias_in, amp::CastPolicy::LowerPrecision);
  LG_CHECK(x.defined() && weight.defined(), "linear: expected defined input and weight");
  LG_CHECK_SHAPE(weight.dim() == 2, "linear: expected weight of shape (out_features, in_features),",
                 " got ", weight.shape());
  const std::int64_t in_features = weight.size(1), out_features = weight.size(0);
  LG_CHECK_SHAPE(x.dim() >= 1 && x.size(-1) == in_features, "linear: expected input of shape (*, ",
                 in_features, ") for weight ", weight.shape(), ", got ", x.shape());
  LG_CHECK_SHAPE(!bias.defined() || bias.shape() == Shape{out_features},
                 "linear: expected bias of shape ", shape_str({out_features}), ", got ",
                 bias.defined() ? bias.shape() : Shape{});
  LG_CHECK_DTYPE(x.dtype() == weight.dtype(),
                 "linear: expected input and weight of one dtype, got ", x.dtype(), " and ",
                 weight.dtype(), " (convert one with .to(dtype))");
  LG_CHECK_DEVICE(x.device() == weight.device(),
                  "linear: expected input and weight on one device, got ", x.device(), " and ",
                  weight.device());
  Tensor y;
  if (x.dim() <= 2) {
    y = matmul(x, transpose(weight, 0, 1));  // (B, in) @ (in, out)
  } else {
    // (*, in) -> (M, in) @ (in, out) -> (*, out)
    Shape out_shape = x.shape();
    out_shape.back() = out_features;
    // The leading dims' product (x.numel() / in_features fails when in_features is 0).
    const std::int64_t rows = shape_numel(Shape(out_shape.begin(), out_shape.end() - 1), "linear");
    y = reshape(matmul(reshape(x, {rows, in_features}), transpose(weight, 0, 1)), out_shape);
  }
  return bias.defined() ? add(y, bias) : y;
}

// ---- Pixel shuffle ---------------------------------------------------------------------------

Tensor pixel_shuffle(const Tensor& x, std::int64_t upscale_factor) {
  LG_PROFILE_OP(x);
  const std::int64_t r = upscale_factor;
  LG_CHECK(x.defined(), "pixel_shuffle: expected a defined input");
  LG_CHECK(r > 0, "pixel_shuffle: expected a positive upscale_factor, got ", r);
  LG_CHECK_SHAPE(x.dim() >= 3, "pixel_shuffle: expected input of shape (*, C r^2, H, W), got ",
                 x.shape());
  const std::int64_t nd = x.dim();
  const std::int64_t c = x.size(-3), h = x.size(-2), w = x.size(-1);
  const std::int64_t r2 = checked_mul(r, r, "pixel_shuffle");
  LG_CHECK_SHAPE(c % r2 == 0, "pixel_shuffle: expected the channel dim ", c, " of input of shape ",
                 x.shape(), " to be divisible by upscale_factor^2 = ", r2);
  const Shape lead(x.shape().begin(), x.shape().end() - 3);
  Shape split = lead, out = lead;
  split.insert(split.end(), {c / r2, r, r, h, w});  // (*, C, r, r, H, W)
  out.insert(out.end(), {c / r2, checked_mul(h, r, "pixel_shuffle"),
                         checked_mul(w, r, "pixel_shuffle")});  // (*, C, H r, W r)
  std::vector<std::int64_t> perm;
  for (std::int64_t d = 0; d < nd - 3; ++d)
    perm.push_back(d);
  const std::int64_t b = nd - 3;
  perm.insert(perm.end(), {b, b + 3, b + 1, b + 4, b + 2});  // (*, C, H, r, W, r)
  return reshape(permute(reshape(x, split), perm), out);
}

Tensor pixel_unshuffle(const Tensor& x, std::int64_t downscale_factor) {
  LG_PROFILE_OP(x);
  const std::int64_t r = downscale_factor;
  LG_CHECK(x.defined(), "pixel_unshuffle: expected a defined input");
  LG_CHECK(r > 0, "pixel_unshuffle: expected a positive downscale_factor, got ", r);
  LG_CHECK_SHAPE(x.dim() >= 3, "pixel_unshuffle: expected input of shape (*, C, H r, W r), got ",
                 x.shape());
  const std::int64_t nd = x.dim();
  const std::int64_t c = x.size(-3), h = x.size(-2), w = x.size(-1);
  LG_CHECK_SHAPE(h % r == 0 && w % r == 0, "pixel_unshuffle: expected H and W of input of shape ",
                 x.shape(), " to be divisible by downscale_factor = ", r);
  const Shape lead(x.shape().begin(), x.shape().end() - 3);
  Shape split = lead, out = lead;
  split.insert(split.end(), {c, h / r, r, w / r, r});  // (*, C, H, r, W, r)
  out.insert(out.end(), {checked_mul(c, checked_mul(r, r, "pixel_unshuffle"), "pixel_unshuffle"),
                         h / r, w / r});  // (*, C r^2, H, W)
  std::vector<std::int64_t> perm;
  for (std::int64_t d = 0; d < nd - 3; ++d)
    perm.push_back(d);
  const std::int64_t b = nd - 3;
  perm.insert(perm.end(), {b, b + 2, b + 4, b + 1, b + 3});  // (*, C, r, r, H, W)
  return reshape(permute(reshape(x, split), perm), out);
}

// ---- Pooling ---------------------------------------------------------------------------------

namespace {
// max_pool2d and max_pool2d_with_indices: one node, which saves the indices.
// The adjoint of max_pool2d's backward in g (Note [Fused backwards that differentiate again]):
// each output position takes gg at its window's argmax, 0 for a window holding no input (index
// -1). A lookup in gg flattened with a 0 appended, through embedding, which differentiates again.
Tensor gather_at_argmax(const Tensor& gg, const Tensor& indices) {
  const std::int64_t plane = gg.size(-2) * gg.size(-1);
  const std::int64_t planes = plane == 0 ? 0 : gg.numel() / plane;
  Tensor rows;
  {
    NoGradGuard no_grad;
    Shape lead = indices.shape();  // (..., 1, 1): one offset per plane
    lead[lead.size() - 2] = lead[lead.size() - 1] = 1;
    const Tensor offsets =
        reshape(arange(0.0, static_cast<double>(planes * plane), static_cast<double>(plane),
                       TensorOptions(kInt64).device(indices.device())),
                lead);
    rows =
        masked_fill(add(indices, offsets), lt(indices, 0.0), static_cast<double>(planes * plane));
  }
  const Tensor table =
      reshape(cat({reshape(gg, {planes * plane}), zeros({1}, gg.options())}, 0), {-1, 1});
  return reshape(embedding(rows, table), indices.shape());
}

Tensor max_pool2d_backward_fn(const Tensor& g, const Tensor& indices, const Shape& x_shape,
                              Size2 kernel, Size2 stride, Size2 padding, Size2 dilation,
                              bool ceil_mode) {
  return record_op(
      "max_pool2d_backward",
      ops::max_pool2d_backward(g, indices, x_shape, kernel, stride, padding, dilation, ceil_mode),
      {g}, {indices}, [](const BackwardContext& c) -> std::vector<Tensor> {
        return {gather_at_argmax(c.grad, c.saved[0])};
      });
}

std::tuple<Tensor, Tensor> record_max_pool2d(const Tensor& x, Size2 kernel, Size2 stride,
                                             Size2 padding, Size2 dilation, bool ceil_mode) {
  ops::MaxPool2dResult r = ops::max_pool2d(x, kernel, stride, padding, dilation, ceil_mode);
  Tensor out = record_op("max_pool2d", r.out, {x}, {r.indices},
                         [=](const BackwardContext& c) -> std::vector<Tensor> {
                           return {max_pool2d_backward_fn(c.grad, c.saved[0], c.shape(0), kernel,
                                                          stride, padding, dilation, ceil_mode)};
                         });
  return {out, r.indices};
}

// avg_pool2d and its backward are each other's adjoint.
struct AvgPool2dParams {
  Size2 kernel, stride, padding;
  bool ceil_mode;
  bool count_include_pad;
  std::optional<std::int64_t> divisor_override;
};

Tensor avg_pool2d_backward_fn(const Tensor& g, const Shape& x_shape, const AvgPool2dParams& a);

Tensor avg_pool2d_fn(const Tensor& x, const AvgPool2dParams& a) {
  return record_op("avg_pool2d",
                   ops::avg_pool2d(x, a.kernel, a.stride, a.padding, a.ceil_mode,
                                   a.count_include_pad, a.divisor_override),
                   {x}, {}, [a](const BackwardContext& c) -> std::vector<Tensor> {
                     return {avg_pool2d_backward_fn(c.grad, c.shape(0), a)};
                   });
}

Tensor avg_pool2d_backward_fn(const Tensor& g, const Shape& x_shape, const AvgPool2dParams& a) {
  return record_op("avg_pool2d_backward",
                   ops::avg_pool2d_backward(g, x_shape, a.kernel, a.stride, a.padding, a.ceil_mode,
                                            a.count_include_pad, a.divisor_override),
                   {g}, {}, [a](const BackwardContext& c) -> std::vector<Tensor> {
                     return {avg_pool2d_fn(c.grad, a)};
                   });
}
}  // namespace

Tensor max_pool2d(const Tensor& x, Size2 kernel, Size2 stride, Size2 padding, Size2 dilation,
                  bool ceil_mode) {
  LG_PROFILE_OP(x);
  return std::get<0>(record_max_pool2d(x, kernel, stride, padding, dilation, ceil_mode));
}

std::tuple<Tensor, Tensor> max_pool2d_with_indices(const Tensor& x, Size2 kernel, Size2 stride,
                                                   Size2 padding, Size2 dilation, bool ceil_mode) {
  LG_PROFILE_OP(x);
  return record_max_pool2d(x, kernel, stride, padding, dilation, ceil_mode);
}

Tensor avg_pool2d(const Tensor& x, Size2 kernel, Size2 stride, Size2 padding, bool ceil_mode,
                  bool count_include_pad, std::optional<std::int64_t> divisor_override) {
  LG_PROFILE_OP(x);
  return avg_pool2d_fn(
      x, AvgPool2dParams{kernel, stride, padding, ceil_mode, count_include_pad, divisor_override});
}

// Note [Adaptive average pooling]
// An adaptive window is a rectangle, rows [r0, r1) by columns [c0, c1), so its average is the
// average over its rows of the average over its columns: out = P_H x P_W^T, where P_H (OH, H) holds
// 1 / (r1 - r0) on row i's window and 0 elsewhere. Two matmuls (GEMMs on every device) instead of
// a kernel of its own, and a gradient that is two matmuls again; the matrices cost OH H + OW W
// elements. PyTorch sums each window and divides once: the results differ in the last bits.
// The global pooling of classifier heads (a 1 x 1 output) is the mean over H and W, as PyTorch
// computes it.
namespace {

// P (out, in) of the Note, in x's dtype and on its device.
Tensor adaptive_average_matrix(std::int64_t in, std::int64_t out, const Tensor& like) {
  const char* op = "adaptive_avg_pool2d";
  Tensor m = zeros({out, in}, kFloat64);  // the allocator's checks, not a std::vector's
  double* p = m.data_ptr<double>();
  for (std::int64_t i = 0; i < out; ++i) {
    const std::int64_t start = checked_mul(i, in, op) / out;
    const std::int64_t end = (checked_mul(i + 1, in, op) + out - 1) / out;
    for (std::int64_t j = start; j < end; ++j)
      p[i * in + j] = 1.0 / static_cast<double>(end - start);
  }
  return m.to(like.dtype()).to(like.device());
}

}  // namespace

Tensor adaptive_avg_pool2d(const Tensor& x, Size2 output_size) {
  LG_PROFILE_OP(x);
  const char* op = "adaptive_avg_pool2d";
  autograd::check_floating_input(op, x);
  LG_CHECK_SHAPE(x.dim() == 3 || x.dim() == 4, op,
                 ": expected (N, C, H, W) or (C, H, W) input, got ", x.shape());
  const std::int64_t oh = output_size[0], ow = output_size[1];
  LG_CHECK_SHAPE(oh >= 0 && ow >= 0, op, ": expected a non-negative output size, got [", oh, ", ",
                 ow, "] for input ", x.shape());
  // The global pooling first, as PyTorch: over an empty plane it is the mean of nothing, NaN.
  if (oh == 1 && ow == 1) return mean(x, {-2, -1}, /*keepdim=*/true);
  const std::int64_t h = x.shape()[x.dim() - 2], w = x.shape()[x.dim() - 1];
  LG_CHECK_SHAPE(h > 0 && w > 0, op, ": expected a non-empty plane, got input ", x.shape());
  const std::int64_t planes = x.numel() / (h * w);
  checked_mul(checked_mul(planes, oh, op), ow, op);
  Shape out_shape = x.shape();
  out_shape[out_shape.size() - 2] = oh;
  out_shape[out_shape.size() - 1] = ow;
  // matmul takes up to 3-d operands: the planes are its batch.
  const Tensor rows = matmul(adaptive_average_matrix(h, oh, x), x.reshape({planes, h, w}));
  return matmul(rows, t(adaptive_average_matrix(w, ow, x))).reshape(out_shape);
}

// Adaptive max pooling: one node that saves the indices; its backward adds each output's gradient
// at its argmax (ops::adaptive_max_pool2d_backward) and is recorded itself, its own gradient being
// the gather at the argmax (gather_at_argmax), so it differentiates again, as max_pool2d.
namespace {

Tensor adaptive_max_pool2d_backward_fn(const Tensor& g, const Tensor& indices,
                                       const Shape& x_shape) {
  return record_op("adaptive_max_pool2d_backward",
                   ops::adaptive_max_pool2d_backward(g, indices, x_shape), {g}, {indices},
                   [](const BackwardContext& c) -> std::vector<Tensor> {
                     return {gather_at_argmax(c.grad, c.saved[0])};
                   });
}

std::tuple<Tensor, Tensor> record_adaptive_max_pool2d(const Tensor& x, Size2 output_size) {
  ops::MaxPool2dResult r = ops::adaptive_max_pool2d(x, output_size);
  Tensor out = record_op("adaptive_max_pool2d", r.out, {x}, {r.indices},
                         [](const BackwardContext& c) -> std::vector<Tensor> {
                           return {adaptive_max_pool2d_backward_fn(c.grad, c.saved[0], c.shape(0))};
                         });
  return {out, r.indices};
}

// adaptive_max_pool1d is the 2-D pooling of (..., 1, L) to (1, output_size), as PyTorch computes
// it; the indices h * L + w are then the positions w in L.
std::tuple<Tensor, Tensor> record_adaptive_max_pool1d(const Tensor& x, std::int64_t output_size) {
  const char* op = "adaptive_max_pool1d";
  autograd::check_floating_input(op, x);
  LG_CHECK_SHAPE(x.dim() == 2 || x.dim() == 3, op, ": expected a 2-D (C, L) or 3-D (N, C, L) ",
                 "input, got shape ", x.shape());
  for (std::int64_t d = x.dim() - 2; d < x.dim(); ++d) {
    LG_CHECK_SHAPE(x.size(d) > 0, op,
                   ": expected input to have non-zero size for non-batch dimensions, got shape ",
                   x.shape());
  }
  LG_CHECK_SHAPE(output_size >= 0, op, ": expected a non-negative output size, got ", output_size,
                 " for input ", x.shape());
  auto [out, indices] = record_adaptive_max_pool2d(unsqueeze(x, -2), {1, output_size});
  return {squeeze(out, -2), squeeze(indices, -2)};
}

}  // namespace

Tensor adaptive_max_pool2d(const Tensor& x, Size2 output_size) {
  LG_PROFILE_OP(x);
  return std::get<0>(record_adaptive_max_pool2d(x, output_size));
}

std::tuple<Tensor, Tensor> adaptive_max_pool2d_with_indices(const Tensor& x, Size2 output_size) {
  LG_PROFILE_OP(x);
  return record_adaptive_max_pool2d(x, output_size);
}

Tensor adaptive_max_pool1d(const Tensor& x, std::int64_t output_size) {
  LG_PROFILE_OP(x);
  return std::get<0>(record_adaptive_max_pool1d(x, output_size));
}

std::tuple<Tensor, Tensor> adaptive_max_pool1d_with_indices(const Tensor& x,
                                                            std::int64_t output_size) {
  LG_PROFILE_OP(x);
  return record_adaptive_max_pool1d(x, output_size);
}

// ---- 1-d pooling ------------------------------------------------------------------------------

namespace {

// The checks of a 1-d pooling, in its own name (the 2-d function would name itself), and the
// stride it means (0: the kernel). Its output length, layers_math::pooled_size, must be at
// least 1.
std::int64_t check_pool1d(const char* op, const Tensor& x, std::int64_t kernel, std::int64_t stride,
                          std::int64_t padding, std::int64_t dilation, bool ceil_mode) {
  autograd::check_floating_input(op, x);
  LG_CHECK_SHAPE(x.dim() == 2 || x.dim() == 3, op, ": expected (N, C, L) or (C, L) input, got ",
                 x.shape());
  LG_CHECK(kernel > 0, op, ": kernel_size must be positive, got ", kernel);
  LG_CHECK(stride >= 0, op, ": stride must be positive (or 0 for the kernel size), got ", stride);
  if (stride == 0) stride = kernel;
  LG_CHECK(dilation > 0, op, ": dilation must be positive, got ", dilation);
  LG_CHECK(padding >= 0 && padding <= kernel / 2, op,
           ": padding must be in [0, kernel_size / 2] = [0, ", kernel / 2, "], got ", padding);
  const std::int64_t length = x.size(-1);
  // Below 2^31 (the 2-d pooling's own bound) the arithmetic below cannot overflow.
  constexpr std::int64_t kMaxParam = std::int64_t{1} << 31;
  LG_CHECK(kernel < kMaxParam && stride < kMaxParam && dilation < kMaxParam && length < kMaxParam,
           op, ": kernel_size, stride, dilation and the input length must be below 2^31, got ",
           kernel, ", ", stride, ", ", dilation, " and ", length);
  const std::int64_t out =
      layers_math::pooled_size(length, kernel, stride, padding, dilation, ceil_mode);
  LG_CHECK_SHAPE(out >= 1, op, ": input ", x.shape(), " is too short for kernel_size ", kernel,
                 ", dilation ", dilation, " and padding ", padding,
                 " (the output would have length ", out, ")");
  return stride;
}

}  // namespace

Tensor max_pool1d(const Tensor& x, std::int64_t kernel, std::int64_t stride, std::int64_t padding,
                  std::int64_t dilation, bool ceil_mode) {
  LG_PROFILE_OP(x);
  return std::get<0>(max_pool1d_with_indices(x, kernel, stride, padding, dilation, ceil_mode));
}

std::tuple<Tensor, Tensor> max_pool1d_with_indices(const Tensor& x, std::int64_t kernel,
                                                   std::int64_t stride, std::int64_t padding,
                                                   std::int64_t dilation, bool ceil_mode) {
  LG_PROFILE_OP(x);
  stride = check_pool1d("max_pool1d", x, kernel, stride, padding, dilation, ceil_mode);
  auto [out, indices] = record_max_pool2d(unsqueeze(x, -2), {1, kernel}, {1, stride}, {0, padding},
                                          {1, dilation}, ceil_mode);
  return {squeeze(out, -2), squeeze(indices, -2)};  // h * L + w with h = 0: the position in L
}

Tensor avg_pool1d(const Tensor& x, std::int64_t kernel, std::int64_t stride, std::int64_t padding,
                  bool ceil_mode, bool count_include_pad) {
  LG_PROFILE_OP(x);
  stride = check_pool1d("avg_pool1d", x, kernel, stride, padding, 1, ceil_mode);
  return squeeze(
      avg_pool2d_fn(
          unsqueeze(x, -2),
          AvgPool2dParams{
              {1, kernel}, {1, stride}, {0, padding}, ceil_mode, count_include_pad, std::nullopt}),
      -2);
}

Tensor adaptive_avg_pool1d(const Tensor& x, std::int64_t output_size) {
  LG_PROFILE_OP(x);
  const char* op = "adaptive_avg_pool1d";
  autograd::check_floating_input(op, x);
  LG_CHECK_SHAPE(x.dim() == 2 || x.dim() == 3, op, ": expected (N, C, L) or (C, L) input, got ",
                 x.shape());
  LG_CHECK_SHAPE(output_size >= 0, op, ": expected a non-negative output size, got ", output_size,
                 " for input ", x.shape());
  return squeeze(adaptive_avg_pool2d(unsqueeze(x, -2), {1, output_size}), -2);
}

// ---- Dropout ---------------------------------------------------------------------------------

Tensor dropout(const Tensor& x, double p, bool training) {
  LG_PROFILE_OP(x);
  LG_CHECK(p >= 0.0 && p <= 1.0, "dropout: expected a probability p in [0, 1], got ", p);
  if (!training || p == 0.0) return x;
  // Only the mask (1 byte an element) is saved: the backward is grad * mask / (1 - p).
  ops::DropoutResult r = ops::dropout(x, p, default_generator(x.device()));
  return record_op("dropout", r.out, {x}, {r.mask},
                   [p](const BackwardContext& c) -> std::vector<Tensor> {
                     return {dropout_backward_fn(c.grad, c.saved[0], p)};
                   });
}

// ---- Embedding -------------------------------------------------------------------------------

namespace {

// The row padding_idx names in a weight of num_embeddings rows (negative counts from the end, as
// PyTorch), or -1 for none; `op` names the function in the Error.
std::int64_t padding_row(const char* op, std::optional<std::int64_t> padding_idx,
                         std::int64_t num_embeddings) {
  if (!padding_idx.has_value()) return -1;
  const std::int64_t pad = *padding_idx < 0 ? *padding_idx + num_embeddings : *padding_idx;
  LG_CHECK(pad >= 0 && pad < num_embeddings, op, ": padding_idx ", *padding_idx,
           " is out of range for a weight of ", num_embeddings, " embeddings (expected [",
           -num_embeddings, ", ", num_embeddings - 1, "])");
  return pad;
}

}  // namespace

Tensor embedding(const Tensor& indices, const Tensor& weight,
                 std::optional<std::int64_t> padding_idx) {
  LG_PROFILE_OP(indices, weight);
  const std::int64_t num_embeddings = weight.size(0);
  return embedding_fn(indices, weight, padding_row("embedding", padding_idx, num_embeddings));
}

// ---- EmbeddingBag ------------------------------------------------------------------------------

const char* embedding_bag_mode_name(EmbeddingBagMode mode) {
  switch (mode) {
    case EmbeddingBagMode::Sum:
      return "sum";
    case EmbeddingBagMode::Mean:
      return "mean";
    case EmbeddingBagMode::Max:
      return "max";
  }
  return "?";
}

// Note [Bags by index_add]
// embedding_bag is composed, so it differentiates to any order on every device:
//  - the host lays the bags out from input and offsets: the entries kept (not padding_idx), the
//    bag of each, its position within the bag, and each bag's count;
//  - embedding gathers the kept rows (K, D), scaled by their per_sample_weights;
//  - kSum adds row k into output row bag[k] (index_add; its backward gathers the bag's gradient
//    back to each row, and embedding's adds those into the weight gradient); kMean divides the
//    sums by the counts (an empty bag by 1: zeros);
//  - kMax places row k at (bag[k], position[k]) of a (bags, longest bag, D) block whose empty
//    places are -inf, and takes max over the positions, whose gradient goes to the first maximum
//    (PyTorch's choice); an empty bag's -inf becomes 0. The block costs bags x longest bag x D.
Tensor embedding_bag(const Tensor& input, const Tensor& weight, const Tensor& offsets,
                     EmbeddingBagMode mode, const Tensor& per_sample_weights,
                     bool include_last_offset, std::optional<std::int64_t> padding_idx) {
  LG_PROFILE_OP(input, weight);
  const char* op = "embedding_bag";
  autograd::check_floating_input(op, weight);
  LG_CHECK_SHAPE(weight.dim() == 2, op, ": expected weight (num_embeddings, embedding_dim), got ",
                 weight.shape());
  LG_CHECK(input.defined(), op, ": input is an undefined Tensor()");
  LG_CHECK_DTYPE(input.dtype() == kInt64, op, ": expected int64 indices, got ", input.dtype());
  LG_CHECK_SHAPE(input.dim() == 1 || input.dim() == 2, op,
                 ": expected input of 2 dims (bags, n) or 1 (with offsets), got ", input.shape());
  const std::int64_t num_embeddings = weight.size(0), dim = weight.size(1);
  const std::int64_t length = input.numel();
  // Each bag's first entry, and one past the last bag's end.
  std::vector<std::int64_t> starts;
  if (input.dim() == 2) {
    LG_CHECK(!offsets.defined(), op, ": offsets must be undefined for 2-D input ", input.shape(),
             " (each row is a bag)");
    for (std::int64_t b = 0; b <= input.size(0); ++b)
      starts.push_back(b * input.size(1));
  } else {
    LG_CHECK(offsets.defined(), op, ": 1-D input ", input.shape(),
             " needs offsets, the start of each bag");
    LG_CHECK_DTYPE(offsets.dtype() == kInt64, op, ": expected int64 offsets, got ",
                   offsets.dtype());
    LG_CHECK_SHAPE(offsets.dim() == 1, op, ": expected 1-D offsets, got ", offsets.shape());
    const Tensor host = offsets.to(Device::cpu()).contiguous();
    const std::int64_t* o = host.data_ptr<std::int64_t>();
    starts.assign(o, o + host.numel());
    if (include_last_offset) {
      LG_CHECK_SHAPE(!starts.empty(), op, ": include_last_offset needs at least one offset");
    } else if (starts.empty()) {
      starts.push_back(0);  // no offsets: no bags, as PyTorch's (no index is in one)
    } else {
      starts.push_back(length);
    }
    LG_CHECK(starts.front() == 0, op, ": offsets[0] must be 0 (the first bag starts the input), ",
             "got ", starts.front());
    for (std::size_t i = 1; i < starts.size(); ++i) {
      LG_CHECK(starts[i] >= starts[i - 1] && starts[i] <= length, op,
               ": offsets must be non-decreasing and at most the input's length ", length, ", got ",
               starts[i], " after ", starts[i - 1]);
    }
    LG_CHECK(!include_last_offset || starts.back() == length, op,
             ": with include_last_offset the last offset must be the input's length ", length,
             ", got ", starts.back());
  }
  const std::int64_t bags = static_cast<std::int64_t>(starts.size()) - 1;
  LG_CHECK(!per_sample_weights.defined() || mode == EmbeddingBagMode::Sum, op,
           ": per_sample_weights are only supported with mode sum, got mode ",
           embedding_bag_mode_name(mode));
  if (per_sample_weights.defined()) {
    LG_CHECK_SHAPE(per_sample_weights.shape() == input.shape(), op,
                   ": expected per_sample_weights of input's shape ", input.shape(), ", got ",
                   per_sample_weights.shape());
    autograd::check_operands(op, {weight, per_sample_weights});
  }
  const std::int64_t pad = padding_row(op, padding_idx, num_embeddings);
  // The layout of the bags (Note [Bags by index_add]).
  const Tensor host_input = input.to(Device::cpu()).contiguous();
  const std::int64_t* in = host_input.data_ptr<std::int64_t>();
  std::vector<std::int64_t> kept, kept_index, bag_of, position,
      counts(static_cast<std::size_t>(bags));
  for (std::int64_t b = 0; b < bags; ++b) {
    for (std::int64_t i = starts[static_cast<std::size_t>(b)];
         i < starts[static_cast<std::size_t>(b) + 1]; ++i) {
      if (padding_idx.has_value() && in[i] == pad) continue;  // (-1 is "none", not an index)
      kept.push_back(i);
      kept_index.push_back(in[i]);
      bag_of.push_back(b);
      position.push_back(counts[static_cast<std::size_t>(b)]++);
    }
  }
  const auto on_device = [&](const std::vector<std::int64_t>& v) {
    return tensor(v, {static_cast<std::int64_t>(v.size())}).to(weight.device());
  };
  Tensor rows = embedding(on_device(kept_index), weight);  // (K, D); checks the indices' range
  if (per_sample_weights.defined()) {
    rows = mul(
        rows, unsqueeze(index_select(per_sample_weights.reshape({length}), 0, on_device(kept)), 1));
  }
  const Tensor bag = on_device(bag_of);
  if (mode != EmbeddingBagMode::Max) {
    Tensor out = index_add(zeros({bags, dim}, weight.options()), 0, bag, rows);
    if (mode == EmbeddingBagMode::Sum) return out;
    std::vector<double> divisors(counts.size());
    for (std::size_t b = 0; b < counts.size(); ++b)
      divisors[b] = static_cast<double>(std::max<std::int64_t>(counts[b], 1));
    return div(out, tensor(divisors, {bags, 1}).to(weight.dtype()).to(weight.device()));
  }
  const std::int64_t longest = counts.empty() ? 0 : *std::max_element(counts.begin(), counts.end());
  if (longest == 0) return index_add(zeros({bags, dim}, weight.options()), 0, bag, rows);  // zeros
  std::vector<std::int64_t> place(bag_of.size());
  for (std::size_t k = 0; k < place.size(); ++k)
    place[k] = bag_of[k] * longest + position[k];
  std::vector<std::uint8_t> empty_place(static_cast<std::size_t>(bags * longest), 1);
  for (std::int64_t p : place)
    empty_place[static_cast<std::size_t>(p)] = 0;
  std::vector<std::uint8_t> empty_bag(counts.size());
  for (std::size_t b = 0; b < counts.size(); ++b)
    empty_bag[b] = counts[b] == 0 ? 1 : 0;
  const auto mask = [&](const std::vector<std::uint8_t>& v, std::int64_t n) {
    return tensor(v, {n, 1}).to(kBool).to(weight.device());
  };
  Tensor block =
      index_add(zeros({bags * longest, dim}, weight.options()), 0, on_device(place), rows);
  block = masked_fill(block, mask(empty_place, bags * longest),
                      -std::numeric_limits<double>::infinity());
  Tensor out = std::get<0>(max(block.reshape({bags, longest, dim}), 1));
  return masked_fill(out, mask(empty_bag, bags), 0.0);
}

// ---- Interpolation ---------------------------------------------------------------------------

const char* interpolate_mode_name(InterpolateMode mode) {
  switch (mode) {
    case InterpolateMode::Nearest:
      return "nearest";
    case InterpolateMode::Bilinear:
      return "bilinear";
    case InterpolateMode::Bicubic:
      return "bicubic";
    case InterpolateMode::NearestExact:
      return "nearest-exact";
    case InterpolateMode::Area:
      return "area";
    case InterpolateMode::Linear:
      return "linear";
    case InterpolateMode::Trilinear:
      return "trilinear";
  }
  return "unknown";
}

namespace {

layers_math::ResizeMode resize_mode(InterpolateMode mode) {
  switch (mode) {
    case InterpolateMode::Nearest:
      return layers_math::ResizeMode::Nearest;
    case InterpolateMode::Bilinear:
      return layers_math::ResizeMode::Bilinear;
    case InterpolateMode::Bicubic:
      return layers_math::ResizeMode::Bicubic;
    case InterpolateMode::NearestExact:
      return layers_math::ResizeMode::NearestExact;
    case InterpolateMode::Area:    // adaptive_avg_pool2d, not a resize kernel (interpolate)
    case InterpolateMode::Linear:  // 3-D and 5-D inputs only
    case InterpolateMode::Trilinear:
      break;
  }
  LG_THROW(Error, "interpolate: no resize kernel for mode ", interpolate_mode_name(mode));
}

}  // namespace

// Note [Antialiased resize]
// PyTorch's antialias (PIL's resampling): along each axis, output i's weights are the filter
// (bilinear's triangle, or Keys' cubic with a = -0.5 for bicubic) at (j + 0.5 - centre) /
// max(scale, 1) for the input pixels j within the support (the filter's half-width times
// max(scale, 1)) of centre = scale (i + 0.5), normalised to sum 1, which also renormalises the
// edges. scale is in / out, 1 / scale_factor when a factor is given, or (in - 1) / (out - 1) with
// align_corners (PyTorch 1.13's rule; the centre keeps its + 0.5). Downscaling widens the filter
// by the scale, so every input pixel counts. The weights are separable: the resize is two matmuls
// with (out, in) weight matrices built on the host in the input's dtype (float for the 16-bit
// ones), the width first, then the height, as PyTorch; an axis whose size stays with a step of
// 1 is left alone (its weights are the identity; a scale_factor that keeps the size but not the
// step resamples, as PyTorch 1.13's). Autograd differentiates the matmuls, to any order. The
// matrices are dense, out x in per axis.

namespace {

template <typename T>
T antialias_filter(T x, bool cubic) {
  x = std::abs(x);
  if (!cubic) return x < T(1) ? T(1) - x : T(0);
  const T a = T(-0.5);
  if (x < T(1)) return ((a + T(2)) * x - (a + T(3))) * x * x + T(1);
  if (x < T(2)) return ((a * x - T(5) * a) * x + T(8) * a) * x - T(4) * a;
  return T(0);
}

// The (out, in) weights of one axis (Note [Antialiased resize]) into w (zeros), each step's
// arithmetic as PyTorch's (its double constants included), in T.
template <typename T>
void antialias_weights(std::int64_t in, std::int64_t out, double factor, bool align, bool cubic,
                       T* w) {
  T scale;
  if (align) {
    scale = out > 1 ? static_cast<T>(in - 1) / static_cast<T>(out - 1) : T(0);
  } else {
    scale = factor > 0.0 ? static_cast<T>(1.0 / factor) : static_cast<T>(in) / static_cast<T>(out);
  }
  const T half_width = cubic ? T(2) : T(1);
  const T support = scale >= T(1) ? half_width * scale : half_width;
  const T invscale = scale >= T(1) ? T(1) / scale : T(1);
  for (std::int64_t i = 0; i < out; ++i) {
    const auto center = static_cast<T>(static_cast<double>(scale) * (static_cast<double>(i) + 0.5));
    const std::int64_t lo = std::max<std::int64_t>(
        static_cast<std::int64_t>(static_cast<double>(center - support) + 0.5), 0);
    const std::int64_t hi = std::min<std::int64_t>(
        static_cast<std::int64_t>(static_cast<double>(center + support) + 0.5), in);
    T* row = w + i * in;
    T total = T(0);
    for (std::int64_t j = lo; j < hi; ++j) {
      const auto t = static_cast<T>((static_cast<double>(static_cast<T>(j) - center) + 0.5) *
                                    static_cast<double>(invscale));
      row[j] = antialias_filter(t, cubic);
      total += row[j];
    }
    if (total != T(0)) {
      for (std::int64_t j = lo; j < hi; ++j)
        row[j] /= total;
    }
  }
}

// The (out, in) weight matrix of one axis, in x's dtype on x's device. The host matrix comes
// from leangrad's allocator, so one too large for memory is an OutOfMemoryError (a std::vector
// let std::bad_alloc out for an output of 2^32 rows).
Tensor antialias_matrix(const Tensor& x, std::int64_t in, std::int64_t out, double factor,
                        bool align, bool cubic) {
  if (x.dtype() == kFloat64) {
    Tensor w = zeros({out, in}, TensorOptions(kFloat64));
    antialias_weights<double>(in, out, factor, align, cubic, w.data_ptr<double>());
    return w.to(x.device());
  }
  Tensor w = zeros({out, in}, TensorOptions(kFloat32));
  antialias_weights<float>(in, out, factor, align, cubic, w.data_ptr<float>());
  return w.to(x.dtype()).to(x.device());
}

Tensor antialiased_resize(const Tensor& x, Size2 out, Scale2 factors, bool cubic, bool align) {
  Tensor y = x;
  if (!layers_math::resize_keeps_axis(x.size(3), out[1], factors[1], align))
    y = matmul(y,
               transpose(antialias_matrix(x, x.size(3), out[1], factors[1], align, cubic), 0, 1));
  if (!layers_math::resize_keeps_axis(x.size(2), out[0], factors[0], align))
    y = matmul(antialias_matrix(x, x.size(2), out[0], factors[0], align, cubic), y);
  return y.is_same(x) ? clone(x) : y;
}

}  // namespace

Tensor interpolate(const Tensor& x, std::optional<Size2> size, std::optional<Scale2> scale_factor,
                   InterpolateMode mode, std::optional<bool> align_corners,
                   std::optional<bool> recompute_scale_factor, bool antialias) {
  LG_PROFILE_OP(x);
  const char* op = "interpolate";
  LG_CHECK(x.defined(), op, ": expected a defined input, got an undefined Tensor()");
  LG_CHECK_SHAPE(x.dim() == 4, op,
                 ": expected a 4-D input (N, C, H, W) for a (height, width) size or scale_factor, "
                 "got shape ",
                 x.shape(), " (other ranks take them as std::vector, one value per spatial dim)");
  LG_CHECK_SHAPE(mode != InterpolateMode::Linear && mode != InterpolateMode::Trilinear, op,
                 ": mode ", interpolate_mode_name(mode), " expects a ",
                 mode == InterpolateMode::Linear ? 3 : 5, "-D input, got shape ", x.shape());
  LG_CHECK(size.has_value() != scale_factor.has_value(), op,
           ": expected exactly one of size and scale_factor, got ",
           size.has_value() ? "both" : "neither");
  const bool interpolating = mode == InterpolateMode::Bilinear || mode == InterpolateMode::Bicubic;
  LG_CHECK(
      interpolating || !align_corners.has_value(), op,
      ": align_corners can only be set with the interpolating modes bilinear and bicubic, not ",
      interpolate_mode_name(mode));
  LG_CHECK(!(recompute_scale_factor.value_or(false) && size.has_value()), op,
           ": recompute_scale_factor is not meaningful with an explicit size");
  LG_CHECK(!antialias || interpolating, op,
           ": antialias is only supported in the bilinear and bicubic modes, not ",
           interpolate_mode_name(mode));
  Size2 out_size{};
  Scale2 scales{0.0, 0.0};
  if (size.has_value()) {
    out_size = *size;
  } else {
    scales = *scale_factor;
    for (int d = 0; d < 2; ++d) {
      LG_CHECK(scales[d] > 0.0 && std::isfinite(scales[d]), op,
               ": expected positive finite scale factors, got (", scales[0], ", ", scales[1], ")");
      const double out = std::floor(static_cast<double>(x.size(2 + d)) * scales[d]);
      LG_CHECK_SHAPE(out < 9.0e15, op, ": scale factor ", scales[d], " of dim of size ",
                     x.size(2 + d), " gives an output too large to index");
      out_size[d] = static_cast<std::int64_t>(out);
    }
    // The index rules then use the sizes, as when the size is given.
    if (recompute_scale_factor.value_or(false)) scales = {0.0, 0.0};
  }
  // area averages each output pixel's window of the input, as PyTorch's (its interpolate calls
  // adaptive_avg_pool2d for it).
  if (mode == InterpolateMode::Area) return adaptive_avg_pool2d(x, out_size);
  if (antialias) {
    LG_CHECK_SHAPE(x.size(2) >= 1 && x.size(3) >= 1 && out_size[0] >= 1 && out_size[1] >= 1, op,
                   ": input of shape ", x.shape(), " and output size (", out_size[0], ", ",
                   out_size[1], ") must be positive");
    autograd::check_floating_input(op, x);
    return antialiased_resize(x, out_size, scales, mode == InterpolateMode::Bicubic,
                              align_corners.value_or(false));
  }
  return upsample2d_fn(
      op, x, Resize2d{out_size, scales, resize_mode(mode), align_corners.value_or(false)});
}

// Note [Interpolation of any rank]
// interpolate over (N, C, L) and (N, C, D, H, W) is written with the 2-d resize, so its kernels
// (CPU and CUDA, forward and backward) serve every rank and autograd differentiates to any order:
//  - (N, C, L) is the 2-d resize of (N, C, 1, L) to (1, L_out), its height copied (an axis of
//    equal sizes copies: Note [Interpolation source indices]); linear is bilinear there, the
//    given factor (1, s) keeps the index rule of s. area is adaptive_avg_pool1d.
//  - (N, C, D, H, W): every mode's weights are a product of per-axis weights, so the resize is
//    separable: first (H, W) over the (N, C D, H, W) planes, then depth. Trilinear's depth stage
//    is the 2-d bilinear resize of (N, C, D, H_out W_out) to (D_out, H_out W_out), its width
//    copied: output = w0 plane(d0) + w1 plane(d1) with each plane w_h0 (w_w0 a + w_w1 b) + w_h1
//    (...), the nesting of PyTorch's trilinear kernel. The nearest modes' depth stage is an
//    index_select of the planes by the depth rule (a 2-d resize over a flattened H_out W_out would
//    run that axis's indices through float, exact only below 2^24). area is
//    adaptive_avg_pool3d.
//  A 4-D input takes the 2-d function directly.

namespace {

// How many spatial dims `mode` needs (linear 1, bilinear and bicubic 2, trilinear 3), or 0 when
// it serves every rank (nearest, nearest-exact, area).
std::size_t spatial_dims_of(InterpolateMode mode) {
  switch (mode) {
    case InterpolateMode::Linear:
      return 1;
    case InterpolateMode::Bilinear:
    case InterpolateMode::Bicubic:
      return 2;
    case InterpolateMode::Trilinear:
      return 3;
    default:
      return 0;
  }
}

}  // namespace

Tensor interpolate(const Tensor& x, std::optional<std::vector<std::int64_t>> size,
                   std::optional<std::vector<double>> scale_factor, InterpolateMode mode,
                   std::optional<bool> align_corners, std::optional<bool> recompute_scale_factor,
                   bool antialias) {
  LG_PROFILE_OP(x);
  const char* op = "interpolate";
  LG_CHECK(x.defined(), op, ": expected a defined input, got an undefined Tensor()");
  LG_CHECK_SHAPE(x.dim() >= 3 && x.dim() <= 5, op,
                 ": expected a 3-D (N, C, L), 4-D (N, C, H, W) or 5-D (N, C, D, H, W) input, got "
                 "shape ",
                 x.shape());
  LG_CHECK(size.has_value() != scale_factor.has_value(), op,
           ": expected exactly one of size and scale_factor, got ",
           size.has_value() ? "both" : "neither");
  const auto dims = static_cast<std::size_t>(x.dim() - 2);
  const std::size_t given = size.has_value() ? size->size() : scale_factor->size();
  LG_CHECK_SHAPE(given == dims, op, ": expected ", size.has_value() ? "size" : "scale_factor",
                 " of ", dims, " value", dims == 1 ? "" : "s", " for input of shape ", x.shape(),
                 ", got ", given);
  const std::size_t needs = spatial_dims_of(mode);
  LG_CHECK_SHAPE(needs == 0 || needs == dims, op, ": mode ", interpolate_mode_name(mode),
                 " expects a ", needs + 2, "-D input, got shape ", x.shape());
  if (dims == 2) {
    if (size.has_value())
      return interpolate(x, Size2{(*size)[0], (*size)[1]}, std::nullopt, mode, align_corners,
                         recompute_scale_factor, antialias);
    return interpolate(x, std::nullopt, Scale2{(*scale_factor)[0], (*scale_factor)[1]}, mode,
                       align_corners, recompute_scale_factor, antialias);
  }
  LG_CHECK_SHAPE(!antialias, op,
                 ": antialias is only supported for 4-D input (N, C, H, W) in the bilinear and "
                 "bicubic modes, got shape ",
                 x.shape());
  LG_CHECK(!(recompute_scale_factor.value_or(false) && size.has_value()), op,
           ": recompute_scale_factor is not meaningful with an explicit size");
  LG_CHECK(needs != 0 || !align_corners.has_value(), op,
           ": align_corners can only be set with the interpolating modes linear, bilinear, "
           "bicubic and trilinear, not ",
           interpolate_mode_name(mode));
  // The output's sizes, checked as the 2-d function checks its own (it checks H and W again).
  std::vector<std::int64_t> out(dims);
  for (std::size_t d = 0; d < dims; ++d) {
    const std::int64_t in = x.size(static_cast<std::int64_t>(d) + 2);
    if (size.has_value()) {
      out[d] = (*size)[d];
    } else {
      const double s = (*scale_factor)[d];
      LG_CHECK(s > 0.0 && std::isfinite(s), op, ": expected positive finite scale factors, got ",
               s);
      const double o = std::floor(static_cast<double>(in) * s);
      LG_CHECK_SHAPE(o < 9.0e15, op, ": scale factor ", s, " of dim of size ", in,
                     " gives an output too large to index");
      out[d] = static_cast<std::int64_t>(o);
    }
    LG_CHECK_SHAPE(out[d] >= 1 && in >= 1, op, ": input of shape ", x.shape(),
                   " and output sizes must be positive, got output size ", out[d], " for dim ",
                   d + 2);
  }
  // With recompute_scale_factor the index rules use the sizes just worked out.
  const bool by_size = size.has_value() || recompute_scale_factor.value_or(false);
  const InterpolateMode plane_mode =
      mode == InterpolateMode::Linear || mode == InterpolateMode::Trilinear ? kBilinear : mode;
  const auto factor = [&](std::size_t d) { return by_size ? 0.0 : (*scale_factor)[d]; };
  if (dims == 1) {
    if (mode == InterpolateMode::Area) return adaptive_avg_pool1d(x, out[0]);
    const Tensor rows = unsqueeze(x, 2);
    const Tensor y =
        by_size
            ? interpolate(rows, Size2{1, out[0]}, std::nullopt, plane_mode, align_corners)
            : interpolate(rows, std::nullopt, Scale2{1.0, factor(0)}, plane_mode, align_corners);
    return squeeze(y, 2);
  }
  // (N, C, D, H, W) (Note [Interpolation of any rank]).
  if (mode == InterpolateMode::Area) return adaptive_avg_pool3d(x, {out[0], out[1], out[2]});
  const std::int64_t n = x.size(0), c = x.size(1), depth = x.size(2);
  const Tensor flat = reshape(x, {n, checked_mul(c, depth, op), x.size(3), x.size(4)});
  const Tensor planes =
      by_size ? interpolate(flat, Size2{out[1], out[2]}, std::nullopt, plane_mode, align_corners)
              : interpolate(flat, std::nullopt, Scale2{factor(1), factor(2)}, plane_mode,
                            align_corners);
  const std::int64_t cells = checked_mul(out[1], out[2], op);
  const Tensor by_depth = reshape(planes, {n, c, depth, cells});
  Tensor volume;
  if (mode == InterpolateMode::Trilinear) {
    volume =
        by_size
            ? interpolate(by_depth, Size2{out[0], cells}, std::nullopt, kBilinear, align_corners)
            : interpolate(by_depth, std::nullopt, Scale2{factor(0), 1.0}, kBilinear, align_corners);
  } else {
    // The depth rule of Note [Interpolation source indices], on the host.
    const auto step = layers_math::resize_step<float>(depth, out[0], factor(0), false);
    std::vector<std::int64_t> source(static_cast<std::size_t>(out[0]));
    for (std::int64_t o = 0; o < out[0]; ++o) {
      source[static_cast<std::size_t>(o)] = mode == InterpolateMode::NearestExact
                                                ? layers_math::nearest_exact_source(o, step, depth)
                                                : layers_math::nearest_source(o, step, depth);
    }
    volume = index_select(by_depth, 2, tensor(source, {out[0]}).to(x.device()));
  }
  return reshape(volume, {n, c, out[0], out[1], out[2]});
}

// ---- Softmax ---------------------------------------------------------------------------------

Tensor softmax(const Tensor& x_in, std::int64_t dim) {
  LG_PROFILE_OP(x_in);
  const Tensor x = amp::autocast_operand(x_in, amp::CastPolicy::Float32);
  const Tensor out = ops::softmax(x, dim, /*log=*/false);
  return record_op("softmax", out, {x}, {out},
                   [dim](const BackwardContext& c) -> std::vector<Tensor> {
                     return {softmax_backward_fn(c.grad, c.saved[0], dim, /*log=*/false)};
                   });
}

Tensor log_softmax(const Tensor& x_in, std::int64_t dim) {
  LG_PROFILE_OP(x_in);
  const Tensor x = amp::autocast_operand(x_in, amp::CastPolicy::Float32);
  const Tensor out = ops::softmax(x, dim, /*log=*/true);
  return record_op("log_softmax", out, {x}, {out},
                   [dim](const BackwardContext& c) -> std::vector<Tensor> {
                     return {softmax_backward_fn(c.grad, c.saved[0], dim, /*log=*/true)};
                   });
}

// ---- Losses ----------------------------------------------------------------------------------

Tensor nll_loss(const Tensor& logp_in, const Tensor& target, Reduction reduction,
                std::int64_t ignore_index, const Tensor& weight) {
  LG_PROFILE_OP(logp_in, target);
  const Tensor logp = amp::autocast_operand(logp_in, amp::CastPolicy::Float32);
  const Tensor w = class_weight_operand(weight);
  const ClassRows rows = class_rows("nll_loss", logp, target, w);
  const ClassLosses r = nll_per_sample(rows.input, rows.target, w, ignore_index);
  return in_target_shape(reduce_class_losses(r.losses, r.sample_weights, reduction), rows,
                         reduction);
}

Tensor cross_entropy(const Tensor& logits_in, const Tensor& target_in, Reduction reduction,
                     std::int64_t ignore_index, const Tensor& weight_in, double label_smoothing) {
  LG_PROFILE_OP(logits_in, target_in);
  // Written so that NaN fails it too.
  LG_CHECK(label_smoothing >= 0.0 && label_smoothing <= 1.0,
           "cross_entropy: expected label_smoothing in [0, 1], got ", label_smoothing);
  const Tensor logits = amp::autocast_operand(logits_in, amp::CastPolicy::Float32);
  const Tensor weight = class_weight_operand(weight_in);
  LG_CHECK(logits.defined() && target_in.defined(),
           "cross_entropy: expected defined input and target");
  // A target of the input's shape holds class probabilities, as PyTorch decides.
  if (target_in.shape() == logits.shape()) {
    const Tensor target = amp::autocast_operand(target_in, amp::CastPolicy::Float32);
    return cross_entropy_probabilities(logits, target, reduction, ignore_index, weight,
                                       label_smoothing);
  }
  // Class indices, as rows (M, C) whatever the input's rank (Note [Class-index losses of any
  // rank]).
  const ClassRows rows = class_rows("cross_entropy", logits, target_in, weight);
  if (label_smoothing > 0.0) {
    return in_target_shape(cross_entropy_smoothed(rows.input, rows.target, reduction, ignore_index,
                                                  weight, label_smoothing),
                           rows, reduction);
  }
  // One kernel gives each row's loss and logsumexp; the backward is softmax - onehot in one pass.
  ops::CrossEntropyResult r = ops::cross_entropy(rows.input, rows.target, weight, ignore_index);
  const Tensor per_sample =
      record_op("cross_entropy", r.losses, {rows.input},
                {rows.input, r.logsumexp, rows.target, weight, r.sample_weights},
                [ignore_index](const BackwardContext& c) -> std::vector<Tensor> {
                  return {cross_entropy_backward_fn(c.grad, c.saved[0], c.saved[1], c.saved[2],
                                                    c.saved[3], c.saved[4], ignore_index)};
                });
  return in_target_shape(reduce_class_losses(per_sample, r.sample_weights, reduction), rows,
                         reduction);
}

Tensor mse_loss(const Tensor& input_in, const Tensor& target_in, Reduction reduction) {
  LG_PROFILE_OP(input_in, target_in);
  const Tensor input = amp::autocast_operand(input_in, amp::CastPolicy::Float32);
  const Tensor target = amp::autocast_operand(target_in, amp::CastPolicy::Float32);
  check_elementwise_loss("mse_loss", input, target);
  const Tensor d = sub(input, target);
  return reduce_losses(mul(d, d), reduction);
}

Tensor l1_loss(const Tensor& input_in, const Tensor& target_in, Reduction reduction) {
  LG_PROFILE_OP(input_in, target_in);
  const Tensor input = amp::autocast_operand(input_in, amp::CastPolicy::Float32);
  const Tensor target = amp::autocast_operand(target_in, amp::CastPolicy::Float32);
  check_elementwise_loss("l1_loss", input, target);
  return reduce_losses(abs(sub(input, target)), reduction);
}

}  // namespace leangrad
