// The activation modules of nn/activation.h: each forward is the function of the same name.
#include <leangrad/nn/activation.h>

#include <leangrad/autograd/functions.h>
#include <leangrad/autograd/nn_functions.h>

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
