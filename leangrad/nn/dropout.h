// nn::Dropout: zeroes each element with probability p in training mode (Philox: the same mask on
// every device for the same seed) and scales the rest by 1 / (1 - p); the identity in eval().
#pragma once

#include <string>

#include <leangrad/core/macros.h>
#include <leangrad/nn/module_holder.h>

namespace leangrad::nn {

// LibTorch's options: nn::Dropout(nn::DropoutOptions().p(0.2)), or nn::Dropout(0.2) (a double
// converts, as in LibTorch). LibTorch's `inplace` is not there: the mask is applied out of place.
class DropoutOptions {
 public:
  /* implicit */ DropoutOptions(double p = 0.5) : p_(p) {}
  LG_ARG(double, p);
};

class DropoutImpl : public Module {
 public:
  explicit DropoutImpl(const DropoutOptions& options = DropoutOptions());
  Tensor forward(const Tensor& input) override;
  std::string extra_repr() const override;
  DropoutOptions options;
};
LEANGRAD_MODULE(Dropout);

}  // namespace leangrad::nn
