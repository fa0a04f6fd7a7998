// 2-D convolution on the CPU: im2col + GEMM (kernels/cpu/gemm.h: oneDNN's sgemm or Eigen), one
// sample at a time, samples in parallel.
// For sample n and group g, with P = H_out * W_out pixels and K = C_in/groups * kH * kW taps:
//   col    (K, P)         = im2col(x[n, group g])       the patch under every output pixel
//   forward:  y[n, g]  (C_out/g, P) = w[g] (C_out/g, K) @ col          (+ bias)
//   input grad: dcol (K, P) = w[g]^T @ dy[n, g];  dx[n, g] = col2im(dcol)  (sums overlapping taps)
//   weight grad: dw[g] (C_out/g, K) += dy[n, g] @ col^T                 (summed over n)
// Index math is kernels/conv_geometry.h, shared with the CUDA implicit GEMM. A 1x1 convolution
// with stride 1 and no padding needs no im2col: col is x itself. float32 convolutions with enough
// channels go to oneDNN's direct convolution instead (kernels/cpu/conv_direct.h), stride-1 ones
// with few output channels to the loop over padded rows (kernels/cpu/conv_rows.h; Note [Which CPU
// convolution]).
#include <leangrad/kernels/backend.h>

#include <algorithm>
#include <type_traits>
#include <vector>

#include <leangrad/core/error.h>
#include <leangrad/kernels/cpu/conv_direct.h>
#include <leangrad/kernels/cpu/conv_rows.h>
#include <leangrad/kernels/cpu/gemm.h>
#include <leangrad/kernels/cpu/parallel_for.h>
#include <leangrad/kernels/cpu/sample_chunks.h>
#include <leangrad/kernels/ops.h>

namespace leangrad::kernels::cpu {

namespace {

bool is_pointwise(const Conv2dGeometry& g) {
  return g.kernel_h == 1 && g.kernel_w == 1 && g.stride_h == 1 && g.stride_w == 1 && g.pad_h == 0 &&
         g.pad_w == 0;
}

// The output columns [begin, end) whose tap reads inside the input row: iw = ow * stride - pad +
// tap * dilation lies in [0, in_w). Outside them the tap reads padding.
struct ValidColumns {
  std::int64_t begin, end;
};
inline ValidColumns valid_columns(std::int64_t out_w, std::int64_t in_w, std::int64_t tap,
                                  std::int64_t stride, std::int64_t pad, std::int64_t dilation) {
  const std::int64_t offset = tap * dilation - pad;  // iw = ow * stride + offset
  // first ow with ow * stride + offset >= 0, and first with ow * stride + offset >= in_w
  auto first_at_least = [&](std::int64_t bound) {
    const std::int64_t need = bound - offset;
    return need <= 0 ? std::int64_t{0} : (need + stride - 1) / stride;
  };
  const std::int64_t begin = std::min(out_w, first_at_least(0));
  const std::int64_t end = std::clamp(first_at_least(in_w), begin, out_w);
  return {begin, end};
}

// A "same-width" convolution: stride 1 and dilation 1 across, out_w == in_w, and stride 1 down (the
// usual 3 x 3, padding 1). Output row oh of tap (r, s) then reads input row oh + dr shifted by ds
// columns: output element i = oh * width + ow reads input element i + shift. So a tap's valid rows
// are one contiguous run [first, last) of col row and plane alike, except for the columns per row
// that wrap around into the neighbouring row, which hold padding. For a 14 x 14 image that is one
// copy where there would be fourteen short ones.
bool is_same_width(const Conv2dGeometry& g) {
  return g.stride_w == 1 && g.dilation_w == 1 && g.out_w == g.in_w && g.stride_h == 1;
}

struct SameWidthTap {
  ValidColumns rows, cols;   // the output rows and columns that read inside the input
  std::int64_t shift;        // input element = output element + shift
  std::int64_t first, last;  // the run from the first valid output element to one past the last

