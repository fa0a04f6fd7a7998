// LibTorch's functional options objects: F::Conv2dFuncOptions, F::MaxPool2dFuncOptions,
// F::DropoutFuncOptions, F::SoftmaxFuncOptions, F::CrossEntropyFuncOptions,
// F::InterpolateFuncOptions, ... with the overloads of the nn::functional functions that take
// them, so a LibTorch program's functional calls compile as they are:
//   namespace F = leangrad::nn::functional;
//   x = F::max_pool2d(F::relu(F::conv2d(x, w, F::Conv2dFuncOptions().padding(1))),
//                     F::MaxPool2dFuncOptions(2));
//   x = F::dropout(x, F::DropoutFuncOptions().p(0.2).training(is_training()));
//   loss = F::cross_entropy(logits, target, F::CrossEntropyFuncOptions().label_smoothing(0.1));
// Each overload calls the positional function of the same name (nn/functional.h), which stays.
// As LibTorch, where a module's options hold the same fields the functional ones are aliases of
// them (F::MaxPool2dFuncOptions is nn::MaxPool2dOptions, F::MSELossFuncOptions is
// nn::MSELossOptions); the others are their own classes here, with LibTorch's fields and defaults.
// Reductions and modes take LibTorch's constants (.reduction(kSum), kBatchMean: core/enum_tags.h)
// or leangrad's enums (Reduction::Sum), and conv padding kSame or kValid.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

#include <leangrad/autograd/grid_sample.h>
#include <leangrad/autograd/indexing_functions.h>
#include <leangrad/autograd/nn_functions.h>
#include <leangrad/autograd/reduction_functions.h>
#include <leangrad/autograd/volumetric_functions.h>
#include <leangrad/core/macros.h>
#include <leangrad/core/tensor.h>
#include <leangrad/nn/activation.h>
#include <leangrad/nn/composed_layers.h>
#include <leangrad/nn/distance.h>
#include <leangrad/nn/fold.h>
#include <leangrad/nn/fractional_max_pool.h>
#include <leangrad/nn/functional.h>
#include <leangrad/nn/loss.h>
#include <leangrad/nn/pooling.h>

namespace leangrad::nn::functional {

// ---- Convolutions --------------------------------------------------------------------------
// bias, stride, padding, dilation and groups of F::conv1d/2d/3d; a single number sets every dim,
// and padding may be kValid or kSame (autograd/nn_functions.h's ConvPadding), as LibTorch's.
template <typename Size>
class ConvFuncOptions {
 public:
  ConvFuncOptions& stride(std::int64_t s) { return stride(detail::every_dim<Size>(s)); }
  ConvFuncOptions& padding(std::int64_t p) { return padding(detail::every_dim<Size>(p)); }
  ConvFuncOptions& padding(const Size& p) {
    padding_ = p;
    padding_rule_.reset();
    return *this;
  }
  ConvFuncOptions& padding(ConvPadding rule) {
    padding_ = detail::every_dim<Size>(0);
    padding_rule_ = rule;
    return *this;
  }
  const Size& padding() const { return padding_; }
  // kValid or kSame when padding was given by rule (padding() is then zeros).
  const std::optional<ConvPadding>& padding_rule() const { return padding_rule_; }
  ConvFuncOptions& dilation(std::int64_t d) { return dilation(detail::every_dim<Size>(d)); }
  LG_ARG(Tensor, bias);
  LG_ARG(Size, stride) = detail::every_dim<Size>(1);
  LG_ARG(Size, dilation) = detail::every_dim<Size>(1);
  LG_ARG(std::int64_t, groups) = 1;

 private:
  Size padding_ = detail::every_dim<Size>(0);
  std::optional<ConvPadding> padding_rule_;
};
template <>
class ConvFuncOptions<std::int64_t> {
 public:
  ConvFuncOptions& padding(std::int64_t p) {
    padding_ = p;
    padding_rule_.reset();
    return *this;
  }
  ConvFuncOptions& padding(ConvPadding rule) {
    padding_ = 0;
    padding_rule_ = rule;
    return *this;
  }
  std::int64_t padding() const { return padding_; }
  const std::optional<ConvPadding>& padding_rule() const { return padding_rule_; }
  LG_ARG(Tensor, bias);
  LG_ARG(std::int64_t, stride) = 1;
  LG_ARG(std::int64_t, dilation) = 1;
  LG_ARG(std::int64_t, groups) = 1;

