// optim::Optimizer: the base of every optimizer, as torch.optim.Optimizer. It holds parameter
// groups (each with its own lr and weight decay) and each parameter's step count, and does what
// all optimizers share: step() runs without recording a graph, skips parameters whose gradient
// is undefined, hands the rest, grouped by device, to the optimizer's update(), and advances the
// step counts only once update() has succeeded (an error inside a step, out-of-memory say,
// leaves the optimizer as it was); zero_grad(); state_dict() / load_state_dict() as named tensors
// (so the state fits in a safetensors checkpoint beside the model's, see docs/optimizers.md).
// Each optimizer keeps its per-parameter state as a typed struct of tensors
// (OptimizerWithState<State>), which names its fields as PyTorch names them. Parameters are
// float32, float64, float16 or bfloat16 (Adam8bit: float32 only), their states of the parameter's
// dtype (the 16-bit ones updated in float32 arithmetic, each stored value rounded once:
// docs/optimizers.md), and one optimizer may hold several: update() makes one launch per device
// and dtype (by_dtype).
//
// step_unless(found_inf) is the step amp::GradScaler takes: the device, not the host, decides
// whether it happens (Note [Gated step] in kernels/optim_math.h). The host counts every step;
// from the first such step on, each parameter also counts on its device the steps found_inf
// skipped, and every later update (gated or not) computes its step-dependent scalars there from
// the difference, so step counts, bias corrections and SGD's first momentum step stay those of
// the steps that happened, without the host reading a flag.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <leangrad/core/macros.h>
#include <leangrad/core/tensor.h>

namespace leangrad::ops {
struct DeviceStep;  // kernels/ops.h
}  // namespace leangrad::ops

namespace leangrad::distributed {
class ZeroRedundancyOptimizer;  // distributed/zero_redundancy_optimizer.h
}  // namespace leangrad::distributed

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

  // LibTorch's group.options().lr(0.01): the group's hyperparameters through one handle, getters
  // and chainable setters (a LibTorch program casts options() to AdamOptions& first; here the
  // handle is the same for every optimizer: docs/api-notes.md).
  class Options {
   public:
    explicit Options(ParamGroup& group) : group_(group) {}
    double lr() const { return group_.lr.value_or(0.0); }
    Options& lr(double value) {
      LG_CHECK(value >= 0, "param_groups()[i].options().lr: invalid learning rate ", value);
      group_.lr = value;
      return *this;
    }
    // LibTorch's OptimizerOptions::get_lr / set_lr (what a program reads without the cast).
    double get_lr() const { return lr(); }
    void set_lr(double value) { lr(value); }
    double weight_decay() const { return group_.weight_decay.value_or(0.0); }
    Options& weight_decay(double value) {
      LG_CHECK(value >= 0, "param_groups()[i].options().weight_decay: invalid weight_decay ",
               value);
      group_.weight_decay = value;
      return *this;
    }

   private:
    ParamGroup& group_;
  };
  Options options() { return Options(*this); }
};

// A parameter's state as state_dict() shows it: the number of steps taken with a gradient and the
// state tensors under PyTorch's names ("exp_avg", "momentum_buffer", ...), on the parameter's
// device. A view built on demand (Optimizer::state), for tests and tools.
struct ParamState {
  std::int64_t step = 0;
  NamedTensors tensors;

  bool empty() const { return step == 0 && tensors.empty(); }
  bool contains(const std::string& name) const;
  const Tensor& at(const std::string& name) const;
};

class Optimizer {
 public:
  virtual ~Optimizer() = default;
  Optimizer(const Optimizer&) = delete;
  Optimizer& operator=(const Optimizer&) = delete;

  // One update of every parameter that has a gradient (under NoGradGuard). Transactional: when
  // it throws, step counts and states are as before the call (a state created for a first step
  // stays, still zero).
  void step();
  // The same step, unless found_inf says otherwise, decided on the device without the host
  // waiting (amp::GradScaler::step): found_inf holds one int32 one-element tensor per device that
  // has parameters with gradients (more are ignored); where it reads nonzero, every parameter and
  // state on that device is left bitwise as it was and their step counts do not advance
  // (state(i).step). Each parameter stepped here gets an int32 count of skipped steps on its
  // device (kept until load_state_dict), so an optimizer that used this once computes its
  // step-dependent scalars on the device from then on.
  void step_unless(const std::vector<Tensor>& found_inf);
  // Drops every parameter's gradient (set_to_none) or zeroes it in place. Gradient accumulation
  // over micro-batches is simply not calling this between backward passes (docs/optimizers.md).
  void zero_grad(bool set_to_none = true);

