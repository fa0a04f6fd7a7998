// CrossEntropyLoss, NLLLoss, MSELoss and L1Loss (nn/loss.h).
#include <leangrad/nn/loss.h>

#include <leangrad/core/error.h>

namespace leangrad::nn {

const char* reduction_name(Reduction reduction) {
  switch (reduction) {
    case Reduction::None:
      return "none";
    case Reduction::Mean:
      return "mean";
    case Reduction::Sum:
      return "sum";
  }
  return "?";
}

namespace {

// The options' class weight as the buffer "weight", when there is one.
Tensor register_class_weight(Module& module, const Tensor& weight) {
  return weight.defined() ? module.register_buffer("weight", weight) : Tensor();
}

// "reduction=mean, ignore_index=-100" and ", weight=(C,)" when there is a weight.
std::string class_loss_repr(Reduction reduction, std::int64_t ignore_index, const Tensor& weight) {
  std::string repr =
      detail::str_cat("reduction=", reduction_name(reduction), ", ignore_index=", ignore_index);
  if (weight.defined()) repr += detail::str_cat(", weight=", weight.shape());
  return repr;
}

}  // namespace

CrossEntropyLossImpl::CrossEntropyLossImpl(const CrossEntropyLossOptions& options)
    : Module("CrossEntropyLoss"), options(options) {
  weight = register_class_weight(*this, options.weight());
}
Tensor CrossEntropyLossImpl::forward(const Tensor& input, const Tensor& target) {
  return cross_entropy(input, target, options.reduction(), options.ignore_index(), weight,
                       options.label_smoothing());
}
std::string CrossEntropyLossImpl::extra_repr() const {
  std::string repr = class_loss_repr(options.reduction(), options.ignore_index(), weight);
  if (options.label_smoothing() != 0.0)
    repr += detail::str_cat(", label_smoothing=", options.label_smoothing());
  return repr;
}

NLLLossImpl::NLLLossImpl(const NLLLossOptions& options) : Module("NLLLoss"), options(options) {
  weight = register_class_weight(*this, options.weight());
}
Tensor NLLLossImpl::forward(const Tensor& input, const Tensor& target) {
  return nll_loss(input, target, options.reduction(), options.ignore_index(), weight);
}
std::string NLLLossImpl::extra_repr() const {
  return class_loss_repr(options.reduction(), options.ignore_index(), weight);
}

Tensor MSELossImpl::forward(const Tensor& input, const Tensor& target) {
  return mse_loss(input, target, options.reduction());
}
std::string MSELossImpl::extra_repr() const {
  return detail::str_cat("reduction=", reduction_name(options.reduction()));
}

Tensor L1LossImpl::forward(const Tensor& input, const Tensor& target) {
  return l1_loss(input, target, options.reduction());
}
std::string L1LossImpl::extra_repr() const {
  return detail::str_cat("reduction=", reduction_name(options.reduction()));
}

}  // namespace leangrad::nn
