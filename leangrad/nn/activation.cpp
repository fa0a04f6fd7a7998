// The activation modules of nn/activation.h: each forward is the function of the same name, or
// its in-place form when the options say inplace.
#include <leangrad/nn/activation.h>

#include <cmath>

#include <leangrad/autograd/activations.h>
#include <leangrad/autograd/functions.h>
#include <leangrad/autograd/grad_mode.h>
#include <leangrad/autograd/nn_functions.h>
#include <leangrad/core/creation.h>
#include <leangrad/core/error.h>
#include <leangrad/kernels/creation.h>

namespace leangrad::nn {

namespace {

// The forward of an activation with LibTorch's `inplace` option: `in_place` writes the input
// (the same tensor is returned, as LibTorch's), `out_of_place` returns a new tensor.
template <typename InPlace, typename OutOfPlace>
Tensor activate(const Tensor& input, bool inplace, const InPlace& in_place,
                const OutOfPlace& out_of_place) {
  if (!inplace) return out_of_place(input);
  Tensor written = input;  // the same tensor: its data and history are rewritten
  in_place(written);
  return written;
}

// "inplace=true" when set (LibTorch prints it then only).
std::string inplace_repr(bool inplace) {
  return inplace ? "inplace=true" : "";
}

std::string joined(const std::string& a, const std::string& b) {
  if (a.empty()) return b;
  if (b.empty()) return a;
  return a + ", " + b;
}

}  // namespace

Tensor TanhExpImpl::forward(const Tensor& input) {
  return tanhexp(input);
}

ReLUImpl::ReLUImpl(const ReLUOptions& options) : Module("ReLU"), options(options) {}

Tensor ReLUImpl::forward(const Tensor& input) {
  return activate(
      input, options.inplace(), [](Tensor& x) { x.relu_(); },
      [](const Tensor& x) { return relu(x); });
}

std::string ReLUImpl::extra_repr() const {
  return inplace_repr(options.inplace());
}

Tensor SoftmaxImpl::forward(const Tensor& input) {
  return softmax(input, options.dim());
}
std::string SoftmaxImpl::extra_repr() const {
  return detail::str_cat("dim=", options.dim());
}
Tensor LogSoftmaxImpl::forward(const Tensor& input) {
  return log_softmax(input, options.dim());
}
std::string LogSoftmaxImpl::extra_repr() const {
  return detail::str_cat("dim=", options.dim());
}
Tensor SoftminImpl::forward(const Tensor& input) {
  return softmin(input, options.dim());
}
std::string SoftminImpl::extra_repr() const {
  return detail::str_cat("dim=", options.dim());
}

Tensor SigmoidImpl::forward(const Tensor& input) {
  return sigmoid(input);
}

Tensor TanhImpl::forward(const Tensor& input) {
  return tanh(input);
}

LeakyReLUImpl::LeakyReLUImpl(const LeakyReLUOptions& options)
    : Module("LeakyReLU"), options(options) {}

Tensor LeakyReLUImpl::forward(const Tensor& input) {
  const double slope = options.negative_slope();
  return activate(
      input, options.inplace(), [slope](Tensor& x) { leaky_relu_(x, slope); },
      [slope](const Tensor& x) { return leaky_relu(x, slope); });
}

std::string LeakyReLUImpl::extra_repr() const {
  return joined(detail::str_cat("negative_slope=", options.negative_slope()),
                inplace_repr(options.inplace()));
}

ELUImpl::ELUImpl(const ELUOptions& options) : Module("ELU"), options(options) {}

Tensor ELUImpl::forward(const Tensor& input) {
  const double alpha = options.alpha();
  return activate(
      input, options.inplace(), [alpha](Tensor& x) { elu_(x, alpha); },
      [alpha](const Tensor& x) { return elu(x, alpha); });
}

std::string ELUImpl::extra_repr() const {
  return joined(detail::str_cat("alpha=", options.alpha()), inplace_repr(options.inplace()));
}

SELUImpl::SELUImpl(const SELUOptions& options) : Module("SELU"), options(options) {}

Tensor SELUImpl::forward(const Tensor& input) {
  return activate(
      input, options.inplace(), [](Tensor& x) { selu_(x); },
      [](const Tensor& x) { return selu(x); });
}

std::string SELUImpl::extra_repr() const {
  return inplace_repr(options.inplace());
}

Tensor SiLUImpl::forward(const Tensor& input) {
  return silu(input);
}

Tensor MishImpl::forward(const Tensor& input) {
  return mish(input);
}

GELUImpl::GELUImpl(const GELUOptions& options) : Module("GELU"), options(options) {
  LG_CHECK(options.approximate() == "none" || options.approximate() == "tanh",
           "GELU: approximate must be 'none' or 'tanh', got '", options.approximate(), "'");
}

Tensor GELUImpl::forward(const Tensor& input) {
  return gelu(input, options.approximate());
}

std::string GELUImpl::extra_repr() const {
  return "approximate='" + options.approximate() + "'";
}

SoftplusImpl::SoftplusImpl(const SoftplusOptions& options) : Module("Softplus"), options(options) {
  LG_CHECK(options.beta() > 0.0 && std::isfinite(options.beta()),
           "Softplus: expected a finite beta > 0, got ", options.beta());
}

Tensor SoftplusImpl::forward(const Tensor& input) {
  return softplus(input, options.beta(), options.threshold());
}

std::string SoftplusImpl::extra_repr() const {
  return detail::str_cat("beta=", options.beta(), ", threshold=", options.threshold());
}

HardtanhImpl::HardtanhImpl(const HardtanhOptions& options) : Module("Hardtanh"), options(options) {
  LG_CHECK(options.min_val() <= options.max_val(), "Hardtanh: expected min_val <= max_val, got ",
           options.min_val(), " and ", options.max_val());
}

Tensor HardtanhImpl::forward(const Tensor& input) {
  const double lo = options.min_val();
  const double hi = options.max_val();
  return activate(
      input, options.inplace(), [lo, hi](Tensor& x) { hardtanh_(x, lo, hi); },
      [lo, hi](const Tensor& x) { return hardtanh(x, lo, hi); });
}

std::string HardtanhImpl::extra_repr() const {
  return joined(detail::str_cat("min_val=", options.min_val(), ", max_val=", options.max_val()),
                inplace_repr(options.inplace()));
}

ReLU6Impl::ReLU6Impl(const ReLU6Options& options) : Module("ReLU6"), options(options) {}

Tensor ReLU6Impl::forward(const Tensor& input) {
  return activate(
      input, options.inplace(), [](Tensor& x) { relu6_(x); },
      [](const Tensor& x) { return relu6(x); });
}

std::string ReLU6Impl::extra_repr() const {
  return inplace_repr(options.inplace());
}

Tensor HardswishImpl::forward(const Tensor& input) {
  return hardswish(input);
}

Tensor HardsigmoidImpl::forward(const Tensor& input) {
  return hardsigmoid(input);
}

Tensor LogSigmoidImpl::forward(const Tensor& input) {
  return log_sigmoid(input);
}

Tensor SoftsignImpl::forward(const Tensor& input) {
  return softsign(input);
}

Tensor TanhshrinkImpl::forward(const Tensor& input) {
  return tanhshrink(input);
}

CELUImpl::CELUImpl(const CELUOptions& options) : Module("CELU"), options(options) {
  LG_CHECK(options.alpha() != 0.0 && std::isfinite(options.alpha()),
           "CELU: expected a finite alpha != 0, got ", options.alpha());
}

Tensor CELUImpl::forward(const Tensor& input) {
  return celu(input, options.alpha());
}

std::string CELUImpl::extra_repr() const {
  return detail::str_cat("alpha=", options.alpha());
}

SoftshrinkImpl::SoftshrinkImpl(const SoftshrinkOptions& options)
    : Module("Softshrink"), options(options) {
  LG_CHECK(options.lambda() >= 0.0, "Softshrink: expected lambda >= 0, got ", options.lambda());
}

Tensor SoftshrinkImpl::forward(const Tensor& input) {
  return softshrink(input, options.lambda());
}

std::string SoftshrinkImpl::extra_repr() const {
  return detail::str_cat(options.lambda());
}

HardshrinkImpl::HardshrinkImpl(const HardshrinkOptions& options)
    : Module("Hardshrink"), options(options) {}

Tensor HardshrinkImpl::forward(const Tensor& input) {
  return hardshrink(input, options.lambda());
}

std::string HardshrinkImpl::extra_repr() const {
  return detail::str_cat(options.lambda());
}

ThresholdImpl::ThresholdImpl(const ThresholdOptions& options)
    : Module("Threshold"), options(options) {}

Tensor ThresholdImpl::forward(const Tensor& input) {
  return threshold(input, options.threshold(), options.value());
}

std::string ThresholdImpl::extra_repr() const {
  return detail::str_cat("threshold=", options.threshold(), ", value=", options.value());
}

PReLUImpl::PReLUImpl(const PReLUOptions& options) : Module("PReLU"), options(options) {
  LG_CHECK_SHAPE(options.num_parameters() > 0, "PReLU: expected num_parameters > 0, got ",
                 options.num_parameters());
  weight = register_parameter("weight", full({options.num_parameters()}, options.init()));
}

void PReLUImpl::reset_parameters() {
  NoGradGuard no_grad;
  weight.fill_(options.init());
}

Tensor PReLUImpl::forward(const Tensor& input) {
  return prelu(input, weight);
}

std::string PReLUImpl::extra_repr() const {
  return detail::str_cat("num_parameters=", options.num_parameters());
}

GLUImpl::GLUImpl(const GLUOptions& options) : Module("GLU"), options(options) {}

Tensor GLUImpl::forward(const Tensor& input) {
  return glu(input, options.dim());
}

std::string GLUImpl::extra_repr() const {
  return detail::str_cat("dim=", options.dim());
}

}  // namespace leangrad::nn
