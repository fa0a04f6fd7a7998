// The dropout modules (nn/dropout.h).
#include <leangrad/nn/dropout.h>

#include <leangrad/autograd/dropout_functions.h>
#include <leangrad/autograd/nn_functions.h>
#include <leangrad/core/error.h>

namespace leangrad::nn {

DropoutImplBase::DropoutImplBase(const char* name, const DropoutOptions& options)
    : Module(name), options(options) {
  LG_CHECK(options.p() >= 0.0 && options.p() <= 1.0, name,
           ": expected a probability p in [0, 1], got ", options.p());
}

std::string DropoutImplBase::extra_repr() const {
  return detail::str_cat("p=", options.p());
}

DropoutImpl::DropoutImpl(const DropoutOptions& options) : DropoutImplBase("Dropout", options) {}

Tensor DropoutImpl::forward(const Tensor& input) {
  return dropout(input, options.p(), is_training());
}

Dropout1dImpl::Dropout1dImpl(const DropoutOptions& options)
    : DropoutImplBase("Dropout1d", options) {}

Tensor Dropout1dImpl::forward(const Tensor& input) {
  return dropout1d(input, options.p(), is_training());
}

Dropout2dImpl::Dropout2dImpl(const DropoutOptions& options)
    : DropoutImplBase("Dropout2d", options) {}

Tensor Dropout2dImpl::forward(const Tensor& input) {
  return dropout2d(input, options.p(), is_training());
}

Dropout3dImpl::Dropout3dImpl(const DropoutOptions& options)
    : DropoutImplBase("Dropout3d", options) {}

Tensor Dropout3dImpl::forward(const Tensor& input) {
  return dropout3d(input, options.p(), is_training());
}

AlphaDropoutImpl::AlphaDropoutImpl(const DropoutOptions& options)
    : DropoutImplBase("AlphaDropout", options) {}

Tensor AlphaDropoutImpl::forward(const Tensor& input) {
  return alpha_dropout(input, options.p(), is_training());
}

FeatureAlphaDropoutImpl::FeatureAlphaDropoutImpl(const DropoutOptions& options)
    : DropoutImplBase("FeatureAlphaDropout", options) {}

Tensor FeatureAlphaDropoutImpl::forward(const Tensor& input) {
  return feature_alpha_dropout(input, options.p(), is_training());
}

}  // namespace leangrad::nn
