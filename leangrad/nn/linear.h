// nn::Linear: y = x W^T + b over the last dim (autograd/nn_functions.cpp's linear), with PyTorch's
// default initialisation, so the same recipe trains the same way.
//   nn::Linear fc(784, 128);  nn::Linear head(nn::LinearOptions(128, 10).bias(false));
//   Tensor y = fc(x);  fc->weight;  // nn::Linear holds an nn::LinearImpl (nn/module_holder.h)
#pragma once

#include <cstdint>
#include <string>

#include <leangrad/core/macros.h>
#include <leangrad/nn/module_holder.h>

namespace leangrad::nn {

class LinearOptions {
 public:
  LinearOptions(std::int64_t in_features, std::int64_t out_features)
      : in_features_(in_features), out_features_(out_features) {}

  LG_ARG(std::int64_t, in_features);
  LG_ARG(std::int64_t, out_features);
  LG_ARG(bool, bias) = true;
};

class LinearImpl : public Module {
 public:
  LinearImpl(std::int64_t in_features, std::int64_t out_features);
  explicit LinearImpl(const LinearOptions& options);

  // (*, in_features) -> (*, out_features)
  Tensor forward(const Tensor& input) override;
  std::string extra_repr() const override;
  // PyTorch's init: weight ~ kaiming_uniform(a = sqrt(5)) = U(-1/sqrt(in), 1/sqrt(in)), and the
  // same bound for the bias (in = fan_in = in_features), from the CPU default generator.
  void reset_parameters();

  LinearOptions options;
  Tensor weight;  // (out_features, in_features)
  Tensor bias;    // (out_features,), undefined with bias(false)
};
LEANGRAD_MODULE(Linear);

// Returns its input, as LibTorch's nn::Identity: a placeholder where a layer is optional
// (a shortcut without projection, a head removed for fine-tuning).
class IdentityImpl : public Module {
 public:
  IdentityImpl() : Module("Identity") {}
  Tensor forward(const Tensor& input) override { return input; }
};
LEANGRAD_MODULE(Identity);

}  // namespace leangrad::nn
