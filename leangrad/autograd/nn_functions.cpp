// The neural-network functions of autograd/nn_functions.h, each forward beside its backward.
// Kernel-backed ops (TanhExp, GroupNorm, conv2d, pooling, dropout, softmax, the per-sample losses)
// call kernels/ops.h and record a node with the backward their kernels provide:
//   tanhexp        saves only x: its derivative is recomputed from x in one fused kernel
//                  (ops::tanhexp_backward), which costs less than storing tanh(e^x) beside y
//   group_norm     saves x, the per-group mean and rstd the forward computed and the weight;
//                  ops::group_norm_backward computes only the gradients that are needed
//   conv2d         the input gradient (a convolution of grad with the flipped weight, gathered
//                  per input pixel), the weight gradient (grad correlated with the input over
//                  every sample and pixel), the bias gradient (grad summed over N, H, W)
// Composite ops are written with the differentiable functions:
//   linear         matmul(x, W^T) + b: the bias gradient is add's broadcast reduction
//   pixel_shuffle  reshape -> permute -> reshape (one strided copy; views carry the gradient)
//   mse / l1       sub, mul / abs, mean / sum
// Loss reductions: a kernel gives per-sample losses (N,); Mean divides their sum by the number of
// non-ignored samples, computed on the device (no synchronisation; all ignored gives 0/0 = NaN,
// as PyTorch). Each function opens with LG_PROFILE_OP, as in functions.cpp.
#include <algorithm>
#include <vector>

#include <leangrad/autograd/autocast.h>
#include <leangrad/autograd/functions.h>
#include <leangrad/autograd/graph.h>
#include <leangrad/autograd/nn_functions.h>
#include <leangrad/core/generator.h>
#include <leangrad/core/profiler.h>
#include <leangrad/kernels/ops.h>

