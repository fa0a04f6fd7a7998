// Tensor-level entries of the normalization layers (kernels/ops.h): GroupNorm, LayerNorm and
// BatchNorm, forward and backward. Launchers: group_norm_*, layer_norm_* and batch_norm_* of
// kernels/backend.h; layout and formulas: the Notes [GroupNorm layout and math], [LayerNorm
// layout and math] and [BatchNorm layout and math] in kernels/group_norm_math.h. x and dy are
// made contiguous (a copy only when they are not) and seen as (N, C, HxW), (rows, features) or
// (N, C, S); mean and rstd are kept in the accumulation dtype (float32, or float64 for float64
// input), as the kernels compute them.
#include <cmath>
#include <utility>

#include <leangrad/core/creation.h>
#include <leangrad/core/cuda.h>
#include <leangrad/kernels/backend.h>
#include <leangrad/kernels/ops.h>
#include <leangrad/kernels/ops_checks.h>

namespace leangrad::ops {

using kernels::BatchNormSizes;
using kernels::GroupNormSizes;

namespace {

DType accumulation_dtype(DType dtype) {
  return dtype == DType::Float64 ? DType::Float64 : DType::Float32;
}

// x (N, C, *) of a floating dtype, seen as (N, C, S), S the product of the trailing dims.
BatchNormSizes batch_norm_sizes(const char* op, const Tensor& x) {
  check_floating(op, x, "input", ListFloatingDTypes::Yes);
  LG_CHECK_SHAPE(x.dim() >= 2, op, ": expected an input of shape (N, C, *), got ", x.shape());
  BatchNormSizes sizes;
  sizes.batch = x.shape()[0];
  sizes.channels = x.shape()[1];
  sizes.spatial = 1;
  for (std::int64_t d = 2; d < x.dim(); ++d)
    sizes.spatial *= x.shape()[d];
  return sizes;
}

GroupNormSizes check_input(const char* op, const Tensor& x, std::int64_t num_groups) {
  const BatchNormSizes s = batch_norm_sizes(op, x);
  LG_CHECK_SHAPE(num_groups > 0 && s.channels % num_groups == 0, op, ": num_groups (", num_groups,
                 ") must be positive and divide the number of channels (", s.channels,
                 ") of the input of shape ", x.shape());
  GroupNormSizes sizes;
  sizes.batch = s.batch;
  sizes.channels = s.channels;
  sizes.spatial = s.spatial;
  sizes.groups = num_groups;
  return sizes;
}

// An affine parameter (defined) in x's dtype and on x's device.
void check_parameter_dtype_and_device(const char* op, const char* name, const Tensor& p,
                                      const Tensor& x) {
  LG_CHECK_DTYPE(p.dtype() == x.dtype(), op, ": ", name, " has dtype ", p.dtype(), ", the input ",
                 x.dtype());
  LG_CHECK_DEVICE(p.device() == x.device(), op, ": ", name, " is on ", p.device(),
                  ", the input on ", x.device());
}

void check_parameter(const char* op, const char* name, const Tensor& p, const Tensor& x) {
  if (!p.defined()) return;
  LG_CHECK_SHAPE(p.dim() == 1 && p.shape()[0] == x.shape()[1], op, ": expected ", name,
                 " of shape (C,) = (", x.shape()[1], "), got ", p.shape());
  check_parameter_dtype_and_device(op, name, p, x);
}

const void* data_or_null(const Tensor& t) {
  return t.defined() ? t.data_ptr() : nullptr;
}

// LayerNorm's rows: x.numel() / features, features > 0 dividing it.
std::int64_t layer_norm_rows(const char* op, const Tensor& x, std::int64_t features) {
  check_floating(op, x, "input", ListFloatingDTypes::Yes);
  LG_CHECK_SHAPE(features > 0 && x.numel() % features == 0, op, ": features (", features,
                 ") must be positive and divide the number of elements of the input of shape ",
                 x.shape());
  return x.numel() / features;
}

void check_layer_norm_parameter(const char* op, const char* name, const Tensor& p, const Tensor& x,
                                std::int64_t features) {
  if (!p.defined()) return;
  LG_CHECK_SHAPE(p.numel() == features, op, ": expected ", name, " of ", features,
                 " elements, got shape ", p.shape(), " (input of shape ", x.shape(), ")");
  check_parameter_dtype_and_device(op, name, p, x);
}

// mean and rstd as the forward returned them for `rows` rows (or `shape` in general).
void check_statistics(const char* op, const Tensor& mean, const Tensor& rstd, const Tensor& x,
                      const Shape& shape) {
  for (const Tensor* s : {&mean, &rstd}) {
    LG_CHECK(s->defined() && s->shape() == shape && s->is_contiguous() &&
                 s->dtype() == accumulation_dtype(x.dtype()) && s->device() == x.device(),
             op, ": mean and rstd must be what the forward returned for this input (", shape, ", ",
             accumulation_dtype(x.dtype()), ")");
  }
}

// grad_output against x: defined, of x's shape, dtype and device.
void check_gradient(const char* op, const Tensor& grad_output, const Tensor& x) {
  LG_CHECK(grad_output.defined(), op, ": expected a defined gradient");
  LG_CHECK_SHAPE(grad_output.shape() == x.shape(), op, ": gradient of shape ", grad_output.shape(),
                 " does not match the input's shape ", x.shape());
  LG_CHECK_DTYPE(grad_output.dtype() == x.dtype(), op, ": gradient dtype ", grad_output.dtype(),
                 " differs from the input's ", x.dtype());
  LG_CHECK_DEVICE(grad_output.device() == x.device(), op, ": gradient on ", grad_output.device(),
                  ", input on ", x.device());
}

// The gradients a backward was asked for, allocated: grad_input of x's shape, grad_weight and
// grad_bias of parameter_shape. False when no kernel need run: nothing asked for, or an empty
// input (nothing flowed: the parameters' gradients are zeros, the input's empty).
bool allocate_grads(GroupNormGrads& grads, const Tensor& x, const Shape& parameter_shape,
                    bool need_input, bool need_weight, bool need_bias) {
  if (need_input) grads.grad_input = empty(x.shape(), x.options());
  if (need_weight) grads.grad_weight = empty(parameter_shape, x.options());
  if (need_bias) grads.grad_bias = empty(parameter_shape, x.options());
  if (!need_input && !need_weight && !need_bias) return false;
  if (x.numel() == 0) {
    if (need_weight) fill_(grads.grad_weight, 0.0);
    if (need_bias) fill_(grads.grad_bias, 0.0);
    return false;
  }
  return true;
}

// A gradient's data for the launcher, or null when it was not asked for.
void* output_or_null(const Tensor& t) {
  return t.defined() ? t.data_ptr() : nullptr;
}

// Evaluation's mean and rstd in the accumulation dtype: running_mean, 1 / sqrt(running_var + eps).
GroupNormOutput running_statistics(const char* op, const Tensor& x, const Tensor& running_mean,
                                   const Tensor& running_var, double eps) {
  for (const auto& [name, t] : {std::pair<const char*, const Tensor&>{"running_mean", running_mean},
                                {"running_var", running_var}}) {
    LG_CHECK(t.defined(), op, ": evaluation needs ", name);
    LG_CHECK_SHAPE(t.dim() == 1 && t.shape()[0] == x.shape()[1], op, ": expected ", name,
                   " of shape (C,) = (", x.shape()[1], "), got ", t.shape());
    LG_CHECK_DTYPE(is_floating(t.dtype()), op, ": ", name, " has dtype ", t.dtype());
    LG_CHECK_DEVICE(t.device() == x.device(), op, ": ", name, " is on ", t.device(),
                    ", the input on ", x.device());
  }
  const DType acc = accumulation_dtype(x.dtype());
  GroupNormOutput result;
  // A copy, never running_mean itself: backward reads it after training steps change that.
  result.mean = empty({x.shape()[1]}, TensorOptions(acc).device(x.device()));
  copy_(result.mean, running_mean);
  result.rstd = unary(UnaryOp::Rsqrt, binary(BinaryOp::Add, cast(running_var, acc), eps));
  return result;
}

}  // namespace

GroupNormOutput group_norm(const Tensor& x, std::int64_t num_groups, const Tensor& weight,
                           const Tensor& bias, double eps) {
  const GroupNormSizes sizes = check_input("group_norm", x, num_groups);
  check_parameter("group_norm", "weight", weight, x);
  check_parameter("group_norm", "bias", bias, x);
  const Tensor in = contiguous(x);
  const Tensor w = weight.defined() ? contiguous(weight) : Tensor();
  const Tensor b = bias.defined() ? contiguous(bias) : Tensor();
  const TensorOptions stats_options =
      TensorOptions(accumulation_dtype(x.dtype())).device(x.device());
  GroupNormOutput result{empty(x.shape(), x.options()),
                         empty({sizes.batch, num_groups}, stats_options),
                         empty({sizes.batch, num_groups}, stats_options)};
  if (x.numel() == 0) return result;
  const cuda::DeviceGuard guard(x.device());
  switch (x.device().type) {
    case DeviceType::CPU:
      kernels::cpu::group_norm_forward(x.dtype(), sizes, result.output.data_ptr(),
                                       result.mean.data_ptr(), result.rstd.data_ptr(),
                                       in.data_ptr(), data_or_null(w), data_or_null(b), eps);
      break;
    case DeviceType::CUDA:
      kernels::cuda::group_norm_forward(x.dtype(), sizes, result.output.data_ptr(),
                                        result.mean.data_ptr(), result.rstd.data_ptr(),
                                        in.data_ptr(), data_or_null(w), data_or_null(b), eps);
      break;
  }
  return result;
}

GroupNormGrads group_norm_backward(const Tensor& grad_output, const Tensor& x, const Tensor& mean,
                                   const Tensor& rstd, const Tensor& weight,
                                   std::int64_t num_groups, bool need_input, bool need_weight,
                                   bool need_bias) {
  const char* op = "group_norm_backward";
  const GroupNormSizes sizes = check_input(op, x, num_groups);
  check_parameter(op, "weight", weight, x);
  check_gradient(op, grad_output, x);
  check_statistics(op, mean, rstd, x, {sizes.batch, num_groups});
  const Tensor dy = contiguous(grad_output);
  const Tensor in = contiguous(x);
  const Tensor w = weight.defined() ? contiguous(weight) : Tensor();
  GroupNormGrads grads;
  if (!allocate_grads(grads, x, {sizes.channels}, need_input, need_weight, need_bias)) return grads;
  void* dx = output_or_null(grads.grad_input);
  void* dw = output_or_null(grads.grad_weight);
  void* db = output_or_null(grads.grad_bias);
  const cuda::DeviceGuard guard(x.device());
  switch (x.device().type) {
    case DeviceType::CPU:
      kernels::cpu::group_norm_backward(x.dtype(), sizes, dx, dw, db, dy.data_ptr(), in.data_ptr(),
                                        mean.data_ptr(), rstd.data_ptr(), data_or_null(w));
      break;
    case DeviceType::CUDA:
      kernels::cuda::group_norm_backward(x.dtype(), sizes, dx, dw, db, dy.data_ptr(), in.data_ptr(),
                                         mean.data_ptr(), rstd.data_ptr(), data_or_null(w));
      break;
  }
  return grads;
}

GroupNormOutput layer_norm(const Tensor& x, std::int64_t features, const Tensor& weight,
                           const Tensor& bias, double eps) {
  const char* op = "layer_norm";
  const std::int64_t rows = layer_norm_rows(op, x, features);
  check_layer_norm_parameter(op, "weight", weight, x, features);
  check_layer_norm_parameter(op, "bias", bias, x, features);
  const Tensor in = contiguous(x);
  const Tensor w = weight.defined() ? contiguous(weight) : Tensor();
  const Tensor b = bias.defined() ? contiguous(bias) : Tensor();
  const TensorOptions stats_options =
      TensorOptions(accumulation_dtype(x.dtype())).device(x.device());
  GroupNormOutput result{empty(x.shape(), x.options()), empty({rows}, stats_options),
                         empty({rows}, stats_options)};
  if (x.numel() == 0) return result;
  const cuda::DeviceGuard guard(x.device());
  switch (x.device().type) {
    case DeviceType::CPU:
      kernels::cpu::layer_norm_forward(x.dtype(), rows, features, result.output.data_ptr(),
                                       result.mean.data_ptr(), result.rstd.data_ptr(),
                                       in.data_ptr(), data_or_null(w), data_or_null(b), eps);
      break;
    case DeviceType::CUDA:
      kernels::cuda::layer_norm_forward(x.dtype(), rows, features, result.output.data_ptr(),
                                        result.mean.data_ptr(), result.rstd.data_ptr(),
                                        in.data_ptr(), data_or_null(w), data_or_null(b), eps);
      break;
  }
  return result;
}

GroupNormGrads layer_norm_backward(const Tensor& grad_output, const Tensor& x, const Tensor& mean,
                                   const Tensor& rstd, const Tensor& weight, std::int64_t features,
                                   bool need_input, bool need_weight, bool need_bias) {
  const char* op = "layer_norm_backward";
  const std::int64_t rows = layer_norm_rows(op, x, features);
  check_layer_norm_parameter(op, "weight", weight, x, features);
  check_gradient(op, grad_output, x);
  check_statistics(op, mean, rstd, x, {rows});
  LG_CHECK(weight.defined() || !need_weight, op,
           ": the weight's gradient was asked for without a weight");
  const Tensor dy = contiguous(grad_output);
  const Tensor in = contiguous(x);
  const Tensor w = weight.defined() ? contiguous(weight) : Tensor();
  // The bias has the weight's shape; without a weight, normalized_shape is not known here.
  const Shape parameter_shape = weight.defined() ? weight.shape() : Shape{features};
  GroupNormGrads grads;
  if (!allocate_grads(grads, x, parameter_shape, need_input, need_weight, need_bias)) return grads;
  void* dx = output_or_null(grads.grad_input);
  void* dw = output_or_null(grads.grad_weight);
  void* db = output_or_null(grads.grad_bias);
  const cuda::DeviceGuard guard(x.device());
  switch (x.device().type) {
    case DeviceType::CPU:
      kernels::cpu::layer_norm_backward(x.dtype(), rows, features, dx, dw, db, dy.data_ptr(),
                                        in.data_ptr(), mean.data_ptr(), rstd.data_ptr(),
                                        data_or_null(w));
      break;
    case DeviceType::CUDA:
      kernels::cuda::layer_norm_backward(x.dtype(), rows, features, dx, dw, db, dy.data_ptr(),
                                         in.data_ptr(), mean.data_ptr(), rstd.data_ptr(),
                                         data_or_null(w));
      break;
  }
  return grads;
}

GroupNormOutput batch_norm(const Tensor& x, const Tensor& weight, const Tensor& bias,
                           const Tensor& running_mean, const Tensor& running_var, bool training,
                           double eps) {
  const char* op = "batch_norm";
  const BatchNormSizes sizes = batch_norm_sizes(op, x);
  check_parameter(op, "weight", weight, x);
  check_parameter(op, "bias", bias, x);
  const Tensor in = contiguous(x);
  const Tensor w = weight.defined() ? contiguous(weight) : Tensor();
  const Tensor b = bias.defined() ? contiguous(bias) : Tensor();
  const TensorOptions stats_options =
      TensorOptions(accumulation_dtype(x.dtype())).device(x.device());
  GroupNormOutput result = training
                               ? GroupNormOutput{Tensor(), empty({sizes.channels}, stats_options),
                                                 empty({sizes.channels}, stats_options)}
                               : running_statistics(op, x, running_mean, running_var, eps);
  result.output = empty(x.shape(), x.options());
  if (x.numel() == 0) {
    // No value: the batch's statistics are those of an empty set (mean 0, variance 0).
    if (training) {
      fill_(result.mean, 0.0);
      fill_(result.rstd, 1.0 / std::sqrt(eps));
    }
    return result;
  }
  const cuda::DeviceGuard guard(x.device());
  switch (x.device().type) {
    case DeviceType::CPU:
      if (training)
        kernels::cpu::batch_norm_statistics(x.dtype(), sizes, result.mean.data_ptr(),
                                            result.rstd.data_ptr(), in.data_ptr(), eps);
      kernels::cpu::batch_norm_forward(x.dtype(), sizes, result.output.data_ptr(), in.data_ptr(),
                                       result.mean.data_ptr(), result.rstd.data_ptr(),
                                       data_or_null(w), data_or_null(b));
      break;
    case DeviceType::CUDA:
      if (training)
        kernels::cuda::batch_norm_statistics(x.dtype(), sizes, result.mean.data_ptr(),
                                             result.rstd.data_ptr(), in.data_ptr(), eps);
      kernels::cuda::batch_norm_forward(x.dtype(), sizes, result.output.data_ptr(), in.data_ptr(),
                                        result.mean.data_ptr(), result.rstd.data_ptr(),
                                        data_or_null(w), data_or_null(b));
      break;
  }
  return result;
}

GroupNormGrads batch_norm_backward(const Tensor& grad_output, const Tensor& x, const Tensor& mean,
                                   const Tensor& rstd, const Tensor& weight, bool training,
                                   bool need_input, bool need_weight, bool need_bias) {
  const char* op = "batch_norm_backward";
  const BatchNormSizes sizes = batch_norm_sizes(op, x);
  check_parameter(op, "weight", weight, x);
  check_gradient(op, grad_output, x);
  check_statistics(op, mean, rstd, x, {sizes.channels});
  const Tensor dy = contiguous(grad_output);
  const Tensor in = contiguous(x);
  const Tensor w = weight.defined() ? contiguous(weight) : Tensor();
  GroupNormGrads grads;
  if (!allocate_grads(grads, x, {sizes.channels}, need_input, need_weight, need_bias)) return grads;
  void* dx = output_or_null(grads.grad_input);
  void* dw = output_or_null(grads.grad_weight);
  void* db = output_or_null(grads.grad_bias);
  const cuda::DeviceGuard guard(x.device());
  switch (x.device().type) {
    case DeviceType::CPU:
      kernels::cpu::batch_norm_backward(x.dtype(), sizes, training, dx, dw, db, dy.data_ptr(),
                                        in.data_ptr(), mean.data_ptr(), rstd.data_ptr(),
                                        data_or_null(w));
      break;
    case DeviceType::CUDA:
      kernels::cuda::batch_norm_backward(x.dtype(), sizes, training, dx, dw, db, dy.data_ptr(),
                                         in.data_ptr(), mean.data_ptr(), rstd.data_ptr(),
                                         data_or_null(w));
      break;
  }
  return grads;
}

}  // namespace leangrad::ops
