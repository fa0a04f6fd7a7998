// Softmax's and cross_entropy's CPU launchers (kernels/backend.h, "Layers": softmax,
// softmax_backward, cross_entropy, cross_entropy_backward): every pass in SIMD lanes. The second
// CPU kernel beside the reference loops of kernels/cpu/layers.cpp
// (kernels/cpu/softmax_reference.h), which stay the specification:
// tests/kernels/test_softmax_vectorized.cpp checks these against them and against double.
//
// Note [Vectorised softmax]
//   The reference walks one run (a row, or a strided column of an (outer, R, inner) block) at a
//   time, one element at a time, with the library's expf: a call per element keeps a loop scalar,
//   and its sums are in order, which the compiler may not reorder. Here:
//   - Rows (inner == 1, softmax over the last dim): three passes over the row, each in SIMD
//     lanes. The maximum in kLanes running maxima (a maximum is exact: any order finds the same
//     one); e = e^(x - max) with the polynomial exp of kernels/cpu/exp_polynomial.h (within 1.02
//     ulps; glibc's expf is within 1), written to y (softmax) or to a buffer on the stack
//     (log_softmax), and summed in kLanes partial sums (element i into lane i mod kLanes, then a
//     tree over the lanes); then y = e (1 / sum), or (x - max) - log(sum). A multiply by the
//     reciprocal, as PyTorch's CPU kernel: a vector divide took 15% of a row's time on Zen 1,
//     for one more rounding. The backward sums g y (or g) the same way, then gx = y (g - dot), or
//     g - e^y dot.
//   - Columns (inner > 1, softmax over another dim): kColumns adjacent columns at a time, the
//     lanes across them: each pass walks r = 0..R-1, reading kColumns contiguous elements a
//     step, and each column's sum is in order of r, as in the reference. softmax's e is kept in
//     y for the output pass.
//   - float16 and bfloat16: a row of at most kRowBuffer elements is widened once into a stack
//     buffer and run as a float32 row; a longer row's passes widen it kPiece elements at a time.
//     A block of columns is widened whole into a float scratch (R x b floats, gathered from its
//     R strided steps by one call, kernels/cpu/half_convert.h's widen_strided), run through the
//     float32 column passes in place there and narrowed back by one call, when R * kColumns
//     fits in kScratch floats (the backward: two such blocks, g and y). Until 2026-12-01 each
//     step of at most 64 elements was widened by a call of its own, three or four per step,
//     and the calls cost as much as the conversions (float16 took 1.7 times float32's time).
//     Longer runs still widen step by step (bfloat16's steps inline) and compute e again in
//     the output pass.
//     The result is rounded once at the end: the 16-bit result is the float32 result of the
//     widened input, rounded, bit for bit (the reference also computes in float and rounds
//     once). No buffer is allocated per row (an allocation per row costs time, and one that failed
//     would stop the row's task midway). float64 runs the reference loops.
//   - Accuracy: the sums' order and the exp differ from the reference, so results differ by
//     rounding, within bounds the tests derive: a sum of k terms in float is within
//     (k - 1) 2^-24 of the sum of their magnitudes; a row's lane sums add ceil(R / kLanes)
//     terms each, then 5 levels of the tree. Only the maximum is exact in any order.
//   - cross_entropy (log_softmax of each row and its target's term, the (N, C) log-probabilities
//     never stored): a row's logsumexp is the shift plus the log of the row's lane sums,
//     taken as log_softmax's are, in kPiece pieces (16-bit ones widened a piece at a time); the
//     loss w (lse - x_t) as the reference. The backward writes g e^(x - lse) over the row and then
//     the target's entry again as g (e^(x_t - lse) - 1), each rounded once to the dtype. The
//     reference called the library's expf per element in both (a scalar loop, and an index
//     division per element in the backward): 4.3 times LibTorch's time at (256, 1000), now 0.7
//     (bench/results/2026-12-01-cpu-cross-entropy-zen3-2core.md).
//   - Threads: over rows, or over (outer, block of columns) tasks; each run is computed alike on
//     any thread, so results do not depend on the thread count. This file is compiled with
//     -ffp-contract=off (exp_polynomial needs it, Note [Polynomial exp]), so vector bodies and
//     scalar tails round alike.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <vector>

