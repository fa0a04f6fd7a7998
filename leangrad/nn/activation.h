// The activation modules: TanhExp, ReLU, Sigmoid, Tanh, and LeakyReLU, ELU, SELU, SiLU, Mish,
// GELU, Softplus, Hardtanh, ReLU6, Hardswish, Hardsigmoid, LogSigmoid, Softsign, Tanhshrink,
// CELU, Softshrink, Hardshrink, Threshold, GLU and PReLU (whose weight is a parameter) with
// LibTorch's options. Each forward calls the differentiable function of the same name
// (autograd/nn_functions.h, autograd/functions.h, autograd/activations.h); they exist so
// activations can sit in a Sequential and print in the module tree. ReLU, LeakyReLU, ELU, SELU,
// Hardtanh and ReLU6 take LibTorch's `inplace` option: the forward then writes its input in place
// (relu_, leaky_relu_, ...) and returns it.
//   nn::TanhExp act;  Tensor y = act(x);
//   nn::LeakyReLU leaky(nn::LeakyReLUOptions().negative_slope(0.2).inplace(true));
#pragma once

#include <cstdint>
#include <string>

#include <leangrad/core/macros.h>
#include <leangrad/nn/module_holder.h>

namespace leangrad::nn {

// y = x * tanh(exp(x)) (Liu & Di, 2020); see leangrad::tanhexp.
class TanhExpImpl : public Module {
 public:
  TanhExpImpl() : Module("TanhExp") {}
  Tensor forward(const Tensor& input) override;
};
LEANGRAD_MODULE(TanhExp);

// LibTorch's: nn::ReLU(nn::ReLUOptions().inplace(true)), or nn::ReLU(true).
class ReLUOptions {
 public:
  ReLUOptions(bool inplace = false) : inplace_(inplace) {}  // NOLINT: implicit, as LibTorch's
  LG_ARG(bool, inplace);
};

// y = max(x, 0).
class ReLUImpl : public Module {
 public:
  explicit ReLUImpl(const ReLUOptions& options = {});
  Tensor forward(const Tensor& input) override;
  std::string extra_repr() const override;
  ReLUOptions options;
};
LEANGRAD_MODULE(ReLU);

// LibTorch's options of the three below: nn::Softmax(nn::SoftmaxOptions(1)), or nn::Softmax(1).
class SoftmaxOptions {
 public:
  /* implicit */ SoftmaxOptions(std::int64_t dim) : dim_(dim) {}
  LG_ARG(std::int64_t, dim);
};
using LogSoftmaxOptions = SoftmaxOptions;
using SoftminOptions = SoftmaxOptions;

// softmax(x, dim), log_softmax(x, dim) and softmin(x, dim) as modules.
class SoftmaxImpl : public Module {
 public:
  explicit SoftmaxImpl(const SoftmaxOptions& options) : Module("Softmax"), options(options) {}
  Tensor forward(const Tensor& input) override;
  std::string extra_repr() const override;
  SoftmaxOptions options;
};
LEANGRAD_MODULE(Softmax);

class LogSoftmaxImpl : public Module {
 public:
  explicit LogSoftmaxImpl(const LogSoftmaxOptions& options)
      : Module("LogSoftmax"), options(options) {}
  Tensor forward(const Tensor& input) override;
  std::string extra_repr() const override;
  LogSoftmaxOptions options;
};
LEANGRAD_MODULE(LogSoftmax);

class SoftminImpl : public Module {
 public:
  explicit SoftminImpl(const SoftminOptions& options) : Module("Softmin"), options(options) {}
  Tensor forward(const Tensor& input) override;
  std::string extra_repr() const override;
  SoftminOptions options;
};
LEANGRAD_MODULE(Softmin);

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

class LeakyReLUOptions {
 public:
  LG_ARG(double, negative_slope) = 0.01;
  LG_ARG(bool, inplace) = false;
};

// y = x for x > 0, negative_slope * x otherwise.
class LeakyReLUImpl : public Module {
 public:
  explicit LeakyReLUImpl(const LeakyReLUOptions& options = {});
  Tensor forward(const Tensor& input) override;
  std::string extra_repr() const override;
  LeakyReLUOptions options;
};
LEANGRAD_MODULE(LeakyReLU);

class ELUOptions {
 public:
  LG_ARG(double, alpha) = 1.0;
  LG_ARG(bool, inplace) = false;
};

// y = x for x > 0, alpha (exp(x) - 1) otherwise.
class ELUImpl : public Module {
 public:
  explicit ELUImpl(const ELUOptions& options = {});
  Tensor forward(const Tensor& input) override;
  std::string extra_repr() const override;
  ELUOptions options;
};
LEANGRAD_MODULE(ELU);

class SELUOptions {
 public:
  SELUOptions(bool inplace = false) : inplace_(inplace) {}  // NOLINT: implicit, as LibTorch's
  LG_ARG(bool, inplace);
};

// y = scale * elu(x, alpha), SELU's fixed constants.
class SELUImpl : public Module {
 public:
  explicit SELUImpl(const SELUOptions& options = {});
  Tensor forward(const Tensor& input) override;
  std::string extra_repr() const override;
  SELUOptions options;
};
LEANGRAD_MODULE(SELU);

// y = x * sigmoid(x).
class SiLUImpl : public Module {
 public:
  SiLUImpl() : Module("SiLU") {}
  Tensor forward(const Tensor& input) override;
};
LEANGRAD_MODULE(SiLU);

// y = x * tanh(softplus(x)).
class MishImpl : public Module {
 public:
  MishImpl() : Module("Mish") {}
  Tensor forward(const Tensor& input) override;
};
LEANGRAD_MODULE(Mish);

class GELUOptions {
 public:
  LG_ARG(std::string, approximate) = "none";  // or "tanh"
};

// y = x Phi(x), or its tanh approximation.
class GELUImpl : public Module {
 public:
  explicit GELUImpl(const GELUOptions& options = {});
  Tensor forward(const Tensor& input) override;
  std::string extra_repr() const override;
  GELUOptions options;
};
LEANGRAD_MODULE(GELU);

class SoftplusOptions {
 public:
  LG_ARG(double, beta) = 1.0;
  LG_ARG(double, threshold) = 20.0;
};

// y = log(1 + exp(beta x)) / beta, x where beta x > threshold.
class SoftplusImpl : public Module {
 public:
  explicit SoftplusImpl(const SoftplusOptions& options = {});
  Tensor forward(const Tensor& input) override;
  std::string extra_repr() const override;
  SoftplusOptions options;
};
LEANGRAD_MODULE(Softplus);

class HardtanhOptions {
 public:
  LG_ARG(double, min_val) = -1.0;
  LG_ARG(double, max_val) = 1.0;
  LG_ARG(bool, inplace) = false;
};

// y = x limited to [min_val, max_val].
class HardtanhImpl : public Module {
 public:
  explicit HardtanhImpl(const HardtanhOptions& options = {});
  Tensor forward(const Tensor& input) override;
  std::string extra_repr() const override;
  HardtanhOptions options;
};
LEANGRAD_MODULE(Hardtanh);

class ReLU6Options {
 public:
  ReLU6Options(bool inplace = false) : inplace_(inplace) {}  // NOLINT: implicit, as LibTorch's
  LG_ARG(bool, inplace);
};

// y = x limited to [0, 6].
class ReLU6Impl : public Module {
 public:
  explicit ReLU6Impl(const ReLU6Options& options = {});
  Tensor forward(const Tensor& input) override;
  std::string extra_repr() const override;
  ReLU6Options options;
};
LEANGRAD_MODULE(ReLU6);

// Hardswish, Hardsigmoid, LogSigmoid, Softsign and Tanhshrink: no options.
#define LEANGRAD_PLAIN_ACTIVATION(Name)           \
  class Name##Impl : public Module {              \
   public:                                        \
    Name##Impl() : Module(#Name) {}               \
    Tensor forward(const Tensor& input) override; \
  };                                              \
  LEANGRAD_MODULE(Name)