namespace leangrad {

using autograd::BackwardContext;
using autograd::record_op;

namespace {

Tensor reduce_losses(const Tensor& losses, Reduction reduction) {
  switch (reduction) {
    case Reduction::None:
      return losses;
    case Reduction::Sum:
      return sum(losses);
    case Reduction::Mean:
      return mean(losses);
  }
  return losses;
}

// Per-sample losses (N,) reduced, where samples whose target is ignore_index do not count.
Tensor reduce_class_losses(const Tensor& losses, const Tensor& target, Reduction reduction,
                           std::int64_t ignore_index) {
  if (reduction != Reduction::Mean) return reduce_losses(losses, reduction);
  const Tensor count = sum(ne(target, static_cast<double>(ignore_index))).to(losses.dtype());
  return div(sum(losses), count);
}

// The operands of an elementwise loss: defined, of one shape, floating (PyTorch's losses are
// not defined on integers either).
void check_elementwise_loss(const char* op, const Tensor& input, const Tensor& target) {
  LG_CHECK(input.defined() && target.defined(), op, ": expected defined input and target");
  LG_CHECK_SHAPE(input.shape() == target.shape(), op,
                 ": expected input and target of one shape, got ", input.shape(), " and ",
                 target.shape());
  LG_CHECK_DTYPE(is_floating(input.dtype()) && is_floating(target.dtype()), op,
                 ": expected floating input and target, got ", input.dtype(), " and ",
                 target.dtype());
  LG_CHECK_DEVICE(input.device() == target.device(), op,
                  ": expected input and target on one device, got ", input.device(), " and ",
                  target.device());
}

}  // namespace

// ---- TanhExp, GroupNorm, conv2d ----------------------------------------------------------------

Tensor tanhexp(const Tensor& x) {
  LG_PROFILE_OP(x);
  return record_op(
      "tanhexp", ops::tanhexp(x), {x}, {x},
      [](const BackwardContext& c) -> std::vector<Tensor> {
        return {ops::tanhexp_backward(c.grad, c.saved[0])};
      },
      autograd::DoubleBackward::NotImplemented);
}

Tensor group_norm(const Tensor& x, std::int64_t num_groups, const Tensor& weight_in,
                  const Tensor& bias_in, double eps) {
  LG_PROFILE_OP(x, weight_in, bias_in);
  // Under autocast: x's dtype with float32 statistics; the affine parameters follow x.
  const Tensor weight = x.defined() ? amp::autocast_operand_to(weight_in, x.dtype()) : weight_in;
  const Tensor bias = x.defined() ? amp::autocast_operand_to(bias_in, x.dtype()) : bias_in;
  ops::GroupNormOutput forward = ops::group_norm(x, num_groups, weight, bias, eps);
  std::vector<Tensor> saved = {x, forward.mean, forward.rstd};
  if (weight.defined()) saved.push_back(weight);
  return record_op(
      "group_norm", forward.output, {x, weight, bias}, saved,
      [num_groups](const BackwardContext& c) -> std::vector<Tensor> {
        const Tensor weight = c.saved.size() > 3 ? c.saved[3] : Tensor();
        ops::GroupNormGrads g =
            ops::group_norm_backward(c.grad, c.saved[0], c.saved[1], c.saved[2], weight, num_groups,
                                     c.needs(0), c.needs(1), c.needs(2));
        return {g.grad_input, g.grad_weight, g.grad_bias};
      },
      autograd::DoubleBackward::NotImplemented);
}

Tensor conv2d(const Tensor& x_in, const Tensor& weight_in, const Tensor& bias_in, Size2 stride,
              Size2 padding, Size2 dilation, std::int64_t groups) {
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
  return record_op(
      "conv2d", out, inputs, {x, weight},
      [p](const BackwardContext& c) -> std::vector<Tensor> {
        const Tensor& x_saved = c.saved[0];
        const Tensor& w_saved = c.saved[1];
        std::vector<Tensor> grads(c.inputs.size());
        if (c.needs(0)) grads[0] = ops::conv2d_input_grad(c.grad, w_saved, x_saved.shape(), p);
        if (c.needs(1)) grads[1] = ops::conv2d_weight_grad(c.grad, x_saved, w_saved.shape(), p);
        if (c.inputs.size() == 3 && c.needs(2)) grads[2] = sum(c.grad, {0, 2, 3});
        return grads;
      },
      autograd::DoubleBackward::NotImplemented);
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
    y = reshape(
        matmul(reshape(x, {x.numel() / std::max<std::int64_t>(in_features, 1), in_features}),
               transpose(weight, 0, 1)),
        out_shape);
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

Tensor max_pool2d(const Tensor& x, Size2 kernel, Size2 stride, Size2 padding) {
  LG_PROFILE_OP(x);
  ops::MaxPool2dResult r = ops::max_pool2d(x, kernel, stride, padding);
  return record_op(
      "max_pool2d", r.out, {x}, {r.indices},
      [=](const BackwardContext& c) -> std::vector<Tensor> {
        return {ops::max_pool2d_backward(c.grad, c.saved[0], c.shape(0), kernel, stride, padding)};
      },
      autograd::DoubleBackward::NotImplemented);
}

Tensor avg_pool2d(const Tensor& x, Size2 kernel, Size2 stride, Size2 padding) {
  LG_PROFILE_OP(x);
  return record_op(
      "avg_pool2d", ops::avg_pool2d(x, kernel, stride, padding), {x}, {},
      [=](const BackwardContext& c) -> std::vector<Tensor> {
        return {ops::avg_pool2d_backward(c.grad, c.shape(0), kernel, stride, padding)};
      },
      autograd::DoubleBackward::NotImplemented);
}

// ---- Dropout ---------------------------------------------------------------------------------

Tensor dropout(const Tensor& x, double p, bool training) {
  LG_PROFILE_OP(x);
  LG_CHECK(p >= 0.0 && p <= 1.0, "dropout: expected a probability p in [0, 1], got ", p);
  if (!training || p == 0.0) return x;
  // Only the mask (1 byte an element) is saved: the backward is grad * mask / (1 - p).
  ops::DropoutResult r = ops::dropout(x, p, default_generator(x.device()));
  return record_op(
      "dropout", r.out, {x}, {r.mask},
      [p](const BackwardContext& c) -> std::vector<Tensor> {
        return {ops::dropout_backward(c.grad, c.saved[0], p)};
      },
      autograd::DoubleBackward::NotImplemented);
}

// ---- Softmax ---------------------------------------------------------------------------------

Tensor softmax(const Tensor& x_in, std::int64_t dim) {
  LG_PROFILE_OP(x_in);
  const Tensor x = amp::autocast_operand(x_in, amp::CastPolicy::Float32);
  const Tensor out = ops::softmax(x, dim, /*log=*/false);
  return record_op(
      "softmax", out, {x}, {out},
      [dim](const BackwardContext& c) -> std::vector<Tensor> {
        return {ops::softmax_backward(c.grad, c.saved[0], dim, /*log=*/false)};
      },
      autograd::DoubleBackward::NotImplemented);
}

Tensor log_softmax(const Tensor& x_in, std::int64_t dim) {
  LG_PROFILE_OP(x_in);
  const Tensor x = amp::autocast_operand(x_in, amp::CastPolicy::Float32);
  const Tensor out = ops::softmax(x, dim, /*log=*/true);
  return record_op(
      "log_softmax", out, {x}, {out},
      [dim](const BackwardContext& c) -> std::vector<Tensor> {
        return {ops::softmax_backward(c.grad, c.saved[0], dim, /*log=*/true)};
      },
      autograd::DoubleBackward::NotImplemented);
}

// ---- Losses ----------------------------------------------------------------------------------

Tensor nll_loss(const Tensor& logp_in, const Tensor& target, Reduction reduction,
                std::int64_t ignore_index) {
  LG_PROFILE_OP(logp_in, target);
  const Tensor logp = amp::autocast_operand(logp_in, amp::CastPolicy::Float32);
  const Tensor losses = ops::nll_loss(logp, target, ignore_index);
  const std::int64_t num_classes = logp.size(1);
  const Tensor per_sample = record_op(
      "nll_loss", losses, {logp}, {target},
      [num_classes, ignore_index](const BackwardContext& c) -> std::vector<Tensor> {
        return {ops::nll_loss_backward(c.grad, c.saved[0], num_classes, ignore_index)};
      },
      autograd::DoubleBackward::NotImplemented);
  return reduce_class_losses(per_sample, target, reduction, ignore_index);
}

Tensor cross_entropy(const Tensor& logits_in, const Tensor& target, Reduction reduction,
                     std::int64_t ignore_index) {
  LG_PROFILE_OP(logits_in, target);
  const Tensor logits = amp::autocast_operand(logits_in, amp::CastPolicy::Float32);
  // One kernel gives each row's loss and logsumexp; the backward is softmax - onehot in one pass.
  ops::CrossEntropyResult r = ops::cross_entropy(logits, target, ignore_index);
  const Tensor per_sample = record_op(
      "cross_entropy", r.losses, {logits}, {logits, r.logsumexp, target},
      [ignore_index](const BackwardContext& c) -> std::vector<Tensor> {
        return {
            ops::cross_entropy_backward(c.grad, c.saved[0], c.saved[1], c.saved[2], ignore_index)};
      },
      autograd::DoubleBackward::NotImplemented);
  return reduce_class_losses(per_sample, target, reduction, ignore_index);
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
