// Learning-rate schedulers (optim/schedulers.h).
#include <leangrad/optim/schedulers.h>

#include <algorithm>
#include <cmath>
#include <numbers>
#include <optional>
#include <utility>

#include <leangrad/core/creation.h>
#include <leangrad/kernels/creation.h>

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
  std::vector<double> lrs;
  for (double base_lr : base_lrs_)
    lrs.push_back(lr_at(base_lr, last_epoch_));
  for (std::size_t g = 0; g < groups.size(); ++g)
    groups[g].lr = lrs[g];
  last_lrs_ = std::move(lrs);
}

NamedTensors LRScheduler::state_dict() const {
  NamedTensors out;
  out.emplace_back("last_epoch", full({}, static_cast<double>(last_epoch_), kInt64));
  out.emplace_back("base_lrs",
                   tensor(base_lrs_, Shape{static_cast<std::int64_t>(base_lrs_.size())}));
  return out;
}

void LRScheduler::load_state_dict(const NamedTensors& state) {
  const char* op = "LRScheduler::load_state_dict";
  std::optional<std::int64_t> epoch;
  std::optional<std::vector<double>> base_lrs;
  for (const auto& [key, value] : state) {
    LG_CHECK(value.defined(), op, ": '", key, "' is an undefined tensor");
    const Tensor values = value.to(Device::cpu()).to(kFloat64).contiguous();
    const double* v = values.data_ptr<double>();
    if (key == "last_epoch") {
      LG_CHECK(values.numel() == 1, op, ": 'last_epoch' must hold one value, got shape ",
               value.shape());
      LG_CHECK(std::isfinite(v[0]) && v[0] >= 0 && v[0] == std::floor(v[0]) && v[0] < 9.2e18, op,
               ": 'last_epoch' = ", v[0], " is not an epoch count");
      epoch = static_cast<std::int64_t>(v[0]);
    } else if (key == "base_lrs") {
      const std::size_t groups = optimizer_.param_groups().size();
      LG_CHECK(value.dim() == 1 && static_cast<std::size_t>(value.numel()) == groups, op,
               ": 'base_lrs' has shape ", value.shape(), ", but the optimizer has ", groups,
               " groups");
      base_lrs.emplace(v, v + groups);
      for (double lr : *base_lrs)
        LG_CHECK(std::isfinite(lr) && lr >= 0, op, ": 'base_lrs' holds ", lr,
                 ", not a learning rate");
    } else {
      LG_THROW(Error, op, ": unknown key '", key, "' (expected last_epoch, base_lrs)");
    }
  }
  LG_CHECK(epoch.has_value(), op, ": the state dict has no 'last_epoch'");
  LG_CHECK(base_lrs.has_value(), op, ": the state dict has no 'base_lrs'");
  // Every lr before anything changes: OneCycleLR refuses an epoch past total_steps.
  std::vector<double> lrs;
  for (double base_lr : *base_lrs)
    lrs.push_back(lr_at(base_lr, *epoch));
  base_lrs_ = std::move(*base_lrs);
  last_epoch_ = *epoch;
  std::vector<ParamGroup>& groups = optimizer_.param_groups();
  for (std::size_t g = 0; g < groups.size(); ++g)
    groups[g].lr = lrs[g];
  last_lrs_ = std::move(lrs);
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

CosineWithWarmupLR::CosineWithWarmupLR(Optimizer& optimizer, std::int64_t warmup_steps,
                                       std::int64_t total_steps, double eta_min)
    : LRScheduler(optimizer),
      warmup_steps_(warmup_steps),
      total_steps_(total_steps),
      eta_min_(eta_min) {
  LG_CHECK(warmup_steps > 0 && total_steps > warmup_steps,
           "CosineWithWarmupLR: expected 0 < warmup_steps < total_steps, got warmup_steps ",
           warmup_steps, " and total_steps ", total_steps);
  LG_CHECK(eta_min >= 0, "CosineWithWarmupLR: eta_min must be >= 0, got ", eta_min);
  apply();
}

double CosineWithWarmupLR::lr_at(double base_lr, std::int64_t epoch) const {
  if (epoch < warmup_steps_) {
    return base_lr * static_cast<double>(epoch + 1) / static_cast<double>(warmup_steps_);
  }
  const double phase = std::numbers::pi * static_cast<double>(epoch - warmup_steps_) /
                       static_cast<double>(total_steps_ - warmup_steps_);
  return eta_min_ + (base_lr - eta_min_) * (1.0 + std::cos(phase)) / 2.0;
}

OneCycleLR::OneCycleLR(Optimizer& optimizer, double max_lr, std::int64_t total_steps,
                       double pct_start, double div_factor, double final_div_factor)
    : LRScheduler(optimizer),
      max_lr_(max_lr),
      total_steps_(total_steps),
      initial_lr_(max_lr / div_factor),
      min_lr_(max_lr / div_factor / final_div_factor),
      warmup_end_(pct_start * static_cast<double>(total_steps) - 1.0) {
  LG_CHECK(max_lr > 0 && total_steps > 1,
           "OneCycleLR: expected max_lr > 0 and total_steps > 1, "
           "got max_lr ",
           max_lr, " and total_steps ", total_steps);
  LG_CHECK(pct_start > 0 && pct_start < 1, "OneCycleLR: pct_start must be in (0, 1), got ",
           pct_start);
  LG_CHECK(div_factor > 0 && final_div_factor > 0,
           "OneCycleLR: div_factor and final_div_factor must be positive, got ", div_factor,
           " and ", final_div_factor);
  LG_CHECK(warmup_end_ > 0 && warmup_end_ < static_cast<double>(total_steps - 1),
           "OneCycleLR: pct_start ", pct_start, " of ", total_steps,
           " steps leaves one of the two phases empty");
  apply();
}

double OneCycleLR::lr_at(double /*base_lr*/, std::int64_t epoch) const {
  LG_CHECK(epoch <= total_steps_, "OneCycleLR: stepped ", epoch, " times, but total_steps is ",
           total_steps_);
  // PyTorch's _annealing_cos: from start to end as pct goes from 0 to 1.
  auto anneal = [](double start, double end, double pct) {
    return end + (start - end) / 2.0 * (std::cos(std::numbers::pi * pct) + 1.0);
  };
  const double step = static_cast<double>(epoch);
  if (step <= warmup_end_) return anneal(initial_lr_, max_lr_, step / warmup_end_);
  const double last = static_cast<double>(total_steps_ - 1);
  return anneal(max_lr_, min_lr_, (step - warmup_end_) / (last - warmup_end_));
}

}  // namespace leangrad::optim
