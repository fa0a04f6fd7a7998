// The running reductions on the CPU (kernels/backend.h): cumsum, cumprod, logcumsumexp, cummax and
// cummin. A row along the dim is a chain of steps, so the parallelism is across rows: with
// inner == 1 (the dim is the last one) a task takes whole rows; otherwise a task takes a block of
// kColumns adjacent columns of one outer index and walks down the dim taking a step for each
// column of the block, contiguous loads the compiler vectorises (for the sum and the product).
// The steps are reduce_math's, which kernels/cuda/scan.cu takes too.
#include <leangrad/kernels/backend.h>

#include <algorithm>
#include <limits>
#include <type_traits>

#include <leangrad/kernels/cpu/half_convert.h>
#include <leangrad/kernels/cpu/parallel_for.h>
#include <leangrad/kernels/dispatch.h>
#include <leangrad/kernels/reduce_math.h>

namespace leangrad::kernels::cpu {

namespace {

constexpr std::int64_t kColumns = 256;

// Calls block(base, width) for each run of up to kColumns adjacent columns of one outer index of an
// (outer, size, inner) block, inner > 1: its first element's offset and its width. Threads split
// the runs.
template <typename Block>
void for_each_column_block(std::int64_t outer, std::int64_t size, std::int64_t inner,
                           const Block& block) {
  const std::int64_t blocks = (inner + kColumns - 1) / kColumns;
  parallel_for(outer * blocks, grain_for(size * kColumns),
               [&](std::int64_t first, std::int64_t last) {
                 for (std::int64_t t = first; t < last; ++t) {
                   const std::int64_t c0 = (t % blocks) * kColumns;
                   block(t / blocks * size * inner + c0, std::min(kColumns, inner - c0));
                 }
               });
}

// Walks every (o, c) column of an (outer, size, inner) block down the dim: for each column,
// begin(state) once, then step(state, offset_j) for j = 0..size-1, offset_j being element j's
// offset (from the end with reverse). State is per column, kColumns of them live at a time.
template <typename State, typename Begin, typename Step>
void for_each_column(std::int64_t outer, std::int64_t size, std::int64_t inner, bool reverse,
                     const Begin& begin, const Step& step) {
  const auto row = [&](std::int64_t j) { return (reverse ? size - 1 - j : j) * inner; };
  if (inner == 1) {
    parallel_for(outer, grain_for(size), [&](std::int64_t first, std::int64_t last) {
      for (std::int64_t o = first; o < last; ++o) {
        State state;
        begin(state);
        for (std::int64_t j = 0; j < size; ++j)
          step(state, o * size + row(j), j);
      }
    });
    return;
  }
  for_each_column_block(outer, size, inner, [&](std::int64_t base, std::int64_t width) {
    State state[kColumns];
    for (std::int64_t c = 0; c < width; ++c)
      begin(state[c]);
    for (std::int64_t j = 0; j < size; ++j) {
      const std::int64_t r = base + row(j);
      for (std::int64_t c = 0; c < width; ++c)
        step(state[c], r + c, j);
    }
  });
}

// out = the running op of in, State the accumulator alone.
template <typename T, typename Acc, typename Combine>
void scan_values(T* out, const T* in, std::int64_t outer, std::int64_t size, std::int64_t inner,
                 bool reverse, Acc identity, const Combine& combine) {
  for_each_column<Acc>(
      outer, size, inner, reverse, [&](Acc& acc) { acc = identity; },
      [&](Acc& acc, std::int64_t offset, std::int64_t) {
        acc = combine(acc, static_cast<Acc>(in[offset]));
        out[offset] = static_cast<T>(acc);
      });
}

// Note [float16 scans in float lanes]
//   A float16 step widens its element to float, combines, and rounds the running value to the
//   output. Through core/half.h those are two branchy integer conversions per element that stay
//   scalar beside the chain: cumsum of a (2048, 2048) float16 along its rows took 28.7 ms on one
//   thread, float32's 1.9 (now 2.4). So float16 runs the same steps over float buffers: a row's
//   next kHalfScan elements (the block's next row of columns) widened by
//   kernels/cpu/half_convert.h, the steps in float in the same order, the running values narrowed
//   back together; the same float values rounded by the same rounding, so the same bits
//   (core/half.h's, which the lanes reproduce), with the tasks split as for_each_column splits them
//   (for_each_column_block).
constexpr std::int64_t kHalfScan = 512;
static_assert(kColumns <= kHalfScan);

template <typename Combine>
void scan_half(Half* out, const Half* in, std::int64_t outer, std::int64_t size, std::int64_t inner,
               bool reverse, float identity, const Combine& combine) {
  if (inner == 1) {
    parallel_for(outer, grain_for(size), [&](std::int64_t first, std::int64_t last) {
      float x[kHalfScan];
      float y[kHalfScan];
      for (std::int64_t o = first; o < last; ++o) {
        float acc = identity;
        for (std::int64_t done = 0; done < size; done += kHalfScan) {
          const std::int64_t m = std::min(kHalfScan, size - done);
          const std::int64_t lo = o * size + (reverse ? size - done - m : done);
          widen(in + lo, x, m);
          if (reverse) {
            for (std::int64_t k = m - 1; k >= 0; --k)
              y[k] = acc = combine(acc, x[k]);
          } else {
            for (std::int64_t k = 0; k < m; ++k)
              y[k] = acc = combine(acc, x[k]);
          }
          narrow(y, out + lo, m);
        }
      }
    });
    return;
  }
  for_each_column_block(outer, size, inner, [&](std::int64_t base, std::int64_t width) {
    float state[kColumns];
    float x[kColumns];
    std::fill(state, state + width, identity);
    for (std::int64_t j = 0; j < size; ++j) {
      const std::int64_t r = base + (reverse ? size - 1 - j : j) * inner;
      widen(in + r, x, width);
      for (std::int64_t c = 0; c < width; ++c)
        state[c] = combine(state[c], x[c]);
      narrow(state, out + r, width);
    }
  });
}

}  // namespace

void scan(ScanOp op, DType dtype, void* out, const void* in, std::int64_t outer, std::int64_t size,
          std::int64_t inner, bool reverse) {
  const auto run = [&]<typename T>(auto identity, const auto& combine) {
    if constexpr (std::is_same_v<T, Half>) {  // Note [float16 scans in float lanes]
      scan_half(static_cast<Half*>(out), static_cast<const Half*>(in), outer, size, inner, reverse,
                identity, combine);
    } else {
      scan_values<T>(static_cast<T*>(out), static_cast<const T*>(in), outer, size, inner, reverse,
                     identity, combine);
    }
  };
  switch (op) {
    case ScanOp::Sum:
      dispatch_addable(dtype, "cumsum", [&]<typename T>() {
        using Acc = reduce_math::scan_acc_t<T>;  // Note [Running reductions of float32 in float64]
        run.template operator()<T>(Acc(0),
                                   [](Acc a, Acc b) { return reduce_math::wrapping_add(a, b); });
      });
      return;
    case ScanOp::Prod:
      dispatch_addable(dtype, "cumprod", [&]<typename T>() {
        using Acc = reduce_math::scan_acc_t<T>;  // Note [Running reductions of float32 in float64]
        run.template operator()<T>(Acc(1),
                                   [](Acc a, Acc b) { return reduce_math::wrapping_mul(a, b); });
      });
      return;
    case ScanOp::LogSumExp:
      dispatch_floating(dtype, "logcumsumexp", [&]<typename T>() {
        using Acc = reduce_math::scan_acc_t<T>;  // Note [Running reductions of float32 in float64]
        run.template operator()<T>(-std::numeric_limits<Acc>::infinity(),
                                   [](Acc a, Acc b) { return reduce_math::log_add_exp(a, b); });
      });
      return;
  }
  LG_THROW(Error, "scan: unknown op ", static_cast<int>(op));
}

void scan_extremum(DType dtype, void* values, std::int64_t* indices, const void* in,
                   std::int64_t outer, std::int64_t size, std::int64_t inner, bool is_max) {
  dispatch_all(dtype, is_max ? "cummax" : "cummin", [&]<typename T>() {
    using Acc = reduce_math::max_acc_t<T>;
    struct Best {
      Acc value;
      std::int64_t index;
    };
    const T* x = static_cast<const T*>(in);
    T* y = static_cast<T*>(values);
    for_each_column<Best>(
        outer, size, inner, /*reverse=*/false, [](Best& best) { best.index = -1; },
        [&](Best& best, std::int64_t offset, std::int64_t j) {
          const Acc v = static_cast<Acc>(x[offset]);
          if (best.index < 0 || reduce_math::extremum_takes(v, best.value, is_max)) best = {v, j};
          y[offset] = static_cast<T>(best.value);
          indices[offset] = best.index;
        });
  });
}

}  // namespace leangrad::kernels::cpu
