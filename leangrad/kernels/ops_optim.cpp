// Tensor-level entries of the fused optimizer updates, clip_grad_norm and the gradient scaling of
// amp::GradScaler (kernels/ops.h, "Optimizers", "Gradient scaling"): each checks every tensor of
// the list (float32 or uint8 codes, contiguous, the parameter's shape, one device; the int32
// flags and skip counts), turns the list into the raw-pointer list of kernels/optim_math.h and
// switches on the device to the launchers of kernels/backend.h. optim/ builds these lists from
// its parameter groups and states.
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
  const Device device = params.front().param.device();
  for (std::size_t i = 0; i < params.size(); ++i) {
    const OptimParam<Update>& p = params[i];
    check_tensor(op, i, "parameter", p.param, kFloat32, device, p.param.shape());
    check_tensor(op, i, "gradient", p.grad, kFloat32, device, p.param.shape());
    kernels::OptimTensor<Update> t{};
    t.data[kernels::kParamSlot] = p.param.template data_ptr<float>();
    t.data[kernels::kGradSlot] = p.grad.template data_ptr<float>();
    for (std::size_t k = 0; k < p.states.size(); ++k) {
      const Tensor& state = p.states[k];
      if (!state.defined()) continue;
      check_tensor(op, i, "state", state, kFloat32, device, p.param.shape());
      t.data[k + 2] = state.template data_ptr<float>();
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

// The raw spans of gradients (clip_grad_norm_, unscale_and_check_finite): float32, contiguous, all
// on `device`.
std::vector<kernels::GradSpan> grad_spans(const char* op, const std::vector<Tensor>& grads,
                                          Device device) {
  std::vector<kernels::GradSpan> spans;
  for (std::size_t i = 0; i < grads.size(); ++i) {
    check_tensor(op, i, "gradient", grads[i], kFloat32, device, grads[i].shape());
    spans.push_back({grads[i].data_ptr<float>(), grads[i].numel()});
  }
  return spans;
}

}  // namespace

void sgd_step(const kernels::SgdUpdate& update,
              const std::vector<OptimParam<kernels::SgdUpdate>>& params, const StepFlags& flags) {
  if (params.empty()) return;
  std::vector<kernels::OptimTensor<kernels::SgdUpdate>> tensors;
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

void adam_step(const kernels::AdamUpdate& update,
               const std::vector<OptimParam<kernels::AdamUpdate>>& params, const StepFlags& flags) {
  if (params.empty()) return;
  std::vector<kernels::OptimTensor<kernels::AdamUpdate>> tensors;
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

void radam_step(const kernels::RAdamUpdate& update,
                const std::vector<OptimParam<kernels::RAdamUpdate>>& params,
                const StepFlags& flags) {
  if (params.empty()) return;
  std::vector<kernels::OptimTensor<kernels::RAdamUpdate>> tensors;
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
  const std::vector<kernels::GradSpan> spans = grad_spans(op, grads, device);
  Tensor total_norm = zeros({}, TensorOptions(kFloat32).device(device));
  const float p = std::isinf(norm_type) ? std::numeric_limits<float>::infinity()
                                        : static_cast<float>(norm_type);
  const cuda::DeviceGuard guard(device);
  switch (device.type) {
    case DeviceType::CPU:
      kernels::cpu::grad_norm(spans, p, total_norm.data_ptr<float>());
      break;
    case DeviceType::CUDA:
      kernels::cuda::grad_norm(spans, p, total_norm.data_ptr<float>());
      break;
  }
  return total_norm;
}

void clip_grads(const std::vector<Tensor>& grads, double max_norm, const Tensor& total_norm) {
  const char* op = "clip_grad_norm_";
  LG_CHECK(total_norm.defined(), op, ": total_norm must be defined");
  const Device device = total_norm.device();
  check_scalar(op, "total_norm", total_norm, kFloat32, device);
  const std::vector<kernels::GradSpan> spans = grad_spans(op, grads, device);
  const float max = static_cast<float>(max_norm);
  const cuda::DeviceGuard guard(device);
  switch (device.type) {
    case DeviceType::CPU:
      kernels::cpu::clip_grads(spans, max, total_norm.data_ptr<float>());
      break;
    case DeviceType::CUDA:
      kernels::cuda::clip_grads(spans, max, total_norm.data_ptr<float>());
      break;
  }
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
  const std::vector<kernels::GradSpan> spans = grad_spans(op, grads, device);
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
