// offload::ParameterOffload: a model's parameters and their gradients live in (pinned) host
// memory, and each submodule's parameters visit the device only while it computes: copied in
// before its forward (the next one prefetched meanwhile), again before its backward, and given
// back after each. The single-process counterpart of FSDP's CPUOffload(offload_params=True).
// offload/parameter_offload.cpp states the life cycle and its Notes; docs/memory.md explains it.
//   auto model = std::make_shared<Net>();
//   offload::ParameterOffload offload(model, offload::ParameterOffloadOptions(Device::cuda()));
//   optim::Adam adam(model->parameters(), optim::AdamOptions(1e-3));   // steps on the host
//   loss_fn((*model)(x.to(kCuda)), y).backward();   // gradients arrive in host memory
//   adam.step();                 // or offload.step(adam): the next forward's copies start
//   meanwhile
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <leangrad/core/device.h>
#include <leangrad/core/macros.h>
#include <leangrad/core/tensor.h>
#include <leangrad/nn/module.h>
#include <leangrad/optim/optimizer.h>

namespace leangrad::offload {

struct ParameterOffloadOptions {
  explicit ParameterOffloadOptions(Device device = Device::cuda()) : device_(device) {}
  // Where the module computes: a CUDA device, or the CPU (then "device memory" is the CPU
  // allocator's and the host copies are the pinned pool's: the same bookkeeping, testable
  // without a GPU).
  LG_ARG(Device, device);
  // Host copies in the pinned pool (asynchronous copies); false: pageable memory, every copy
  // blocks the host.
  LG_ARG(bool, pin_memory) = true;
  // Units whose parameters are copied ahead of the one computing (0: none).
  LG_ARG(int, prefetch) = 1;
};

// What crossed the bus since construction (or reset_stats).
struct ParameterOffloadStats {
  std::int64_t to_device_bytes = 0;   // parameters copied in (forward, backward and prefetches)
  std::int64_t to_device_copies = 0;  // unit copies: one per unit brought in
  std::int64_t to_host_bytes = 0;     // gradients copied out
};

class ParameterOffload {
 public:
  // Moves every parameter of `module` to host memory in place (each Tensor keeps its identity:
  // build the optimizer on module->parameters() before or after, its state is then made on the
  // host) and hooks every submodule that owns parameters (a "unit") so that its parameters are
  // on options.device() exactly while it runs. A tensor registered by several submodules (tied
  // weights) is offloaded once and visits the device for each. A frozen parameter
  // (requires_grad false) may be unfrozen later: its gradients then reach the host too. Throws
  // Error when a parameter is not on options.device() or the host, is not contiguous, or shares
  // its storage with another tensor, or when the module is already offloaded.
  explicit ParameterOffload(std::shared_ptr<nn::Module> module,
                            ParameterOffloadOptions options = ParameterOffloadOptions());
  // Takes the hooks off. The parameters stay in host memory (module->to(device) brings them back),
  // also those of a unit whose forward threw.
  ~ParameterOffload();
  ParameterOffload(const ParameterOffload&) = delete;
  ParameterOffload& operator=(const ParameterOffload&) = delete;

  // One optimizer step on the host that starts the next forward's copies as it goes: the units'
  // parameters are stepped unit by unit in forward order, and each of the first `prefetch` + 1
  // units is copied to the device as soon as its parameters are updated, so those copies run on
  // the copy stream while the host updates the rest (Note [The host step and the next forward's
  // copies] in parameter_offload.cpp). The parameters end bitwise as after optimizer.step(), and
  // their gradients stay. A parameter changed on the host after this and before the next forward
  // is copied again then. Not for a GradScaler's gated step (scaler.step(optimizer) as before).
  // If a unit's update throws, the units before it keep their update (the optimizer's own step is
  // transactional per call).
  void step(optim::Optimizer& optimizer);

  const ParameterOffloadOptions& options() const { return options_; }
  // The units by dotted module name ("" for the root), in registration order.
  std::vector<std::string> unit_names() const;
  // Parameter bytes of the largest unit: with prefetch 1, the device holds at most about two.
  std::int64_t largest_unit_bytes() const;
  // Units in the order their parameters were copied to the device, since construction or
  // clear_copy_log (what the prefetch tests read).
  const std::vector<std::string>& copy_log() const;
  void clear_copy_log();
  ParameterOffloadStats stats() const;

  struct State;  // shared with the hooks (parameter_offload.cpp)

 private:
  std::shared_ptr<nn::Module> module_;
  ParameterOffloadOptions options_;
  std::shared_ptr<State> state_;
};

namespace detail {
// True for the device storage of a parameter that a ParameterOffload streams in: offload::SaveOnCpu
// keeps such tensors where they are (ParameterOffload brings them back for backward itself).
bool is_offloaded_parameter_storage(const Storage* storage);
}  // namespace detail

}  // namespace leangrad::offload
