// The options overloads of nn::functional (nn/functional_options.h): each unpacks its options
// into the positional function of the same name.
#include <leangrad/nn/functional_options.h>

#include <leangrad/autograd/activations.h>
#include <leangrad/autograd/losses.h>
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

}  // namespace leangrad::nn::functional
