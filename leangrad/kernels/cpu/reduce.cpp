// Reductions on the CPU: sum, mean, max, min, prod and argmax, the reference implementation for
// kernels/cuda/reduce.cu. Two layouts (kernels/backend.h):
//   runs    (inner == 1): each output reduces one contiguous run;
//   columns (inner > 1):  each output reduces a column of an (R, inner) slab, e.g. sum over dim 0
//                         of a contiguous matrix; kColumns adjacent columns are reduced together
//                         so the inner loop runs along contiguous memory.
//
// Policy:
//   - Sums are pairwise over the reduced index (Note [Pairwise summation]) in the accumulator
//     type of reduce_math.h.
//   - Work is split over outputs (or column blocks) when there are enough of them; otherwise the
//     reduced range is cut into fixed chunks of kChunk reduced in parallel and merged in a fixed
//     tree (Note [Deterministic splitting]). Either way the result is bit-for-bit the same,
//     whatever the number of threads.
#include <leangrad/kernels/backend.h>

#include <algorithm>
#include <cstring>
#include <limits>
#include <type_traits>
#include <utility>
#include <vector>

#include <leangrad/kernels/cpu/half_convert.h>
#include <leangrad/kernels/cpu/parallel_for.h>
#include <leangrad/kernels/dispatch.h>
#include <leangrad/kernels/reduce_math.h>

