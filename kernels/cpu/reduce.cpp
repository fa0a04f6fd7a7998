// Reductions on the CPU: sum, mean, max and argmax of contiguous runs (one run per output), the
// reference implementation for kernels/cuda/reduce.cu.
//
// Policy:
//   - Sums are pairwise (Note [Pairwise summation]) in the accumulator type of reduce_math.h.
//   - Work is split over outputs when there are enough of them; otherwise each run is cut into
//     fixed chunks of kChunk elements reduced in parallel and merged in a fixed tree
//     (Note [Deterministic splitting]). Either way the result is bit-for-bit the same, whatever
//     the number of threads.
#include "kernels/cpu/reduce.h"

#include <omp.h>

#include <cmath>
#include <limits>
#include <vector>

#include "kernels/cpu/parallel_for.h"
#include "kernels/dispatch.h"
#include "kernels/reduce_math.h"

namespace leangrad::kernels::cpu {

namespace {

using reduce_math::ArgmaxPair;

// Note [Pairwise summation]
// Adding n floats one by one into one accumulator has an error that grows like n * eps: 1e7
// values of 0.1f sum to ~1.09e6 instead of 1e6. Summing the two halves separately and adding the
// results makes it grow like log2(n) * eps. The tree stops at leaves of kBlock elements, summed
// straight into kLanes independent accumulators (which the compiler keeps in SIMD registers);
// the leaf error is kBlock / kLanes * eps, small and independent of n.
constexpr std::int64_t kBlock = 128;
constexpr int kLanes = 8;

// Note [Deterministic splitting]
// The pairwise tree always splits a range of n elements at the largest power-of-two multiple of
// kBlock below n. So every aligned chunk of kChunk (= kBlock * 2^k) elements is one subtree, and
// the tree above the chunks has the same shape over the chunk partials (split at the largest
// power of two below their count). Summing chunks in parallel and merging the partials with
// merge_tree therefore adds exactly the same numbers in exactly the same order as one thread
// summing the whole run. Max and argmax are exactly associative, so they split the same way.
constexpr std::int64_t kChunk = kBlock * 256;  // 32768 elements
// Elements per task below which splitting over threads costs more than it saves.
constexpr std::int64_t kReduceGrain = 32768;

// The largest power-of-two multiple of `unit` strictly below n (n > unit).
std::int64_t pairwise_split(std::int64_t n, std::int64_t unit) {
  std::int64_t h = unit;
  while (2 * h < n)
    h *= 2;
  return h;
}

template <typename Acc, typename T>
Acc block_sum(const T* x, std::int64_t n) {
  Acc lanes[kLanes] = {};
  std::int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    for (int l = 0; l < kLanes; ++l)
      lanes[l] += static_cast<Acc>(x[i + l]);
  }
  for (int l = 0; i < n; ++i, ++l)
    lanes[l] += static_cast<Acc>(x[i]);
  return ((lanes[0] + lanes[1]) + (lanes[2] + lanes[3])) +
         ((lanes[4] + lanes[5]) + (lanes[6] + lanes[7]));
}

template <typename Acc, typename T>
Acc pairwise_sum(const T* x, std::int64_t n) {
  if (n <= kBlock) return block_sum<Acc>(x, n);
  const std::int64_t h = pairwise_split(n, kBlock);
  return pairwise_sum<Acc>(x, h) + pairwise_sum<Acc>(x + h, n - h);
}

// Merges m >= 1 partials in the tree shape of Note [Deterministic splitting].
template <typename Acc, typename Merge>
Acc merge_tree(const Acc* partials, std::int64_t m, const Merge& merge) {
  if (m == 1) return partials[0];
  const std::int64_t h = pairwise_split(m, 1);
  return merge(merge_tree(partials, h, merge), merge_tree(partials + h, m - h, merge));
}

// Max of a non-empty range; NaN if any element is NaN. The NaN test is kept out of the compare so
// the loop stays branch-free.
template <typename Acc, typename T>
Acc range_max(const T* x, std::int64_t n) {
  Acc best = reduce_math::max_identity<Acc>();
  bool saw_nan = false;
  for (std::int64_t i = 0; i < n; ++i) {
    const Acc v = static_cast<Acc>(x[i]);
    saw_nan |= reduce_math::is_nan(v);
    best = v > best ? v : best;
  }
  if constexpr (std::is_floating_point_v<Acc>) {
    if (saw_nan) return std::numeric_limits<Acc>::quiet_NaN();
  }
  return best;
}

// First maximum of the non-empty range x[0, n), reported as index `first + i`.
template <typename Acc, typename T>
ArgmaxPair<Acc> range_argmax(const T* x, std::int64_t n, std::int64_t first) {
  ArgmaxPair<Acc> best = {static_cast<Acc>(x[0]), first};
  for (std::int64_t i = 1; i < n; ++i) {
    const Acc v = static_cast<Acc>(x[i]);
    // Strictly greater keeps the first occurrence; once best is NaN nothing replaces it.
    if (v > best.value || (reduce_math::is_nan(v) && !reduce_math::is_nan(best.value))) {
      best = {v, first + i};
    }
  }
  return best;
}

// The driver shared by every reduction. run(o, begin, len) reduces elements [begin, begin + len)
// of run o (len <= kChunk, begin a multiple of kChunk, or the whole run); merge combines two
// partials; store(o, value) writes output o.
template <typename Acc, typename Run, typename Merge, typename Store>
void reduce_runs(std::int64_t num_outputs, std::int64_t reduce_size, const Run& run,
                 const Merge& merge, const Store& store) {
  const std::int64_t num_chunks = (reduce_size + kChunk - 1) / kChunk;
  if (num_outputs >= omp_get_max_threads() || num_chunks <= 1) {
    const std::int64_t grain =
        std::max<std::int64_t>(1, kReduceGrain / std::max<std::int64_t>(reduce_size, 1));
    parallel_for(num_outputs, grain, [&](std::int64_t begin, std::int64_t end) {
      for (std::int64_t o = begin; o < end; ++o)
        store(o, run(o, 0, reduce_size));
    });
    return;
  }
  // Few long runs: one task per (output, chunk), then each output merges its chunks in order.
  std::vector<Acc> partials(static_cast<std::size_t>(num_outputs * num_chunks));
  parallel_for(num_outputs * num_chunks, 1, [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t t = begin; t < end; ++t) {
      const std::int64_t o = t / num_chunks;
      const std::int64_t first = (t % num_chunks) * kChunk;
      partials[t] = run(o, first, std::min(kChunk, reduce_size - first));
    }
  });
  for (std::int64_t o = 0; o < num_outputs; ++o) {
    store(o, merge_tree(partials.data() + o * num_chunks, num_chunks, merge));
  }
}

