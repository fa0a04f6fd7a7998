// nn::Upsample, configured like LibTorch's
//   nn::Upsample(nn::UpsampleOptions().scale_factor(std::vector<double>{2, 2}).mode(kBilinear))
// No parameters; forward calls leangrad::interpolate (autograd/nn_functions.h) on (N, C, L),
// (N, C, H, W) or (N, C, D, H, W) input. size and scale_factor take one value (every spatial dim)
// or one per spatial dim; exactly one is set.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <leangrad/autograd/nn_functions.h>
#include <leangrad/core/macros.h>
#include <leangrad/nn/module_holder.h>

namespace leangrad::nn {

class UpsampleOptions {
  LG_ARG(std::optional<std::vector<std::int64_t>>, size) = std::nullopt;
  LG_ARG(std::optional<std::vector<double>>, scale_factor) = std::nullopt;
  LG_ARG(InterpolateMode, mode) = kNearest;
  // Linear, bilinear, bicubic and trilinear only; unset means false (PyTorch's default).
  LG_ARG(std::optional<bool>, align_corners) = std::nullopt;
};

class UpsampleImpl : public Module {
 public:
  explicit UpsampleImpl(const UpsampleOptions& options = {});
  // (N, C, H, W) -> (N, C, H_out, W_out), and so for (N, C, L) and (N, C, D, H, W).
  Tensor forward(const Tensor& input) override;
  // "scale_factor=[2, 2], mode=nearest" or "size=[8, 8], mode=bilinear, align_corners=false".
  std::string extra_repr() const override;
  const UpsampleOptions& options() const { return options_; }

 private:
  UpsampleOptions options_;
};
LEANGRAD_MODULE(Upsample);

}  // namespace leangrad::nn
