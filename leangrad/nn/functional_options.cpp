// The options overloads of nn::functional (nn/functional_options.h): each unpacks its options
// into the positional function of the same name.
#include <leangrad/nn/functional_options.h>

#include <cstddef>
#include <tuple>
#include <vector>

#include <leangrad/autograd/activations.h>
#include <leangrad/autograd/composed_layers.h>
#include <leangrad/autograd/ctc_loss.h>
#include <leangrad/autograd/dropout_functions.h>
#include <leangrad/autograd/fold_functions.h>
#include <leangrad/autograd/fractional_max_pool.h>
#include <leangrad/autograd/functions.h>
#include <leangrad/autograd/losses.h>
#include <leangrad/autograd/margin_losses.h>
#include <leangrad/autograd/reduction_functions.h>
#include <leangrad/core/error.h>

namespace leangrad::nn::functional {

Tensor conv1d(const Tensor& input, const Tensor& weight, const Conv1dFuncOptions& options) {
  if (options.padding_rule()) {
    return leangrad::conv1d(input, weight, options.bias(), options.stride(),
                            *options.padding_rule(), options.dilation(), options.groups());
  }
  return leangrad::conv1d(input, weight, options.bias(), options.stride(), options.padding(),
                          options.dilation(), options.groups());
}

Tensor conv2d(const Tensor& input, const Tensor& weight, const Conv2dFuncOptions& options) {
  if (options.padding_rule()) {
    return leangrad::conv2d(input, weight, options.bias(), options.stride(),
                            *options.padding_rule(), options.dilation(), options.groups());
  }
  return leangrad::conv2d(input, weight, options.bias(), options.stride(), options.padding(),
                          options.dilation(), options.groups());
}

Tensor conv3d(const Tensor& input, const Tensor& weight, const Conv3dFuncOptions& options) {
  if (options.padding_rule()) {
    return leangrad::conv3d(input, weight, options.bias(), options.stride(),
                            *options.padding_rule(), options.dilation(), options.groups());
  }
  return leangrad::conv3d(input, weight, options.bias(), options.stride(), options.padding(),
                          options.dilation(), options.groups());
}

Tensor max_pool1d(const Tensor& input, const MaxPool1dFuncOptions& options) {
  return leangrad::max_pool1d(input, options.kernel_size(), options.stride(), options.padding(),
                              options.dilation(), options.ceil_mode());
}

Tensor max_pool2d(const Tensor& input, const MaxPool2dFuncOptions& options) {
  return leangrad::max_pool2d(input, options.kernel_size(), options.stride(), options.padding(),
                              options.dilation(), options.ceil_mode());
}

Tensor max_pool3d(const Tensor& input, const MaxPool3dFuncOptions& options) {
  return leangrad::max_pool3d(input, options.kernel_size(), options.stride(), options.padding(),
                              options.dilation(), options.ceil_mode());
}

Tensor avg_pool1d(const Tensor& input, const AvgPool1dFuncOptions& options) {
  return leangrad::avg_pool1d(input, options.kernel_size(), options.stride(), options.padding(),
                              options.ceil_mode(), options.count_include_pad());
}

Tensor avg_pool2d(const Tensor& input, const AvgPool2dFuncOptions& options) {
  return leangrad::avg_pool2d(input, options.kernel_size(), options.stride(), options.padding(),
                              options.ceil_mode(), options.count_include_pad(),
                              options.divisor_override());
}

Tensor avg_pool3d(const Tensor& input, const AvgPool3dFuncOptions& options) {
  return leangrad::avg_pool3d(input, options.kernel_size(), options.stride(), options.padding(),
                              options.ceil_mode(), options.count_include_pad(),
                              options.divisor_override());
}

Tensor adaptive_avg_pool1d(const Tensor& input, const AdaptiveAvgPool1dFuncOptions& options) {
  return leangrad::adaptive_avg_pool1d(input, options.output_size());
}

Tensor adaptive_avg_pool2d(const Tensor& input, const AdaptiveAvgPool2dFuncOptions& options) {
  return leangrad::adaptive_avg_pool2d(input, options.output_size());
}

Tensor adaptive_avg_pool3d(const Tensor& input, const AdaptiveAvgPool3dFuncOptions& options) {
  return leangrad::adaptive_avg_pool3d(input, options.output_size());
}

Tensor adaptive_max_pool2d(const Tensor& input, const AdaptiveMaxPool2dFuncOptions& options) {
  return leangrad::adaptive_max_pool2d(input, options.output_size());
}

Tensor dropout(Tensor input, const DropoutFuncOptions& options) {
  LG_CHECK(!options.inplace(), "dropout: inplace is not supported (nor is it by nn::Dropout); ",
           "call F::dropout without it and use its result");
  return leangrad::dropout(input, options.p(), options.training());
}

Tensor softmax(const Tensor& input, const SoftmaxFuncOptions& options) {
  return leangrad::softmax(input, options.dim());
}

Tensor gumbel_softmax(const Tensor& logits, const GumbelSoftmaxFuncOptions& options) {
  return leangrad::gumbel_softmax(logits, options.tau(), options.hard(), options.dim());
}

Tensor log_softmax(const Tensor& input, const LogSoftmaxFuncOptions& options) {
  return leangrad::log_softmax(input, options.dim());
}

Tensor softmin(const Tensor& input, const SoftminFuncOptions& options) {
  return leangrad::softmin(input, options.dim());
}

Tensor cross_entropy(const Tensor& input, const Tensor& target,
                     const CrossEntropyFuncOptions& options) {
  return leangrad::cross_entropy(input, target, options.reduction(), options.ignore_index(),
                                 options.weight(), options.label_smoothing());
}

Tensor nll_loss(const Tensor& input, const Tensor& target, const NLLLossFuncOptions& options) {
  return leangrad::nll_loss(input, target, options.reduction(), options.ignore_index(),
                            options.weight());
}

Tensor mse_loss(const Tensor& input, const Tensor& target, const MSELossFuncOptions& options) {
  return leangrad::mse_loss(input, target, options.reduction());
}

Tensor l1_loss(const Tensor& input, const Tensor& target, const L1LossFuncOptions& options) {
  return leangrad::l1_loss(input, target, options.reduction());
}

Tensor smooth_l1_loss(const Tensor& input, const Tensor& target,
                      const SmoothL1LossFuncOptions& options) {
  return leangrad::smooth_l1_loss(input, target, options.reduction(), options.beta());
}

Tensor huber_loss(const Tensor& input, const Tensor& target, const HuberLossFuncOptions& options) {
  return leangrad::huber_loss(input, target, options.reduction(), options.delta());
}

Tensor binary_cross_entropy(const Tensor& input, const Tensor& target,
                            const BinaryCrossEntropyFuncOptions& options) {
  return leangrad::binary_cross_entropy(input, target, options.reduction(), options.weight());
}

Tensor binary_cross_entropy_with_logits(const Tensor& input, const Tensor& target,
                                        const BinaryCrossEntropyWithLogitsFuncOptions& options) {
  return leangrad::binary_cross_entropy_with_logits(input, target, options.reduction(),
                                                    options.weight(), options.pos_weight());
}

Tensor kl_div(const Tensor& input, const Tensor& target, const KLDivFuncOptions& options) {
  return leangrad::kl_div(input, target, options.reduction(), options.log_target());
}

Tensor leaky_relu(Tensor input, const LeakyReLUFuncOptions& options) {
  if (options.inplace()) return leaky_relu_(input, options.negative_slope());
  return leangrad::leaky_relu(input, options.negative_slope());
}

Tensor gelu(const Tensor& input, const GELUFuncOptions& options) {
  return leangrad::gelu(input, options.approximate());
}

Tensor elu(Tensor input, const ELUFuncOptions& options) {
  if (options.inplace()) return elu_(input, options.alpha());
  return leangrad::elu(input, options.alpha());
}

Tensor hardtanh(Tensor input, const HardtanhFuncOptions& options) {
  if (options.inplace()) return hardtanh_(input, options.min_val(), options.max_val());
  return leangrad::hardtanh(input, options.min_val(), options.max_val());
}

Tensor softplus(const Tensor& input, const SoftplusFuncOptions& options) {
  return leangrad::softplus(input, options.beta(), options.threshold());
}

Tensor celu(const Tensor& input, const CELUFuncOptions& options) {
  return leangrad::celu(input, options.alpha());
}

Tensor normalize(const Tensor& input, const NormalizeFuncOptions& options) {
  return leangrad::normalize(input, options.p(), options.dim(), options.eps());
}

Tensor layer_norm(const Tensor& input, const LayerNormFuncOptions& options) {
  return leangrad::layer_norm(input, options.normalized_shape(), options.weight(), options.bias(),
                              options.eps());
}

Tensor group_norm(const Tensor& input, const GroupNormFuncOptions& options) {
  return leangrad::group_norm(input, options.num_groups(), options.weight(), options.bias(),
                              options.eps());
}

Tensor batch_norm(const Tensor& input, const Tensor& running_mean, const Tensor& running_var,
                  const BatchNormFuncOptions& options) {
  return leangrad::batch_norm(input, running_mean, running_var, options.weight(), options.bias(),
                              options.training(), options.momentum(), options.eps());
}

Tensor pad(const Tensor& input, const PadFuncOptions& options) {
  return leangrad::pad(input, options.pad(), options.mode(), options.value());
}

Tensor embedding(const Tensor& input, const Tensor& weight, const EmbeddingFuncOptions& options) {
  return leangrad::embedding(input, weight, options.padding_idx());
}

Tensor interpolate(const Tensor& input, const InterpolateFuncOptions& options) {
  return leangrad::interpolate(input, options.size(), options.scale_factor(), options.mode(),
                               options.align_corners(), options.recompute_scale_factor(),
                               options.antialias());
}

Tensor cosine_similarity(const Tensor& x1, const Tensor& x2,
                         const CosineSimilarityFuncOptions& options) {
  return leangrad::cosine_similarity(x1, x2, options.dim(), options.eps());
}

Tensor pairwise_distance(const Tensor& x1, const Tensor& x2,
                         const PairwiseDistanceFuncOptions& options) {
  return leangrad::pairwise_distance(x1, x2, options.p(), options.eps(), options.keepdim());
}

Tensor pixel_shuffle(const Tensor& input, const PixelShuffleFuncOptions& options) {
  return leangrad::pixel_shuffle(input, options.upscale_factor());
}

Tensor pixel_unshuffle(const Tensor& input, const PixelUnshuffleFuncOptions& options) {
  return leangrad::pixel_unshuffle(input, options.downscale_factor());
}

// ---- Added in session 48: the rest of LibTorch's functional options -------------------------

Tensor conv_transpose1d(const Tensor& input, const Tensor& weight,
                        const ConvTranspose1dFuncOptions& options) {
  return leangrad::conv_transpose1d(input, weight, options.bias(), options.stride(),
                                    options.padding(), options.output_padding(), options.groups(),
                                    options.dilation());
}

Tensor conv_transpose2d(const Tensor& input, const Tensor& weight,
                        const ConvTranspose2dFuncOptions& options) {
  return leangrad::conv_transpose2d(input, weight, options.bias(), options.stride(),
                                    options.padding(), options.output_padding(), options.groups(),
                                    options.dilation());
}

Tensor conv_transpose3d(const Tensor& input, const Tensor& weight,
                        const ConvTranspose3dFuncOptions& options) {
  return leangrad::conv_transpose3d(input, weight, options.bias(), options.stride(),
                                    options.padding(), options.output_padding(), options.groups(),
                                    options.dilation());
}

Tensor adaptive_max_pool1d(const Tensor& input, const AdaptiveMaxPool1dFuncOptions& options) {
  return leangrad::adaptive_max_pool1d(input, options.output_size());
}

Tensor adaptive_max_pool3d(const Tensor& input, const AdaptiveMaxPool3dFuncOptions& options) {
  return leangrad::adaptive_max_pool3d(input, options.output_size());
}

std::tuple<Tensor, Tensor> max_pool1d_with_indices(const Tensor& input,
                                                   const MaxPool1dFuncOptions& options) {
  return leangrad::max_pool1d_with_indices(input, options.kernel_size(), options.stride(),
                                           options.padding(), options.dilation(),
                                           options.ceil_mode());
}

std::tuple<Tensor, Tensor> max_pool2d_with_indices(const Tensor& input,
                                                   const MaxPool2dFuncOptions& options) {
  return leangrad::max_pool2d_with_indices(input, options.kernel_size(), options.stride(),
                                           options.padding(), options.dilation(),
                                           options.ceil_mode());
}

std::tuple<Tensor, Tensor> max_pool3d_with_indices(const Tensor& input,
                                                   const MaxPool3dFuncOptions& options) {
  return leangrad::max_pool3d_with_indices(input, options.kernel_size(), options.stride(),
                                           options.padding(), options.dilation(),
                                           options.ceil_mode());
}

std::tuple<Tensor, Tensor> adaptive_max_pool1d_with_indices(
    const Tensor& input, const AdaptiveMaxPool1dFuncOptions& options) {
  return leangrad::adaptive_max_pool1d_with_indices(input, options.output_size());
}

std::tuple<Tensor, Tensor> adaptive_max_pool2d_with_indices(
    const Tensor& input, const AdaptiveMaxPool2dFuncOptions& options) {
  return leangrad::adaptive_max_pool2d_with_indices(input, options.output_size());
}

std::tuple<Tensor, Tensor> adaptive_max_pool3d_with_indices(
    const Tensor& input, const AdaptiveMaxPool3dFuncOptions& options) {
  return leangrad::adaptive_max_pool3d_with_indices(input, options.output_size());
}

Tensor fractional_max_pool2d(const Tensor& input, const FractionalMaxPool2dFuncOptions& options) {
  return leangrad::fractional_max_pool2d(input, options.kernel_size(), options.output_size(),
                                         options.output_ratio(), options._random_samples());
}

Tensor fractional_max_pool3d(const Tensor& input, const FractionalMaxPool3dFuncOptions& options) {
  return leangrad::fractional_max_pool3d(input, options.kernel_size(), options.output_size(),
                                         options.output_ratio(), options._random_samples());
}

std::tuple<Tensor, Tensor> fractional_max_pool2d_with_indices(
    const Tensor& input, const FractionalMaxPool2dFuncOptions& options) {
  return leangrad::fractional_max_pool2d_with_indices(input, options.kernel_size(),
                                                      options.output_size(), options.output_ratio(),
                                                      options._random_samples());
}

std::tuple<Tensor, Tensor> fractional_max_pool3d_with_indices(
    const Tensor& input, const FractionalMaxPool3dFuncOptions& options) {
  return leangrad::fractional_max_pool3d_with_indices(input, options.kernel_size(),
                                                      options.output_size(), options.output_ratio(),
                                                      options._random_samples());
}

Tensor lp_pool1d(const Tensor& input, const LPPool1dFuncOptions& options) {
  return leangrad::lp_pool1d(input, options.norm_type(), options.kernel_size(), options.stride(),
                             options.ceil_mode());
}

Tensor lp_pool2d(const Tensor& input, const LPPool2dFuncOptions& options) {
  return leangrad::lp_pool2d(input, options.norm_type(), options.kernel_size(), options.stride(),
                             options.ceil_mode());
}

namespace {

// max_unpool's output_size as LibTorch's options give it: the D spatial sizes, or the whole
// shape (N, C, *spatial), whose first two are dropped, as PyTorch's _unpool_output_size does.
template <typename Size>
std::optional<Size> unpool_size(const char* op, const MaxUnpoolFuncOptions<Size>& options) {
  if (!options.output_size()) return std::nullopt;
  std::vector<std::int64_t> sizes = *options.output_size();
  const std::size_t dims = sizeof(Size) / sizeof(std::int64_t);  // 1, 2 or 3
  if (sizes.size() == dims + 2) sizes.erase(sizes.begin(), sizes.begin() + 2);
  LG_CHECK_SHAPE(sizes.size() == dims, op, ": output_size must have ", dims, " or ", dims + 2,
                 " elements, got ", Shape(*options.output_size()));
  Size out{};
  if constexpr (std::is_same_v<Size, std::int64_t>) {
    out = sizes[0];
  } else {
    for (std::size_t i = 0; i < dims; ++i)
      out[i] = sizes[i];
  }
  return out;
}

}  // namespace

Tensor max_unpool1d(const Tensor& input, const Tensor& indices,
                    const MaxUnpool1dFuncOptions& options) {
  return leangrad::max_unpool1d(input, indices, options.kernel_size(), options.stride(),
                                options.padding(), unpool_size("max_unpool1d", options));
}

Tensor max_unpool2d(const Tensor& input, const Tensor& indices,
                    const MaxUnpool2dFuncOptions& options) {
  return leangrad::max_unpool2d(input, indices, options.kernel_size(), options.stride(),
                                options.padding(), unpool_size("max_unpool2d", options));
}

Tensor max_unpool3d(const Tensor& input, const Tensor& indices,
                    const MaxUnpool3dFuncOptions& options) {
  return leangrad::max_unpool3d(input, indices, options.kernel_size(), options.stride(),
                                options.padding(), unpool_size("max_unpool3d", options));
}

namespace {

// The dropouts have no in-place form here (nor do the modules).
void check_not_inplace(const char* op, bool inplace) {
  LG_CHECK(!inplace, op, ": inplace is not supported (nor is it by the module); call F::", op,
           " without it and use its result");
}

}  // namespace

Tensor dropout2d(Tensor input, const Dropout2dFuncOptions& options) {
  check_not_inplace("dropout2d", options.inplace());
  return leangrad::dropout2d(input, options.p(), options.training());
}

Tensor dropout3d(Tensor input, const Dropout3dFuncOptions& options) {
  check_not_inplace("dropout3d", options.inplace());
  return leangrad::dropout3d(input, options.p(), options.training());
}

Tensor alpha_dropout(Tensor input, const AlphaDropoutFuncOptions& options) {
  check_not_inplace("alpha_dropout", options.inplace());
  return leangrad::alpha_dropout(input, options.p(), options.training());
}

Tensor feature_alpha_dropout(Tensor input, const FeatureAlphaDropoutFuncOptions& options) {
  check_not_inplace("feature_alpha_dropout", options.inplace());
  return leangrad::feature_alpha_dropout(input, options.p(), options.training());
}

Tensor poisson_nll_loss(const Tensor& input, const Tensor& target,
                        const PoissonNLLLossFuncOptions& options) {
  return leangrad::poisson_nll_loss(input, target, options.log_input(), options.full(),
                                    options.eps(), options.reduction());
}

Tensor margin_ranking_loss(const Tensor& input1, const Tensor& input2, const Tensor& target,
                           const MarginRankingLossFuncOptions& options) {
  return leangrad::margin_ranking_loss(input1, input2, target, options.margin(),
                                       options.reduction());
}

Tensor hinge_embedding_loss(const Tensor& input, const Tensor& target,
                            const HingeEmbeddingLossFuncOptions& options) {
  return leangrad::hinge_embedding_loss(input, target, options.margin(), options.reduction());
}

Tensor soft_margin_loss(const Tensor& input, const Tensor& target,
                        const SoftMarginLossFuncOptions& options) {
  return leangrad::soft_margin_loss(input, target, options.reduction());
}

Tensor multilabel_soft_margin_loss(const Tensor& input, const Tensor& target,
                                   const MultilabelSoftMarginLossFuncOptions& options) {
  return leangrad::multilabel_soft_margin_loss(input, target, options.weight(),
                                               options.reduction());
}

Tensor cosine_embedding_loss(const Tensor& input1, const Tensor& input2, const Tensor& target,
                             const CosineEmbeddingLossFuncOptions& options) {
  return leangrad::cosine_embedding_loss(input1, input2, target, options.margin(),
                                         options.reduction());
}

Tensor triplet_margin_loss(const Tensor& anchor, const Tensor& positive, const Tensor& negative,
                           const TripletMarginLossFuncOptions& options) {
  return leangrad::triplet_margin_loss(anchor, positive, negative, options.margin(), options.p(),
                                       options.eps(), options.swap(), options.reduction());
}

Tensor multi_margin_loss(const Tensor& input, const Tensor& target,
                         const MultiMarginLossFuncOptions& options) {
  return leangrad::multi_margin_loss(input, target, options.p(), options.margin(), options.weight(),
                                     options.reduction());
}

Tensor multilabel_margin_loss(const Tensor& input, const Tensor& target,
                              const MultilabelMarginLossFuncOptions& options) {
  return leangrad::multilabel_margin_loss(input, target, options.reduction());
}

Tensor triplet_margin_with_distance_loss(const Tensor& anchor, const Tensor& positive,
                                         const Tensor& negative,
                                         const TripletMarginWithDistanceLossFuncOptions& options) {
  return leangrad::triplet_margin_with_distance_loss(anchor, positive, negative,
                                                     options.distance_function(), options.margin(),
                                                     options.swap(), options.reduction());
}

Tensor ctc_loss(const Tensor& log_probs, const Tensor& targets, const Tensor& input_lengths,
                const Tensor& target_lengths, const CTCLossFuncOptions& options) {
  return leangrad::ctc_loss(log_probs, targets, input_lengths, target_lengths, options.blank(),
                            options.reduction(), options.zero_infinity());
}

Tensor relu(Tensor input, const ReLUFuncOptions& options) {
  if (options.inplace()) return input.relu_();
  return leangrad::relu(input);
}

Tensor relu6(Tensor input, const ReLU6FuncOptions& options) {
  if (options.inplace()) return relu6_(input);
  return leangrad::relu6(input);
}

Tensor selu(Tensor input, const SELUFuncOptions& options) {
  if (options.inplace()) return selu_(input);
  return leangrad::selu(input);
}

Tensor glu(const Tensor& input, const GLUFuncOptions& options) {
  return leangrad::glu(input, options.dim());
}

Tensor hardshrink(const Tensor& input, const HardshrinkFuncOptions& options) {
  return leangrad::hardshrink(input, options.lambda());
}

Tensor softshrink(const Tensor& input, const SoftshrinkFuncOptions& options) {
  return leangrad::softshrink(input, options.lambda());
}

Tensor threshold(const Tensor& input, const ThresholdFuncOptions& options) {
  return leangrad::threshold(input, options.threshold(), options.value());
}

Tensor rrelu(Tensor input, const RReLUFuncOptions& options) {
  check_not_inplace("rrelu", options.inplace());
  return leangrad::rrelu(input, options.lower(), options.upper(), options.training());
}

Tensor instance_norm(const Tensor& input, const InstanceNormFuncOptions& options) {
  return leangrad::instance_norm(input, options.running_mean(), options.running_var(),
                                 options.weight(), options.bias(), options.use_input_stats(),
                                 options.momentum(), options.eps());
}

Tensor local_response_norm(const Tensor& input, const LocalResponseNormFuncOptions& options) {
  return leangrad::local_response_norm(input, options.size(), options.alpha(), options.beta(),
                                       options.k());
}

Tensor embedding_bag(const Tensor& input, const Tensor& weight,
                     const EmbeddingBagFuncOptions& options) {
  return leangrad::embedding_bag(input, weight, options.offsets(), options.mode(),
                                 options.per_sample_weights(), options.include_last_offset(),
                                 options.padding_idx());
}

Tensor grid_sample(const Tensor& input, const Tensor& grid, const GridSampleFuncOptions& options) {
  return leangrad::grid_sample(input, grid, options.mode(), options.padding_mode(),
                               options.align_corners());
}

Tensor fold(const Tensor& input, const FoldFuncOptions& options) {
  return leangrad::fold(input, options.output_size(), options.kernel_size(), options.dilation(),
                        options.padding(), options.stride());
}

Tensor unfold(const Tensor& input, const UnfoldFuncOptions& options) {
  return leangrad::unfold(input, options.kernel_size(), options.dilation(), options.padding(),
                          options.stride());
}

}  // namespace leangrad::nn::functional