 private:
  std::int64_t padding_ = 0;
  std::optional<ConvPadding> padding_rule_;
};
using Conv1dFuncOptions = ConvFuncOptions<std::int64_t>;
using Conv2dFuncOptions = ConvFuncOptions<Size2>;
using Conv3dFuncOptions = ConvFuncOptions<Size3>;

Tensor conv1d(const Tensor& input, const Tensor& weight, const Conv1dFuncOptions& options);
Tensor conv2d(const Tensor& input, const Tensor& weight, const Conv2dFuncOptions& options);
Tensor conv3d(const Tensor& input, const Tensor& weight, const Conv3dFuncOptions& options);

// bias, stride, padding, output_padding, groups and dilation of F::conv_transpose1d/2d/3d, in
// LibTorch's order and with its defaults; a single number sets every dim.
template <typename Size>
class ConvTransposeFuncOptions {
 public:
  ConvTransposeFuncOptions& stride(std::int64_t s) requires(!std::is_same_v<Size, std::int64_t>) {
    return stride(detail::every_dim<Size>(s));
  }
  ConvTransposeFuncOptions& padding(std::int64_t p) requires(!std::is_same_v<Size, std::int64_t>) {
    return padding(detail::every_dim<Size>(p));
  }
  ConvTransposeFuncOptions& output_padding(std::int64_t p) requires(
      !std::is_same_v<Size, std::int64_t>) {
    return output_padding(detail::every_dim<Size>(p));
  }
  ConvTransposeFuncOptions& dilation(std::int64_t d) requires(!std::is_same_v<Size, std::int64_t>) {
    return dilation(detail::every_dim<Size>(d));
  }
  LG_ARG(Tensor, bias);
  LG_ARG(Size, stride) = detail::every_dim<Size>(1);
  LG_ARG(Size, padding) = detail::every_dim<Size>(0);
  LG_ARG(Size, output_padding) = detail::every_dim<Size>(0);
  LG_ARG(std::int64_t, groups) = 1;
  LG_ARG(Size, dilation) = detail::every_dim<Size>(1);
};
using ConvTranspose1dFuncOptions = ConvTransposeFuncOptions<std::int64_t>;
using ConvTranspose2dFuncOptions = ConvTransposeFuncOptions<Size2>;
using ConvTranspose3dFuncOptions = ConvTransposeFuncOptions<Size3>;

Tensor conv_transpose1d(const Tensor& input, const Tensor& weight,
                        const ConvTranspose1dFuncOptions& options);
Tensor conv_transpose2d(const Tensor& input, const Tensor& weight,
                        const ConvTranspose2dFuncOptions& options);
Tensor conv_transpose3d(const Tensor& input, const Tensor& weight,
                        const ConvTranspose3dFuncOptions& options);

// ---- Pooling (the modules' options) ---------------------------------------------------------
using MaxPool1dFuncOptions = MaxPool1dOptions;
using MaxPool2dFuncOptions = MaxPool2dOptions;
using MaxPool3dFuncOptions = MaxPool3dOptions;
using AvgPool1dFuncOptions = AvgPool1dOptions;
using AvgPool2dFuncOptions = AvgPool2dOptions;
using AvgPool3dFuncOptions = AvgPool3dOptions;
using AdaptiveAvgPool1dFuncOptions = AdaptiveAvgPool1dOptions;
using AdaptiveAvgPool2dFuncOptions = AdaptiveAvgPool2dOptions;
using AdaptiveAvgPool3dFuncOptions = AdaptiveAvgPool3dOptions;
using AdaptiveMaxPool1dFuncOptions = AdaptiveMaxPool1dOptions;
using AdaptiveMaxPool2dFuncOptions = AdaptiveMaxPool2dOptions;
using AdaptiveMaxPool3dFuncOptions = AdaptiveMaxPool3dOptions;
using FractionalMaxPool2dFuncOptions = FractionalMaxPool2dOptions;
using FractionalMaxPool3dFuncOptions = FractionalMaxPool3dOptions;
using LPPool1dFuncOptions = LPPool1dOptions;
using LPPool2dFuncOptions = LPPool2dOptions;

Tensor max_pool1d(const Tensor& input, const MaxPool1dFuncOptions& options);
Tensor max_pool2d(const Tensor& input, const MaxPool2dFuncOptions& options);
Tensor max_pool3d(const Tensor& input, const MaxPool3dFuncOptions& options);
Tensor avg_pool1d(const Tensor& input, const AvgPool1dFuncOptions& options);
Tensor avg_pool2d(const Tensor& input, const AvgPool2dFuncOptions& options);
Tensor avg_pool3d(const Tensor& input, const AvgPool3dFuncOptions& options);
Tensor adaptive_avg_pool1d(const Tensor& input, const AdaptiveAvgPool1dFuncOptions& options);
Tensor adaptive_avg_pool2d(const Tensor& input, const AdaptiveAvgPool2dFuncOptions& options);
Tensor adaptive_avg_pool3d(const Tensor& input, const AdaptiveAvgPool3dFuncOptions& options);
Tensor adaptive_max_pool1d(const Tensor& input, const AdaptiveMaxPool1dFuncOptions& options);
Tensor adaptive_max_pool2d(const Tensor& input, const AdaptiveMaxPool2dFuncOptions& options);
Tensor adaptive_max_pool3d(const Tensor& input, const AdaptiveMaxPool3dFuncOptions& options);
std::tuple<Tensor, Tensor> max_pool1d_with_indices(const Tensor& input,
                                                   const MaxPool1dFuncOptions& options);
std::tuple<Tensor, Tensor> max_pool2d_with_indices(const Tensor& input,
                                                   const MaxPool2dFuncOptions& options);
std::tuple<Tensor, Tensor> max_pool3d_with_indices(const Tensor& input,
                                                   const MaxPool3dFuncOptions& options);
std::tuple<Tensor, Tensor> adaptive_max_pool1d_with_indices(
    const Tensor& input, const AdaptiveMaxPool1dFuncOptions& options);
std::tuple<Tensor, Tensor> adaptive_max_pool2d_with_indices(
    const Tensor& input, const AdaptiveMaxPool2dFuncOptions& options);
std::tuple<Tensor, Tensor> adaptive_max_pool3d_with_indices(
    const Tensor& input, const AdaptiveMaxPool3dFuncOptions& options);
Tensor fractional_max_pool2d(const Tensor& input, const FractionalMaxPool2dFuncOptions& options);
Tensor fractional_max_pool3d(const Tensor& input, const FractionalMaxPool3dFuncOptions& options);
std::tuple<Tensor, Tensor> fractional_max_pool2d_with_indices(
    const Tensor& input, const FractionalMaxPool2dFuncOptions& options);
std::tuple<Tensor, Tensor> fractional_max_pool3d_with_indices(
    const Tensor& input, const FractionalMaxPool3dFuncOptions& options);
Tensor lp_pool1d(const Tensor& input, const LPPool1dFuncOptions& options);
Tensor lp_pool2d(const Tensor& input, const LPPool2dFuncOptions& options);

// kernel_size, stride (the kernel by default), padding and output_size of F::max_unpool1d/2d/3d,
// LibTorch's own class (the module's options have no output_size); a single number sets every
// dim. output_size: the spatial sizes, or (as LibTorch's) the whole shape, whose last sizes are
// taken.
template <typename Size>
class MaxUnpoolFuncOptions {
 public:
  /* implicit */ MaxUnpoolFuncOptions(std::int64_t kernel_size)
      : kernel_size_(detail::every_dim<Size>(kernel_size)),
        stride_(detail::every_dim<Size>(kernel_size)) {}
  /* implicit */ MaxUnpoolFuncOptions(Size kernel_size) requires(
      !std::is_same_v<Size, std::int64_t>)
      : kernel_size_(kernel_size), stride_(kernel_size) {}
  MaxUnpoolFuncOptions& stride(std::int64_t s) requires(!std::is_same_v<Size, std::int64_t>) {
    return stride(detail::every_dim<Size>(s));
  }
  MaxUnpoolFuncOptions& padding(std::int64_t p) requires(!std::is_same_v<Size, std::int64_t>) {
    return padding(detail::every_dim<Size>(p));
  }
  LG_ARG(Size, kernel_size);
  LG_ARG(Size, stride);
  LG_ARG(Size, padding) = detail::every_dim<Size>(0);
  LG_ARG(std::optional<std::vector<std::int64_t>>, output_size) = std::nullopt;
};
using MaxUnpool1dFuncOptions = MaxUnpoolFuncOptions<std::int64_t>;
using MaxUnpool2dFuncOptions = MaxUnpoolFuncOptions<Size2>;
using MaxUnpool3dFuncOptions = MaxUnpoolFuncOptions<Size3>;

Tensor max_unpool1d(const Tensor& input, const Tensor& indices,
                    const MaxUnpool1dFuncOptions& options);
Tensor max_unpool2d(const Tensor& input, const Tensor& indices,
                    const MaxUnpool2dFuncOptions& options);
Tensor max_unpool3d(const Tensor& input, const Tensor& indices,
                    const MaxUnpool3dFuncOptions& options);

// ---- Dropout, softmax ------------------------------------------------------------------------
class DropoutFuncOptions {
  LG_ARG(double, p) = 0.5;
  LG_ARG(bool, training) = true;
  LG_ARG(bool, inplace) = false;
};
Tensor dropout(Tensor input, const DropoutFuncOptions& options);
using Dropout2dFuncOptions = DropoutFuncOptions;
using Dropout3dFuncOptions = DropoutFuncOptions;
Tensor dropout2d(Tensor input, const Dropout2dFuncOptions& options);
Tensor dropout3d(Tensor input, const Dropout3dFuncOptions& options);
// LibTorch's alpha dropouts default to training false, unlike dropout's options.
class AlphaDropoutFuncOptions {
  LG_ARG(double, p) = 0.5;
  LG_ARG(bool, training) = false;
  LG_ARG(bool, inplace) = false;
};
class FeatureAlphaDropoutFuncOptions {
  LG_ARG(double, p) = 0.5;
  LG_ARG(bool, training) = false;
  LG_ARG(bool, inplace) = false;
};
Tensor alpha_dropout(Tensor input, const AlphaDropoutFuncOptions& options);
Tensor feature_alpha_dropout(Tensor input, const FeatureAlphaDropoutFuncOptions& options);

class SoftmaxFuncOptions {
 public:
  /* implicit */ SoftmaxFuncOptions(std::int64_t dim) : dim_(dim) {}
  LG_ARG(std::int64_t, dim);
};
using LogSoftmaxFuncOptions = SoftmaxFuncOptions;
using SoftminFuncOptions = SoftmaxFuncOptions;
Tensor softmax(const Tensor& input, const SoftmaxFuncOptions& options);
Tensor log_softmax(const Tensor& input, const LogSoftmaxFuncOptions& options);
Tensor softmin(const Tensor& input, const SoftminFuncOptions& options);

// F::gumbel_softmax(logits, F::GumbelSoftmaxFuncOptions().tau(0.5).hard(true)): LibTorch's.
class GumbelSoftmaxFuncOptions {
  LG_ARG(double, tau) = 1.0;
  LG_ARG(bool, hard) = false;
  LG_ARG(std::int64_t, dim) = -1;
};
Tensor gumbel_softmax(const Tensor& logits, const GumbelSoftmaxFuncOptions& options);

// ---- Losses (the modules' options) ------------------------------------------------------------
using CrossEntropyFuncOptions = CrossEntropyLossOptions;
using NLLLossFuncOptions = NLLLossOptions;
using MSELossFuncOptions = MSELossOptions;
using L1LossFuncOptions = L1LossOptions;
using SmoothL1LossFuncOptions = SmoothL1LossOptions;
using HuberLossFuncOptions = HuberLossOptions;
using BinaryCrossEntropyFuncOptions = BCELossOptions;
using BinaryCrossEntropyWithLogitsFuncOptions = BCEWithLogitsLossOptions;
using KLDivFuncOptions = KLDivLossOptions;

Tensor cross_entropy(const Tensor& input, const Tensor& target,
                     const CrossEntropyFuncOptions& options);
Tensor nll_loss(const Tensor& input, const Tensor& target, const NLLLossFuncOptions& options);
Tensor mse_loss(const Tensor& input, const Tensor& target, const MSELossFuncOptions& options);
Tensor l1_loss(const Tensor& input, const Tensor& target, const L1LossFuncOptions& options);
Tensor smooth_l1_loss(const Tensor& input, const Tensor& target,
                      const SmoothL1LossFuncOptions& options);
Tensor huber_loss(const Tensor& input, const Tensor& target, const HuberLossFuncOptions& options);
Tensor binary_cross_entropy(const Tensor& input, const Tensor& target,
                            const BinaryCrossEntropyFuncOptions& options);
Tensor binary_cross_entropy_with_logits(const Tensor& input, const Tensor& target,
                                        const BinaryCrossEntropyWithLogitsFuncOptions& options);
Tensor kl_div(const Tensor& input, const Tensor& target, const KLDivFuncOptions& options);

using PoissonNLLLossFuncOptions = PoissonNLLLossOptions;
using MarginRankingLossFuncOptions = MarginRankingLossOptions;
using HingeEmbeddingLossFuncOptions = HingeEmbeddingLossOptions;
using SoftMarginLossFuncOptions = SoftMarginLossOptions;
using MultilabelSoftMarginLossFuncOptions = MultiLabelSoftMarginLossOptions;
using CosineEmbeddingLossFuncOptions = CosineEmbeddingLossOptions;
using TripletMarginLossFuncOptions = TripletMarginLossOptions;
using MultiMarginLossFuncOptions = MultiMarginLossOptions;
using MultilabelMarginLossFuncOptions = MultiLabelMarginLossOptions;
using TripletMarginWithDistanceLossFuncOptions = TripletMarginWithDistanceLossOptions;
using CTCLossFuncOptions = CTCLossOptions;

Tensor poisson_nll_loss(const Tensor& input, const Tensor& target,
                        const PoissonNLLLossFuncOptions& options);
Tensor margin_ranking_loss(const Tensor& input1, const Tensor& input2, const Tensor& target,
                           const MarginRankingLossFuncOptions& options);
Tensor hinge_embedding_loss(const Tensor& input, const Tensor& target,
                            const HingeEmbeddingLossFuncOptions& options);
Tensor soft_margin_loss(const Tensor& input, const Tensor& target,
                        const SoftMarginLossFuncOptions& options);
Tensor multilabel_soft_margin_loss(const Tensor& input, const Tensor& target,
                                   const MultilabelSoftMarginLossFuncOptions& options);
Tensor cosine_embedding_loss(const Tensor& input1, const Tensor& input2, const Tensor& target,
                             const CosineEmbeddingLossFuncOptions& options);
Tensor triplet_margin_loss(const Tensor& anchor, const Tensor& positive, const Tensor& negative,
                           const TripletMarginLossFuncOptions& options);
Tensor multi_margin_loss(const Tensor& input, const Tensor& target,
                         const MultiMarginLossFuncOptions& options);
Tensor multilabel_margin_loss(const Tensor& input, const Tensor& target,
                              const MultilabelMarginLossFuncOptions& options);
Tensor triplet_margin_with_distance_loss(const Tensor& anchor, const Tensor& positive,
                                         const Tensor& negative,
                                         const TripletMarginWithDistanceLossFuncOptions& options);
Tensor ctc_loss(const Tensor& log_probs, const Tensor& targets, const Tensor& input_lengths,
                const Tensor& target_lengths, const CTCLossFuncOptions& options);

// ---- Activations (the modules' options; inplace as the modules do it) -------------------------
using LeakyReLUFuncOptions = LeakyReLUOptions;
using GELUFuncOptions = GELUOptions;
using ELUFuncOptions = ELUOptions;
using HardtanhFuncOptions = HardtanhOptions;
using SoftplusFuncOptions = SoftplusOptions;
using CELUFuncOptions = CELUOptions;

Tensor leaky_relu(Tensor input, const LeakyReLUFuncOptions& options);
Tensor gelu(const Tensor& input, const GELUFuncOptions& options);
Tensor elu(Tensor input, const ELUFuncOptions& options);
Tensor hardtanh(Tensor input, const HardtanhFuncOptions& options);
Tensor softplus(const Tensor& input, const SoftplusFuncOptions& options);
Tensor celu(const Tensor& input, const CELUFuncOptions& options);

using ReLUFuncOptions = ReLUOptions;
using ReLU6FuncOptions = ReLU6Options;
using SELUFuncOptions = SELUOptions;
using GLUFuncOptions = GLUOptions;
using HardshrinkFuncOptions = HardshrinkOptions;
using SoftshrinkFuncOptions = SoftshrinkOptions;
using ThresholdFuncOptions = ThresholdOptions;  // LibTorch's inplace is not there

Tensor relu(Tensor input, const ReLUFuncOptions& options);
Tensor relu6(Tensor input, const ReLU6FuncOptions& options);
Tensor selu(Tensor input, const SELUFuncOptions& options);
Tensor glu(const Tensor& input, const GLUFuncOptions& options);
Tensor hardshrink(const Tensor& input, const HardshrinkFuncOptions& options);
Tensor softshrink(const Tensor& input, const SoftshrinkFuncOptions& options);
Tensor threshold(const Tensor& input, const ThresholdFuncOptions& options);

// LibTorch's own class: rrelu's options with training (false by default) and inplace (an Error,
// as for dropout).
class RReLUFuncOptions {
  LG_ARG(double, lower) = 1.0 / 8.0;
  LG_ARG(double, upper) = 1.0 / 3.0;
  LG_ARG(bool, training) = false;
  LG_ARG(bool, inplace) = false;
};
Tensor rrelu(Tensor input, const RReLUFuncOptions& options);

// ---- Normalization ----------------------------------------------------------------------------
using leangrad::normalize;  // normalize(input, p, dim, eps), and with options:
class NormalizeFuncOptions {
  LG_ARG(double, p) = 2.0;
  LG_ARG(std::int64_t, dim) = 1;
  LG_ARG(double, eps) = 1e-12;
};
Tensor normalize(const Tensor& input, const NormalizeFuncOptions& options);

class LayerNormFuncOptions {
 public:
  /* implicit */ LayerNormFuncOptions(Shape normalized_shape)
      : normalized_shape_(std::move(normalized_shape)) {}
  LG_ARG(Shape, normalized_shape);
  LG_ARG(Tensor, weight);
  LG_ARG(Tensor, bias);
  LG_ARG(double, eps) = 1e-5;
};
Tensor layer_norm(const Tensor& input, const LayerNormFuncOptions& options);

class GroupNormFuncOptions {
 public:
  /* implicit */ GroupNormFuncOptions(std::int64_t num_groups) : num_groups_(num_groups) {}
  LG_ARG(std::int64_t, num_groups);
  LG_ARG(Tensor, weight);
  LG_ARG(Tensor, bias);
  LG_ARG(double, eps) = 1e-5;
};
Tensor group_norm(const Tensor& input, const GroupNormFuncOptions& options);

class BatchNormFuncOptions {
  LG_ARG(Tensor, weight);
  LG_ARG(Tensor, bias);
  LG_ARG(bool, training) = false;
  // LibTorch's is optional<double> (none: a cumulative average), which batch_norm does not take.
  LG_ARG(double, momentum) = 0.1;
  LG_ARG(double, eps) = 1e-5;
};
Tensor batch_norm(const Tensor& input, const Tensor& running_mean, const Tensor& running_var,
                  const BatchNormFuncOptions& options);

class InstanceNormFuncOptions {
  LG_ARG(Tensor, running_mean);
  LG_ARG(Tensor, running_var);
  LG_ARG(Tensor, weight);
  LG_ARG(Tensor, bias);
  LG_ARG(bool, use_input_stats) = true;
  LG_ARG(double, momentum) = 0.1;
  LG_ARG(double, eps) = 1e-5;
};
Tensor instance_norm(const Tensor& input, const InstanceNormFuncOptions& options);

using LocalResponseNormFuncOptions = LocalResponseNormOptions;
Tensor local_response_norm(const Tensor& input, const LocalResponseNormFuncOptions& options);

// ---- Padding, embedding, resizing, distances, pixel shuffle -----------------------------------
class PadFuncOptions {
 public:
  /* implicit */ PadFuncOptions(std::vector<std::int64_t> pad) : pad_(std::move(pad)) {}
  LG_ARG(std::vector<std::int64_t>, pad);
  LG_ARG(PadMode, mode) = kConstant;
  LG_ARG(double, value) = 0.0;
};
Tensor pad(const Tensor& input, const PadFuncOptions& options);

class EmbeddingFuncOptions {
  LG_ARG(std::optional<std::int64_t>, padding_idx) = std::nullopt;
};
Tensor embedding(const Tensor& input, const Tensor& weight, const EmbeddingFuncOptions& options);

// LibTorch's fields that embedding_bag takes (max_norm, norm_type, scale_grad_by_freq and sparse
// are not there, as for nn::EmbeddingBag).
class EmbeddingBagFuncOptions {
  LG_ARG(Tensor, offsets);
  LG_ARG(EmbeddingBagMode, mode) = kMean;
  LG_ARG(Tensor, per_sample_weights);
  LG_ARG(bool, include_last_offset) = false;
  LG_ARG(std::optional<std::int64_t>, padding_idx) = std::nullopt;
};
Tensor embedding_bag(const Tensor& input, const Tensor& weight,
                     const EmbeddingBagFuncOptions& options);

// grid_sample's mode (kBilinear, kNearest or kBicubic), padding_mode (kZeros, kBorder or
// kReflection) and align_corners, LibTorch's defaults.
class GridSampleFuncOptions {
  LG_ARG(InterpolateMode, mode) = kBilinear;
  LG_ARG(GridSamplePadding, padding_mode) = kZeros;
  LG_ARG(std::optional<bool>, align_corners) = std::nullopt;
};
Tensor grid_sample(const Tensor& input, const Tensor& grid, const GridSampleFuncOptions& options);

using FoldFuncOptions = FoldOptions;
using UnfoldFuncOptions = UnfoldOptions;
Tensor fold(const Tensor& input, const FoldFuncOptions& options);
Tensor unfold(const Tensor& input, const UnfoldFuncOptions& options);

class InterpolateFuncOptions {
  LG_ARG(std::optional<std::vector<std::int64_t>>, size) = std::nullopt;
  LG_ARG(std::optional<std::vector<double>>, scale_factor) = std::nullopt;
  LG_ARG(InterpolateMode, mode) = kNearest;
  LG_ARG(std::optional<bool>, align_corners) = std::nullopt;
  LG_ARG(std::optional<bool>, recompute_scale_factor) = std::nullopt;
  LG_ARG(bool, antialias) = false;
};
Tensor interpolate(const Tensor& input, const InterpolateFuncOptions& options);

using CosineSimilarityFuncOptions = CosineSimilarityOptions;
using PairwiseDistanceFuncOptions = PairwiseDistanceOptions;
Tensor cosine_similarity(const Tensor& x1, const Tensor& x2,
                         const CosineSimilarityFuncOptions& options);
Tensor pairwise_distance(const Tensor& x1, const Tensor& x2,
                         const PairwiseDistanceFuncOptions& options);

class PixelShuffleFuncOptions {
 public:
  /* implicit */ PixelShuffleFuncOptions(std::int64_t upscale_factor)
      : upscale_factor_(upscale_factor) {}
  LG_ARG(std::int64_t, upscale_factor);
};
class PixelUnshuffleFuncOptions {
 public:
  /* implicit */ PixelUnshuffleFuncOptions(std::int64_t downscale_factor)
      : downscale_factor_(downscale_factor) {}
  LG_ARG(std::int64_t, downscale_factor);
};
Tensor pixel_shuffle(const Tensor& input, const PixelShuffleFuncOptions& options);
Tensor pixel_unshuffle(const Tensor& input, const PixelUnshuffleFuncOptions& options);

}  // namespace leangrad::nn::functional
