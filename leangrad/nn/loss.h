// Loss modules: CrossEntropyLoss, MSELoss, L1Loss. Unlike the single-input modules, their forward
// takes (input, target), as in LibTorch:
//   nn::CrossEntropyLoss loss(nn::CrossEntropyLossOptions().ignore_index(0));
//   Tensor l = loss(logits, target);  // logits (N, C), target (N,) int64
#pragma once

#include <cstdint>
#include <string>

#include <leangrad/autograd/nn_functions.h>
#include <leangrad/core/macros.h>
#include <leangrad/nn/module_holder.h>

namespace leangrad::nn {

class CrossEntropyLossOptions {
  LG_ARG(Reduction, reduction) = Reduction::Mean;
  LG_ARG(std::int64_t, ignore_index) = -100;
};

// Options of the elementwise losses (MSELoss, L1Loss).
class LossOptions {
  LG_ARG(Reduction, reduction) = Reduction::Mean;
};
using MSELossOptions = LossOptions;
using L1LossOptions = LossOptions;

// "mean", "sum" or "none".
const char* reduction_name(Reduction reduction);

class CrossEntropyLossImpl : public Module {
 public:
  explicit CrossEntropyLossImpl(const CrossEntropyLossOptions& options = {})
      : Module("CrossEntropyLoss"), options(options) {}
  using Module::forward;  // the single-input form throws: a loss needs a target
  // The holder calls it: loss(input, target).
  Tensor forward(const Tensor& input, const Tensor& target);
  std::string extra_repr() const override;
  CrossEntropyLossOptions options;
};
LEANGRAD_MODULE(CrossEntropyLoss);

class MSELossImpl : public Module {
 public:
  explicit MSELossImpl(const MSELossOptions& options = {}) : Module("MSELoss"), options(options) {}
  using Module::forward;
  Tensor forward(const Tensor& input, const Tensor& target);
  std::string extra_repr() const override;
  MSELossOptions options;
};
LEANGRAD_MODULE(MSELoss);

class L1LossImpl : public Module {
 public:
  explicit L1LossImpl(const L1LossOptions& options = {}) : Module("L1Loss"), options(options) {}
  using Module::forward;
  Tensor forward(const Tensor& input, const Tensor& target);
  std::string extra_repr() const override;
  L1LossOptions options;
};
LEANGRAD_MODULE(L1Loss);

}  // namespace leangrad::nn