template <typename T>
void sum_or_mean(bool mean, void* out, const T* x, std::int64_t num_outputs, std::int64_t n) {
  using Acc = reduce_math::sum_acc_t<T>;
  using Out = reduce_math::sum_out_t<T>;
  Out* y = static_cast<Out*>(out);
  const auto run = [&](std::int64_t o, std::int64_t first, std::int64_t len) {
    return pairwise_sum<Acc>(x + o * n + first, len);
  };
  const auto add = [](Acc a, Acc b) { return a + b; };
  const auto store = [&](std::int64_t o, Acc sum) {
    if constexpr (std::is_floating_point_v<Acc>) {
      // Mean of nothing is 0 / 0 = NaN, as in PyTorch.
      y[o] = static_cast<Out>(mean ? sum / static_cast<Acc>(n) : sum);
    } else {
      y[o] = static_cast<Out>(sum);
    }
  };
  reduce_runs<Acc>(num_outputs, n, run, add, store);
}

}  // namespace

void reduce(ReduceOp op, DType dtype, void* out, const void* in, std::int64_t num_outputs,
            std::int64_t reduce_size) {
  switch (op) {
    case ReduceOp::Sum:
      dispatch_all(dtype, "sum", [&]<typename T>() {
        sum_or_mean<T>(false, out, static_cast<const T*>(in), num_outputs, reduce_size);
      });
      return;
    case ReduceOp::Mean:
      dispatch_floating(dtype, "mean", [&]<typename T>() {
        sum_or_mean<T>(true, out, static_cast<const T*>(in), num_outputs, reduce_size);
      });
      return;
    case ReduceOp::Max:
      dispatch_all(dtype, "max", [&]<typename T>() {
        using Acc = reduce_math::max_acc_t<T>;
        const T* x = static_cast<const T*>(in);
        T* y = static_cast<T*>(out);
        const std::int64_t n = reduce_size;
        reduce_runs<Acc>(
            num_outputs, n,
            [&](std::int64_t o, std::int64_t first, std::int64_t len) {
              return range_max<Acc>(x + o * n + first, len);
            },
            [](Acc a, Acc b) { return reduce_math::max_propagate_nan(a, b); },
            [&](std::int64_t o, Acc v) { y[o] = static_cast<T>(v); });
      });
      return;
  }
  LG_THROW(Error, "reduce: unknown op ", static_cast<int>(op));
}

void argmax(DType dtype, std::int64_t* out, const void* in, std::int64_t num_outputs,
            std::int64_t reduce_size) {
  dispatch_all(dtype, "argmax", [&]<typename T>() {
    using Acc = reduce_math::max_acc_t<T>;
    using Pair = ArgmaxPair<Acc>;
    const T* x = static_cast<const T*>(in);
    const std::int64_t n = reduce_size;
    reduce_runs<Pair>(
        num_outputs, n,
        [&](std::int64_t o, std::int64_t first, std::int64_t len) {
          return range_argmax<Acc>(x + o * n + first, len, first);
        },
        [](Pair a, Pair b) { return reduce_math::argmax_merge(a, b); },
        [&](std::int64_t o, Pair best) { out[o] = best.index; });
  });
}

}  // namespace leangrad::kernels::cpu
