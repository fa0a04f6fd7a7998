// amp::GradScaler: dynamic loss scaling for mixed-precision training, as
// torch.cuda.amp.GradScaler (same options, defaults, state-dict keys and errors), except that no
// step ever waits for the device: the scale, the growth tracker and the inf/NaN flags live in
// device tensors, and whether a step happens is decided there (optim::Optimizer::step_unless).
//   amp::GradScaler scaler;
//   for (auto& [x, y] : batches) {
//     opt.zero_grad();
//     scaler.scale(cross_entropy(model.forward(x), y)).backward();
//     scaler.unscale_(opt);                             // optional: to clip the true gradients
//     optim::clip_grad_norm_(model.parameters(), 1.0);
//     scaler.step(opt);                                 // skipped on the device after an Inf/NaN
//     scaler.update();
//   }
// docs/optimizers.md ("Mixed precision: GradScaler") explains what runs where.
#pragma once

#include <cstdint>
#include <map>
#include <vector>

#include <leangrad/core/macros.h>
#include <leangrad/core/tensor.h>
#include <leangrad/optim/optimizer.h>

namespace leangrad::amp {

class GradScalerOptions {
 public:
  LG_ARG(double, init_scale) = 65536.0;  // 2^16
  LG_ARG(double, growth_factor) = 2.0;
  LG_ARG(double, backoff_factor) = 0.5;
  LG_ARG(std::int64_t, growth_interval) = 2000;
  // Disabled, every call passes through: scale returns the loss, step calls optimizer.step().
  LG_ARG(bool, enabled) = true;
};

class GradScaler {
 public:
  // Throws Error on options out of range: init_scale not finite and > 0, growth_factor not
  // finite and > 1, backoff_factor not in (0, 1), growth_interval not in [1, 2^31).
  explicit GradScaler(GradScalerOptions options = GradScalerOptions());

  // loss times the scale (a differentiable multiply by a 0-d float32 tensor: backward carries
  // scaled gradients). The scale is made on the loss's device by the first call. The loss must be
  // floating.
  Tensor scale(const Tensor& loss);

  // Divides the gradients of the optimizer's parameters by the scale in place, one fused op per
  // device (ops::unscale_and_check_finite), and records on each device whether any was NaN or
  // Inf. At most once per optimizer between update()s, and not after step(); gradients must be
  // float32 and contiguous.
  void unscale_(optim::Optimizer& optimizer);

  // unscale_ (unless done), then the optimizer's step, skipped on the device where a gradient
  // was NaN or Inf (optimizer.step_unless): no parameter, state or step count changes then.
  // Once per optimizer between update()s.
  void step(optim::Optimizer& optimizer);

  // The next scale, on the device (ops::update_scale): after a step that found an Inf/NaN
  // (on any device of any optimizer stepped or unscaled since the last update) the scale times
  // backoff_factor; after growth_interval clean steps in a row, times growth_factor. Resets the
  // flags for the next step. Needs an unscale_ or step since the last update.
  void update();
  // Sets the scale to new_scale (finite, > 0) on the device instead; the growth tracker is kept.
  void update(double new_scale);

  // The current scale (init_scale before the first scale(), 1 when disabled). This READS the
  // device (a host wait, core/host_sync.h): for logging, not inside the step.
  double get_scale() const;
  double get_growth_factor() const { return options_.growth_factor(); }
  double get_backoff_factor() const { return options_.backoff_factor(); }
  std::int64_t get_growth_interval() const { return options_.growth_interval(); }
  bool is_enabled() const { return options_.enabled(); }

  // PyTorch's keys: "scale" (float32), "growth_factor", "backoff_factor" (float64),
  // "growth_interval" (int64), "_growth_tracker" (int32), each 0-d; scale and tracker are copies
  // made on their device (no host wait). Empty when disabled.
  NamedTensors state_dict() const;
  // Restores what state_dict() gave (reads the values on the host). Does nothing when disabled.
  // Throws Error on an empty dict, a missing or unknown key, a value that is not one number, or
  // one out of the options' ranges (and a tracker outside [0, growth_interval)); nothing changes
  // then.
  void load_state_dict(const NamedTensors& state);

 private:
  enum class Stage { Ready, Unscaled, Stepped };
  // What the scaler knows of one optimizer since the last update().
  struct OptimizerRecord {
    Stage stage = Stage::Ready;
    std::vector<Tensor> found_inf;  // int32 0-d, one per device of its gradients, kept and reused
  };

  // The scale as a tensor on `device` (a copy when it lives elsewhere).
  Tensor scale_on(Device device) const;

  GradScalerOptions options_;
  Tensor scale_;                          // float32 0-d, made by the first scale()
  Tensor growth_tracker_;                 // int32 0-d, beside it
  std::int32_t init_growth_tracker_ = 0;  // load_state_dict before the first scale()
  std::map<const optim::Optimizer*, OptimizerRecord> records_;
};

}  // namespace leangrad::amp
