// nn::Linear (nn/linear.h).
#include <leangrad/nn/linear.h>

#include <cmath>
#include <sstream>

#include <leangrad/autograd/nn_functions.h>
#include <leangrad/core/creation.h>
#include <leangrad/core/generator.h>
#include <leangrad/kernels/ops.h>

namespace leangrad::nn {

LinearImpl::LinearImpl(std::int64_t in_features, std::int64_t out_features)
    : LinearImpl(LinearOptions(in_features, out_features)) {}

LinearImpl::LinearImpl(const LinearOptions& opts) : Module("Linear"), options(opts) {
  LG_CHECK(opts.in_features() >= 0 && opts.out_features() >= 0,
           "Linear: expected non-negative in_features and out_features, got ", opts.in_features(),
           " and ", opts.out_features());
  weight = register_parameter("weight", empty({opts.out_features(), opts.in_features()}));
  if (opts.bias()) bias = register_parameter("bias", empty({opts.out_features()}));
  reset_parameters();
}

void LinearImpl::reset_parameters() {
  // kaiming_uniform(a = sqrt(5)): gain = sqrt(2 / (1 + a^2)) = sqrt(1/3), bound = gain *
  // sqrt(3 / fan_in) = 1 / sqrt(fan_in). A fan_in of 0 leaves the weight empty, and its bias
  // (out_features values, which the output then is) 0, PyTorch's bound there.
  const std::int64_t fan_in = options.in_features();
  if (fan_in == 0) {
    if (bias.defined()) ops::fill_(bias, 0.0);
    return;
  }
  const double bound = 1.0 / std::sqrt(static_cast<double>(fan_in));
  Generator& gen = default_generator(Device::cpu());
  ops::uniform_(weight, -bound, bound, gen);
  if (bias.defined()) ops::uniform_(bias, -bound, bound, gen);
}

Tensor LinearImpl::forward(const Tensor& input) {
  return linear(input, weight, bias);
}

std::string LinearImpl::extra_repr() const {
  std::ostringstream out;
  out << "in_features=" << options.in_features() << ", out_features=" << options.out_features()
      << ", bias=" << (options.bias() ? "true" : "false");
  return out.str();
}

}  // namespace leangrad::nn
