// CPU launchers of the elementwise kernels (kernels/backend.h): the reference
// implementations the CUDA kernels are tested against. The per-element math is shared with CUDA
// through kernels/elementwise_math.h; this file only walks the iteration space.
//
// Note [CPU elementwise loop]
//   The output's linear index space [0, numel) is split into chunks by parallel_for. A chunk
//   computes the multi-index of its first element once (one div/mod per dim), then walks runs of
//   the innermost dim with a plain strided loop and carries into the outer dims by counters.
//   When every operand is contiguous (the geometry merged everything into one dim of stride 1)
//   the loop is a plain `out[i] = f(in[i]...)`, which the compiler vectorises. for_each_run is
//   the walk; elementwise_loop and half_loop (Note [float16 elementwise in float lanes]) are the
//   two bodies it runs.
#include <leangrad/kernels/backend.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <utility>

#include <leangrad/kernels/cpu/float_polynomials.h>
#include <leangrad/kernels/cpu/half_convert.h>
#include <leangrad/kernels/cpu/parallel_for.h>
#include <leangrad/kernels/cpu/transpose_copy.h>
#include <leangrad/kernels/dispatch.h>
#include <leangrad/kernels/elementwise_math.h>

namespace leangrad::kernels::cpu {
namespace {

// Calls run(contiguous, offset, stride, n) for runs of consecutive output elements that together
// cover the geometry once, the runs split over threads (Note [CPU elementwise loop]). offset[k] is
// operand k's element offset of the run's first element, stride[k] its step along the run.
// `contiguous` is std::true_type when every operand is contiguous (every stride then 1), so a body
// can write that case without strides for the compiler to vectorise.
template <int kNumOperands, typename Run>
void for_each_run(const ElementwiseGeometry& g, const Run& run) {
  LG_INTERNAL_ASSERT(g.num_operands == kNumOperands, "geometry has ", g.num_operands,
                     " operands, kernel expects ", kNumOperands);
  if (g.numel == 0) return;

  bool all_contiguous = true;
  for (int k = 0; k < kNumOperands; ++k)
    all_contiguous = all_contiguous && g.is_contiguous(k);
  if (all_contiguous) {
    parallel_for(g.numel, kElementwiseGrain, [&](std::int64_t begin, std::int64_t end) {
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
  parallel_for(g.numel, kElementwiseGrain, [&](std::int64_t begin, std::int64_t end) {
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
      // Advance the multi-index by n (to the end of the row, or to `end`) and carry outwards.
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

// Stores out[off_0] = fn(in[off_1], ...) for every element of the geometry.
template <typename F, typename Out, typename... In>
void elementwise_loop(const ElementwiseGeometry& g, const F& fn, Out* out, const In*... in) {
  constexpr int kNumOperands = 1 + static_cast<int>(sizeof...(In));
  for_each_run<kNumOperands>(g, [&](auto contiguous, const std::int64_t* offset,
                                    const std::int64_t* stride, std::int64_t n) {
    // A copy of the functor in this frame: the caller's may, for all the compiler knows, be
    // written by the stores to out, so its parameters (leaky_relu's slope, a scalar) were read
    // again after each store, and a select that reads one only on one side stayed a branch:
    // leaky_relu of 16M random floats took 121 ms as a scalar loop with a mispredicted branch per
    // element, against 11 ms for hardtanh's.
    const F f = fn;
    [&]<std::size_t... K>(std::index_sequence<K...>) {
      if constexpr (decltype(contiguous)::value) {
        Out* o = out + offset[0];
        for (std::int64_t j = 0; j < n; ++j)
          o[j] = f((in + offset[K + 1])[j]...);
      } else {
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
//   compare ops take this path, and leaky_relu; elu (it rounds between its steps), hardtanh and
//   clamp (they pass a NaN's bits through, which core/half.h's narrowing would not) keep the plain
//   loop, as do where, fill and cast (cast has its own). bfloat16 keeps the plain loop, whose
//   conversions (a shift; a rounding add and a shift) GCC vectorises: through the chunks its add
//   took 20.5 ms against 15.9 (its exp 75.5 against 95.8).
constexpr std::int64_t kHalfChunk = 512;

// dst[j] = float(src[j * stride]) for j in [0, n), n <= kHalfChunk.
void load_widened(const Half* src, std::int64_t stride, std::int64_t n, float* dst) {
  if (stride == 1) {
    widen(src, dst, n);
  } else if (stride == 0) {
    std::fill_n(dst, n, static_cast<float>(src[0]));
  } else {
    Half gathered[kHalfChunk];
    for (std::int64_t j = 0; j < n; ++j)
      gathered[j] = src[j * stride];
    widen(gathered, dst, n);
  }
}

// dst[j * stride] = Half(src[j]) for j in [0, n), n <= kHalfChunk.
void store_narrowed(const float* src, Half* dst, std::int64_t stride, std::int64_t n) {
  if (stride == 1) {
    narrow(src, dst, n);
    return;
  }
  Half narrowed[kHalfChunk];
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
  for_each_run<kNumOperands>(
      g, [&](auto, const std::int64_t* offset, const std::int64_t* stride, std::int64_t n) {
        [&]<std::size_t... K>(std::index_sequence<K...>) {
          float x[kNumInputs][kHalfChunk];
          float y[kHalfChunk];
          for (std::int64_t c = 0; c < n; c += kHalfChunk) {
            const std::int64_t m = std::min(kHalfChunk, n - c);
            (load_widened(in + offset[K + 1] + c * stride[K + 1], stride[K + 1], m, x[K]), ...);
            Out* o = out + offset[0] + c * stride[0];
            if constexpr (std::is_same_v<Out, Half>) {
              for (std::int64_t j = 0; j < m; ++j)
                y[j] = math(x[K][j]...);
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

// Note [Range-limited elementwise ops]
//   Some ops have a form that computes in SIMD lanes over part of their domain only, the rest
//   taking a library call or a branch per element, which would keep the whole loop scalar:
//     - sin, cos and tan of float: the double polynomials below |x| = 2^20 (kTrigPolynomialRange,
//       Note [Float polynomials]), the C library's function from there on;
//     - J0 and J1 for |x| <= 2^20, Y0 and Y1 for normal x in (0, 2^20], ndtri for normal p
//       below 1, I0, I1, I0e and I1e for finite x, K0, K1, K0e and K1e for finite x >= 2^-1021,
//       Ai and Ai' for -13000 <= x <= 2^20, log|Gamma| for normal x in (0, 2^1000], digamma for
//       finite x > 0 and zeta(2, q) with a scalar 2 (its gradient) for 0 < q <= 1e8 (Note
//       [Special functions in lanes]), of every floating dtype.
//   These run in chunks of kHalfChunk elements of a run: the in-range form in lanes over the
//   whole chunk, with one vectorised test whether each element is in range; where any is not,
//   a second pass gives just those elements the full function, one call each. An op whose
//   in-range form computes several forms and keeps one (J and Y: the central series, Hankel's
//   form beyond; ndtri: its central fit, its tails; Ai: its series, the decaying and the
//   oscillating forms; I0 and I1: their series, the large form) also has a central form, the first
//   alone, which a chunk takes when one more vectorised test finds all its elements central. The
//   forms are plain arithmetic and bit operations, defined (if meaningless) on every input, so
//   computing them where they do not apply is harmless; each element's value depends on that
//   element alone, whatever its neighbours are (-ffp-contract=off, above). It is the full
//   function's value operation for operation, but for J and Y beyond 5 and Ai beyond its series,
//   whose cosines and sines are sin_cos_moderate's in place of the C library's, and Y's, ndtri's,
//   log|Gamma|'s, digamma's and K's log and the exp of Ai, I and K, which are
//   log_of_positive_normal's and exp_of_double's. float16 and bfloat16
//   widen into a float buffer and narrow back, as half_loop (Note [float16 elementwise in float
//   lanes]); a float or double run with unit strides is read and written in place, through a chunk
//   buffer where the output is the input (sin_): the second pass reads the input again.
//
// Note [Special functions in lanes]
//   The special functions compute in double (kernels/special_math.h), each a fitted series in
//   its central range and other forms, with exp, log, sin or cos, beyond. J0, J1, I0, I1, Ai and
//   Ai' have a central form that is a polynomial or a Chebyshev series alone
//   (special_math::bessel_j0_series ...), which the compiler runs in lanes of doubles where the
//   scalar loop took 25 ns an element for J0 (ops_scan's special_bessel_j0_fwd; the numbers are
//   in bench/results/2026-12-05-cpu-special-functions-in-lanes-zen4-2core.md). Y0 and Y1's
//   central form adds log x (log_of_positive_normal, Note [Double polynomials]), and beyond 5
//   J and Y take Hankel's form (Note [Bessel functions of the first and second kind]) with
//   sin_cos_moderate's cos x and sin x, up to 2^20, its range; ndtri's tails take the same log,
//   and Ai beyond its series exp_of_double or sin_cos_moderate of zeta (to x = -13000, where
//   zeta nears 2^20). I and K compute both their forms and keep one (bessel_i_of_finite,
//   bessel_k_of_positive), with one exp_of_double each and K's log. log|Gamma| and digamma of
//   positive x are straight-line code with one log (Note [Log-gamma] and Note [Digamma] in
//   kernels/special_math.h): their recurrences compute every term and keep those an x needs.
//   The scan's J0 on [-20, 20) and Y1 on [0.1, 20.1) went from 49 and 48 ns an element to 13 and
//   15, ndtri (forward and backward) from 34 to 20 (bench/results/
//   2026-12-06-cpu-special-functions-hankel-in-lanes-zen4-2core.md). float's value is still the
//   double's, rounded once.
template <typename T, typename C>
void load_as(const T* src, std::int64_t stride, std::int64_t n, C* dst) {
  if constexpr (std::is_same_v<T, Half>) {
    load_widened(src, stride, n, dst);
  } else {
    for (std::int64_t j = 0; j < n; ++j)
      dst[j] = static_cast<C>(src[j * stride]);
  }
}

template <typename C, typename T>
void store_from(const C* src, T* dst, std::int64_t stride, std::int64_t n) {
  if constexpr (std::is_same_v<T, Half>) {
    store_narrowed(src, dst, stride, n);
  } else {
    for (std::int64_t j = 0; j < n; ++j)
      dst[j * stride] = static_cast<T>(src[j]);
  }
}

// The type a range-limited op of T computes in: double for double, float for the others.
template <typename T>
using RangeLimitedMath = std::conditional_t<std::is_same_v<T, double>, double, float>;

// v[j] = Forms::central(x[j]) if kCentral, else Forms::in_range(x[j]), for j < n, in lanes;
// returns whether any x[j] is outside Forms::applies.
template <typename Forms, bool kCentral, typename C>
[[gnu::always_inline]] inline bool fill_range_limited(const C* x, C* v, std::int64_t n) {
  int outside = 0;
  for (std::int64_t j = 0; j < n; ++j) {
    if constexpr (kCentral) {
      v[j] = Forms::central(x[j]);
    } else {
      v[j] = Forms::in_range(x[j]);
    }
    outside |= Forms::applies(x[j]) ? 0 : 1;
  }
  return outside != 0;
}

// y[j] = Forms::full(x[j]) for j < n <= kHalfChunk, as Forms::in_range(x[j]) in lanes wherever
// Forms::applies(x[j]), or as Forms::central(x[j]) where every x[j] is Forms::central_applies
// (Note [Range-limited elementwise ops]). y may be x.
template <typename Forms, typename C>
[[gnu::always_inline]] inline void apply_range_limited(const C* x, C* y, std::int64_t n) {
  C buffer[kHalfChunk];
  C* v = x == y ? buffer : y;
  bool outside = false;
  if constexpr (Forms::kHasCentral) {
    int central = 1;
    for (std::int64_t j = 0; j < n; ++j)
      central &= Forms::central_applies(x[j]) ? 1 : 0;
    outside = central != 0 ? fill_range_limited<Forms, true>(x, v, n)
                           : fill_range_limited<Forms, false>(x, v, n);
  } else {
    outside = fill_range_limited<Forms, false>(x, v, n);
  }
  if (outside) {
    for (std::int64_t j = 0; j < n; ++j)
      if (!Forms::applies(x[j])) v[j] = Forms::full(x[j]);
  }
  if (v != y) std::copy_n(v, n, y);
}

// out = T(Forms::full(C(in))) for T float, float16 or bfloat16 with C float, or T = C double
// (Note [Range-limited elementwise ops]).
template <typename Forms, typename T>
void range_limited_loop(const ElementwiseGeometry& g, T* out, const T* in) {
  using C = RangeLimitedMath<T>;
  for_each_run<2>(g, [&](auto contiguous, const std::int64_t* offset, const std::int64_t* stride,
                         std::int64_t n) {
    const T* src = in + offset[1];
    T* dst = out + offset[0];
    // (Two ifs: a condition on T and the lambda's parameter together left clang checking the
    // float-only call for float16 too.)
    if constexpr (std::is_same_v<T, C>) {
      if constexpr (decltype(contiguous)::value) {
        for (std::int64_t c = 0; c < n; c += kHalfChunk)
          apply_range_limited<Forms>(src + c, dst + c, std::min(kHalfChunk, n - c));
        return;
      }
    }
    C x[kHalfChunk];
    C y[kHalfChunk];
    for (std::int64_t c = 0; c < n; c += kHalfChunk) {
      const std::int64_t m = std::min(kHalfChunk, n - c);
      load_as(src + c * stride[1], stride[1], m, x);
      apply_range_limited<Forms>(x, y, m);
      store_from(y, dst + c * stride[0], stride[0], m);
    }
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

// Calls f(std::integral_constant<Enum, value>) so an op chosen at runtime becomes a template
// argument of the element function.
template <typename F>
void with_op(BinaryOp op, F&& f) {
  using O = BinaryOp;
  switch (op) {
    case O::Add:
      return f(std::integral_constant<O, O::Add>{});
    case O::Sub:
      return f(std::integral_constant<O, O::Sub>{});
    case O::Mul:
      return f(std::integral_constant<O, O::Mul>{});
    case O::Div:
      return f(std::integral_constant<O, O::Div>{});
    case O::Pow:
      return f(std::integral_constant<O, O::Pow>{});
    case O::Maximum:
      return f(std::integral_constant<O, O::Maximum>{});
    case O::Minimum:
      return f(std::integral_constant<O, O::Minimum>{});
    case O::Atan2:
      return f(std::integral_constant<O, O::Atan2>{});
    case O::Remainder:
      return f(std::integral_constant<O, O::Remainder>{});
    case O::Fmod:
      return f(std::integral_constant<O, O::Fmod>{});
    case O::FloorDivide:
      return f(std::integral_constant<O, O::FloorDivide>{});
    case O::BitwiseAnd:
      return f(std::integral_constant<O, O::BitwiseAnd>{});
    case O::BitwiseOr:
      return f(std::integral_constant<O, O::BitwiseOr>{});
    case O::BitwiseXor:
      return f(std::integral_constant<O, O::BitwiseXor>{});
    case O::Zeta:
      return f(std::integral_constant<O, O::Zeta>{});
    case O::Hypot:
      return f(std::integral_constant<O, O::Hypot>{});
    case O::Copysign:
      return f(std::integral_constant<O, O::Copysign>{});
    case O::Nextafter:
      return f(std::integral_constant<O, O::Nextafter>{});
    case O::Fmax:
      return f(std::integral_constant<O, O::Fmax>{});
    case O::Fmin:
      return f(std::integral_constant<O, O::Fmin>{});
    case O::Igamma:
      return f(std::integral_constant<O, O::Igamma>{});
    case O::Igammac:
      return f(std::integral_constant<O, O::Igammac>{});
    case O::Gcd:
      return f(std::integral_constant<O, O::Gcd>{});
    case O::Lcm:
      return f(std::integral_constant<O, O::Lcm>{});
    case O::LeftShift:
      return f(std::integral_constant<O, O::LeftShift>{});
    case O::RightShift:
      return f(std::integral_constant<O, O::RightShift>{});
  }
  LG_THROW(Error, "unknown BinaryOp ", static_cast<int>(op));
}

template <typename F>
void with_op(UnaryOp op, F&& f) {
  using O = UnaryOp;
  switch (op) {
    case O::Neg:
      return f(std::integral_constant<O, O::Neg>{});
    case O::Abs:
      return f(std::integral_constant<O, O::Abs>{});
    case O::Exp:
      return f(std::integral_constant<O, O::Exp>{});
    case O::Log:
      return f(std::integral_constant<O, O::Log>{});
    case O::Sqrt:
      return f(std::integral_constant<O, O::Sqrt>{});
    case O::Tanh:
      return f(std::integral_constant<O, O::Tanh>{});
    case O::Sigmoid:
      return f(std::integral_constant<O, O::Sigmoid>{});
    case O::Relu:
      return f(std::integral_constant<O, O::Relu>{});
    case O::Erf:
      return f(std::integral_constant<O, O::Erf>{});
    case O::Expm1:
      return f(std::integral_constant<O, O::Expm1>{});
    case O::Log1p:
      return f(std::integral_constant<O, O::Log1p>{});
    case O::Sin:
      return f(std::integral_constant<O, O::Sin>{});
    case O::Cos:
      return f(std::integral_constant<O, O::Cos>{});
    case O::Rsqrt:
      return f(std::integral_constant<O, O::Rsqrt>{});
    case O::Reciprocal:
      return f(std::integral_constant<O, O::Reciprocal>{});
    case O::Sign:
      return f(std::integral_constant<O, O::Sign>{});
    case O::Floor:
      return f(std::integral_constant<O, O::Floor>{});
    case O::Ceil:
      return f(std::integral_constant<O, O::Ceil>{});
    case O::Round:
      return f(std::integral_constant<O, O::Round>{});
    case O::Trunc:
      return f(std::integral_constant<O, O::Trunc>{});
    case O::Log2:
      return f(std::integral_constant<O, O::Log2>{});
    case O::Log10:
      return f(std::integral_constant<O, O::Log10>{});
    case O::Tan:
      return f(std::integral_constant<O, O::Tan>{});
    case O::Asin:
      return f(std::integral_constant<O, O::Asin>{});
    case O::Acos:
      return f(std::integral_constant<O, O::Acos>{});
    case O::Atan:
      return f(std::integral_constant<O, O::Atan>{});
    case O::Sinh:
      return f(std::integral_constant<O, O::Sinh>{});
    case O::Cosh:
      return f(std::integral_constant<O, O::Cosh>{});
    case O::Asinh:
      return f(std::integral_constant<O, O::Asinh>{});
    case O::Acosh:
      return f(std::integral_constant<O, O::Acosh>{});
    case O::Atanh:
      return f(std::integral_constant<O, O::Atanh>{});
    case O::Exp2:
      return f(std::integral_constant<O, O::Exp2>{});
    case O::Lgamma:
      return f(std::integral_constant<O, O::Lgamma>{});
    case O::Digamma:
      return f(std::integral_constant<O, O::Digamma>{});
    case O::Erfinv:
      return f(std::integral_constant<O, O::Erfinv>{});
    case O::Erfc:
      return f(std::integral_constant<O, O::Erfc>{});
    case O::Erfcx:
      return f(std::integral_constant<O, O::Erfcx>{});
    case O::Sinc:
      return f(std::integral_constant<O, O::Sinc>{});
    case O::I0:
      return f(std::integral_constant<O, O::I0>{});
    case O::I0e:
      return f(std::integral_constant<O, O::I0e>{});
    case O::I1:
      return f(std::integral_constant<O, O::I1>{});
    case O::I1e:
      return f(std::integral_constant<O, O::I1e>{});
    case O::Ndtri:
      return f(std::integral_constant<O, O::Ndtri>{});
    case O::BesselJ0:
      return f(std::integral_constant<O, O::BesselJ0>{});
    case O::BesselJ1:
      return f(std::integral_constant<O, O::BesselJ1>{});
    case O::BesselY0:
      return f(std::integral_constant<O, O::BesselY0>{});
    case O::BesselY1:
      return f(std::integral_constant<O, O::BesselY1>{});
    case O::BesselK0:
      return f(std::integral_constant<O, O::BesselK0>{});
    case O::BesselK1:
      return f(std::integral_constant<O, O::BesselK1>{});
    case O::BesselK0e:
      return f(std::integral_constant<O, O::BesselK0e>{});
    case O::BesselK1e:
      return f(std::integral_constant<O, O::BesselK1e>{});
    case O::SphericalBesselJ0:
      return f(std::integral_constant<O, O::SphericalBesselJ0>{});
    case O::FrexpMantissa:
      return f(std::integral_constant<O, O::FrexpMantissa>{});
    case O::FrexpExponent:
      return f(std::integral_constant<O, O::FrexpExponent>{});
    case O::AiryAi:
      return f(std::integral_constant<O, O::AiryAi>{});
    case O::AiryAiPrime:
      return f(std::integral_constant<O, O::AiryAiPrime>{});
  }
  LG_THROW(Error, "unknown UnaryOp ", static_cast<int>(op));
}

template <typename F>
void with_op(CompareOp op, F&& f) {
  using O = CompareOp;
  switch (op) {
    case O::Gt:
      return f(std::integral_constant<O, O::Gt>{});
    case O::Lt:
      return f(std::integral_constant<O, O::Lt>{});
    case O::Ge:
      return f(std::integral_constant<O, O::Ge>{});
    case O::Le:
      return f(std::integral_constant<O, O::Le>{});
    case O::Eq:
      return f(std::integral_constant<O, O::Eq>{});
    case O::Ne:
      return f(std::integral_constant<O, O::Ne>{});
  }
  LG_THROW(Error, "unknown CompareOp ", static_cast<int>(op));
}

// Calls fn.template operator()<kind>() with the kind as a constant.
template <typename F>
void with_pow_exponent(PowExponent kind, const F& fn) {
  switch (kind) {
    case PowExponent::Square:
      return fn.template operator()<PowExponent::Square>();
    case PowExponent::Cube:
      return fn.template operator()<PowExponent::Cube>();
    case PowExponent::InverseSquare:
      return fn.template operator()<PowExponent::InverseSquare>();
    case PowExponent::Sqrt:
      return fn.template operator()<PowExponent::Sqrt>();
    case PowExponent::Rsqrt:
      return fn.template operator()<PowExponent::Rsqrt>();
    case PowExponent::Reciprocal:
      return fn.template operator()<PowExponent::Reciprocal>();
    case PowExponent::Other:
      return fn.template operator()<PowExponent::Other>();
  }
}

}  // namespace

void binary(BinaryOp op, DType dtype, const ElementwiseGeometry& g, void* out, const void* a,
            const void* b) {
  with_op(op, [&](auto op_constant) {
    constexpr BinaryOp kOp = decltype(op_constant)::value;
    dispatch_binary_dtype<kOp>(dtype, [&]<typename T>() {
      elementwise_loop_as<T>(
          g, [](T x, T y) LG_LAMBDA_ALWAYS_INLINE { return binary_element<kOp>(x, y); },
          [](auto x, auto y) LG_LAMBDA_ALWAYS_INLINE { return binary_op_apply<kOp>(x, y); },
          static_cast<T*>(out), static_cast<const T*>(a), static_cast<const T*>(b));
    });
  });
}

// zeta(2, q), polygamma(1, q), digamma's gradient, as a range-limited op of q (Note
// [Range-limited elementwise ops]): trigamma_of_positive, straight-line code, in lanes for
// 0 < q <= 1e8, zeta itself for the rest (the same function: zeta takes trigamma_of_positive
// there).
template <typename C>
struct TrigammaForms {
  static constexpr bool kHasCentral = false;
  [[gnu::always_inline]] static bool applies(C q) { return q > 0 && q <= C(1e8); }  // not NaN
  [[gnu::always_inline]] static C in_range(C q) {
    return static_cast<C>(special_math::trigamma_of_positive(q));
  }
  static C full(C q) { return binary_op_apply<BinaryOp::Zeta>(C(2), q); }
};

void binary_scalar(BinaryOp op, DType dtype, const ElementwiseGeometry& g, void* out, const void* a,
                   double s, bool scalar_first) {
  with_op(op, [&](auto op_constant) {
    constexpr BinaryOp kOp = decltype(op_constant)::value;
    dispatch_binary_dtype<kOp>(dtype, [&]<typename T>() {
      const opmath_t<T> scalar = cast_value<opmath_t<T>>(s);
      auto* out_t = static_cast<T*>(out);
      const auto* a_t = static_cast<const T*>(a);
      if constexpr (decltype(op_constant)::value == BinaryOp::Pow && kPowScalarShortcuts<T>) {
        if (!scalar_first) {  // Note [pow with a scalar exponent]
          with_pow_exponent(pow_exponent_kind(s), [&]<PowExponent kKind>() {
            elementwise_loop_as<T>(
                g,
                [scalar](T x) {
                  return static_cast<T>(pow_scalar_apply<kKind>(to_opmath(x), scalar));
                },
                [scalar](auto x) { return pow_scalar_apply<kKind>(x, scalar); }, out_t, a_t);
          });
          return;
        }
      }
      if constexpr (decltype(op_constant)::value == BinaryOp::Zeta) {
        if (scalar_first && s == 2.0) {
          range_limited_loop<TrigammaForms<RangeLimitedMath<T>>>(g, out_t, a_t);
          return;
        }
      }
      if (scalar_first) {
        elementwise_loop_as<T>(
            g,
            [scalar](T x) LG_LAMBDA_ALWAYS_INLINE {
              return static_cast<T>(binary_op_apply<kOp>(scalar, to_opmath(x)));
            },
            [scalar](auto x) LG_LAMBDA_ALWAYS_INLINE { return binary_op_apply<kOp>(scalar, x); },
            out_t, a_t);
      } else {
        elementwise_loop_as<T>(
            g,
            [scalar](T x) LG_LAMBDA_ALWAYS_INLINE {
              return static_cast<T>(binary_op_apply<kOp>(to_opmath(x), scalar));
            },
            [scalar](auto x) LG_LAMBDA_ALWAYS_INLINE { return binary_op_apply<kOp>(x, scalar); },
            out_t, a_t);
      }
    });
  });
}

// The ops of Note [Range-limited elementwise ops], for operands of type T: sin, cos and tan of
// float, float16 and bfloat16; the special functions of every floating dtype.
template <UnaryOp kOp, typename T>
constexpr bool is_range_limited() {
  if constexpr (kOp == UnaryOp::Sin || kOp == UnaryOp::Cos || kOp == UnaryOp::Tan) {
    return !std::is_same_v<T, double>;
  } else {
    return kOp == UnaryOp::BesselJ0 || kOp == UnaryOp::BesselJ1 || kOp == UnaryOp::BesselY0 ||
           kOp == UnaryOp::BesselY1 || kOp == UnaryOp::I0 || kOp == UnaryOp::I1 ||
           kOp == UnaryOp::I0e || kOp == UnaryOp::I1e || kOp == UnaryOp::BesselK0 ||
           kOp == UnaryOp::BesselK1 || kOp == UnaryOp::BesselK0e || kOp == UnaryOp::BesselK1e ||
           kOp == UnaryOp::AiryAi || kOp == UnaryOp::AiryAiPrime || kOp == UnaryOp::Ndtri ||
           kOp == UnaryOp::Lgamma || kOp == UnaryOp::Digamma;
  }
}

// The forms of a range-limited unary op kOp over C (float, or double for the special functions;
// Note [Range-limited elementwise ops]):
//   - applies(x) (false for NaN), where in_range(x) is the function's value, in lanes;
//   - full(x), the function itself, one call per element;
//   - where kHasCentral, central_applies(x), where central(x) is in_range(x)'s value at a fraction
//     of its cost: in_range computes two forms and keeps one, central only the first.
template <UnaryOp kOp, typename C>
struct RangeLimitedUnary {
  static constexpr bool kJ = kOp == UnaryOp::BesselJ0 || kOp == UnaryOp::BesselJ1;
  static constexpr bool kY = kOp == UnaryOp::BesselY0 || kOp == UnaryOp::BesselY1;
  static constexpr int kNu = kOp == UnaryOp::BesselJ0 || kOp == UnaryOp::BesselY0 ? 0 : 1;
  static constexpr bool kAiry = kOp == UnaryOp::AiryAi || kOp == UnaryOp::AiryAiPrime;
  // I0, I1 (central: their series, |x| <= 8) and the scaled I0e, I1e; K0, K1, K0e, K1e.
  static constexpr bool kUnscaledI = kOp == UnaryOp::I0 || kOp == UnaryOp::I1;
  static constexpr bool kI = kUnscaledI || kOp == UnaryOp::I0e || kOp == UnaryOp::I1e;
  static constexpr bool kK = kOp == UnaryOp::BesselK0 || kOp == UnaryOp::BesselK1 ||
                             kOp == UnaryOp::BesselK0e || kOp == UnaryOp::BesselK1e;
  static constexpr int kBesselNu = kOp == UnaryOp::I0 || kOp == UnaryOp::I0e ||
                                           kOp == UnaryOp::BesselK0 || kOp == UnaryOp::BesselK0e
                                       ? 0
                                       : 1;
  static constexpr bool kScaled = kOp == UnaryOp::I0e || kOp == UnaryOp::I1e ||
                                  kOp == UnaryOp::BesselK0e || kOp == UnaryOp::BesselK1e;
  static constexpr bool kHasCentral = kJ || kY || kOp == UnaryOp::Ndtri || kAiry || kUnscaledI;
  // Ai's oscillating form takes sin_cos_moderate of zeta = (2/3) |x|^(3/2) up to 2^20.
  static constexpr double kAiryLowest = -13000.0;  // zeta 988152

  // log_of_positive_normal as a function object, for special_math's forms that take a log.
  struct Log {
    [[gnu::always_inline]] double operator()(double v) const { return log_of_positive_normal(v); }
  };
  // exp_of_double likewise.
  struct Exp {
    [[gnu::always_inline]] double operator()(double v) const { return exp_of_double(v); }
  };

  [[gnu::always_inline]] static bool applies(C x) {
    if constexpr (kOp == UnaryOp::Sin || kOp == UnaryOp::Cos || kOp == UnaryOp::Tan) {
      return trig_polynomial_applies(x);
    } else if constexpr (kJ) {
      return std::fabs(x) <= kSinCosModerateLimit;  // false for NaN
    } else if constexpr (kY) {
      // log_of_positive_normal's domain (a float's subnormals are normal doubles).
      return x >= std::numeric_limits<double>::min() && x <= kSinCosModerateLimit;
    } else if constexpr (kOp == UnaryOp::Ndtri) {
      return x >= std::numeric_limits<double>::min() && x < 1;  // the tail's logs take normals
    } else if constexpr (kI) {
      return std::fabs(static_cast<double>(x)) <= std::numeric_limits<double>::max();  // finite
    } else if constexpr (kK) {
      return special_math::bessel_k_of_positive_applies(x);
    } else if constexpr (kOp == UnaryOp::Lgamma) {
      return special_math::lgamma_of_positive_applies(x);
    } else if constexpr (kOp == UnaryOp::Digamma) {
      return special_math::digamma_of_positive_applies(x);
    } else {
      static_assert(kAiry);
      return x >= kAiryLowest && x <= kSinCosModerateLimit;  // false for NaN
    }
  }

  [[gnu::always_inline]] static bool central_applies(C x) {
    static_assert(kHasCentral);
    if constexpr (kJ) {
      return special_math::bessel_j_series_applies(x);
    } else if constexpr (kY) {
      return special_math::bessel_y_series_applies(x);
    } else if constexpr (kAiry) {
      return special_math::airy_series_applies(x);
    } else if constexpr (kUnscaledI) {
      return special_math::bessel_i_series_applies(x);
    } else {
      return special_math::ndtri_central_applies(x);
    }
  }

  // The central forms: J0, J1, Ai and Ai' from their series, Y0, Y1 from theirs with
  // log_of_positive_normal, ndtri from its fit.
  [[gnu::always_inline]] static C central(C x) {
    static_assert(kHasCentral);
    if constexpr (kOp == UnaryOp::BesselJ0) {
      return static_cast<C>(special_math::bessel_j0_series(x));
    } else if constexpr (kOp == UnaryOp::BesselJ1) {
      return static_cast<C>(special_math::bessel_j1_series(x));
    } else if constexpr (kY) {
      return static_cast<C>(special_math::bessel_y_series(kNu, x, Log{}(x)));
    } else if constexpr (kAiry) {
      return static_cast<C>(special_math::airy_series(x, kOp == UnaryOp::AiryAiPrime));
    } else if constexpr (kOp == UnaryOp::I0) {
      return static_cast<C>(special_math::bessel_i0_series(x));
    } else if constexpr (kOp == UnaryOp::I1) {
      return static_cast<C>(special_math::bessel_i1_series(x));
    } else {
      return static_cast<C>(special_math::ndtri_central(x));
    }
  }

  [[gnu::always_inline]] static C in_range(C x) {
    if constexpr (kOp == UnaryOp::Sin) {
      return sin_polynomial_in_range(x);
    } else if constexpr (kOp == UnaryOp::Cos) {
      return cos_polynomial_in_range(x);
    } else if constexpr (kOp == UnaryOp::Tan) {
      return tan_polynomial_in_range(x);
    } else if constexpr (kJ) {
      // The central series, or Hankel's form with sin_cos_moderate beyond.
      const double a = std::fabs(static_cast<double>(x));
      const SinCos t = sin_cos_moderate(a);
      const double far = special_math::bessel_hankel(kNu, a, t.cos, t.sin).j;
      const C signed_far = static_cast<C>(kNu == 1 && x < 0 ? -far : far);
      return central_applies(x) ? central(x) : signed_far;
    } else if constexpr (kY) {
      const SinCos t = sin_cos_moderate(x);
      const C far = static_cast<C>(special_math::bessel_hankel(kNu, x, t.cos, t.sin).y);
      return central_applies(x) ? central(x) : far;
    } else if constexpr (kOp == UnaryOp::Ndtri) {
      const C tail = static_cast<C>(special_math::ndtri_tail(x, Log{}));
      return central_applies(x) ? central(x) : tail;
    } else if constexpr (kI) {
      // The series to 8, the large form with exp_of_double beyond (exp(-|x|) for I0e and I1e's
      // series).
      return static_cast<C>(special_math::bessel_i_of_finite(kBesselNu, x, kScaled, Exp{}));
    } else if constexpr (kK) {
      return static_cast<C>(
          special_math::bessel_k_of_positive(kBesselNu, x, kScaled, Log{}, Exp{}));
    } else if constexpr (kOp == UnaryOp::Lgamma) {
      return static_cast<C>(special_math::lgamma_of_positive(x, Log{}));
    } else if constexpr (kOp == UnaryOp::Digamma) {
      return static_cast<C>(special_math::digamma_of_positive(x, Log{}));
    } else {
      static_assert(kAiry);
      // The central series, the decaying form beyond 1 with exp_of_double, the oscillating one
      // below -2 with sin_cos_moderate. zeta's low part is below 2^-32 here, whose cosine is 1
      // and sine itself, rounded (as the C library's are).
      constexpr bool kPrime = kOp == UnaryOp::AiryAiPrime;
      const special_math::AiryPhase z = special_math::airy_phase(x);
      const double decaying = special_math::airy_decaying(z, kPrime, exp_of_double(-z.zeta));
      const SinCos t = sin_cos_moderate(z.zeta);
      const double oscillating =
          special_math::airy_oscillating(z, kPrime, t.cos, t.sin, 1.0, z.low);
      const C far = static_cast<C>(x > 1 ? decaying : oscillating);
      return central_applies(x) ? central(x) : far;
    }
  }

  static C full(C x) { return unary_op_apply<kOp>(x); }
};

template <UnaryOp kOp, typename T>
void range_limited_unary(const ElementwiseGeometry& g, T* out, const T* in) {
  range_limited_loop<RangeLimitedUnary<kOp, RangeLimitedMath<T>>>(g, out, in);
}

void unary(UnaryOp op, DType dtype, const ElementwiseGeometry& g, void* out, const void* a) {
  with_op(op, [&](auto op_constant) {
    constexpr UnaryOp kOp = decltype(op_constant)::value;
    auto run = [&]<typename T>() {
      // (kOp through op_constant's type: naming kOp here made GCC 12 ask the lambdas below to
      // capture it.)
      constexpr UnaryOp kThisOp = decltype(op_constant)::value;
      if constexpr (is_range_limited<kThisOp, T>()) {
        range_limited_unary<kThisOp>(g, static_cast<T*>(out), static_cast<const T*>(a));
        return;
      }
      // Always inlined, as the math below them (LG_ALWAYS_INLINE in core/macros.h): erf of
      // float stayed a call per element here, so its loop stayed scalar.
      elementwise_loop_as<T>(
          g, [](T x) LG_LAMBDA_ALWAYS_INLINE { return unary_element<kOp>(x); },
          [](auto x) LG_LAMBDA_ALWAYS_INLINE { return unary_op_apply<kOp>(x); },
          static_cast<T*>(out), static_cast<const T*>(a));
    };
    if constexpr (is_floating_only(kOp)) {
      dispatch_floating(dtype, op_name(op), run);
    } else {
      dispatch_numeric(dtype, op_name(op), run);
    }
  });
}

void activation(ActivationOp op, DType dtype, const ElementwiseGeometry& g, void* out,
                const void* a, double p0, double p1) {
  if (is_one_rounding_activation(op)) {
    with_one_rounding_activation(op, [&]<ActivationOp kOp>() {
      dispatch_floating(dtype, op_name(op), [&]<typename T>() {
        const OneRoundingActivationElement<kOp, T> element{make_activation_params<T>(op, p0, p1)};
        elementwise_loop_as<T>(
            g, element, [element](float x) LG_LAMBDA_ALWAYS_INLINE { return element.math(x); },
            static_cast<T*>(out), static_cast<const T*>(a));
      });
    });
    return;
  }
  const auto run = [&]<typename T>() {
    with_activation_element<T>(op, p0, p1, [&](const auto& element) {
      if constexpr (std::is_same_v<std::decay_t<decltype(element)>, LeakyReluElement<Half>>) {
        // x where x > 0 is Half(float(x)): the same bits as the element's select of x.
        const float slope = element.negative_slope;
        half_loop(
            g, [slope](float m) { return m > 0.0f ? m : m * slope; }, static_cast<Half*>(out),
            static_cast<const Half*>(a));
      } else {
        elementwise_loop(g, element, static_cast<T*>(out), static_cast<const T*>(a));
      }
    });
  };
  if (op == ActivationOp::Clamp) {
    dispatch_numeric(dtype, op_name(op), run);  // clamp_ takes integers too
  } else {
    dispatch_floating(dtype, op_name(op), run);
  }
}

void activation_backward(ActivationOp op, DType dtype, const ElementwiseGeometry& g,
                         void* grad_input, const void* grad_output, const void* x, double p0,
                         double p1) {
  with_activation_gradient(op, [&]<ActivationOp kOp>() {
    dispatch_floating(dtype, op_name(op), [&]<typename T>() {
      const ActivationBackwardElement<kOp, T> element{make_activation_params<T>(op, p0, p1)};
      elementwise_loop_as<T>(
          g, element,
          [element](float dy, float v) LG_LAMBDA_ALWAYS_INLINE { return element.math(dy, v); },
          static_cast<T*>(grad_input), static_cast<const T*>(grad_output),
          static_cast<const T*>(x));
    });
  });
}

void compare(CompareOp op, DType dtype, const ElementwiseGeometry& g, bool* out, const void* a,
             const void* b) {
  with_op(op, [&](auto op_constant) {
    constexpr CompareOp kOp = decltype(op_constant)::value;
    dispatch_all(dtype, op_name(op), [&]<typename T>() {
      elementwise_loop_as<T>(
          g, [](T x, T y) { return compare_element<kOp>(x, y); },
          [](auto x, auto y) { return compare_op_apply<kOp>(x, y); }, out, static_cast<const T*>(a),
          static_cast<const T*>(b));
    });
  });
}

void compare_scalar(CompareOp op, DType dtype, const ElementwiseGeometry& g, bool* out,
                    const void* a, double s) {
  with_op(op, [&](auto op_constant) {
    constexpr CompareOp kOp = decltype(op_constant)::value;
    dispatch_all(dtype, op_name(op), [&]<typename T>() {
      // The scalar is rounded to the tensor's dtype first (PyTorch compares in that dtype).
      const T scalar = cast_value<T>(s);
      const opmath_t<T> scalar_math = to_opmath(scalar);
      elementwise_loop_as<T>(
          g, [scalar](T x) { return compare_element<kOp>(x, scalar); },
          [scalar_math](auto x) { return compare_op_apply<kOp>(x, scalar_math); }, out,
          static_cast<const T*>(a));
    });
  });
}

// A select copies one operand's bits, so it runs on the unsigned integer of the element's width,
// with the condition's bytes read as uint8, and selects with a mask, not a branch: GCC 12 has no
// vector type for a load of bool (nor vectorises a copy of Half's struct), and a loop over them
// stayed scalar with a branch per element, mispredicted half the time on a random mask (where of
// 16M float32 elements took 102 ms, an add 14); a strided loop (an operand broadcast from a 0-d
// tensor, as clamp's and relu's backward's) stays scalar, and the mask keeps it free of branches
// there too. A bool holds 0 or 1, so 0 - c is all ones exactly where c is true.
void where(DType dtype, const ElementwiseGeometry& g, void* out, const bool* cond, const void* a,
           const void* b) {
  const auto run = [&]<typename U>() {
    elementwise_loop(
        g,
        [](std::uint8_t c, U x, U y) {
          const U take_x = static_cast<U>(U{0} - static_cast<U>(c));
          return static_cast<U>(y ^ ((x ^ y) & take_x));
        },
        static_cast<U*>(out), reinterpret_cast<const std::uint8_t*>(cond), static_cast<const U*>(a),
        static_cast<const U*>(b));
  };
  switch (element_size(dtype)) {
    case 1:
      return run.template operator()<std::uint8_t>();
    case 2:
      return run.template operator()<std::uint16_t>();
    case 4:
      return run.template operator()<std::uint32_t>();
    case 8:
      return run.template operator()<std::uint64_t>();
  }
  LG_THROW(Error, "where: unsupported dtype ", dtype);
}

namespace {

// float32 <-> float16/bfloat16 between dense operands through kernels/cpu/half_convert.h's array
// conversions, which run in vector lanes (the loop above converts one value at a time: GCC does
// not vectorise core/half.h's float16 conversions). The same bits as cast_value. Returns false
// for every other cast.
template <typename From, typename To>
bool cast_dense_as(const ElementwiseGeometry& g, void* out, const void* in) {
  if (!g.is_contiguous(0) || !g.is_contiguous(1)) return false;
  parallel_for(g.numel, kElementwiseGrain, [&](std::int64_t begin, std::int64_t end) {
    const From* src = static_cast<const From*>(in) + begin;
    To* dst = static_cast<To*>(out) + begin;
    if constexpr (std::is_same_v<From, float>)
      narrow(src, dst, end - begin);
    else
      widen(src, dst, end - begin);
  });
  return true;
}

bool cast_half_dense(DType out_dtype, DType in_dtype, const ElementwiseGeometry& g, void* out,
                     const void* in) {
  if (in_dtype == DType::Float32 && out_dtype == DType::Float16)
    return cast_dense_as<float, Half>(g, out, in);
  if (in_dtype == DType::Float32 && out_dtype == DType::BFloat16)
    return cast_dense_as<float, BFloat16>(g, out, in);
  if (in_dtype == DType::Float16 && out_dtype == DType::Float32)
    return cast_dense_as<Half, float>(g, out, in);
  if (in_dtype == DType::BFloat16 && out_dtype == DType::Float32)
    return cast_dense_as<BFloat16, float>(g, out, in);
  return false;
}

}  // namespace

void cast(DType out_dtype, DType in_dtype, const ElementwiseGeometry& g, void* out,
          const void* in) {
  if (cast_half_dense(out_dtype, in_dtype, g, out, in)) return;
  // Note [Tiled transposed copy]
  if (out_dtype == in_dtype && copy_transposed(g, element_size(out_dtype), out, in)) return;
  dispatch_all(out_dtype, "cast", [&]<typename To>() {
    dispatch_all(in_dtype, "cast", [&]<typename From>() {
      elementwise_loop(
          g, [](From x) { return cast_value<To>(x); }, static_cast<To*>(out),
          static_cast<const From*>(in));
    });
  });
}

void fill(DType dtype, const ElementwiseGeometry& g, void* out, double value) {
  dispatch_all(dtype, "fill", [&]<typename T>() {
    const T v = cast_value<T>(value);
    elementwise_loop(
        g, [v]() { return v; }, static_cast<T*>(out));
  });
}

}  // namespace leangrad::kernels::cpu
