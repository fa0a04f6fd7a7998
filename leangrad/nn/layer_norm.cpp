// nn::LayerNorm (nn/layer_norm.h).
#include <leangrad/nn/layer_norm.h>

#include <sstream>

#include <leangrad/autograd/grad_mode.h>
#include <leangrad/autograd/nn_functions.h>
#include <leangrad/core/error.h>
#include <leangrad/kernels/creation.h>

namespace leangrad::nn {

LayerNormImpl::LayerNormImpl(const LayerNormOptions& options)
    : Module("LayerNorm"), options_(options) {
  const Shape& shape = options.normalized_shape();
  bool valid = !shape.empty();
  for (std::int64_t d : shape)
    valid = valid && d > 0;
  LG_CHECK_SHAPE(valid, "LayerNorm: expected a non-empty normalized_shape of positive sizes, got ",
                 shape);
  if (options.elementwise_affine()) {
    weight = register_parameter("weight", ones(shape));
    bias = register_parameter("bias", zeros(shape));
  }
}

void LayerNormImpl::reset_parameters() {
  if (!weight.defined()) return;
  const NoGradGuard no_grad;
  weight.fill_(1.0);
  bias.zero_();
}

Tensor LayerNormImpl::forward(const Tensor& input) {
  return layer_norm(input, options_.normalized_shape(), weight, bias, options_.eps());
}

std::string LayerNormImpl::extra_repr() const {
  std::ostringstream out;
  out << options_.normalized_shape() << ", eps=" << options_.eps()
      << ", elementwise_affine=" << (options_.elementwise_affine() ? "true" : "false");
  return out.str();
}

}  // namespace leangrad::nn