namespace leangrad::kernels::cpu {

namespace {

using reduce_math::ArgmaxPair;

// Note [Pairwise summation]
// Adding n floats one by one into one accumulator has an error that grows like n * eps: 1e7
// values of 0.1f sum to ~1.09e6 instead of 1e6. Summing the two halves separately and adding the
// results makes it grow like log2(n) * eps. The tree stops at leaves of kBlock elements, summed
// straight; the leaf error is at most kBlock * eps, independent of n.
//
// The tree is one of lane vectors (LaneSums: one AVX2 vector of the accumulator type, 8 floats or
// 4 doubles or int64s, the int64s added as uint64s so that they wrap around without undefined
// behaviour, SumLane), in this order, which Reduce.SumsFollowThePairwiseTreeOfLanes writes out
// as a recursion and compares bit for bit:
//   - a leaf adds its element i into accumulator i % (4 * lanes), four vectors that add
//     independently, and returns (a0 + a1) + (a2 + a3), lane by lane;
//   - a range longer than kBlock is cut at pairwise_split(n, kBlock), its halves added lane by
//     lane (pairwise_sum walks the leaves in order and merges them as a binary counter does,
//     which builds the same tree without a call per node);
//   - the root adds its lanes pairwise, neighbours first (LaneSums::total).
// Each lane is a pairwise sum of its own elements, so the bound holds lane by lane, and a leaf's
// chains are kBlock / (4 * lanes) adds long. It had been a tree of scalars whose leaves each
// ended by adding their 8 lanes: one chain of dependent vector adds per leaf, a horizontal add
// and a call per node, latency where the loads could stream. On one thread a (64, 2048) float32
// in L2 summed along its rows took 7.0 us, now 3.1 (LibTorch 1.13: 3.5); rows of 196 (a conv
// bias gradient's) 48 -> 38 us for 4096 of them (LibTorch 35); bfloat16 (2048, 2048) 0.39 ->
// 0.18 ms (bench/results/2026-12-07-cpu-sum-lanes-zen5-2core.md).
constexpr std::int64_t kBlock = 128;

// Note [Deterministic splitting]
// The pairwise tree always splits a range of n elements at the largest power-of-two multiple of
// kBlock below n. So every aligned chunk of kChunk (= kBlock * 2^k) elements is one subtree, and
// the tree above the chunks has the same shape over the chunk partials (split at the largest
// power of two below their count). Reducing chunks in parallel and merging the partials with
// merge_tree therefore combines exactly the same numbers in exactly the same order as one thread
// reducing the whole range. Max and argmax are exactly associative, so they split the same way.
constexpr std::int64_t kChunk = kBlock * 256;  // 32768 elements (runs) or rows (columns)
// Elements per task below which splitting over threads costs more than it saves.
constexpr std::int64_t kReduceGrain = 32768;
// Columns reduced together in the column layout.
constexpr std::int64_t kColumns = 64;

// The largest power-of-two multiple of `unit` strictly below n (n > unit).
std::int64_t pairwise_split(std::int64_t n, std::int64_t unit) {
  std::int64_t h = unit;
  while (2 * h < n)
    h *= 2;
  return h;
}

// Merges m >= 1 partials in the tree shape of Note [Deterministic splitting].
template <typename Acc, typename Merge>
Acc merge_tree(const Acc* partials, std::int64_t m, const Merge& merge) {
  if (m == 1) return partials[0];
  const std::int64_t h = pairwise_split(m, 1);
  return merge(merge_tree(partials, h, merge), merge_tree(partials + h, m - h, merge));
}

// The same for partial column blocks: m blocks of `width` values, kColumns apart.
template <typename Acc, typename Merge>
void merge_tree_columns(const Acc* partials, std::int64_t m, std::int64_t width, Acc* out,
                        const Merge& merge) {
  if (m == 1) {
    std::copy(partials, partials + width, out);
    return;
  }
  const std::int64_t h = pairwise_split(m, 1);
  merge_tree_columns(partials, h, width, out, merge);
  Acc right[kColumns];
  merge_tree_columns(partials + h * kColumns, m - h, width, right, merge);
  for (std::int64_t j = 0; j < width; ++j)
    out[j] = merge(out[j], right[j]);
}

// Note [float16 reductions read float]
//   A float16 element converted by core/half.h, one value at a time, is integer code with
//   branches that GCC does not vectorise: a float16 sum of 16M elements took 29 ms where the
//   bfloat16 one took 3.7. So every loop below reads its elements through read_as_float, which
//   hands float16 over widened into a float buffer by kernels/cpu/half_convert.h (F16C), a leaf,
//   a chunk or a row segment at a time, and every other dtype as it is. Widening is exact and
//   every sum, maximum and comparison is the same, in the same order, so the results are the same
//   bits, and argmax the same indices (Reduce.Float16ReadsAsItsFloat32Widening).
constexpr std::int64_t kWidenChunk = 512;

// Calls f(values, m, c) for consecutive pieces x[c, c + m) covering x[0, n): one piece, x itself,
// for every T but float16, whose pieces of up to kWidenChunk are widened to float first (a range
// of at most kWidenChunk is one piece there too). Note [float16 reductions read float].
template <typename T, typename F>
void read_as_float(const T* x, std::int64_t n, const F& f) {
  if constexpr (std::is_same_v<T, Half>) {
    float widened[kWidenChunk];
    for (std::int64_t c = 0; c < n; c += kWidenChunk) {
      const std::int64_t m = std::min(kWidenChunk, n - c);
      widen(x + c, widened, m);
      f(static_cast<const float*>(widened), m, c);
    }
  } else {
    f(x, n, std::int64_t{0});
  }
}

// ---- Runs (inner == 1) -----------------------------------------------------------------------

// One AVX2 register of Acc (8 floats, 4 doubles or int64s, 8 int32s) in GCC's vector extension,
// so that a loop's running sums or maxima stay in registers: an array of 32 lanes added in a loop
// did not (its sums ran 2.6 times slower); 8 lanes of double or int64, two registers, were
// spilled around their conversions (int32's sums ran 5 times slower).
template <typename Acc>
struct Lanes {
  static constexpr int kCount = static_cast<int>(32 / sizeof(Acc));
  typedef Acc Vector __attribute__((vector_size(kCount * sizeof(Acc))));

  // x[0, kCount) as Acc.
  template <typename T>
  static Vector load(const T* x) {
    Vector w;
    if constexpr (std::is_same_v<T, Acc>) {
      std::memcpy(&w, x, sizeof w);
    } else {
      Acc widened[kCount];
      for (int l = 0; l < kCount; ++l)
        widened[l] = static_cast<Acc>(x[l]);
      std::memcpy(&w, widened, sizeof w);
    }
    return w;
  }
};

// The type a sum's lanes add in: Acc, but for integers its unsigned twin, in which a sum wraps
// around as PyTorch's does, where signed overflow would be undefined (reduce_math::wrapping_add).
template <typename Acc, bool = std::is_integral_v<Acc>>
struct SumLaneOf {
  using type = Acc;
};
template <typename Acc>
struct SumLaneOf<Acc, true> {
  using type = std::make_unsigned_t<Acc>;
};
template <typename Acc>
using SumLane = typename SumLaneOf<Acc>::type;

// The running sums of Note [Pairwise summation], one Lanes vector.
template <typename Acc>
struct LaneSums {
  using Lane = SumLane<Acc>;
  static constexpr int kCount = Lanes<Lane>::kCount;
  using Vector = typename Lanes<Lane>::Vector;
  Vector v{};

