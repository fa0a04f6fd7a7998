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
  // The lr of each group as last set.
  std::vector<double> get_last_lr() const;

 protected:
  explicit LRScheduler(Optimizer& optimizer);
  // The lr of a group whose initial lr is base_lr, at `epoch`.
  virtual double lr_at(double base_lr, std::int64_t epoch) const = 0;
  // Sets the lrs for last_epoch_ (derived constructors call it once: lr_at is virtual).
  void apply();

 private:
  Optimizer& optimizer_;
  std::vector<double> base_lrs_;
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

}  // namespace leangrad::optim
