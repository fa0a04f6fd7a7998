// CrossEntropyLoss, MSELoss and L1Loss (nn/loss.h).
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

Tensor CrossEntropyLossImpl::forward(const Tensor& input, const Tensor& target) {
  return cross_entropy(input, target, options.reduction(), options.ignore_index());
}
std::string CrossEntropyLossImpl::extra_repr() const {
  return detail::str_cat("reduction=", reduction_name(options.reduction()),
                         ", ignore_index=", options.ignore_index());
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