  LaneSums operator+(const LaneSums& other) const { return {v + other.v}; }

  // v += x[0, kCount) as Lane.
  template <typename T>
  void add(const T* x) {
    v += Lanes<Lane>::load(x);
  }

  // x[0, m), m < kCount, as Lane in the first m lanes, +0 in the others: built in registers, where
  // a buffer of scalar stores read back as one vector waited for the stores (a run of 196 floats
  // spent 40% of its time there).
  template <typename T>
  static LaneSums part(const T* x, std::int64_t m) {
    return part(x, m, std::make_integer_sequence<int, kCount>());
  }
  template <typename T, int... kLane>
  static LaneSums part(const T* x, std::int64_t m, std::integer_sequence<int, kLane...>) {
    return {Vector{(kLane < m ? static_cast<Lane>(x[kLane]) : Lane(0))...}};
  }

  // The lanes' sum, pairwise, neighbours first: the order in which the scalar tree's leaves
  // added their 8 lanes, so that a run of up to 24 floats or 4 doubles keeps the bits it had
  // (the few squares cdist adds for |x|^2 + |y|^2 - 2 x.y still cancel exactly against the
  // matrix product's x.y when x = y, as PyTorch's do).
  Acc total() const {
    Lane lanes[kCount];
    std::memcpy(lanes, &v, sizeof v);
    for (int width = kCount / 2; width >= 1; width /= 2)
      for (int l = 0; l < width; ++l)
        lanes[l] = lanes[2 * l] + lanes[2 * l + 1];
    return static_cast<Acc>(lanes[0]);
  }
};

// The straight sum of a leaf x[0, n), n <= kBlock, lane by lane: element i in accumulator
// (i / lanes) % 4, lane i % lanes, the four accumulators added at the end. Whole groups of lanes
// are loaded straight; the last part-group is padded with +0 in its accumulator's other lanes
// (adding +0 changes no accumulator: one starts at +0 and so is never -0), built in registers
// (LaneSums::part) and added through a switch: a zero-padded 32-element buffer for the whole
// tail (which GCC filled with a call to memcpy), or a pointer to the part-group's accumulator
// (which kept all four in memory), made runs of 196 floats (a conv bias gradient's) twice as
// slow.
template <typename Acc, typename T>
[[gnu::always_inline]] inline LaneSums<Acc> leaf_sum(const T* x, std::int64_t n) {
  constexpr int kCount = LaneSums<Acc>::kCount;
  LaneSums<Acc> a0, a1, a2, a3;
  std::int64_t i = 0;
  for (; i + 4 * kCount <= n; i += 4 * kCount) {
    a0.add(x + i);
    a1.add(x + i + kCount);
    a2.add(x + i + 2 * kCount);
    a3.add(x + i + 3 * kCount);
  }
  int groups = 0;  // whole groups after the loop's
  if (i + kCount <= n) {
    a0.add(x + i);
    i += kCount;
    groups = 1;
    if (i + kCount <= n) {
      a1.add(x + i);
      i += kCount;
      groups = 2;
      if (i + kCount <= n) {
        a2.add(x + i);
        i += kCount;
        groups = 3;
      }
    }
  }
  if (i < n) {
    const LaneSums<Acc> part = LaneSums<Acc>::part(x + i, n - i);
    switch (groups) {
      case 0:
        a0 = a0 + part;
        break;
      case 1:
        a1 = a1 + part;
        break;
      case 2:
        a2 = a2 + part;
        break;
      default:
        a3 = a3 + part;
        break;
    }
  }
  return (a0 + a1) + (a2 + a3);
}

static_assert(kWidenChunk % kBlock == 0, "a float16 piece of pairwise_sum holds whole leaves");

// The pairwise sum of x[0, n), lane by lane. Its leaves are the kBlock-element blocks in order
// (the last one shorter), merged as they come as a binary counter merges: the new leaf with the
// subtree on top of the stack while that holds as many leaves, so that the stack holds complete
// subtrees of decreasing powers of two leaves; at the end they add right to left. That is the
// tree of pairwise_split's cuts (left: the largest power of two of leaves below the whole) without
// a call per node, which had cost as much as the leaves' adds. float16 is widened a piece of
// whole leaves at a time (read_as_float).
template <typename Acc, typename T>
LaneSums<Acc> pairwise_sum(const T* x, std::int64_t n) {
  typename LaneSums<Acc>::Vector stack[64];  // left uninitialised: zeroing it cost a leaf's time
  int depth = 0;
  std::uint64_t leaves = 0;
  read_as_float(x, n, [&](const auto* v, std::int64_t m, std::int64_t) {
    for (std::int64_t first = 0; first < m; first += kBlock) {
      LaneSums<Acc> sum = leaf_sum<Acc>(v + first, std::min(kBlock, m - first));
      ++leaves;
      for (std::uint64_t count = leaves; (count & 1) == 0; count >>= 1)
        sum = LaneSums<Acc>{stack[--depth]} + sum;
      stack[depth++] = sum.v;
    }
  });
  LaneSums<Acc> sum;  // zero: the sum of nothing
  if (depth > 0) sum.v = stack[--depth];
  while (depth > 0)
    sum = LaneSums<Acc>{stack[--depth]} + sum;
  return sum;
}

// Note [Maxima in lanes]
//   A running maximum is a chain: each element's compare and select wait for the one before, one
//   element a cycle (amax of a (2048, 2048) float32 along its rows took 1.9 ms on one thread, its
//   sum 0.22). So range_extremum keeps kMaxLanes running maxima, element i in lane i % kMaxLanes,
//   which GCC runs as 4 independent AVX2 vectors of floats, and takes the maximum of the lanes at
//   the end. Every maximum is exact, so the value is the one loop's; which of several equal
//   elements gives it is not: the one loop gives the first of equal elements (b > a keeps a, so a
//   -0.0 before a +0.0 wins) and the last NaN (a NaN replaces whatever came before), the lanes
//   whichever their order gives. So a maximum that is zero or NaN, which the lanes only find
//   rarely, is taken again from x itself: its first zero, its last NaN, the one loop's bits
//   always. range_argmax takes the maximum so, then the first index that holds it (the first NaN
//   when it is NaN): the first maximum, as the one loop found it with a select of value and index
//   per element, 8.0 ms there. Now 0.24 and 0.37 ms (LibTorch 1.13: 0.17 and 2.7;
//   bench/results/2026-12-07-cpu-transposed-operands-zen5-2core.md). A minimum (ReduceOp::Min,
//   amin and min) is the mirror, b < a: the same lanes and the same fix-ups (its first zero, its
//   last NaN), where amin had been amax of the negated input, a pass more. Since session 72 the
//   lanes keep the plain maximum (one vmaxps a vector) and look for NaNs apart (lanes_extremum),
//   which the fix-up then finds: 0.23 -> 0.16 ms and 0.37 -> 0.30
//   (bench/results/2026-12-07-cpu-maxima-lanes-zen5-2core.md).
constexpr int kMaxLanes = 32;

// The first i in [0, n) for which found(x[i] as Acc), or n: kMaxLanes elements at a time asked
// whether any of them is found (a vector compare and an or), then that block one at a time.
template <typename Acc, typename T, typename Found>
std::int64_t first_where(const T* x, std::int64_t n, const Found& found) {
  std::int64_t at = n;
  read_as_float(x, n, [&](const auto* v, std::int64_t m, std::int64_t c) {
    if (at < n) return;
    std::int64_t i = 0;
    for (; i + kMaxLanes <= m; i += kMaxLanes) {
      int any = 0;
      for (int l = 0; l < kMaxLanes; ++l)
        any |= found(static_cast<Acc>(v[i + l])) ? 1 : 0;
      if (any) break;
    }
    for (; i < m; ++i)
      if (found(static_cast<Acc>(v[i]))) {
        at = c + i;
        return;
      }
  });
  return at;
}

// The maximum (kMin false) or the minimum: its identity and its step, where NaN wins and of equal
// elements the earlier is kept (reduce_math's max_propagate_nan, min_propagate_nan).
template <bool kMin>
struct Extremum {
  static constexpr bool kIsMin = kMin;
  template <typename Acc>
  static Acc identity() {
    return kMin ? reduce_math::min_identity<Acc>() : reduce_math::max_identity<Acc>();
  }
  template <typename Acc>
  static Acc step(Acc a, Acc b) {
    return kMin ? reduce_math::min_propagate_nan(a, b) : reduce_math::max_propagate_nan(a, b);
  }
};
using Maximum = Extremum<false>;

// The extremum E of x[0, n) in kMaxLanes lanes, NaN when any element is NaN (the identity when n
// is 0; when there is a NaN, which one is range_extremum's to find). Four Lanes vectors, each
// lane keeping b where b is beyond a (one vmaxps or vminps; which zero a lane keeps of two is
// range_extremum's to settle too), and the NaNs looked for apart (b != b, or-ed over the four
// vectors), where E::step's NaN-aware select per vector had cost twice the instructions: amax
// along the rows of a (64, 2048) float32 in L2, 7.0 -> 5.0 us on one thread (LibTorch 1.13:
// 6.1). The four vectors are folded into one the same way, then its lanes and the rest of x by
// E::step. Note [Maxima in lanes].
template <typename E, typename Acc, typename T>
Acc lanes_extremum(const T* x, std::int64_t n) {
  using Vector = typename Lanes<Acc>::Vector;
  using Mask = decltype(Vector{} != Vector{});
  constexpr int kCount = Lanes<Acc>::kCount;
  static_assert(4 * kCount <= kMaxLanes, "the lanes of four vectors");
  const Acc identity = E::template identity<Acc>();
  const auto step = [](Vector a, Vector b) {
    if constexpr (E::kIsMin) {
      return b < a ? b : a;
    } else {
      return b > a ? b : a;
    }
  };
  Vector a0 = Vector{} + identity, a1 = a0, a2 = a0, a3 = a0;
  Mask unordered{};
  Acc rest = identity;
  read_as_float(x, n, [&](const auto* v, std::int64_t m, std::int64_t) {
    std::int64_t i = 0;
    for (; i + 4 * kCount <= m; i += 4 * kCount) {
      const Vector b0 = Lanes<Acc>::load(v + i), b1 = Lanes<Acc>::load(v + i + kCount),
                   b2 = Lanes<Acc>::load(v + i + 2 * kCount),
                   b3 = Lanes<Acc>::load(v + i + 3 * kCount);
      a0 = step(a0, b0);
      a1 = step(a1, b1);
      a2 = step(a2, b2);
      a3 = step(a3, b3);
      if constexpr (std::is_floating_point_v<Acc>)
        unordered |= ((b0 != b0) | (b1 != b1)) | ((b2 != b2) | (b3 != b3));
    }
    for (; i < m; ++i)
      rest = E::step(rest, static_cast<Acc>(v[i]));
  });
  if constexpr (std::is_floating_point_v<Acc>) {
    bool any = false;
    for (int l = 0; l < kCount; ++l)
      any = any || unordered[l] != 0;
    if (any) return std::numeric_limits<Acc>::quiet_NaN();
  }
  const Vector folded = step(step(a0, a1), step(a2, a3));
  Acc lanes[kCount];
  std::memcpy(lanes, &folded, sizeof folded);
  Acc best = rest;
  for (int l = 0; l < kCount; ++l)
    best = E::step(best, lanes[l]);
  return best;
}

// The extremum E of x[0, n), with the bits of the one loop `best = E::step(best, x[i])`.
template <typename E, typename Acc, typename T>
Acc range_extremum(const T* x, std::int64_t n) {
  const Acc best = lanes_extremum<E, Acc>(x, n);
  if constexpr (std::is_floating_point_v<Acc>) {
    if (reduce_math::is_nan(best)) {  // the last NaN
      for (std::int64_t i = n - 1;; --i)
        if (reduce_math::is_nan(static_cast<Acc>(x[i]))) return static_cast<Acc>(x[i]);
    }
    if (best == Acc{0}) {  // the first zero, of either sign
      return static_cast<Acc>(x[first_where<Acc>(x, n, [](Acc v) { return v == Acc{0}; })]);
    }
  }
  return best;
}

// First maximum of the non-empty range x[0, n) (the first NaN when there is one), reported as
// index `first + i`. Note [Maxima in lanes].
template <typename Acc, typename T>
ArgmaxPair<Acc> range_argmax(const T* x, std::int64_t n, std::int64_t first) {
  const Acc best = lanes_extremum<Maximum, Acc>(x, n);
  const std::int64_t i = reduce_math::is_nan(best)
                             ? first_where<Acc>(x, n, [](Acc v) { return reduce_math::is_nan(v); })
                             : first_where<Acc>(x, n, [best](Acc v) { return v == best; });
  return {static_cast<Acc>(x[i]), first + i};
}

// The driver of the run layout. run(o, first, len) reduces elements [first, first + len) of run
// o (the whole run, or one aligned chunk); merge combines two partials; store(o, value) writes
// output o.
template <typename Acc, typename Run, typename Merge, typename Store>
void reduce_runs(std::int64_t num_outputs, std::int64_t reduce_size, const Run& run,
                 const Merge& merge, const Store& store) {
  const std::int64_t num_chunks = (reduce_size + kChunk - 1) / kChunk;
  if (num_outputs >= max_threads() || num_chunks <= 1) {
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
      const std::int64_t first = (t % num_chunks) * kChunk;
      partials[t] = run(t / num_chunks, first, std::min(kChunk, reduce_size - first));
    }
  });
  for (std::int64_t o = 0; o < num_outputs; ++o) {
    store(o, merge_tree(partials.data() + o * num_chunks, num_chunks, merge));
  }
}

