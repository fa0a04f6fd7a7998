// The neural-network functions (like torch.nn.functional / at::), differentiable, each with its
// backward beside its forward in the .cpp of its family. nn/ wraps them in modules.
// An undefined Tensor() stands for "no bias" / "no affine weight".
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <tuple>
#include <vector>

#include <leangrad/core/enum_tags.h>
#include <leangrad/core/tensor.h>

namespace leangrad {

// A pair of sizes (height, width) for 2-D ops: {1, 1}, {2, 2}...
using Size2 = std::array<std::int64_t, 2>;

// ---- Activations --------------------------------------------------------------------------------
// TanhExp (Liu & Di, 2020): x * tanh(exp(x)), fused, finite for every finite input.
Tensor tanhexp(const Tensor& x);

// ---- Normalization ------------------------------------------------------------------------------
// x: (N, C, *); weight, bias: (C,) or undefined.
Tensor group_norm(const Tensor& x, std::int64_t num_groups, const Tensor& weight = Tensor(),
                  const Tensor& bias = Tensor(), double eps = 1e-5);
// LayerNorm over the trailing dims: x (*, normalized_shape); weight, bias: normalized_shape or
// undefined. Each row of prod(normalized_shape) elements is normalized with its own mean and
// biased variance: y = (x - mean) / sqrt(var + eps) * weight + bias.
Tensor layer_norm(const Tensor& x, const Shape& normalized_shape, const Tensor& weight = Tensor(),
                  const Tensor& bias = Tensor(), double eps = 1e-5);
// BatchNorm over x (N, C, *), as torch.nn.functional.batch_norm: per channel over N and the
// spatial dims. training: normalize with the batch's mean and biased variance and, when the
// running statistics (C,) are defined, update them in place (running = (1 - momentum) running +
// momentum batch, with the unbiased variance for running_var); !training: normalize with the
// running statistics. weight, bias: (C,) or undefined.
Tensor batch_norm(const Tensor& x, const Tensor& running_mean, const Tensor& running_var,
                  const Tensor& weight = Tensor(), const Tensor& bias = Tensor(),
                  bool training = false, double momentum = 0.1, double eps = 1e-5);

// InstanceNorm over x (N, C, *spatial), as torch.nn.functional.instance_norm: use_input_stats
// normalizes each (n, c) slice with its own mean and biased variance (group_norm with C groups)
// and, when the running statistics (C,) are defined, moves them towards the batch's average of the
// slices' means and unbiased variances (running = (1 - momentum) running + momentum average);
// otherwise it normalizes with the running statistics. weight, bias: (C,) or undefined. Note
// [InstanceNorm is GroupNorm] in nn_functions.cpp.
Tensor instance_norm(const Tensor& x, const Tensor& running_mean = Tensor(),
                     const Tensor& running_var = Tensor(), const Tensor& weight = Tensor(),
                     const Tensor& bias = Tensor(), bool use_input_stats = true,
                     double momentum = 0.1, double eps = 1e-5);

// ---- Convolution --------------------------------------------------------------------------------
// x: (N, C_in, H, W); weight: (C_out, C_in / groups, kH, kW); bias: (C_out,) or undefined.
Tensor conv2d(const Tensor& x, const Tensor& weight, const Tensor& bias = Tensor(),
              Size2 stride = {1, 1}, Size2 padding = {0, 0}, Size2 dilation = {1, 1},
              std::int64_t groups = 1);

// x: (N, C_in, L); weight: (C_out, C_in / groups, k); bias: (C_out,) or undefined ->
// (N, C_out, L_out), L_out = (L + 2 padding - dilation (k - 1) - 1) / stride + 1. conv2d over a
// height of 1, so every conv2d kernel serves it.
Tensor conv1d(const Tensor& x, const Tensor& weight, const Tensor& bias = Tensor(),
              std::int64_t stride = 1, std::int64_t padding = 0, std::int64_t dilation = 1,
              std::int64_t groups = 1);

// A convolution's padding by rule, as PyTorch's strings: kValid ("valid") pads nothing; kSame
// ("same") pads each spatial dim by dilation (k - 1) in all, half before and the rest after (the
// odd one after), so that at stride 1 the output is as large as the input. A stride other than 1
// is an Error, as in PyTorch. The conv1d/2d/3d overloads that take it are in conv_padding.cpp.
enum class ConvPadding : std::uint8_t { Valid, Same };
inline constexpr ConvPadding kValid = ConvPadding::Valid;
inline constexpr ConvPadding kSame = ConvPadding::Same;
// "valid" or "same".
const char* conv_padding_name(ConvPadding padding);
// kSame's padding of one dim: {before, after}.
constexpr std::array<std::int64_t, 2> same_padding(std::int64_t kernel_size,
                                                   std::int64_t dilation) {
  const std::int64_t total = dilation * (kernel_size - 1);
  return {total / 2, total - total / 2};
}
//   y = conv2d(x, w, b, {1, 1}, kSame, {2, 2});  // y's height and width are x's
Tensor conv2d(const Tensor& x, const Tensor& weight, const Tensor& bias, Size2 stride,
              ConvPadding padding, Size2 dilation = {1, 1}, std::int64_t groups = 1);
Tensor conv1d(const Tensor& x, const Tensor& weight, const Tensor& bias, std::int64_t stride,
              ConvPadding padding, std::int64_t dilation = 1, std::int64_t groups = 1);

// Transposed convolution (the gradient of conv2d with respect to its input), argument order as
// torch.nn.functional.conv_transpose2d. x: (N, C_in, H, W); weight: (C_in, C_out / groups, kH,
// kW); bias: (C_out,) or undefined -> (N, C_out, H_out, W_out) with
// H_out = (H - 1) stride - 2 padding + dilation (kH - 1) + output_padding + 1 (W likewise), and
// 0 <= output_padding < stride.
Tensor conv_transpose2d(const Tensor& x, const Tensor& weight, const Tensor& bias = Tensor(),
                        Size2 stride = {1, 1}, Size2 padding = {0, 0},
                        Size2 output_padding = {0, 0}, std::int64_t groups = 1,
                        Size2 dilation = {1, 1});
// The 1-d transposed convolution, as torch's conv_transpose1d: x (N, C_in, L), weight (C_in,
// C_out / groups, k), bias (C_out,) or undefined -> (N, C_out, L_out), L_out = (L - 1) stride -
// 2 padding + dilation (k - 1) + output_padding + 1. conv_transpose2d over a height of 1.
Tensor conv_transpose1d(const Tensor& x, const Tensor& weight, const Tensor& bias = Tensor(),
                        std::int64_t stride = 1, std::int64_t padding = 0,
                        std::int64_t output_padding = 0, std::int64_t groups = 1,
                        std::int64_t dilation = 1);

// ---- Layers -------------------------------------------------------------------------------------
// y = x W^T + b; x: (*, in_features), weight: (out_features, in_features), bias: (out_features,).
Tensor linear(const Tensor& x, const Tensor& weight, const Tensor& bias = Tensor());
// (N, C r^2, H, W) -> (N, C, H r, W r) and back.
Tensor pixel_shuffle(const Tensor& x, std::int64_t upscale_factor);
Tensor pixel_unshuffle(const Tensor& x, std::int64_t downscale_factor);
// Pooling of x (N, C, H, W) or (C, H, W), arguments in at::'s order and with PyTorch's defaults;
// stride {0, 0} means stride = kernel (PyTorch's default). ceil_mode rounds the output size up
// (the last window still starts inside the input or the left padding); padding <= kernel / 2.
// Max pooling pads with -inf, dilation spaces its taps; max_pool2d_with_indices also returns the
// int64 index h * W + w of each maximum within its plane (-1 where a window holds no input).
// Average pooling divides each window's sum by divisor_override (nonzero) when given, else by the
// window's size within the padded input (count_include_pad) or its count of input elements.
Tensor max_pool2d(const Tensor& x, Size2 kernel, Size2 stride = {0, 0}, Size2 padding = {0, 0},
                  Size2 dilation = {1, 1}, bool ceil_mode = false);
std::tuple<Tensor, Tensor> max_pool2d_with_indices(const Tensor& x, Size2 kernel,
                                                   Size2 stride = {0, 0}, Size2 padding = {0, 0},
                                                   Size2 dilation = {1, 1}, bool ceil_mode = false);
Tensor avg_pool2d(const Tensor& x, Size2 kernel, Size2 stride = {0, 0}, Size2 padding = {0, 0},
                  bool ceil_mode = false, bool count_include_pad = true,
                  std::optional<std::int64_t> divisor_override = std::nullopt);
// (N, C, H, W) or (C, H, W) -> (..., OH, OW), as torch's adaptive_avg_pool2d: output row i
// averages input rows [floor(i H / OH), ceil((i + 1) H / OH)), and likewise for columns (windows
// overlap when H is not a multiple of OH; OH may exceed H). Composed: the mean over H and W for a
// 1 x 1 output, else P_H x P_W^T with averaging matrices P (Note [Adaptive average pooling]), so
// it differentiates to any order.
Tensor adaptive_avg_pool2d(const Tensor& x, Size2 output_size);
// Adaptive max pooling, as torch's: (N, C, H, W) or (C, H, W) -> (..., OH, OW) over the windows
// of adaptive_avg_pool2d, and (N, C, L) or (C, L) -> (..., output_size) along L. The _with_indices
// forms also return the int64 index of each maximum within its plane (h * W + w; the position in
// L for 1-d), as torch::adaptive_max_pool2d / F::adaptive_max_pool2d_with_indices do. The first
// maximum of a window wins, a NaN propagates (the last NaN), as PyTorch; the gradient goes to
// the index, summed where windows overlap. Differentiable to any order.
Tensor adaptive_max_pool2d(const Tensor& x, Size2 output_size);
std::tuple<Tensor, Tensor> adaptive_max_pool2d_with_indices(const Tensor& x, Size2 output_size);
Tensor adaptive_max_pool1d(const Tensor& x, std::int64_t output_size);
std::tuple<Tensor, Tensor> adaptive_max_pool1d_with_indices(const Tensor& x,
                                                            std::int64_t output_size);
// 1-d pooling of x (N, C, L) or (C, L) along L, as torch's max_pool1d, avg_pool1d and
// adaptive_avg_pool1d (arguments in at::'s order, PyTorch's defaults; stride 0 means the kernel):
// the 2-d pooling above of (..., 1, L) by 1 x kernel windows, so the values, the indices (the
// positions in L) and the gradients are those of the 2-d functions.
Tensor max_pool1d(const Tensor& x, std::int64_t kernel, std::int64_t stride = 0,
                  std::int64_t padding = 0, std::int64_t dilation = 1, bool ceil_mode = false);
std::tuple<Tensor, Tensor> max_pool1d_with_indices(const Tensor& x, std::int64_t kernel,
                                                   std::int64_t stride = 0,
                                                   std::int64_t padding = 0,
                                                   std::int64_t dilation = 1,
                                                   bool ceil_mode = false);
Tensor avg_pool1d(const Tensor& x, std::int64_t kernel, std::int64_t stride = 0,
                  std::int64_t padding = 0, bool ceil_mode = false, bool count_include_pad = true);
Tensor adaptive_avg_pool1d(const Tensor& x, std::int64_t output_size);
// Zeroes elements with probability p (Philox: the same mask on every device for the same seed)
// and scales the rest by 1 / (1 - p); the identity when !training.
Tensor dropout(const Tensor& x, double p, bool training);
Tensor softmax(const Tensor& x, std::int64_t dim);
Tensor log_softmax(const Tensor& x, std::int64_t dim);

// Embedding lookup: the rows of weight (num_embeddings, embedding_dim) that int64 `indices` of
// any shape pick -> (*indices.shape, embedding_dim). The backward adds each upstream row into the
// weight gradient's row of its index; the row padding_idx (negative counts from the end, as
// PyTorch) gets no gradient. An index out of range throws Error on the CPU and gives NaN rows on
// CUDA (no synchronisation to check it).
Tensor embedding(const Tensor& indices, const Tensor& weight,
                 std::optional<std::int64_t> padding_idx = std::nullopt);

// How embedding_bag reduces a bag, spelled as LibTorch's: kSum, kMean, kMax (core/enum_tags.h,
// the names shared with the reductions).
enum class EmbeddingBagMode : std::uint8_t { Sum, Mean, Max };
// "sum", "mean", "max".
const char* embedding_bag_mode_name(EmbeddingBagMode mode);
// Bags of rows of weight (num_embeddings, embedding_dim) reduced to one row each, as PyTorch's
// F.embedding_bag -> (bags, embedding_dim). int64 input is either (bags, n), a bag a row (offsets
// undefined), or 1-D with int64 `offsets`, the start of each bag in input (offsets[0] == 0,
// non-decreasing; with include_last_offset the last entry is input's length and ends the last
// bag). Entries equal to padding_idx (negative counts from the end) are left out of their bag.
// per_sample_weights (input's shape and weight's dtype; mode kSum only) scale each row. An empty
// bag gives zeros in every mode. kMax's gradient goes to the first maximum of each column of a
// bag. Composed of embedding, index_add and max (Note [Bags by index_add] in nn_functions.cpp),
// so it runs on every device and differentiates to any order; the bags are laid out on the host
// (indices and offsets on a GPU are copied back first).
Tensor embedding_bag(const Tensor& input, const Tensor& weight, const Tensor& offsets = Tensor(),
                     EmbeddingBagMode mode = kMean, const Tensor& per_sample_weights = Tensor(),
                     bool include_last_offset = false,
                     std::optional<std::int64_t> padding_idx = std::nullopt);

// The modes of interpolate / nn::Upsample, spelled as LibTorch's: kNearest, kNearestExact, kArea
// (every rank), kLinear (3-D input; core/enum_tags.h, the name shared with nn::init), kBilinear,
// kBicubic (4-D), kTrilinear (5-D).
enum class InterpolateMode : std::uint8_t {
  Nearest,
  Bilinear,
  Bicubic,
  NearestExact,
  Area,
  Linear,
  Trilinear
};
inline constexpr InterpolateMode kNearest = InterpolateMode::Nearest;
inline constexpr InterpolateMode kBilinear = InterpolateMode::Bilinear;
inline constexpr InterpolateMode kBicubic = InterpolateMode::Bicubic;
inline constexpr InterpolateMode kNearestExact = InterpolateMode::NearestExact;
inline constexpr InterpolateMode kArea = InterpolateMode::Area;
inline constexpr InterpolateMode kTrilinear = InterpolateMode::Trilinear;
// "nearest", "bilinear", "bicubic", "nearest-exact", "area", "linear", "trilinear": PyTorch's
// spelling.
const char* interpolate_mode_name(InterpolateMode mode);
using Scale2 = std::array<double, 2>;  // (height, width) factors
// Resizes x (N, C, H, W) to `size`, or by `scale_factor` (output H * factor rounded down), exactly
// one of them given, as torch.nn.functional.interpolate: nearest (PyTorch's "nearest", index
// floor(out * in / out_size)), nearest-exact (floor((out + 0.5) * in / out_size)), bilinear or
// bicubic (Keys' cubic convolution with a = -0.75 over 4 x 4 taps, the edge repeated; it can
// overshoot the input's range, as PyTorch's), the last two with align_corners (default false),
// which maps corner pixels' centres onto each other. The scale_factor given is what the index
// rules use, as PyTorch does by default; with recompute_scale_factor true the rules use the
// sizes, as if the output size had been given. area is adaptive_avg_pool2d to the output size, as
// PyTorch's. antialias (bilinear and bicubic only) widens the filter by the downscaling factor
// where the output is smaller, so every input pixel counts (PIL's resampling, as PyTorch's):
// separable weights, the edge renormalised, bicubic with a = -0.5 (Note [Antialiased resize] in
// nn_functions.cpp).
Tensor interpolate(const Tensor& x, std::optional<Size2> size,
                   std::optional<Scale2> scale_factor = std::nullopt,
                   InterpolateMode mode = kNearest,
                   std::optional<bool> align_corners = std::nullopt,
                   std::optional<bool> recompute_scale_factor = std::nullopt,
                   bool antialias = false);
// The same over every rank torch's takes, size and scale_factor one value per spatial dim (as
// LibTorch's InterpolateFuncOptions): (N, C, L) in nearest, nearest-exact, linear or area;
// (N, C, H, W) as above; (N, C, D, H, W) in nearest, nearest-exact, trilinear or area
// (adaptive_avg_pool1d / adaptive_avg_pool3d). linear and trilinear are bilinear's rules per
// axis, align_corners included; each runs on the 2-d resize (Note [Interpolation of any rank]
// in nn_functions.cpp). recompute_scale_factor as above; antialias with 4-D input only, as
// PyTorch's.
//   y = interpolate(volume, std::vector<std::int64_t>{8, 16, 16}, std::nullopt, kTrilinear);
Tensor interpolate(const Tensor& x, std::optional<std::vector<std::int64_t>> size,
                   std::optional<std::vector<double>> scale_factor = std::nullopt,
                   InterpolateMode mode = kNearest,
                   std::optional<bool> align_corners = std::nullopt,
                   std::optional<bool> recompute_scale_factor = std::nullopt,
                   bool antialias = false);

// A loss's reduction: Reduction::Mean, or LibTorch's spellings kNone, kMean, kSum
// (core/enum_tags.h).
enum class Reduction { None, Mean, Sum };
// logp: (N, C) log-probabilities, target: (N,) int64 class indices; or, as PyTorch, logp
// (N, C, d1, ..., dk) with target (N, d1, ..., dk) (a loss per position: None returns the
// target's shape), or unbatched logp (C) with a 0-d target (Note [Class-index losses of any
// rank] in nn_functions.cpp). A target of another shape throws ShapeError naming both shapes.
// weight: a class weight (C,) of logp's dtype and device, or undefined (every class weighs 1):
// sample i's loss is -weight[t_i] * logp[i, t_i]. Entries equal to ignore_index contribute
// nothing; Mean divides the sum by the summed weights of the samples (and positions) not ignored
// (without a weight, their number; 0 / 0 = NaN when that is 0, as PyTorch). The weight is a
// constant: it gets no gradient. (PyTorch's Python order is weight, ignore_index, reduction; here
// the older arguments come first.)
Tensor nll_loss(const Tensor& logp, const Tensor& target, Reduction reduction = Reduction::Mean,
                std::int64_t ignore_index = -100, const Tensor& weight = Tensor());
// log_softmax + nll_loss, as torch.nn.functional.cross_entropy (one fused kernel for plain class
// indices). The target is either
// - class indices, int64 of the input's shape without the class dim ((N,) for (N, C),
//   (N, d1, ...) for (N, C, d1, ...), 0-d for (C)), with weight and ignore_index as nll_loss's, or
// - class probabilities: a floating target of the input's shape ((C), (N, C) or
//   (N, C, d1, ...)) and dtype; the loss is -sum_c weight[c] * target[c] * log_softmax(logits)[c]
//   at each sample (and position: None gives (N, d1, ...)), Mean divides by N * d1 * ... (not by
//   weights), and the target gets a gradient too. ignore_index must be negative (PyTorch refuses
//   others): it ignores nothing.
// label_smoothing, in [0, 1], mixes the target with the uniform distribution:
// (1 - label_smoothing) * target + label_smoothing / C (Note [Label smoothing and probability
// targets] in nn_functions.cpp: with class indices the smoothing term is weighted per class and
// divided under Mean by the same summed weights as the rest, as PyTorch 1.13).
Tensor cross_entropy(const Tensor& logits, const Tensor& target,
                     Reduction reduction = Reduction::Mean, std::int64_t ignore_index = -100,
                     const Tensor& weight = Tensor(), double label_smoothing = 0.0);
Tensor mse_loss(const Tensor& input, const Tensor& target, Reduction reduction = Reduction::Mean);
Tensor l1_loss(const Tensor& input, const Tensor& target, Reduction reduction = Reduction::Mean);

}  // namespace leangrad
