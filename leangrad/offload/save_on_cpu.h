// offload::SaveOnCpu: while the guard lives, the CUDA tensors that autograd saves for backward are
// moved to (pinned) host memory during the forward and brought back, asynchronously and one
// node ahead, during the backward. Built on the public saved-tensor hooks
// (autograd/saved_tensor.h); offload/save_on_cpu.cpp explains the stream ordering.
//   {
//     offload::SaveOnCpu guard;              // pin_memory = true
//     loss = model.forward(x).sum();         // activations go to the host as they are made
//   }
//   loss.backward();                         // ... and come back just before they are needed
#pragma once

#include <any>
#include <memory>
#include <vector>

#include <leangrad/autograd/saved_tensor.h>
#include <leangrad/core/tensor.h>

namespace leangrad::offload {

// Like torch.autograd.graph.save_on_cpu, with two differences: the device-to-host copies run on a
// copy stream without stalling the compute stream, and the backward prefetches the next node's
// tensors (the copy back overlaps compute). CPU tensors are saved as they are. Unpacked tensors
// are contiguous, with the saved shape and dtype (backward formulas read values, not strides).
// Thread-local and nestable, like every SavedTensorHooksGuard: the innermost guard applies.
class SaveOnCpu {
 public:
  // pin_memory = false copies to pageable memory: simpler for the host, but every copy then
  // blocks the host until it is done (CUDA cannot copy pageable memory asynchronously).
  explicit SaveOnCpu(bool pin_memory = true);
  // Saved tensors that share storage with one of `keep_on_device` stay where they are: pass the
  // model's parameters, which stay resident anyway, so only activations cross the bus (PyTorch's
  // save_on_cpu copies the weights too, twice per step).
  SaveOnCpu(bool pin_memory, const std::vector<Tensor>& keep_on_device);

  SaveOnCpu(const SaveOnCpu&) = delete;
  SaveOnCpu& operator=(const SaveOnCpu&) = delete;

  bool pin_memory() const { return pin_memory_; }

 private:
  std::any pack(const Tensor& t) const;
  bool keeps(const Tensor& t) const;

  bool pin_memory_;
  std::vector<std::shared_ptr<Storage>> kept_storages_;
  autograd::SavedTensorHooksGuard hooks_;  // last: its pack hook uses the members above
};

}  // namespace leangrad::offload