// ---- Columns (inner > 1) ---------------------------------------------------------------------

// One task of the column layout: columns [j0, j0 + width) of slab o.
struct ColumnBlock {
  std::int64_t o, j0, width;
};

// Reduces rows [row0, row0 + len) of a column block into out[0, width) with the pairwise tree
// over rows. leaf(row0, len, out) reduces at most kBlock rows straight.
template <typename Acc, typename Leaf, typename Merge>
void column_tree(std::int64_t row0, std::int64_t len, std::int64_t width, Acc* out,
                 const Leaf& leaf, const Merge& merge) {
  if (len <= kBlock) {
    leaf(row0, len, out);
    return;
  }
  const std::int64_t h = pairwise_split(len, kBlock);
  column_tree(row0, h, width, out, leaf, merge);
  Acc right[kColumns];
  column_tree(row0 + h, len - h, width, right, leaf, merge);
  for (std::int64_t j = 0; j < width; ++j)
    out[j] = merge(out[j], right[j]);
}

// The driver of the column layout, parallel over column blocks or over chunks of kChunk rows as
// in reduce_runs. leaf(block, row0, len, out) reduces rows straight; store(block, values) writes
// the block's outputs.
template <typename Acc, typename Leaf, typename Merge, typename Store>
void reduce_columns(std::int64_t outer, std::int64_t reduce_size, std::int64_t inner,
                    const Leaf& leaf, const Merge& merge, const Store& store) {
  const std::int64_t blocks_per_slab = (inner + kColumns - 1) / kColumns;
  const std::int64_t num_blocks = outer * blocks_per_slab;
  const auto block_at = [&](std::int64_t t) {
    const std::int64_t j0 = (t % blocks_per_slab) * kColumns;
    return ColumnBlock{t / blocks_per_slab, j0, std::min(kColumns, inner - j0)};
  };
  const auto reduce_rows = [&](const ColumnBlock& b, std::int64_t row0, std::int64_t len,
                               Acc* out) {
    column_tree(
        row0, len, b.width, out,
        [&](std::int64_t r0, std::int64_t n, Acc* o) { leaf(b, r0, n, o); }, merge);
  };
  const std::int64_t num_chunks = (reduce_size + kChunk - 1) / kChunk;
  if (num_blocks >= max_threads() || num_chunks <= 1) {
    const std::int64_t grain =
        std::max<std::int64_t>(1, kReduceGrain / std::max<std::int64_t>(reduce_size * kColumns, 1));
    parallel_for(num_blocks, grain, [&](std::int64_t begin, std::int64_t end) {
      for (std::int64_t t = begin; t < end; ++t) {
        const ColumnBlock b = block_at(t);
        Acc values[kColumns];
        reduce_rows(b, 0, reduce_size, values);
        store(b, values);
      }
    });
    return;
  }
  std::vector<Acc> partials(static_cast<std::size_t>(num_blocks * num_chunks * kColumns));
  parallel_for(num_blocks * num_chunks, 1, [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t u = begin; u < end; ++u) {
      const std::int64_t row0 = (u % num_chunks) * kChunk;
      reduce_rows(block_at(u / num_chunks), row0, std::min(kChunk, reduce_size - row0),
                  partials.data() + u * kColumns);
    }
  });
  for (std::int64_t t = 0; t < num_blocks; ++t) {
    const ColumnBlock b = block_at(t);
    Acc values[kColumns];
    merge_tree_columns(partials.data() + t * num_chunks * kColumns, num_chunks, b.width, values,
                       merge);
    store(b, values);
  }
}

