// nn::functional: the free functions of the layers under LibTorch's namespace, for code written
//   namespace F = torch::nn::functional;  ->  namespace F = leangrad::nn::functional;
//   x = F::relu(F::conv2d(x, w, b));  loss = F::cross_entropy(logits, target);
// The same functions as leangrad::relu, leangrad::conv2d, ... (autograd/functions.h,
// autograd/nn_functions.h, autograd/losses.h, autograd/margin_losses.h), which take their
// arguments positionally; LibTorch's functional options objects (F::Conv2dFuncOptions, ...) and
// the overloads that take them are nn/functional_options.h's (in nn/nn.h). nn::utils::
// clip_grad_norm_ is declared with optim::clip_grad_norm_ (optim/clip_grad.h): nn sits below optim.
#pragma once

#include <leangrad/autograd/activations.h>
#include <leangrad/autograd/attention.h>
#include <leangrad/autograd/composed_layers.h>
#include <leangrad/autograd/ctc_loss.h>
#include <leangrad/autograd/dropout_functions.h>
#include <leangrad/autograd/fold_functions.h>
#include <leangrad/autograd/fractional_max_pool.h>
#include <leangrad/autograd/functions.h>
#include <leangrad/autograd/grid_sample.h>
#include <leangrad/autograd/indexing_functions.h>
#include <leangrad/autograd/losses.h>
#include <leangrad/autograd/margin_losses.h>
#include <leangrad/autograd/nn_functions.h>
#include <leangrad/autograd/sampling_functions.h>
#include <leangrad/autograd/volumetric_functions.h>
#include <leangrad/nn/attention.h>  // F::multi_head_attention_forward

namespace leangrad::nn::functional {

using leangrad::adaptive_avg_pool1d;
using leangrad::adaptive_avg_pool2d;
using leangrad::adaptive_avg_pool3d;
using leangrad::adaptive_max_pool1d;
using leangrad::adaptive_max_pool1d_with_indices;
using leangrad::adaptive_max_pool2d;
using leangrad::adaptive_max_pool2d_with_indices;
using leangrad::adaptive_max_pool3d;
using leangrad::adaptive_max_pool3d_with_indices;
using leangrad::affine_grid;
using leangrad::alpha_dropout;
using leangrad::avg_pool1d;
using leangrad::avg_pool2d;
using leangrad::avg_pool3d;
using leangrad::batch_norm;
using leangrad::bilinear;
using leangrad::binary_cross_entropy;
using leangrad::binary_cross_entropy_with_logits;
using leangrad::celu;
using leangrad::channel_shuffle;
using leangrad::conv1d;
using leangrad::conv2d;
using leangrad::conv3d;
using leangrad::conv_transpose1d;
using leangrad::conv_transpose2d;
using leangrad::conv_transpose3d;
using leangrad::cosine_embedding_loss;
using leangrad::cosine_similarity;
using leangrad::cross_entropy;
using leangrad::ctc_loss;
using leangrad::dropout;
using leangrad::dropout1d;
using leangrad::dropout2d;
using leangrad::dropout3d;
using leangrad::elu;
using leangrad::elu_;
using leangrad::embedding;
using leangrad::embedding_bag;
using leangrad::feature_alpha_dropout;
using leangrad::fold;
using leangrad::fractional_max_pool2d;
using leangrad::fractional_max_pool2d_with_indices;
using leangrad::fractional_max_pool3d;
using leangrad::fractional_max_pool3d_with_indices;
using leangrad::gaussian_nll_loss;
using leangrad::gelu;
using leangrad::glu;
using leangrad::grid_sample;
using leangrad::group_norm;
using leangrad::gumbel_softmax;
using leangrad::hardshrink;
using leangrad::hardsigmoid;
using leangrad::hardswish;
using leangrad::hardtanh;
using leangrad::hardtanh_;
using leangrad::hinge_embedding_loss;
using leangrad::huber_loss;
using leangrad::instance_norm;
using leangrad::interpolate;
using leangrad::kl_div;
using leangrad::l1_loss;
using leangrad::layer_norm;
using leangrad::leaky_relu;
using leangrad::leaky_relu_;
using leangrad::linear;
using leangrad::local_response_norm;
using leangrad::log_sigmoid;
using leangrad::log_softmax;
using leangrad::lp_pool1d;
using leangrad::lp_pool2d;
using leangrad::margin_ranking_loss;
using leangrad::max_pool1d;
using leangrad::max_pool1d_with_indices;
using leangrad::max_pool2d;
using leangrad::max_pool2d_with_indices;
using leangrad::max_pool3d;
using leangrad::max_pool3d_with_indices;
using leangrad::max_unpool1d;
using leangrad::max_unpool2d;
using leangrad::max_unpool3d;
using leangrad::mish;
using leangrad::mse_loss;
using leangrad::multi_margin_loss;
using leangrad::multilabel_margin_loss;
using leangrad::multilabel_soft_margin_loss;
using leangrad::nll_loss;
using leangrad::pad;
using leangrad::pairwise_distance;
using leangrad::pixel_shuffle;
using leangrad::pixel_unshuffle;
using leangrad::poisson_nll_loss;
using leangrad::prelu;
using leangrad::relu;
using leangrad::relu6;
using leangrad::relu6_;
using leangrad::rrelu;
using leangrad::scaled_dot_product_attention;
using leangrad::selu;
using leangrad::selu_;
using leangrad::sigmoid;
using leangrad::silu;
using leangrad::smooth_l1_loss;
using leangrad::soft_margin_loss;
using leangrad::softmax;
using leangrad::softmin;
using leangrad::softplus;
using leangrad::softshrink;
using leangrad::softsign;
using leangrad::tanh;
using leangrad::tanhexp;
using leangrad::tanhshrink;
using leangrad::threshold;
using leangrad::triplet_margin_loss;
using leangrad::triplet_margin_with_distance_loss;
using leangrad::unfold;
// F::logsigmoid, as LibTorch spells it (torch::log_sigmoid is leangrad::log_sigmoid).
inline Tensor logsigmoid(const Tensor& x) {
  return leangrad::log_sigmoid(x);
}

}  // namespace leangrad::nn::functional
