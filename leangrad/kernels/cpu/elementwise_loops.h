// The loops under the CPU's elementwise launchers (kernels/cpu/elementwise.cpp and the files of
// the other families beside it, elementwise_binary.cpp, elementwise_activation.cpp,
// elementwise_compare.cpp and elementwise_range_limited.cpp): the walk over an elementwise
// geometry's runs, the plain per-element loop, and float16's loop through float buffers.
//
// Note [CPU elementwise loop]
//   The output's linear index space [0, numel) is split into chunks by parallel_for. A chunk
//   computes the multi-index of its first element once (one div/mod per dim), then walks runs of
//   the innermost dim with a plain strided loop and carries into the outer dims by counters.
//   When every operand is contiguous (the geometry merged everything into one dim of stride 1)
//   the loop is a plain `out[i] = f(in[i]...)`, which the compiler vectorises. for_each_run is
//   the walk; elementwise_loop and half_loop (Note [float16 elementwise in float lanes]) are the
//   two bodies it runs.
#pragma once

#include <algorithm>
#include <cstdint>
#include <tuple>
#include <type_traits>
#include <utility>

#include <leangrad/core/error.h>
#include <leangrad/core/half.h>
#include <leangrad/core/macros.h>
#include <leangrad/kernels/cpu/avx512.h>
#include <leangrad/kernels/cpu/half_convert.h>
#include <leangrad/kernels/cpu/parallel_for.h>
#include <leangrad/kernels/elementwise_geometry.h>