// ---- Ops -------------------------------------------------------------------------------------

// Out: sum_out_t<T>, or float for the float32 partials of 16-bit input (reduce_math.h).
template <typename T, typename Out>
void sum_or_mean(bool mean, Out* y, const T* x, std::int64_t outer, std::int64_t n,
                 std::int64_t inner) {
  using Acc = reduce_math::sum_acc_t<T>;
  const auto finish = [&](Acc sum) {
    if constexpr (std::is_floating_point_v<Acc>) {
      // Mean of nothing is 0 / 0 = NaN, as in PyTorch.
      return static_cast<Out>(mean ? sum / static_cast<Acc>(n) : sum);
    } else {
      return static_cast<Out>(sum);
    }
  };
  const auto add = [](Acc a, Acc b) { return reduce_math::wrapping_add(a, b); };
  if (inner == 1) {
    using Sums = LaneSums<Acc>;
    reduce_runs<Sums>(
        outer, n,
        [&](std::int64_t o, std::int64_t first, std::int64_t len) {
          return pairwise_sum<Acc>(x + o * n + first, len);
        },
        [](const Sums& a, const Sums& b) { return a + b; },
        [&](std::int64_t o, const Sums& sum) { y[o] = finish(sum.total()); });
    return;
  }
  reduce_columns<Acc>(
      outer, n, inner,
      [&](const ColumnBlock& b, std::int64_t row0, std::int64_t len, Acc* acc) {
        std::fill(acc, acc + b.width, Acc(0));
        const T* base = x + (b.o * n + row0) * inner + b.j0;
        for (std::int64_t r = 0; r < len; ++r) {
          read_as_float(base + r * inner, b.width,
                        [&](const auto* v, std::int64_t m, std::int64_t c) {
                          for (std::int64_t j = 0; j < m; ++j)
                            acc[c + j] = add(acc[c + j], static_cast<Acc>(v[j]));
                        });
        }
      },
      add,
      [&](const ColumnBlock& b, const Acc* values) {
        for (std::int64_t j = 0; j < b.width; ++j)
          y[b.o * inner + b.j0 + j] = finish(values[j]);
      });
}