  bool empty() const { return rows.begin == rows.end || cols.begin == cols.end; }
};

SameWidthTap same_width_tap(const Conv2dGeometry& g, std::int64_t r, std::int64_t s) {
  SameWidthTap t;
  t.rows = valid_columns(g.out_h, g.in_h, r, 1, g.pad_h, g.dilation_h);
  t.cols = valid_columns(g.out_w, g.in_w, s, 1, g.pad_w, 1);
  t.shift = (r * g.dilation_h - g.pad_h) * g.out_w + (s - g.pad_w);
  t.first = t.rows.begin * g.out_w + t.cols.begin;
  t.last = (t.rows.end - 1) * g.out_w + t.cols.end;
  return t;
}

// Zeroes the columns of the tap's valid rows of `row` that wrap around (they read padding): a
// column or two per row, written in place rather than by a library call each.
template <typename T>
void zero_wrapped_columns(const SameWidthTap& t, std::int64_t width, T* row) {
  for (std::int64_t oh = t.rows.begin; oh < t.rows.end; ++oh) {
    T* out_row = row + oh * width;
    for (std::int64_t ow = 0; ow < t.cols.begin; ++ow)
      out_row[ow] = T(0);
    for (std::int64_t ow = t.cols.end; ow < width; ++ow)
      out_row[ow] = T(0);
  }
}

// One tap's col row (out_h x out_w values) of a same-width convolution.
template <typename T>
void im2col_same_width_row(const Conv2dGeometry& g, const T* plane, std::int64_t r, std::int64_t s,
                           T* row) {
  const SameWidthTap t = same_width_tap(g, r, s);
  if (t.empty()) {
    std::fill(row, row + g.out_pixels(), T(0));
    return;
  }
  std::fill(row, row + t.rows.begin * g.out_w, T(0));
  std::fill(row + t.rows.end * g.out_w, row + g.out_pixels(), T(0));
  std::copy(plane + t.first + t.shift, plane + t.last + t.shift, row + t.first);
  zero_wrapped_columns(t, g.out_w, row);
}

// col (K, P) = the patches of one group of one sample; x_group: (C_in/groups, H, W). Each col row
// segment is zeros, a copy (strided for stride > 1) of one input row, zeros; same-width
// convolutions (the usual 3 x 3, padding 1) copy a whole tap at once.
template <typename T>
void im2col(const Conv2dGeometry& g, const T* x_group, T* col) {
  const std::int64_t out_pixels = g.out_pixels();
  const bool same_width = is_same_width(g);
  for (std::int64_t c = 0; c < g.in_channels_per_group(); ++c) {
    const T* plane = x_group + c * g.in_pixels();
    for (std::int64_t r = 0; r < g.kernel_h; ++r) {
      for (std::int64_t s = 0; s < g.kernel_w; ++s) {
        T* row = col + ((c * g.kernel_h + r) * g.kernel_w + s) * out_pixels;
        if (same_width) {
          im2col_same_width_row(g, plane, r, s, row);
          continue;
        }
        const ValidColumns v = valid_columns(g.out_w, g.in_w, s, g.stride_w, g.pad_w, g.dilation_w);
        const std::int64_t offset = s * g.dilation_w - g.pad_w;
        for (std::int64_t oh = 0; oh < g.out_h; ++oh) {
          const std::int64_t ih = conv_input_coord(oh, r, g.stride_h, g.pad_h, g.dilation_h);
          T* out_row = row + oh * g.out_w;
          if (ih < 0 || ih >= g.in_h) {
            std::fill(out_row, out_row + g.out_w, T(0));
            continue;
          }
          std::fill(out_row, out_row + v.begin, T(0));
          std::fill(out_row + v.end, out_row + g.out_w, T(0));
          if (v.begin == v.end) continue;
          // src[(ow - v.begin) * stride] = x[ih, iw(ow)] for ow in [v.begin, v.end)
          const T* src = plane + ih * g.in_w + (v.begin * g.stride_w + offset);
          if (g.stride_w == 1) {
            std::copy(src, src + (v.end - v.begin), out_row + v.begin);
          } else {
            for (std::int64_t ow = v.begin; ow < v.end; ++ow)
              out_row[ow] = src[(ow - v.begin) * g.stride_w];
          }
        }
      }
    }
  }
}

// dx_group (C_in/groups, H, W) += col2im(col): the transpose of im2col. col is scratch and may be
// overwritten: a same-width convolution zeroes each tap's entries that wrap around into the
// padding (they have no input pixel) and then adds the tap's whole valid run to the plane at once,
// the transpose of im2col_same_width_row.
template <typename T>
void col2im_add(const Conv2dGeometry& g, T* col, T* dx_group) {
  const std::int64_t out_pixels = g.out_pixels();
  const bool same_width = is_same_width(g);
  for (std::int64_t c = 0; c < g.in_channels_per_group(); ++c) {
    T* plane = dx_group + c * g.in_pixels();
    for (std::int64_t r = 0; r < g.kernel_h; ++r) {
      for (std::int64_t s = 0; s < g.kernel_w; ++s) {
        T* row = col + ((c * g.kernel_h + r) * g.kernel_w + s) * out_pixels;
        if (same_width) {
          const SameWidthTap t = same_width_tap(g, r, s);
          if (t.empty()) continue;
          zero_wrapped_columns(t, g.out_w, row);
          for (std::int64_t i = t.first; i < t.last; ++i)
            plane[i + t.shift] += row[i];
          continue;
        }
        const ValidColumns v = valid_columns(g.out_w, g.in_w, s, g.stride_w, g.pad_w, g.dilation_w);
        const std::int64_t offset = s * g.dilation_w - g.pad_w;
        for (std::int64_t oh = 0; oh < g.out_h; ++oh) {
          const std::int64_t ih = conv_input_coord(oh, r, g.stride_h, g.pad_h, g.dilation_h);
          if (ih < 0 || ih >= g.in_h || v.begin == v.end) continue;
          T* dst = plane + ih * g.in_w + (v.begin * g.stride_w + offset);  // x[ih, iw(v.begin)]
          const T* col_row = row + oh * g.out_w;
          for (std::int64_t ow = v.begin; ow < v.end; ++ow)
            dst[(ow - v.begin) * g.stride_w] += col_row[ow];
        }
      }
    }
  }
}

// The patches of (sample n, group): x itself for a pointwise convolution, else im2col into `col`.
template <typename T>
const T* patches(const Conv2dGeometry& g, const T* x, std::int64_t n, std::int64_t group,
                 std::vector<T>& col) {
  const T* x_group = x + (n * g.in_channels + group * g.in_channels_per_group()) * g.in_pixels();
  if (is_pointwise(g)) return x_group;
  im2col(g, x_group, col.data());
  return col.data();
}

template <typename T>
void forward_typed(const Conv2dGeometry& g, T* y, const T* x, const T* w, const T* bias) {
  const std::int64_t k = g.patch_size(), p = g.out_pixels(), cout_g = g.out_channels_per_group();
  parallel_for(g.batch, 1, [&](std::int64_t begin, std::int64_t end) {
    std::vector<T> col(is_pointwise(g) ? 0 : k * p);
    for (std::int64_t n = begin; n < end; ++n) {
      for (std::int64_t group = 0; group < g.groups; ++group) {
        const T* cols = patches(g, x, n, group, col);
        T* yg = y + (n * g.out_channels + group * cout_g) * p;
        // yg (cout_g, p) = w[group] (cout_g, k) @ cols (k, p)
        gemm<T>(false, false, cout_g, p, k, T(1), w + group * cout_g * k, k, cols, p, T(0), yg, p);
        if (bias != nullptr) {
          for (std::int64_t co = 0; co < cout_g; ++co) {
            const T b = bias[group * cout_g + co];
            T* row = yg + co * p;
            for (std::int64_t i = 0; i < p; ++i)
              row[i] += b;
          }
        }
      }
    }
  });
}

template <typename T>
void input_grad_typed(const Conv2dGeometry& g, T* dx, const T* dy, const T* w) {
  const std::int64_t k = g.patch_size(), p = g.out_pixels(), cout_g = g.out_channels_per_group();
  parallel_for(g.batch, 1, [&](std::int64_t begin, std::int64_t end) {
    std::vector<T> dcol(is_pointwise(g) ? 0 : k * p);
    for (std::int64_t n = begin; n < end; ++n) {
      for (std::int64_t group = 0; group < g.groups; ++group) {
        const T* wg = w + group * cout_g * k;
        const T* dyg = dy + (n * g.out_channels + group * cout_g) * p;
        T* dx_group = dx + (n * g.in_channels + group * g.in_channels_per_group()) * g.in_pixels();
        // dcol (k, p) = w[group]^T (k, cout_g) @ dy[n, group] (cout_g, p); for a pointwise
        // convolution dx is dcol itself.
        T* dcol_out = is_pointwise(g) ? dx_group : dcol.data();
        gemm<T>(true, false, k, p, cout_g, T(1), wg, k, dyg, p, T(0), dcol_out, p);
        if (is_pointwise(g)) continue;
        std::fill(dx_group, dx_group + g.in_channels_per_group() * g.in_pixels(), T(0));
        col2im_add(g, dcol.data(), dx_group);
      }
    }
  });
}

template <typename T>
void weight_grad_typed(const Conv2dGeometry& g, T* dw, const T* dy, const T* x) {
  const std::int64_t k = g.patch_size(), p = g.out_pixels(), cout_g = g.out_channels_per_group();
  const auto add_samples = [&](std::int64_t first, std::int64_t last, T* sums) {
    std::vector<T> col(is_pointwise(g) ? 0 : k * p);
    for (std::int64_t n = first; n < last; ++n) {
      for (std::int64_t group = 0; group < g.groups; ++group) {
        const T* cols = patches(g, x, n, group, col);
        const T* dyg = dy + (n * g.out_channels + group * cout_g) * p;
        // dw[group] (cout_g, k) += dy[n, group] (cout_g, p) @ cols^T (p, k)
        gemm<T>(false, true, cout_g, k, p, T(1), dyg, p, cols, p, T(1), sums + group * cout_g * k,
                k);
      }
    }
  };
  // Chunks of the samples summed apart, then added in chunk order (kernels/cpu/sample_chunks.h).
  sum_over_sample_chunks(g.batch, g.out_channels * k, dw, add_samples);
}

// Note [Which CPU convolution]
//   A float32 convolution runs on oneDNN's direct convolution (kernels/cpu/conv_direct.h: its
//   generated kernels over channel-blocked layouts, the reorders from and to NCHW included) when
//   ops::cpu_conv2d_algorithm() is
//   - Direct, or
//   - Auto (the default), the CPU GEMM backend is oneDNN, and the entry's channel counts are
//     large enough, kDirectMinChannels = 16 per group (a whole AVX-512 block of channels, two
//     AVX2 blocks; below it oneDNN pads the channels to a block or switches to its first-layer
//     kernel):
//     - the forward and the input gradient: both C_in / groups and C_out / groups. With fewer
//       input channels the input gradient was 1.3 to 13 times slower direct (1, 3 and 8 -> 16
//       or 32 at batch 64), the forward up to 1.5 times slower (1 -> 32); with 16 and more on
//       both sides both entries were as fast or faster direct on every shape measured (1.00x to
//       1.32x);
//     - the weight gradient: C_out / groups alone. It was faster direct with any number of input
//       channels once there were 16 output channels (1 -> 32: 2.0x to 2.5x, 3 -> 32: 1.7x to
//       1.9x, 8 -> 16: 2.3x, 16 and more on both sides: 1.16x to 1.6x), and no faster with 8
//       (16 -> 8: 0.89x to 0.96x).
//     Measured at 1 and 2 threads on a quiet Zen 4 guest
//     (bench/results/2026-11-29-cpu-conv-quiet-zen4-2core.md, docs/kernels.md).
//   Otherwise, under Auto, a convolution of stride 1 and dilation 1 with few output channels per
//   group, at most kRowsMaxOutChannels = 4 for the forward and the input gradient and
//   kRowsMaxOutChannelsWeightGrad = 2 for the weight gradient, runs the loop over zero-padded rows
//   (kernels/cpu/conv_rows.h, Note [Convolution by padded rows]), float32 and float64 alike: there
//   im2col's traffic was the time. At batch 64 on 28 x 28, one thread, 16 -> 1 (srnet's tail):
//   forward 0.88 -> 0.36 ms, input grad 1.08 -> 0.20, weight grad 0.98 -> 0.45; 16 -> 4: 1.00 ->
//   0.69, 1.15 -> 0.62, but the weight gradient even (1.19 -> 1.21); 16 -> 8 about even; 1 -> 32
//   and 1 -> 64 1.3 to 4 times slower (bench/results/2026-12-06-cpu-conv-rows-zen4-2core.md).
//   Everything else runs im2col + GEMM: float64 (oneDNN has no float64 convolution), builds
//   without oneDNN, and any problem for which oneDNN offers no generated direct kernel on this
//   CPU (the entries of conv_direct.h return false; oneDNN's own GEMM and reference fallbacks are
//   never used). The paths sum in different orders; each is checked against the reference loop in
//   float64 (tests/kernels/test_conv.cpp).
constexpr std::int64_t kDirectMinChannels = 16;
constexpr std::int64_t kRowsMaxOutChannels = 4;
constexpr std::int64_t kRowsMaxOutChannelsWeightGrad = 2;

enum class Entry { Forward, InputGrad, WeightGrad };
enum class Path { Gemm, Direct, Rows };

// The path to try first; Direct falls back to Gemm where oneDNN declines.
Path path_for(const Conv2dGeometry& g, Entry entry) {
  switch (ops::cpu_conv2d_algorithm()) {
    case ops::CpuConv2dAlgorithm::Gemm:
      return Path::Gemm;
    case ops::CpuConv2dAlgorithm::Direct:
      return Path::Direct;
    case ops::CpuConv2dAlgorithm::Rows:
      return conv_rows_applies(g) ? Path::Rows : Path::Gemm;
    case ops::CpuConv2dAlgorithm::Auto:
      break;
  }
  const bool enough_inputs = g.in_channels_per_group() >= kDirectMinChannels;
  const bool enough_outputs = g.out_channels_per_group() >= kDirectMinChannels;
  const bool direct = entry == Entry::WeightGrad ? enough_outputs : enough_inputs && enough_outputs;
  if (direct && ops::cpu_gemm_backend() == ops::CpuGemmBackend::OneDnn) return Path::Direct;
  const std::int64_t rows_max =
      entry == Entry::WeightGrad ? kRowsMaxOutChannelsWeightGrad : kRowsMaxOutChannels;
  if (g.out_channels_per_group() <= rows_max && conv_rows_applies(g)) return Path::Rows;
  return Path::Gemm;
}

// Each entry on the path path_for chose; oneDNN's direct convolution is float32 only.
template <typename T>
void forward_on_path(const Conv2dGeometry& g, T* y, const T* x, const T* w, const T* bias) {
  switch (path_for(g, Entry::Forward)) {
    case Path::Rows:
      return conv2d_rows_forward(g, y, x, w, bias);
    case Path::Direct:
      if constexpr (std::is_same_v<T, float>) {
        if (onednn::conv2d_direct_forward(g, y, x, w, bias)) return;
      }
      break;
    case Path::Gemm:
      break;
  }
  forward_typed(g, y, x, w, bias);
}

template <typename T>
void input_grad_on_path(const Conv2dGeometry& g, T* dx, const T* dy, const T* w) {
  switch (path_for(g, Entry::InputGrad)) {
    case Path::Rows:
      return conv2d_rows_input_grad(g, dx, dy, w);
    case Path::Direct:
      if constexpr (std::is_same_v<T, float>) {
        if (onednn::conv2d_direct_input_grad(g, dx, dy, w)) return;
      }
      break;
    case Path::Gemm:
      break;
  }
  input_grad_typed(g, dx, dy, w);
}

template <typename T>
void weight_grad_on_path(const Conv2dGeometry& g, T* dw, const T* dy, const T* x) {
  switch (path_for(g, Entry::WeightGrad)) {
    case Path::Rows:
      return conv2d_rows_weight_grad(g, dw, dy, x);
    case Path::Direct:
      if constexpr (std::is_same_v<T, float>) {
        if (onednn::conv2d_direct_weight_grad(g, dw, dy, x)) return;
      }
      break;
    case Path::Gemm:
      break;
  }
  weight_grad_typed(g, dw, dy, x);
}

}  // namespace

void conv2d_forward(DType dtype, const Conv2dGeometry& g, void* y, const void* x, const void* w,
                    const void* bias) {
  switch (dtype) {
    case DType::Float32:
      return forward_on_path(g, static_cast<float*>(y), static_cast<const float*>(x),
                             static_cast<const float*>(w), static_cast<const float*>(bias));
    case DType::Float64:
      return forward_on_path(g, static_cast<double*>(y), static_cast<const double*>(x),
                             static_cast<const double*>(w), static_cast<const double*>(bias));
    default:
      LG_THROW(DTypeError, "conv2d (cpu kernel): expected float32 or float64, got ", dtype);
  }
}

void conv2d_input_grad(DType dtype, const Conv2dGeometry& g, void* dx, const void* dy,
                       const void* w) {
  switch (dtype) {
    case DType::Float32:
      return input_grad_on_path(g, static_cast<float*>(dx), static_cast<const float*>(dy),
                                static_cast<const float*>(w));
    case DType::Float64:
      return input_grad_on_path(g, static_cast<double*>(dx), static_cast<const double*>(dy),
                                static_cast<const double*>(w));
    default:
      LG_THROW(DTypeError, "conv2d_input_grad (cpu kernel): expected float32 or float64, got ",
               dtype);
  }
}

void conv2d_weight_grad(DType dtype, const Conv2dGeometry& g, void* dw, const void* dy,
                        const void* x) {
  switch (dtype) {
    case DType::Float32:
      return weight_grad_on_path(g, static_cast<float*>(dw), static_cast<const float*>(dy),
                                 static_cast<const float*>(x));
    case DType::Float64:
      return weight_grad_on_path(g, static_cast<double*>(dw), static_cast<const double*>(dy),
                                 static_cast<const double*>(x));
    default:
      LG_THROW(DTypeError, "conv2d_weight_grad (cpu kernel): expected float32 or float64, got ",
               dtype);
  }
}

}  // namespace leangrad::kernels::cpu
