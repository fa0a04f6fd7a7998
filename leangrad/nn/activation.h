// The stateless activation modules: TanhExp, ReLU, Sigmoid, Tanh, and LeakyReLU, ELU, SELU,
// SiLU, Mish, GELU, Softplus, Hardtanh, ReLU6 with LibTorch's options. Each forward calls the
// differentiable function of the same name (autograd/nn_functions.h, autograd/functions.h,
// autograd/activations.h); they exist so activations can sit in a Sequential and print in the
// module tree. ReLU, LeakyReLU, ELU, SELU, Hardtanh and ReLU6 take LibTorch's `inplace` option:
// the forward then writes its input in place (relu_, leaky_relu_, ...) and returns it.
//   nn::TanhExp act;  Tensor y = act(x);
//   nn::LeakyReLU leaky(nn::LeakyReLUOptions().negative_slope(0.2).inplace(true));
#pragma once

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

}  // namespace leangrad::nn
