// Normalization modules: GroupNorm, configured like LibTorch's
//   nn::GroupNorm(nn::GroupNormOptions(32, 64).eps(1e-5).affine(true))
// Parameters `weight` (ones) and `bias` (zeros), both (C,), exist only when affine, as in
// PyTorch. forward calls leangrad::group_norm (autograd/nn_functions.h).
#pragma once

#include <cstdint>
#include <string>

#include <leangrad/core/macros.h>
#include <leangrad/nn/module_holder.h>

namespace leangrad::nn {

// num_groups must divide num_channels. Each option is read with opt.eps() and set with
// opt.eps(value), which returns the options for chaining.
class GroupNormOptions {
 public:
  GroupNormOptions(std::int64_t num_groups, std::int64_t num_channels)
      : num_groups_(num_groups), num_channels_(num_channels) {}

  LG_ARG(std::int64_t, num_groups);
  LG_ARG(std::int64_t, num_channels);
  LG_ARG(double, eps) = 1e-5;
  LG_ARG(bool, affine) = true;
};

// y = group_norm(x, num_groups, weight, bias, eps) on x: (N, num_channels, *).
class GroupNormImpl : public Module {
 public:
  explicit GroupNormImpl(const GroupNormOptions& options);
  Tensor forward(const Tensor& input) override;
  // "32, 64, eps=1e-05, affine=true", as PyTorch prints its GroupNorm.
  std::string extra_repr() const override;

  const GroupNormOptions& options() const { return options_; }
  Tensor weight;  // (C,), undefined unless affine
  Tensor bias;    // (C,), undefined unless affine

 private:
  GroupNormOptions options_;
};
LEANGRAD_MODULE(GroupNorm);

}  // namespace leangrad::nn
