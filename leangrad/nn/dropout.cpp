// nn::Dropout (nn/dropout.h).
#include <leangrad/nn/dropout.h>

#include <leangrad/autograd/nn_functions.h>
#include <leangrad/core/error.h>

namespace leangrad::nn {

DropoutImpl::DropoutImpl(double p) : Module("Dropout"), p(p) {
  LG_CHECK(p >= 0.0 && p <= 1.0, "Dropout: expected a probability p in [0, 1], got ", p);
}

Tensor DropoutImpl::forward(const Tensor& input) {
  return dropout(input, p, is_training());
}

std::string DropoutImpl::extra_repr() const {
  return detail::str_cat("p=", p);
}

}  // namespace leangrad::nn
