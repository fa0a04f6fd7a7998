// The loss modules (nn/loss.h).
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

const char* reduction_name(KLDivReduction reduction) {
  switch (reduction) {
    case KLDivReduction::None:
      return "none";
    case KLDivReduction::BatchMean:
      return "batchmean";
    case KLDivReduction::Sum:
      return "sum";
    case KLDivReduction::Mean:
      return "mean";
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

BCELossImpl::BCELossImpl(const BCELossOptions& options) : Module("BCELoss"), options(options) {
  weight = register_class_weight(*this, options.weight());
}
Tensor BCELossImpl::forward(const Tensor& input, const Tensor& target) {
  return binary_cross_entropy(input, target, options.reduction(), weight);
}
std::string BCELossImpl::extra_repr() const {
  std::string repr = detail::str_cat("reduction=", reduction_name(options.reduction()));
  if (weight.defined()) repr += detail::str_cat(", weight=", weight.shape());
  return repr;
}

BCEWithLogitsLossImpl::BCEWithLogitsLossImpl(const BCEWithLogitsLossOptions& options)
    : Module("BCEWithLogitsLoss"), options(options) {
  weight = register_class_weight(*this, options.weight());
  if (options.pos_weight().defined())
    pos_weight = register_buffer("pos_weight", options.pos_weight());
}
Tensor BCEWithLogitsLossImpl::forward(const Tensor& input, const Tensor& target) {
  return binary_cross_entropy_with_logits(input, target, options.reduction(), weight, pos_weight);
}
std::string BCEWithLogitsLossImpl::extra_repr() const {
  std::string repr = detail::str_cat("reduction=", reduction_name(options.reduction()));
  if (weight.defined()) repr += detail::str_cat(", weight=", weight.shape());
  if (pos_weight.defined()) repr += detail::str_cat(", pos_weight=", pos_weight.shape());
  return repr;
}

SmoothL1LossImpl::SmoothL1LossImpl(const SmoothL1LossOptions& options)
    : Module("SmoothL1Loss"), options(options) {
  LG_CHECK(options.beta() >= 0.0, "SmoothL1Loss: beta must be >= 0, got ", options.beta());
}
Tensor SmoothL1LossImpl::forward(const Tensor& input, const Tensor& target) {
  return smooth_l1_loss(input, target, options.reduction(), options.beta());
}
std::string SmoothL1LossImpl::extra_repr() const {
  return detail::str_cat("reduction=", reduction_name(options.reduction()),
                         ", beta=", options.beta());
}

HuberLossImpl::HuberLossImpl(const HuberLossOptions& options)
    : Module("HuberLoss"), options(options) {
  LG_CHECK(options.delta() > 0.0, "HuberLoss: delta must be > 0, got ", options.delta());
}
Tensor HuberLossImpl::forward(const Tensor& input, const Tensor& target) {
  return huber_loss(input, target, options.reduction(), options.delta());
}
std::string HuberLossImpl::extra_repr() const {
  return detail::str_cat("reduction=", reduction_name(options.reduction()),
                         ", delta=", options.delta());
}

Tensor KLDivLossImpl::forward(const Tensor& input, const Tensor& target) {
  return kl_div(input, target, options.reduction(), options.log_target());
}
std::string KLDivLossImpl::extra_repr() const {
  return detail::str_cat("reduction=", reduction_name(options.reduction()),
                         ", log_target=", options.log_target() ? "true" : "false");
}

Tensor PoissonNLLLossImpl::forward(const Tensor& input, const Tensor& target) {
  return poisson_nll_loss(input, target, options.log_input(), options.full(), options.eps(),
                          options.reduction());
}
std::string PoissonNLLLossImpl::extra_repr() const {
  return detail::str_cat("reduction=", reduction_name(options.reduction()),
                         ", log_input=", options.log_input() ? "true" : "false",
                         ", full=", options.full() ? "true" : "false", ", eps=", options.eps());
}

Tensor GaussianNLLLossImpl::forward(const Tensor& input, const Tensor& target, const Tensor& var) {
  return gaussian_nll_loss(input, target, var, options.full(), options.eps(), options.reduction());
}
std::string GaussianNLLLossImpl::extra_repr() const {
  return detail::str_cat("reduction=", reduction_name(options.reduction()),
                         ", full=", options.full() ? "true" : "false", ", eps=", options.eps());
}

Tensor MarginRankingLossImpl::forward(const Tensor& input1, const Tensor& input2,
                                      const Tensor& target) {
  return margin_ranking_loss(input1, input2, target, options.margin(), options.reduction());
}
std::string MarginRankingLossImpl::extra_repr() const {
  return detail::str_cat("reduction=", reduction_name(options.reduction()),
                         ", margin=", options.margin());
}

Tensor HingeEmbeddingLossImpl::forward(const Tensor& input, const Tensor& target) {
  return hinge_embedding_loss(input, target, options.margin(), options.reduction());
}
std::string HingeEmbeddingLossImpl::extra_repr() const {
  return detail::str_cat("reduction=", reduction_name(options.reduction()),
                         ", margin=", options.margin());
}

Tensor SoftMarginLossImpl::forward(const Tensor& input, const Tensor& target) {
  return soft_margin_loss(input, target, options.reduction());
}
std::string SoftMarginLossImpl::extra_repr() const {
  return detail::str_cat("reduction=", reduction_name(options.reduction()));
}

MultiLabelSoftMarginLossImpl::MultiLabelSoftMarginLossImpl(
    const MultiLabelSoftMarginLossOptions& options)
    : Module("MultiLabelSoftMarginLoss"), options(options) {
  weight = register_class_weight(*this, options.weight());
}
Tensor MultiLabelSoftMarginLossImpl::forward(const Tensor& input, const Tensor& target) {
  return multilabel_soft_margin_loss(input, target, weight, options.reduction());
}
std::string MultiLabelSoftMarginLossImpl::extra_repr() const {
  std::string repr = detail::str_cat("reduction=", reduction_name(options.reduction()));
  if (weight.defined()) repr += detail::str_cat(", weight=", weight.shape());
  return repr;
}

Tensor CosineEmbeddingLossImpl::forward(const Tensor& input1, const Tensor& input2,
                                        const Tensor& target) {
  return cosine_embedding_loss(input1, input2, target, options.margin(), options.reduction());
}
std::string CosineEmbeddingLossImpl::extra_repr() const {
  return detail::str_cat("reduction=", reduction_name(options.reduction()),
                         ", margin=", options.margin());
}

TripletMarginLossImpl::TripletMarginLossImpl(const TripletMarginLossOptions& options)
    : Module("TripletMarginLoss"), options(options) {
  LG_CHECK(options.p() >= 1.0, "TripletMarginLoss: p must be >= 1 (or infinity), got ",
           options.p());
}
Tensor TripletMarginLossImpl::forward(const Tensor& anchor, const Tensor& positive,
                                      const Tensor& negative) {
  return triplet_margin_loss(anchor, positive, negative, options.margin(), options.p(),
                             options.eps(), options.swap(), options.reduction());
}
std::string TripletMarginLossImpl::extra_repr() const {
  return detail::str_cat("reduction=", reduction_name(options.reduction()),
                         ", margin=", options.margin(), ", p=", options.p(),
                         ", eps=", options.eps(), ", swap=", options.swap() ? "true" : "false");
}

MultiMarginLossImpl::MultiMarginLossImpl(const MultiMarginLossOptions& options)
    : Module("MultiMarginLoss"), options(options) {
  LG_CHECK(options.p() == 1 || options.p() == 2, "MultiMarginLoss: p must be 1 or 2, got ",
           options.p());
  weight = register_class_weight(*this, options.weight());
}
Tensor MultiMarginLossImpl::forward(const Tensor& input, const Tensor& target) {
  return multi_margin_loss(input, target, options.p(), options.margin(), weight,
                           options.reduction());
}
std::string MultiMarginLossImpl::extra_repr() const {
  std::string repr = detail::str_cat("p=", options.p(), ", margin=", options.margin(),
                                     ", reduction=", reduction_name(options.reduction()));
  if (weight.defined()) repr += detail::str_cat(", weight=", weight.shape());
  return repr;
}

Tensor MultiLabelMarginLossImpl::forward(const Tensor& input, const Tensor& target) {
  return multilabel_margin_loss(input, target, options.reduction());
}
std::string MultiLabelMarginLossImpl::extra_repr() const {
  return detail::str_cat("reduction=", reduction_name(options.reduction()));
}

TripletMarginWithDistanceLossImpl::TripletMarginWithDistanceLossImpl(
    const TripletMarginWithDistanceLossOptions& options)
    : Module("TripletMarginWithDistanceLoss"), options(options) {
  LG_CHECK(options.margin() > 0.0,
           "TripletMarginWithDistanceLoss: margin must be greater than 0, got ", options.margin());
}
Tensor TripletMarginWithDistanceLossImpl::forward(const Tensor& anchor, const Tensor& positive,
                                                  const Tensor& negative) {
  return triplet_margin_with_distance_loss(anchor, positive, negative, options.distance_function(),
                                           options.margin(), options.swap(), options.reduction());
}
std::string TripletMarginWithDistanceLossImpl::extra_repr() const {
  return detail::str_cat("margin=", options.margin(), ", swap=", options.swap() ? "true" : "false",
                         ", reduction=", reduction_name(options.reduction()));
}

CTCLossImpl::CTCLossImpl(const CTCLossOptions& options) : Module("CTCLoss"), options(options) {
  LG_CHECK(options.blank() >= 0, "CTCLoss: expected a blank index >= 0, got ", options.blank());
}
Tensor CTCLossImpl::forward(const Tensor& log_probs, const Tensor& targets,
                            const Tensor& input_lengths, const Tensor& target_lengths) {
  return ctc_loss(log_probs, targets, input_lengths, target_lengths, options.blank(),
                  options.reduction(), options.zero_infinity());
}
std::string CTCLossImpl::extra_repr() const {
  return detail::str_cat("blank=", options.blank(),
                         ", reduction=", reduction_name(options.reduction()),
                         ", zero_infinity=", options.zero_infinity() ? "true" : "false");
}

}  // namespace leangrad::nn