#include <leangrad/kernels/backend.h>
#include <leangrad/kernels/cpu/exp_polynomial.h>
#include <leangrad/kernels/cpu/half_convert.h>
#include <leangrad/kernels/cpu/lane_sums.h>
#include <leangrad/kernels/cpu/parallel_for.h>
#include <leangrad/kernels/cpu/softmax_reference.h>
#include <leangrad/kernels/dispatch.h>
#include <leangrad/kernels/layers_math.h>

namespace leangrad::kernels::cpu {

namespace {

using layers_math::running_max;
using layers_math::softmax_shift;

// Partial sums and maxima of a row: 32 floats are 4 AVX2 registers or 2 AVX-512 ones.
constexpr int kLanes = 32;
// Stack buffers hold this many floats: log_softmax's exps, and the pieces a 16-bit row is widened
// in (a multiple of kLanes, so element i still lands in lane i mod kLanes).
constexpr std::int64_t kPiece = 512;
// 16-bit rows up to this long are widened once into stack buffers (32 KiB each; the backward
// takes two) and run as float32 rows; longer ones a piece at a time (softmax_row_widened).
constexpr std::int64_t kRowBuffer = 8192;
// Adjacent columns taken together when softmax runs over a dim other than the last.
constexpr std::int64_t kColumns = 64;
// A 16-bit block of columns is widened whole into a float scratch when R * kColumns is at most
// this many floats (256 KiB, half of a Zen 1 core's L2); longer runs are widened step by step.
constexpr std::int64_t kScratch = 65536;

constexpr float kMinusInfinity = -std::numeric_limits<float>::infinity();

// lanes[i mod kLanes] += v[i] for i in [0, n), in order of i.
void add_to_lanes(float (&lanes)[kLanes], const float* v, std::int64_t n) {
  std::int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes)
    for (int l = 0; l < kLanes; ++l)
      lanes[l] += v[i + l];
  for (int l = 0; i + l < n; ++l)
    lanes[l] += v[i + l];
}

// lanes[i mod kLanes] += a[i] * b[i] (the product rounded, then added).
void add_products_to_lanes(float (&lanes)[kLanes], const float* a, const float* b, std::int64_t n) {
  std::int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes)
    for (int l = 0; l < kLanes; ++l)
      lanes[l] += a[i + l] * b[i + l];
  for (int l = 0; i + l < n; ++l)
    lanes[l] += a[i + l] * b[i + l];
}

// maxima[i mod kLanes] = running_max(that, x[i]) for i in [0, n), in order of i.
void add_to_maxima(float (&maxima)[kLanes], const float* x, std::int64_t n) {
  std::int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes)
    for (int l = 0; l < kLanes; ++l)
      maxima[l] = running_max(maxima[l], x[i + l]);
  for (int l = 0; i + l < n; ++l)
    maxima[l] = running_max(maxima[l], x[i + l]);
}

float max_of_lanes(const float (&maxima)[kLanes]) {
  float m = kMinusInfinity;
  for (float v : maxima)
    m = running_max(m, v);
  return m;
}

float row_max(const float* x, std::int64_t n) {
  float maxima[kLanes];
  std::fill(maxima, maxima + kLanes, kMinusInfinity);
  add_to_maxima(maxima, x, n);
  return max_of_lanes(maxima);
}

// e[i] = e^(x[i] - shift); e may be x.
void exp_shifted(const float* x, float shift, float* e, std::int64_t n) {
#pragma GCC ivdep
  for (std::int64_t i = 0; i < n; ++i)
    e[i] = exp_polynomial(x[i] - shift);
}

// y = softmax (log_softmax when `log`) of the row x[0, n); y may be x.
void softmax_row(const float* x, float* y, std::int64_t n, bool log) {
  const float shift = softmax_shift(row_max(x, n));
  float sums[kLanes] = {};
  if (!log) {
    exp_shifted(x, shift, y, n);
    add_to_lanes(sums, y, n);
    const float inverse = 1.0f / sum_of_lanes(sums);
#pragma GCC ivdep
    for (std::int64_t i = 0; i < n; ++i)
      y[i] = y[i] * inverse;
    return;
  }
  float e[kPiece];
  for (std::int64_t i0 = 0; i0 < n; i0 += kPiece) {
    const std::int64_t p = std::min(kPiece, n - i0);
    exp_shifted(x + i0, shift, e, p);
    add_to_lanes(sums, e, p);
  }
  const float log_sum = std::log(sum_of_lanes(sums));
#pragma GCC ivdep
  for (std::int64_t i = 0; i < n; ++i)
    y[i] = (x[i] - shift) - log_sum;
}

