// Loss modules: CrossEntropyLoss, NLLLoss, MSELoss, L1Loss, BCELoss, BCEWithLogitsLoss,
// SmoothL1Loss, HuberLoss, KLDivLoss, PoissonNLLLoss, GaussianNLLLoss, MarginRankingLoss,
// HingeEmbeddingLoss, SoftMarginLoss, MultiLabelSoftMarginLoss, CosineEmbeddingLoss,
// TripletMarginLoss, MultiMarginLoss, MultiLabelMarginLoss, TripletMarginWithDistanceLoss,
// CTCLoss. Unlike
// the single-input modules, their forward takes (input, target), as in LibTorch:
//   nn::CrossEntropyLoss loss(nn::CrossEntropyLossOptions().ignore_index(0).label_smoothing(0.1));
//   Tensor l = loss(logits, target);  // logits (N, C), target (N,) int64 or probabilities (N, C)
// Every rank of leangrad::cross_entropy works: (N, C, H, W) logits with (N, H, W) class indices,
// unbatched (C) with a 0-d index.
// A class weight given in the options is the module's buffer "weight" (state_dict holds it and
// to() moves it), as LibTorch's; so are BCELoss's weight and BCEWithLogitsLoss's weight and
// pos_weight, and MultiLabelSoftMarginLoss's weight.
#pragma once

#include <cstdint>
#include <string>

#include <leangrad/autograd/ctc_loss.h>
#include <leangrad/autograd/losses.h>
#include <leangrad/autograd/margin_losses.h>
#include <leangrad/autograd/nn_functions.h>
#include <leangrad/core/macros.h>
#include <leangrad/nn/any_module.h>
#include <leangrad/nn/module_holder.h>

