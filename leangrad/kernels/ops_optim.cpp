// Tensor-level entries of the fused optimizer updates, clip_grad_norm and the gradient scaling of
// amp::GradScaler (kernels/ops.h, "Optimizers", "Gradient scaling"): each checks every tensor of
// the list (the update's dtype: float32, float64, float16 or bfloat16, or uint8 codes; contiguous,
// the parameter's shape, one device; the int32 flags and skip counts), turns the list into the
// raw-pointer list of kernels/optim_math.h and switches on the device to the launchers of
// kernels/backend.h. optim/ builds these lists from its parameter groups and states, one per dtype.
#include <cmath>
#include <limits>

#include <leangrad/core/cuda.h>
#include <leangrad/kernels/backend.h>
#include <leangrad/kernels/creation.h>
#include <leangrad/kernels/ops.h>
#include <leangrad/kernels/quantization_math.h>

namespace leangrad::ops {
namespace {

// Checks one tensor of parameter `index` of `op`'s list: defined (unless optional), contiguous,
// of `dtype`, on `device`, with `shape`.
void check_tensor(const char* op, std::size_t index, const char* what, const Tensor& t, DType dtype,
                  Device device, const Shape& shape) {
  LG_CHECK(t.defined(), op, ": parameter ", index, " has an undefined ", what);
  LG_CHECK_DTYPE(t.dtype() == dtype, op, ": ", what, " of parameter ", index, " must be ", dtype,
                 ", got ", t.dtype());
  LG_CHECK_DEVICE(t.device() == device, op, ": ", what, " of parameter ", index, " is on ",
                  t.device(), ", the first parameter on ", device);
  LG_CHECK_SHAPE(t.shape() == shape, op, ": ", what, " of parameter ", index, " has shape ",
                 t.shape(), ", expected ", shape);
  LG_CHECK(t.is_contiguous(), op, ": ", what, " of parameter ", index, " (shape ", t.shape(),
           ") must be contiguous: it is read or updated in place");
}

// A flag or counter: one element of `dtype` on `device` (unless undefined and optional).
void check_scalar(const char* op, const char* what, const Tensor& t, DType dtype, Device device) {
  LG_CHECK(t.dtype() == dtype && t.numel() == 1 && t.device() == device, op, ": ", what,
           " must be one ", dtype, " on ", device, ", got ", t.dtype(), " of shape ", t.shape(),
           " on ", t.device());
}

// The raw flags of a launch, checked.
struct RawFlags {
  const int* found_inf = nullptr;
  int* skipped_nonfinite = nullptr;
};
RawFlags raw_flags(const char* op, const StepFlags& flags, Device device) {
  RawFlags raw;
  if (flags.found_inf.defined()) {
    check_scalar(op, "found_inf", flags.found_inf, kInt32, device);
    raw.found_inf = flags.found_inf.data_ptr<std::int32_t>();
  }
  if (flags.skipped_nonfinite.defined()) {
    check_scalar(op, "skipped_nonfinite", flags.skipped_nonfinite, kInt32, device);
    raw.skipped_nonfinite = flags.skipped_nonfinite.data_ptr<std::int32_t>();
  }
  return raw;
}

// A parameter's step on the device as the kernels take it (Note [Gated step]).
kernels::StepArgs raw_step_args(const char* op, std::size_t index, const DeviceStep& step,
                                Device device) {
  if (!step.skipped.defined()) return kernels::StepArgs{0.0, 0.0, 0, nullptr};
  check_scalar(op, "a skip count", step.skipped, kInt32, device);
  LG_CHECK(step.step >= 1, op, ": parameter ", index, " has step ", step.step,
           " on the device (the first update is step 1)");
  return kernels::StepArgs{step.lr, step.weight_decay, step.step,
                           step.skipped.data_ptr<std::int32_t>()};
}

// After a launch: the versions of what it may have written.
void bump_flags(const StepFlags& flags) {
  if (flags.skipped_nonfinite.defined()) flags.skipped_nonfinite.bump_version();
}
void bump_skip_count(const StepFlags& flags, const DeviceStep& step) {
  if (flags.found_inf.defined() && step.skipped.defined()) step.skipped.bump_version();
}

// The raw list of an elementwise update, checked. Returns the device of the list.
template <typename Update>
Device make_optim_tensors(const char* op, const std::vector<OptimParam<Update>>& params,
                          std::vector<kernels::OptimTensor<Update>>& out) {
  using T = typename Update::Scalar;
  const DType dtype = dtype_of<T>;
  const Device device = params.front().param.device();
  for (std::size_t i = 0; i < params.size(); ++i) {
    const OptimParam<Update>& p = params[i];
    check_tensor(op, i, "parameter", p.param, dtype, device, p.param.shape());
    check_tensor(op, i, "gradient", p.grad, dtype, device, p.param.shape());
    kernels::OptimTensor<Update> t{};
    t.data[kernels::kParamSlot] = p.param.template data_ptr<T>();
    t.data[kernels::kGradSlot] = p.grad.template data_ptr<T>();
    for (std::size_t k = 0; k < p.states.size(); ++k) {
      const Tensor& state = p.states[k];
      if (!state.defined()) continue;
      check_tensor(op, i, "state", state, dtype, device, p.param.shape());
      t.data[k + 2] = state.template data_ptr<T>();
    }
    t.numel = p.param.numel();
    t.scalars = p.scalars;
    t.step_args = raw_step_args(op, i, p.device_step, device);
    out.push_back(t);
  }
  return device;
}

template <typename Update>
void bump_versions(const std::vector<OptimParam<Update>>& params, const StepFlags& flags) {
  for (const OptimParam<Update>& p : params) {
    p.param.bump_version();
    for (const Tensor& state : p.states)
      if (state.defined()) state.bump_version();
    bump_skip_count(flags, p.device_step);
  }
  bump_flags(flags);
}

// Each gradient (clip_grad_norm_, unscale_and_check_finite) defined and float32, or of any
// floating dtype where `any_floating`.
void check_grad_dtypes(const char* op, const std::vector<Tensor>& grads, bool any_floating) {
  for (std::size_t i = 0; i < grads.size(); ++i) {
    LG_CHECK(grads[i].defined(), op, ": gradient ", i, " is an undefined tensor");
    const DType dtype = grads[i].dtype();
    LG_CHECK_DTYPE(dtype == kFloat32 || (any_floating && is_floating(dtype)), op, ": gradient ", i,
                   " must be ", any_floating ? "float32, float64, float16 or bfloat16" : "float32",
                   ", got ", dtype);
  }
}

// The raw spans of the gradients of dtype T among `grads` (check_grad_dtypes checked them all):
// contiguous, all on `device`.
template <typename T>
std::vector<kernels::GradSpanOf<T>> grad_spans(const char* op, const std::vector<Tensor>& grads,
                                               Device device) {
  std::vector<kernels::GradSpanOf<T>> spans;
  for (std::size_t i = 0; i < grads.size(); ++i) {
    if (grads[i].dtype() != dtype_of<T>) continue;
    check_tensor(op, i, "gradient", grads[i], dtype_of<T>, device, grads[i].shape());
    spans.push_back({grads[i].data_ptr<T>(), grads[i].numel()});
  }
  return spans;
}

// The norm_type-norm of `spans` (one dtype), a 0-d tensor of its math type M (the dtype itself;
// float32 for float16 and bfloat16 gradients) on `device`.
template <typename T>
Tensor launch_grad_norm(const std::vector<kernels::GradSpanOf<T>>& spans, double norm_type,
                        Device device) {
  using M = opmath_t<T>;
  Tensor total_norm = zeros({}, TensorOptions(dtype_of<M>).device(device));
  const M p =
      std::isinf(norm_type) ? std::numeric_limits<M>::infinity() : static_cast<M>(norm_type);
  const cuda::DeviceGuard guard(device);
  switch (device.type) {
    case DeviceType::CPU:
      kernels::cpu::grad_norm(spans, p, total_norm.data_ptr<M>());
      break;
    case DeviceType::CUDA:
      kernels::cuda::grad_norm(spans, p, total_norm.data_ptr<M>());
      break;
  }
  return total_norm;
}

// Every gradient of `spans` times clip_coefficient(max_norm, *total_norm), in its math type M
// (total_norm is of that dtype), rounded to T.
template <typename T>
void launch_clip_grads(const std::vector<kernels::GradSpanOf<T>>& spans, double max_norm,
                       const Tensor& total_norm) {
  using M = opmath_t<T>;
  if (spans.empty()) return;
  const Device device = total_norm.device();
  const cuda::DeviceGuard guard(device);
  switch (device.type) {
    case DeviceType::CPU:
      kernels::cpu::clip_grads(spans, static_cast<M>(max_norm), total_norm.data_ptr<M>());
      break;
    case DeviceType::CUDA:
      kernels::cuda::clip_grads(spans, static_cast<M>(max_norm), total_norm.data_ptr<M>());
      break;
  }
}

}  // namespace

template <typename T>
void sgd_step(const kernels::SgdUpdateOf<T>& update,
              const std::vector<OptimParam<kernels::SgdUpdateOf<T>>>& params,
              const StepFlags& flags) {
  if (params.empty()) return;
  std::vector<kernels::OptimTensor<kernels::SgdUpdateOf<T>>> tensors;
  const Device device = make_optim_tensors("sgd_step", params, tensors);
  const RawFlags raw = raw_flags("sgd_step", flags, device);
  const cuda::DeviceGuard guard(device);
  switch (device.type) {
    case DeviceType::CPU:
      kernels::cpu::sgd_step(update, tensors, raw.found_inf);
      break;
    case DeviceType::CUDA:
      kernels::cuda::sgd_step(update, tensors, raw.found_inf);
      break;
  }
  bump_versions(params, flags);
}

template <typename T>
void adam_step(const kernels::AdamUpdateOf<T>& update,
               const std::vector<OptimParam<kernels::AdamUpdateOf<T>>>& params,
               const StepFlags& flags) {
  if (params.empty()) return;
  std::vector<kernels::OptimTensor<kernels::AdamUpdateOf<T>>> tensors;
  const Device device = make_optim_tensors("adam_step", params, tensors);
  const RawFlags raw = raw_flags("adam_step", flags, device);
  const cuda::DeviceGuard guard(device);
  switch (device.type) {
    case DeviceType::CPU:
      kernels::cpu::adam_step(update, tensors, raw.found_inf, raw.skipped_nonfinite);
      break;
    case DeviceType::CUDA:
      kernels::cuda::adam_step(update, tensors, raw.found_inf, raw.skipped_nonfinite);
      break;
  }
  bump_versions(params, flags);
}

template <typename T>
void radam_step(const kernels::RAdamUpdateOf<T>& update,
                const std::vector<OptimParam<kernels::RAdamUpdateOf<T>>>& params,
                const StepFlags& flags) {
  if (params.empty()) return;
  std::vector<kernels::OptimTensor<kernels::RAdamUpdateOf<T>>> tensors;
  const Device device = make_optim_tensors("radam_step", params, tensors);
  const RawFlags raw = raw_flags("radam_step", flags, device);
  const cuda::DeviceGuard guard(device);
  switch (device.type) {
    case DeviceType::CPU:
      kernels::cpu::radam_step(update, tensors, raw.found_inf);
      break;
    case DeviceType::CUDA:
      kernels::cuda::radam_step(update, tensors, raw.found_inf);
      break;
  }
  bump_versions(params, flags);
}

#define LG_INSTANTIATE_OPTIM_ENTRIES(T)                                                  \
  template void sgd_step<T>(const kernels::SgdUpdateOf<T>&,                              \
                            const std::vector<OptimParam<kernels::SgdUpdateOf<T>>>&,     \
                            const StepFlags&);                                           \
  template void adam_step<T>(const kernels::AdamUpdateOf<T>&,                            \
                             const std::vector<OptimParam<kernels::AdamUpdateOf<T>>>&,   \
                             const StepFlags&);                                          \
  template void radam_step<T>(const kernels::RAdamUpdateOf<T>&,                          \
                              const std::vector<OptimParam<kernels::RAdamUpdateOf<T>>>&, \
                              const StepFlags&);
LG_INSTANTIATE_OPTIM_ENTRIES(float)
LG_INSTANTIATE_OPTIM_ENTRIES(double)
LG_INSTANTIATE_OPTIM_ENTRIES(Half)
LG_INSTANTIATE_OPTIM_ENTRIES(BFloat16)
#undef LG_INSTANTIATE_OPTIM_ENTRIES

void adam8bit_step(const kernels::AdamUpdate& update, const std::vector<Adam8bitParam>& params,
                   const StepFlags& flags) {
  if (params.empty()) return;
  const char* op = "adam8bit_step";
  const Device device = params.front().param.device();
  const RawFlags raw = raw_flags(op, flags, device);
  std::vector<kernels::Adam8bitTensor> tensors;
  for (std::size_t i = 0; i < params.size(); ++i) {
    const Adam8bitParam& p = params[i];
    const Shape& shape = p.param.shape();
    const Shape blocks = {(p.param.numel() + kernels::kQuantBlockSize - 1) /
                          kernels::kQuantBlockSize};
    check_tensor(op, i, "parameter", p.param, kFloat32, device, shape);
    check_tensor(op, i, "gradient", p.grad, kFloat32, device, shape);
    check_tensor(op, i, "state1", p.state1, kUInt8, device, shape);
    check_tensor(op, i, "state2", p.state2, kUInt8, device, shape);
    check_tensor(op, i, "absmax1", p.absmax1, kFloat32, device, blocks);
    check_tensor(op, i, "absmax2", p.absmax2, kFloat32, device, blocks);
    tensors.push_back({p.param.template data_ptr<float>(), p.grad.data_ptr<float>(),
                       p.state1.data_ptr<std::uint8_t>(), p.state2.data_ptr<std::uint8_t>(),
                       p.absmax1.data_ptr<float>(), p.absmax2.data_ptr<float>(), p.param.numel(),
                       p.scalars, raw_step_args(op, i, p.device_step, device)});
  }
  const cuda::DeviceGuard guard(device);
  switch (device.type) {
    case DeviceType::CPU:
      kernels::cpu::adam8bit_step(update, tensors, raw.found_inf, raw.skipped_nonfinite);
      break;
    case DeviceType::CUDA:
      kernels::cuda::adam8bit_step(update, tensors, raw.found_inf, raw.skipped_nonfinite);
      break;
  }
  for (const Adam8bitParam& p : params) {
    for (const Tensor* t : {&p.param, &p.state1, &p.state2, &p.absmax1, &p.absmax2})
      t->bump_version();
    bump_skip_count(flags, p.device_step);
  }
  bump_flags(flags);
}

Tensor grad_norm(const std::vector<Tensor>& grads, double norm_type) {
  const char* op = "clip_grad_norm_";
  LG_CHECK(norm_type > 0, op, ": norm_type must be positive or infinity, got ", norm_type);
  const Device device = grads.empty() ? Device::cpu() : grads.front().device();
  check_grad_dtypes(op, grads, /*any_floating=*/true);
  const auto f32 = grad_spans<float>(op, grads, device);
  const auto f64 = grad_spans<double>(op, grads, device);
  const auto f16 = grad_spans<Half>(op, grads, device);
  const auto bf16 = grad_spans<BFloat16>(op, grads, device);
  // One norm per dtype present (float32 for the 16-bit ones), in this order.
  std::vector<Tensor> norms;
  if (!f32.empty() || grads.empty()) norms.push_back(launch_grad_norm(f32, norm_type, device));
  if (!f64.empty()) norms.push_back(launch_grad_norm(f64, norm_type, device));
  if (!f16.empty()) norms.push_back(launch_grad_norm(f16, norm_type, device));
  if (!bf16.empty()) norms.push_back(launch_grad_norm(bf16, norm_type, device));
  if (norms.size() == 1) return norms.front();
  // Several dtypes: the norm of their norms, in float64 when there are float64 gradients and in
  // float32 otherwise (as PyTorch stacks the per-tensor norms, promoted, and takes their norm).
  const DType dtype = f64.empty() ? kFloat32 : kFloat64;
  for (Tensor& norm : norms)
    norm = cast(norm, dtype).reshape({1});
  const Tensor stacked = cat(norms, 0);
  if (dtype == kFloat64)
    return launch_grad_norm(grad_spans<double>(op, {stacked}, device), norm_type, device);
  return launch_grad_norm(grad_spans<float>(op, {stacked}, device), norm_type, device);
}

void clip_grads(const std::vector<Tensor>& grads, double max_norm, const Tensor& total_norm) {
  const char* op = "clip_grad_norm_";
  LG_CHECK(total_norm.defined(), op, ": total_norm must be defined");
  const Device device = total_norm.device();
  const DType norm_dtype = total_norm.dtype() == kFloat64 ? kFloat64 : kFloat32;
  check_scalar(op, "total_norm", total_norm, norm_dtype, device);
  check_grad_dtypes(op, grads, /*any_floating=*/true);
  const auto f32 = grad_spans<float>(op, grads, device);
  const auto f64 = grad_spans<double>(op, grads, device);
  const auto f16 = grad_spans<Half>(op, grads, device);
  const auto bf16 = grad_spans<BFloat16>(op, grads, device);
  LG_CHECK_DTYPE(f64.empty() || norm_dtype == kFloat64, op,
                 ": float64 gradients need a float64 total_norm (grad_norm's), got ", norm_dtype);
  // The float32 and 16-bit gradients take the factor in float32, from the norm rounded to float32.
  const Tensor norm32 = norm_dtype == kFloat64 ? cast(total_norm, kFloat32) : total_norm;
  launch_clip_grads(f64, max_norm, total_norm);
  launch_clip_grads(f32, max_norm, norm32);
  launch_clip_grads(f16, max_norm, norm32);
  launch_clip_grads(bf16, max_norm, norm32);
  for (const Tensor& g : grads)
    g.bump_version();
}

void unscale_and_check_finite(const std::vector<Tensor>& grads, const Tensor& scale,
                              const Tensor& found_inf) {
  const char* op = "unscale_and_check_finite";
  LG_CHECK(scale.defined() && found_inf.defined(), op, ": scale and found_inf must be defined");
  const Device device = found_inf.device();
  check_scalar(op, "scale", scale, kFloat32, device);
  check_scalar(op, "found_inf", found_inf, kInt32, device);
  check_grad_dtypes(op, grads, /*any_floating=*/false);
  const std::vector<kernels::GradSpan> spans = grad_spans<float>(op, grads, device);
  const cuda::DeviceGuard guard(device);
  switch (device.type) {
    case DeviceType::CPU:
      kernels::cpu::unscale_and_check_finite(spans, scale.data_ptr<float>(),
                                             found_inf.data_ptr<std::int32_t>());
      break;
    case DeviceType::CUDA:
      kernels::cuda::unscale_and_check_finite(spans, scale.data_ptr<float>(),
                                              found_inf.data_ptr<std::int32_t>());
      break;
  }
  for (const Tensor& g : grads)
    g.bump_version();
  found_inf.bump_version();
}

void update_scale(const Tensor& scale, const Tensor& growth_tracker, const Tensor& found_inf,
                  double growth_factor, double backoff_factor, std::int64_t growth_interval) {
  const char* op = "update_scale";
  LG_CHECK(scale.defined() && growth_tracker.defined() && found_inf.defined(), op,
           ": scale, growth_tracker and found_inf must be defined");
  const Device device = scale.device();
  check_scalar(op, "scale", scale, kFloat32, device);
  check_scalar(op, "growth_tracker", growth_tracker, kInt32, device);
  check_scalar(op, "found_inf", found_inf, kInt32, device);
  LG_CHECK(growth_interval >= 1 && growth_interval <= std::numeric_limits<std::int32_t>::max(), op,
           ": growth_interval must be in [1, 2^31), got ", growth_interval);
  const cuda::DeviceGuard guard(device);
  switch (device.type) {
    case DeviceType::CPU:
      kernels::cpu::update_scale(scale.data_ptr<float>(), growth_tracker.data_ptr<std::int32_t>(),
                                 found_inf.data_ptr<std::int32_t>(), growth_factor, backoff_factor,
                                 static_cast<int>(growth_interval));
      break;
    case DeviceType::CUDA:
      kernels::cuda::update_scale(scale.data_ptr<float>(), growth_tracker.data_ptr<std::int32_t>(),
                                  found_inf.data_ptr<std::int32_t>(), growth_factor, backoff_factor,
                                  static_cast<int>(growth_interval));
      break;
  }
  scale.bump_version();
  growth_tracker.bump_version();
}

}  // namespace leangrad::ops
