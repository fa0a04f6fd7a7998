// DistributedDataParallel: one replica of a model per process, gradients averaged across the
// processes in buckets while backward still runs (as torch.nn.parallel.DistributedDataParallel;
// LibTorch has none). The module wrapper is here; the gradient machinery is reducer.h.
//   distributed::init_process_group(distributed::Backend::Gloo);
//   auto ddp = std::make_shared<distributed::DistributedDataParallel>(
//       model, distributed::DDPOptions().bucket_cap_mb(25));   // rank 0's weights everywhere
//   optim::SGD opt(ddp->parameters(), optim::SGDOptions(0.1));
//   cross_entropy(ddp->forward(x), y).backward();              // returns averaged gradients
//   opt.step();
#pragma once

#include <memory>
#include <vector>

#include <leangrad/core/macros.h>
#include <leangrad/core/tensor.h>
#include <leangrad/distributed/process_group.h>
#include <leangrad/distributed/reducer.h>
#include <leangrad/nn/module.h>

namespace leangrad::distributed {

class DDPOptions {
  // The size of every bucket but the first, in MiB (PyTorch's bucket_cap_mb).
  LG_ARG(double, bucket_cap_mb) = 25.0;
  // The first bucket's size, in MiB: small, so the first all-reduce starts early in backward
  // (PyTorch's 1 MiB, not an option there).
  LG_ARG(double, first_bucket_mb) = 1.0;
  // Parameters that get no gradient in a step are reduced as zeros instead of raising an Error
  // (one more small all-reduce per step tells which ones no rank used).
  LG_ARG(bool, find_unused_parameters) = false;
  // The group to reduce over; null: the default group of init_process_group.
  LG_ARG(std::shared_ptr<ProcessGroup>, process_group) = nullptr;
  // Each synchronised forward first broadcasts rank 0's buffers (BatchNorm's running statistics)
  // to every rank, so the ranks keep one model (PyTorch's broadcast_buffers, on by default).
  LG_ARG(bool, broadcast_buffers) = true;
};

class DistributedDataParallel;

// While alive, forwards through the DistributedDataParallel do not synchronise: their backward
// accumulates gradients locally. The first backward of a forward made after the guard is gone
// reduces everything accumulated (gradient accumulation with one all-reduce per optimizer step).
class NoSyncGuard {
 public:
  explicit NoSyncGuard(DistributedDataParallel& ddp);
  ~NoSyncGuard();
  NoSyncGuard(const NoSyncGuard&) = delete;
  NoSyncGuard& operator=(const NoSyncGuard&) = delete;

 private:
  DistributedDataParallel& ddp_;
  bool previous_;
};

class DistributedDataParallel : public nn::Module {
 public:
  // Broadcasts `module`'s parameters and buffers from rank 0 (after checking every rank wraps a
  // model of the same parameter and buffer shapes), groups the parameters that require grad into
  // buckets and installs a hook on each. The module is registered as the child "module", so
  // names read "module.fc1.weight" as in PyTorch. Move the module to its device and dtype first.
  explicit DistributedDataParallel(std::shared_ptr<nn::Module> module,
                                   const DDPOptions& options = DDPOptions());

  // (*module())(input) (its hooks run); with sync on and grad mode on, the module's buffers are
  // first made rank 0's (broadcast_buffers) and the backward of the result all-reduces the
  // gradients (Note [Armed by forward] in reducer.cpp).
  Tensor forward(const Tensor& input) override;

  const std::shared_ptr<nn::Module>& module() const { return module_; }
  // auto guard = ddp.no_sync(); forward and backward micro-batches; } then one synchronised one.
  [[nodiscard]] NoSyncGuard no_sync() { return NoSyncGuard(*this); }

  const DDPOptions& options() const { return options_; }
  // The buckets (dtype, size, parameter names) and the last synchronised backward's timeline.
  const std::vector<BucketInfo>& buckets() const { return reducer_->buckets(); }
  const Reducer& reducer() const { return *reducer_; }

  std::string extra_repr() const override;

 private:
  friend class NoSyncGuard;
  std::shared_ptr<nn::Module> module_;
  DDPOptions options_;
  std::shared_ptr<ProcessGroup> group_;
  std::shared_ptr<Reducer> reducer_;
  NamedTensors frozen_;  // the parameters that did not require grad at construction
  bool require_sync_ = true;
};

}  // namespace leangrad::distributed
