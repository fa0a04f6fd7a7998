// nn::BatchNorm1d, BatchNorm2d and BatchNorm3d (nn/batch_norm.h).
#include <leangrad/nn/batch_norm.h>

#include <sstream>

#include <leangrad/autograd/grad_mode.h>
#include <leangrad/autograd/nn_functions.h>
#include <leangrad/core/error.h>
#include <leangrad/kernels/creation.h>

namespace leangrad::nn {

BatchNormImplBase::BatchNormImplBase(const char* name, const BatchNormOptions& options,
                                     const char* ranks, bool (*takes)(std::int64_t dim))
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

void BatchNormImplBase::reset_running_stats() {
  if (!running_mean.defined()) return;
  const NoGradGuard no_grad;
  running_mean.zero_();
  running_var.fill_(1.0);
  num_batches_tracked.zero_();
}

void BatchNormImplBase::reset_parameters() {
  reset_running_stats();
  if (!weight.defined()) return;
  const NoGradGuard no_grad;
  weight.fill_(1.0);
  bias.zero_();
}

Tensor BatchNormImplBase::forward(const Tensor& input) {
  LG_CHECK_SHAPE(!input.defined() || takes_(input.dim()), name(), ": expected ", ranks_, ", got ",
                 input.shape());
  const bool tracking = options_.track_running_stats();
  double momentum = options_.momentum().value_or(0.0);
  if (is_training() && tracking) {
    const NoGradGuard no_grad;
    num_batches_tracked.add_(1.0);
    // momentum = None: the running statistics are the average of every batch so far.
    if (!options_.momentum().has_value())
      momentum = 1.0 / static_cast<double>(num_batches_tracked.item<std::int64_t>());
  }
  // Without running statistics both modes normalize with the batch's, as PyTorch.
  const bool use_batch_stats = is_training() || !tracking;
  return batch_norm(input, tracking ? running_mean : Tensor(), tracking ? running_var : Tensor(),
                    weight, bias, use_batch_stats, momentum, options_.eps());
}

std::string BatchNormImplBase::extra_repr() const {
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

}  // namespace leangrad::nn
