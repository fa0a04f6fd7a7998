// optim::SGD: stochastic gradient descent with momentum, dampening, Nesterov momentum and L2
// weight decay, and maximize, as torch.optim.SGD (same formulas, same defaults:
// kernels/optim_math.h SgdUpdate).
//   optim::SGD sgd(model.parameters(), optim::SGDOptions(0.1).momentum(0.9).nesterov(true));
#pragma once

#include <cstdint>
#include <vector>

#include <leangrad/optim/optimizer.h>

namespace leangrad::optim {

class SGDOptions {
 public:
  explicit SGDOptions(double lr) : lr_(lr) {}
  LG_ARG(double, lr) = 0.0;
  LG_ARG(double, momentum) = 0.0;
  LG_ARG(double, dampening) = 0.0;
  LG_ARG(double, weight_decay) = 0.0;
  LG_ARG(bool, nesterov) = false;
  LG_ARG(bool, maximize) = false;  // ascend the objective (PyTorch's keyword of the same name)
};

// SGD's state of one parameter: the momentum buffer (with momentum only).
struct SGDState {
  Tensor momentum_buffer;
  // The parameter's host step count before the buffer's first update (0 unless the buffer was
  // made after a state dict without one was loaded): SgdUpdate's step is the buffer's own.
  std::int64_t steps_before_buffer = 0;
  static constexpr std::array<StateField<SGDState>, 1> fields() {
    return {{{"momentum_buffer", &SGDState::momentum_buffer}}};
  }
};

class SGD : public OptimizerWithState<SGDState> {
 public:
  SGD(std::vector<Tensor> params, SGDOptions options);
  SGD(std::vector<ParamGroup> groups, SGDOptions options);
  const SGDOptions& options() const { return options_; }

 private:
  void update(Device device, const std::vector<ParamRef>& params, const Tensor& found_inf) override;
  bool valid_state(const Tensor& param, const std::string& name, const Shape& shape) const override;
  std::vector<std::string> required_state(const Tensor& param) const override;
  SGDOptions options_;
};

}  // namespace leangrad::optim