namespace leangrad::kernels::cpu {

// Calls run(contiguous, offset, stride, n) for runs of consecutive output elements that together
// cover the geometry once, the runs split over threads (Note [CPU elementwise loop]). offset[k] is
// operand k's element offset of the run's first element, stride[k] its step along the run.
// `contiguous` is std::true_type when every operand is contiguous (every stride then 1), so a body
// can write that case without strides for the compiler to vectorise. The chunk and run lambdas
// here and in the bodies below are always inlined, so that each op's loops sit whole in its
// launcher whatever the size of the file instantiating them: moved out of one large file into
// elementwise_binary.cpp, the binary ops' runs became calls of their own (session 65).
template <int kNumOperands, typename Run>
void for_each_run(const ElementwiseGeometry& g, const Run& run) {
  LG_INTERNAL_ASSERT(g.num_operands == kNumOperands, "geometry has ", g.num_operands,
                     " operands, kernel expects ", kNumOperands);
  if (g.numel == 0) return;

  bool all_contiguous = true;
  for (int k = 0; k < kNumOperands; ++k)
    all_contiguous = all_contiguous && g.is_contiguous(k);
  if (all_contiguous) {
    parallel_for(g.numel, kElementwiseGrain,
                 [&](std::int64_t begin, std::int64_t end) LG_LAMBDA_ALWAYS_INLINE {
                   std::int64_t offset[kNumOperands];
                   std::int64_t stride[kNumOperands];
                   std::fill_n(offset, kNumOperands, begin);
                   std::fill_n(stride, kNumOperands, std::int64_t{1});
                   run(std::true_type{}, offset, stride, end - begin);
                 });
    return;
  }

  const int ndim = g.ndim;  // >= 1 here: a 0-d geometry counts as contiguous
  const int inner = ndim - 1;
  parallel_for(g.numel, kElementwiseGrain,
               [&](std::int64_t begin, std::int64_t end) LG_LAMBDA_ALWAYS_INLINE {
                 // Multi-index and per-operand offsets of element `begin`.
                 std::int64_t index[kMaxDims] = {};
                 std::int64_t offset[kNumOperands] = {};
                 std::int64_t rest = begin;
                 for (int d = inner; d >= 0; --d) {
                   index[d] = rest % g.sizes[d];
                   rest /= g.sizes[d];
                   for (int k = 0; k < kNumOperands; ++k)
                     offset[k] += index[d] * g.strides[k][d];
                 }
                 std::int64_t inner_stride[kNumOperands];
                 for (int k = 0; k < kNumOperands; ++k)
                   inner_stride[k] = g.strides[k][inner];

                 std::int64_t i = begin;
                 while (i < end) {
                   // A run along the innermost dim.
                   const std::int64_t n = std::min(g.sizes[inner] - index[inner], end - i);
                   run(std::false_type{}, offset, inner_stride, n);
                   i += n;
                   // Advance the multi-index by n (to the end of the row, or to `end`) and carry
                   // outwards.
                   index[inner] += n;
                   for (int k = 0; k < kNumOperands; ++k)
                     offset[k] += n * inner_stride[k];
                   for (int d = inner; d > 0 && index[d] == g.sizes[d]; --d) {
                     index[d] = 0;
                     ++index[d - 1];
                     for (int k = 0; k < kNumOperands; ++k) {
                       offset[k] += g.strides[k][d - 1] - g.sizes[d] * g.strides[k][d];
                     }
                   }
                 }
               });
}

// Note [AVX-512 elementwise loops]
//   The contiguous loop of an op with a float or bfloat16 output (and the float math of float16's
//   chunks, Note [float16 elementwise in float lanes]) has a second copy compiled for AVX-512 (Note
//   [AVX-512 at run time] in kernels/cpu/avx512.h), taken where the CPU has it: 16 lanes where the
//   x86-64-v3 build has 8. So do the range-limited ops' lanes, in float or double
//   (fill_range_limited in kernels/cpu/elementwise_range_limited.cpp). The element functions are
//   always inlined into either copy, and the elementwise files are compiled with -ffp-contract=off
//   with their fused multiply-adds written as std::fma, so each element is the same IEEE
//   operations in both and gets the same bits (tests/kernels/test_elementwise_avx512.cpp runs
//   every op both ways). A C library call that an element still makes (exp2 and pow of
//   float; a range-limited op outside its range) is the same call from either copy. Other outputs
//   (double, integers, bool) and strided runs keep the one loop: double's elementwise math is
//   mostly such calls, and the others gain little from wider lanes. On the 2-core Zen 5 guest,
//   exp, gelu, sin or lgamma of 1M floats ran twice as fast
//   (bench/results/2026-12-06-cpu-elementwise-avx512-zen5-2core.md). bfloat16's float math
//   beside its conversions (a shift; a rounding add, a NaN test and a shift) spilled AVX2's 16
//   registers; AVX-512's 32 and its masks took its exp of 16M elements from 16.4 to 8.0 ms
//   (bench/results/2026-12-07-cpu-bfloat16-avx512-zen5-2core.md).

// out[j] = f(in[j]...) for j in [0, n): the loop every contiguous run ends in.
template <typename F, typename Out, typename... In>
LG_ALWAYS_INLINE void plain_run(const F& f, Out* out, std::int64_t n, const In*... in) {
  for (std::int64_t j = 0; j < n; ++j)
    out[j] = f(in[j]...);
}

#if LEANGRAD_AVX512_CLONES
// f by value: a copy in this frame, which no store to out can write, as elementwise_loop's copy
// is to the inlined loop (see there). Taken by reference, a functor that reads a parameter on one
// side of a select only (leaky_relu's slope) kept this loop scalar with a branch per element:
// leaky_relu of 16M random floats took 34 ms where hardtanh takes 3.
template <typename F, typename Out, typename... In>
[[gnu::noinline]] LG_AVX512_TARGET void plain_run_avx512(const F f, Out* out, std::int64_t n,
                                                         const In*... in) {
  plain_run(f, out, n, in...);
}
#endif

// plain_run, through its AVX-512 copy where Out is float and the CPU has AVX-512 (Note [AVX-512
// elementwise loops]).
template <typename F, typename Out, typename... In>
LG_ALWAYS_INLINE void contiguous_run(const F& f, Out* out, std::int64_t n, const In*... in) {
#if LEANGRAD_AVX512_CLONES
  if constexpr (std::is_same_v<Out, float> || std::is_same_v<Out, BFloat16>) {
    if (avx512_copies_enabled()) {
      plain_run_avx512(f, out, n, in...);
      return;
    }
  }
#endif
  plain_run(f, out, n, in...);
}

// Note [Runs with a broadcast operand]
//   A run whose output and inputs all step by 1 but one input that stays put (stride 0) is the
//   run of a per-channel operand over NCHW ((C, 1, 1): prelu's weight, a channel's scale), or of
//   a column against a matrix. The strided loop reads every operand at its stride, which GCC
//   cannot vectorise with the strides unknown: prelu's per-channel mul ran one float at a time,
//   and its speed moved by a third with the loop's address. Such a run takes a loop of its own,
//   the input that stays put read once before it and the others at [j], which GCC vectorises.
//   A run of any other strides keeps the strided loop. Only loops of two inputs or more: a
//   unary op's input never stays put while its output moves.

// A run's input as elementwise_loop reads it: from p at [j], or (kStaysPut) one value read once.
template <bool kStaysPut, typename T>
struct RunSource {
  const T* p;
  LG_ALWAYS_INLINE T operator[](std::int64_t j) const { return p[j]; }
};
template <typename T>
struct RunSource<true, T> {
  T value;
  LG_ALWAYS_INLINE T operator[](std::int64_t /*j*/) const { return value; }
};
template <bool kStaysPut, typename T>
LG_ALWAYS_INLINE RunSource<kStaysPut, T> run_source(const T* p) {
  if constexpr (kStaysPut) {
    return {*p};
  } else {
    return {p};
  }
}

// The input (0-based) that stays put in a run whose output and other inputs step by 1 (Note
// [Runs with a broadcast operand]), or -1.
template <int kInputs>
LG_ALWAYS_INLINE int input_staying_put(const std::int64_t* stride) {
  if (stride[0] != 1) return -1;
  int staying = -1;
  for (int k = 0; k < kInputs; ++k) {
    if (stride[k + 1] == 0 && staying < 0) {
      staying = k;
    } else if (stride[k + 1] != 1) {
      return -1;
    }
  }
  return staying;
}

// out[offset[0] + j] = f(in_k[offset[k + 1] + j]...) for j in [0, n), input kStill staying put.
template <std::size_t kStill, typename F, typename Out, std::size_t... K, typename... In>
LG_ALWAYS_INLINE void run_with_one_still(const F& f, Out* out, const std::int64_t* offset,
                                         std::int64_t n, std::index_sequence<K...>,
                                         const In*... in) {
  const std::tuple sources{run_source<K == kStill>(in + offset[K + 1])...};
  Out* o = out + offset[0];
  for (std::int64_t j = 0; j < n; ++j)
    o[j] = f(std::get<K>(sources)[j]...);
}

// Note [Contiguous runs of a strided geometry]
//   A geometry that is not contiguous as a whole (a broadcast row expanded over a matrix, a slice
//   of whole rows with a step, a padded row) can still have runs along which every operand steps
//   by 1. Such a run of kContiguousRunMin elements or more takes the contiguous loop, the one a
//   contiguous tensor's elements take (with its AVX-512 copy), so its elements get the same bits
//   by the same instructions. The strided loop had vectorised only where GCC versioned it for unit
//   strides, which it did not for every element function: the cast of a (1, 2048) row expanded
//   to (2048, 2048) to int32 took 2.1 ms on one thread, that of the same values contiguous 1.1.
//   Shorter runs keep the strided loop, a call to the AVX-512 copy per run costing more than it
//   saves there.
inline constexpr std::int64_t kContiguousRunMin = 32;

// Stores out[off_0] = fn(in[off_1], ...) for every element of the geometry.
template <typename F, typename Out, typename... In>
void elementwise_loop(const ElementwiseGeometry& g, const F& fn, Out* out, const In*... in) {
  constexpr int kNumOperands = 1 + static_cast<int>(sizeof...(In));
  for_each_run<kNumOperands>(g, [&](auto contiguous, const std::int64_t* offset,
                                    const std::int64_t* stride,
                                    std::int64_t n) LG_LAMBDA_ALWAYS_INLINE {
    // A copy of the functor in this frame: the caller's may, for all the compiler knows, be
    // written by the stores to out, so its parameters (leaky_relu's slope, a scalar) were read
    // again after each store, and a select that reads one only on one side stayed a branch:
    // leaky_relu of 16M random floats took 121 ms as a scalar loop with a mispredicted branch
    // per element, against 11 ms for hardtanh's.
    const F f = fn;
    [&]<std::size_t... K>(std::index_sequence<K...>) LG_LAMBDA_ALWAYS_INLINE {
      if constexpr (decltype(contiguous)::value) {
        contiguous_run(f, out + offset[0], n, (in + offset[K + 1])...);
      } else {
        // Note [Contiguous runs of a strided geometry]
        if (n >= kContiguousRunMin && stride[0] == 1 && ((stride[K + 1] == 1) && ...)) {
          contiguous_run(f, out + offset[0], n, (in + offset[K + 1])...);
          return;
        }
        if constexpr (sizeof...(In) >= 2) {  // Note [Runs with a broadcast operand]
          const int still = input_staying_put<static_cast<int>(sizeof...(In))>(stride);
          const bool ran =
              ((still == static_cast<int>(K) &&
                (run_with_one_still<K>(f, out, offset, n, std::index_sequence_for<In...>{}, in...),
                 true)) ||
               ...);
          if (ran) return;
        }
        for (std::int64_t j = 0; j < n; ++j)
          out[offset[0] + j * stride[0]] = f(in[offset[K + 1] + j * stride[K + 1]]...);
      }
    }
    (std::index_sequence_for<In...>{});
  });
}

// Note [float16 elementwise in float lanes]
//   The element function of a float16 op widens its operands to float, computes there and rounds
//   the result once (binary_element, unary_element: *_element<op, T> in elementwise_math.h). In
//   the plain loop above, that is core/half.h's two conversions per element, integer code with
//   branches (the specification on every device) that GCC does not vectorise: a float16 add of
//   16M elements took 227 ms on one thread, float32's 13. So a float16 op runs here in chunks of
//   kHalfChunk elements of a run: each operand widened into a float buffer by
//   kernels/cpu/half_convert.h (F16C, with core/half.h's bits), the op's math in float over the
//   buffers (a loop like the float32 op's), the result narrowed into the output (or stored, for a
//   comparison's bool); 24 ms (bench/results/2026-11-30-cpu-elementwise-float16-2core.md). Widening
//   is exact, and the math and its one rounding are the element function's, so the bits are the
//   plain loop's for every value (tests/kernels/test_elementwise_float16.cpp). One freedom is IEEE
//   754's own: an op on two NaNs returns one of them, and which one's sign survives depends on the
//   operand order the compiler gives x86's instruction, in either loop. A strided operand is
//   gathered into a float16 buffer first, a broadcast one (stride 0) converted once. A chunk reads
//   all its operands before it writes, so an output that is also an input (add_) is read as before;
//   the ops never hand a launcher an output that overlaps an input otherwise. The binary, unary and
//   compare ops take this path, and leaky_relu; where, fill and cast keep the plain loop (cast
//   has its own). Loops of their own in kernels/cpu/elementwise_activation.cpp: elu, which rounds
//   between its steps (Note [float16 elu in float lanes]), and hardtanh and clamp, which pass a
//   NaN's bits through where core/half.h's narrowing would not (Note [16-bit hardtanh and clamp
//   in float lanes]). bfloat16 keeps the plain loop, whose
//   conversions (a shift; a rounding add and a shift) GCC vectorises: through the chunks its add
//   took 20.5 ms against 15.9 (its exp 75.5 against 95.8).
inline constexpr std::int64_t kHalfChunk = 512;

// dst[j] = float(src[j * stride]) for j in [0, n), n <= kHalfChunk; T16 Half or BFloat16.
template <typename T16>
void load_widened(const T16* src, std::int64_t stride, std::int64_t n, float* dst) {
  if (stride == 1) {
    widen(src, dst, n);
  } else if (stride == 0) {
    std::fill_n(dst, n, static_cast<float>(src[0]));
  } else {
    T16 gathered[kHalfChunk];
    for (std::int64_t j = 0; j < n; ++j)
      gathered[j] = src[j * stride];
    widen(gathered, dst, n);
  }
}

// dst[j * stride] = T16(src[j]) for j in [0, n), n <= kHalfChunk; T16 Half or BFloat16.
template <typename T16>
void store_narrowed(const float* src, T16* dst, std::int64_t stride, std::int64_t n) {
  if (stride == 1) {
    narrow(src, dst, n);
    return;
  }
  T16 narrowed[kHalfChunk];
  narrow(src, narrowed, n);
  for (std::int64_t j = 0; j < n; ++j)
    dst[j * stride] = narrowed[j];
}

// elementwise_loop over float16 operands with `math` taking and giving float (Out Half) or
// giving bool (Out bool): out = Out(math(float(in)...)). Note [float16 elementwise in float lanes].
template <typename Math, typename Out, typename... In>
void half_loop(const ElementwiseGeometry& g, const Math& math, Out* out, const In*... in) {
  static_assert((std::is_same_v<In, Half> && ...));
  static_assert(std::is_same_v<Out, Half> || std::is_same_v<Out, bool>);
  constexpr int kNumOperands = 1 + static_cast<int>(sizeof...(In));
  constexpr std::size_t kNumInputs = sizeof...(In);
  for_each_run<kNumOperands>(g, [&](auto, const std::int64_t* offset, const std::int64_t* stride,
                                    std::int64_t n) LG_LAMBDA_ALWAYS_INLINE {
    [&]<std::size_t... K>(std::index_sequence<K...>) LG_LAMBDA_ALWAYS_INLINE {
      float x[kNumInputs][kHalfChunk];
      float y[kHalfChunk];
      for (std::int64_t c = 0; c < n; c += kHalfChunk) {
        const std::int64_t m = std::min(kHalfChunk, n - c);
        (load_widened(in + offset[K + 1] + c * stride[K + 1], stride[K + 1], m, x[K]), ...);
        Out* o = out + offset[0] + c * stride[0];
        if constexpr (std::is_same_v<Out, Half>) {
          contiguous_run(math, y, m, static_cast<const float*>(x[K])...);
          store_narrowed(y, o, stride[0], m);
        } else if (stride[0] == 1) {
          for (std::int64_t j = 0; j < m; ++j)
            o[j] = math(x[K][j]...);
        } else {
          for (std::int64_t j = 0; j < m; ++j)
            o[j * stride[0]] = math(x[K][j]...);
        }
      }
    }
    (std::index_sequence_for<In...>{});
  });
}

// elementwise_loop(g, element, out, in...) for operands of type T, where element(t...) is
// Out(math(opmath(t)...)): float16 takes half_loop with `math`, every other T the plain loop.
template <typename T, typename Element, typename Math, typename Out>
void elementwise_loop_as(const ElementwiseGeometry& g, const Element& element, const Math& math,
                         Out* out, const auto*... in) {
  if constexpr (std::is_same_v<T, Half>) {
    half_loop(g, math, out, in...);
  } else {
    elementwise_loop(g, element, out, in...);
  }
}

}  // namespace leangrad::kernels::cpu
