// Learning-rate schedulers, as torch.optim.lr_scheduler: each sets the lr of every parameter group
// of an optimizer from the group's initial lr and an epoch (or step) counter. Construction sets
// the lr for epoch 0; step() advances one epoch. Closed forms (PyTorch's chainable recursive forms
// give the same values when nothing else changes the lr).
//   optim::CosineAnnealingLR sched(opt, /*t_max=*/100);
//   for (...) { ...; opt.step(); sched.step(); }
#pragma once

#include <cstdint>
#include <vector>

#include <leangrad/optim/optimizer.h>

namespace leangrad::optim {

class LRScheduler {
 public:
  virtual ~LRScheduler() = default;
  // Advances one epoch and sets every group's lr.
  void step();
  std::int64_t last_epoch() const { return last_epoch_; }
  // The lr of each group as this scheduler last set it (PyTorch's _last_lr): an lr changed by
  // hand since is not reported.
  const std::vector<double>& get_last_lr() const { return last_lrs_; }
  // "last_epoch" (int64, 0-d) and "base_lrs" (float64, one per group), PyTorch's names: what a
  // resumed run needs, since a scheduler built after optimizer.load_state_dict() would take the
  // loaded (already scheduled) lrs as its initial ones.
  NamedTensors state_dict() const;
  // Restores what state_dict() gave and sets every group's lr for that epoch. Throws Error on a
  // missing or unknown key, a base_lrs of another number of groups, a negative or non-finite
  // value, or an epoch the schedule refuses (OneCycleLR past total_steps); nothing changes then.
  void load_state_dict(const NamedTensors& state);

 protected:
  explicit LRScheduler(Optimizer& optimizer);
  // The lr of a group whose initial lr is base_lr, at `epoch`.
  virtual double lr_at(double base_lr, std::int64_t epoch) const = 0;
  // Sets the lrs for last_epoch_ (derived constructors call it once: lr_at is virtual).
  void apply();

 private:
  Optimizer& optimizer_;
  std::vector<double> base_lrs_;
  std::vector<double> last_lrs_;
  std::int64_t last_epoch_ = 0;
};

// lr = base_lr * gamma^(epoch / step_size)  (integer division).
class StepLR : public LRScheduler {
 public:
  StepLR(Optimizer& optimizer, std::int64_t step_size, double gamma = 0.1);

 private:
  double lr_at(double base_lr, std::int64_t epoch) const override;
  std::int64_t step_size_;
  double gamma_;
};

// lr = eta_min + (base_lr - eta_min) (1 + cos(pi epoch / t_max)) / 2.
class CosineAnnealingLR : public LRScheduler {
 public:
  CosineAnnealingLR(Optimizer& optimizer, std::int64_t t_max, double eta_min = 0.0);

 private:
  double lr_at(double base_lr, std::int64_t epoch) const override;
  std::int64_t t_max_;
  double eta_min_;
};

// Linear warm-up: lr = base_lr * min(1, (epoch + 1) / warmup_steps), so the first step already
// trains (at base_lr / warmup_steps) and step warmup_steps - 1 reaches base_lr.
class LinearWarmup : public LRScheduler {
 public:
  LinearWarmup(Optimizer& optimizer, std::int64_t warmup_steps);

 private:
  double lr_at(double base_lr, std::int64_t epoch) const override;
  std::int64_t warmup_steps_;
};

// Cosine annealing after a linear warm-up, the schedule of most transformer recipes: epochs
// [0, warmup_steps) as LinearWarmup, then from base_lr at epoch warmup_steps down to eta_min as
// CosineAnnealingLR over total_steps - warmup_steps epochs. (PyTorch spells it
// SequentialLR([LinearLR(1/W, 1, W - 1), CosineAnnealingLR(T - W, eta_min)], milestones=[W]);
// tests/data/make_optim.py checks it against that.)
class CosineWithWarmupLR : public LRScheduler {
 public:
  CosineWithWarmupLR(Optimizer& optimizer, std::int64_t warmup_steps, std::int64_t total_steps,
                     double eta_min = 0.0);

 private:
  double lr_at(double base_lr, std::int64_t epoch) const override;
  std::int64_t warmup_steps_;
  std::int64_t total_steps_;
  double eta_min_;
};

// torch.optim.lr_scheduler.OneCycleLR with cosine annealing (two phases): from max_lr /
// div_factor up to max_lr over the first pct_start of total_steps, then down to
// max_lr / (div_factor * final_div_factor). Every group gets the same max_lr; the groups' own lrs
// are not used. Momentum is not cycled (cycle_momentum=False in PyTorch's terms). Stepping past
// total_steps throws, as PyTorch does.
class OneCycleLR : public LRScheduler {
 public:
  OneCycleLR(Optimizer& optimizer, double max_lr, std::int64_t total_steps, double pct_start = 0.3,
             double div_factor = 25.0, double final_div_factor = 1e4);

 private:
  double lr_at(double base_lr, std::int64_t epoch) const override;
  double max_lr_;
  std::int64_t total_steps_;
  double initial_lr_;
  double min_lr_;
  double warmup_end_;  // the epoch where the lr peaks: pct_start * total_steps - 1, as PyTorch
};

}  // namespace leangrad::optim
