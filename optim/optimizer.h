// optim::Optimizer: the base of every optimizer, as torch.optim.Optimizer. It holds parameter
// groups (each with its own lr and weight decay), the per-parameter state (a step count and
// named tensors), and does what all optimizers share: step() runs without recording a graph,
// skips parameters whose gradient is undefined, and hands the rest, grouped by device, to the
// optimizer's update(); zero_grad(); state_dict() / load_state_dict() as named tensors (so the
// state fits in a safetensors checkpoint beside the model's, see docs/optimizers.md).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/macros.h"
#include "core/tensor.h"

namespace leangrad::optim {


// A set of parameters with its own hyperparameters; unset ones take the optimizer's options.
// After the optimizer is built, lr and weight_decay are always set (schedulers change lr).
struct ParamGroup {
  std::vector<Tensor> params;
  std::optional<double> lr;
  std::optional<double> weight_decay;

  ParamGroup(std::vector<Tensor> params_, std::optional<double> lr_ = std::nullopt,
             std::optional<double> weight_decay_ = std::nullopt)
      : params(std::move(params_)), lr(lr_), weight_decay(weight_decay_) {}
};

// What an optimizer keeps per parameter: the number of steps taken with a gradient and named
// state tensors ("exp_avg", "momentum_buffer", ...) on the parameter's device.
struct ParamState {
  std::int64_t step = 0;
  NamedTensors tensors;

  bool empty() const { return step == 0 && tensors.empty(); }
  Tensor* find(const std::string& name);  // null when absent
  bool contains(const std::string& name) const;
  const Tensor& at(const std::string& name) const;
  void set(const std::string& name, Tensor value);
};

class Optimizer {
 public:
  virtual ~Optimizer() = default;
  Optimizer(const Optimizer&) = delete;
  Optimizer& operator=(const Optimizer&) = delete;

  // One update of every parameter that has a gradient (under NoGradGuard).
  void step();
  // Drops every parameter's gradient (set_to_none) or zeroes it in place. Gradient accumulation
  // over micro-batches is simply not calling this between backward passes (docs/optimizers.md).
  void zero_grad(bool set_to_none = true);

  std::vector<ParamGroup>& param_groups() { return groups_; }
  const std::vector<ParamGroup>& param_groups() const { return groups_; }
  // State of parameter i, numbering the parameters of all groups in order.
  const ParamState& state(std::size_t i) const { return states_.at(i); }
  std::size_t num_params() const { return states_.size(); }

  // "state.<i>.step" (int64, 0-d, CPU), "state.<i>.<name>" (the state tensors themselves, not
  // copies), "param_groups.<g>.lr" and "param_groups.<g>.weight_decay" (float64, 0-d, CPU).
  NamedTensors state_dict() const;
  // Restores what state_dict() gave (tensors are copied to each parameter's device). Throws Error
  // on an unknown key, a parameter index out of range or a state whose shape does not fit.
  void load_state_dict(const NamedTensors& state);

 protected:
  Optimizer(std::vector<ParamGroup> groups, double default_lr, double default_weight_decay);

  // One parameter to update: its gradient (contiguous float32), its state and its group's
  // hyperparameters. step() has already incremented state.step.
  struct ParamRef {
    Tensor param;
    Tensor grad;
    ParamState* state;
    double lr;
    double weight_decay;
  };
  // Updates params, all on `device`; creates their state on first use.
  virtual void update(Device device, const std::vector<ParamRef>& params) = 0;
  // Whether `name` with `shape` is a valid state tensor for parameter `param` (load_state_dict).
  virtual bool valid_state(const Tensor& param, const std::string& name,
                           const Shape& shape) const = 0;

 private:
  std::vector<ParamGroup> groups_;
  std::vector<ParamState> states_;
};

}  // namespace leangrad::optim
