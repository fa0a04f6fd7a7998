// The activation modules of nn/activation.h: each forward is the function of the same name.
#include "nn/activation.h"

#include "autograd/functions.h"
#include "autograd/nn_functions.h"

namespace leangrad::nn {

Tensor TanhExp::forward(const Tensor& input) {
  return tanhexp(input);
}

Tensor ReLU::forward(const Tensor& input) {
  return relu(input);
}

Tensor Sigmoid::forward(const Tensor& input) {
  return sigmoid(input);
}

Tensor Tanh::forward(const Tensor& input) {
  return tanh(input);
}

}  // namespace leangrad::nn