  // Adds a group of parameters not yet in the optimizer (torch's add_param_group): unset
  // hyperparameters take the optimizer's defaults; the new parameters start with no state and no
  // steps, and are numbered after the existing ones (state(i), state dicts). The same checks as
  // the constructor; on error the optimizer is unchanged.
  void add_param_group(ParamGroup group);

  std::vector<ParamGroup>& param_groups() { return groups_; }
  const std::vector<ParamGroup>& param_groups() const { return groups_; }
  // State of parameter i, numbering the parameters of all groups in order. After step_unless, the
  // step is the host's count minus the skipped steps, read from the device (a host wait).
  ParamState state(std::size_t i) const;
  std::size_t num_params() const { return steps_.size(); }

  // "state.<i>.step" (int64, 0-d, CPU: the steps taken, as state(i).step), "state.<i>.<name>"
  // (the state tensors themselves, not copies), "param_groups.<g>.lr" and
  // "param_groups.<g>.weight_decay" (float64, 0-d, CPU). Virtual for an optimizer whose state is
  // spread over processes (distributed::ZeroRedundancyOptimizer refuses a partial one).
  virtual NamedTensors state_dict() const;
  // Restores what state_dict() gave (tensors are copied to each parameter's device) and drops
  // the skip counts of step_unless (the loaded steps are the steps taken). Throws Error on an
  // unknown key, a parameter index out of range, a state whose shape or dtype does not fit or
  // that holds NaN or Inf, a parameter's state that is incomplete (state tensors without a step,
  // or without one of the tensors its optimizer needs: required_state), or a hyperparameter the
  // constructor would refuse; the optimizer is unchanged then.
  void load_state_dict(const NamedTensors& state);

 protected:
  // Checks the parameters (at least one; each a defined, contiguous leaf of a floating dtype,
  // given once) and the hyperparameters every optimizer has. `name` ("Adam", "SGD", ...) begins
  // the messages of its errors. A non-empty `float32_only` makes every dtype but float32 an
  // error, with this as the reason (in the constructor and add_param_group).
  Optimizer(std::string name, std::vector<ParamGroup> groups, double default_lr,
            double default_weight_decay, std::string float32_only = "");
  // The name the errors begin with.
  const std::string& name() const { return name_; }

  // One parameter to update: its gradient (contiguous, of its dtype), its index among all
  // parameters, the host's step count for this update (1 on its first), its group's hyperparameters
  // and, once step_unless was used, its count of skipped steps on the device (the update's
  // ops::DeviceStep; undefined before).
  struct ParamRef {
    Tensor param;
    Tensor grad;
    std::size_t index;
    std::int64_t step;
    double lr;
    double weight_decay;
    Tensor skipped;

    // What the ops entries take to compute this update's scalars on the device.
    ops::DeviceStep device_step() const;
  };
  // Updates params, all on `device`; creates their state on first use. found_inf (an int32 on
  // `device`, or undefined) goes to the ops entries: nonzero skips the step on the device.
  virtual void update(Device device, const std::vector<ParamRef>& params,
                      const Tensor& found_inf) = 0;
  // Called once per step() and step_unless(), after every device's update() and before the step
  // counts advance, also when no parameter has a gradient: what must run on every step whatever
  // the gradients (ZeroRedundancyOptimizer's broadcasts, in which every rank takes part).
  virtual void after_updates() {}
  // Calls fn(T{}, refs) for the float32 parameters of `params` with T = float, then for the
  // float64, float16 and bfloat16 ones with T = double, Half, BFloat16 (each dtype that has any):
  // the multi-tensor launches of kernels/ops.h take one dtype each. run_step has checked that
  // every state still fits its parameter, so no call fails on what another already changed.
  template <typename Fn>
  static void by_dtype(const std::vector<ParamRef>& params, const Fn& fn) {
    std::vector<ParamRef> f32, f64, f16, bf16;
    for (const ParamRef& ref : params) {
      const DType dtype = ref.param.dtype();
      (dtype == kFloat64    ? f64
       : dtype == kFloat16  ? f16
       : dtype == kBFloat16 ? bf16
                            : f32)
          .push_back(ref);
    }
    if (!f32.empty()) fn(float{}, f32);
    if (!f64.empty()) fn(double{}, f64);
    if (!f16.empty()) fn(Half{}, f16);
    if (!bf16.empty()) fn(BFloat16{}, bf16);
  }
  // Parameter i's defined state tensors under their names, in a fixed order.
  virtual NamedTensors named_state(std::size_t i) const = 0;
  // Replaces the states of every parameter (load_state_dict, after valid_state accepted each).
  virtual void replace_states(std::vector<NamedTensors> states) = 0;
  // Whether `name` with `shape` is a valid state tensor for parameter `param` (load_state_dict).
  virtual bool valid_state(const Tensor& param, const std::string& name,
                           const Shape& shape) const = 0;
  // The state tensors that a state of `param` must hold once it has any (load_state_dict): a
  // step would read a missing one as zeros and never write it (Adam's exp_avg_sq). States the
  // next step makes when they are missing (SGD's momentum_buffer, amsgrad's max_exp_avg_sq) are
  // not listed.
  virtual std::vector<std::string> required_state(const Tensor& param) const = 0;
  // Makes room for the state of `count` more parameters (add_param_group).
  virtual void grow_states(std::size_t count) = 0;
  // The dtype state tensor `name` of `param` is kept in: the parameter's (a state dict may hold
  // any floating dtype, converted on load, as PyTorch does), or the exact dtype of a non-floating
  // state (Adam8bit's uint8 codes).
  virtual DType state_dtype(const Tensor& param, const std::string& /*name*/) const {
    return param.dtype();
  }

