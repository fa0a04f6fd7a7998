// The stateless activation modules: TanhExp, ReLU, Sigmoid, Tanh. Each forward calls the
// differentiable function of the same name (autograd/nn_functions.h, autograd/functions.h);
// they exist so activations can sit in a Sequential and print in the module tree.
//   nn::TanhExp act;  Tensor y = act(x);
#pragma once

#include <leangrad/nn/module_holder.h>

namespace leangrad::nn {

// y = x * tanh(exp(x)) (Liu & Di, 2020); see leangrad::tanhexp.
class TanhExpImpl : public Module {
 public:
  TanhExpImpl() : Module("TanhExp") {}
  Tensor forward(const Tensor& input) override;
};
LEANGRAD_MODULE(TanhExp);

// y = max(x, 0).
class ReLUImpl : public Module {
 public:
  ReLUImpl() : Module("ReLU") {}
  Tensor forward(const Tensor& input) override;
};
LEANGRAD_MODULE(ReLU);

// y = 1 / (1 + exp(-x)).
class SigmoidImpl : public Module {
 public:
  SigmoidImpl() : Module("Sigmoid") {}
  Tensor forward(const Tensor& input) override;
};
LEANGRAD_MODULE(Sigmoid);

// y = tanh(x).
class TanhImpl : public Module {
 public:
  TanhImpl() : Module("Tanh") {}
  Tensor forward(const Tensor& input) override;
};
LEANGRAD_MODULE(Tanh);

}  // namespace leangrad::nn
