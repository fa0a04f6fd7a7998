// The activation modules of nn/activation.h: each forward is the function of the same name.
#include <leangrad/nn/activation.h>

#include <cmath>

#include <leangrad/autograd/activations.h>
#include <leangrad/autograd/functions.h>
#include <leangrad/autograd/nn_functions.h>
#include <leangrad/core/error.h>

namespace leangrad::nn {

Tensor TanhExpImpl::forward(const Tensor& input) {
  return tanhexp(input);
}

Tensor ReLUImpl::forward(const Tensor& input) {
  return relu(input);
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
  return leaky_relu(input, options.negative_slope());
}

std::string LeakyReLUImpl::extra_repr() const {
  return detail::str_cat("negative_slope=", options.negative_slope());
}

ELUImpl::ELUImpl(const ELUOptions& options) : Module("ELU"), options(options) {}

Tensor ELUImpl::forward(const Tensor& input) {
  return elu(input, options.alpha());
}

std::string ELUImpl::extra_repr() const {
  return detail::str_cat("alpha=", options.alpha());
}

Tensor SELUImpl::forward(const Tensor& input) {
  return selu(input);
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
  return hardtanh(input, options.min_val(), options.max_val());
}

std::string HardtanhImpl::extra_repr() const {
  return detail::str_cat("min_val=", options.min_val(), ", max_val=", options.max_val());
}

Tensor ReLU6Impl::forward(const Tensor& input) {
  return relu6(input);
}

}  // namespace leangrad::nn
