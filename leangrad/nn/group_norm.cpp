// The normalization modules of nn/group_norm.h.
#include <leangrad/nn/group_norm.h>

#include <sstream>

#include <leangrad/autograd/nn_functions.h>
#include <leangrad/core/error.h>
#include <leangrad/kernels/creation.h>

namespace leangrad::nn {

GroupNormImpl::GroupNormImpl(const GroupNormOptions& options)
    : Module("GroupNorm"), options_(options) {
  LG_CHECK(options.num_groups() > 0 && options.num_channels() >= 0 &&
               options.num_channels() % options.num_groups() == 0,
           "GroupNorm: num_groups (", options.num_groups(),
           ") must be positive and divide num_channels (", options.num_channels(), ")");
  if (options.affine()) {
    weight = register_parameter("weight", ones({options.num_channels()}));
    bias = register_parameter("bias", zeros({options.num_channels()}));
  }
}

Tensor GroupNormImpl::forward(const Tensor& input) {
  return group_norm(input, options_.num_groups(), weight, bias, options_.eps());
}

std::string GroupNormImpl::extra_repr() const {
  std::ostringstream out;
  out << options_.num_groups() << ", " << options_.num_channels() << ", eps=" << options_.eps()
      << ", affine=" << (options_.affine() ? "true" : "false");
  return out.str();
}

}  // namespace leangrad::nn
