// ZeroRedundancyOptimizer: the optimizer state sharded over the ranks of a data-parallel job, as
// torch.distributed.optim.ZeroRedundancyOptimizer (ZeRO stage 1; LibTorch has none). Every rank
// holds every parameter and (after DistributedDataParallel's all-reduce) the same gradients, but
// keeps the optimizer state of its own share of the parameters only: a step updates that share,
// then each rank broadcasts the parameters it updated to the others. Adam's two moments per
// parameter thus cost 1/world_size of their size on each rank. Docs: docs/distributed.md,
// "ZeroRedundancyOptimizer".
//
//   auto ddp = std::make_shared<distributed::DistributedDataParallel>(model);
//   distributed::ZeroRedundancyOptimizer opt(
//       ddp->parameters(), distributed::optimizer_class<optim::Adam>(optim::AdamOptions(1e-3)));
//   cross_entropy(ddp->forward(x), y).backward();
//   opt.step();                        // this rank's share, then the broadcasts
//
// It is an optim::Optimizer: schedulers, amp::GradScaler and zero_grad work on it as on the
// optimizer it wraps (add_param_group is refused: the partition is made at construction), and
// its steps are bitwise those of the wrapped optimizer run whole on every rank (tested so).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <leangrad/core/macros.h>
#include <leangrad/core/tensor.h>
#include <leangrad/distributed/process_group.h>
#include <leangrad/optim/optimizer.h>

namespace leangrad::distributed {

// Makes an optimizer of the wrapped class over the groups it is given.
using OptimizerFactory =
    std::function<std::unique_ptr<optim::Optimizer>(std::vector<optim::ParamGroup>)>;

// The factory of optimizer class Opt with `options` (PyTorch's optimizer_class=Opt, **defaults):
//   distributed::optimizer_class<optim::AdamW>(optim::AdamWOptions(1e-3).weight_decay(0.1))
template <typename Opt, typename Options>
OptimizerFactory optimizer_class(Options options) {
  return [options](std::vector<optim::ParamGroup> groups) -> std::unique_ptr<optim::Optimizer> {
    return std::make_unique<Opt>(std::move(groups), options);
  };
}

class ZeroOptions {
 public:
  // The broadcasts after a step go as flat buckets of at most this many MiB per owner rank, dtype
  // and device (a parameter larger than that alone, without a copy).
  LG_ARG(double, bucket_cap_mb) = 25.0;
  // The group to shard over; null: the default group of init_process_group.
  LG_ARG(std::shared_ptr<ProcessGroup>, process_group) = nullptr;
};

// Which rank keeps the state of each parameter, given their sizes in elements: PyTorch's greedy
// partition, largest first, each to the rank with the fewest elements so far (the lowest rank on
// a tie). A pure function, the same on every rank.
std::vector<int> partition_parameters(const std::vector<std::int64_t>& numels, int world_size);

class ZeroRedundancyOptimizer : public optim::Optimizer {
 public:
  // Checks (a collective) that every rank passes parameters of the same dtypes and shapes, then
  // assigns each parameter to a rank (partition_parameters). `make` builds the wrapped optimizer;
  // its defaults fill the groups' unset lr and weight_decay, and its checks (float32 only for
  // Adam8bit, ...) apply to every parameter. Throws Error when `make` is empty or returns null.
  ZeroRedundancyOptimizer(std::vector<Tensor> params, OptimizerFactory make,
                          const ZeroOptions& options = ZeroOptions());
  ZeroRedundancyOptimizer(std::vector<optim::ParamGroup> groups, OptimizerFactory make,
                          const ZeroOptions& options = ZeroOptions());

  // The rank that keeps parameter i's state and updates it.
  int owner(std::size_t i) const;
  int rank() const { return group_->rank(); }
  int world_size() const { return group_->size(); }

  // Every rank calls it: the states of all ranks are copied to rank `to` (one broadcast of a
  // small description, then one per state tensor, from its owner), so that state_dict() there is
  // the whole optimizer's. The other ranks receive each tensor into a scratch buffer and drop it.
  // The copies hold until the next step or load_state_dict.
  void consolidate_state_dict(int to = 0);
  // The state dict of the wrapped optimizer class over all parameters (a plain optimizer of that
  // class loads it, and so does a ZeroRedundancyOptimizer of any world size): in a group of one,
  // or on rank `to` after consolidate_state_dict(to). Elsewhere it would lack the other ranks'
  // states and is refused (an Error naming what to call); local_state_dict() is this rank's.
  NamedTensors state_dict() const override;
  // This rank's share: every parameter's step count, the state tensors of the parameters it owns
  // (not the copies a consolidation left here). load_state_dict on the same rank of a job of the
  // same world size restores it (a sharded checkpoint: one file per rank).
  NamedTensors local_state_dict() const;
  // The wrapped optimizer (PyTorch's .optim): built over every parameter, it holds state for
  // those this rank owns only (states are made at a parameter's first update). Its own step
  // counts and learning rates are not used: the steps and the groups are this object's.
  const optim::Optimizer& local_optimizer() const { return *inner_; }

  // load_state_dict (optim::Optimizer's) takes a whole state dict (each rank keeps the states
  // of the parameters it owns) or one rank's local_state_dict (which must hold the states of
  // every parameter owned here: another rank's is refused, naming what is missing).

  std::string repr() const;  // "ZeroRedundancyOptimizer(world_size=2, rank=0, owns 3 of 6 ...)"

 private:
  ZeroRedundancyOptimizer(std::unique_ptr<optim::Optimizer> inner, const ZeroOptions& options);

  void update(Device device, const std::vector<ParamRef>& params, const Tensor& found_inf) override;
  void after_updates() override;  // the broadcasts of every rank's parameters
  NamedTensors named_state(std::size_t i) const override;
  void replace_states(std::vector<NamedTensors> states) override;
  bool valid_state(const Tensor& param, const std::string& name, const Shape& shape) const override;
  std::vector<std::string> required_state(const Tensor& param) const override;
  void grow_states(std::size_t count) override;  // add_param_group: refused
  DType state_dtype(const Tensor& param, const std::string& name) const override;

  bool owns(std::size_t i) const { return owner_[i] == group_->rank(); }
  // The index of `param` among all parameters, found by identity.
  std::size_t index_of(const Tensor& param) const;

  std::unique_ptr<optim::Optimizer> inner_;
  std::shared_ptr<ProcessGroup> group_;
  ZeroOptions options_;
  std::vector<int> owner_;
  // After consolidate_state_dict(to), on rank `to`: the states of the parameters the other
  // ranks own (empty for its own); cleared by a step and by load_state_dict.
  std::optional<int> consolidated_to_;
  std::vector<NamedTensors> consolidated_;
};

}  // namespace leangrad::distributed
