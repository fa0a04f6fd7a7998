// TensorOptions: the LibTorch-style builder passed to creation functions.
//   zeros({2, 3}, TensorOptions().dtype(kFloat64).device(Device::cuda()).requires_grad(true))
// Each field remembers whether it was set, as LibTorch's: dtype() and device() give float32 and
// the CPU where they were not, has_dtype() and has_device() tell the two apart, and merge_in lets
// the fields one set override another's (what x.new_zeros(size, kFloat64) and
// zeros_like(x, kFloat64) do with x.options(): x's device is kept).
#pragma once

#include <optional>

#include <leangrad/core/device.h>
#include <leangrad/core/dtype.h>

namespace leangrad {

class TensorOptions {
 public:
  TensorOptions() = default;
  TensorOptions(DType dtype) : dtype_(dtype) {}              // NOLINT: implicit, as in LibTorch
  TensorOptions(Device device) : device_(device) {}          // NOLINT
  TensorOptions(DeviceType type) : device_(Device(type)) {}  // NOLINT

  TensorOptions dtype(DType dtype) const {
    TensorOptions o = *this;
    o.dtype_ = dtype;
    return o;
  }
  TensorOptions device(Device device) const {
    TensorOptions o = *this;
    o.device_ = device;
    return o;
  }
  TensorOptions requires_grad(bool requires_grad) const {
    TensorOptions o = *this;
    o.requires_grad_ = requires_grad;
    return o;
  }
  // CPU tensors only: allocate from the pinned host pool (fast, asynchronous copies to CUDA).
  TensorOptions pinned_memory(bool pinned) const {
    TensorOptions o = *this;
    o.pinned_memory_ = pinned;
    return o;
  }

  DType dtype() const { return dtype_.value_or(DType::Float32); }
  Device device() const { return device_.value_or(Device::cpu()); }
  bool requires_grad() const { return requires_grad_.value_or(false); }
  bool pinned_memory() const { return pinned_memory_.value_or(false); }

  bool has_dtype() const { return dtype_.has_value(); }
  bool has_device() const { return device_.has_value(); }
  bool has_requires_grad() const { return requires_grad_.has_value(); }
  bool has_pinned_memory() const { return pinned_memory_.has_value(); }
  std::optional<DType> dtype_opt() const { return dtype_; }
  std::optional<Device> device_opt() const { return device_; }

  // These options with each field that `options` set taken from it, as LibTorch's merge_in.
  TensorOptions merge_in(const TensorOptions& options) const {
    TensorOptions o = *this;
    if (options.dtype_) o.dtype_ = options.dtype_;
    if (options.device_) o.device_ = options.device_;
    if (options.requires_grad_) o.requires_grad_ = options.requires_grad_;
    if (options.pinned_memory_) o.pinned_memory_ = options.pinned_memory_;
    return o;
  }

 private:
  std::optional<DType> dtype_;
  std::optional<Device> device_;
  std::optional<bool> requires_grad_;
  std::optional<bool> pinned_memory_;
};

// LibTorch's shorthands for a TensorOptions with one field set:
//   zeros({2}, dtype(kFloat64)), ones({3}, requires_grad()), empty({4}, device(kCUDA))
inline TensorOptions dtype(DType dtype) {
  return TensorOptions().dtype(dtype);
}
inline TensorOptions device(Device device) {
  return TensorOptions().device(device);
}
inline TensorOptions requires_grad(bool requires_grad = true) {
  return TensorOptions().requires_grad(requires_grad);
}

}  // namespace leangrad
