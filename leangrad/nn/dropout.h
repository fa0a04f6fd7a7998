// nn::Dropout: zeroes each element with probability p in training mode (Philox: the same mask on
// every device for the same seed) and scales the rest by 1 / (1 - p); the identity in eval().
// nn::Dropout1d, Dropout2d and Dropout3d zero whole channels (dropout1d/2d/3d), nn::AlphaDropout
// and FeatureAlphaDropout keep a SELU network's mean and variance (autograd/dropout_functions.h).
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

// LibTorch's names for the same options.
using Dropout1dOptions = DropoutOptions;
using Dropout2dOptions = DropoutOptions;
using Dropout3dOptions = DropoutOptions;
using AlphaDropoutOptions = DropoutOptions;
using FeatureAlphaDropoutOptions = DropoutOptions;

// What the dropout modules share: the options, their check (p in [0, 1]) and "p=0.5".
class DropoutImplBase : public Module {
 public:
  std::string extra_repr() const override;
  DropoutOptions options;

 protected:
  DropoutImplBase(const char* name, const DropoutOptions& options);
};

class DropoutImpl : public DropoutImplBase {
 public:
  explicit DropoutImpl(const DropoutOptions& options = DropoutOptions());
  Tensor forward(const Tensor& input) override;
};
LEANGRAD_MODULE(Dropout);

// (N, C, L) or (C, L): whole channels zeroed.
class Dropout1dImpl : public DropoutImplBase {
 public:
  explicit Dropout1dImpl(const DropoutOptions& options = DropoutOptions());
  Tensor forward(const Tensor& input) override;
};
LEANGRAD_MODULE(Dropout1d);

// (N, C, H, W) or (C, H, W).
class Dropout2dImpl : public DropoutImplBase {
 public:
  explicit Dropout2dImpl(const DropoutOptions& options = DropoutOptions());
  Tensor forward(const Tensor& input) override;
};
LEANGRAD_MODULE(Dropout2d);

// (N, C, D, H, W) or (C, D, H, W).
class Dropout3dImpl : public DropoutImplBase {
 public:
  explicit Dropout3dImpl(const DropoutOptions& options = DropoutOptions());
  Tensor forward(const Tensor& input) override;
};
LEANGRAD_MODULE(Dropout3d);

class AlphaDropoutImpl : public DropoutImplBase {
 public:
  explicit AlphaDropoutImpl(const DropoutOptions& options = DropoutOptions());
  Tensor forward(const Tensor& input) override;
};
LEANGRAD_MODULE(AlphaDropout);

class FeatureAlphaDropoutImpl : public DropoutImplBase {
 public:
  explicit FeatureAlphaDropoutImpl(const DropoutOptions& options = DropoutOptions());
  Tensor forward(const Tensor& input) override;
};
LEANGRAD_MODULE(FeatureAlphaDropout);

}  // namespace leangrad::nn
