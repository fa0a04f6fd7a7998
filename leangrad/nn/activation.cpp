// The activation modules of nn/activation.h: each forward is the function of the same name.
#include <leangrad/nn/activation.h>

#include <leangrad/autograd/functions.h>
#include <leangrad/autograd/nn_functions.h>

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
