// nn::Dropout: zeroes each element with probability p in training mode (Philox: the same mask on
// every device for the same seed) and scales the rest by 1 / (1 - p); the identity in eval().
#pragma once

#include <string>

#include <leangrad/nn/module_holder.h>

namespace leangrad::nn {

class DropoutImpl : public Module {
 public:
  explicit DropoutImpl(double p = 0.5);
  Tensor forward(const Tensor& input) override;
  std::string extra_repr() const override;
  double p;
};
LEANGRAD_MODULE(Dropout);

}  // namespace leangrad::nn