namespace leangrad::nn {

// The arguments of leangrad::cross_entropy (autograd/nn_functions.h).
class CrossEntropyLossOptions {
  LG_ARG(Tensor, weight);  // (C,), or undefined: every class weighs 1
  LG_ARG(std::int64_t, ignore_index) = -100;
  LG_ARG(Reduction, reduction) = Reduction::Mean;
  LG_ARG(double, label_smoothing) = 0.0;
};

// The arguments of leangrad::nll_loss.
class NLLLossOptions {
  LG_ARG(Tensor, weight);  // (C,), or undefined: every class weighs 1
  LG_ARG(std::int64_t, ignore_index) = -100;
  LG_ARG(Reduction, reduction) = Reduction::Mean;
};

// Options of the elementwise losses (MSELoss, L1Loss).
class LossOptions {
  LG_ARG(Reduction, reduction) = Reduction::Mean;
};
using MSELossOptions = LossOptions;
using L1LossOptions = LossOptions;
using SoftMarginLossOptions = LossOptions;

// "mean", "sum" or "none".
const char* reduction_name(Reduction reduction);

class CrossEntropyLossImpl : public Module {
 public:
  explicit CrossEntropyLossImpl(const CrossEntropyLossOptions& options = {});
  using Module::forward;  // the single-input form throws: a loss needs a target
  // The holder calls it: loss(input, target).
  Tensor forward(const Tensor& input, const Tensor& target);
  using ForwardSignature = Tensor(const Tensor&, const Tensor&);
  // "reduction=mean, ignore_index=-100", then weight's shape and label_smoothing when given.
  std::string extra_repr() const override;
  CrossEntropyLossOptions options;
  Tensor weight;  // the buffer "weight" (options.weight()); undefined without one
};
LEANGRAD_MODULE(CrossEntropyLoss);

class NLLLossImpl : public Module {
 public:
  explicit NLLLossImpl(const NLLLossOptions& options = {});
  using Module::forward;
  Tensor forward(const Tensor& input, const Tensor& target);
  using ForwardSignature = Tensor(const Tensor&, const Tensor&);
  std::string extra_repr() const override;
  NLLLossOptions options;
  Tensor weight;  // the buffer "weight" (options.weight()); undefined without one
};
LEANGRAD_MODULE(NLLLoss);

class MSELossImpl : public Module {
 public:
  explicit MSELossImpl(const MSELossOptions& options = {}) : Module("MSELoss"), options(options) {}
  using Module::forward;
  Tensor forward(const Tensor& input, const Tensor& target);
  using ForwardSignature = Tensor(const Tensor&, const Tensor&);
  std::string extra_repr() const override;
  MSELossOptions options;
};
LEANGRAD_MODULE(MSELoss);

class L1LossImpl : public Module {
 public:
  explicit L1LossImpl(const L1LossOptions& options = {}) : Module("L1Loss"), options(options) {}
  using Module::forward;
  Tensor forward(const Tensor& input, const Tensor& target);
  using ForwardSignature = Tensor(const Tensor&, const Tensor&);
  std::string extra_repr() const override;
  L1LossOptions options;
};
LEANGRAD_MODULE(L1Loss);

// The arguments of leangrad::binary_cross_entropy (autograd/losses.h).
class BCELossOptions {
  LG_ARG(Tensor, weight);  // broadcastable to the input, or undefined
  LG_ARG(Reduction, reduction) = Reduction::Mean;
};

// The arguments of leangrad::binary_cross_entropy_with_logits.
class BCEWithLogitsLossOptions {
  LG_ARG(Tensor, weight);  // broadcastable to the input, or undefined
  LG_ARG(Reduction, reduction) = Reduction::Mean;
  LG_ARG(Tensor, pos_weight);  // the positive term's weight, usually (C,), or undefined
};

class SmoothL1LossOptions {
  LG_ARG(Reduction, reduction) = Reduction::Mean;
  LG_ARG(double, beta) = 1.0;
};

class HuberLossOptions {
  LG_ARG(Reduction, reduction) = Reduction::Mean;
  LG_ARG(double, delta) = 1.0;
};

class BCELossImpl : public Module {
 public:
  explicit BCELossImpl(const BCELossOptions& options = {});
  using Module::forward;
  Tensor forward(const Tensor& input, const Tensor& target);
  using ForwardSignature = Tensor(const Tensor&, const Tensor&);
  std::string extra_repr() const override;
  BCELossOptions options;
  Tensor weight;  // the buffer "weight" (options.weight()); undefined without one
};
LEANGRAD_MODULE(BCELoss);

class BCEWithLogitsLossImpl : public Module {
 public:
  explicit BCEWithLogitsLossImpl(const BCEWithLogitsLossOptions& options = {});
  using Module::forward;
  Tensor forward(const Tensor& input, const Tensor& target);
  using ForwardSignature = Tensor(const Tensor&, const Tensor&);
  std::string extra_repr() const override;
  BCEWithLogitsLossOptions options;
  Tensor weight;      // the buffer "weight"; undefined without one
  Tensor pos_weight;  // the buffer "pos_weight"; undefined without one
};
LEANGRAD_MODULE(BCEWithLogitsLoss);

class SmoothL1LossImpl : public Module {
 public:
  explicit SmoothL1LossImpl(const SmoothL1LossOptions& options = {});
  using Module::forward;
  Tensor forward(const Tensor& input, const Tensor& target);
  using ForwardSignature = Tensor(const Tensor&, const Tensor&);
  std::string extra_repr() const override;
  SmoothL1LossOptions options;
};
LEANGRAD_MODULE(SmoothL1Loss);

class HuberLossImpl : public Module {
 public:
  explicit HuberLossImpl(const HuberLossOptions& options = {});
  using Module::forward;
  Tensor forward(const Tensor& input, const Tensor& target);
  using ForwardSignature = Tensor(const Tensor&, const Tensor&);
  std::string extra_repr() const override;
  HuberLossOptions options;
};
LEANGRAD_MODULE(HuberLoss);

// The arguments of leangrad::kl_div (autograd/losses.h).
class KLDivLossOptions {
  LG_ARG(KLDivReduction, reduction) = KLDivReduction::Mean;
  LG_ARG(bool, log_target) = false;
};

// The arguments of leangrad::poisson_nll_loss.
class PoissonNLLLossOptions {
  LG_ARG(bool, log_input) = true;
  LG_ARG(bool, full) = false;
  LG_ARG(double, eps) = 1e-8;
  LG_ARG(Reduction, reduction) = Reduction::Mean;
};

// The arguments of leangrad::gaussian_nll_loss.
class GaussianNLLLossOptions {
  LG_ARG(bool, full) = false;
  LG_ARG(double, eps) = 1e-6;
  LG_ARG(Reduction, reduction) = Reduction::Mean;
};

// "none", "batchmean", "sum" or "mean".
const char* reduction_name(KLDivReduction reduction);

class KLDivLossImpl : public Module {
 public:
  explicit KLDivLossImpl(const KLDivLossOptions& options = {})
      : Module("KLDivLoss"), options(options) {}
  using Module::forward;
  Tensor forward(const Tensor& input, const Tensor& target);
  using ForwardSignature = Tensor(const Tensor&, const Tensor&);
  std::string extra_repr() const override;  // "reduction=batchmean, log_target=false"
  KLDivLossOptions options;
};
LEANGRAD_MODULE(KLDivLoss);

class PoissonNLLLossImpl : public Module {
 public:
  explicit PoissonNLLLossImpl(const PoissonNLLLossOptions& options = {})
      : Module("PoissonNLLLoss"), options(options) {}
  using Module::forward;
  Tensor forward(const Tensor& input, const Tensor& target);
  using ForwardSignature = Tensor(const Tensor&, const Tensor&);
  std::string extra_repr()
      const override;  // "reduction=mean, log_input=true, full=false, eps=1e-08"
  PoissonNLLLossOptions options;
};
LEANGRAD_MODULE(PoissonNLLLoss);

class GaussianNLLLossImpl : public Module {
 public:
  explicit GaussianNLLLossImpl(const GaussianNLLLossOptions& options = {})
      : Module("GaussianNLLLoss"), options(options) {}
  using Module::forward;
  // loss(input, target, var), as LibTorch's.
  Tensor forward(const Tensor& input, const Tensor& target, const Tensor& var);
  using ForwardSignature = Tensor(const Tensor&, const Tensor&, const Tensor&);
  std::string extra_repr() const override;  // "reduction=mean, full=false, eps=1e-06"
  GaussianNLLLossOptions options;
};
LEANGRAD_MODULE(GaussianNLLLoss);

// The arguments of leangrad::margin_ranking_loss (autograd/margin_losses.h).
class MarginRankingLossOptions {
  LG_ARG(double, margin) = 0.0;
  LG_ARG(Reduction, reduction) = Reduction::Mean;
};

// The arguments of leangrad::hinge_embedding_loss.
class HingeEmbeddingLossOptions {
  LG_ARG(double, margin) = 1.0;
  LG_ARG(Reduction, reduction) = Reduction::Mean;
};

// The arguments of leangrad::multilabel_soft_margin_loss.
class MultiLabelSoftMarginLossOptions {
  LG_ARG(Tensor, weight);  // broadcastable to the input, usually (C,), or undefined
  LG_ARG(Reduction, reduction) = Reduction::Mean;
};

class MarginRankingLossImpl : public Module {
 public:
  explicit MarginRankingLossImpl(const MarginRankingLossOptions& options = {})
      : Module("MarginRankingLoss"), options(options) {}
  using Module::forward;
  // loss(input1, input2, target), as LibTorch's.
  Tensor forward(const Tensor& input1, const Tensor& input2, const Tensor& target);
  using ForwardSignature = Tensor(const Tensor&, const Tensor&, const Tensor&);
  std::string extra_repr() const override;  // "reduction=mean, margin=0"
  MarginRankingLossOptions options;
};
LEANGRAD_MODULE(MarginRankingLoss);

class HingeEmbeddingLossImpl : public Module {
 public:
  explicit HingeEmbeddingLossImpl(const HingeEmbeddingLossOptions& options = {})
      : Module("HingeEmbeddingLoss"), options(options) {}
  using Module::forward;
  Tensor forward(const Tensor& input, const Tensor& target);
  using ForwardSignature = Tensor(const Tensor&, const Tensor&);
  std::string extra_repr() const override;  // "reduction=mean, margin=1"
  HingeEmbeddingLossOptions options;
};
LEANGRAD_MODULE(HingeEmbeddingLoss);

class SoftMarginLossImpl : public Module {
 public:
  explicit SoftMarginLossImpl(const SoftMarginLossOptions& options = {})
      : Module("SoftMarginLoss"), options(options) {}
  using Module::forward;
  Tensor forward(const Tensor& input, const Tensor& target);
  using ForwardSignature = Tensor(const Tensor&, const Tensor&);
  std::string extra_repr() const override;
  SoftMarginLossOptions options;
};
LEANGRAD_MODULE(SoftMarginLoss);

class MultiLabelSoftMarginLossImpl : public Module {
 public:
  explicit MultiLabelSoftMarginLossImpl(const MultiLabelSoftMarginLossOptions& options = {});
  using Module::forward;
  Tensor forward(const Tensor& input, const Tensor& target);
  using ForwardSignature = Tensor(const Tensor&, const Tensor&);
  std::string extra_repr() const override;  // "reduction=mean", then weight's shape if given
  MultiLabelSoftMarginLossOptions options;
  Tensor weight;  // the buffer "weight" (options.weight()); undefined without one
};
LEANGRAD_MODULE(MultiLabelSoftMarginLoss);

// The arguments of leangrad::cosine_embedding_loss.
class CosineEmbeddingLossOptions {
  LG_ARG(double, margin) = 0.0;
  LG_ARG(Reduction, reduction) = Reduction::Mean;
};

// The arguments of leangrad::triplet_margin_loss.
class TripletMarginLossOptions {
  LG_ARG(double, margin) = 1.0;
  LG_ARG(double, p) = 2.0;
  LG_ARG(double, eps) = 1e-6;
  LG_ARG(bool, swap) = false;
  LG_ARG(Reduction, reduction) = Reduction::Mean;
};

class CosineEmbeddingLossImpl : public Module {
 public:
  explicit CosineEmbeddingLossImpl(const CosineEmbeddingLossOptions& options = {})
      : Module("CosineEmbeddingLoss"), options(options) {}
  using Module::forward;
  // loss(input1, input2, target), as LibTorch's.
  Tensor forward(const Tensor& input1, const Tensor& input2, const Tensor& target);
  using ForwardSignature = Tensor(const Tensor&, const Tensor&, const Tensor&);
  std::string extra_repr() const override;  // "reduction=mean, margin=0"
  CosineEmbeddingLossOptions options;
};
LEANGRAD_MODULE(CosineEmbeddingLoss);

class TripletMarginLossImpl : public Module {
 public:
  explicit TripletMarginLossImpl(const TripletMarginLossOptions& options = {});
  using Module::forward;
  // loss(anchor, positive, negative), as LibTorch's.
  Tensor forward(const Tensor& anchor, const Tensor& positive, const Tensor& negative);
  using ForwardSignature = Tensor(const Tensor&, const Tensor&, const Tensor&);
  // "reduction=mean, margin=1, p=2, eps=1e-06, swap=false"
  std::string extra_repr() const override;
  TripletMarginLossOptions options;
};
LEANGRAD_MODULE(TripletMarginLoss);

// The arguments of leangrad::multi_margin_loss; a weight is the module's buffer "weight".
class MultiMarginLossOptions {
  LG_ARG(std::int64_t, p) = 1;
  LG_ARG(double, margin) = 1.0;
  LG_ARG(Tensor, weight);  // (C,) or undefined
  LG_ARG(Reduction, reduction) = Reduction::Mean;
};

class MultiLabelMarginLossOptions {
  LG_ARG(Reduction, reduction) = Reduction::Mean;
};

// The arguments of leangrad::triplet_margin_with_distance_loss (an empty distance_function:
// pairwise_distance).
class TripletMarginWithDistanceLossOptions {
  LG_ARG(DistanceFunction, distance_function);
  LG_ARG(double, margin) = 1.0;
  LG_ARG(bool, swap) = false;
  LG_ARG(Reduction, reduction) = Reduction::Mean;
};

class MultiMarginLossImpl : public Module {
 public:
  explicit MultiMarginLossImpl(const MultiMarginLossOptions& options = {});
  using Module::forward;
  Tensor forward(const Tensor& input, const Tensor& target);
  using ForwardSignature = Tensor(const Tensor&, const Tensor&);
  std::string extra_repr() const override;  // "p=1, margin=1, reduction=mean"
  MultiMarginLossOptions options;
  Tensor weight;  // the buffer, or undefined
};
LEANGRAD_MODULE(MultiMarginLoss);

class MultiLabelMarginLossImpl : public Module {
 public:
  explicit MultiLabelMarginLossImpl(const MultiLabelMarginLossOptions& options = {})
      : Module("MultiLabelMarginLoss"), options(options) {}
  using Module::forward;
  Tensor forward(const Tensor& input, const Tensor& target);
  using ForwardSignature = Tensor(const Tensor&, const Tensor&);
  std::string extra_repr() const override;  // "reduction=mean"
  MultiLabelMarginLossOptions options;
};
LEANGRAD_MODULE(MultiLabelMarginLoss);

class TripletMarginWithDistanceLossImpl : public Module {
 public:
  explicit TripletMarginWithDistanceLossImpl(
      const TripletMarginWithDistanceLossOptions& options = {});
  using Module::forward;
  Tensor forward(const Tensor& anchor, const Tensor& positive, const Tensor& negative);
  using ForwardSignature = Tensor(const Tensor&, const Tensor&, const Tensor&);
  // "margin=1, swap=false, reduction=mean"
  std::string extra_repr() const override;
  TripletMarginWithDistanceLossOptions options;
};
LEANGRAD_MODULE(TripletMarginWithDistanceLoss);

// The arguments of leangrad::ctc_loss.
class CTCLossOptions {
  LG_ARG(std::int64_t, blank) = 0;
  LG_ARG(Reduction, reduction) = Reduction::Mean;
  LG_ARG(bool, zero_infinity) = false;
};

class CTCLossImpl : public Module {
 public:
  explicit CTCLossImpl(const CTCLossOptions& options = {});
  using Module::forward;
  // loss(log_probs, targets, input_lengths, target_lengths), as LibTorch's.
  Tensor forward(const Tensor& log_probs, const Tensor& targets, const Tensor& input_lengths,
                 const Tensor& target_lengths);
  using ForwardSignature = Tensor(const Tensor&, const Tensor&, const Tensor&, const Tensor&);
  std::string extra_repr() const override;  // "blank=0, reduction=mean, zero_infinity=false"
  CTCLossOptions options;
};
LEANGRAD_MODULE(CTCLoss);

}  // namespace leangrad::nn
