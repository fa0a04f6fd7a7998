// nn::LayerNorm, configured like LibTorch's
//   nn::LayerNorm(nn::LayerNormOptions({8}).eps(1e-5).elementwise_affine(true))
// Normalizes over the trailing dims normalized_shape. Parameters `weight` (ones) and `bias`
// (zeros), both of normalized_shape, exist only with elementwise_affine, as in PyTorch. forward
// calls leangrad::layer_norm (autograd/nn_functions.h), which runs on group_norm's kernels.
#pragma once

#include <string>
#include <utility>

#include <leangrad/core/macros.h>
#include <leangrad/core/shape.h>
#include <leangrad/nn/module_holder.h>

namespace leangrad::nn {

class LayerNormOptions {
 public:
  // LayerNormOptions({8}) or LayerNormOptions({4, 8}): the trailing dims normalized together.
  LayerNormOptions(Shape normalized_shape) : normalized_shape_(std::move(normalized_shape)) {}

  LG_ARG(Shape, normalized_shape);
  LG_ARG(double, eps) = 1e-5;
  LG_ARG(bool, elementwise_affine) = true;
};

// y = layer_norm(x, normalized_shape, weight, bias, eps) on x: (*, normalized_shape).
class LayerNormImpl : public Module {
 public:
  explicit LayerNormImpl(const LayerNormOptions& options);
  Tensor forward(const Tensor& input) override;
  // "[8], eps=1e-05, elementwise_affine=true"
  std::string extra_repr() const override;
  // weight to ones and bias to zeros, as PyTorch's reset_parameters.
  void reset_parameters();

  const LayerNormOptions& options() const { return options_; }
  Tensor weight;  // normalized_shape, undefined unless elementwise_affine
  Tensor bias;    // normalized_shape, undefined unless elementwise_affine

 private:
  LayerNormOptions options_;
};
LEANGRAD_MODULE(LayerNorm);

}  // namespace leangrad::nn
