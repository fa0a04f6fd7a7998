// The CPU launchers of the optimizer steps (kernels/backend.h, "Optimizers"): SGD, Adam/AdamW and
// RAdam (float32, float64, float16 and bfloat16) and Adam8bit as one fused pass over the streams of
// every element, run in vector lanes and on every thread. The second CPU kernel beside the
// reference loops of kernels/cpu/optim.cpp, which stay the specification:
// tests/kernels/test_optim_vectorized.cpp checks every option against them, bitwise (Note
// [Vectorised optimizer steps]).
//
// Note [Vectorised optimizer steps]
//   - The math is the update functor of kernels/optim_math.h, as in the reference and on CUDA.
//     Each loop takes a copy of it and sets the fields that select a formula (amsgrad, decoupled
//     weight decay, NaN/Inf skipping, momentum, Nesterov) and the per-tensor switches of its
//     scalars (weight decay on or off, RAdam's rectification, SGD's first step) to compile-time
//     constants, chosen once per tensor and thread (with_constants). The compiler folds every
//     branch on an option, so the loop body is straight-line code that it runs in vector lanes
//     (8 floats or 4 doubles with AVX2, 16 or 8 with AVX-512), reading each stream once. The
//     loops are templates on the functor, so float32, float64, float16 and bfloat16 parameters
//     (Update::Scalar) get the same kernel, each instantiated for its own element type. A 16-bit
//     tensor is taken kWidenChunk elements at a time: its streams widened to float buffers, the
//     float loop run over them, the streams it writes narrowed back, each result rounded once
//     as in the reference (Note [Optimizers in half precision] in kernels/optim_math.h). The
//     conversions are kernels/cpu/half_convert.h's vector loops (Note [Vectorised 16-bit
//     conversions]); with the conversions inside the update's loop GCC 12 kept it scalar, and a
//     16-bit step took 6 (bfloat16) and 35 (float16) times a float32 one though it moves half
//     the bytes.
//     `#pragma GCC ivdep` says that elements do not depend on each other (`omp simd` would keep the
//     functor's array of streams in memory where the NaN/Inf skip returns early, and not
//     vectorise); the file is compiled with -fno-trapping-math and -fno-math-errno
//     (CMakeLists.txt), without which sqrt and the skip's branch stay scalar.
//   - Threads: one parallel region per launch over the concatenation of all the tensors'
//     elements (Adam8bit: blocks), one contiguous range per thread; a thread walks the tensors
//     its range crosses (for_each_part). The reference opens a region per tensor and runs each
//     tensor smaller than kElementwiseGrain on one thread.
//   - Adam8bit, block by block (kQuantBlockSize elements): dequantise both codes, update, store
//     the parameter and keep m and v unquantised, the block's absmax from kMaxLanes running
//     maxima (a tree over the lanes at the end), then quantise both. Four table lookups per
//     element, which a compiler can only make gathers (about one element per cycle) or scalar
//     loads; they, not memory, bounded this loop at 2.5 times float32 Adam's time. Two kernels:
//       * CPUs with AVX-512 VBMI (Ice Lake, Zen 4 and later; chosen at run time in every x86-64
//         build, Note [Choosing the permutes at run time] in kernels/cpu/quant_permute.h): full
//         blocks go through adam8bit_blocks_permute, the lookups made 64 at a time with byte
//         permutes from tables held in registers (kernels/cpu/quant_permute.h, Note [Byte-permute
//         quantisation]: the one place with intrinsics, and why). Block b's update runs in
//         four quarters, and between them the quantisation of block b - 1 and the
//         dequantisation of block b + 1, so that the permutes execute while the update waits
//         for its divisions and square root (two moment buffers alternate between blocks). A
//         block holding a NaN or Inf (refused by the permutes) and a tensor's last partial block
//         take the code tables below.
//       * Every other build, and those blocks: one read per code of a 256-entry map, and each
//         new code from one lookup in a table of the map (kernels/cpu/quant_code_table.h, Note
//         [Code table]), which gives quantize_state's code for every float.
//     Both are the reference's steps element for element (the tests run both, whichever the
//     build has, against it), so they give the same bits on any machine.
//   - Bitwise equal to the reference. This file and kernels/cpu/optim.cpp are compiled with
//     -ffp-contract=off (CMakeLists.txt), so no multiply and add is fused into an FMA in one and
//     not the other; the operations of an element are the same and in the same order, and the
//     vector forms of add, multiply, divide, square root, compare, select and float <-> int
//     conversion round exactly as the scalar ones (IEEE 754). The only results that combine
//     elements are the OR of the skip flags and Adam8bit's absmax, a maximum that is the same in
//     any order: both kernels start it at +0 and replace it only by a strictly larger value
//     (`a < b ? b : a`, as std::max), so NaN never enters and ties keep the same bits.
//   - Gating and flags as in the reference: resolve_step once per tensor before the threads start
//     (Note [Gated step]); skipped_nonfinite is raised when an element was skipped.
//   - A list whose states do not match its options (a state an option needs that is null, or
//     one the options do not use), which optim/ never builds, runs the reference loop whole.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <type_traits>
#include <vector>

