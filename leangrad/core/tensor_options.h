// TensorOptions: the LibTorch-style builder passed to creation functions.
//   zeros({2, 3}, TensorOptions().dtype(kFloat64).device(Device::cuda()).requires_grad(true))
#pragma once

#include <leangrad/core/device.h>
#include <leangrad/core/dtype.h>

namespace leangrad {

class TensorOptions {
 public:
  TensorOptions() = default;
  TensorOptions(DType dtype) : dtype_(dtype) {}      // NOLINT: implicit, as in LibTorch
  TensorOptions(Device device) : device_(device) {}  // NOLINT
  TensorOptions(DeviceType type) : device_(type) {}  // NOLINT

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

  DType dtype() const { return dtype_; }
  Device device() const { return device_; }
  bool requires_grad() const { return requires_grad_; }
  bool pinned_memory() const { return pinned_memory_; }

 private:
  DType dtype_ = DType::Float32;
  Device device_ = Device::cpu();
  bool requires_grad_ = false;
  bool pinned_memory_ = false;
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
