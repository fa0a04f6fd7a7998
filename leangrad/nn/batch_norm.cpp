// nn::BatchNorm1d, BatchNorm2d and BatchNorm3d, and nn::InstanceNorm1d, 2d and 3d
// (nn/batch_norm.h).
#include <leangrad/nn/batch_norm.h>

#include <sstream>

#include <leangrad/autograd/grad_mode.h>
#include <leangrad/autograd/nn_functions.h>
#include <leangrad/core/error.h>
#include <leangrad/kernels/creation.h>

namespace leangrad::nn {

NormImplBase::NormImplBase(const char* name, const BatchNormOptions& options, const char* ranks,
                           bool (*takes)(std::int64_t dim))
    : Module(name), options_(options), ranks_(ranks), takes_(takes) {
  const std::int64_t c = options.num_features();
  LG_CHECK_SHAPE(c > 0, name, ": expected a positive num_features, got ", c);
  if (options.affine()) {
    weight = register_parameter("weight", ones({c}));
    bias = register_parameter("bias", zeros({c}));
  }
  if (options.track_running_stats()) {
    running_mean = register_buffer("running_mean", zeros({c}));
    running_var = register_buffer("running_var", ones({c}));
    num_batches_tracked = register_buffer("num_batches_tracked", zeros({}, kInt64));
  }
}

void NormImplBase::reset_running_stats() {
  if (!running_mean.defined()) return;
  const NoGradGuard no_grad;
  running_mean.zero_();
  running_var.fill_(1.0);
  num_batches_tracked.zero_();
}

void NormImplBase::reset_parameters() {
  reset_running_stats();
  if (!weight.defined()) return;
  const NoGradGuard no_grad;
  weight.fill_(1.0);
  bias.zero_();
}

void NormImplBase::check_rank(const Tensor& input) const {
  LG_CHECK_SHAPE(!input.defined() || takes_(input.dim()), name(), ": expected ", ranks_, ", got ",
                 input.shape());
}

Tensor BatchNormImplBase::forward(const Tensor& input) {
  check_rank(input);
  const BatchNormOptions& options = norm_options();
  const bool tracking = options.track_running_stats();
  double momentum = options.momentum().value_or(0.0);
  if (is_training() && tracking) {
    const NoGradGuard no_grad;
    num_batches_tracked.add_(1.0);
    // momentum = None: the running statistics are the average of every batch so far.
    if (!options.momentum().has_value())
      momentum = 1.0 / static_cast<double>(num_batches_tracked.item<std::int64_t>());
  }
  // Without running statistics both modes normalize with the batch's, as PyTorch.
  const bool use_batch_stats = is_training() || !tracking;
  return batch_norm(input, tracking ? running_mean : Tensor(), tracking ? running_var : Tensor(),
                    weight, bias, use_batch_stats, momentum, options.eps());
}

std::string NormImplBase::extra_repr() const {
  std::ostringstream out;
  out << options_.num_features() << ", eps=" << options_.eps() << ", momentum=";
  if (options_.momentum().has_value()) {
    out << *options_.momentum();
  } else {
    out << "None";
  }
  out << ", affine=" << (options_.affine() ? "true" : "false")
      << ", track_running_stats=" << (options_.track_running_stats() ? "true" : "false");
  return out.str();
}

BatchNorm1dImpl::BatchNorm1dImpl(const BatchNormOptions& options)
    : BatchNormImplBase("BatchNorm1d", options, "2-D input (N, C) or 3-D input (N, C, L)",
                        [](std::int64_t dim) { return dim == 2 || dim == 3; }) {}

BatchNorm2dImpl::BatchNorm2dImpl(const BatchNormOptions& options)
    : BatchNormImplBase("BatchNorm2d", options, "4-D input (N, C, H, W)",
                        [](std::int64_t dim) { return dim == 4; }) {}

BatchNorm3dImpl::BatchNorm3dImpl(const BatchNormOptions& options)
    : BatchNormImplBase("BatchNorm3d", options, "5-D input (N, C, D, H, W)",
                        [](std::int64_t dim) { return dim == 5; }) {}

namespace {

// InstanceNorm's options as the statistics options NormImplBase keeps.
BatchNormOptions statistics_options(const InstanceNormOptions& o) {
  return BatchNormOptions(o.num_features())
      .eps(o.eps())
      .momentum(o.momentum())
      .affine(o.affine())
      .track_running_stats(o.track_running_stats());
}

}  // namespace

InstanceNormImplBase::InstanceNormImplBase(const char* name, const InstanceNormOptions& options,
                                           const char* ranks, bool (*takes)(std::int64_t dim),
                                           std::int64_t spatial)
    : NormImplBase(name, statistics_options(options), ranks, takes),
      options_(options),
      spatial_(spatial) {}

Tensor InstanceNormImplBase::forward(const Tensor& input) {
  check_rank(input);
  const bool tracking = options_.track_running_stats();
  const bool unbatched = input.dim() == spatial_ + 1;
  const Tensor x = unbatched ? input.unsqueeze(0) : input;
  LG_CHECK_SHAPE(!options_.affine() || x.size(1) == options_.num_features(), name(),
                 ": expected input's size at dim ", unbatched ? 0 : 1, " to match num_features (",
                 options_.num_features(), "), got input of shape ", input.shape());
  const double momentum = options_.momentum();
  const Tensor y =
      instance_norm(x, tracking ? running_mean : Tensor(), tracking ? running_var : Tensor(),
                    weight, bias, is_training() || !tracking, momentum, options_.eps());
  return unbatched ? y.squeeze(0) : y;
}

InstanceNorm1dImpl::InstanceNorm1dImpl(const InstanceNormOptions& options)
    : InstanceNormImplBase(
          "InstanceNorm1d", options, "2-D input (C, L) or 3-D input (N, C, L)",
          [](std::int64_t dim) { return dim == 2 || dim == 3; }, 1) {}

InstanceNorm2dImpl::InstanceNorm2dImpl(const InstanceNormOptions& options)
    : InstanceNormImplBase(
          "InstanceNorm2d", options, "3-D input (C, H, W) or 4-D input (N, C, H, W)",
          [](std::int64_t dim) { return dim == 3 || dim == 4; }, 2) {}

InstanceNorm3dImpl::InstanceNorm3dImpl(const InstanceNormOptions& options)
    : InstanceNormImplBase(
          "InstanceNorm3d", options, "4-D input (C, D, H, W) or 5-D input (N, C, D, H, W)",
          [](std::int64_t dim) { return dim == 4 || dim == 5; }, 3) {}

}  // namespace leangrad::nn
