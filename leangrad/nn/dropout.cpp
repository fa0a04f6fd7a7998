// nn::Dropout (nn/dropout.h).
#include <leangrad/nn/dropout.h>

#include <leangrad/autograd/nn_functions.h>
#include <leangrad/core/error.h>

namespace leangrad::nn {

DropoutImpl::DropoutImpl(const DropoutOptions& options) : Module("Dropout"), options(options) {
  LG_CHECK(options.p() >= 0.0 && options.p() <= 1.0,
           "Dropout: expected a probability p in [0, 1], got ", options.p());
}

Tensor DropoutImpl::forward(const Tensor& input) {
  return dropout(input, options.p(), is_training());
}

std::string DropoutImpl::extra_repr() const {
  return detail::str_cat("p=", options.p());
}

}  // namespace leangrad::nn
