// nn::BatchNorm1d, BatchNorm2d and BatchNorm3d, and nn::InstanceNorm1d, 2d and 3d, configured
// like LibTorch's
//   nn::BatchNorm2d(nn::BatchNorm2dOptions(16).eps(1e-5).momentum(0.1).affine(true))
// The BatchNorms differ only in the inputs they take: (N, C) or (N, C, L); (N, C, H, W);
// (N, C, D, H, W).
// Parameters `weight` (ones) and `bias` (zeros), (C,), exist only when affine; the buffers
// `running_mean` (zeros), `running_var` (ones) and `num_batches_tracked` (int64, 0-d) only with
// track_running_stats, so state dicts hold the same entries as PyTorch's. forward calls
// leangrad::batch_norm (autograd/nn_functions.h): in training with the batch's statistics
// (updating the running ones), in evaluation with the running ones. The InstanceNorms (at the
// end) normalize each sample's channels on their own (leangrad::instance_norm).
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

// What the BatchNorm and InstanceNorm modules share (LibTorch's NormImplBase): the options of
// their statistics, the parameters and buffers those ask for, printing, the resets, and the
// check of the input's rank.
class NormImplBase : public Module {
 public:
  // "16, eps=1e-05, momentum=0.1, affine=true, track_running_stats=true"
  std::string extra_repr() const override;
  // running_mean to zeros, running_var to ones, num_batches_tracked to 0.
  void reset_running_stats();
  // reset_running_stats(), weight to ones and bias to zeros.
  void reset_parameters();

  Tensor weight;               // (C,), undefined unless affine
  Tensor bias;                 // (C,), undefined unless affine
  Tensor running_mean;         // (C,), undefined unless track_running_stats
  Tensor running_var;          // (C,), undefined unless track_running_stats
  Tensor num_batches_tracked;  // int64, 0-d, undefined unless track_running_stats

 protected:
  // `name` ("BatchNorm2d") names the module in errors and printing; `ranks` ("4-D input (N, C,
  // H, W)") says what it takes, and `takes(dim)` whether an input of that rank is one.
  NormImplBase(const char* name, const BatchNormOptions& options, const char* ranks,
               bool (*takes)(std::int64_t dim));
  // Throws ShapeError naming the module and `ranks` when `input` has a rank it does not take.
  void check_rank(const Tensor& input) const;
  const BatchNormOptions& norm_options() const { return options_; }

 private:
  BatchNormOptions options_;
  const char* ranks_;
  bool (*takes_)(std::int64_t dim);
};

// What BatchNorm1d, BatchNorm2d and BatchNorm3d share (LibTorch's BatchNormImplBase): forward,
// which calls
//   y = batch_norm(x, running_mean, running_var, weight, bias, training, momentum, eps)
// after checking that x has one of the ranks the module takes.
class BatchNormImplBase : public NormImplBase {
 public:
  Tensor forward(const Tensor& input) override;
  const BatchNormOptions& options() const { return norm_options(); }

 protected:
  using NormImplBase::NormImplBase;
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

// InstanceNorm1d, InstanceNorm2d and InstanceNorm3d, as LibTorch's: BatchNorm's options with
// PyTorch's other defaults (no affine parameters, no running statistics):
//   nn::InstanceNorm2d(nn::InstanceNorm2dOptions(64).affine(true))
class InstanceNormOptions {
 public:
  InstanceNormOptions(std::int64_t num_features) : num_features_(num_features) {}

  LG_ARG(std::int64_t, num_features);
  LG_ARG(double, eps) = 1e-5;
  LG_ARG(double, momentum) = 0.1;  // PyTorch's InstanceNorm takes no None
  LG_ARG(bool, affine) = false;
  LG_ARG(bool, track_running_stats) = false;
};
using InstanceNorm1dOptions = InstanceNormOptions;
using InstanceNorm2dOptions = InstanceNormOptions;
using InstanceNorm3dOptions = InstanceNormOptions;

// forward calls
//   y = instance_norm(x, running_mean, running_var, weight, bias, use_input_stats, momentum, eps)
// with use_input_stats in training or without running statistics (as PyTorch), on a batched input
// or an unbatched one (without N), which it normalizes as a batch of one. num_batches_tracked is
// in the state dict, as PyTorch's, and stays 0 (PyTorch's InstanceNorm does not count either).
class InstanceNormImplBase : public NormImplBase {
 public:
  Tensor forward(const Tensor& input) override;
  const InstanceNormOptions& options() const { return options_; }

 protected:
  // `spatial` dims: 1 for InstanceNorm1d, 2 for InstanceNorm2d, 3 for InstanceNorm3d.
  InstanceNormImplBase(const char* name, const InstanceNormOptions& options, const char* ranks,
                       bool (*takes)(std::int64_t dim), std::int64_t spatial);

 private:
  InstanceNormOptions options_;
  std::int64_t spatial_;
};

// On x: (N, num_features, L) or (num_features, L).
class InstanceNorm1dImpl : public InstanceNormImplBase {
 public:
  explicit InstanceNorm1dImpl(const InstanceNormOptions& options);
  explicit InstanceNorm1dImpl(std::int64_t num_features)
      : InstanceNorm1dImpl(InstanceNormOptions(num_features)) {}
};
LEANGRAD_MODULE(InstanceNorm1d);

// On x: (N, num_features, H, W) or (num_features, H, W).
class InstanceNorm2dImpl : public InstanceNormImplBase {
 public:
  explicit InstanceNorm2dImpl(const InstanceNormOptions& options);
  explicit InstanceNorm2dImpl(std::int64_t num_features)
      : InstanceNorm2dImpl(InstanceNormOptions(num_features)) {}
};
LEANGRAD_MODULE(InstanceNorm2d);

// On x: (N, num_features, D, H, W) or (num_features, D, H, W).
class InstanceNorm3dImpl : public InstanceNormImplBase {
 public:
  explicit InstanceNorm3dImpl(const InstanceNormOptions& options);
  explicit InstanceNorm3dImpl(std::int64_t num_features)
      : InstanceNorm3dImpl(InstanceNormOptions(num_features)) {}
};
LEANGRAD_MODULE(InstanceNorm3d);

}  // namespace leangrad::nn