// gx = y (g - dot), or g - e^y dot for log_softmax; gx may be g or y.
void backward_output(const float* g, const float* y, float* gx, std::int64_t n, float dot,
                     bool log) {
  if (log) {
#pragma GCC ivdep
    for (std::int64_t i = 0; i < n; ++i)
      gx[i] = g[i] - exp_polynomial(y[i]) * dot;
  } else {
#pragma GCC ivdep
    for (std::int64_t i = 0; i < n; ++i)
      gx[i] = y[i] * (g[i] - dot);
  }
}

// gx = softmax's (log_softmax's) gradient over one row from g = grad_out and y = out; gx may be
// g or y.
void softmax_backward_row(const float* g, const float* y, float* gx, std::int64_t n, bool log) {
  float lanes[kLanes] = {};
  if (log) {
    add_to_lanes(lanes, g, n);
  } else {
    add_products_to_lanes(lanes, g, y, n);
  }
  backward_output(g, y, gx, n, sum_of_lanes(lanes), log);
}

// Step r of a block of b columns (or a piece of a row) as floats: the elements themselves for
// float, else widened into `buffer`. A step is at most kColumns elements, so a call per step would
// cost as much as the conversion: bfloat16's is half_convert.h's loop inlined (widen_inline),
// float16's a call to its F16C loop.
template <typename T>
const float* load_step(const T* p, float* buffer, std::int64_t b) {
  if constexpr (std::is_same_v<T, float>) {
    return p;
  } else if constexpr (std::is_same_v<T, BFloat16>) {
    widen_inline(p, buffer, b);
    return buffer;
  } else {
    widen(p, buffer, b);
    return buffer;
  }
}

// A row's shift (softmax_shift of its maximum) and the sum of e^(x - shift) over its n elements, in
// kLanes maxima and partial sums, over pieces of kPiece elements (16-bit ones widened a piece at a
// time): the lane maxima and sums of softmax_row, in the same order, so the same bits.
struct ShiftAndSum {
  float shift, sum;
};
template <typename T>
ShiftAndSum shift_and_sum(const T* x, std::int64_t n) {
  float v[kPiece];
  float e[kPiece];
  float maxima[kLanes];
  std::fill(maxima, maxima + kLanes, kMinusInfinity);
  for (std::int64_t i0 = 0; i0 < n; i0 += kPiece) {
    const std::int64_t p = std::min(kPiece, n - i0);
    add_to_maxima(maxima, load_step(x + i0, v, p), p);
  }
  const float shift = softmax_shift(max_of_lanes(maxima));
  float sums[kLanes] = {};
  for (std::int64_t i0 = 0; i0 < n; i0 += kPiece) {
    const std::int64_t p = std::min(kPiece, n - i0);
    exp_shifted(load_step(x + i0, v, p), shift, e, p);
    add_to_lanes(sums, e, p);
  }
  return {shift, sum_of_lanes(sums)};
}

// softmax_row of a 16-bit row, rounded once: widened whole into a stack buffer when it holds at
// most kRowBuffer elements; otherwise kPiece elements at a time, each pass widening again and the
// output pass computing e again (nothing allocated, however long the row): the same lane maxima
// and lane sums in the same order, and each e computed alike, so the same bits either way.
template <typename T>
void softmax_row_widened(const T* x, T* y, std::int64_t n, bool log) {
  if (n <= kRowBuffer) {
    float row[kRowBuffer];
    widen(x, row, n);
    softmax_row(row, row, n, log);
    narrow(row, y, n);
    return;
  }
  const auto [shift, sum] = shift_and_sum(x, n);
  float v[kPiece];
  float e[kPiece];
  const float log_sum = log ? std::log(sum) : 0.0f;
  const float inverse = log ? 0.0f : 1.0f / sum;
  for (std::int64_t i0 = 0; i0 < n; i0 += kPiece) {
    const std::int64_t p = std::min(kPiece, n - i0);
    widen(x + i0, v, p);
    if (log) {
#pragma GCC ivdep
      for (std::int64_t i = 0; i < p; ++i)
        e[i] = (v[i] - shift) - log_sum;
    } else {
      exp_shifted(v, shift, e, p);
#pragma GCC ivdep
      for (std::int64_t i = 0; i < p; ++i)
        e[i] = e[i] * inverse;
    }
    narrow(e, y + i0, p);
  }
}

