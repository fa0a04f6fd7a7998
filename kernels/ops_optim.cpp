// Tensor-level entries of the fused optimizer updates and of clip_grad_norm (kernels/ops.h,
// "Optimizers"): each checks every tensor of the list (float32 or uint8 codes, contiguous, the
// parameter's shape, one device), turns the list into the raw-pointer list of
// kernels/optim_math.h and switches on the device to the launchers of kernels/backend.h.
// optim/ builds these lists from its parameter groups and states.
#include <cmath>
#include <limits>

#include "core/cuda.h"
#include "kernels/backend.h"
#include "kernels/creation.h"
#include "kernels/ops.h"
#include "kernels/quantization_math.h"

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

void check_found_inf(const char* op, const Tensor& found_inf, Device device) {
  if (!found_inf.defined()) return;
  LG_CHECK(found_inf.dtype() == kInt32 && found_inf.numel() == 1 && found_inf.device() == device,
           op, ": found_inf must be one int32 on ", device, ", got ", found_inf.dtype(),
           " of shape ", found_inf.shape(), " on ", found_inf.device());
}

int* found_inf_ptr(const Tensor& found_inf) {
  return found_inf.defined() ? found_inf.data_ptr<std::int32_t>() : nullptr;
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
    out.push_back(t);
  }
  return device;
}

template <typename Update>
void bump_versions(const std::vector<OptimParam<Update>>& params) {
  for (const OptimParam<Update>& p : params) {
    p.param.bump_version();
    for (const Tensor& state : p.states)
      if (state.defined()) state.bump_version();
  }
}

}  // namespace

void sgd_step(const kernels::SgdUpdate& update,
              const std::vector<OptimParam<kernels::SgdUpdate>>& params) {
  if (params.empty()) return;
  std::vector<kernels::OptimTensor<kernels::SgdUpdate>> tensors;
  const Device device = make_optim_tensors("sgd_step", params, tensors);
  const cuda::DeviceGuard guard(device);
  switch (device.type) {
    case DeviceType::CPU:
      kernels::cpu::sgd_step(update, tensors);
      break;
    case DeviceType::CUDA:
      kernels::cuda::sgd_step(update, tensors);
      break;
  }
  bump_versions(params);
}

void adam_step(const kernels::AdamUpdate& update,
               const std::vector<OptimParam<kernels::AdamUpdate>>& params,
               const Tensor& found_inf) {
  if (params.empty()) return;
  std::vector<kernels::OptimTensor<kernels::AdamUpdate>> tensors;
  const Device device = make_optim_tensors("adam_step", params, tensors);
  check_found_inf("adam_step", found_inf, device);
  const cuda::DeviceGuard guard(device);
  switch (device.type) {
    case DeviceType::CPU:
      kernels::cpu::adam_step(update, tensors, found_inf_ptr(found_inf));
      break;
    case DeviceType::CUDA:
      kernels::cuda::adam_step(update, tensors, found_inf_ptr(found_inf));
      break;
  }
  bump_versions(params);
  if (found_inf.defined()) found_inf.bump_version();
}

void radam_step(const kernels::RAdamUpdate& update,
                const std::vector<OptimParam<kernels::RAdamUpdate>>& params) {
  if (params.empty()) return;
  std::vector<kernels::OptimTensor<kernels::RAdamUpdate>> tensors;
  const Device device = make_optim_tensors("radam_step", params, tensors);
  const cuda::DeviceGuard guard(device);
  switch (device.type) {
    case DeviceType::CPU:
      kernels::cpu::radam_step(update, tensors);
      break;
    case DeviceType::CUDA:
      kernels::cuda::radam_step(update, tensors);
      break;
  }
  bump_versions(params);
}

void adam8bit_step(const kernels::AdamUpdate& update, const std::vector<Adam8bitParam>& params,
                   const Tensor& found_inf) {
  if (params.empty()) return;
  const char* op = "adam8bit_step";
  const Device device = params.front().param.device();
  check_found_inf(op, found_inf, device);
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
                       p.scalars});
  }
  const cuda::DeviceGuard guard(device);
  switch (device.type) {
    case DeviceType::CPU:
      kernels::cpu::adam8bit_step(update, tensors, found_inf_ptr(found_inf));
      break;
    case DeviceType::CUDA:
      kernels::cuda::adam8bit_step(update, tensors, found_inf_ptr(found_inf));
      break;
  }
  for (const Adam8bitParam& p : params) {
    for (const Tensor* t : {&p.param, &p.state1, &p.state2, &p.absmax1, &p.absmax2})
      t->bump_version();
  }
  if (found_inf.defined()) found_inf.bump_version();
}

Tensor clip_grad_norm(const std::vector<Tensor>& grads, double max_norm, double norm_type) {
  const char* op = "clip_grad_norm_";
  LG_CHECK(norm_type > 0, op, ": norm_type must be positive or infinity, got ", norm_type);
  const Device device = grads.empty() ? Device::cpu() : grads.front().device();
  std::vector<kernels::GradSpan> spans;
  for (std::size_t i = 0; i < grads.size(); ++i) {
    check_tensor(op, i, "gradient", grads[i], kFloat32, device, grads[i].shape());
    spans.push_back({grads[i].data_ptr<float>(), grads[i].numel()});
  }
  Tensor total_norm = zeros({}, TensorOptions(kFloat32).device(device));
  const float max = static_cast<float>(max_norm);
  const float p = std::isinf(norm_type) ? std::numeric_limits<float>::infinity()
                                        : static_cast<float>(norm_type);
  const cuda::DeviceGuard guard(device);
  switch (device.type) {
    case DeviceType::CPU:
      kernels::cpu::clip_grad_norm(spans, max, p, total_norm.data_ptr<float>());
      break;
    case DeviceType::CUDA:
      kernels::cuda::clip_grad_norm(spans, max, p, total_norm.data_ptr<float>());
      break;
  }
  for (const Tensor& g : grads)
    g.bump_version();
  return total_norm;
}

}  // namespace leangrad::ops
