// nn::BatchNorm1d, BatchNorm2d and BatchNorm3d, configured like LibTorch's
//   nn::BatchNorm2d(nn::BatchNorm2dOptions(16).eps(1e-5).momentum(0.1).affine(true))
// They differ only in the inputs they take: (N, C) or (N, C, L); (N, C, H, W); (N, C, D, H, W).
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

// What BatchNorm1d, BatchNorm2d and BatchNorm3d share (LibTorch's BatchNormImplBase): options,
// parameters, buffers and forward, which calls
//   y = batch_norm(x, running_mean, running_var, weight, bias, training, momentum, eps)
// after checking that x has one of the ranks the module takes.
class BatchNormImplBase : public Module {
 public:
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

 protected:
  // `name` ("BatchNorm2d") names the module in errors and printing; `ranks` ("4-D input (N, C,
  // H, W)") says what it takes, and `takes(dim)` whether an input of that rank is one.
  BatchNormImplBase(const char* name, const BatchNormOptions& options, const char* ranks,
                    bool (*takes)(std::int64_t dim));

 private:
  BatchNormOptions options_;
  const char* ranks_;
  bool (*takes_)(std::int64_t dim);
};

// On x: (N, num_features) or (N, num_features, L).
class BatchNorm1dImpl : public BatchNormImplBase {
 public:
  explicit BatchNorm1dImpl(const BatchNormOptions& options);
  explicit BatchNorm1dImpl(std::int64_t num_features)
      : BatchNorm1dImpl(BatchNormOptions(num_features)) {}
};
LEANGRAD_MODULE(BatchNorm1d);
using BatchNorm1dOptions = BatchNormOptions;

// On x: (N, num_features, H, W).
class BatchNorm2dImpl : public BatchNormImplBase {
 public:
  explicit BatchNorm2dImpl(const BatchNormOptions& options);
  explicit BatchNorm2dImpl(std::int64_t num_features)
      : BatchNorm2dImpl(BatchNormOptions(num_features)) {}
};
LEANGRAD_MODULE(BatchNorm2d);

// On x: (N, num_features, D, H, W).
class BatchNorm3dImpl : public BatchNormImplBase {
 public:
  explicit BatchNorm3dImpl(const BatchNormOptions& options);
  explicit BatchNorm3dImpl(std::int64_t num_features)
      : BatchNorm3dImpl(BatchNormOptions(num_features)) {}
};
LEANGRAD_MODULE(BatchNorm3d);
using BatchNorm3dOptions = BatchNormOptions;

}  // namespace leangrad::nn