// The product, in sum_acc_t (integers wrap around); the product of nothing is 1. Out as
// sum_or_mean's. Runs multiply in order; columns in the pairwise tree of the sums.
template <typename T, typename Out>
void prod(Out* y, const T* x, std::int64_t outer, std::int64_t n, std::int64_t inner) {
  using Acc = reduce_math::sum_acc_t<T>;
  const auto mul = [](Acc a, Acc b) { return reduce_math::wrapping_mul(a, b); };
  if (inner == 1) {
    reduce_runs<Acc>(
        outer, n,
        [&](std::int64_t o, std::int64_t first, std::int64_t len) {
          Acc p(1);
          read_as_float(x + o * n + first, len, [&](const auto* v, std::int64_t m, std::int64_t) {
            for (std::int64_t i = 0; i < m; ++i)
              p = mul(p, static_cast<Acc>(v[i]));
          });
          return p;
        },
        mul, [&](std::int64_t o, Acc p) { y[o] = static_cast<Out>(p); });
    return;
  }
  reduce_columns<Acc>(
      outer, n, inner,
      [&](const ColumnBlock& b, std::int64_t row0, std::int64_t len, Acc* acc) {
        std::fill(acc, acc + b.width, Acc(1));
        const T* base = x + (b.o * n + row0) * inner + b.j0;
        for (std::int64_t r = 0; r < len; ++r) {
          read_as_float(base + r * inner, b.width,
                        [&](const auto* v, std::int64_t m, std::int64_t c) {
                          for (std::int64_t j = 0; j < m; ++j)
                            acc[c + j] = mul(acc[c + j], static_cast<Acc>(v[j]));
                        });
        }
      },
      mul,
      [&](const ColumnBlock& b, const Acc* values) {
        for (std::int64_t j = 0; j < b.width; ++j)
          y[b.o * inner + b.j0 + j] = static_cast<Out>(values[j]);
      });
}