 private:
  // It holds an optimizer of another class and steps that one's parameters through its hooks
  // (update, named_state, ...), for the parameters this process owns.
  friend class distributed::ZeroRedundancyOptimizer;

  // step() and step_unless(): found_inf null for a plain step.
  void run_step(const std::vector<Tensor>* found_inf);
  // Steps taken by parameter i: the host's count less those the device skipped.
  std::int64_t steps_taken(std::size_t i) const;

  // Checks a group's hyperparameters and parameters (none already in `seen`, which it extends),
  // filling unset hyperparameters with the defaults; `first_index` numbers its parameters.
  void check_group(ParamGroup& group, std::size_t first_index,
                   std::vector<const void*>& seen) const;
  // Before a step changes anything: parameter `ref` still has a dtype this optimizer takes, and
  // each of its state tensors still fits it (Tensor::set_data, what Module::to uses, may have
  // changed its shape, dtype or device since the state was made).
  void check_state_fits(const ParamRef& ref) const;

  std::string name_;  // "Adam", "SGD", ...: the errors name the optimizer
  double default_lr_;
  double default_weight_decay_;
  std::string float32_only_;  // why parameters other than float32 are refused; empty: taken
  std::vector<ParamGroup> groups_;
  std::vector<std::int64_t> steps_;
  // Per parameter: its int32 0-d count of steps that step_unless skipped, on its device;
  // undefined until its first step_unless.
  std::vector<Tensor> skipped_;
};

// One state tensor of an optimizer's per-parameter State struct: its name in state dicts and
// the member holding it.
template <typename State>
struct StateField {
  const char* name;
  Tensor State::*member;
};

// An optimizer whose per-parameter state is State: a struct of Tensors whose static fields()
// lists every member with its state-dict name, e.g.
//   struct SGDState {
//     Tensor momentum_buffer;
//     static constexpr std::array<StateField<SGDState>, 1> fields() {
//       return {{{"momentum_buffer", &SGDState::momentum_buffer}}};
//     }
//   };
// Undefined members are absent from the state dict (Adam's max_exp_avg_sq without amsgrad).
template <typename State>
class OptimizerWithState : public Optimizer {
 protected:
  OptimizerWithState(std::string name, std::vector<ParamGroup> groups, double default_lr,
                     double default_wd, std::string float32_only = "")
      : Optimizer(std::move(name), std::move(groups), default_lr, default_wd,
                  std::move(float32_only)),
        states_(num_params()) {}

  State& state_of(std::size_t index) { return states_.at(index); }
  const State& state_of(std::size_t index) const { return states_.at(index); }

  NamedTensors named_state(std::size_t index) const override {
    NamedTensors out;
    for (const StateField<State>& field : State::fields()) {
      const Tensor& t = states_.at(index).*field.member;
      if (t.defined()) out.emplace_back(field.name, t);
    }
    return out;
  }

  void grow_states(std::size_t count) override { states_.resize(states_.size() + count); }

  void replace_states(std::vector<NamedTensors> states) override {
    std::vector<State> loaded(states.size());
    for (std::size_t i = 0; i < states.size(); ++i) {
      for (auto& [name, tensor] : states[i]) {
        bool known = false;
        for (const StateField<State>& field : State::fields()) {
          if (name != field.name) continue;
          loaded[i].*field.member = std::move(tensor);
          known = true;
        }
        LG_CHECK(known, "load_state_dict: parameter ", i, " has no state named '", name, "'");
      }
    }
    states_ = std::move(loaded);
  }

 private:
  std::vector<State> states_;
};

}  // namespace leangrad::optim
