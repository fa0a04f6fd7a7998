// optim::Adam8bit: Adam with both moments stored block-wise in 8 bits (Dettmers et al., "8-bit
// Optimizers via Block-wise Quantization", 2022; bitsandbytes' Adam8bit). Per parameter of at
// least min_8bit_size elements the state is one uint8 code per element for each moment plus one
// float absmax per block of 256 (2.03 bytes per parameter instead of Adam's 8); smaller tensors
// (biases, norms) keep float32 states, as in bitsandbytes. Parameters are float32 only
// (bitsandbytes has no float64 optimizer; a float64 one is refused with an Error: use Adam). Each
// step dequantises a block, updates it in float32 exactly as Adam, and requantises it with the
// block's new absmax to the nearest code (kernels/quantization_math.h, Note [Dynamic quantisation
// map]; docs/optimizers.md has a worked example). Gradient elements that are NaN/Inf, or whose
// square overflows the second moment, are not applied: the element keeps its parameter and states,
// and skipped_nonfinite() reads 1 for that step, without the step waiting for the GPU. (Under
// amp::GradScaler a NaN/Inf gradient skips the whole step instead, and skipped_nonfinite() reads
// 0.)
#pragma once

#include <cstdint>
#include <tuple>
#include <vector>

#include <leangrad/optim/optimizer.h>

namespace leangrad::optim {

class Adam8bitOptions {
 public:
  explicit Adam8bitOptions(double lr = 1e-3) : lr_(lr) {}
  LG_ARG(double, lr) = 1e-3;
  using Betas = std::tuple<double, double>;
  LG_ARG(Betas, betas) = Betas(0.9, 0.999);
  LG_ARG(double, eps) = 1e-8;
  LG_ARG(double, weight_decay) = 0.0;
  // AdamW-style decay (p *= 1 - lr wd) instead of L2 added to the gradient.
  LG_ARG(bool, decoupled_weight_decay) = false;
  // Parameters with fewer elements keep float32 states.
  LG_ARG(std::int64_t, min_8bit_size) = 4096;
};

// Adam8bit's state of one parameter: quantised moments (codes and block absmaxes) for a large
// parameter, float32 moments for a small one.
struct Adam8bitState {
  Tensor state1;   // uint8 codes of the first moment (signed map)
  Tensor state2;   // uint8 codes of the second moment (unsigned map)
  Tensor absmax1;  // float32, one per block of 256
  Tensor absmax2;
  Tensor exp_avg;  // the float32 moments of a parameter below min_8bit_size
  Tensor exp_avg_sq;
  static constexpr std::array<StateField<Adam8bitState>, 6> fields() {
    return {{{"state1", &Adam8bitState::state1},
             {"state2", &Adam8bitState::state2},
             {"absmax1", &Adam8bitState::absmax1},
             {"absmax2", &Adam8bitState::absmax2},
             {"exp_avg", &Adam8bitState::exp_avg},
             {"exp_avg_sq", &Adam8bitState::exp_avg_sq}}};
  }
};

class Adam8bit : public OptimizerWithState<Adam8bitState> {
 public:
  Adam8bit(std::vector<Tensor> params, Adam8bitOptions options = Adam8bitOptions());
  Adam8bit(std::vector<ParamGroup> groups, Adam8bitOptions options = Adam8bitOptions());
  const Adam8bitOptions& options() const { return options_; }

  // An int32 0-d tensor on the parameters' device: 1 when the last step met a NaN/Inf gradient
  // element, or one whose second moment overflowed (and skipped it), else 0. Undefined before the
  // first step. Reading it (item()) waits for the GPU; step() itself never does.
  const Tensor& skipped_nonfinite() const { return skipped_nonfinite_; }

 private:
  void update(Device device, const std::vector<ParamRef>& params, const Tensor& found_inf) override;
  bool valid_state(const Tensor& param, const std::string& name, const Shape& shape) const override;
  std::vector<std::string> required_state(const Tensor& param) const override;
  DType state_dtype(const Tensor& param, const std::string& name) const override;
  bool quantized(const Tensor& param) const { return param.numel() >= options_.min_8bit_size(); }
  Adam8bitOptions options_;
  Tensor skipped_nonfinite_;
};

}  // namespace leangrad::optim