// max or min (E) over the run or column layout.
template <typename E, typename T>
void extremum(void* out, const T* x, std::int64_t outer, std::int64_t n, std::int64_t inner) {
  using Acc = reduce_math::max_acc_t<T>;
  T* y = static_cast<T*>(out);
  const auto merge = [](Acc a, Acc b) { return E::step(a, b); };
  if (inner == 1) {
    reduce_runs<Acc>(
        outer, n,
        [&](std::int64_t o, std::int64_t first, std::int64_t len) {
          return range_extremum<E, Acc>(x + o * n + first, len);
        },
        merge, [&](std::int64_t o, Acc v) { y[o] = static_cast<T>(v); });
    return;
  }
  reduce_columns<Acc>(
      outer, n, inner,
      [&](const ColumnBlock& b, std::int64_t row0, std::int64_t len, Acc* acc) {
        std::fill(acc, acc + b.width, E::template identity<Acc>());
        const T* base = x + (b.o * n + row0) * inner + b.j0;
        for (std::int64_t r = 0; r < len; ++r) {
          read_as_float(base + r * inner, b.width,
                        [&](const auto* v, std::int64_t m, std::int64_t c) {
                          for (std::int64_t j = 0; j < m; ++j)
                            acc[c + j] = E::step(acc[c + j], static_cast<Acc>(v[j]));
                        });
        }
      },
      merge,
      [&](const ColumnBlock& b, const Acc* values) {
        for (std::int64_t j = 0; j < b.width; ++j) {
          y[b.o * inner + b.j0 + j] = static_cast<T>(values[j]);
        }
      });
}

}  // namespace

