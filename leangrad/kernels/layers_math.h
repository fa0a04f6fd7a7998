// The per-element math of the layer kernels (pooling, dropout, losses, interpolation), shared by
// the CPU references (kernels/cpu/layers.cpp) and the CUDA kernels (kernels/cuda/layers.cu), so
// both devices follow one set of rules. Kernels differ only in how they split work. Pooling uses
// PyTorch's window arithmetic (Note [Pooling windows]).
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>

#include <leangrad/core/dtype.h>
#include <leangrad/core/macros.h>
#include <leangrad/core/philox.h>

namespace leangrad::layers_math {

// Note [Pooling windows]
//   PyTorch's (1.13) rules, on both devices. Along each axis (height shown), output oh's window
//   starts at h0 = oh * sh - ph and covers input rows h0, h0 + dh, ..., h0 + (kh - 1) dh
//   (dilation dh; max pooling only, average pooling has dh = 1), clipped to [0, H):
//   - the output size is floor((H + 2 ph - (dh (kh - 1) + 1)) / sh) + 1, or with ceil_mode the
//     same rounded up, less one when the last window would then start at or past H (in the
//     right padding, holding no input): every window starts inside the input or the left padding
//     (ops_layers.cpp, pool_shape);
//   - max pooling pads with -inf: the maximum of the elements inside the input; a window that
//     holds none (only possible with dilation, when its taps straddle a small input) gives -inf
//     and index -1, which backward skips (PyTorch gives -inf and an index past the window);
//   - average pooling sums the elements inside the input and divides by divisor_override when
//     given; else, with count_include_pad, by the window's size clipped to the padded input
//     [-ph, H + ph) (a ceil_mode window reaching past the right padding counts only up to it);
//     else by the count of input elements in the window.
//   The backward of either gathers, for each input element, over the windows that contain it.

// The number of windows along one axis of n inputs (Note [Pooling windows]), as PyTorch's
// pooling_output_shape: the division rounds toward -inf, so a ceil_mode window may start where
// the floor's would leave none (L = 3, kernel 4, stride 2: one window). Every pooling's checks
// take it (1-d, 2-d and 3-d); the operands are below 2^31, so nothing overflows.
inline std::int64_t pooled_size(std::int64_t n, std::int64_t k, std::int64_t s, std::int64_t p,
                                std::int64_t d, bool ceil_mode) {
  const std::int64_t span = n + 2 * p - d * (k - 1) - 1 + (ceil_mode ? s - 1 : 0);
  std::int64_t out = (span >= 0 ? span / s : -((-span + s - 1) / s)) + 1;
  if (ceil_mode && (out - 1) * s >= n + p) --out;  // the last window would start in the padding
  return out;
}

// The geometry of a 2-D pooling over `planes` = N * C contiguous (H, W) planes.
struct Pool2dShape {
  std::int64_t planes = 0;
  std::int64_t H = 0, W = 0;          // input plane
  std::int64_t OH = 0, OW = 0;        // output plane
  std::int64_t kh = 1, kw = 1;        // kernel
  std::int64_t sh = 1, sw = 1;        // stride
  std::int64_t ph = 0, pw = 0;        // padding
  std::int64_t dh = 1, dw = 1;        // dilation (max pooling)
  bool count_include_pad = true;      // average pooling
  std::int64_t divisor_override = 0;  // average pooling; 0: none
};

LG_HOST_DEVICE LG_INLINE std::int64_t min64(std::int64_t a, std::int64_t b) {
  return a < b ? a : b;
}
LG_HOST_DEVICE LG_INLINE std::int64_t max64(std::int64_t a, std::int64_t b) {
  return a > b ? a : b;
}

// The taps of one window along one axis that lie inside the input: begin, begin + d, ... < end
// (empty when begin >= end). start = o * s - p; taps start + j d for j < k, clipped to [0, n).
struct WindowTaps {
  std::int64_t begin, end;
};
LG_HOST_DEVICE LG_INLINE WindowTaps window_taps(std::int64_t start, std::int64_t k, std::int64_t d,
                                                std::int64_t n) {
  // The first tap at or after 0: start rounded up onto the grid start + j d.
  const std::int64_t begin = start >= 0 ? start : start + (-start + d - 1) / d * d;
  return {begin, min64(start + (k - 1) * d + 1, n)};
}

// The range [begin, end) of outputs along one axis whose window's span contains input position
// i: span = (k - 1) d + 1 (a superset of the windows with a tap at i when d > 1; max pooling's
// backward picks by index among them).
struct OutputRange {
  std::int64_t begin, end;
};
LG_HOST_DEVICE LG_INLINE OutputRange windows_containing(std::int64_t i, std::int64_t span,
                                                        std::int64_t s, std::int64_t p,
                                                        std::int64_t num_outputs) {
  const std::int64_t begin = i + p < span ? 0 : (i + p - span) / s + 1;
  return {begin, min64((i + p) / s + 1, num_outputs)};
}

// Whether max pooling replaces the window's best so far with the next element v (row-major
// order): a strictly greater value (ties keep the first), or any NaN, so that of several NaNs
// the last one is the maximum and gets the gradient: PyTorch's `val > maxval || isnan(val)`
// (its CPU and CUDA kernels alike). Selects, not branches: which element wins is data-dependent.
template <typename M>
LG_HOST_DEVICE LG_INLINE bool max_pool_takes(M v, M best) {
  return (v > best) | (v != v);
}

// Output (oh, ow) of one plane of max pooling: the maximum (the last NaN wins, the first maximum
// on ties) and its index h * W + w in the plane; -inf and index -1 for a window holding no input
// element (Note [Pooling windows]).
template <typename T>
LG_HOST_DEVICE LG_INLINE void max_pool2d_at(const T* plane, const Pool2dShape& g, std::int64_t oh,
                                            std::int64_t ow, T* value, std::int64_t* index) {
  using M = opmath_t<T>;
  const WindowTaps rows = window_taps(oh * g.sh - g.ph, g.kh, g.dh, g.H);
  const WindowTaps cols = window_taps(ow * g.sw - g.pw, g.kw, g.dw, g.W);
  const bool empty = rows.begin >= rows.end || cols.begin >= cols.end;
  // Starting from -inf with the first tap's index, as PyTorch: an all -inf window picks its first.
  std::int64_t best_index = empty ? -1 : rows.begin * g.W + cols.begin;
  M best = -std::numeric_limits<M>::infinity();
  for (std::int64_t h = rows.begin; h < rows.end; h += g.dh) {
    for (std::int64_t w = cols.begin; w < cols.end; w += g.dw) {
      const M v = static_cast<M>(plane[h * g.W + w]);
      const bool take = max_pool_takes(v, best);
      best = take ? v : best;
      best_index = take ? h * g.W + w : best_index;
    }
  }
  *value = static_cast<T>(best);
  *index = best_index;
}

// Gradient of input (h, w) of max pooling: the sum, in a fixed order, of the output gradients of
// the windows whose saved maximum is this element.
template <typename T>
LG_HOST_DEVICE LG_INLINE T max_pool2d_grad_at(const T* grad_plane, const std::int64_t* index_plane,
                                              const Pool2dShape& g, std::int64_t h,
                                              std::int64_t w) {
  using M = opmath_t<T>;
  const OutputRange rows = windows_containing(h, (g.kh - 1) * g.dh + 1, g.sh, g.ph, g.OH);
  const OutputRange cols = windows_containing(w, (g.kw - 1) * g.dw + 1, g.sw, g.pw, g.OW);
  const std::int64_t self = h * g.W + w;
  M acc = 0;
  for (std::int64_t oh = rows.begin; oh < rows.end; ++oh) {
    for (std::int64_t ow = cols.begin; ow < cols.end; ++ow) {
      if (index_plane[oh * g.OW + ow] == self) acc += static_cast<M>(grad_plane[oh * g.OW + ow]);
    }
  }
  return static_cast<T>(acc);
}

// Note [Adaptive pooling windows]
//   PyTorch's adaptive pooling, along each axis of n inputs and m outputs: output i covers inputs
//   [floor(i n / m), ceil((i + 1) n / m)) (adaptive_begin, adaptive_end). Windows are never empty
//   (n, m >= 1), overlap where m does not divide n, and repeat inputs when m > n. Input k lies in
//   the windows of outputs [floor(k m / n), ceil((k + 1) m / n)): the same two functions with n
//   and m swapped, which is what the backward gathers over. ops_layers.cpp keeps n and m below
//   2^31, so i n cannot overflow. Adaptive max pooling takes the maximum as max pooling does
//   (max_pool_takes: the first maximum, the last NaN) starting from -inf with the window's first
//   index, as PyTorch's CPU kernel; it is the Pool2dShape's planes, H, W, OH and OW only.
LG_HOST_DEVICE LG_INLINE std::int64_t adaptive_begin(std::int64_t i, std::int64_t n,
                                                     std::int64_t m) {
  return i * n / m;
}
LG_HOST_DEVICE LG_INLINE std::int64_t adaptive_end(std::int64_t i, std::int64_t n, std::int64_t m) {
  return ((i + 1) * n + m - 1) / m;
}

// Output (oh, ow) of one plane of adaptive max pooling: the maximum and its index h * W + w.
template <typename T>
LG_HOST_DEVICE LG_INLINE void adaptive_max_pool2d_at(const T* plane, const Pool2dShape& g,
                                                     std::int64_t oh, std::int64_t ow, T* value,
                                                     std::int64_t* index) {
  using M = opmath_t<T>;
  const std::int64_t h0 = adaptive_begin(oh, g.H, g.OH), h1 = adaptive_end(oh, g.H, g.OH);
  const std::int64_t w0 = adaptive_begin(ow, g.W, g.OW), w1 = adaptive_end(ow, g.W, g.OW);
  std::int64_t best_index = h0 * g.W + w0;
  M best = -std::numeric_limits<M>::infinity();
  for (std::int64_t h = h0; h < h1; ++h) {
    for (std::int64_t w = w0; w < w1; ++w) {
      const M v = static_cast<M>(plane[h * g.W + w]);
      const bool take = max_pool_takes(v, best);
      best = take ? v : best;
      best_index = take ? h * g.W + w : best_index;
    }
  }
  *value = static_cast<T>(best);
  *index = best_index;
}

// Gradient of input (h, w) of adaptive max pooling: the sum, over the windows containing it in
// row-major order (the order in which a scatter-add over the outputs would add), of the output
// gradients whose saved index is this element.
template <typename T>
LG_HOST_DEVICE LG_INLINE T adaptive_max_pool2d_grad_at(const T* grad_plane,
                                                       const std::int64_t* index_plane,
                                                       const Pool2dShape& g, std::int64_t h,
                                                       std::int64_t w) {
  using M = opmath_t<T>;
  const std::int64_t oh0 = adaptive_begin(h, g.OH, g.H), oh1 = adaptive_end(h, g.OH, g.H);
  const std::int64_t ow0 = adaptive_begin(w, g.OW, g.W), ow1 = adaptive_end(w, g.OW, g.W);
  const std::int64_t self = h * g.W + w;
  M acc = 0;
  for (std::int64_t oh = oh0; oh < oh1; ++oh) {
    for (std::int64_t ow = ow0; ow < ow1; ++ow) {
      if (index_plane[oh * g.OW + ow] == self) acc += static_cast<M>(grad_plane[oh * g.OW + ow]);
    }
  }
  return static_cast<T>(acc);
}

// What average pooling's window starting at (h0, w0) divides by (Note [Pooling windows]).
LG_HOST_DEVICE LG_INLINE std::int64_t avg_pool2d_divisor(const Pool2dShape& g, std::int64_t h0,
                                                         std::int64_t w0) {
  if (g.divisor_override != 0) return g.divisor_override;
  if (g.count_include_pad) {
    return (min64(h0 + g.kh, g.H + g.ph) - h0) * (min64(w0 + g.kw, g.W + g.pw) - w0);
  }
  return (min64(h0 + g.kh, g.H) - max64(h0, 0)) * (min64(w0 + g.kw, g.W) - max64(w0, 0));
}

// Output (oh, ow) of average pooling.
template <typename T>
LG_HOST_DEVICE LG_INLINE T avg_pool2d_at(const T* plane, const Pool2dShape& g, std::int64_t oh,
                                         std::int64_t ow) {
  using M = opmath_t<T>;
  const std::int64_t h0 = oh * g.sh - g.ph, w0 = ow * g.sw - g.pw;
  const std::int64_t h_end = min64(h0 + g.kh, g.H), w_end = min64(w0 + g.kw, g.W);
  M acc = 0;
  for (std::int64_t h = max64(h0, 0); h < h_end; ++h) {
    for (std::int64_t w = max64(w0, 0); w < w_end; ++w)
      acc += static_cast<M>(plane[h * g.W + w]);
  }
  return static_cast<T>(acc / static_cast<M>(avg_pool2d_divisor(g, h0, w0)));
}

// Gradient of input (h, w) of average pooling: each window's output gradient over its divisor.
template <typename T>
LG_HOST_DEVICE LG_INLINE T avg_pool2d_grad_at(const T* grad_plane, const Pool2dShape& g,
                                              std::int64_t h, std::int64_t w) {
  using M = opmath_t<T>;
  const OutputRange rows = windows_containing(h, g.kh, g.sh, g.ph, g.OH);
  const OutputRange cols = windows_containing(w, g.kw, g.sw, g.pw, g.OW);
  M acc = 0;
  for (std::int64_t oh = rows.begin; oh < rows.end; ++oh) {
    for (std::int64_t ow = cols.begin; ow < cols.end; ++ow) {
      const std::int64_t divisor = avg_pool2d_divisor(g, oh * g.sh - g.ph, ow * g.sw - g.pw);
      acc += static_cast<M>(grad_plane[oh * g.OW + ow]) / static_cast<M>(divisor);
    }
  }
  return static_cast<T>(acc);
}

// Dropout keeps element i when its uniform number u in [0, 1) is >= p. Element i uses word
// i % 4 of Philox counter offset + i / 4 (the layout of random_math's float uniforms, for every
// dtype), so a mask is the same on every device for the same generator state; p = 1 drops all.
// Kernels that handle the four elements of a counter together draw the block once and call
// dropout_keep_lane for each word.
constexpr std::int64_t kDropoutPerCounter = 4;
LG_HOST_DEVICE LG_INLINE bool dropout_keep_lane(const philox::Block& block, int lane, double p) {
  return static_cast<double>(philox::uniform_float(block.x[lane])) >= p;
}
// The same test as an integer compare, for loops that run it in SIMD lanes: for p in [0, 1],
// uniform_float(word) >= p exactly when dropout_keep_word(word, dropout_keep_threshold(p)), as
// k 2^-24 >= p <=> k >= ceil(p 2^24) for the integer k = word >> 8 (p 2^24 is exact in double).
LG_HOST_DEVICE LG_INLINE std::uint32_t dropout_keep_threshold(double p) {
  return static_cast<std::uint32_t>(std::ceil(p * 16777216.0));
}
LG_HOST_DEVICE LG_INLINE bool dropout_keep_word(std::uint32_t word, std::uint32_t threshold) {
  return (word >> 8) >= threshold;
}
LG_HOST_DEVICE LG_INLINE bool dropout_keep(std::int64_t i, std::uint64_t seed, std::uint64_t offset,
                                           double p) {
  const philox::Block block =
      philox::philox4x32_10(offset + static_cast<std::uint64_t>(i / kDropoutPerCounter), seed);
  return dropout_keep_lane(block, static_cast<int>(i % kDropoutPerCounter), p);
}

// Softmax and logsumexp: the running maximum (a NaN element is skipped here and poisons the sum
// instead, on both devices), and the shift applied: the maximum, or 0 for a row of -inf (whose
// logsumexp is then -inf rather than NaN). A row holding +inf shifts by +inf, so all of its
// softmax, log_softmax and cross-entropy values are NaN, as PyTorch's.
template <typename M>
LG_HOST_DEVICE LG_INLINE M running_max(M a, M b) {
  return b > a ? b : a;
}
template <typename M>
LG_HOST_DEVICE LG_INLINE M softmax_shift(M max_value) {
  return max_value < M(0) && max_value - max_value != M(0) ? M(0) : max_value;
}

// ---- Class-index losses
// -------------------------------------------------------------------------- The weight of a sample
// whose target is class t, in nll_loss and cross_entropy: weight[t], or 1 with no class weight
// (weight == nullptr); 0 when t is ignore_index (the sample does not count); NaN for a target
// outside [0, C), which the CPU refuses before its kernels run and CUDA marks with a NaN loss
// (weight[t] is then never read). A sample's loss is this weight times -log_softmax(row)[t]; Mean
// divides the summed losses by the sum of these weights (PyTorch's total_weight), so with no class
// weight by the number of samples not ignored.
template <typename T>
LG_HOST_DEVICE LG_INLINE opmath_t<T> class_weight(const T* weight, std::int64_t t, std::int64_t C,
                                                  std::int64_t ignore_index) {
  using M = opmath_t<T>;
  if (t == ignore_index) return M(0);
  if (t < 0 || t >= C) return std::numeric_limits<M>::quiet_NaN();
  return weight == nullptr ? M(1) : static_cast<M>(weight[t]);
}

// ---- Interpolation (upsample) -------------------------------------------------------------------
// Note [Interpolation source indices]
//   A resize of `planes` = N * C contiguous (H, W) planes to (OH, OW), with PyTorch's index rules
//   (ATen's UpSample.h), so results match torch.nn.functional.interpolate:
//   - the step between output positions in input units, per dim: with align_corners
//     (in - 1) / (out - 1) (0 when out == 1); otherwise 1 / scale_factor when the user gave one,
//     else in / out;
//   - nearest: input index min(floor(out_index * step), in - 1), the step in float whatever the
//     dtype (as ATen); nearest-exact: min(floor((out_index + 0.5) * step), in - 1);
//   - bilinear: source position out_index * step with align_corners, else
//     max((out_index + 0.5) * step - 0.5, 0); taps i0 = floor, i1 = min(i0 + 1, in - 1) with
//     weights 1 - l and l (l = position - i0); an axis of equal sizes copies (i0 = i1, l = 0);
//   - bicubic: the same source position, not clamped at 0; i = floor (at most in - 1), t = position
//     - i in [0, 1]; four taps i - 1 .. i + 2, each clamped into [0, in - 1] (the edge repeated),
//     with Keys' cubic convolution weights for a = -0.75 (PyTorch's): W(1 + t), W(t), W(1 - t),
//     W(2 - t), where W(d) = ((a + 2) d - (a + 3)) d^2 + 1 for d <= 1 and ((a d - 5 a) d + 8 a) d -
//     4 a for 1 < d < 2 (they sum to 1). A resize that keeps both sizes with a step of 1 copies
//     the plane (copies_planes).
//   The backward adds each output's gradient into its taps with the same weights.
enum class ResizeMode : std::uint8_t { Nearest, NearestExact, Bilinear, Bicubic };

struct Resize2dShape {
  std::int64_t planes = 0;
  std::int64_t H = 0, W = 0;    // input plane
  std::int64_t OH = 0, OW = 0;  // output plane
  double scale_factor_h = 0.0;  // as the user gave it; 0: none (the step is H / OH)
  double scale_factor_w = 0.0;
  ResizeMode mode = ResizeMode::Nearest;
  bool align_corners = false;
};

// Whether the mode copies one input element per output (nearest and nearest-exact).
LG_HOST_DEVICE LG_INLINE bool copies_one_element(ResizeMode mode) {
  return mode == ResizeMode::Nearest || mode == ResizeMode::NearestExact;
}

// The step between output positions in input units (Note [Interpolation source indices]).
template <typename Acc>
LG_HOST_DEVICE LG_INLINE Acc resize_step(std::int64_t in, std::int64_t out, double scale_factor,
                                         bool align_corners) {
  if (align_corners) {
    return out > 1 ? static_cast<Acc>(in - 1) / static_cast<Acc>(out - 1) : Acc(0);
  }
  return scale_factor > 0.0 ? static_cast<Acc>(1.0 / scale_factor)
                            : static_cast<Acc>(in) / static_cast<Acc>(out);
}

// Whether an axis's resize is the identity: its size stays and its step is 1 (or it holds one
// element). A scale_factor that keeps the size but not the step (4 x 1.1 -> 4) resamples, as
// PyTorch 1.13's bicubic and antialiased forwards do.
LG_HOST_DEVICE LG_INLINE bool resize_keeps_axis(std::int64_t in, std::int64_t out,
                                                double scale_factor, bool align_corners) {
  return in == out && (in == 1 || resize_step<double>(in, out, scale_factor, align_corners) == 1.0);
}

// Whether a resize copies whole planes: bicubic that keeps both axes, whose weights are then
// (0, 1, 0, 0): the copy gives those values without 0 * inf = NaN beside an infinity (PyTorch's
// forward computes the weights and gives NaN there).
LG_HOST_DEVICE LG_INLINE bool copies_planes(const Resize2dShape& g) {
  return g.mode == ResizeMode::Bicubic &&
         resize_keeps_axis(g.H, g.OH, g.scale_factor_h, g.align_corners) &&
         resize_keeps_axis(g.W, g.OW, g.scale_factor_w, g.align_corners);
}

LG_HOST_DEVICE LG_INLINE std::int64_t nearest_source(std::int64_t out_index, float step,
                                                     std::int64_t in) {
  return min64(static_cast<std::int64_t>(floorf(static_cast<float>(out_index) * step)), in - 1);
}

LG_HOST_DEVICE LG_INLINE std::int64_t nearest_exact_source(std::int64_t out_index, float step,
                                                           std::int64_t in) {
  return min64(static_cast<std::int64_t>(floorf((static_cast<float>(out_index) + 0.5f) * step)),
               in - 1);
}

// The taps of one output position along one axis: `count` input indices (1 for the nearest modes,
// 2 for bilinear, 4 for bicubic) and their weights.
template <typename Acc>
struct AxisTaps {
  std::int64_t index[4];
  Acc weight[4];
  int count;
};

template <typename Acc>
LG_HOST_DEVICE LG_INLINE AxisTaps<Acc> linear_taps(std::int64_t out_index, Acc step,
                                                   std::int64_t in, std::int64_t out,
                                                   bool align_corners) {
  if (in == out) return {{out_index, out_index}, {Acc(1), Acc(0)}, 2};
  Acc position = align_corners ? step * static_cast<Acc>(out_index)
                               : step * (static_cast<Acc>(out_index) + Acc(0.5)) - Acc(0.5);
  if (position < Acc(0)) position = Acc(0);
  // The step is rounded to Acc: far along a long axis the position can round up to `in` itself,
  // so the lower tap is clamped too (as PyTorch's guard_index_and_lambda), its weight recomputed.
  const auto i0 = min64(static_cast<std::int64_t>(position), in - 1);
  Acc l1 = position - static_cast<Acc>(i0);
  l1 = l1 < Acc(0) ? Acc(0) : (l1 > Acc(1) ? Acc(1) : l1);
  return {{i0, i0 < in - 1 ? i0 + 1 : i0}, {Acc(1) - l1, l1}, 2};
}

// Keys' cubic convolution weights of the four taps around a source position t past its floor,
// a = -0.75 (PyTorch's get_cubic_upsample_coefficients, its operations in its order).
template <typename Acc>
LG_HOST_DEVICE LG_INLINE Acc cubic_near(Acc d) {  // W(d), d <= 1
  const Acc a = Acc(-0.75);
  return ((a + Acc(2)) * d - (a + Acc(3))) * d * d + Acc(1);
}
template <typename Acc>
LG_HOST_DEVICE LG_INLINE Acc cubic_far(Acc d) {  // W(d), 1 < d < 2
  const Acc a = Acc(-0.75);
  return ((a * d - Acc(5) * a) * d + Acc(8) * a) * d - Acc(4) * a;
}
template <typename Acc>
LG_HOST_DEVICE LG_INLINE void cubic_weights(Acc t, Acc* w) {
  w[0] = cubic_far(t + Acc(1));
  w[1] = cubic_near(t);
  w[2] = cubic_near(Acc(1) - t);
  w[3] = cubic_far(Acc(1) - t + Acc(1));
}

template <typename Acc>
LG_HOST_DEVICE LG_INLINE AxisTaps<Acc> cubic_taps(std::int64_t out_index, Acc step, std::int64_t in,
                                                  bool align_corners) {
  const Acc position = align_corners ? step * static_cast<Acc>(out_index)
                                     : step * (static_cast<Acc>(out_index) + Acc(0.5)) - Acc(0.5);
  const auto i = min64(static_cast<std::int64_t>(std::floor(position)), in - 1);
  Acc t = position - static_cast<Acc>(i);
  t = t < Acc(0) ? Acc(0) : (t > Acc(1) ? Acc(1) : t);
  AxisTaps<Acc> taps{};
  taps.count = 4;
  cubic_weights(t, taps.weight);
  for (int k = 0; k < 4; ++k) {
    const std::int64_t j = i - 1 + k;
    taps.index[k] = j < 0 ? 0 : (j > in - 1 ? in - 1 : j);
  }
  return taps;
}

// The taps of output position `o` of an axis of `out` from one of `in`, in `mode`.
template <typename Acc>
LG_HOST_DEVICE LG_INLINE AxisTaps<Acc> axis_taps(const Resize2dShape& g, std::int64_t o,
                                                 std::int64_t in, std::int64_t out,
                                                 double scale_factor) {
  switch (g.mode) {
    case ResizeMode::Nearest:
    case ResizeMode::NearestExact: {
      const float step = resize_step<float>(in, out, scale_factor, false);
      const std::int64_t i = g.mode == ResizeMode::Nearest ? nearest_source(o, step, in)
                                                           : nearest_exact_source(o, step, in);
      return {{i}, {Acc(1)}, 1};
    }
    case ResizeMode::Bilinear:
      return linear_taps<Acc>(o, resize_step<Acc>(in, out, scale_factor, g.align_corners), in, out,
                              g.align_corners);
    case ResizeMode::Bicubic:
      break;
  }
  return cubic_taps<Acc>(o, resize_step<Acc>(in, out, scale_factor, g.align_corners), in,
                         g.align_corners);
}

}  // namespace leangrad::layers_math