LEANGRAD_PLAIN_ACTIVATION(Hardswish);    // hardswish(x)
LEANGRAD_PLAIN_ACTIVATION(Hardsigmoid);  // hardsigmoid(x)
LEANGRAD_PLAIN_ACTIVATION(LogSigmoid);   // log_sigmoid(x)
LEANGRAD_PLAIN_ACTIVATION(Softsign);     // softsign(x)
LEANGRAD_PLAIN_ACTIVATION(Tanhshrink);   // tanhshrink(x)
#undef LEANGRAD_PLAIN_ACTIVATION

// LibTorch's CELUOptions, without inplace (CELU has no in-place form here).
class CELUOptions {
 public:
  LG_ARG(double, alpha) = 1.0;
};

// celu(x, alpha).
class CELUImpl : public Module {
 public:
  explicit CELUImpl(const CELUOptions& options = {});
  Tensor forward(const Tensor& input) override;
  std::string extra_repr() const override;
  CELUOptions options;
};
LEANGRAD_MODULE(CELU);

// LibTorch's options of Softshrink and Hardshrink: nn::Softshrink(nn::SoftshrinkOptions(0.3)).
class SoftshrinkOptions {
 public:
  SoftshrinkOptions(double lambda = 0.5) : lambda_(lambda) {}  // NOLINT: implicit, as LibTorch's
  LG_ARG(double, lambda);
};
using HardshrinkOptions = SoftshrinkOptions;

