// The stateless activation modules: TanhExp, ReLU, Sigmoid, Tanh. Each forward calls the
// differentiable function of the same name (autograd/nn_functions.h, autograd/functions.h);
// they exist so activations can sit in a Sequential and print in the module tree.
//   auto act = std::make_shared<nn::TanhExp>();  Tensor y = act->forward(x);
#pragma once

#include <leangrad/nn/module.h>

namespace leangrad::nn {

// y = x * tanh(exp(x)) (Liu & Di, 2020); see leangrad::tanhexp.
class TanhExp : public Module {
 public:
  TanhExp() : Module("TanhExp") {}
  Tensor forward(const Tensor& input) override;
};

// y = max(x, 0).
class ReLU : public Module {
 public:
  ReLU() : Module("ReLU") {}
  Tensor forward(const Tensor& input) override;
};

// y = 1 / (1 + exp(-x)).
class Sigmoid : public Module {
 public:
  Sigmoid() : Module("Sigmoid") {}
  Tensor forward(const Tensor& input) override;
};

// y = tanh(x).
class Tanh : public Module {
 public:
  Tanh() : Module("Tanh") {}
  Tensor forward(const Tensor& input) override;
};

}  // namespace leangrad::nn