#include <leangrad/kernels/backend.h>
#include <leangrad/kernels/cpu/half_convert.h>
#include <leangrad/kernels/cpu/optim_reference.h>
#include <leangrad/kernels/cpu/parallel_for.h>
#include <leangrad/kernels/cpu/quant_code_table.h>
#include <leangrad/kernels/cpu/quant_permute.h>
#include <leangrad/kernels/quantization_math.h>

namespace leangrad::kernels::cpu {
namespace {

// fn(std::bool_constant<b>...) for the runtime values b...: the instantiation of fn whose
// options are those values, as constants.
template <typename F>
decltype(auto) with_constants(const F& fn) {
  return fn();
}
template <typename F, typename... Bools>
decltype(auto) with_constants(const F& fn, bool first, Bools... rest) {
  if (first) return with_constants([&](auto... c) { return fn(std::true_type{}, c...); }, rest...);
  return with_constants([&](auto... c) { return fn(std::false_type{}, c...); }, rest...);
}

// ---- The options of each update, fixed at compile time --------------------------------------
// fix() sets the fields of the functor and of a tensor's scalars that select a formula; each
// value it sets is the one the field had (with_constants picked the instantiation from it), so
// the results do not change, only what the compiler knows. kPresent: bit k set when stream k
// (Note [Optimizer streams]) is read and written; the *_streams functions say which streams the
// options use.

constexpr unsigned sgd_streams(bool momentum) {
  return momentum ? 0b111u : 0b011u;  // param, grad (+ momentum_buffer)
}
constexpr unsigned adam_streams(bool amsgrad) {
  return amsgrad ? 0b11111u : 0b01111u;  // param, grad, exp_avg, exp_avg_sq (+ max_exp_avg_sq)
}
constexpr unsigned kRAdamStreams = 0b1111u;  // param, grad, exp_avg, exp_avg_sq

template <bool kMomentum, bool kNesterov, bool kWeightDecay, bool kFirstStep>
struct SgdOptions {
  static constexpr unsigned kPresent = sgd_streams(kMomentum);
  template <typename T>
  static void fix(SgdUpdateOf<T>& u, typename SgdUpdateOf<T>::TensorScalars& s) {
    using M = typename SgdUpdateOf<T>::Math;
    if constexpr (!kMomentum) u.momentum = M(0);
    u.nesterov = kNesterov;
    if constexpr (!kWeightDecay) s.weight_decay = M(0);
    s.first_step = kFirstStep;
  }
};

template <bool kAmsgrad, bool kDecoupled, bool kWeightDecay, bool kSkipNonfinite>
struct AdamOptions {
  static constexpr unsigned kPresent = adam_streams(kAmsgrad);
  template <typename T>
  static void fix(AdamUpdateOf<T>& u, typename AdamUpdateOf<T>::TensorScalars& s) {
    u.amsgrad = kAmsgrad;
    u.decoupled_weight_decay = kDecoupled;
    u.skip_nonfinite = kSkipNonfinite;
    if constexpr (!kWeightDecay) s.weight_decay = typename AdamUpdateOf<T>::Math(0);
  }
};

template <bool kWeightDecay, bool kRectified>
struct RAdamOptions {
  static constexpr unsigned kPresent = kRAdamStreams;
  template <typename T>
  static void fix(RAdamUpdateOf<T>&, typename RAdamUpdateOf<T>::TensorScalars& s) {
    if constexpr (!kWeightDecay) s.weight_decay = typename RAdamUpdateOf<T>::Math(0);
    s.rectified = kRectified;
  }
};

// True when the non-null streams of every non-empty tensor are `present` (the options'
// *_streams): otherwise the launch runs the reference loop. (An empty tensor's pointers may be
// null.)
template <typename Update>
bool streams_match_options(const std::vector<OptimTensor<Update>>& tensors, unsigned present) {
  for (const OptimTensor<Update>& t : tensors) {
    if (t.numel == 0) continue;
    unsigned non_null = 0;
    for (int k = 0; k < Update::kNumStreams; ++k)
      non_null |= t.data[k] != nullptr ? 1u << k : 0u;
    if (non_null != present) return false;
  }
  return true;
}

// ---- The fused loops -------------------------------------------------------------------------

// Elements [begin, end) of the streams through `update` with Options fixed, each element
// loaded into Update::Math and stored back as E: the tensors' own type, or float buffers of a
// 16-bit tensor's elements (update_range). Returns true when an element was skipped (NaN/Inf
// gradient). The functor and scalars are copies of the loop's own, which no store to a stream
// can alias, so they stay in registers. Always inlined: compiled as a function of its own (GCC 12
// clones it for constant arguments), its copy of the stream pointers became a memcpy that left
// each load's stream unknown, and the loop stayed scalar, 4 times slower.
template <typename Options, typename Update, typename E>
[[gnu::always_inline]] inline bool update_loop(const Update update,
                                               const typename Update::TensorScalars scalars,
                                               E* const* data, std::int64_t begin,
                                               std::int64_t end) {
  constexpr int kStreams = Update::kNumStreams;
  using M = typename Update::Math;
  E* streams[kStreams];
  for (int k = 0; k < kStreams; ++k)
    streams[k] = data[k];
  int skipped = 0;
#pragma GCC ivdep
  for (std::int64_t i = begin; i < end; ++i) {
    M x[kStreams];
    for (int k = 0; k < kStreams; ++k)
      x[k] = (Options::kPresent >> k & 1u) != 0 ? static_cast<M>(streams[k][i]) : M(0);
    skipped |= update(scalars, x) ? 0 : 1;
    for (int k = 0; k < kStreams; ++k)
      if (k != kGradSlot && (Options::kPresent >> k & 1u) != 0)
        streams[k][i] = static_cast<E>(x[k]);
  }
  return skipped != 0;
}

// Elements of a 16-bit tensor per round of widen, update and narrow: 5 streams of 512 floats are
// 10 KiB, in L1 with their 16-bit sources.
constexpr std::int64_t kWidenChunk = 512;

// Elements [begin, end) of one tensor's streams through `update` with Options fixed; returns true
// when an element was skipped (NaN/Inf gradient or second moment). float32 and float64 tensors run
// update_loop on their own memory. A float16 or bfloat16 tensor's streams are widened a chunk at a
// time into float buffers (exact), run through the same loop in float, and the streams the update
// writes narrowed back (kernels/cpu/half_convert.h, core/half.h's rounding): the math and the one
// rounding per stored value of the reference, with each step of it in vector lanes.
template <typename Options, typename Update>
bool update_range(Update update, typename Update::TensorScalars scalars,
                  typename Update::Scalar* const* data, std::int64_t begin, std::int64_t end) {
  using T = typename Update::Scalar;
  using M = typename Update::Math;
  Options::fix(update, scalars);
  if constexpr (std::is_same_v<T, M>) {
    return update_loop<Options>(update, scalars, data, begin, end);
  } else {
    static_assert(std::is_same_v<M, float>, "16-bit parameters take their math in float");
    constexpr int kStreams = Update::kNumStreams;
    float buffers[kStreams][kWidenChunk];
    float* widened[kStreams];
    for (int k = 0; k < kStreams; ++k)
      widened[k] = buffers[k];
    bool skipped = false;
    for (std::int64_t first = begin; first < end; first += kWidenChunk) {
      const std::int64_t n = std::min(kWidenChunk, end - first);
      for (int k = 0; k < kStreams; ++k)
        if ((Options::kPresent >> k & 1u) != 0) widen(data[k] + first, widened[k], n);
      skipped |= update_loop<Options>(update, scalars, widened, 0, n);
      for (int k = 0; k < kStreams; ++k)
        if (k != kGradSlot && (Options::kPresent >> k & 1u) != 0)
          narrow(widened[k], data[k] + first, n);
    }
    return skipped;
  }
}

// The parts of the tensors that [begin, end) of their concatenation covers, as
// fn(tensor, first, last) in the tensor's own indices; offsets[t] is where tensor t starts
// (offsets.back(): the total).
template <typename F>
void for_each_part(const std::vector<std::int64_t>& offsets, std::int64_t begin, std::int64_t end,
                   const F& fn) {
  std::size_t t = static_cast<std::size_t>(std::upper_bound(offsets.begin(), offsets.end(), begin) -
                                           offsets.begin() - 1);
  for (; t + 1 < offsets.size() && offsets[t] < end; ++t) {
    const std::int64_t first = std::max(begin, offsets[t]);
    const std::int64_t last = std::min(end, offsets[t + 1]);
    if (first < last) fn(t, first - offsets[t], last - offsets[t]);
  }
}

// Each tensor's scalars for this launch (resolve_step, Note [Gated step]) and where it starts in
// the concatenation of the `units` (elements or blocks) of the tensors that step: a tensor that
// found_inf skips has none.
template <typename Update, typename Entry, typename Units>
std::vector<std::int64_t> resolve_launch(const Update& update, const std::vector<Entry>& tensors,
                                         const int* found_inf, const Units& units,
                                         std::vector<typename Update::TensorScalars>& scalars) {
  scalars.resize(tensors.size());
  std::vector<std::int64_t> offsets(tensors.size() + 1, 0);
  for (std::size_t t = 0; t < tensors.size(); ++t) {
    const bool steps = resolve_step(update, tensors[t], found_inf, /*owner=*/true, &scalars[t]);
    offsets[t + 1] = offsets[t] + (steps ? units(tensors[t]) : 0);
  }
  return offsets;
}

// Every element of every tensor through run_range(scalars, data, first, last), which returns true
// when it skipped an element; one parallel region. Returns true when an element was skipped.
template <typename Update, typename RunRange>
bool fused_step(const Update& update, const std::vector<OptimTensor<Update>>& tensors,
                const int* found_inf, const RunRange& run_range) {
  std::vector<typename Update::TensorScalars> scalars;
  const std::vector<std::int64_t> offsets = resolve_launch(
      update, tensors, found_inf, [](const OptimTensor<Update>& t) { return t.numel; }, scalars);
  std::atomic<bool> skipped{false};
  parallel_for(offsets.back(), kElementwiseGrain, [&](std::int64_t begin, std::int64_t end) {
    bool local_skipped = false;
    for_each_part(offsets, begin, end, [&](std::size_t t, std::int64_t first, std::int64_t last) {
      local_skipped |= run_range(scalars[t], tensors[t].data, first, last);
    });
    if (local_skipped) skipped.store(true, std::memory_order_relaxed);
  });
  return skipped.load();
}

// ---- Adam8bit ----------------------------------------------------------------------------------

constexpr int kMaxLanes = 16;  // running maxima of a block's absmax: one per lane of a vector
static_assert(kQuantBlockSize % kMaxLanes == 0);

// The largest of kMaxLanes running maxima, pairwise (they hold no NaN and no -0, so any order
// gives the same bits as the reference's running std::max).
inline float max_of_lanes(const float* lanes) {
  float m[kMaxLanes];
  for (int l = 0; l < kMaxLanes; ++l)
    m[l] = lanes[l];
  for (int width = kMaxLanes / 2; width > 0; width /= 2)
    for (int l = 0; l < width; ++l)
      m[l] = m[l] < m[l + width] ? m[l + width] : m[l];
  return m[0];
}

// max(+0, the non-NaN values of x[0, n)) (of |x| with kAbsolute), as the reference's running
// std::max gives it; n is a multiple of kMaxLanes.
template <bool kAbsolute>
float block_max(const float* x, int n) {
  float lanes[kMaxLanes] = {};
  for (int j = 0; j < n; j += kMaxLanes) {
#pragma GCC unroll 1  // a loop the vectoriser makes one vector operation (unrolled, it does not)
    for (int l = 0; l < kMaxLanes; ++l) {
      const float a = kAbsolute ? std::fabs(x[j + l]) : x[j + l];
      lanes[l] = lanes[l] < a ? a : lanes[l];
    }
  }
  return max_of_lanes(lanes);
}

// Blocks [first, last) of t with Options fixed, the codes found in the code tables (Note
// [Vectorised optimizer steps]); returns true when an element was skipped. The same steps as the
// reference's adam8bit_block.
template <typename Options>
bool adam8bit_blocks_code_table(AdamUpdate update, AdamUpdate::TensorScalars scalars,
                                const Adam8bitTensor& t, std::int64_t first, std::int64_t last,
                                const QuantMaps& maps) {
  Options::fix(update, scalars);
  const float* signed_map = maps.signed_map.data();
  const float* unsigned_map = maps.unsigned_map.data();
  const QuantCodeTable::View signed_codes = signed_code_table().view();
  const QuantCodeTable::View unsigned_codes = unsigned_code_table().view();
  float m[kQuantBlockSize];  // the block's moments, unquantised
  float v[kQuantBlockSize];
  int skipped = 0;
  for (std::int64_t block = first; block < last; ++block) {
    const std::int64_t begin = block * kQuantBlockSize;
    const int count = static_cast<int>(std::min<std::int64_t>(kQuantBlockSize, t.numel - begin));
    float* param = t.param + begin;
    const float* grad = t.grad + begin;
    std::uint8_t* state1 = t.state1 + begin;
    std::uint8_t* state2 = t.state2 + begin;
    const float old_absmax1 = t.absmax1[block];
    const float old_absmax2 = t.absmax2[block];
#pragma GCC ivdep
    for (int j = 0; j < count; ++j) {
      float x[AdamUpdate::kNumStreams] = {
          param[j], grad[j], dequantize_state(signed_map, state1[j], old_absmax1),
          dequantize_state(unsigned_map, state2[j], old_absmax2), 0.0f};
      skipped |= update(scalars, x) ? 0 : 1;
      param[j] = x[kParamSlot];
      m[j] = x[2];
      v[j] = x[3];
    }
    // A last, partial block: zeros after the end leave the maxima as they are.
    const int padded = (count + kMaxLanes - 1) / kMaxLanes * kMaxLanes;
    for (int j = count; j < padded; ++j)
      m[j] = v[j] = 0.0f;
    const float new_absmax1 = block_max<true>(m, padded);
    const float new_absmax2 = block_max<false>(v, padded);
    t.absmax1[block] = new_absmax1;
    t.absmax2[block] = new_absmax2;
    const float inv1 = inverse_absmax(new_absmax1);
    const float inv2 = inverse_absmax(new_absmax2);
#pragma GCC ivdep
    for (int j = 0; j < count; ++j) {
      state1[j] = signed_codes.code(m[j], inv1);
      state2[j] = unsigned_codes.code(v[j], inv2);
    }
  }
  return skipped != 0;
}

#if LEANGRAD_QUANT_PERMUTE
constexpr int kQuarter = kQuantBlockSize / 4;

// Running maxima of a block's |m| and v, per lane (kMaxLanes each, as block_max).
struct BlockMaxima {
  float m[kMaxLanes] = {};
  float v[kMaxLanes] = {};
};

// Elements [0, kQuarter) of param, grad and the moments m, v (dequantised in, updated out)
// through `update` with Options fixed (here too, for a compiler that does not inline this), the
// maxima into `maxima`; returns true when an element was skipped. The maxima are copied into
// local arrays for the loop, which keeps them in registers (a store and a reload per iteration
// would chain every step through memory).
template <typename Options>
LG_QUANT_PERMUTE_TARGET bool update_quarter(AdamUpdate update, AdamUpdate::TensorScalars scalars,
                                            float* param, const float* grad, float* m, float* v,
                                            BlockMaxima& maxima) {
  Options::fix(update, scalars);
  float max1[kMaxLanes], max2[kMaxLanes];
  for (int l = 0; l < kMaxLanes; ++l) {
    max1[l] = maxima.m[l];
    max2[l] = maxima.v[l];
  }
  int skipped = 0;
  for (int j0 = 0; j0 < kQuarter; j0 += kMaxLanes) {
#pragma GCC ivdep
    for (int l = 0; l < kMaxLanes; ++l) {
      const int j = j0 + l;
      float x[AdamUpdate::kNumStreams] = {param[j], grad[j], m[j], v[j], 0.0f};
      skipped |= update(scalars, x) ? 0 : 1;
      param[j] = x[kParamSlot];
      m[j] = x[2];
      v[j] = x[3];
      const float a = std::fabs(x[2]);
      max1[l] = max1[l] < a ? a : max1[l];
      max2[l] = max2[l] < x[3] ? x[3] : max2[l];
    }
  }
  for (int l = 0; l < kMaxLanes; ++l) {
    maxima.m[l] = max1[l];
    maxima.v[l] = max2[l];
  }
  return skipped != 0;
}

// Full blocks [first, last) of t with Options fixed, the codes read and found with byte permutes
// (kernels/cpu/quant_permute.h; Note [Vectorised optimizer steps]); returns true when an element
// was skipped. The steps of each block are the reference's; block b's update runs in four
// quarters with the lookups of its neighbours between them (the quantisation of b - 1, the
// dequantisation of b + 1), so that the permutes run while the update waits for its divisions.
template <typename Options>
LG_QUANT_PERMUTE_TARGET bool adam8bit_blocks_permute(AdamUpdate update,
                                                     AdamUpdate::TensorScalars scalars,
                                                     const Adam8bitTensor& t, std::int64_t first,
                                                     std::int64_t last,
                                                     const QuantPermuteTables& tables) {
  namespace qp = quant_permute;
  Options::fix(update, scalars);
  const QuantCodeTable::View signed_codes = signed_code_table().view();
  const QuantCodeTable::View unsigned_codes = unsigned_code_table().view();
  // The moments of two blocks: the current one, and the previous one until it is quantised,
  // then the next one dequantised.
  alignas(64) float m[2][kQuantBlockSize];
  alignas(64) float v[2][kQuantBlockSize];
  qp::dequantize_signed(tables, t.state1 + first * kQuantBlockSize, t.absmax1[first], m[0]);
  qp::dequantize_unsigned(tables, t.state2 + first * kQuantBlockSize, t.absmax2[first], v[0]);
  float inv1 = 0.0f;  // the previous block's 1 / absmax
  float inv2 = 0.0f;
  bool skipped = false;
  for (std::int64_t block = first; block <= last; ++block) {
    const bool current = block < last;
    const bool previous = block > first;
    const bool next = block + 1 < last;
    const std::int64_t begin = block * kQuantBlockSize;
    float* param = t.param + begin;
    const float* grad = t.grad + begin;
    std::uint8_t* state1 = t.state1 + begin;  // the previous block's at - kQuantBlockSize
    std::uint8_t* state2 = t.state2 + begin;
    float* m_current = m[(block - first) & 1];
    float* v_current = v[(block - first) & 1];
    float* m_other = m[(block - first + 1) & 1];
    float* v_other = v[(block - first + 1) & 1];
    BlockMaxima maxima;
    auto update_part = [&](int quarter) {
      if (!current) return;
      const int j = quarter * kQuarter;
      skipped |= update_quarter<Options>(update, scalars, param + j, grad + j, m_current + j,
                                         v_current + j, maxima);
    };
    update_part(0);
    if (previous && !qp::quantize_signed(tables, m_other, inv1, state1 - kQuantBlockSize)) {
      for (int j = 0; j < kQuantBlockSize; ++j)  // a NaN or Inf in the block
        state1[j - kQuantBlockSize] = signed_codes.code(m_other[j], inv1);
    }
    update_part(1);
    if (previous && !qp::quantize_unsigned(tables, v_other, inv2, state2 - kQuantBlockSize)) {
      for (int j = 0; j < kQuantBlockSize; ++j)
        state2[j - kQuantBlockSize] = unsigned_codes.code(v_other[j], inv2);
    }
    update_part(2);
    if (next)
      qp::dequantize_signed(tables, state1 + kQuantBlockSize, t.absmax1[block + 1], m_other);
    update_part(3);
    if (next) {
      qp::dequantize_unsigned(tables, state2 + kQuantBlockSize, t.absmax2[block + 1], v_other);
    }
    if (current) {
      const float new_absmax1 = max_of_lanes(maxima.m);
      const float new_absmax2 = max_of_lanes(maxima.v);
      t.absmax1[block] = new_absmax1;
      t.absmax2[block] = new_absmax2;
      inv1 = inverse_absmax(new_absmax1);
      inv2 = inverse_absmax(new_absmax2);
    }
  }
  return skipped;
}
#endif  // LEANGRAD_QUANT_PERMUTE

// Blocks [first, last) of t with Options fixed: full blocks with byte permutes where the CPU has
// them (Note [Choosing the permutes at run time]), the rest with the code tables.
template <typename Options>
bool adam8bit_blocks(const AdamUpdate& update, const AdamUpdate::TensorScalars& scalars,
                     const Adam8bitTensor& t, std::int64_t first, std::int64_t last,
                     const QuantMaps& maps) {
#if LEANGRAD_QUANT_PERMUTE
  if (!quant_permute_supported())
    return adam8bit_blocks_code_table<Options>(update, scalars, t, first, last, maps);
  const std::int64_t full = std::clamp(t.numel / kQuantBlockSize, first, last);
  bool skipped = false;
  if (first < full) {
    skipped =
        adam8bit_blocks_permute<Options>(update, scalars, t, first, full, quant_permute_tables());
  }
  if (full < last)
    skipped |= adam8bit_blocks_code_table<Options>(update, scalars, t, full, last, maps);
  return skipped;
#else
  return adam8bit_blocks_code_table<Options>(update, scalars, t, first, last, maps);
#endif
}

}  // namespace

template <typename T>
void sgd_step(const SgdUpdateOf<T>& update, const std::vector<OptimTensor<SgdUpdateOf<T>>>& tensors,
              const int* found_inf) {
  const bool momentum = update.momentum != 0;
  if (!streams_match_options(tensors, sgd_streams(momentum))) {
    reference::sgd_step(update, tensors, found_inf);
    return;
  }
  fused_step(
      update, tensors, found_inf,
      [&](const typename SgdUpdateOf<T>::TensorScalars& s, T* const* data, std::int64_t first,
          std::int64_t last) {
        return with_constants(
            [&](auto momentum_on, auto nesterov, auto weight_decay, auto first_step) {
              return update_range<SgdOptions<momentum_on, nesterov, weight_decay, first_step>>(
                  update, s, data, first, last);
            },
            momentum, update.nesterov, s.weight_decay != 0, s.first_step);
      });
}

template <typename T>
void adam_step(const AdamUpdateOf<T>& update,
               const std::vector<OptimTensor<AdamUpdateOf<T>>>& tensors, const int* found_inf,
               int* skipped_nonfinite) {
  if (!streams_match_options(tensors, adam_streams(update.amsgrad))) {
    reference::adam_step(update, tensors, found_inf, skipped_nonfinite);
    return;
  }
  const bool skipped = fused_step(
      update, tensors, found_inf,
      [&](const typename AdamUpdateOf<T>::TensorScalars& s, T* const* data, std::int64_t first,
          std::int64_t last) {
        return with_constants(
            [&](auto amsgrad, auto decoupled, auto weight_decay, auto skip_nonfinite) {
              return update_range<AdamOptions<amsgrad, decoupled, weight_decay, skip_nonfinite>>(
                  update, s, data, first, last);
            },
            update.amsgrad, update.decoupled_weight_decay, s.weight_decay != 0,
            update.skip_nonfinite);
      });
  if (skipped && skipped_nonfinite != nullptr) *skipped_nonfinite = 1;
}

template <typename T>
void radam_step(const RAdamUpdateOf<T>& update,
                const std::vector<OptimTensor<RAdamUpdateOf<T>>>& tensors, const int* found_inf) {
  if (!streams_match_options(tensors, kRAdamStreams)) {
    reference::radam_step(update, tensors, found_inf);
    return;
  }
  fused_step(update, tensors, found_inf,
             [&](const typename RAdamUpdateOf<T>::TensorScalars& s, T* const* data,
                 std::int64_t first, std::int64_t last) {
               return with_constants(
                   [&](auto weight_decay, auto rectified) {
                     return update_range<RAdamOptions<weight_decay, rectified>>(update, s, data,
                                                                                first, last);
                   },
                   s.weight_decay != 0, s.rectified);
             });
}

#define LG_INSTANTIATE_FUSED_STEPS(T)                                                             \
  template void sgd_step<T>(const SgdUpdateOf<T>&,                                                \
                            const std::vector<OptimTensor<SgdUpdateOf<T>>>&, const int*);         \
  template void adam_step<T>(const AdamUpdateOf<T>&,                                              \
                             const std::vector<OptimTensor<AdamUpdateOf<T>>>&, const int*, int*); \
  template void radam_step<T>(const RAdamUpdateOf<T>&,                                            \
                              const std::vector<OptimTensor<RAdamUpdateOf<T>>>&, const int*);
LG_INSTANTIATE_FUSED_STEPS(float)
LG_INSTANTIATE_FUSED_STEPS(double)
LG_INSTANTIATE_FUSED_STEPS(Half)
LG_INSTANTIATE_FUSED_STEPS(BFloat16)
#undef LG_INSTANTIATE_FUSED_STEPS

void adam8bit_step(const AdamUpdate& update, const std::vector<Adam8bitTensor>& tensors,
                   const int* found_inf, int* skipped_nonfinite) {
  if (update.amsgrad) {  // 8-bit states have no running maximum
    reference::adam8bit_step(update, tensors, found_inf, skipped_nonfinite);
    return;
  }
  const QuantMaps& maps = quant_maps();
#if LEANGRAD_QUANT_PERMUTE
  if (quant_permute_supported()) quant_permute_tables();  // built before the threads start
#endif
  std::vector<AdamUpdate::TensorScalars> scalars;
  const std::vector<std::int64_t> offsets = resolve_launch(
      update, tensors, found_inf,
      [](const Adam8bitTensor& t) { return (t.numel + kQuantBlockSize - 1) / kQuantBlockSize; },
      scalars);
  std::atomic<bool> skipped{false};
  const std::int64_t grain = kElementwiseGrain / kQuantBlockSize;
  parallel_for(offsets.back(), grain, [&](std::int64_t begin, std::int64_t end) {
    bool local_skipped = false;
    for_each_part(offsets, begin, end, [&](std::size_t t, std::int64_t first, std::int64_t last) {
      local_skipped |= with_constants(
          [&](auto decoupled, auto weight_decay, auto skip_nonfinite) {
            return adam8bit_blocks<AdamOptions<false, decoupled, weight_decay, skip_nonfinite>>(
                update, scalars[t], tensors[t], first, last, maps);
          },
          update.decoupled_weight_decay, scalars[t].weight_decay != 0.0f, update.skip_nonfinite);
    });
    if (local_skipped) skipped.store(true, std::memory_order_relaxed);
  });
  if (skipped.load() && skipped_nonfinite != nullptr) *skipped_nonfinite = 1;
}

}  // namespace leangrad::kernels::cpu