void reduce(ReduceOp op, DType dtype, DType out_dtype, void* out, const void* in,
            std::int64_t outer, std::int64_t reduce_size, std::int64_t inner) {
  const auto sum_or_mean_of = [&]<typename T>() {
    reduce_math::dispatch_sum_out<T>(out_dtype, op_name(op), [&]<typename Out>() {
      sum_or_mean<T>(op == ReduceOp::Mean, static_cast<Out*>(out), static_cast<const T*>(in), outer,
                     reduce_size, inner);
    });
  };
  switch (op) {
    case ReduceOp::Sum:
      dispatch_all(dtype, "sum", sum_or_mean_of);
      return;
    case ReduceOp::Mean:
      dispatch_floating(dtype, "mean", sum_or_mean_of);
      return;
    case ReduceOp::Max:
    case ReduceOp::Min:
      LG_CHECK_DTYPE(out_dtype == dtype, op_name(op), ": cannot write ", out_dtype, " from ", dtype,
                     " input (expected ", dtype, ")");
      dispatch_all(dtype, op_name(op), [&]<typename T>() {
        const T* x = static_cast<const T*>(in);
        if (op == ReduceOp::Max)
          extremum<Maximum, T>(out, x, outer, reduce_size, inner);
        else
          extremum<Extremum<true>, T>(out, x, outer, reduce_size, inner);
      });
      return;
    case ReduceOp::Prod:
      dispatch_all(dtype, "prod", [&]<typename T>() {
        reduce_math::dispatch_sum_out<T>(out_dtype, "prod", [&]<typename Out>() {
          prod<T>(static_cast<Out*>(out), static_cast<const T*>(in), outer, reduce_size, inner);
        });
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
