// nn::BatchNorm2d, configured like LibTorch's
//   nn::BatchNorm2d(nn::BatchNorm2dOptions(16).eps(1e-5).momentum(0.1).affine(true))
// Parameters `weight` (ones) and `bias` (zeros), (C,), exist only when affine; the buffers
// `running_mean` (zeros), `running_var` (ones) and `num_batches_tracked` (int64, 0-d) only with
// track_running_stats, so state dicts hold the same entries as PyTorch's. forward calls
// leangrad::batch_norm (autograd/nn_functions.h): in training with the batch's statistics
// (updating the running ones), in evaluation with the running ones.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <leangrad/core/macros.h>
#include <leangrad/nn/module_holder.h>

namespace leangrad::nn {

class BatchNormOptions {
 public:
  BatchNormOptions(std::int64_t num_features) : num_features_(num_features) {}

  LG_ARG(std::int64_t, num_features);
  LG_ARG(double, eps) = 1e-5;
  // The weight of the batch in the running statistics; std::nullopt: a cumulative average
  // (weight 1 / num_batches_tracked), as PyTorch's momentum=None.
  LG_ARG(std::optional<double>, momentum) = 0.1;
  LG_ARG(bool, affine) = true;
  LG_ARG(bool, track_running_stats) = true;
};
using BatchNorm2dOptions = BatchNormOptions;

// y = batch_norm(x, running_mean, running_var, weight, bias, training, momentum, eps) on
// x: (N, num_features, H, W).
class BatchNorm2dImpl : public Module {
 public:
  explicit BatchNorm2dImpl(const BatchNormOptions& options);
  explicit BatchNorm2dImpl(std::int64_t num_features)
      : BatchNorm2dImpl(BatchNormOptions(num_features)) {}
  Tensor forward(const Tensor& input) override;
  // "16, eps=1e-05, momentum=0.1, affine=true, track_running_stats=true"
  std::string extra_repr() const override;
  // running_mean to zeros, running_var to ones, num_batches_tracked to 0.
  void reset_running_stats();
  // reset_running_stats(), weight to ones and bias to zeros.
  void reset_parameters();

  const BatchNormOptions& options() const { return options_; }
  Tensor weight;               // (C,), undefined unless affine
  Tensor bias;                 // (C,), undefined unless affine
  Tensor running_mean;         // (C,), undefined unless track_running_stats
  Tensor running_var;          // (C,), undefined unless track_running_stats
  Tensor num_batches_tracked;  // int64, 0-d, undefined unless track_running_stats

 private:
  BatchNormOptions options_;
};
LEANGRAD_MODULE(BatchNorm2d);

}  // namespace leangrad::nn