// softmax_backward_row of 16-bit rows, rounded once: widened whole into two stack buffers when
// they hold at most kRowBuffer elements, otherwise kPiece elements at a time (as
// softmax_row_widened): the bits of softmax_backward_row on the widened rows either way.
template <typename T>
void softmax_backward_row_widened(const T* g, const T* y, T* gx, std::int64_t n, bool log) {
  if (n <= kRowBuffer) {
    float g_row[kRowBuffer];
    float y_row[kRowBuffer];
    widen(g, g_row, n);
    widen(y, y_row, n);
    softmax_backward_row(g_row, y_row, g_row, n, log);
    narrow(g_row, gx, n);
    return;
  }
  float gv[kPiece];
  float yv[kPiece];
  float lanes[kLanes] = {};
  for (std::int64_t i0 = 0; i0 < n; i0 += kPiece) {
    const std::int64_t p = std::min(kPiece, n - i0);
    widen(g + i0, gv, p);
    if (log) {
      add_to_lanes(lanes, gv, p);
    } else {
      widen(y + i0, yv, p);
      add_products_to_lanes(lanes, gv, yv, p);
    }
  }
  const float dot = sum_of_lanes(lanes);
  for (std::int64_t i0 = 0; i0 < n; i0 += kPiece) {
    const std::int64_t p = std::min(kPiece, n - i0);
    widen(g + i0, gv, p);
    widen(y + i0, yv, p);
    backward_output(gv, yv, gv, p, dot, log);
    narrow(gv, gx + i0, p);
  }
}

// Where a step's results are computed: the output itself for float, else `buffer` (then stored).
template <typename T>
float* result_step(T* p, float* buffer) {
  if constexpr (std::is_same_v<T, float>) {
    return p;
  } else {
    return buffer;
  }
}

// The results of a step stored as T, rounded once (bfloat16 inline, as load_step).
template <typename T>
void store_step(const float* result, T* p, std::int64_t b) {
  if constexpr (std::is_same_v<T, BFloat16>) {
    narrow_inline(result, p, b);
  } else if constexpr (!std::is_same_v<T, float>) {
    narrow(result, p, b);
  }
}

// Softmax over r of the b <= kColumns adjacent columns starting at x (element (o, 0, j0)); step
// r of column j is x[r * inner + j]. softmax keeps each e for the output pass in float32's y
// itself; a 16-bit dtype, which could not hold it unrounded, computes e again (the same bits).
// x may be y.
template <typename T>
void softmax_columns(const T* x, T* y, std::int64_t R, std::int64_t inner, std::int64_t b,
                     bool log) {
  // Where step r's e lands, or nullptr.
  auto exps = [&](std::int64_t r) -> float* {
    if (log) return nullptr;
    if constexpr (std::is_same_v<T, float>) {
      return y + r * inner;
    } else {
      return nullptr;
    }
  };
  float shift[kColumns];
  float sum[kColumns];
  float in[kColumns];
  float out[kColumns];
  std::fill(shift, shift + b, kMinusInfinity);
  std::fill(sum, sum + b, 0.0f);
  for (std::int64_t r = 0; r < R; ++r) {
    const float* v = load_step(x + r * inner, in, b);
    for (std::int64_t j = 0; j < b; ++j)
      shift[j] = running_max(shift[j], v[j]);
  }
  for (std::int64_t j = 0; j < b; ++j)
    shift[j] = softmax_shift(shift[j]);
  for (std::int64_t r = 0; r < R; ++r) {
    const float* v = load_step(x + r * inner, in, b);
    float* e = exps(r);
    if (e == nullptr) {
#pragma GCC ivdep
      for (std::int64_t j = 0; j < b; ++j)
        sum[j] += exp_polynomial(v[j] - shift[j]);
    } else {
#pragma GCC ivdep
      for (std::int64_t j = 0; j < b; ++j) {
        e[j] = exp_polynomial(v[j] - shift[j]);
        sum[j] += e[j];
      }
    }
  }
  for (std::int64_t j = 0; j < b; ++j)
    sum[j] = log ? std::log(sum[j]) : 1.0f / sum[j];
  for (std::int64_t r = 0; r < R; ++r) {
    float* o = result_step(y + r * inner, out);
    if (const float* e = exps(r); e != nullptr) {
#pragma GCC ivdep
      for (std::int64_t j = 0; j < b; ++j)
        o[j] = e[j] * sum[j];
    } else {
      const float* v = load_step(x + r * inner, in, b);
      if (log) {
#pragma GCC ivdep
        for (std::int64_t j = 0; j < b; ++j)
          o[j] = (v[j] - shift[j]) - sum[j];
      } else {
#pragma GCC ivdep
        for (std::int64_t j = 0; j < b; ++j)
          o[j] = exp_polynomial(v[j] - shift[j]) * sum[j];
      }
    }
    store_step(o, y + r * inner, b);
  }
}

