// optim::Adam and optim::AdamW (Kingma & Ba, 2015; Loshchilov & Hutter, 2019), as torch.optim.Adam
// and torch.optim.AdamW: the same moments, bias corrections, amsgrad, maximize and defaults. Adam
// adds the weight decay to the gradient (L2); AdamW decays the weights directly (p *= 1 - lr wd)
// and has weight_decay 1e-2 by default. The math: kernels/optim_math.h AdamUpdate.
//   optim::AdamW opt(model.parameters(), optim::AdamWOptions(3e-4).betas({0.9, 0.95}));
#pragma once

#include <tuple>
#include <vector>

#include <leangrad/optim/optimizer.h>

namespace leangrad::optim {

class AdamOptions {
 public:
  explicit AdamOptions(double lr = 1e-3) : lr_(lr) {}
  LG_ARG(double, lr) = 1e-3;
  using Betas = std::tuple<double, double>;
  LG_ARG(Betas, betas) = Betas(0.9, 0.999);
  LG_ARG(double, eps) = 1e-8;
  LG_ARG(double, weight_decay) = 0.0;
  LG_ARG(bool, amsgrad) = false;
  LG_ARG(bool, maximize) = false;  // ascend the objective (PyTorch's keyword of the same name)
};

class AdamWOptions {
 public:
  explicit AdamWOptions(double lr = 1e-3) : lr_(lr) {}
  LG_ARG(double, lr) = 1e-3;
  using Betas = std::tuple<double, double>;
  LG_ARG(Betas, betas) = Betas(0.9, 0.999);
  LG_ARG(double, eps) = 1e-8;
  LG_ARG(double, weight_decay) = 1e-2;
  LG_ARG(bool, amsgrad) = false;
  LG_ARG(bool, maximize) = false;  // ascend the objective (PyTorch's keyword of the same name)
};

// Adam's (and AdamW's) state of one parameter: the moments, and their running maximum with
// amsgrad.
struct AdamState {
  Tensor exp_avg;
  Tensor exp_avg_sq;
  Tensor max_exp_avg_sq;
  static constexpr std::array<StateField<AdamState>, 3> fields() {
    return {{{"exp_avg", &AdamState::exp_avg},
             {"exp_avg_sq", &AdamState::exp_avg_sq},
             {"max_exp_avg_sq", &AdamState::max_exp_avg_sq}}};
  }
};

class Adam : public OptimizerWithState<AdamState> {
 public:
  Adam(std::vector<Tensor> params, AdamOptions options = AdamOptions());
  Adam(std::vector<ParamGroup> groups, AdamOptions options = AdamOptions());
  const AdamOptions& options() const { return options_; }

 protected:
  Adam(std::vector<ParamGroup> groups, AdamOptions options, bool decoupled_weight_decay);

 private:
  void update(Device device, const std::vector<ParamRef>& params, const Tensor& found_inf) override;
  bool valid_state(const Tensor& param, const std::string& name, const Shape& shape) const override;
  std::vector<std::string> required_state(const Tensor& param) const override;
  AdamOptions options_;
  bool decoupled_weight_decay_;
};

class AdamW : public Adam {
 public:
  AdamW(std::vector<Tensor> params, AdamWOptions options = AdamWOptions());
  AdamW(std::vector<ParamGroup> groups, AdamWOptions options = AdamWOptions());
};

}  // namespace leangrad::optim
