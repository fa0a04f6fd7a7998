// Tensor-level entries of the layer kernels (kernels/ops.h, "Layers"): pooling, dropout, softmax
// and the per-sample losses. Each checks its operands, makes them contiguous, allocates the
// outputs and switches on the device to the layer launchers of kernels/backend.h.
#include <algorithm>
#include <optional>
#include <string>

#include <leangrad/core/creation.h>
#include <leangrad/core/cuda.h>
#include <leangrad/core/generator.h>
#include <leangrad/kernels/backend.h>
#include <leangrad/kernels/layers_math.h>
#include <leangrad/kernels/ops.h>
#include <leangrad/kernels/ops_checks.h>

namespace leangrad::ops {

namespace {

using layers_math::Pool2dShape;
using layers_math::pooled_size;

void check_same_device(const char* op, const Tensor& a, const Tensor& b) {
  LG_CHECK_DEVICE(a.device() == b.device(), op, ": expected tensors on one device, got ",
                  a.device(), " and ", b.device());
}

// The options of a pooling call as its errors print them.
std::string pool_options_str(const Shape& in, Pool2dSize kernel, Pool2dSize stride,
                             Pool2dSize padding, Pool2dSize dilation, bool ceil_mode) {
  return detail::str_cat("input of shape ", in, " with kernel ", shape_str({kernel[0], kernel[1]}),
                         ", stride ", shape_str({stride[0], stride[1]}), ", padding ",
                         shape_str({padding[0], padding[1]}), ", dilation ",
                         shape_str({dilation[0], dilation[1]}), ", ceil_mode ",
                         ceil_mode ? "true" : "false");
}

// Division rounding toward -inf (PyTorch's div_rtn), of b > 0.
// The pooling geometry of a (N, C, H, W) or (C, H, W) input, checked as PyTorch checks it: kernel,
// stride and dilation positive (stride 0 means the kernel), 0 <= padding <= kernel / 2, every
// parameter and plane size below 2^31, an output of at least one element per plane.
Pool2dShape pool_shape(const char* op, const Shape& in, Pool2dSize kernel, Pool2dSize stride,
                       Pool2dSize padding, Pool2dSize dilation, bool ceil_mode) {
  LG_CHECK_SHAPE(in.size() == 3 || in.size() == 4, op,
                 ": expected a 3-D (C, H, W) or 4-D (N, C, H, W) input, got shape ", in);
  const std::int64_t kh = kernel[0], kw = kernel[1];
  const std::int64_t sh = stride[0] == 0 ? kh : stride[0], sw = stride[1] == 0 ? kw : stride[1];
  const auto options = [&] {
    return pool_options_str(in, kernel, {sh, sw}, padding, dilation, ceil_mode);
  };
  LG_CHECK(kh > 0 && kw > 0, op, ": expected a positive kernel size, got ", shape_str({kh, kw}),
           " (", options(), ")");
  LG_CHECK(sh > 0 && sw > 0, op, ": expected a positive stride, got ", shape_str({sh, sw}), " (",
           options(), ")");
  LG_CHECK(dilation[0] > 0 && dilation[1] > 0, op, ": expected a positive dilation, got ",
           shape_str({dilation[0], dilation[1]}), " (", options(), ")");
  // Below 2^31 the window arithmetic (H + 2 padding - dilation (kernel - 1) - 1 + stride) cannot
  // overflow; padding is bounded by the kernel below.
  constexpr std::int64_t kMaxParam = std::int64_t{1} << 31;
  LG_CHECK(kh < kMaxParam && kw < kMaxParam && sh < kMaxParam && sw < kMaxParam &&
               dilation[0] < kMaxParam && dilation[1] < kMaxParam &&
               in[in.size() - 1] < kMaxParam && in[in.size() - 2] < kMaxParam,
           op, ": kernel, stride, dilation and plane sizes must be below 2^31, got ", options());
  LG_CHECK(padding[0] >= 0 && padding[1] >= 0 && padding[0] <= kh / 2 && padding[1] <= kw / 2, op,
           ": padding should be at least 0 and at most half the kernel size, got padding ",
           shape_str({padding[0], padding[1]}), " for kernel ", shape_str({kh, kw}), " (",
           options(), ")");
  Pool2dShape g;
  g.H = in[in.size() - 2];
  g.W = in[in.size() - 1];
  g.planes = in[in.size() - 3] * (in.size() == 4 ? in[0] : 1);
  g.kh = kh, g.kw = kw, g.sh = sh, g.sw = sw, g.ph = padding[0], g.pw = padding[1];
  g.dh = dilation[0], g.dw = dilation[1];
  g.OH = pooled_size(g.H, kh, sh, g.ph, g.dh, ceil_mode);
  g.OW = pooled_size(g.W, kw, sw, g.pw, g.dw, ceil_mode);
  LG_CHECK_SHAPE(g.OH > 0 && g.OW > 0, op, ": the output size ", shape_str({g.OH, g.OW}),
                 " is too small (each must be at least 1): ", options(),
                 " (a window spans dilation (kernel - 1) + 1 = ",
                 shape_str({g.dh * (kh - 1) + 1, g.dw * (kw - 1) + 1}), ")");
  return g;
}

// pool_shape for average pooling (dilation 1) with its divisor options; divisor_override,
// when given, must not be 0.
Pool2dShape avg_pool_shape(const char* op, const Shape& in, Pool2dSize kernel, Pool2dSize stride,
                           Pool2dSize padding, bool ceil_mode, bool count_include_pad,
                           std::optional<std::int64_t> divisor_override) {
  Pool2dShape g = pool_shape(op, in, kernel, stride, padding, {1, 1}, ceil_mode);
  LG_CHECK(!divisor_override || *divisor_override != 0, op, ": divisor_override must not be 0 (",
           pool_options_str(in, kernel, {g.sh, g.sw}, padding, {1, 1}, ceil_mode), ")");
  g.count_include_pad = count_include_pad;
  g.divisor_override = divisor_override.value_or(0);
  return g;
}

Shape pooled_shape(const Shape& in, const Pool2dShape& g) {
  Shape out = in;
  out[out.size() - 2] = g.OH;
  out[out.size() - 1] = g.OW;
  return out;
}

// Checks the kernels' operands: logits (N, C) and target (N,) int64 on one device; returns C.
std::int64_t check_loss_operands(const char* op, const Tensor& input, const Tensor& target) {
  check_class_targets(op, input, target);
  LG_CHECK_SHAPE(input.dim() == 2, op, ": expected input of shape (N, C), got ", input.shape());
  return input.size(1);
}

// On the CPU the targets are checked before any kernel runs (on CUDA that would synchronise:
// the kernels give a NaN loss instead, see kernels/ops.h).
void check_targets_on_cpu(const char* op, const Tensor& target, std::int64_t C,
                          std::int64_t ignore_index) {
  if (!target.device().is_cpu()) return;
  const std::int64_t* t = target.data_ptr<std::int64_t>();
  const std::int64_t count = target.numel();  // out of the loop: numel() is a call each time
  for (std::int64_t i = 0; i < count; ++i) {
    LG_CHECK(t[i] == ignore_index || (t[i] >= 0 && t[i] < C), op, ": target ", t[i], " at index ",
             i, " is out of bounds for ", C, " classes (expected [0, ", C - 1, "] or ignore_index ",
             ignore_index, ")");
  }
}

}  // namespace

// ---- Pooling ---------------------------------------------------------------------------------

MaxPool2dResult max_pool2d(const Tensor& x, Pool2dSize kernel, Pool2dSize stride,
                           Pool2dSize padding, Pool2dSize dilation, bool ceil_mode) {
  check_floating("max_pool2d", x);
  const Pool2dShape g =
      pool_shape("max_pool2d", x.shape(), kernel, stride, padding, dilation, ceil_mode);
  const Tensor in = contiguous(x);
  const Shape out_shape = pooled_shape(x.shape(), g);
  MaxPool2dResult r{empty(out_shape, x.options()),
                    empty(out_shape, TensorOptions(kInt64).device(x.device()))};
  if (r.out.numel() == 0) return r;
  const cuda::DeviceGuard guard(x.device());
  switch (x.device().type) {
    case DeviceType::CPU:
      kernels::cpu::max_pool2d(x.dtype(), r.out.data_ptr(), r.indices.data_ptr<std::int64_t>(),
                               in.data_ptr(), g);
      break;
    case DeviceType::CUDA:
      kernels::cuda::max_pool2d(x.dtype(), r.out.data_ptr(), r.indices.data_ptr<std::int64_t>(),
                                in.data_ptr(), g);
      break;
  }
  return r;
}

Tensor max_pool2d_backward(const Tensor& grad_out, const Tensor& indices, const Shape& input_shape,
                           Pool2dSize kernel, Pool2dSize stride, Pool2dSize padding,
                           Pool2dSize dilation, bool ceil_mode) {
  check_floating("max_pool2d_backward", grad_out);
  check_same_device("max_pool2d_backward", grad_out, indices);
  const Pool2dShape g =
      pool_shape("max_pool2d_backward", input_shape, kernel, stride, padding, dilation, ceil_mode);
  LG_CHECK_SHAPE(grad_out.shape() == pooled_shape(input_shape, g) &&
                     indices.shape() == grad_out.shape() && indices.dtype() == kInt64,
                 "max_pool2d_backward: expected grad_out and int64 indices of shape ",
                 pooled_shape(input_shape, g), ", got ", grad_out.shape(), " and ",
                 indices.shape());
  const Tensor gy = contiguous(grad_out);
  const Tensor idx = contiguous(indices);
  // The CPU kernel scatters into the plane at each index: every one must lie in it, or be -1 (a
  // window holding no input element; max_pool2d's own always do; a caller's may not). The CUDA
  // kernel gathers, and ignores the others.
  // The check is one pass the compiler runs in SIMD lanes; the first index outside is looked for
  // only to name it (a loop calling numel() and branching per index took longer than the
  // backward itself).
  if (idx.device().is_cpu()) {
    const std::int64_t plane = g.H * g.W;
    const std::int64_t count = idx.numel();
    const std::int64_t* at = idx.data_ptr<std::int64_t>();
    bool inside = true;
    for (std::int64_t i = 0; i < count; ++i)
      inside &= (at[i] >= -1) & (at[i] < plane);
    for (std::int64_t i = 0; !inside && i < count; ++i) {
      LG_CHECK_SHAPE(at[i] >= -1 && at[i] < plane, "max_pool2d_backward: index ", at[i],
                     " at position ", i, " is outside the input plane of ", g.H, " x ", g.W,
                     " (input shape ", input_shape, "; -1 marks a window holding no input)");
    }
  }
  Tensor gx = empty(input_shape, grad_out.options());
  if (gx.numel() == 0) return gx;
  const cuda::DeviceGuard guard(gx.device());
  switch (gx.device().type) {
    case DeviceType::CPU:
      kernels::cpu::max_pool2d_backward(gx.dtype(), gx.data_ptr(), gy.data_ptr(),
                                        idx.data_ptr<std::int64_t>(), g);
      break;
    case DeviceType::CUDA:
      kernels::cuda::max_pool2d_backward(gx.dtype(), gx.data_ptr(), gy.data_ptr(),
                                         idx.data_ptr<std::int64_t>(), g);
      break;
  }
  return gx;
}

namespace {

// The geometry of adaptive max pooling from `in` (3-D or 4-D) to `output_size`, as the Note
// [Adaptive pooling windows] needs it. PyTorch's checks: non-batch dims non-empty (a 0-size
// batch gives an empty output), output sizes non-negative (0 gives an empty output, as PyTorch
// 1.13's).
Pool2dShape adaptive_pool_shape(const char* op, const Shape& in, Pool2dSize output_size) {
  LG_CHECK_SHAPE(in.size() == 3 || in.size() == 4, op,
                 ": expected a 3-D (C, H, W) or 4-D (N, C, H, W) input, got shape ", in);
  for (std::size_t d = in.size() - 3; d < in.size(); ++d) {
    LG_CHECK_SHAPE(in[d] > 0, op,
                   ": expected input to have non-zero size for non-batch dimensions, got shape ",
                   in);
  }
  const std::int64_t oh = output_size[0], ow = output_size[1];
  LG_CHECK_SHAPE(oh >= 0 && ow >= 0, op, ": expected a non-negative output size, got ",
                 shape_str({oh, ow}), " for input ", in);
  constexpr std::int64_t kMaxSize = std::int64_t{1} << 31;
  LG_CHECK_SHAPE(oh < kMaxSize && ow < kMaxSize && in[in.size() - 2] < kMaxSize &&
                     in[in.size() - 1] < kMaxSize,
                 op, ": plane and output sizes must be below 2^31, got input ", in,
                 " and output size ", shape_str({oh, ow}));
  Pool2dShape g;
  g.H = in[in.size() - 2];
  g.W = in[in.size() - 1];
  g.planes = in[in.size() - 3] * (in.size() == 4 ? in[0] : 1);
  g.OH = oh;
  g.OW = ow;
  return g;
}

}  // namespace

MaxPool2dResult adaptive_max_pool2d(const Tensor& x, Pool2dSize output_size) {
  const char* op = "adaptive_max_pool2d";
  check_floating(op, x);
  const Pool2dShape g = adaptive_pool_shape(op, x.shape(), output_size);
  const Tensor in = contiguous(x);
  const Shape out_shape = pooled_shape(x.shape(), g);
  MaxPool2dResult r{empty_for(op, out_shape, x.options()),
                    empty_for(op, out_shape, TensorOptions(kInt64).device(x.device()))};
  if (r.out.numel() == 0) return r;
  const cuda::DeviceGuard guard(x.device());
  switch (x.device().type) {
    case DeviceType::CPU:
      kernels::cpu::adaptive_max_pool2d(x.dtype(), r.out.data_ptr(),
                                        r.indices.data_ptr<std::int64_t>(), in.data_ptr(), g);
      break;
    case DeviceType::CUDA:
      kernels::cuda::adaptive_max_pool2d(x.dtype(), r.out.data_ptr(),
                                         r.indices.data_ptr<std::int64_t>(), in.data_ptr(), g);
      break;
  }
  return r;
}

Tensor adaptive_max_pool2d_backward(const Tensor& grad_out, const Tensor& indices,
                                    const Shape& input_shape) {
  const char* op = "adaptive_max_pool2d_backward";
  check_floating(op, grad_out);
  check_same_device(op, grad_out, indices);
  LG_CHECK_SHAPE(grad_out.dim() == static_cast<std::int64_t>(input_shape.size()), op,
                 ": expected grad_out with as many dims as the input ", input_shape, ", got ",
                 grad_out.shape());
  const Pool2dShape g =
      adaptive_pool_shape(op, input_shape, {grad_out.size(-2), grad_out.size(-1)});
  LG_CHECK_SHAPE(grad_out.shape() == pooled_shape(input_shape, g) &&
                     indices.shape() == grad_out.shape() && indices.dtype() == kInt64,
                 op, ": expected grad_out and int64 indices of shape ",
                 pooled_shape(input_shape, g), ", got ", grad_out.shape(), " and ", indices.shape(),
                 " ", indices.dtype());
  // The kernels gather: an index outside the plane is never matched, so no check is needed for
  // memory safety (it only drops that gradient).
  const Tensor gy = contiguous(grad_out);
  const Tensor idx = contiguous(indices);
  Tensor gx = empty_for(op, input_shape, grad_out.options());
  if (gx.numel() == 0) return gx;
  if (gy.numel() == 0) {  // an output size of 0: no window, so no gradient reaches the input
    fill_(gx, 0.0);
    return gx;
  }
  const cuda::DeviceGuard guard(gx.device());
  switch (gx.device().type) {
    case DeviceType::CPU:
      kernels::cpu::adaptive_max_pool2d_backward(gx.dtype(), gx.data_ptr(), gy.data_ptr(),
                                                 idx.data_ptr<std::int64_t>(), g);
      break;
    case DeviceType::CUDA:
      kernels::cuda::adaptive_max_pool2d_backward(gx.dtype(), gx.data_ptr(), gy.data_ptr(),
                                                  idx.data_ptr<std::int64_t>(), g);
      break;
  }
  return gx;
}

Tensor avg_pool2d(const Tensor& x, Pool2dSize kernel, Pool2dSize stride, Pool2dSize padding,
                  bool ceil_mode, bool count_include_pad,
                  std::optional<std::int64_t> divisor_override) {
  check_floating("avg_pool2d", x);
  const Pool2dShape g = avg_pool_shape("avg_pool2d", x.shape(), kernel, stride, padding, ceil_mode,
                                       count_include_pad, divisor_override);
  const Tensor in = contiguous(x);
  Tensor out = empty(pooled_shape(x.shape(), g), x.options());
  if (out.numel() == 0) return out;
  const cuda::DeviceGuard guard(x.device());
  switch (x.device().type) {
    case DeviceType::CPU:
      kernels::cpu::avg_pool2d(x.dtype(), out.data_ptr(), in.data_ptr(), g);
      break;
    case DeviceType::CUDA:
      kernels::cuda::avg_pool2d(x.dtype(), out.data_ptr(), in.data_ptr(), g);
      break;
  }
  return out;
}

Tensor avg_pool2d_backward(const Tensor& grad_out, const Shape& input_shape, Pool2dSize kernel,
                           Pool2dSize stride, Pool2dSize padding, bool ceil_mode,
                           bool count_include_pad, std::optional<std::int64_t> divisor_override) {
  check_floating("avg_pool2d_backward", grad_out);
  const Pool2dShape g = avg_pool_shape("avg_pool2d_backward", input_shape, kernel, stride, padding,
                                       ceil_mode, count_include_pad, divisor_override);
  LG_CHECK_SHAPE(grad_out.shape() == pooled_shape(input_shape, g),
                 "avg_pool2d_backward: expected grad_out of shape ", pooled_shape(input_shape, g),
                 ", got ", grad_out.shape());
  const Tensor gy = contiguous(grad_out);
  Tensor gx = empty(input_shape, grad_out.options());
  if (gx.numel() == 0) return gx;
  const cuda::DeviceGuard guard(gx.device());
  switch (gx.device().type) {
    case DeviceType::CPU:
      kernels::cpu::avg_pool2d_backward(gx.dtype(), gx.data_ptr(), gy.data_ptr(), g);
      break;
    case DeviceType::CUDA:
      kernels::cuda::avg_pool2d_backward(gx.dtype(), gx.data_ptr(), gy.data_ptr(), g);
      break;
  }
  return gx;
}

// ---- Dropout ---------------------------------------------------------------------------------

namespace {
double dropout_scale(double p) {
  return p < 1.0 ? 1.0 / (1.0 - p) : 0.0;
}
}  // namespace

DropoutResult dropout(const Tensor& x, double p, Generator& gen) {
  check_floating("dropout", x);
  LG_CHECK(p >= 0.0 && p <= 1.0, "dropout: expected a probability p in [0, 1], got ", p);
  const Tensor in = contiguous(x);
  DropoutResult r{empty(x.shape(), x.options()),
                  empty(x.shape(), TensorOptions(kBool).device(x.device()))};
  const std::int64_t numel = x.numel();
  if (numel == 0) return r;
  const auto counters = static_cast<std::uint64_t>((numel + layers_math::kDropoutPerCounter - 1) /
                                                   layers_math::kDropoutPerCounter);
  const Generator::State s = gen.reserve(counters);
  const cuda::DeviceGuard guard(x.device());
  switch (x.device().type) {
    case DeviceType::CPU:
      kernels::cpu::dropout(x.dtype(), r.out.data_ptr(), r.mask.data_ptr<bool>(), in.data_ptr(),
                            numel, p, dropout_scale(p), s.seed, s.offset);
      break;
    case DeviceType::CUDA:
      kernels::cuda::dropout(x.dtype(), r.out.data_ptr(), r.mask.data_ptr<bool>(), in.data_ptr(),
                             numel, p, dropout_scale(p), s.seed, s.offset);
      break;
  }
  return r;
}

Tensor dropout_backward(const Tensor& grad_out, const Tensor& mask, double p) {
  check_floating("dropout_backward", grad_out);
  check_same_device("dropout_backward", grad_out, mask);
  LG_CHECK_SHAPE(mask.dtype() == kBool && mask.shape() == grad_out.shape(),
                 "dropout_backward: expected a bool mask of shape ", grad_out.shape(), ", got ",
                 mask.dtype(), " ", mask.shape());
  const Tensor gy = contiguous(grad_out);
  const Tensor m = contiguous(mask);
  Tensor gx = empty(grad_out.shape(), grad_out.options());
  if (gx.numel() == 0) return gx;
  const cuda::DeviceGuard guard(gx.device());
  switch (gx.device().type) {
    case DeviceType::CPU:
      kernels::cpu::dropout_backward(gx.dtype(), gx.data_ptr(), gy.data_ptr(), m.data_ptr<bool>(),
                                     gx.numel(), dropout_scale(p));
      break;
    case DeviceType::CUDA:
      kernels::cuda::dropout_backward(gx.dtype(), gx.data_ptr(), gy.data_ptr(), m.data_ptr<bool>(),
                                      gx.numel(), dropout_scale(p));
      break;
  }
  return gx;
}

// ---- Softmax ---------------------------------------------------------------------------------

Tensor softmax(const Tensor& x, std::int64_t dim, bool log) {
  const char* op = log ? "log_softmax" : "softmax";
  check_floating(op, x);
  const std::int64_t d = wrap_dim(dim, x.dim(), op);  // a 0-d x takes dims 0 and -1
  const Tensor in = contiguous(x);
  Tensor out = empty(x.shape(), x.options());
  if (out.numel() == 0) return out;
  const RunLayout l = run_layout(x.shape(), d);
  const cuda::DeviceGuard guard(x.device());
  switch (x.device().type) {
    case DeviceType::CPU:
      kernels::cpu::softmax(x.dtype(), out.data_ptr(), in.data_ptr(), l.outer, l.R, l.inner, log);
      break;
    case DeviceType::CUDA:
      kernels::cuda::softmax(x.dtype(), out.data_ptr(), in.data_ptr(), l.outer, l.R, l.inner, log);
      break;
  }
  return out;
}

Tensor softmax_backward(const Tensor& grad_out, const Tensor& out, std::int64_t dim, bool log) {
  const char* op = log ? "log_softmax_backward" : "softmax_backward";
  check_floating(op, grad_out);
  check_same_device(op, grad_out, out);
  LG_CHECK_SHAPE(grad_out.shape() == out.shape() && grad_out.dtype() == out.dtype(), op,
                 ": expected grad_out like the output ", out.shape(), ", got ", grad_out.shape());
  const std::int64_t d = wrap_dim(dim, out.dim(), op);
  const Tensor gy = contiguous(grad_out);
  const Tensor y = contiguous(out);
  Tensor gx = empty(out.shape(), out.options());
  if (gx.numel() == 0) return gx;
  const RunLayout l = run_layout(out.shape(), d);
  const cuda::DeviceGuard guard(gx.device());
  switch (gx.device().type) {
    case DeviceType::CPU:
      kernels::cpu::softmax_backward(gx.dtype(), gx.data_ptr(), gy.data_ptr(), y.data_ptr(),
                                     l.outer, l.R, l.inner, log);
      break;
    case DeviceType::CUDA:
      kernels::cuda::softmax_backward(gx.dtype(), gx.data_ptr(), gy.data_ptr(), y.data_ptr(),
                                      l.outer, l.R, l.inner, log);
      break;
  }
  return gx;
}

// ---- Losses ----------------------------------------------------------------------------------

Shape class_target_shape(const Shape& input_shape) {
  Shape target_shape = input_shape;
  if (!target_shape.empty())  // a 0-d input has no class dim (check_class_targets refuses it)
    target_shape.erase(target_shape.begin() + (target_shape.size() >= 2 ? 1 : 0));
  return target_shape;
}

void check_class_targets(const char* op, const Tensor& input, const Tensor& target) {
  check_floating(op, input);
  LG_CHECK(target.defined(), op, ": expected a defined target, got an undefined Tensor()");
  check_same_device(op, input, target);
  LG_CHECK_SHAPE(input.dim() >= 1, op,
                 ": expected input of shape (C), (N, C) or (N, C, d1, ...), got ", input.shape());
  LG_CHECK_DTYPE(target.dtype() == kInt64, op,
                 ": expected target of dtype int64 (class indices), got ", target.dtype());
  const Shape expected = class_target_shape(input.shape());
  LG_CHECK_SHAPE(target.shape() == expected, op, ": expected target of shape ",
                 input.dim() == 1   ? "() (a 0-d class index)"
                 : input.dim() == 2 ? "(N,)"
                                    : "(N, d1, ...)",
                 " = ", expected, " for input of shape ", input.shape(), ", got ", target.shape());
}

void check_class_weight(const char* op, const Tensor& weight, const Tensor& input) {
  if (!weight.defined()) return;
  LG_CHECK_SHAPE(input.dim() >= 1, op,
                 ": expected input of shape (C), (N, C) or (N, C, d1, ...), got ", input.shape());
  const std::int64_t C = input.size(input.dim() == 1 ? 0 : 1);
  const std::string got =
      detail::str_cat(": expected a class weight of shape ", shape_str({C}),
                      " (one per class of the input of shape ", input.shape(), "), ", input.dtype(),
                      " on ", input.device(), " as the input; got shape ", weight.shape(), ", ",
                      weight.dtype(), " on ", weight.device());
  LG_CHECK_SHAPE(weight.dim() == 1 && weight.size(0) == C, op, got);
  LG_CHECK_DTYPE(weight.dtype() == input.dtype(), op, got);
  LG_CHECK_DEVICE(weight.device() == input.device(), op, got);
}

CrossEntropyResult cross_entropy(const Tensor& logits, const Tensor& target, const Tensor& weight,
                                 std::int64_t ignore_index) {
  const std::int64_t C = check_loss_operands("cross_entropy", logits, target);
  check_class_weight("cross_entropy", weight, logits);
  const Tensor t = contiguous(target);
  check_targets_on_cpu("cross_entropy", t, C, ignore_index);
  const Tensor x = contiguous(logits);
  const Tensor w = weight.defined() ? contiguous(weight) : Tensor();
  const std::int64_t N = logits.size(0);
  const DType lse_dtype = logits.dtype() == kFloat64 ? kFloat64 : kFloat32;
  CrossEntropyResult r{empty({N}, logits.options()), empty({N}, logits.options()),
                       empty({N}, TensorOptions(lse_dtype).device(logits.device()))};
  if (N == 0) return r;
  LG_CHECK_SHAPE(C > 0, "cross_entropy: expected at least one class, got input of shape ",
                 logits.shape());
  const void* wp = w.defined() ? w.data_ptr() : nullptr;
  const cuda::DeviceGuard guard(x.device());
  switch (x.device().type) {
    case DeviceType::CPU:
      kernels::cpu::cross_entropy(x.dtype(), r.losses.data_ptr(), r.sample_weights.data_ptr(),
                                  r.logsumexp.data_ptr(), x.data_ptr(), t.data_ptr<std::int64_t>(),
                                  wp, N, C, ignore_index);
      break;
    case DeviceType::CUDA:
      kernels::cuda::cross_entropy(x.dtype(), r.losses.data_ptr(), r.sample_weights.data_ptr(),
                                   r.logsumexp.data_ptr(), x.data_ptr(), t.data_ptr<std::int64_t>(),
                                   wp, N, C, ignore_index);
      break;
  }
  return r;
}

Tensor cross_entropy_backward(const Tensor& grad_losses, const Tensor& logits,
                              const Tensor& logsumexp, const Tensor& target, const Tensor& weight,
                              std::int64_t ignore_index) {
  const std::int64_t C = check_loss_operands("cross_entropy_backward", logits, target);
  check_class_weight("cross_entropy_backward", weight, logits);
  const std::int64_t N = logits.size(0);
  LG_CHECK_SHAPE(grad_losses.shape() == Shape{N} && logsumexp.shape() == Shape{N},
                 "cross_entropy_backward: expected grad_losses and logsumexp of shape ",
                 shape_str({N}), ", got ", grad_losses.shape(), " and ", logsumexp.shape());
  // The kernel reads logsumexp as cross_entropy wrote it: float32, float64 for float64 logits.
  const DType lse_dtype = logits.dtype() == kFloat64 ? kFloat64 : kFloat32;
  LG_CHECK_DTYPE(logsumexp.dtype() == lse_dtype, "cross_entropy_backward: expected a ", lse_dtype,
                 " logsumexp for ", logits.dtype(), " logits, got ", logsumexp.dtype());
  check_same_device("cross_entropy_backward", logits, logsumexp);
  check_same_device("cross_entropy_backward", logits, grad_losses);
  const Tensor gl = grad_losses.dtype() == logits.dtype() ? contiguous(grad_losses)
                                                          : cast(grad_losses, logits.dtype());
  const Tensor x = contiguous(logits);
  const Tensor lse = contiguous(logsumexp);
  const Tensor t = contiguous(target);
  const Tensor w = weight.defined() ? contiguous(weight) : Tensor();
  check_targets_on_cpu("cross_entropy_backward", t, C, ignore_index);
  Tensor gx = empty(logits.shape(), logits.options());
  if (gx.numel() == 0) return gx;
  const void* wp = w.defined() ? w.data_ptr() : nullptr;
  const cuda::DeviceGuard guard(gx.device());
  switch (gx.device().type) {
    case DeviceType::CPU:
      kernels::cpu::cross_entropy_backward(gx.dtype(), gx.data_ptr(), gl.data_ptr(), x.data_ptr(),
                                           lse.data_ptr(), t.data_ptr<std::int64_t>(), wp, N, C,
                                           ignore_index);
      break;
    case DeviceType::CUDA:
      kernels::cuda::cross_entropy_backward(gx.dtype(), gx.data_ptr(), gl.data_ptr(), x.data_ptr(),
                                            lse.data_ptr(), t.data_ptr<std::int64_t>(), wp, N, C,
                                            ignore_index);
      break;
  }
  return gx;
}

NllLossResult nll_loss(const Tensor& logp, const Tensor& target, const Tensor& weight,
                       std::int64_t ignore_index) {
  const std::int64_t C = check_loss_operands("nll_loss", logp, target);
  check_class_weight("nll_loss", weight, logp);
  const Tensor t = contiguous(target);
  check_targets_on_cpu("nll_loss", t, C, ignore_index);
  const Tensor x = contiguous(logp);
  const Tensor w = weight.defined() ? contiguous(weight) : Tensor();
  const std::int64_t N = logp.size(0);
  NllLossResult r{empty({N}, logp.options()), empty({N}, logp.options())};
  if (N == 0) return r;
  const void* wp = w.defined() ? w.data_ptr() : nullptr;
  const cuda::DeviceGuard guard(x.device());
  switch (x.device().type) {
    case DeviceType::CPU:
      kernels::cpu::nll_loss(x.dtype(), r.losses.data_ptr(), r.sample_weights.data_ptr(),
                             x.data_ptr(), t.data_ptr<std::int64_t>(), wp, N, C, ignore_index);
      break;
    case DeviceType::CUDA:
      kernels::cuda::nll_loss(x.dtype(), r.losses.data_ptr(), r.sample_weights.data_ptr(),
                              x.data_ptr(), t.data_ptr<std::int64_t>(), wp, N, C, ignore_index);
      break;
  }
  return r;
}

Tensor nll_loss_backward(const Tensor& grad_losses, const Tensor& target, const Tensor& weight,
                         std::int64_t num_classes, std::int64_t ignore_index) {
  check_floating("nll_loss_backward", grad_losses);
  check_same_device("nll_loss_backward", grad_losses, target);
  const std::int64_t N = target.numel();
  LG_CHECK_SHAPE(grad_losses.shape() == Shape{N} && target.dtype() == kInt64,
                 "nll_loss_backward: expected grad_losses of shape ", shape_str({N}),
                 " and int64 target, got ", grad_losses.shape(), " and ", target.dtype());
  LG_CHECK_SHAPE(num_classes >= 0, "nll_loss_backward: expected num_classes >= 0, got ",
                 num_classes);
  if (weight.defined()) {
    LG_CHECK_SHAPE(weight.shape() == Shape{num_classes} && weight.dtype() == grad_losses.dtype(),
                   "nll_loss_backward: expected a class weight of shape ", shape_str({num_classes}),
                   " and dtype ", grad_losses.dtype(), ", got ", weight.shape(), " ",
                   weight.dtype());
    check_same_device("nll_loss_backward", grad_losses, weight);
  }
  const Tensor gl = contiguous(grad_losses);
  const Tensor t = contiguous(target);
  const Tensor w = weight.defined() ? contiguous(weight) : Tensor();
  check_targets_on_cpu("nll_loss_backward", t, num_classes, ignore_index);
  Tensor gx = empty({N, num_classes}, grad_losses.options());
  if (gx.numel() == 0) return gx;
  const void* wp = w.defined() ? w.data_ptr() : nullptr;
  const cuda::DeviceGuard guard(gx.device());
  switch (gx.device().type) {
    case DeviceType::CPU:
      kernels::cpu::nll_loss_backward(gx.dtype(), gx.data_ptr(), gl.data_ptr(),
                                      t.data_ptr<std::int64_t>(), wp, N, num_classes, ignore_index);
      break;
    case DeviceType::CUDA:
      kernels::cuda::nll_loss_backward(gx.dtype(), gx.data_ptr(), gl.data_ptr(),
                                       t.data_ptr<std::int64_t>(), wp, N, num_classes,
                                       ignore_index);
      break;
  }
  return gx;
}

}  // namespace leangrad::ops