// The gradient over r of b <= kColumns adjacent columns (as softmax_columns); g may be gx.
template <typename T>
void softmax_backward_columns(const T* g, const T* y, T* gx, std::int64_t R, std::int64_t inner,
                              std::int64_t b, bool log) {
  float dot[kColumns];
  float g_in[kColumns];
  float y_in[kColumns];
  float out[kColumns];
  std::fill(dot, dot + b, 0.0f);
  for (std::int64_t r = 0; r < R; ++r) {
    const float* gv = load_step(g + r * inner, g_in, b);
    if (log) {
      for (std::int64_t j = 0; j < b; ++j)
        dot[j] += gv[j];
    } else {
      const float* yv = load_step(y + r * inner, y_in, b);
      for (std::int64_t j = 0; j < b; ++j)
        dot[j] += gv[j] * yv[j];
    }
  }
  for (std::int64_t r = 0; r < R; ++r) {
    const float* gv = load_step(g + r * inner, g_in, b);
    const float* yv = load_step(y + r * inner, y_in, b);
    float* o = result_step(gx + r * inner, out);
    if (log) {
#pragma GCC ivdep
      for (std::int64_t j = 0; j < b; ++j)
        o[j] = gv[j] - exp_polynomial(yv[j]) * dot[j];
    } else {
#pragma GCC ivdep
      for (std::int64_t j = 0; j < b; ++j)
        o[j] = yv[j] * (gv[j] - dot[j]);
    }
    store_step(o, gx + r * inner, b);
  }
}

// softmax_columns of a 16-bit block widened whole into `scratch` (R * b floats), computed there
// in float32 and narrowed into y: the same bits as step by step (Note [Vectorised softmax]).
template <typename T>
void softmax_columns_widened(const T* x, T* y, std::int64_t R, std::int64_t inner, std::int64_t b,
                             bool log, float* scratch) {
  widen_strided(x, inner, scratch, R, b);
  softmax_columns(scratch, scratch, R, b, b, log);
  narrow_strided(scratch, y, inner, R, b);
}

// softmax_backward_columns likewise, g and y widened into `scratch` (2 R b floats).
template <typename T>
void softmax_backward_columns_widened(const T* g, const T* y, T* gx, std::int64_t R,
                                      std::int64_t inner, std::int64_t b, bool log,
                                      float* scratch) {
  float* wide_g = scratch;
  float* wide_y = scratch + R * b;
  widen_strided(g, inner, wide_g, R, b);
  widen_strided(y, inner, wide_y, R, b);
  softmax_backward_columns(wide_g, wide_y, wide_g, R, b, b, log);
  narrow_strided(wide_g, gx, inner, R, b);
}

