// The activation modules of nn/activation.h: each forward is the function of the same name.
#include "nn/activation.h"

#include "autograd/functions.h"
#include "autograd/nn_functions.h"

namespace leangrad::nn {

Tensor TanhExpImpl::forward(const Tensor& input) {
  return tanhexp(input);
}

Tensor ReLUImpl::forward(const Tensor& input) {
  return relu(input);
}

Tensor SigmoidImpl::forward(const Tensor& input) {
  return sigmoid(input);
}

Tensor TanhImpl::forward(const Tensor& input) {
  return tanh(input);
}

}  // namespace leangrad::nn