// softshrink(x, lambda).
class SoftshrinkImpl : public Module {
 public:
  explicit SoftshrinkImpl(const SoftshrinkOptions& options = {});
  Tensor forward(const Tensor& input) override;
  std::string extra_repr() const override;  // "0.5", as PyTorch prints lambda
  SoftshrinkOptions options;
};
LEANGRAD_MODULE(Softshrink);

// hardshrink(x, lambda).
class HardshrinkImpl : public Module {
 public:
  explicit HardshrinkImpl(const HardshrinkOptions& options = {});
  Tensor forward(const Tensor& input) override;
  std::string extra_repr() const override;
  HardshrinkOptions options;
};
LEANGRAD_MODULE(Hardshrink);

// LibTorch's ThresholdOptions(threshold, value), without inplace.
class ThresholdOptions {
 public:
  ThresholdOptions(double threshold, double value) : threshold_(threshold), value_(value) {}
  LG_ARG(double, threshold);
  LG_ARG(double, value);
};

// threshold(x, threshold, value).
class ThresholdImpl : public Module {
 public:
  explicit ThresholdImpl(const ThresholdOptions& options);
  Tensor forward(const Tensor& input) override;
  std::string extra_repr() const override;
  ThresholdOptions options;
};
LEANGRAD_MODULE(Threshold);

class PReLUOptions {
 public:
  LG_ARG(std::int64_t, num_parameters) = 1;  // 1, or the input's channels (dim 1)
  LG_ARG(double, init) = 0.25;
};

// prelu(x, weight) with a learnable `weight` (num_parameters,), filled with init, as PyTorch's.
class PReLUImpl : public Module {
 public:
  explicit PReLUImpl(const PReLUOptions& options = {});
  Tensor forward(const Tensor& input) override;
  std::string extra_repr() const override;
  void reset_parameters();
  PReLUOptions options;
  Tensor weight;
};
LEANGRAD_MODULE(PReLU);

class GLUOptions {
 public:
  GLUOptions(std::int64_t dim = -1) : dim_(dim) {}  // NOLINT: implicit, as LibTorch's
  LG_ARG(std::int64_t, dim);
};

// glu(x, dim).
class GLUImpl : public Module {
 public:
  explicit GLUImpl(const GLUOptions& options = {});
  Tensor forward(const Tensor& input) override;
  std::string extra_repr() const override;
  GLUOptions options;
};
LEANGRAD_MODULE(GLU);

}  // namespace leangrad::nn
