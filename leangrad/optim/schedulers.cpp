// Learning-rate schedulers (optim/schedulers.h).
#include <leangrad/optim/schedulers.h>

#include <algorithm>
#include <cmath>
#include <numbers>

namespace leangrad::optim {

LRScheduler::LRScheduler(Optimizer& optimizer) : optimizer_(optimizer) {
  for (const ParamGroup& group : optimizer.param_groups())
    base_lrs_.push_back(*group.lr);
}

void LRScheduler::step() {
  ++last_epoch_;
  apply();
}

void LRScheduler::apply() {
  std::vector<ParamGroup>& groups = optimizer_.param_groups();
  LG_CHECK(groups.size() == base_lrs_.size(), "LRScheduler: the optimizer's groups changed");
  for (std::size_t g = 0; g < groups.size(); ++g)
    groups[g].lr = lr_at(base_lrs_[g], last_epoch_);
}

std::vector<double> LRScheduler::get_last_lr() const {
  std::vector<double> out;
  for (const ParamGroup& group : optimizer_.param_groups())
    out.push_back(*group.lr);
  return out;
}

StepLR::StepLR(Optimizer& optimizer, std::int64_t step_size, double gamma)
    : LRScheduler(optimizer), step_size_(step_size), gamma_(gamma) {
  LG_CHECK(step_size > 0, "StepLR: step_size must be positive, got ", step_size);
  apply();
}

double StepLR::lr_at(double base_lr, std::int64_t epoch) const {
  return base_lr * std::pow(gamma_, static_cast<double>(epoch / step_size_));
}

CosineAnnealingLR::CosineAnnealingLR(Optimizer& optimizer, std::int64_t t_max, double eta_min)
    : LRScheduler(optimizer), t_max_(t_max), eta_min_(eta_min) {
  LG_CHECK(t_max > 0, "CosineAnnealingLR: t_max must be positive, got ", t_max);
  apply();
}

double CosineAnnealingLR::lr_at(double base_lr, std::int64_t epoch) const {
  const double phase = std::numbers::pi * static_cast<double>(epoch) / static_cast<double>(t_max_);
  return eta_min_ + (base_lr - eta_min_) * (1.0 + std::cos(phase)) / 2.0;
}

LinearWarmup::LinearWarmup(Optimizer& optimizer, std::int64_t warmup_steps)
    : LRScheduler(optimizer), warmup_steps_(warmup_steps) {
  LG_CHECK(warmup_steps > 0, "LinearWarmup: warmup_steps must be positive, got ", warmup_steps);
  apply();
}

double LinearWarmup::lr_at(double base_lr, std::int64_t epoch) const {
  return base_lr *
         std::min(1.0, static_cast<double>(epoch + 1) / static_cast<double>(warmup_steps_));
}

}  // namespace leangrad::optim
