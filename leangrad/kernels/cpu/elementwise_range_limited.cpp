// The CPU's range-limited elementwise ops (kernels/cpu/elementwise_range_limited.h): sin, cos
// and tan of float and the special functions, each in SIMD lanes where its in-range form applies.
//
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
//   element alone, whatever its neighbours are (-ffp-contract=off, CMakeLists.txt). It is the full
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
#include <leangrad/kernels/cpu/elementwise_range_limited.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>
#include <utility>

#include <leangrad/core/error.h>
#include <leangrad/kernels/cpu/avx512.h>
#include <leangrad/kernels/cpu/elementwise_loops.h>
#include <leangrad/kernels/cpu/float_polynomials.h>
#include <leangrad/kernels/dispatch.h>
#include <leangrad/kernels/elementwise_math.h>

namespace leangrad::kernels::cpu {
namespace {

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

// log_of_positive_normal and exp_of_double as function objects, the log and exp of the lanes,
// for special_math's forms that take them as parameters.
struct Log {
  [[gnu::always_inline]] double operator()(double v) const { return log_of_positive_normal(v); }
};
struct Exp {
  [[gnu::always_inline]] double operator()(double v) const { return exp_of_double(v); }
};

// The type a range-limited op of T computes in: double for double, float for the others.
template <typename T>
using RangeLimitedMath = std::conditional_t<std::is_same_v<T, double>, double, float>;

// v[j] = Forms::central(x[j]) if kCentral, else Forms::in_range(x[j]), for j < n, in lanes;
// returns whether any x[j] is outside Forms::applies.
template <typename Forms, bool kCentral, typename C>
[[gnu::always_inline]] inline bool range_limited_lanes(const C* x, C* v, std::int64_t n) {
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

// range_limited_lanes in a function of its own, for tools/check_lane_calls.sh to find: every
// piece of the forms is always inlined (their headers' LG_ALWAYS_INLINE), and the loop must hold
// no call, which keeps it scalar. Flattened besides, so that a piece added without the attribute
// is inlined here all the same where GCC can. On a CPU with AVX-512, its copy compiled for it
// (Note [AVX-512 elementwise loops] in kernels/cpu/elementwise_loops.h): the same IEEE operations
// per element in 16 float or 8 double lanes.
template <typename Forms, bool kCentral, typename C>
[[gnu::noinline, gnu::flatten]] bool fill_range_limited(const C* x, C* v, std::int64_t n) {
  return range_limited_lanes<Forms, kCentral>(x, v, n);
}

#if LEANGRAD_AVX512_CLONES
template <typename Forms, bool kCentral, typename C>
[[gnu::noinline, gnu::flatten]] LG_AVX512_TARGET bool fill_range_limited_avx512(const C* x, C* v,
                                                                                std::int64_t n) {
  return range_limited_lanes<Forms, kCentral>(x, v, n);
}
#endif

template <typename Forms, bool kCentral, typename C>
[[gnu::always_inline]] inline bool fill_range_limited_widest(const C* x, C* v, std::int64_t n) {
#if LEANGRAD_AVX512_CLONES
  if (avx512_copies_enabled()) return fill_range_limited_avx512<Forms, kCentral>(x, v, n);
#endif
  return fill_range_limited<Forms, kCentral>(x, v, n);
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
    outside = central != 0 ? fill_range_limited_widest<Forms, true>(x, v, n)
                           : fill_range_limited_widest<Forms, false>(x, v, n);
  } else {
    outside = fill_range_limited_widest<Forms, false>(x, v, n);
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

// Note [Incomplete gamma in lanes]
//   P(a, x) and Q(a, x) (Note [Regularized incomplete gamma functions] in kernels/special_math.h)
//   sum a series or evaluate a continued fraction until a step changes it no more: a loop of a
//   data-dependent length per element, each step waiting on a division (the fraction's on two),
//   140 ns an element for a and x in [4, 12) (the ops scan's igamma row, 0.69x LibTorch). Here a
//   chunk's elements where incomplete_gamma_of_positive_applies are split into those that take the
//   series and those that take the fraction, and kGammaLanes of one form at a time run its loop in
//   lockstep: every lane takes each step, and a lane whose own loop has stopped keeps its values
//   (a select), so each lane ends with its own loop's value, bit for bit, and the group runs as
//   long as its slowest lane (a short group is padded with its last element). The steps are
//   written on vectors of four doubles (GCC's vector extensions), the divisions included, two
//   vectors a group, so that the lanes' chains of dependencies overlap. The prefactor, exp(a log x
//   - x - log Gamma(a)), then runs over the chunk in lanes with log_of_positive_normal and
//   exp_of_double (lgamma_of_positive's log too); the other elements (zeros, infinities, NaN,
//   negative or subnormal operands, a beyond 2^1000, and a > 20 within 0.3 a of x, which
//   Temme's expansion takes) take incomplete_gamma, one call each.
//   A value is incomplete_gamma_of_positive's with the lanes' log and exp, whatever else its chunk
//   holds (tests/kernels/test_float_polynomials.cpp). The forward now takes 44 ns an element and
//   the row runs at 1.74x LibTorch (bench/results/2026-12-06-cpu-igamma-in-lanes-zen4-2core.md);
//   eight lanes a group ran 1.4 times as fast as four, sixteen 3% faster than eight.
constexpr int kGammaLanes = 8;

// Four doubles in one AVX register, and a mask of four lanes (all ones or all zeros each), as
// GCC's and Clang's vector extensions: the lockstep steps below are written on these, since
// GCC's vectoriser, left to a loop over the lanes, kept the series' step scalar ("not
// profitable", and "control flow in loop" for its selects). Each operation rounds each lane as the
// scalar operation does.
using Doubles = double __attribute__((vector_size(32)));
using Lanes = std::int64_t __attribute__((vector_size(32)));
constexpr int kVectors = kGammaLanes / 4;

[[gnu::always_inline]] inline Doubles splat(double v) {
  return Doubles{v, v, v, v};
}
// kept where keep is set, next elsewhere.
[[gnu::always_inline]] inline Doubles select(Lanes keep, Doubles kept, Doubles next) {
  return (Doubles)(((Lanes)kept & keep) | ((Lanes)next & ~keep));
}
[[gnu::always_inline]] inline Doubles magnitude(Doubles v) {
  constexpr std::int64_t kNoSign = 0x7fffffffffffffff;
  return (Doubles)((Lanes)v & Lanes{kNoSign, kNoSign, kNoSign, kNoSign});
}
[[gnu::always_inline]] inline bool every_lane(const Lanes (&lanes)[kVectors]) {
  Lanes all = lanes[0];
  for (int v = 1; v < kVectors; ++v)
    all &= lanes[v];
  return (all[0] & all[1] & all[2] & all[3]) != 0;
}

// incomplete_gamma_series_sum of kGammaLanes elements in lockstep: out[l] = the sum for a[l],
// x[l], the scalar loop's steps in each lane until its own stop.
[[gnu::noinline]] void incomplete_gamma_series_lanes(const double* a, const double* x,
                                                     double* out) {
  Doubles xs[kVectors], ap[kVectors], term[kVectors], sum[kVectors];
  Lanes done[kVectors];
  for (int v = 0; v < kVectors; ++v) {
    std::memcpy(&ap[v], a + 4 * v, sizeof(Doubles));
    std::memcpy(&xs[v], x + 4 * v, sizeof(Doubles));
    term[v] = splat(1.0) / ap[v];
    sum[v] = term[v];
    done[v] = Lanes{};
  }
  for (int n = 0; n < 100000; ++n) {
    for (int v = 0; v < kVectors; ++v) {
      const Doubles next_ap = ap[v] + splat(1.0);
      const Doubles next_term = term[v] * (xs[v] / next_ap);
      const Doubles next_sum = sum[v] + next_term;
      ap[v] = select(done[v], ap[v], next_ap);
      term[v] = select(done[v], term[v], next_term);
      sum[v] = select(done[v], sum[v], next_sum);
      done[v] |= (Lanes)(next_term < next_sum * splat(1e-17));
    }
    if (every_lane(done)) break;
  }
  std::memcpy(out, sum, sizeof(sum));
}

// incomplete_gamma_fraction_value of kGammaLanes elements in lockstep.
[[gnu::noinline]] void incomplete_gamma_fraction_lanes(const double* a, const double* x,
                                                       double* out) {
  const Doubles tiny = splat(special_math::kIncompleteGammaTiny);
  Doubles as[kVectors], b[kVectors], c[kVectors], d[kVectors], h[kVectors];
  Lanes done[kVectors];
  for (int v = 0; v < kVectors; ++v) {
    Doubles xs;
    std::memcpy(&as[v], a + 4 * v, sizeof(Doubles));
    std::memcpy(&xs, x + 4 * v, sizeof(Doubles));
    b[v] = xs + splat(1.0) - as[v];
    c[v] = splat(1.0) / tiny;
    d[v] = splat(1.0) / b[v];
    h[v] = d[v];
    done[v] = Lanes{};
  }
  for (int i = 1; i < 100000; ++i) {
    // -i * (i - a), as the scalar loop's int and double operands convert.
    const Doubles minus_i = splat(static_cast<double>(-i));
    const Doubles plain_i = splat(static_cast<double>(i));
    for (int v = 0; v < kVectors; ++v) {
      const Doubles an = minus_i * (plain_i - as[v]);
      const Doubles next_b = b[v] + splat(2.0);
      Doubles next_d = an * d[v] + next_b;
      next_d = select((Lanes)(magnitude(next_d) < tiny), tiny, next_d);
      Doubles next_c = next_b + an / c[v];
      next_c = select((Lanes)(magnitude(next_c) < tiny), tiny, next_c);
      next_d = splat(1.0) / next_d;
      const Doubles delta = next_d * next_c;
      const Doubles next_h = h[v] * delta;
      b[v] = select(done[v], b[v], next_b);
      c[v] = select(done[v], c[v], next_c);
      d[v] = select(done[v], d[v], next_d);
      h[v] = select(done[v], h[v], next_h);
      done[v] |= (Lanes)(magnitude(delta - splat(1.0)) < splat(1e-16));
    }
    if (every_lane(done)) break;
  }
  std::memcpy(out, h, sizeof(h));
}

// value[index[k]] = the series' sum (kSeries) or the fraction's value of element index[k], k <
// count, kGammaLanes at a time.
template <bool kSeries>
void incomplete_gamma_groups(const std::int16_t* index, int count, const double* a, const double* x,
                             double* value) {
  for (int first = 0; first < count; first += kGammaLanes) {
    double group_a[kGammaLanes];
    double group_x[kGammaLanes];
    double group_value[kGammaLanes];
    for (int l = 0; l < kGammaLanes; ++l) {
      const int k = index[std::min(first + l, count - 1)];
      group_a[l] = a[k];
      group_x[l] = x[k];
    }
    if constexpr (kSeries) {
      incomplete_gamma_series_lanes(group_a, group_x, group_value);
    } else {
      incomplete_gamma_fraction_lanes(group_a, group_x, group_value);
    }
    for (int l = 0; l < kGammaLanes && first + l < count; ++l)
      value[index[first + l]] = group_value[l];
  }
}

// y[j] = incomplete_gamma_from(...) with the prefactor in lanes, for j < m; meaningful where
// incomplete_gamma_of_positive_applies.
[[gnu::noinline, gnu::flatten]] void incomplete_gamma_results_lanes(const double* a,
                                                                    const double* x,
                                                                    const double* value, bool lower,
                                                                    double* y, std::int64_t m) {
  for (std::int64_t j = 0; j < m; ++j) {
    const double prefactor =
        special_math::incomplete_gamma_prefactor_of_positive(a[j], x[j], Log{}, Exp{});
    y[j] = special_math::incomplete_gamma_from(x[j] < a[j] + 1.0, value[j], prefactor, lower);
  }
}

// y[j] = P(a[j], x[j]) (lower) or Q(a[j], x[j]) for j < m <= kHalfChunk (Note [Incomplete gamma
// in lanes]).
void incomplete_gamma_chunk(const double* a, const double* x, bool lower, double* y,
                            std::int64_t m) {
  static_assert(kHalfChunk <= std::numeric_limits<std::int16_t>::max());
  std::int16_t series[kHalfChunk];
  std::int16_t fraction[kHalfChunk];
  int num_series = 0;
  int num_fraction = 0;
  bool outside = false;
  double value[kHalfChunk] = {};  // 0 for the elements outside
  // Without branches: a random mix of the two forms mispredicted one in two.
  for (std::int64_t j = 0; j < m; ++j) {
    const bool in_lanes = special_math::incomplete_gamma_of_positive_applies(a[j], x[j]);
    const bool by_series = x[j] < a[j] + 1.0;
    series[num_series] = static_cast<std::int16_t>(j);
    fraction[num_fraction] = static_cast<std::int16_t>(j);
    num_series += static_cast<int>(in_lanes & by_series);
    num_fraction += static_cast<int>(in_lanes & !by_series);
    outside |= !in_lanes;
  }
  incomplete_gamma_groups<true>(series, num_series, a, x, value);
  incomplete_gamma_groups<false>(fraction, num_fraction, a, x, value);
  incomplete_gamma_results_lanes(a, x, value, lower, y, m);
  if (outside) {
    for (std::int64_t j = 0; j < m; ++j)
      if (!special_math::incomplete_gamma_of_positive_applies(a[j], x[j]))
        y[j] = special_math::incomplete_gamma(a[j], x[j], lower);
  }
}

// out = T(C(P(a, x))) (lower) or of Q, C the type binary_op_apply computes in: the operands
// widened to double, the double result rounded to C and then to T, as the plain loop does.
template <typename T>
void incomplete_gamma_loop(const ElementwiseGeometry& g, bool lower, T* out, const T* a,
                           const T* x) {
  using C = RangeLimitedMath<T>;
  for_each_run<3>(
      g, [&](auto, const std::int64_t* offset, const std::int64_t* stride, std::int64_t n) {
        C narrow_a[kHalfChunk];
        C narrow_x[kHalfChunk];
        C narrow_y[kHalfChunk];
        double wide_a[kHalfChunk];
        double wide_x[kHalfChunk];
        double wide_y[kHalfChunk];
        for (std::int64_t c = 0; c < n; c += kHalfChunk) {
          const std::int64_t m = std::min(kHalfChunk, n - c);
          load_as(a + offset[1] + c * stride[1], stride[1], m, narrow_a);
          load_as(x + offset[2] + c * stride[2], stride[2], m, narrow_x);
          std::copy_n(narrow_a, m, wide_a);
          std::copy_n(narrow_x, m, wide_x);
          incomplete_gamma_chunk(wide_a, wide_x, lower, wide_y, m);
          for (std::int64_t j = 0; j < m; ++j)
            narrow_y[j] = static_cast<C>(wide_y[j]);
          store_from(narrow_y, out + offset[0] + c * stride[0], stride[0], m);
        }
      });
}

// Calls f(std::integral_constant<UnaryOp, op>) for a range-limited op; false for any other op.
template <typename F>
bool with_range_limited_op(UnaryOp op, const F& f) {
  return [&]<std::size_t... K>(std::index_sequence<K...>) {
    return ((op == kRangeLimitedOps[K]
                 ? (f(std::integral_constant<UnaryOp, kRangeLimitedOps[K]>{}), true)
                 : false) ||
            ...);
  }
  (std::make_index_sequence<std::size(kRangeLimitedOps)>{});
}

}  // namespace

void range_limited_unary(UnaryOp op, DType dtype, const ElementwiseGeometry& g, void* out,
                         const void* in) {
  const bool known = with_range_limited_op(op, [&](auto op_constant) {
    dispatch_floating(dtype, op_name(op), [&]<typename T>() {
      constexpr UnaryOp kOp = decltype(op_constant)::value;
      if constexpr (is_range_limited<kOp, T>()) {
        range_limited_loop<RangeLimitedUnary<kOp, RangeLimitedMath<T>>>(g, static_cast<T*>(out),
                                                                        static_cast<const T*>(in));
      } else {
        LG_INTERNAL_ASSERT(false, op_name(op), " of ", dtype, " is not a range-limited op");
      }
    });
  });
  LG_INTERNAL_ASSERT(known, op_name(op), " is not a range-limited op");
}

void incomplete_gamma(DType dtype, bool lower, const ElementwiseGeometry& g, void* out,
                      const void* a, const void* x) {
  dispatch_floating(dtype, lower ? "igamma" : "igammac", [&]<typename T>() {
    incomplete_gamma_loop(g, lower, static_cast<T*>(out), static_cast<const T*>(a),
                          static_cast<const T*>(x));
  });
}

void zeta_of_two(DType dtype, const ElementwiseGeometry& g, void* out, const void* q) {
  dispatch_floating(dtype, "zeta", [&]<typename T>() {
    range_limited_loop<TrigammaForms<RangeLimitedMath<T>>>(g, static_cast<T*>(out),
                                                           static_cast<const T*>(q));
  });
}

}  // namespace leangrad::kernels::cpu