// fn(o, j0, b, scratch) for each block of b <= kColumns adjacent columns of each outer index, in
// parallel; scratch holds scratch_floats floats for the task's use (nullptr when 0).
template <typename F>
void for_each_column_block(std::int64_t outer, std::int64_t R, std::int64_t inner,
                           std::int64_t scratch_floats, const F& fn) {
  const std::int64_t blocks = (inner + kColumns - 1) / kColumns;
  parallel_for(outer * blocks, grain_for(R * kColumns), [&](std::int64_t begin, std::int64_t end) {
    std::vector<float> scratch(static_cast<std::size_t>(scratch_floats));
    for (std::int64_t t = begin; t < end; ++t) {
      const std::int64_t j0 = (t % blocks) * kColumns;
      fn(t / blocks, j0, std::min(kColumns, inner - j0),
         scratch_floats > 0 ? scratch.data() : nullptr);
    }
  });
}

// ---- Cross entropy: a row's gradient ------------------------------------------------------------

// gx = g (e^(x - lse) - [j == t]) over a row of n elements, each rounded once to T: the row's
// probabilities times g, then the target's entry (when t is in the row) computed again with 1
// taken off before its product, as the reference's g (p - 1).
template <typename T>
void cross_entropy_backward_row(const T* x, T* gx, std::int64_t n, float lse, float g,
                                std::int64_t t) {
  float v[kPiece];
  float r[kPiece];
  for (std::int64_t i0 = 0; i0 < n; i0 += kPiece) {
    const std::int64_t p = std::min(kPiece, n - i0);
    const float* xs = load_step(x + i0, v, p);
    float* out = result_step(gx + i0, r);
#pragma GCC ivdep
    for (std::int64_t i = 0; i < p; ++i)
      out[i] = g * exp_polynomial(xs[i] - lse);
    if (t >= i0 && t < i0 + p) out[t - i0] = g * (exp_polynomial(xs[t - i0] - lse) - 1.0f);
    store_step(out, gx + i0, p);
  }
}

}  // namespace

void softmax(DType dtype, void* out, const void* in, std::int64_t outer, std::int64_t R,
             std::int64_t inner, bool log) {
  if (dtype == DType::Float64) return reference::softmax(dtype, out, in, outer, R, inner, log);
  dispatch_floating(dtype, log ? "log_softmax" : "softmax", [&]<typename T>() {
    if constexpr (!std::is_same_v<T, double>) {
      const T* x = static_cast<const T*>(in);
      T* y = static_cast<T*>(out);
      if (inner > 1) {
        // A 16-bit block is widened whole when it fits in kScratch floats.
        const bool widened = !std::is_same_v<T, float> && R * kColumns <= kScratch;
        for_each_column_block(outer, R, inner, widened ? R * kColumns : 0,
                              [&](std::int64_t o, std::int64_t j0, std::int64_t b, float* scratch) {
                                const std::int64_t offset = o * R * inner + j0;
                                if constexpr (!std::is_same_v<T, float>) {
                                  if (scratch != nullptr) {
                                    softmax_columns_widened(x + offset, y + offset, R, inner, b,
                                                            log, scratch);
                                    return;
                                  }
                                }
                                softmax_columns(x + offset, y + offset, R, inner, b, log);
                              });
        return;
      }
      parallel_for(outer, grain_for(R), [&](std::int64_t begin, std::int64_t end) {
        for (std::int64_t o = begin; o < end; ++o) {
          if constexpr (std::is_same_v<T, float>) {
            softmax_row(x + o * R, y + o * R, R, log);
          } else {
            softmax_row_widened(x + o * R, y + o * R, R, log);
          }
        }
      });
    }
  });
}

