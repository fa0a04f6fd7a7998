// optim::RAdam (Liu et al., "On the Variance of the Adaptive Learning Rate and Beyond", 2020), as
// torch.optim.RAdam: Adam's moments, but while the approximated simple-moving-average length
// rho_t is at most 5 (the first steps, when the variance of the adaptive learning rate is
// intractable) it takes plain momentum steps; afterwards Adam steps scaled by the rectification
// term. Same defaults as PyTorch. The math: kernels/optim_math.h RAdamUpdate.
#pragma once

#include <tuple>
#include <vector>

#include <leangrad/optim/optimizer.h>

namespace leangrad::optim {

class RAdamOptions {
 public:
  explicit RAdamOptions(double lr = 1e-3) : lr_(lr) {}
  LG_ARG(double, lr) = 1e-3;
  using Betas = std::tuple<double, double>;
  LG_ARG(Betas, betas) = Betas(0.9, 0.999);
  LG_ARG(double, eps) = 1e-8;
  LG_ARG(double, weight_decay) = 0.0;
};

// RAdam's state of one parameter: the moments.
struct RAdamState {
  Tensor exp_avg;
  Tensor exp_avg_sq;
  static constexpr std::array<StateField<RAdamState>, 2> fields() {
    return {{{"exp_avg", &RAdamState::exp_avg}, {"exp_avg_sq", &RAdamState::exp_avg_sq}}};
  }
};

class RAdam : public OptimizerWithState<RAdamState> {
 public:
  RAdam(std::vector<Tensor> params, RAdamOptions options = RAdamOptions());
  RAdam(std::vector<ParamGroup> groups, RAdamOptions options = RAdamOptions());
  const RAdamOptions& options() const { return options_; }

 private:
  void update(Device device, const std::vector<ParamRef>& params, const Tensor& found_inf) override;
  bool valid_state(const Tensor& param, const std::string& name, const Shape& shape) const override;
  std::vector<std::string> required_state(const Tensor& param) const override;
  RAdamOptions options_;
};

}  // namespace leangrad::optim
