// nn::Dropout: zeroes each element with probability p in training mode (Philox: the same mask on
// every device for the same seed) and scales the rest by 1 / (1 - p); the identity in eval().
#pragma once

#include <string>

#include <leangrad/nn/module.h>

namespace leangrad::nn {

class Dropout : public Module {
 public:
  explicit Dropout(double p = 0.5);
  Tensor forward(const Tensor& input) override;
  std::string extra_repr() const override;
  double p;
};

}  // namespace leangrad::nn