void softmax_backward(DType dtype, void* grad_in, const void* grad_out, const void* out,
                      std::int64_t outer, std::int64_t R, std::int64_t inner, bool log) {
  if (dtype == DType::Float64)
    return reference::softmax_backward(dtype, grad_in, grad_out, out, outer, R, inner, log);
  dispatch_floating(dtype, log ? "log_softmax_backward" : "softmax_backward", [&]<typename T>() {
    if constexpr (!std::is_same_v<T, double>) {
      const T* g = static_cast<const T*>(grad_out);
      const T* y = static_cast<const T*>(out);
      T* gx = static_cast<T*>(grad_in);
      if (inner > 1) {
        // A 16-bit block's g and y are widened whole when each fits in kScratch floats.
        const bool widened = !std::is_same_v<T, float> && R * kColumns <= kScratch;
        for_each_column_block(
            outer, R, inner, widened ? 2 * R * kColumns : 0,
            [&](std::int64_t o, std::int64_t j0, std::int64_t b, float* scratch) {
              const std::int64_t offset = o * R * inner + j0;
              if constexpr (!std::is_same_v<T, float>) {
                if (scratch != nullptr) {
                  softmax_backward_columns_widened(g + offset, y + offset, gx + offset, R, inner, b,
                                                   log, scratch);
                  return;
                }
              }
              softmax_backward_columns(g + offset, y + offset, gx + offset, R, inner, b, log);
            });
        return;
      }
      parallel_for(outer, grain_for(R), [&](std::int64_t begin, std::int64_t end) {
        for (std::int64_t o = begin; o < end; ++o) {
          if constexpr (std::is_same_v<T, float>) {
            softmax_backward_row(g + o * R, y + o * R, gx + o * R, R, log);
          } else {
            softmax_backward_row_widened(g + o * R, y + o * R, gx + o * R, R, log);
          }
        }
      });
    }
  });
}

void cross_entropy(DType dtype, void* losses, void* sample_weights, void* lse, const void* logits,
                   const std::int64_t* target, const void* weight, std::int64_t N, std::int64_t C,
                   std::int64_t ignore_index) {
  if (dtype == DType::Float64)
    return reference::cross_entropy(dtype, losses, sample_weights, lse, logits, target, weight, N,
                                    C, ignore_index);
  dispatch_floating(dtype, "cross_entropy", [&]<typename T>() {
    if constexpr (!std::is_same_v<T, double>) {
      const T* x = static_cast<const T*>(logits);
      const T* w = static_cast<const T*>(weight);
      T* loss = static_cast<T*>(losses);
      T* sw = static_cast<T*>(sample_weights);
      float* row_lse = static_cast<float*>(lse);
      parallel_for(N, grain_for(C), [&](std::int64_t begin, std::int64_t end) {
        for (std::int64_t i = begin; i < end; ++i) {
          const T* row = x + i * C;
          const auto [shift, sum] = shift_and_sum(row, C);  // as log_softmax's row pass
          row_lse[i] = shift + std::log(sum);
          const std::int64_t t = target[i];
          const float wt = layers_math::class_weight(w, t, C, ignore_index);
          sw[i] = static_cast<T>(wt);
          loss[i] = t == ignore_index
                        ? static_cast<T>(0)
                        : static_cast<T>(wt * (row_lse[i] - static_cast<float>(row[t])));
        }
      });
    }
  });
}

void cross_entropy_backward(DType dtype, void* grad_logits, const void* grad_losses,
                            const void* logits, const void* lse, const std::int64_t* target,
                            const void* weight, std::int64_t N, std::int64_t C,
                            std::int64_t ignore_index) {
  if (dtype == DType::Float64)
    return reference::cross_entropy_backward(dtype, grad_logits, grad_losses, logits, lse, target,
                                             weight, N, C, ignore_index);
  dispatch_floating(dtype, "cross_entropy_backward", [&]<typename T>() {
    if constexpr (!std::is_same_v<T, double>) {
      const T* x = static_cast<const T*>(logits);
      const T* gl = static_cast<const T*>(grad_losses);
      const T* w = static_cast<const T*>(weight);
      const float* row_lse = static_cast<const float*>(lse);
      T* gx = static_cast<T*>(grad_logits);
      parallel_for(N, grain_for(C), [&](std::int64_t begin, std::int64_t end) {
        for (std::int64_t i = begin; i < end; ++i) {
          const std::int64_t t = target[i];
          if (t == ignore_index) {
            std::fill(gx + i * C, gx + (i + 1) * C, static_cast<T>(0));
            continue;
          }
          const float g =
              static_cast<float>(gl[i]) * layers_math::class_weight(w, t, C, ignore_index);
          cross_entropy_backward_row(x + i * C, gx + i * C, C, row_lse[i], g, t);
        }
      });
    }
  });
}

}  // namespace leangrad::kernels::cpu
