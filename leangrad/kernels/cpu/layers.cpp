// The layer kernels on the CPU: plain loops over the shared per-element math
// (kernels/layers_math.h), split across threads with parallel_for. Softmax and the losses walk one
// run (a row, or a strided column of an (outer, R, inner) block) per task, accumulating in
// opmath_t (float for the 16-bit floats, double for float64). Softmax's and cross_entropy's loops
// here are their reference (kernels/cpu/softmax_reference.h); the library runs the vectorised
// kernels of kernels/cpu/softmax_vectorized.cpp.
#include <leangrad/kernels/backend.h>
#include <leangrad/kernels/cpu/softmax_reference.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <vector>

#include <leangrad/kernels/cpu/half_convert.h>
#include <leangrad/kernels/cpu/parallel_for.h>
#include <leangrad/kernels/dispatch.h>

namespace leangrad::kernels::cpu {

using layers_math::Pool2dShape;

// ---- Pooling ---------------------------------------------------------------------------------

// best, at = v, v_at where max_pool_takes(v, best), by masks rather than branches, so that the
// comparisons run in SIMD lanes, and where they do not (a row's scalar remainder), on data such
// as a network's activations, where each comparison is a coin toss, pay no misprediction (three
// an output when the 2 x 2 window's scalar code branched). Every max-pool loop of this file that
// walks a row takes its taps through it.
template <typename M>
[[gnu::always_inline]] inline void take_if(M v, std::int64_t v_at, M& best, std::int64_t& at) {
  using Bits = std::conditional_t<sizeof(M) == 4, std::uint32_t, std::uint64_t>;
  const bool take = layers_math::max_pool_takes(v, best);
  const Bits mask = Bits{0} - static_cast<Bits>(take);
  best = std::bit_cast<M>((std::bit_cast<Bits>(best) & ~mask) | (std::bit_cast<Bits>(v) & mask));
  const std::int64_t at_mask = -static_cast<std::int64_t>(take);
  at = (at & ~at_mask) | (v_at & at_mask);
}

// Output rows [begin, end) (row = plane * OH + oh) of the usual 2 x 2 window at stride 2 inside
// the plane: the four taps of a window in one pass, in max_pool2d_at's order (so the same maxima
// and indices), over blocks of 8 outputs of the row (4 for a row of 4 to 7), the last block
// moved back to end at the row's end (its first outputs computed again, to the same values), so
// that a row of any length from 4 up runs in SIMD lanes with no scalar remainder; the plane and
// row are stepped rather than divided out again. The tap-at-a-time loop's four passes over rows
// of 14 and 7 outputs (the CNN's) had run mostly scalar, branching on each comparison: 1.49 and
// 1.54 ms where this takes 0.39 and 0.30 (bench/results/2026-12-06-cpu-max-pool-2x2-zen4-2core.md).
// A float16 row pair is widened into float buffers first, and the row's maxima narrowed from one
// (Note [float16 pooling in float lanes]).
template <typename T, typename M>
void max_pool2d_two_by_two(const T* x, T* y, std::int64_t* indices, std::int64_t H, std::int64_t W,
                           std::int64_t OH, std::int64_t OW, std::int64_t begin, std::int64_t end) {
  constexpr bool kHalf = std::is_same_v<T, Half>;
  using In = std::conditional_t<kHalf, float, T>;
  std::vector<float> widened(kHalf ? static_cast<std::size_t>(5 * OW) : 0);
  std::int64_t plane = begin / OH;
  std::int64_t oh = begin % OH;
  for (std::int64_t row = begin; row < end; ++row) {
    const std::int64_t top = 2 * oh * W;  // the window's first row, in the plane
    const In* __restrict r0;
    const In* __restrict r1;
    In* __restrict y_row;
    if constexpr (kHalf) {
      widen(x + plane * H * W + top, widened.data(), 2 * OW);
      widen(x + plane * H * W + top + W, widened.data() + 2 * OW, 2 * OW);
      r0 = widened.data();
      r1 = widened.data() + 2 * OW;
      y_row = widened.data() + 4 * OW;
    } else {
      r0 = x + plane * H * W + top;
      r1 = r0 + W;
      y_row = y + row * OW;
    }
    std::int64_t* __restrict index_row = indices + row * OW;
    auto outputs = [&](std::int64_t from, auto count) {
      for (std::int64_t k = 0; k < count; ++k) {
        const std::int64_t ow = from + k;
        const std::int64_t c = 2 * ow;
        M best = static_cast<M>(r0[c]);
        std::int64_t at = top + c;
        take_if(static_cast<M>(r0[c + 1]), top + c + 1, best, at);
        take_if(static_cast<M>(r1[c]), top + W + c, best, at);
        take_if(static_cast<M>(r1[c + 1]), top + W + c + 1, best, at);
        y_row[ow] = static_cast<In>(best);
        index_row[ow] = at;
      }
    };
    constexpr std::integral_constant<std::int64_t, 8> kEight;
    constexpr std::integral_constant<std::int64_t, 4> kFour;
    if (OW >= 8) {
      std::int64_t ow = 0;
      for (; ow + 8 <= OW; ow += 8)
        outputs(ow, kEight);
      if (ow < OW) outputs(OW - 8, kEight);  // the last 8 again, overlapping: the same values
    } else if (OW >= 4) {
      outputs(0, kFour);
      outputs(OW - 4, kFour);
    } else {
      outputs(0, OW);
    }
    if constexpr (kHalf) narrow(y_row, y + row * OW, OW);
    if (++oh == OH) {
      oh = 0;
      ++plane;
    }
  }
}

// Pooling walks whole rows, so the index arithmetic (divisions) is done once a row, not once an
// element: per element it cost more than the comparisons themselves.
//
// Note [float16 pooling in float lanes]
//   A float16 tap is compared in float (M), each element widened and each maximum narrowed back
//   through core/half.h one value at a time, branchy integer code that kept the row loops
//   scalar: max_pool2d of a (32, 64, 32, 32) float16 took 4.8 ms on one thread, float32's 0.47.
//   So the input rows a row of windows reads are widened into a float buffer by
//   kernels/cpu/half_convert.h (F16C) and the maxima narrowed from a float row: the same values
//   compared in the same order, each maximum narrowed by the same rounding (core/half.h's, which
//   the lanes reproduce), so the same bits and indices: 0.65 ms. Average pooling does the same both
//   ways (the input rows, and the upstream rows whose shares the backward spreads, widened; each
//   output or input row's sums narrowed): (16, 64, 32, 32) by 2 x 2, forward and backward under
//   a loss, 5.6 -> 2.0 ms (float32 1.5).

// row[0, n) as the pooling loops read it: a float16 row widened into `buffer` (n floats at
// least), any other the row itself. Note [float16 pooling in float lanes].
template <typename T>
const auto* pooling_row(const T* row, std::int64_t n, std::vector<float>& buffer) {
  if constexpr (std::is_same_v<T, Half>) {
    widen(row, buffer.data(), n);
    return static_cast<const float*>(buffer.data());
  } else {
    return row;
  }
}

void max_pool2d(DType dtype, void* out, std::int64_t* indices, const void* in,
                const Pool2dShape& g) {
  // Every window inside the plane (no padding, and with ceil_mode no window reaching past the
  // input): a whole output row is compared one window tap at a time, in the order max_pool2d_at
  // visits them, so the result (ties and NaNs included) is the same; the loop over the row has no
  // dependency chain and vectorizes, where one window at a time waited on each comparison.
  const std::int64_t span_h = (g.kh - 1) * g.dh + 1, span_w = (g.kw - 1) * g.dw + 1;
  const bool inside = g.ph == 0 && g.pw == 0 && (g.OH - 1) * g.sh + span_h <= g.H &&
                      (g.OW - 1) * g.sw + span_w <= g.W;
  const bool two_by_two =
      inside && g.kh == 2 && g.kw == 2 && g.sh == 2 && g.sw == 2 && g.dh == 1 && g.dw == 1;
  dispatch_floating(dtype, "max_pool2d", [&]<typename T>() {
    using M = opmath_t<T>;
    const T* x = static_cast<const T*>(in);
    T* y = static_cast<T*>(out);
    if (two_by_two) {
      parallel_for(g.planes * g.OH, grain_for(16 * g.OW), [&](std::int64_t b, std::int64_t e) {
        max_pool2d_two_by_two<T, M>(x, y, indices, g.H, g.W, g.OH, g.OW, b, e);
      });
      return;
    }
    constexpr bool kHalf = std::is_same_v<T, Half>;
    parallel_for(g.planes * g.OH, grain_for(16 * g.OW), [&](std::int64_t b, std::int64_t e) {
      std::vector<M> best(inside ? static_cast<std::size_t>(g.OW) : 0);
      // float16: each input row a window row reads, widened (Note [float16 pooling in float
      // lanes]).
      std::vector<float> widened(kHalf && inside ? static_cast<std::size_t>(g.W) : 0);
      for (std::int64_t row = b; row < e; ++row) {  // row = plane * OH + oh
        const T* plane = x + row / g.OH * g.H * g.W;
        const std::int64_t oh = row % g.OH;
        T* y_row = y + row * g.OW;
        std::int64_t* index_row = indices + row * g.OW;
        if (!inside) {
          for (std::int64_t ow = 0; ow < g.OW; ++ow)
            layers_math::max_pool2d_at(plane, g, oh, ow, &y_row[ow], &index_row[ow]);
          continue;
        }
        // Locals, so that the stores to the rows cannot be taken for changes of g.
        const std::int64_t W = g.W, OW = g.OW, sw = g.sw, h0 = oh * g.sh;
        M* best_row = best.data();
        const auto* first_row = pooling_row(plane + h0 * W, W, widened);
        for (std::int64_t ow = 0; ow < OW; ++ow) {
          best_row[ow] = static_cast<M>(first_row[ow * sw]);
          index_row[ow] = h0 * W + ow * sw;
        }
        for (std::int64_t i = 0; i < g.kh; ++i) {  // tap (i, j) of every window of the row
          const auto* window_row =
              i == 0 ? first_row : pooling_row(plane + (h0 + i * g.dh) * W, W, widened);
          for (std::int64_t j = i == 0 ? 1 : 0; j < g.kw; ++j) {
            const std::int64_t offset = (h0 + i * g.dh) * W + j * g.dw;
            const auto* x_row = window_row + j * g.dw;
            for (std::int64_t ow = 0; ow < OW; ++ow)
              take_if(static_cast<M>(x_row[ow * sw]), offset + ow * sw, best_row[ow],
                      index_row[ow]);
          }
        }
        if constexpr (kHalf) {
          narrow(best_row, y_row, OW);
        } else {
          for (std::int64_t ow = 0; ow < g.OW; ++ow)
            y_row[ow] = static_cast<T>(best[static_cast<std::size_t>(ow)]);
        }
      }
    });
  });
}

void max_pool2d_backward(DType dtype, void* grad_in, const void* grad_out,
                         const std::int64_t* indices, const Pool2dShape& g) {
  dispatch_floating(dtype, "max_pool2d_backward", [&]<typename T>() {
    const T* gy = static_cast<const T*>(grad_out);
    T* gx = static_cast<T*>(grad_in);
    const std::int64_t plane_in = g.H * g.W, plane_out = g.OH * g.OW;
    if ((g.kh - 1) * g.dh + 1 <= g.sh && (g.kw - 1) * g.dw + 1 <= g.sw) {
      // Windows that do not overlap (the usual kernel = stride): each input receives at most one
      // output's gradient, so scattering gives exactly what max_pool2d_grad_at's gather gives.
      // Index -1 (a window holding no input) receives nothing.
      parallel_for(g.planes, grain_for(8 * plane_in), [&](std::int64_t b, std::int64_t e) {
        std::fill(gx + b * plane_in, gx + e * plane_in, T(0));
        for (std::int64_t p = b; p < e; ++p) {
          for (std::int64_t o = 0; o < plane_out; ++o) {
            const std::int64_t at = indices[p * plane_out + o];
            if (at >= 0) gx[p * plane_in + at] = gy[p * plane_out + o];
          }
        }
      });
      return;
    }
    parallel_for(g.planes * g.H, grain_for(8 * g.W), [&](std::int64_t b, std::int64_t e) {
      for (std::int64_t row = b; row < e; ++row) {  // row = plane * H + h
        const std::int64_t p = row / g.H, h = row % g.H;
        for (std::int64_t w = 0; w < g.W; ++w) {
          gx[row * g.W + w] =
              layers_math::max_pool2d_grad_at(gy + p * plane_out, indices + p * plane_out, g, h, w);
        }
      }
    });
  });
}

// One task walks whole output rows (forward) or input rows (backward, a gather: each input
// element sums the gradients of the windows that picked it, in a fixed order, as on CUDA).
void adaptive_max_pool2d(DType dtype, void* out, std::int64_t* indices, const void* in,
                         const Pool2dShape& g) {
  dispatch_floating(dtype, "adaptive_max_pool2d", [&]<typename T>() {
    const T* x = static_cast<const T*>(in);
    T* y = static_cast<T*>(out);
    parallel_for(g.planes * g.OH, grain_for(8 * g.OW), [&](std::int64_t b, std::int64_t e) {
      for (std::int64_t row = b; row < e; ++row) {  // row = plane * OH + oh
        const T* plane = x + row / g.OH * g.H * g.W;
        for (std::int64_t ow = 0; ow < g.OW; ++ow) {
          layers_math::adaptive_max_pool2d_at(plane, g, row % g.OH, ow, &y[row * g.OW + ow],
                                              &indices[row * g.OW + ow]);
        }
      }
    });
  });
}

void adaptive_max_pool2d_backward(DType dtype, void* grad_in, const void* grad_out,
                                  const std::int64_t* indices, const Pool2dShape& g) {
  dispatch_floating(dtype, "adaptive_max_pool2d_backward", [&]<typename T>() {
    const T* gy = static_cast<const T*>(grad_out);
    T* gx = static_cast<T*>(grad_in);
    const std::int64_t plane_out = g.OH * g.OW;
    parallel_for(g.planes * g.H, grain_for(8 * g.W), [&](std::int64_t b, std::int64_t e) {
      for (std::int64_t row = b; row < e; ++row) {  // row = plane * H + h
        const std::int64_t p = row / g.H, h = row % g.H;
        for (std::int64_t w = 0; w < g.W; ++w) {
          gx[row * g.W + w] = layers_math::adaptive_max_pool2d_grad_at(
              gy + p * plane_out, indices + p * plane_out, g, h, w);
        }
      }
    });
  });
}

// The outputs ow in [begin, end) whose window's tap j (input column ow * sw - pw + j) lies in
// [0, W): the columns tap j of a row of windows reads, for each j < kw (the same for every row). A
// few steps from each end at most (the padding is at most half a window, and ceil_mode adds at
// most one window past the input).
struct TapColumns {
  std::int64_t begin, end;
};
std::vector<TapColumns> tap_columns(const Pool2dShape& g) {
  std::vector<TapColumns> taps;
  for (std::int64_t j = 0; j < g.kw; ++j) {
    std::int64_t begin = 0, end = g.OW;
    while (begin < end && begin * g.sw - g.pw + j < 0)
      ++begin;
    while (end > begin && (end - 1) * g.sw - g.pw + j >= g.W)
      --end;
    taps.push_back({begin, end});
  }
  return taps;
}

// Average pooling a row of windows at a time, as max pooling's forward, and its backward a row of
// inputs at a time: each sum takes its terms in the order of layers_math's avg_pool2d_at and
// avg_pool2d_grad_at (the reference loops, which the CUDA kernels run), so the results are theirs
// bit for bit; the loops over a row run in SIMD lanes, where the reference's divisions of the
// element index and window arithmetic per element took 2 times LibTorch's time.
//  - forward: acc[ow] += x[h, ow * sw - pw + j] for h over the window's rows, then j = 0..kw-1 (an
//    input row's taps in order of w), each tap over the columns it reaches; then acc / divisor.
//  - backward: input row h receives gy[oh, ow] / divisor(oh, ow) from each window row oh that
//    covers it, in order of oh, and within one oh from windows in order of ow: for a fixed input
//    column w = ow * sw - pw + j a larger ow is a smaller j, so j runs from kw - 1 down to 0.
void avg_pool2d(DType dtype, void* out, const void* in, const Pool2dShape& g) {
  dispatch_floating(dtype, "avg_pool2d", [&]<typename T>() {
    using M = opmath_t<T>;
    const T* x = static_cast<const T*>(in);
    T* y = static_cast<T*>(out);
    parallel_for(
        g.planes * g.OH, grain_for(g.kh * g.kw * g.OW), [&](std::int64_t b, std::int64_t e) {
          // Note [float16 pooling in float lanes]
          constexpr bool kHalf = std::is_same_v<T, Half>;
          std::vector<M> acc(static_cast<std::size_t>(g.OW));
          std::vector<float> widened(kHalf ? static_cast<std::size_t>(g.W) : 0);
          const std::vector<TapColumns> taps = tap_columns(g);
          for (std::int64_t row = b; row < e; ++row) {  // row = plane * OH + oh
            const T* plane = x + row / g.OH * g.H * g.W;
            const std::int64_t h0 = row % g.OH * g.sh - g.ph;
            std::fill(acc.begin(), acc.end(), M(0));
            M* a = acc.data();
            const std::int64_t sw = g.sw, shift = g.pw;
            for (std::int64_t h = std::max<std::int64_t>(h0, 0); h < std::min(h0 + g.kh, g.H);
                 ++h) {
              const auto* x_row = pooling_row(plane + h * g.W, g.W, widened);
              for (std::int64_t j = 0; j < g.kw; ++j) {
                const TapColumns c = taps[static_cast<std::size_t>(j)];
                const std::int64_t offset = j - shift;  // tap j of window ow: ow * sw + offset
                for (std::int64_t ow = c.begin; ow < c.end; ++ow)
                  a[ow] += static_cast<M>(x_row[ow * sw + offset]);
              }
            }
            T* y_row = y + row * g.OW;
            for (std::int64_t ow = 0; ow < g.OW; ++ow) {
              const std::int64_t divisor = layers_math::avg_pool2d_divisor(g, h0, ow * sw - shift);
              if constexpr (kHalf)
                a[ow] /= static_cast<M>(divisor);
              else
                y_row[ow] = static_cast<T>(a[ow] / static_cast<M>(divisor));
            }
            if constexpr (kHalf) narrow(a, y_row, g.OW);
          }
        });
  });
}

void avg_pool2d_backward(DType dtype, void* grad_in, const void* grad_out, const Pool2dShape& g) {
  dispatch_floating(dtype, "avg_pool2d_backward", [&]<typename T>() {
    using M = opmath_t<T>;
    const T* gy = static_cast<const T*>(grad_out);
    T* gx = static_cast<T*>(grad_in);
    const std::int64_t kh_windows = (g.kh + g.sh - 1) / g.sh;  // window rows covering an input row
    parallel_for(g.planes * g.H, grain_for(kh_windows * g.kw * g.OW),
                 [&](std::int64_t b, std::int64_t e) {
                   // Note [float16 pooling in float lanes]
                   constexpr bool kHalf = std::is_same_v<T, Half>;
                   std::vector<M> acc(static_cast<std::size_t>(g.W));
                   std::vector<float> gy_widened(kHalf ? static_cast<std::size_t>(g.OW) : 0);
                   // The shares gy / divisor of the output rows the current input row is under,
                   // each output row's computed once and kept in a ring (slot oh % ring) while
                   // the next input rows need it: an input row is under at most kh_windows
                   // consecutive output rows, and there are OH. held: the plane * OH + oh of
                   // each slot.
                   const std::int64_t ring = std::max<std::int64_t>(1, std::min(kh_windows, g.OH));
                   std::vector<M> shares(static_cast<std::size_t>(ring * g.OW));
                   std::vector<std::int64_t> held(static_cast<std::size_t>(ring), -1);
                   const std::vector<TapColumns> taps = tap_columns(g);
                   for (std::int64_t row = b; row < e; ++row) {  // row = plane * H + h
                     const std::int64_t p = row / g.H, h = row % g.H;
                     std::fill(acc.begin(), acc.end(), M(0));
                     M* a = acc.data();
                     const std::int64_t sw = g.sw, shift = g.pw;
                     const layers_math::OutputRange rows =
                         layers_math::windows_containing(h, g.kh, g.sh, g.ph, g.OH);
                     for (std::int64_t oh = rows.begin; oh < rows.end; ++oh) {
                       const auto slot = static_cast<std::size_t>(oh % ring);
                       M* q = shares.data() + slot * static_cast<std::size_t>(g.OW);
                       const std::int64_t out_row = p * g.OH + oh;
                       if (held[slot] != out_row) {
                         held[slot] = out_row;
                         const auto* gy_row = pooling_row(gy + out_row * g.OW, g.OW, gy_widened);
                         const std::int64_t h0 = oh * g.sh - g.ph;
                         for (std::int64_t ow = 0; ow < g.OW; ++ow) {
                           const std::int64_t divisor =
                               layers_math::avg_pool2d_divisor(g, h0, ow * sw - shift);
                           q[ow] = static_cast<M>(gy_row[ow]) / static_cast<M>(divisor);
                         }
                       }
                       for (std::int64_t j = g.kw - 1; j >= 0; --j) {
                         const TapColumns c = taps[static_cast<std::size_t>(j)];
                         const std::int64_t offset = j - shift;  // column ow * sw + offset
                         for (std::int64_t ow = c.begin; ow < c.end; ++ow)
                           a[ow * sw + offset] += q[ow];
                       }
                     }
                     T* gx_row = gx + row * g.W;
                     if constexpr (kHalf) {
                       narrow(a, gx_row, g.W);
                     } else {
                       for (std::int64_t w = 0; w < g.W; ++w)
                         gx_row[w] = static_cast<T>(a[w]);
                     }
                   }
                 });
  });
}

// ---- Dropout ---------------------------------------------------------------------------------

// Note [Dropout's keeps on the CPU]
//   Element i is kept when lane i % 4 of the Philox block of counter offset + i / 4, a float
//   k 2^-24 from its top 24 bits, is >= p (layers_math::dropout_keep, the definition the devices
//   share). The loop takes kDropoutBatch counters at a time: first their blocks into a buffer in
//   element order, a loop over counters that GCC runs in SIMD lanes (the 32 x 32 -> 64-bit
//   products as vpmuludq); then the elements, the keep as the integer compare k >= ceil(p 2^24)
//   (layers_math::dropout_keep_word, the same test), and the output selected by a bit mask (a
//   select of a product, which may trap, stayed a branch to GCC). It computed a whole block for
//   every element, four times over, in a loop that stayed scalar: dropout of (4096, 4096) floats
//   forward and backward took 284-298 ms on one thread, and takes 73-77.
constexpr std::int64_t kDropoutBatch = 64;

// Note [float16 dropout in float lanes]
//   Both directions compute x * scale in float and round it to the dtype. For float16 the loops
//   above and below converted each element through core/half.h, branchy integer code that stays
//   scalar: dropout of a (2048, 2048) float16 took 34.5 ms on one thread, float32's 7.0. So a
//   float16 batch is widened into a float buffer and its products narrowed back by
//   kernels/cpu/half_convert.h's lanes (core/half.h's bits), then kept or zeroed as before: 9.9
//   ms.
constexpr std::int64_t kScaleChunk = 512;

// out[j] = Half(float(x[j]) * scale) for j < n <= kScaleChunk: core/half.h's bits, in lanes.
void scale_half(const Half* x, float scale, std::int64_t n, Half* out) {
  float wide[kScaleChunk];
  widen(x, wide, n);
  for (std::int64_t j = 0; j < n; ++j)
    wide[j] *= scale;
  narrow(wide, out, n);
}

// v where keep is 1, +0 where it is 0, by the bits of v.
template <typename T>
T kept_or_zero(T v, std::uint32_t keep) {
  using U = std::conditional_t<sizeof(T) == 8, std::uint64_t,
                               std::conditional_t<sizeof(T) == 4, std::uint32_t, std::uint16_t>>;
  const U select = static_cast<U>(U{0} - static_cast<U>(keep));
  return std::bit_cast<T>(static_cast<U>(std::bit_cast<U>(v) & select));
}

void dropout(DType dtype, void* out, bool* mask, const void* in, std::int64_t numel, double p,
             double scale, std::uint64_t seed, std::uint64_t offset) {
  dispatch_floating(dtype, "dropout", [&]<typename T>() {
    using M = opmath_t<T>;
    const T* x = static_cast<const T*>(in);
    T* y = static_cast<T*>(out);
    const M s = static_cast<M>(scale);
    constexpr std::int64_t kLanes = layers_math::kDropoutPerCounter;
    const std::uint32_t threshold = layers_math::dropout_keep_threshold(p);
    auto* keeps = reinterpret_cast<std::uint8_t*>(mask);
    parallel_for(numel, kElementwiseGrain / 4, [&](std::int64_t b, std::int64_t e) {
      // Copies of the pointers and parameters in this frame: a store to keeps (bytes, which may
      // alias anything for all GCC knows) would otherwise have the loop read them again from the
      // closure at every element, and it stayed scalar.
      const T* const xs = x;
      T* const ys = y;
      std::uint8_t* const ks = keeps;
      const M scale_by = s;
      const std::uint32_t keep_from = threshold;
      alignas(64) std::uint32_t words[kDropoutBatch * kLanes];
      for (std::int64_t first = b / kLanes; first * kLanes < e; first += kDropoutBatch) {
        const std::int64_t counters = std::min(kDropoutBatch, (e + kLanes - 1) / kLanes - first);
        for (std::int64_t c = 0; c < counters; ++c) {
          const philox::Block block =
              philox::philox4x32_10(offset + static_cast<std::uint64_t>(first + c), seed);
          words[c * kLanes + 0] = block.x[0];
          words[c * kLanes + 1] = block.x[1];
          words[c * kLanes + 2] = block.x[2];
          words[c * kLanes + 3] = block.x[3];
        }
        const std::int64_t base = first * kLanes;
        const std::int64_t end = std::min(e, base + counters * kLanes);
        const std::int64_t start = std::max(b, base);
        if constexpr (std::is_same_v<T, Half>) {  // Note [float16 dropout in float lanes]
          static_assert(kDropoutBatch * kLanes <= kScaleChunk);
          Half scaled[kScaleChunk];
          scale_half(xs + start, scale_by, end - start, scaled);
          for (std::int64_t i = start; i < end; ++i) {
            const std::uint32_t keep =
                layers_math::dropout_keep_word(words[i - base], keep_from) ? 1u : 0u;
            ks[i] = static_cast<std::uint8_t>(keep);
            ys[i] = kept_or_zero(scaled[i - start], keep);
          }
          continue;
        }
        for (std::int64_t i = start; i < end; ++i) {
          const std::uint32_t keep =
              layers_math::dropout_keep_word(words[i - base], keep_from) ? 1u : 0u;
          const T v = static_cast<T>(static_cast<M>(xs[i]) * scale_by);
          ks[i] = static_cast<std::uint8_t>(keep);
          ys[i] = kept_or_zero(v, keep);
        }
      }
    });
  });
}

void dropout_backward(DType dtype, void* grad_in, const void* grad_out, const bool* mask,
                      std::int64_t numel, double scale) {
  dispatch_floating(dtype, "dropout_backward", [&]<typename T>() {
    using M = opmath_t<T>;
    const T* gy = static_cast<const T*>(grad_out);
    T* gx = static_cast<T*>(grad_in);
    const M s = static_cast<M>(scale);
    // The mask's bytes read as uint8, which GCC vectorises a select on (a load of bool it does
    // not: cpu::where in elementwise.cpp says more).
    const auto* keep = reinterpret_cast<const std::uint8_t*>(mask);
    parallel_for(numel, kElementwiseGrain, [&](std::int64_t b, std::int64_t e) {
      if constexpr (std::is_same_v<T, Half>) {  // Note [float16 dropout in float lanes]
        Half scaled[kScaleChunk];
        for (std::int64_t c = b; c < e; c += kScaleChunk) {
          const std::int64_t n = std::min(kScaleChunk, e - c);
          scale_half(gy + c, s, n, scaled);
          for (std::int64_t j = 0; j < n; ++j)
            gx[c + j] = kept_or_zero(scaled[j], keep[c + j] != 0 ? 1u : 0u);
        }
      } else {
        for (std::int64_t i = b; i < e; ++i)
          gx[i] = keep[i] != 0 ? static_cast<T>(static_cast<M>(gy[i]) * s) : static_cast<T>(0);
      }
    });
  });
}

// ---- Softmax (the reference loops) ---------------------------------------------------------

namespace reference {

void softmax(DType dtype, void* out, const void* in, std::int64_t outer, std::int64_t R,
             std::int64_t inner, bool log) {
  dispatch_floating(dtype, log ? "log_softmax" : "softmax", [&]<typename T>() {
    using M = opmath_t<T>;
    const T* x = static_cast<const T*>(in);
    T* y = static_cast<T*>(out);
    parallel_for(outer * inner, grain_for(R), [&](std::int64_t b, std::int64_t e) {
      for (std::int64_t run = b; run < e; ++run) {
        const std::int64_t base = (run / inner) * R * inner + run % inner;
        M max_value = -std::numeric_limits<M>::infinity();
        for (std::int64_t r = 0; r < R; ++r)
          max_value = layers_math::running_max(max_value, static_cast<M>(x[base + r * inner]));
        max_value = layers_math::softmax_shift(max_value);
        M sum = 0;
        for (std::int64_t r = 0; r < R; ++r)
          sum += std::exp(static_cast<M>(x[base + r * inner]) - max_value);
        const M log_sum = std::log(sum);
        for (std::int64_t r = 0; r < R; ++r) {
          const M shifted = static_cast<M>(x[base + r * inner]) - max_value;
          y[base + r * inner] = static_cast<T>(log ? shifted - log_sum : std::exp(shifted) / sum);
        }
      }
    });
  });
}

void softmax_backward(DType dtype, void* grad_in, const void* grad_out, const void* out,
                      std::int64_t outer, std::int64_t R, std::int64_t inner, bool log) {
  dispatch_floating(dtype, log ? "log_softmax_backward" : "softmax_backward", [&]<typename T>() {
    using M = opmath_t<T>;
    const T* gy = static_cast<const T*>(grad_out);
    const T* y = static_cast<const T*>(out);
    T* gx = static_cast<T*>(grad_in);
    parallel_for(outer * inner, grain_for(R), [&](std::int64_t b, std::int64_t e) {
      for (std::int64_t run = b; run < e; ++run) {
        const std::int64_t base = (run / inner) * R * inner + run % inner;
        M dot = 0;
        for (std::int64_t r = 0; r < R; ++r) {
          const std::int64_t k = base + r * inner;
          dot += log ? static_cast<M>(gy[k]) : static_cast<M>(gy[k]) * static_cast<M>(y[k]);
        }
        for (std::int64_t r = 0; r < R; ++r) {
          const std::int64_t k = base + r * inner;
          const M g = static_cast<M>(gy[k]), v = static_cast<M>(y[k]);
          gx[k] = static_cast<T>(log ? g - std::exp(v) * dot : v * (g - dot));
        }
      }
    });
  });
}

}  // namespace reference

// ---- Losses ----------------------------------------------------------------------------------

namespace reference {

// cross_entropy's reference loops (kernels/cpu/softmax_reference.h): one row per item, its
// logsumexp with the library's exp and log, summed in order; the library runs the vectorised
// kernel of kernels/cpu/softmax_vectorized.cpp.
void cross_entropy(DType dtype, void* losses, void* sample_weights, void* lse, const void* logits,
                   const std::int64_t* target, const void* weight, std::int64_t N, std::int64_t C,
                   std::int64_t ignore_index) {
  dispatch_floating(dtype, "cross_entropy", [&]<typename T>() {
    using M = opmath_t<T>;
    const T* x = static_cast<const T*>(logits);
    const T* w = static_cast<const T*>(weight);
    T* loss = static_cast<T*>(losses);
    T* sw = static_cast<T*>(sample_weights);
    M* row_lse = static_cast<M*>(lse);
    parallel_for(N, grain_for(C), [&](std::int64_t b, std::int64_t e) {
      for (std::int64_t i = b; i < e; ++i) {
        const T* row = x + i * C;
        M max_value = -std::numeric_limits<M>::infinity();
        for (std::int64_t j = 0; j < C; ++j)
          max_value = layers_math::running_max(max_value, static_cast<M>(row[j]));
        max_value = layers_math::softmax_shift(max_value);
        M sum = 0;
        for (std::int64_t j = 0; j < C; ++j)
          sum += std::exp(static_cast<M>(row[j]) - max_value);
        row_lse[i] = max_value + std::log(sum);
        const std::int64_t t = target[i];
        const M wt = layers_math::class_weight(w, t, C, ignore_index);
        sw[i] = static_cast<T>(wt);
        loss[i] = t == ignore_index ? static_cast<T>(0)
                                    : static_cast<T>(wt * (row_lse[i] - static_cast<M>(row[t])));
      }
    });
  });
}

void cross_entropy_backward(DType dtype, void* grad_logits, const void* grad_losses,
                            const void* logits, const void* lse, const std::int64_t* target,
                            const void* weight, std::int64_t N, std::int64_t C,
                            std::int64_t ignore_index) {
  dispatch_floating(dtype, "cross_entropy_backward", [&]<typename T>() {
    using M = opmath_t<T>;
    const T* x = static_cast<const T*>(logits);
    const T* gl = static_cast<const T*>(grad_losses);
    const T* w = static_cast<const T*>(weight);
    const M* row_lse = static_cast<const M*>(lse);
    T* gx = static_cast<T*>(grad_logits);
    parallel_for(N * C, kElementwiseGrain / 4, [&](std::int64_t b, std::int64_t e) {
      for (std::int64_t k = b; k < e; ++k) {
        const std::int64_t i = k / C, j = k % C;
        const std::int64_t t = target[i];
        if (t == ignore_index) {
          gx[k] = static_cast<T>(0);
          continue;
        }
        const M p = std::exp(static_cast<M>(x[k]) - row_lse[i]);
        const M g = static_cast<M>(gl[i]) * layers_math::class_weight(w, t, C, ignore_index);
        gx[k] = static_cast<T>(g * (j == t ? p - M(1) : p));
      }
    });
  });
}

}  // namespace reference

void nll_loss(DType dtype, void* losses, void* sample_weights, const void* logp,
              const std::int64_t* target, const void* weight, std::int64_t N, std::int64_t C,
              std::int64_t ignore_index) {
  dispatch_floating(dtype, "nll_loss", [&]<typename T>() {
    using M = opmath_t<T>;
    const T* x = static_cast<const T*>(logp);
    const T* w = static_cast<const T*>(weight);
    T* loss = static_cast<T*>(losses);
    T* sw = static_cast<T*>(sample_weights);
    for (std::int64_t i = 0; i < N; ++i) {
      const std::int64_t t = target[i];
      const M wt = layers_math::class_weight(w, t, C, ignore_index);
      sw[i] = static_cast<T>(wt);
      loss[i] = t == ignore_index ? static_cast<T>(0)
                                  : static_cast<T>(-wt * static_cast<M>(x[i * C + t]));
    }
  });
}

void nll_loss_backward(DType dtype, void* grad_logp, const void* grad_losses,
                       const std::int64_t* target, const void* weight, std::int64_t N,
                       std::int64_t C, std::int64_t ignore_index) {
  dispatch_floating(dtype, "nll_loss_backward", [&]<typename T>() {
    using M = opmath_t<T>;
    const T* gl = static_cast<const T*>(grad_losses);
    const T* w = static_cast<const T*>(weight);
    T* gx = static_cast<T*>(grad_logp);
    parallel_for(N * C, kElementwiseGrain, [&](std::int64_t b, std::int64_t e) {
      for (std::int64_t k = b; k < e; ++k) {
        const std::int64_t t = target[k / C];
        gx[k] = (t != ignore_index && k % C == t)
                    ? static_cast<T>(-static_cast<M>(gl[k / C]) *
                                     layers_math::class_weight(w, t, C, ignore_index))
                    : static_cast<T>(0);
      }
    });
  });
}

}  // namespace leangrad::kernels::cpu
