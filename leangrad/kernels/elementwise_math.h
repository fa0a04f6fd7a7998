// The per-element math of the elementwise kernels, shared by the CPU loops (kernels/cpu/) and the
// CUDA kernels (kernels/cuda/) so both compute with the same formulas.
// Every function is LG_HOST_DEVICE and works on one element; the loops around them live in the
// backends. Three layers:
//   *_op_apply<op>(m...)      the math, on the math type M = opmath_t<T> (float for Half/BFloat16)
//   *_element<op, T>(t...)    load T -> math in opmath_t<T> -> store T (what a kernel calls)
//   cast_value<To>(from)      the one conversion between dtypes (casts, fill, scalars)
//
// Note [Defined integer semantics]
//   C++ leaves signed overflow, float -> int out of range and x / 0 undefined; PyTorch inherits
//   whatever the hardware does. leangrad defines every case so no input is undefined behaviour:
//   - add/sub/mul/neg/abs on integers wrap modulo 2^bits (two's complement), as PyTorch does in
//     practice; abs(INT_MIN) == INT_MIN.
//   - integer pow(a, b) with b < 0 follows PyTorch's powi: 1 for a == 1, +-1 for a == -1,
//     0 otherwise (0 ** -1 included). Large results wrap.
//   - integer div truncates toward zero, x / 0 == 0 and INT_MIN / -1 == INT_MIN. (ops::binary
//     sends integer division to float32, as PyTorch's true division; this only guards the kernel.)
//   - integer fmod, remainder and floor_divide keep a == (a / b) * b + a % b with the quotient
//     truncated (fmod) or floored (remainder, floor_divide): x % 0 == x and x // 0 == 0 (PyTorch
//     raises ZeroDivisionError on the CPU; a device cannot raise), INT_MIN % -1 == 0 and
//     INT_MIN // -1 == INT_MIN.
//   - float -> integer truncates toward zero; NaN -> 0; values beyond int64's range saturate to
//     int64's min/max; narrower types (int32, uint8) then take the int64 value modulo 2^bits,
//     so -1.0 -> uint8 gives 255 as in PyTorch.
//   - anything -> bool is x != 0 (NaN -> true).
//
// Note [Polynomial exp on the CPU]
//   exp and sigmoid of float (so of float16 and bfloat16, computed in float) take e^x from
//   kernels/cpu/exp_polynomial.h on the host: within 1.02 ulps (Note [Polynomial exp]), against
//   glibc's expf within 0.5, and straight-line code, so the CPU loops run it in SIMD lanes, where
//   a call of expf per element kept them scalar (on a Zen 1 core, exp of 16M floats 1.8x faster,
//   sigmoid 4.7x). PyTorch's CPU kernels take e^x from SLEEF, within 1 ulp. sigmoid is written with
//   selects rather than branches, for the same reason; its two sides are those of the stable
//   formula. CUDA keeps its expf (within 2 ulps), and float64 the library's exp. log, tanh, erf,
//   expm1, log1p, sinh, cosh, sin, cos, tan, asin, acos, atan and atan2 of float come the same way
//   from kernels/cpu/float_polynomials.h (Note [Float polynomials]), within 0.51 to 1.74 ulps where
//   glibc's are within 1 to 2 but a call each; so do gelu's value and derivative
//   (ActivationMath<Gelu> below).
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include <leangrad/core/dtype.h>
#include <leangrad/core/error.h>
#include <leangrad/core/half.h>
#include <leangrad/core/macros.h>
#include <leangrad/kernels/dispatch.h>
#include <leangrad/kernels/ops.h>
#include <leangrad/kernels/special_math.h>
#if !defined(__CUDA_ARCH__)
#include <leangrad/kernels/cpu/exp_polynomial.h>
#include <leangrad/kernels/cpu/float_polynomials.h>
#endif

namespace leangrad::kernels {

template <typename T>
inline constexpr bool is_half_type_v = std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>;

template <typename T>
inline constexpr bool is_floating_type_v = std::is_floating_point_v<T> || is_half_type_v<T>;

// NaN test that also compiles for integers (always false there).
template <typename M>
LG_HOST_DEVICE LG_INLINE bool is_nan(M x) {
  return x != x;  // NOLINT(misc-redundant-expression): true only for NaN
}

// ---- Conversions -----------------------------------------------------------------------------

// Float -> integer per Note [Defined integer semantics]: NaN -> 0, saturate to int64, truncate.
template <typename F>
LG_HOST_DEVICE LG_INLINE std::int64_t float_to_int64(F x) {
  const double v = static_cast<double>(x);
  if (v != v) return 0;
  constexpr double kTwoPow63 = 9223372036854775808.0;  // 2^63, exact in double
  if (v >= kTwoPow63) return std::numeric_limits<std::int64_t>::max();
  if (v <= -kTwoPow63) return std::numeric_limits<std::int64_t>::min();
  return static_cast<std::int64_t>(v);  // truncates toward zero
}

// Converts one value between any two of the 8 element types (or from double, for scalars).
template <typename To, typename From>
LG_HOST_DEVICE LG_INLINE To cast_value(From x) {
  if constexpr (std::is_same_v<To, From>) {
    return x;
  } else if constexpr (is_half_type_v<From>) {
    return cast_value<To>(static_cast<float>(x));  // Half/BFloat16 -> float is exact
  } else if constexpr (std::is_same_v<To, bool>) {
    return x != From(0);
  } else if constexpr (is_half_type_v<To>) {
    return To(static_cast<float>(x));  // rounds to nearest even (core/half.h)
  } else if constexpr (std::is_floating_point_v<To>) {
    return static_cast<To>(x);
  } else if constexpr (std::is_floating_point_v<From>) {  // float -> integer
    return static_cast<To>(float_to_int64(x));  // int64 -> narrower wraps (C++20: modular)
  } else {                                      // integer or bool -> integer: modular
    return static_cast<To>(x);
  }
}

// The math type of T: float for Half/BFloat16, T otherwise.
template <typename T>
LG_HOST_DEVICE LG_INLINE opmath_t<T> to_opmath(T x) {
  return static_cast<opmath_t<T>>(x);
}

// ---- Integer helpers (Note [Defined integer semantics]) ---------------------------------------

template <typename I>
using wrap_unsigned_t = std::make_unsigned_t<I>;

template <typename I>
LG_HOST_DEVICE LG_INLINE I wrapping_add(I a, I b) {
  using U = wrap_unsigned_t<I>;
  return static_cast<I>(static_cast<U>(static_cast<U>(a) + static_cast<U>(b)));
}
template <typename I>
LG_HOST_DEVICE LG_INLINE I wrapping_sub(I a, I b) {
  using U = wrap_unsigned_t<I>;
  return static_cast<I>(static_cast<U>(static_cast<U>(a) - static_cast<U>(b)));
}
template <typename I>
LG_HOST_DEVICE LG_INLINE I wrapping_mul(I a, I b) {
  using U = wrap_unsigned_t<I>;
  return static_cast<I>(static_cast<U>(static_cast<U>(a) * static_cast<U>(b)));
}

template <typename I>
LG_HOST_DEVICE LG_INLINE I integer_div(I a, I b) {
  if (b == 0) return 0;
  if constexpr (std::is_signed_v<I>) {
    if (b == -1) return wrapping_sub(I(0), a);  // INT_MIN / -1 overflows: wrap
  }
  return static_cast<I>(a / b);
}

// a - trunc(a / b) b, the sign of a (C's %), defined for b == 0 and INT_MIN % -1.
template <typename I>
LG_HOST_DEVICE LG_INLINE I integer_fmod(I a, I b) {
  if (b == 0) return a;
  if constexpr (std::is_signed_v<I>) {
    if (b == -1) return 0;  // INT_MIN % -1 overflows in hardware
  }
  return static_cast<I>(a % b);
}

// a - floor(a / b) b, the sign of b (Python's %).
template <typename I>
LG_HOST_DEVICE LG_INLINE I integer_remainder(I a, I b) {
  const I r = integer_fmod(a, b);
  if constexpr (std::is_signed_v<I>) {
    if (r != 0 && ((r < 0) != (b < 0))) return wrapping_add(r, b);
  }
  return r;
}

// floor(a / b) (Python's //): the truncated quotient, less one when a remainder of the other
// sign was left.
template <typename I>
LG_HOST_DEVICE LG_INLINE I integer_floor_div(I a, I b) {
  const I q = integer_div(a, b);
  if constexpr (std::is_signed_v<I>) {
    const I r = integer_fmod(a, b);
    if (b != 0 && r != 0 && ((r < 0) != (b < 0))) return wrapping_sub(q, I(1));
  }
  return q;
}

// Python's and PyTorch's floating remainder: fmod (exact), moved into b's sign.
template <typename F>
LG_HOST_DEVICE LG_INLINE F floating_remainder(F a, F b) {
  F mod = ::fmod(a, b);
  if (mod != 0 && ((b < 0) != (mod < 0))) mod += b;
  return mod;
}

// Python's and PyTorch's floating floor division: (a - fmod(a, b)) / b is within rounding of
// an integer; less one when the remainder had the other sign; rounded to that integer; a zero
// quotient keeps the sign of a / b. b == 0 gives a / b (an infinity or NaN).
template <typename F>
LG_HOST_DEVICE LG_INLINE F floating_floor_div(F a, F b) {
  if (b == 0) return a / b;
  const F mod = ::fmod(a, b);
  F div = (a - mod) / b;
  if (mod != 0 && ((b < 0) != (mod < 0))) div -= F(1);
  if (div == 0) return ::copysign(F(0), a / b);
  F floordiv = ::floor(div);
  if (div - floordiv > F(0.5)) floordiv += F(1);
  return floordiv;
}

// Exponentiation by squaring (PyTorch's powi), wrapping on overflow.
template <typename I>
LG_HOST_DEVICE LG_INLINE I integer_pow(I base, I exponent) {
  if constexpr (std::is_signed_v<I>) {
    if (exponent < 0) {
      if (base == 1) return 1;
      if (base == -1) return (exponent & 1) ? I(-1) : I(1);
      return 0;
    }
  }
  I result = 1;
  while (exponent != 0) {
    if (exponent & 1) result = wrapping_mul(result, base);
    base = wrapping_mul(base, base);
    exponent = static_cast<I>(exponent >> 1);
  }
  return result;
}

// ---- Binary ----------------------------------------------------------------------------------

// The binary ops defined only for floating types (ops::binary computes integral operands in
// float32, as PyTorch's integral-to-float promotion; it sends integral Div there too, whose
// integer kernel stays defined per Note [Defined integer semantics]).
constexpr bool is_floating_only(BinaryOp op) {
  return op == BinaryOp::Atan2 || op == BinaryOp::Zeta || op == BinaryOp::Hypot ||
         op == BinaryOp::Copysign || op == BinaryOp::Nextafter || op == BinaryOp::Igamma ||
         op == BinaryOp::Igammac;
}
// The bitwise ops (bool operands go through uint8), gcd, lcm and the shifts (bool refused):
// defined for integral types only.
constexpr bool is_bitwise(BinaryOp op) {
  return op == BinaryOp::BitwiseAnd || op == BinaryOp::BitwiseOr || op == BinaryOp::BitwiseXor;
}
constexpr bool is_integral_only(BinaryOp op) {
  return is_bitwise(op) || op == BinaryOp::Gcd || op == BinaryOp::Lcm ||
         op == BinaryOp::LeftShift || op == BinaryOp::RightShift;
}

// gcd(a, b) >= 0 by Euclid's algorithm on the magnitudes, in the unsigned type, so that the
// magnitude of the most negative value is defined (its gcd with 0 wraps back to it, as
// PyTorch's std::abs does in practice).
template <typename I>
LG_HOST_DEVICE LG_INLINE I integer_gcd(I a, I b) {
  using U = std::make_unsigned_t<I>;
  U x = static_cast<U>(a), y = static_cast<U>(b);
  if constexpr (std::is_signed_v<I>) {
    if (a < 0) x = static_cast<U>(U(0) - x);
    if (b < 0) y = static_cast<U>(U(0) - y);
  }
  while (x != 0) {
    const U r = static_cast<U>(y % x);
    y = x;
    x = r;
  }
  return static_cast<I>(y);
}
// lcm(a, b) = |a / gcd(a, b) * b|, 0 where either is 0; the product wraps (Note [Defined integer
// semantics]).
template <typename I>
LG_HOST_DEVICE LG_INLINE I integer_lcm(I a, I b) {
  const I g = integer_gcd(a, b);
  if (g == 0) return 0;
  const I m = wrapping_mul(static_cast<I>(a / g), b);
  if constexpr (std::is_signed_v<I>) {
    if (m < 0) return wrapping_sub(I(0), m);
  }
  return m;
}
// a << b and a >> b, defined for every b (C leaves a shift by a negative count or by the width or
// more undefined): the left shift is 0 there and shifts the bits of the unsigned type (no signed
// overflow); the right shift is arithmetic and fills with the sign there (PyTorch 2's rule).
template <typename I>
LG_HOST_DEVICE LG_INLINE I integer_left_shift(I a, I b) {
  using U = std::make_unsigned_t<I>;
  constexpr I kWidth = static_cast<I>(sizeof(I) * 8);
  if (b >= kWidth) return 0;
  if constexpr (std::is_signed_v<I>) {
    if (b < 0) return 0;
  }
  return static_cast<I>(static_cast<U>(static_cast<U>(a) << b));
}
template <typename I>
LG_HOST_DEVICE LG_INLINE I integer_right_shift(I a, I b) {
  constexpr I kWidth = static_cast<I>(sizeof(I) * 8);
  if constexpr (std::is_signed_v<I>) {
    if (b < 0 || b >= kWidth) return a < 0 ? I(-1) : I(0);
  } else {
    if (b >= kWidth) return 0;
  }
  return static_cast<I>(a >> b);
}

// Calls f.template operator()<T>() for the element types binary op kOp is instantiated for, by
// the CPU and CUDA launchers alike: the floating ones for atan2, the integral ones for the
// bitwise ops, every numeric one otherwise.
template <BinaryOp kOp, typename F>
void dispatch_binary_dtype(DType dtype, F&& f) {
  if constexpr (is_floating_only(kOp)) {
    dispatch_floating(dtype, op_name(kOp), f);
  } else if constexpr (is_integral_only(kOp)) {
    dispatch_integral(dtype, op_name(kOp), f);
  } else {
    dispatch_numeric(dtype, op_name(kOp), f);
  }
}

// a op b in the math type M (float, double or an integer type; never bool).
template <BinaryOp op, typename M>
LG_HOST_DEVICE LG_ALWAYS_INLINE M binary_op_apply(M a, M b) {
  constexpr bool kIntegral = std::is_integral_v<M>;
  if constexpr (op == BinaryOp::Add) {
    if constexpr (kIntegral)
      return wrapping_add(a, b);
    else
      return a + b;
  } else if constexpr (op == BinaryOp::Sub) {
    if constexpr (kIntegral)
      return wrapping_sub(a, b);
    else
      return a - b;
  } else if constexpr (op == BinaryOp::Mul) {
    if constexpr (kIntegral)
      return wrapping_mul(a, b);
    else
      return a * b;
  } else if constexpr (op == BinaryOp::Div) {
    if constexpr (kIntegral)
      return integer_div(a, b);
    else
      return a / b;
  } else if constexpr (op == BinaryOp::Pow) {
    if constexpr (kIntegral)
      return integer_pow(a, b);
    else
      return std::pow(a, b);
  } else if constexpr (op == BinaryOp::Atan2) {
    static_assert(!kIntegral, "atan2 is defined for floating types only (see is_floating_only)");
#if !defined(__CUDA_ARCH__)
    if constexpr (std::is_same_v<M, float>)
      return cpu::atan2_polynomial(a, b);  // Note [Float polynomials]
#endif
    return std::atan2(a, b);
  } else if constexpr (op == BinaryOp::Zeta) {
    static_assert(!kIntegral, "zeta is defined for floating types only (see is_floating_only)");
    return static_cast<M>(special_math::zeta(a, b));  // in double (kernels/special_math.h)
  } else if constexpr (op == BinaryOp::Hypot) {
    static_assert(!kIntegral, "hypot is defined for floating types only (see is_floating_only)");
#if !defined(__CUDA_ARCH__)
    if constexpr (std::is_same_v<M, float>)
      return cpu::hypot_of_float(a, b);  // in double, in lanes (kernels/cpu/float_polynomials.h)
#endif
    return std::hypot(a, b);
  } else if constexpr (op == BinaryOp::Copysign) {
    static_assert(!kIntegral, "copysign is defined for floating types only");
    return std::copysign(a, b);
  } else if constexpr (op == BinaryOp::Nextafter) {
    // In M: float and double only (ops::binary refuses the 16-bit types, whose next value this
    // float would round back to a).
    static_assert(!kIntegral, "nextafter is defined for floating types only");
    return std::nextafter(a, b);
  } else if constexpr (op == BinaryOp::Igamma || op == BinaryOp::Igammac) {
    static_assert(!kIntegral, "igamma is defined for floating types only");
    return static_cast<M>(special_math::incomplete_gamma(a, b, op == BinaryOp::Igamma));
  } else if constexpr (op == BinaryOp::Fmax || op == BinaryOp::Fmin) {
    // Note [fmax and fmin pick a]
    //   a where a >= b (a <= b for fmin) or b is NaN, b elsewhere: the other operand where one
    //   is NaN, as std::fmax, and a of two equal ones, as torch.fmax (fmax(-0, +0) is -0). It is
    //   the mask autograd's fmax sends the gradient by. std::fmax leaves the sign of two zeros
    //   unspecified, and GCC's vectorised form and glibc's scalar one picked differently, so a
    //   contiguous loop and a strided or scalar one gave two answers; these selects compile to
    //   compares and a blend in every loop, on the GPU too.
    const bool a_wins = op == BinaryOp::Fmax ? a >= b : a <= b;
    return a_wins || is_nan(b) ? a : b;
  } else if constexpr (op == BinaryOp::Gcd || op == BinaryOp::Lcm || op == BinaryOp::LeftShift ||
                       op == BinaryOp::RightShift) {
    static_assert(kIntegral, "gcd, lcm and the shifts are defined for integral types only");
    if constexpr (op == BinaryOp::Gcd)
      return integer_gcd(a, b);
    else if constexpr (op == BinaryOp::Lcm)
      return integer_lcm(a, b);
    else if constexpr (op == BinaryOp::LeftShift)
      return integer_left_shift(a, b);
    else
      return integer_right_shift(a, b);
  } else if constexpr (op == BinaryOp::Remainder) {
    if constexpr (kIntegral)
      return integer_remainder(a, b);
    else
      return floating_remainder(a, b);
  } else if constexpr (op == BinaryOp::Fmod) {
    if constexpr (kIntegral)
      return integer_fmod(a, b);
    else
      return ::fmod(a, b);
  } else if constexpr (op == BinaryOp::FloorDivide) {
    if constexpr (kIntegral)
      return integer_floor_div(a, b);
    else
      return floating_floor_div(a, b);
  } else if constexpr (is_bitwise(op)) {
    static_assert(kIntegral, "the bitwise ops are defined for integral types only");
    if constexpr (op == BinaryOp::BitwiseAnd)
      return static_cast<M>(a & b);
    else if constexpr (op == BinaryOp::BitwiseOr)
      return static_cast<M>(a | b);
    else
      return static_cast<M>(a ^ b);
  } else if constexpr (op == BinaryOp::Maximum) {  // NaN wins, as torch.maximum
    if (is_nan(a)) return a;
    if (is_nan(b)) return b;
    return a > b ? a : b;
  } else {
    static_assert(op == BinaryOp::Minimum);
    if (is_nan(a)) return a;
    if (is_nan(b)) return b;
    return a < b ? a : b;
  }
}

template <BinaryOp op, typename T>
LG_HOST_DEVICE LG_ALWAYS_INLINE T binary_element(T a, T b) {
  return static_cast<T>(binary_op_apply<op>(to_opmath(a), to_opmath(b)));
}

// ---- Unary -----------------------------------------------------------------------------------

// The unary ops defined only for floating types (integral input is computed in float32, as
// PyTorch's integral-to-float promotion). The others (neg, abs, relu, sign and the four
// roundings) keep an integral dtype; the roundings are the identity on it.
constexpr bool is_floating_only(UnaryOp op) {
  switch (op) {
    case UnaryOp::Neg:
    case UnaryOp::Abs:
    case UnaryOp::Relu:
    case UnaryOp::Sign:
    case UnaryOp::Floor:
    case UnaryOp::Ceil:
    case UnaryOp::Round:
    case UnaryOp::Trunc:
      return false;
    default:
      return true;
  }
}

template <UnaryOp op, typename M>
LG_HOST_DEVICE LG_ALWAYS_INLINE M unary_op_apply(M a) {
  static_assert(!is_floating_only(op) || std::is_floating_point_v<M>,
                "this unary op is defined for floating types only (see is_floating_only)");
  if constexpr (op == UnaryOp::Neg) {
    if constexpr (std::is_integral_v<M>)
      return wrapping_sub(M(0), a);
    else
      return -a;
  } else if constexpr (op == UnaryOp::Abs) {
    if constexpr (std::is_unsigned_v<M>)
      return a;
    else if constexpr (std::is_integral_v<M>)
      return a < 0 ? wrapping_sub(M(0), a) : a;
    else
      return std::fabs(a);
  } else if constexpr (op == UnaryOp::Exp) {
#if !defined(__CUDA_ARCH__)
    if constexpr (std::is_same_v<M, float>)
      return cpu::exp_polynomial(a);  // Note [Polynomial exp on the CPU]
#endif
    return std::exp(a);
  } else if constexpr (op == UnaryOp::Log) {
#if !defined(__CUDA_ARCH__)
    if constexpr (std::is_same_v<M, float>)
      return cpu::log_polynomial(a);  // Note [Float polynomials]
#endif
    return std::log(a);
  } else if constexpr (op == UnaryOp::Sqrt) {
    return std::sqrt(a);
  } else if constexpr (op == UnaryOp::Tanh) {
#if !defined(__CUDA_ARCH__)
    if constexpr (std::is_same_v<M, float>)
      return cpu::tanh_polynomial(a);  // Note [Float polynomials]
#endif
    return std::tanh(a);
  } else if constexpr (op == UnaryOp::Sigmoid) {
    // Stable for large |a|: exp never sees a large positive argument. 1 / (1 + e^-a) for a >= 0,
    // e^a / (1 + e^a) below (and for NaN, which stays NaN), as selects (Note [Polynomial exp on
    // the CPU]).
    const bool positive = a >= M(0);
    const M e = unary_op_apply<UnaryOp::Exp>(positive ? -a : a);
    return (positive ? M(1) : e) / (M(1) + e);
  } else if constexpr (op == UnaryOp::Erf) {
#if !defined(__CUDA_ARCH__)
    if constexpr (std::is_same_v<M, float>)
      return cpu::erf_polynomial(a);  // Note [Float polynomials]
#endif
    return std::erf(a);
  } else if constexpr (op == UnaryOp::Expm1) {
#if !defined(__CUDA_ARCH__)
    if constexpr (std::is_same_v<M, float>)
      return cpu::expm1_polynomial(a);  // Note [Float polynomials]
#endif
    return std::expm1(a);  // exact near 0, where exp(a) - 1 cancels
  } else if constexpr (op == UnaryOp::Log1p) {
#if !defined(__CUDA_ARCH__)
    if constexpr (std::is_same_v<M, float>)
      return cpu::log1p_polynomial(a);  // Note [Float polynomials]
#endif
    return std::log1p(a);  // exact near 0, where log(1 + a) rounds a away
  } else if constexpr (op == UnaryOp::Sin) {
#if !defined(__CUDA_ARCH__)
    if constexpr (std::is_same_v<M, float>)
      return cpu::sin_polynomial(a);  // Note [Float polynomials]
#endif
    return std::sin(a);
  } else if constexpr (op == UnaryOp::Cos) {
#if !defined(__CUDA_ARCH__)
    if constexpr (std::is_same_v<M, float>)
      return cpu::cos_polynomial(a);  // Note [Float polynomials]
#endif
    return std::cos(a);
  } else if constexpr (op == UnaryOp::Rsqrt) {
    return M(1) / std::sqrt(a);
  } else if constexpr (op == UnaryOp::Reciprocal) {
    return M(1) / a;
  } else if constexpr (op == UnaryOp::Log2) {
#if !defined(__CUDA_ARCH__)
    if constexpr (std::is_same_v<M, float>)
      return cpu::log2_polynomial(a);  // Note [Float polynomials]
#endif
    return std::log2(a);
  } else if constexpr (op == UnaryOp::Log10) {
#if !defined(__CUDA_ARCH__)
    if constexpr (std::is_same_v<M, float>)
      return cpu::log10_polynomial(a);  // Note [Float polynomials]
#endif
    return std::log10(a);
  } else if constexpr (op == UnaryOp::Tan) {
#if !defined(__CUDA_ARCH__)
    if constexpr (std::is_same_v<M, float>)
      return cpu::tan_polynomial(a);  // Note [Float polynomials]
#endif
    return std::tan(a);
  } else if constexpr (op == UnaryOp::Asin) {
#if !defined(__CUDA_ARCH__)
    if constexpr (std::is_same_v<M, float>)
      return cpu::asin_polynomial(a);  // Note [Float polynomials]
#endif
    return std::asin(a);  // NaN outside [-1, 1]
  } else if constexpr (op == UnaryOp::Acos) {
#if !defined(__CUDA_ARCH__)
    if constexpr (std::is_same_v<M, float>)
      return cpu::acos_polynomial(a);  // Note [Float polynomials]
#endif
    return std::acos(a);
  } else if constexpr (op == UnaryOp::Atan) {
#if !defined(__CUDA_ARCH__)
    if constexpr (std::is_same_v<M, float>)
      return cpu::atan_polynomial(a);  // Note [Float polynomials]
#endif
    return std::atan(a);
  } else if constexpr (op == UnaryOp::Sinh) {
#if !defined(__CUDA_ARCH__)
    if constexpr (std::is_same_v<M, float>)
      return cpu::sinh_polynomial(a);  // Note [Float polynomials]
#endif
    return std::sinh(a);
  } else if constexpr (op == UnaryOp::Cosh) {
#if !defined(__CUDA_ARCH__)
    if constexpr (std::is_same_v<M, float>)
      return cpu::cosh_polynomial(a);  // Note [Float polynomials]
#endif
    return std::cosh(a);
  } else if constexpr (op == UnaryOp::Asinh) {
#if !defined(__CUDA_ARCH__)
    if constexpr (std::is_same_v<M, float>)
      return cpu::asinh_polynomial(a);  // Note [Float polynomials]
#endif
    return std::asinh(a);
  } else if constexpr (op == UnaryOp::Acosh) {
#if !defined(__CUDA_ARCH__)
    if constexpr (std::is_same_v<M, float>)
      return cpu::acosh_polynomial(a);  // Note [Float polynomials]
#endif
    return std::acosh(a);  // NaN below 1
  } else if constexpr (op == UnaryOp::Atanh) {
#if !defined(__CUDA_ARCH__)
    if constexpr (std::is_same_v<M, float>)
      return cpu::atanh_polynomial(a);  // Note [Float polynomials]
#endif
    return std::atanh(a);  // +-inf at +-1, NaN beyond
  } else if constexpr (op == UnaryOp::Exp2) {
    return std::exp2(a);
  } else if constexpr (op == UnaryOp::Lgamma) {  // in double (kernels/special_math.h)
    return static_cast<M>(special_math::lgamma(a));
  } else if constexpr (op == UnaryOp::Digamma) {
    return static_cast<M>(special_math::digamma(a));
  } else if constexpr (op == UnaryOp::Erfinv) {
    return static_cast<M>(special_math::erfinv(a));
  } else if constexpr (op == UnaryOp::Erfc) {  // in double, as the special functions below
#if !defined(__CUDA_ARCH__)
    if constexpr (std::is_same_v<M, float>)
      return cpu::erfc_polynomial(a);  // in double, in lanes (Note [Float polynomials])
#endif
    return static_cast<M>(std::erfc(static_cast<double>(a)));
  } else if constexpr (op == UnaryOp::Erfcx) {
    return static_cast<M>(special_math::erfcx(a));
  } else if constexpr (op == UnaryOp::Sinc) {
    return static_cast<M>(special_math::sinc(a));
  } else if constexpr (op == UnaryOp::I0 || op == UnaryOp::I0e) {
    return static_cast<M>(special_math::bessel_i0(a, op == UnaryOp::I0e));
  } else if constexpr (op == UnaryOp::I1 || op == UnaryOp::I1e) {
    return static_cast<M>(special_math::bessel_i1(a, op == UnaryOp::I1e));
  } else if constexpr (op == UnaryOp::Ndtri) {
    return static_cast<M>(special_math::ndtri(a));
  } else if constexpr (op == UnaryOp::BesselJ0) {
    return static_cast<M>(special_math::bessel_j0(a));
  } else if constexpr (op == UnaryOp::BesselJ1) {
    return static_cast<M>(special_math::bessel_j1(a));
  } else if constexpr (op == UnaryOp::BesselY0 || op == UnaryOp::BesselY1) {
    return static_cast<M>(special_math::bessel_y(op == UnaryOp::BesselY0 ? 0 : 1, a));
  } else if constexpr (op == UnaryOp::BesselK0 || op == UnaryOp::BesselK0e) {
    return static_cast<M>(special_math::bessel_k(0, a, op == UnaryOp::BesselK0e));
  } else if constexpr (op == UnaryOp::BesselK1 || op == UnaryOp::BesselK1e) {
    return static_cast<M>(special_math::bessel_k(1, a, op == UnaryOp::BesselK1e));
  } else if constexpr (op == UnaryOp::SphericalBesselJ0) {
    return static_cast<M>(special_math::spherical_bessel_j0(a));
  } else if constexpr (op == UnaryOp::AiryAi || op == UnaryOp::AiryAiPrime) {
    return static_cast<M>(special_math::airy(a, op == UnaryOp::AiryAiPrime));
  } else if constexpr (op == UnaryOp::FrexpMantissa || op == UnaryOp::FrexpExponent) {
    // In double, exact: every floating dtype's values and exponents are doubles. An infinity or
    // NaN is its own mantissa with exponent 0 (libm's, as PyTorch's).
    int e = 0;
    const double m = std::frexp(static_cast<double>(a), &e);
    return static_cast<M>(op == UnaryOp::FrexpMantissa ? m : static_cast<double>(e));
  } else if constexpr (op == UnaryOp::Sign) {
    // PyTorch's (0 < a) - (a < 0): sign(NaN) and sign(-0.0) are +0.
    if constexpr (std::is_unsigned_v<M>)
      return static_cast<M>(a != M(0));
    else
      return static_cast<M>(static_cast<int>(M(0) < a) - static_cast<int>(a < M(0)));
  } else if constexpr (op == UnaryOp::Floor || op == UnaryOp::Ceil || op == UnaryOp::Round ||
                       op == UnaryOp::Trunc) {
    if constexpr (std::is_integral_v<M>) {
      return a;
    } else if constexpr (op == UnaryOp::Floor) {
      return std::floor(a);
    } else if constexpr (op == UnaryOp::Ceil) {
      return std::ceil(a);
    } else if constexpr (op == UnaryOp::Round) {
      return std::nearbyint(a);  // halves to even, as PyTorch (the default rounding mode)
    } else {
      return std::trunc(a);
    }
  } else {
    static_assert(op == UnaryOp::Relu);
    if constexpr (std::is_unsigned_v<M>)
      return a;
    else
      return a < M(0) ? M(0) : a;  // NaN < 0 is false: relu(NaN) == NaN
  }
}

template <UnaryOp op, typename T>
LG_HOST_DEVICE LG_ALWAYS_INLINE T unary_element(T a) {
  return static_cast<T>(unary_op_apply<op>(to_opmath(a)));
}

// ---- pow with a scalar exponent ---------------------------------------------------------------
// Note [pow with a scalar exponent]
//   pow(x, e) of a scalar e takes PyTorch's shortcuts (its CPU pow_tensor_scalar kernel) for
//   float32, float64 and bfloat16: e = 2 is x * x, 3 is x * x * x, -2 is 1 / (x * x), 0.5 is
//   sqrt(x), -0.5 is rsqrt(x) and -1 is 1 / x; any other e is std::pow. In the math type, then
//   rounded to the dtype once, as every elementwise op (PyTorch rounds bfloat16's x * x to
//   bfloat16 before the third factor). So values are PyTorch's: x^3 two roundings (within about
//   2 ulps), not std::pow's; sqrt(-0) = -0 and sqrt(-inf) = NaN where pow(-0, 0.5) = +0 and
//   pow(-inf, 0.5) = +inf. x * x and 1 / x equal std::pow's correctly rounded results. float16
//   keeps std::pow for every e, as PyTorch's CPU kernel does (pow(-0, 0.5) = +0 there), but for
//   e = 2 on the CPU: a float16's x * x is exact in float (11 significant bits squared), so it is
//   std::pow's result too (glibc's powf is within 1 ulp, and the only float within 1 ulp of a
//   float is itself), rounded to float16 the same, where the call per element made the square of
//   4M float16s 58 times slower than float32's. (CUDA's float16 pow keeps powf: within 2 ulps.) The
//   launchers choose the kind once per call, so the CPU loop runs one of these in SIMD lanes
//   where the C library's pow took one call per element (pow(x, 3) and its backward's pow(x, 2)).
//   An integral x keeps integer_pow whatever e is.
enum class PowExponent : std::uint8_t {
  Other,
  Square,
  Cube,
  InverseSquare,
  Sqrt,
  Rsqrt,
  Reciprocal
};

constexpr PowExponent pow_exponent_kind(double e) {
  if (e == 2.0) return PowExponent::Square;
  if (e == 3.0) return PowExponent::Cube;
  if (e == -2.0) return PowExponent::InverseSquare;
  if (e == 0.5) return PowExponent::Sqrt;
  if (e == -0.5) return PowExponent::Rsqrt;
  if (e == -1.0) return PowExponent::Reciprocal;
  return PowExponent::Other;
}

// Whether pow of a T by a scalar takes the shortcuts.
template <typename T>
inline constexpr bool kPowScalarShortcuts =
    std::is_floating_point_v<opmath_t<T>> && !std::is_same_v<T, Half>;

// x^e for a floating math type M, e of the given kind (e itself is used only for Other).
template <PowExponent kind, typename M>
LG_HOST_DEVICE LG_ALWAYS_INLINE M pow_scalar_apply(M x, M e) {
  static_assert(std::is_floating_point_v<M>, "an integral base takes integer_pow");
  if constexpr (kind == PowExponent::Square) {
    return x * x;
  } else if constexpr (kind == PowExponent::Cube) {
    return x * x * x;
  } else if constexpr (kind == PowExponent::InverseSquare) {
    return M(1) / (x * x);
  } else if constexpr (kind == PowExponent::Sqrt) {
    return unary_op_apply<UnaryOp::Sqrt>(x);
  } else if constexpr (kind == PowExponent::Rsqrt) {
    return unary_op_apply<UnaryOp::Rsqrt>(x);
  } else if constexpr (kind == PowExponent::Reciprocal) {
    return unary_op_apply<UnaryOp::Reciprocal>(x);
  } else {
    return binary_op_apply<BinaryOp::Pow>(x, e);
  }
}

// The same, the kind a run-time value (a CUDA thread's uniform branch).
template <typename M>
LG_HOST_DEVICE LG_INLINE M pow_scalar_apply(M x, M e, PowExponent kind) {
  switch (kind) {
    case PowExponent::Square:
      return pow_scalar_apply<PowExponent::Square>(x, e);
    case PowExponent::Cube:
      return pow_scalar_apply<PowExponent::Cube>(x, e);
    case PowExponent::InverseSquare:
      return pow_scalar_apply<PowExponent::InverseSquare>(x, e);
    case PowExponent::Sqrt:
      return pow_scalar_apply<PowExponent::Sqrt>(x, e);
    case PowExponent::Rsqrt:
      return pow_scalar_apply<PowExponent::Rsqrt>(x, e);
    case PowExponent::Reciprocal:
      return pow_scalar_apply<PowExponent::Reciprocal>(x, e);
    case PowExponent::Other:
      break;
  }
  return pow_scalar_apply<PowExponent::Other>(x, e);
}

// ---- Compare ---------------------------------------------------------------------------------

// IEEE semantics: every comparison with NaN is false except Ne.
template <CompareOp op, typename M>
LG_HOST_DEVICE LG_ALWAYS_INLINE bool compare_op_apply(M a, M b) {
  if constexpr (op == CompareOp::Gt)
    return a > b;
  else if constexpr (op == CompareOp::Lt)
    return a < b;
  else if constexpr (op == CompareOp::Ge)
    return a >= b;
  else if constexpr (op == CompareOp::Le)
    return a <= b;
  else if constexpr (op == CompareOp::Eq)
    return a == b;
  else
    return a != b;
}

template <CompareOp op, typename T>
LG_HOST_DEVICE LG_ALWAYS_INLINE bool compare_element(T a, T b) {
  return compare_op_apply<op>(to_opmath(a), to_opmath(b));
}

// ---- Fused activations (ops::activation_, and ops::activation out of place) --------------------
// One pass each, bitwise the composition of elementwise ops written beside each (which
// autograd/activations.cpp computed before it ran these kernels out of place too; the test of
// the in-place kernels still composes it): the same comparisons (with the scalar rounded to T, as
// compare with a scalar), the same math in opmath_t<T>, and a rounding to T wherever a composed op
// stores its result (so float16 and bfloat16 round where the composition rounds, not only at the
// end).

// leaky_relu: where(x > 0, x, x * negative_slope).
template <typename T>
struct LeakyReluElement {
  opmath_t<T> negative_slope;  // converted as a binary op's scalar
  LG_HOST_DEVICE T operator()(T x) const {
    const opmath_t<T> m = to_opmath(x);
    return m > opmath_t<T>(0) ? x : static_cast<T>(m * negative_slope);
  }
};

// elu: where(x > 0, x, expm1(clamp_max(x, 0)) * alpha), for x <= 0 (or NaN) clamp_max(x, 0) is
// x; selu is that times scale (scale 1: elu, nothing multiplied).
template <typename T>
struct EluElement {
  opmath_t<T> alpha;
  opmath_t<T> scale;
  LG_HOST_DEVICE T operator()(T x) const {
    const T elu = to_opmath(x) > opmath_t<T>(0)
                      ? x
                      : static_cast<T>(to_opmath(unary_element<UnaryOp::Expm1>(x)) * alpha);
    return scale == opmath_t<T>(1) ? elu : static_cast<T>(to_opmath(elu) * scale);
  }
};

// hardtanh: masked_fill(masked_fill(x, x >= max_val, max_val), that <= min_val, min_val), the
// bounds rounded to T (as fill_ and a compare with a scalar round them). NaN stays NaN.
template <typename T>
struct HardtanhElement {
  T min_val;
  T max_val;
  LG_HOST_DEVICE T operator()(T x) const {
    const T upper = to_opmath(x) >= to_opmath(max_val) ? max_val : x;
    return to_opmath(upper) <= to_opmath(min_val) ? min_val : upper;
  }
};

// clamp: where(x < min, min, x), then where(that > max, max, that), the bounds rounded to T (as
// scalar_like rounds them). A floating x is compared in opmath_t<T> with the bound rounded to T,
// as compare with a scalar does; an integral x in int64 with the (integral) bound itself, so
// exactly, as compare does for a bound that fits int64 (-1 is below every uint8; the bound
// written is then -1 converted, 255). An absent bound compares false, as a NaN bound does.
template <typename T>
struct ClampElement {
  using Compare = std::conditional_t<is_floating_type_v<T>, opmath_t<T>, std::int64_t>;
  T min_val;
  T max_val;
  Compare min_compared;
  Compare max_compared;
  bool has_min;
  bool has_max;
  LG_HOST_DEVICE static Compare compared(T x) {
    if constexpr (is_floating_type_v<T>) {
      return to_opmath(x);
    } else {
      return static_cast<std::int64_t>(x);
    }
  }
  LG_HOST_DEVICE T operator()(T x) const {
    const T lower = has_min && compared(x) < min_compared ? min_val : x;
    return has_max && compared(lower) > max_compared ? max_val : lower;
  }
};

// ClampElement for ops::activation_'s p0 (min) and p1 (max), NaN standing for an absent bound.
// Host code.
template <typename T>
ClampElement<T> make_clamp_element(double min, double max) {
  ClampElement<T> e{};
  e.has_min = !std::isnan(min);
  e.has_max = !std::isnan(max);
  e.min_val = e.has_min ? cast_value<T>(min) : T(0);
  e.max_val = e.has_max ? cast_value<T>(max) : T(0);
  if constexpr (is_floating_type_v<T>) {
    e.min_compared = to_opmath(e.min_val);
    e.max_compared = to_opmath(e.max_val);
  } else {
    e.min_compared = e.has_min ? float_to_int64(min) : 0;
    e.max_compared = e.has_max ? float_to_int64(max) : 0;
  }
  return e;
}

// ---- Activations in one rounding (ops::activation, ops::activation_backward) ----------------
// gelu (exact and tanh forms), silu, mish, softplus, smooth_l1's and huber's function of a
// difference, and hardswish, hardsigmoid, log_sigmoid, softsign, tanhshrink, celu, softshrink,
// hardshrink and threshold (below): y = f(x) and dx = g f'(x), each computed in
// opmath_t<T> and rounded once to T, with PyTorch's formulas (its GeluKernel and
// GeluBackwardKernel, silu_kernel and silu_backward_kernel, mish_kernel and mish_backward_kernel,
// softplus_kernel and softplus_backward_kernel; mish's tanh(softplus(x)) and softplus itself in
// fewer steps or without overflow, and gelu's distribution function without cancellation, below),
// so float32 results are PyTorch's up to a few ulps (gelu's of negative x closer to the exact value
// than PyTorch's). ActivationMath<op>::value is f, ::gradient is g f'(x). leaky_relu, elu (selu:
// scale != 1) and hardtanh have only a gradient here, PyTorch's leaky_relu_backward, elu_backward
// and hardtanh_backward: their values are the in-place elements above, which round where the
// compositions of autograd/activations.cpp's in-place ops round.

// An activation's two parameters in its math type: softplus's beta and threshold, elu's alpha and
// scale, leaky_relu's negative_slope, hardtanh's min_val and max_val, smooth_l1's beta and
// huber's delta (p0); the others take none.
template <typename M>
struct ActivationParams {
  M p0;
  M p1;
};

// The parameters in float, for the float math of the CPU's float16 loop (exact: opmath_t<Half> is
// float; never called for float64).
template <typename M>
LG_HOST_DEVICE LG_ALWAYS_INLINE ActivationParams<float> float_params(ActivationParams<M> p) {
  return {static_cast<float>(p.p0), static_cast<float>(p.p1)};
}

template <ActivationOp op>
struct ActivationMath;

template <>
struct ActivationMath<ActivationOp::Gelu> {  // x Phi(x), Phi(x) = erfc(-x / sqrt 2) / 2
  // Phi from erfc rather than PyTorch's (1 + erf(x / sqrt 2)) / 2, which cancels for negative x
  // (100 ulps at x = -3). float on the CPU: from one exp (Note [Float polynomials]).
  template <typename M>
  LG_HOST_DEVICE LG_ALWAYS_INLINE static M value(M x, ActivationParams<M> /*none*/) {
#if !defined(__CUDA_ARCH__)
    if constexpr (std::is_same_v<M, float>) return cpu::gelu_polynomial(x);
#endif
    return x * (M(0.5) * std::erfc(x * M(-0.70710678118654752440)));
  }
  template <typename M>
  LG_HOST_DEVICE LG_ALWAYS_INLINE static M gradient(M g, M x, ActivationParams<M> /*none*/) {
#if !defined(__CUDA_ARCH__)
    if constexpr (std::is_same_v<M, float>) return cpu::gelu_gradient_polynomial(g, x);
#endif
    const M cdf = M(0.5) * std::erfc(x * M(-0.70710678118654752440));
    const M pdf = M(0.39894228040143267794) * unary_op_apply<UnaryOp::Exp>(x * x * M(-0.5));
    return g * (cdf + x * pdf);  // Phi(x) + x phi(x)
  }
};

template <>
struct ActivationMath<ActivationOp::GeluTanh> {  // x/2 (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
  static constexpr double kBeta = 0.79788456080286535588;  // sqrt(2 / pi)
  static constexpr double kKappa = 0.044715;
  template <typename M>
  LG_HOST_DEVICE LG_ALWAYS_INLINE static M value(M x, ActivationParams<M> /*none*/) {
    const M inner = M(kBeta) * (x + M(kKappa) * x * x * x);
    return M(0.5) * x * (M(1) + unary_op_apply<UnaryOp::Tanh>(inner));
  }
  template <typename M>
  LG_HOST_DEVICE LG_ALWAYS_INLINE static M gradient(M g, M x, ActivationParams<M> /*none*/) {
    const M x_sq = x * x;
    const M inner = M(kBeta) * (x + M(kKappa) * x_sq * x);
    const M t = unary_op_apply<UnaryOp::Tanh>(inner);
    const M left_derivative = M(0.5) * (M(1) + t);
    const M right_derivative = (M(1) - t * t) * M(kBeta) * (M(1) + M(3 * kKappa) * x_sq);
    return g * (left_derivative + M(0.5) * x * right_derivative);
  }
};

template <>
struct ActivationMath<ActivationOp::Silu> {  // x sigmoid(x)
  template <typename M>
  LG_HOST_DEVICE LG_ALWAYS_INLINE static M value(M x, ActivationParams<M> /*none*/) {
    return x * unary_op_apply<UnaryOp::Sigmoid>(x);
  }
  template <typename M>
  LG_HOST_DEVICE LG_ALWAYS_INLINE static M gradient(M g, M x, ActivationParams<M> /*none*/) {
    const M s = unary_op_apply<UnaryOp::Sigmoid>(x);
    return g * (s * (M(1) + x * (M(1) - s)));  // s (1 + x (1 - s))
  }
};

template <>
struct ActivationMath<ActivationOp::Mish> {  // x tanh(softplus(x)), softplus = log(1 + e^x)
  // tanh(log(1 + n)) with n = e^x is ((1 + n)^2 - 1) / ((1 + n)^2 + 1) = u / (u + 2), u = n (n +
  // 2): one exp and a division where PyTorch's tanh(log1p(exp(x))) takes three functions (2.5 times
  // the time on the CPU), and no cancellation (u and u + 2 are sums of positive terms). Above
  // x = 20 the value rounds to 1 in float and double; NaN stays NaN.
  template <typename M>
  LG_HOST_DEVICE LG_ALWAYS_INLINE static M tanh_softplus(M x) {
    const M n = unary_op_apply<UnaryOp::Exp>(x > M(20) ? M(20) : x);
    const M u = n * (n + M(2));
    return x > M(20) ? M(1) : u / (u + M(2));
  }
  template <typename M>
  LG_HOST_DEVICE LG_ALWAYS_INLINE static M value(M x, ActivationParams<M> /*none*/) {
    return x * tanh_softplus(x);
  }
  template <typename M>
  LG_HOST_DEVICE LG_ALWAYS_INLINE static M gradient(M g, M x, ActivationParams<M> /*none*/) {
    const M t = tanh_softplus(x);  // f' = t + x sigmoid(x) (1 - t^2)
    return g * (t + x * unary_op_apply<UnaryOp::Sigmoid>(x) * (M(1) - t * t));
  }
};

template <>
struct ActivationMath<ActivationOp::Softplus> {  // z > threshold ? x : log(1 + e^z) / beta
  // z = beta x. log(1 + e^z) = max(z, 0) + log1p(e^-|z|): no overflow for any threshold, where
  // PyTorch's log1p(exp(z)) is infinite above z = 88 in float (a threshold above that gives
  // infinity there). NaN fails z > threshold and stays NaN.
  template <typename M>
  LG_HOST_DEVICE LG_ALWAYS_INLINE static M value(M x, ActivationParams<M> p) {
    const M z = x * p.p0;
    const M smooth = (z > M(0) ? z : M(0)) + unary_op_apply<UnaryOp::Log1p>(
                                                 unary_op_apply<UnaryOp::Exp>(z > M(0) ? -z : z));
    return z > p.p1 ? x : smooth / p.p0;
  }
  template <typename M>
  LG_HOST_DEVICE LG_ALWAYS_INLINE static M gradient(M g, M x, ActivationParams<M> p) {
    const M z = x * p.p0;  // f' = sigmoid(z) below the threshold, 1 above
    return z > p.p1 ? g : g * unary_op_apply<UnaryOp::Sigmoid>(z);
  }
};

// smooth_l1_loss's and huber_loss's elementwise functions of d = input - target, PyTorch's
// smooth_l1_kernel, huber_kernel and their backward kernels, with their operations in their order:
// one pass each way, where the loss composed of abs, compares, products and a select took eight
// over memory each way (and rounded a 16-bit value at each). |d| = beta takes the linear side,
// whose slope is the quadratic's there (+-1, +-delta). A NaN d fails every compare: NaN value,
// NaN gradient (d g / beta, d g), as PyTorch's.
template <>
struct ActivationMath<ActivationOp::SmoothL1> {  // beta > 0
  template <typename M>
  LG_HOST_DEVICE LG_ALWAYS_INLINE static M value(M d, ActivationParams<M> p) {
    const M z = unary_op_apply<UnaryOp::Abs>(d);
    return z < p.p0 ? M(0.5) * z * z / p.p0 : z - M(0.5) * p.p0;
  }
  template <typename M>
  LG_HOST_DEVICE LG_ALWAYS_INLINE static M gradient(M g, M d, ActivationParams<M> p) {
    return d <= -p.p0 ? -g : (d >= p.p0 ? g : d * g / p.p0);
  }
};

template <>
struct ActivationMath<ActivationOp::Huber> {  // delta > 0
  template <typename M>
  LG_HOST_DEVICE LG_ALWAYS_INLINE static M value(M d, ActivationParams<M> p) {
    const M z = unary_op_apply<UnaryOp::Abs>(d);
    return z < p.p0 ? M(0.5) * z * z : p.p0 * (z - M(0.5) * p.p0);
  }
  template <typename M>
  LG_HOST_DEVICE LG_ALWAYS_INLINE static M gradient(M g, M d, ActivationParams<M> p) {
    return d <= -p.p0 ? -g * p.p0 : (d >= p.p0 ? g * p.p0 : d * g);
  }
};

// hardswish, hardsigmoid, log_sigmoid, softsign, tanhshrink, celu, softshrink, hardshrink and
// threshold: PyTorch's hardswish_kernel, hardsigmoid_kernel, log_sigmoid_cpu_kernel, elu_kernel
// (celu is elu with input_scale 1 / alpha), softshrink_kernel, shrink_backward_kernel and
// threshold_kernel and their backward kernels, in their operations and order; softsign and
// tanhshrink, which PyTorch composes of elementwise ops (x / (1 + |x|), x - tanh(x)), and their
// gradients in closed form. A NaN x gives NaN (value and gradient) where PyTorch's does; the
// selects that a NaN fails (threshold's x <= threshold, the shrinks' bounds) take PyTorch's side.
template <>
struct ActivationMath<ActivationOp::Hardswish> {  // x relu6(x + 3) / 6
  template <typename M>
  LG_HOST_DEVICE LG_ALWAYS_INLINE static M value(M x, ActivationParams<M> /*none*/) {
    const M shifted = x + M(3);
    const M clipped = shifted < M(0) ? M(0) : (shifted > M(6) ? M(6) : shifted);
    return x * clipped / M(6);
  }
  // 0 below -3, x / 3 + 1/2 on [-3, 3), 1 from 3 up: the sides of PyTorch's vectorised CPU kernel,
  // which computes nearly every element (its scalar tail and its CUDA kernel take 3/2 at 3).
  template <typename M>
  LG_HOST_DEVICE LG_ALWAYS_INLINE static M gradient(M g, M x, ActivationParams<M> /*none*/) {
    return x < M(-3) ? M(0) : (x < M(3) ? g * (x / M(3) + M(0.5)) : g);
  }
};

template <>
struct ActivationMath<ActivationOp::Hardsigmoid> {  // relu6(x + 3) / 6
  template <typename M>
  LG_HOST_DEVICE LG_ALWAYS_INLINE static M value(M x, ActivationParams<M> /*none*/) {
    const M shifted = x + M(3);
    return (shifted < M(0) ? M(0) : (shifted > M(6) ? M(6) : shifted)) / M(6);
  }
  // 1/6 strictly inside (-3, 3), 0 at and beyond the bounds.
  template <typename M>
  LG_HOST_DEVICE LG_ALWAYS_INLINE static M gradient(M g, M x, ActivationParams<M> /*none*/) {
    return x > M(-3) && x < M(3) ? g * M(1.0 / 6.0) : M(0);
  }
};

template <>
struct ActivationMath<ActivationOp::LogSigmoid> {  // min(x, 0) - log1p(e^-|x|): no overflow
  template <typename M>
  LG_HOST_DEVICE LG_ALWAYS_INLINE static M value(M x, ActivationParams<M> /*none*/) {
    const M z = unary_op_apply<UnaryOp::Exp>(-unary_op_apply<UnaryOp::Abs>(x));
    return (x < M(0) ? x : M(0)) - unary_op_apply<UnaryOp::Log1p>(z);
  }
  // 1 - sigmoid(x) = sigmoid(-x): (x < 0 ? 1 : 0) - (x < 0 ? 1 : -1) z / (1 + z), z = e^-|x|.
  template <typename M>
  LG_HOST_DEVICE LG_ALWAYS_INLINE static M gradient(M g, M x, ActivationParams<M> /*none*/) {
    const M z = unary_op_apply<UnaryOp::Exp>(-unary_op_apply<UnaryOp::Abs>(x));
    const bool negative = x < M(0);
    return g * ((negative ? M(1) : M(0)) - (negative ? M(1) : M(-1)) * (z / (M(1) + z)));
  }
};

template <>
struct ActivationMath<ActivationOp::Softsign> {  // x / (1 + |x|)
  template <typename M>
  LG_HOST_DEVICE LG_ALWAYS_INLINE static M value(M x, ActivationParams<M> /*none*/) {
    return x / (unary_op_apply<UnaryOp::Abs>(x) + M(1));
  }
  template <typename M>
  LG_HOST_DEVICE LG_ALWAYS_INLINE static M gradient(M g, M x, ActivationParams<M> /*none*/) {
    const M d = unary_op_apply<UnaryOp::Abs>(x) + M(1);  // 1 / (1 + |x|)^2
    return g / (d * d);
  }
};

template <>
struct ActivationMath<ActivationOp::Tanhshrink> {  // x - tanh(x)
  template <typename M>
  LG_HOST_DEVICE LG_ALWAYS_INLINE static M value(M x, ActivationParams<M> /*none*/) {
    return x - unary_op_apply<UnaryOp::Tanh>(x);
  }
  template <typename M>
  LG_HOST_DEVICE LG_ALWAYS_INLINE static M gradient(M g, M x, ActivationParams<M> /*none*/) {
    const M t = unary_op_apply<UnaryOp::Tanh>(x);  // 1 - (1 - t^2)
    return g * (t * t);
  }
};

template <>
struct ActivationMath<ActivationOp::Celu> {  // alpha: x > 0 ? x : alpha expm1(x / alpha)
  template <typename M>
  LG_HOST_DEVICE LG_ALWAYS_INLINE static M value(M x, ActivationParams<M> p) {
    return x > M(0) ? x : p.p0 * unary_op_apply<UnaryOp::Expm1>(x * (M(1) / p.p0));
  }
  // e^(x / alpha) at x <= 0 (PyTorch's elu_backward: input_scale alpha e^(x input_scale)), 1 above
  // (NaN included).
  template <typename M>
  LG_HOST_DEVICE LG_ALWAYS_INLINE static M gradient(M g, M x, ActivationParams<M> p) {
    const M input_scale = M(1) / p.p0;
    const M negative_side =
        input_scale * p.p0 * unary_op_apply<UnaryOp::Exp>((x <= M(0) ? x : M(0)) * input_scale);
    return x <= M(0) ? g * negative_side : g;
  }
};

template <>
struct ActivationMath<ActivationOp::Softshrink> {  // lambda, rounded to T
  template <typename M>
  LG_HOST_DEVICE LG_ALWAYS_INLINE static M value(M x, ActivationParams<M> p) {
    return x > p.p0 ? x - p.p0 : (x < -p.p0 ? x + p.p0 : x * M(0));  // NaN * 0: NaN
  }
  template <typename M>
  LG_HOST_DEVICE LG_ALWAYS_INLINE static M gradient(M g, M x, ActivationParams<M> p) {
    return x >= -p.p0 && x <= p.p0 ? M(0) : g;
  }
};

template <>
struct ActivationMath<ActivationOp::Hardshrink> {  // lambda, rounded to T
  template <typename M>
  LG_HOST_DEVICE LG_ALWAYS_INLINE static M value(M x, ActivationParams<M> p) {
    return x >= -p.p0 && x <= p.p0 ? M(0) : x;
  }
  template <typename M>
  LG_HOST_DEVICE LG_ALWAYS_INLINE static M gradient(M g, M x, ActivationParams<M> p) {
    return x >= -p.p0 && x <= p.p0 ? M(0) : g;
  }
};

template <>
struct ActivationMath<ActivationOp::Threshold> {  // threshold, value, rounded to T
  template <typename M>
  LG_HOST_DEVICE LG_ALWAYS_INLINE static M value(M x, ActivationParams<M> p) {
    return x <= p.p0 ? p.p1 : x;
  }
  template <typename M>
  LG_HOST_DEVICE LG_ALWAYS_INLINE static M gradient(M g, M x, ActivationParams<M> p) {
    return x <= p.p0 ? M(0) : g;
  }
};

template <>
struct ActivationMath<ActivationOp::LeakyRelu> {  // negative_slope
  template <typename M>
  LG_HOST_DEVICE LG_ALWAYS_INLINE static M gradient(M g, M x, ActivationParams<M> p) {
    return x > M(0) ? g : g * p.p0;
  }
};

template <>
struct ActivationMath<ActivationOp::Elu> {  // alpha, scale: f' = scale alpha e^x at x <= 0
  // scale elsewhere, NaN included (PyTorch's elu_backward tests x <= 0).
  template <typename M>
  LG_HOST_DEVICE LG_ALWAYS_INLINE static M gradient(M g, M x, ActivationParams<M> p) {
    const M negative_side = p.p1 * p.p0 * unary_op_apply<UnaryOp::Exp>(x <= M(0) ? x : M(0));
    return x <= M(0) ? g * negative_side : g * p.p1;
  }
};

template <>
struct ActivationMath<ActivationOp::EluResult> {  // alpha, scale; the "x" is the output y
  // From y = scale alpha (e^x - 1) at x <= 0: f' = scale alpha e^x = y + scale alpha there, scale
  // elsewhere (PyTorch's elu_backward with is_result; y <= 0 exactly where x <= 0 for alpha >= 0,
  // which the in-place ops require). NaN takes scale, as the out-of-place gradient.
  template <typename M>
  LG_HOST_DEVICE LG_ALWAYS_INLINE static M gradient(M g, M y, ActivationParams<M> p) {
    return y <= M(0) ? g * (y + p.p1 * p.p0) : g * p.p1;
  }
};

template <>
struct ActivationMath<ActivationOp::Hardtanh> {  // min_val, max_val, rounded to T
  // 0 at and beyond the bounds, selected (an infinite g gives 0, as PyTorch's); NaN passes g.
  template <typename M>
  LG_HOST_DEVICE LG_ALWAYS_INLINE static M gradient(M g, M x, ActivationParams<M> p) {
    return x <= p.p0 || x >= p.p1 ? M(0) : g;
  }
};

template <>
struct ActivationMath<ActivationOp::Clamp> {  // min, max, rounded to T; NaN for an absent bound
  // g where min <= x <= max, bounds included, 0 elsewhere, selected: clamp()'s where-composition
  // routes g so, and PyTorch's clamp_backward masks so. A NaN x gets 0 (the mask is false for it),
  // an absent bound admits every x.
  template <typename M>
  LG_HOST_DEVICE LG_ALWAYS_INLINE static M gradient(M g, M x, ActivationParams<M> p) {
    return !(x < p.p0) && !(x > p.p1) && x == x ? g : M(0);
  }
};

// Whether `op` has a value in ActivationMath (ops::activation computes the others with their
// in-place elements; ops::activation_ takes only those): all but the five below.
constexpr bool is_one_rounding_activation(ActivationOp op) {
  switch (op) {
    case ActivationOp::LeakyRelu:
    case ActivationOp::Elu:
    case ActivationOp::EluResult:
    case ActivationOp::Hardtanh:
    case ActivationOp::Clamp:
      return false;
    default:
      return true;
  }
}

// `op`'s parameters p0 and p1 in opmath_t<T>: as a binary op's scalars, but hardtanh's and
// clamp's bounds rounded to T first (as masked_fill and a compare with a scalar round them; a NaN,
// clamp's absent bound, stays NaN). Host code.
template <typename T>
ActivationParams<opmath_t<T>> make_activation_params(ActivationOp op, double p0, double p1) {
  using M = opmath_t<T>;
  if (op == ActivationOp::Hardtanh || op == ActivationOp::Clamp || op == ActivationOp::Softshrink ||
      op == ActivationOp::Hardshrink || op == ActivationOp::Threshold) {
    return {to_opmath(cast_value<T>(p0)), to_opmath(cast_value<T>(p1))};
  }
  return {cast_value<M>(p0), cast_value<M>(p1)};
}

// y = f(x), rounded once. `math` is the float function the CPU's float16 loop runs.
template <ActivationOp op, typename T>
struct OneRoundingActivationElement {
  ActivationParams<opmath_t<T>> params;
  LG_HOST_DEVICE LG_ALWAYS_INLINE T operator()(T x) const {
    return static_cast<T>(ActivationMath<op>::value(to_opmath(x), params));
  }
  LG_HOST_DEVICE LG_ALWAYS_INLINE float math(float x) const {
    return ActivationMath<op>::value(x, float_params(params));
  }
};

// dx = g f'(x), rounded once.
template <ActivationOp op, typename T>
struct ActivationBackwardElement {
  ActivationParams<opmath_t<T>> params;
  LG_HOST_DEVICE LG_ALWAYS_INLINE T operator()(T g, T x) const {
    return static_cast<T>(ActivationMath<op>::gradient(to_opmath(g), to_opmath(x), params));
  }
  LG_HOST_DEVICE LG_ALWAYS_INLINE float math(float g, float x) const {
    return ActivationMath<op>::gradient(g, x, float_params(params));
  }
};

// Calls f.template operator()<kOp>() for a one-rounding activation op. Host code.
template <typename F>
void with_one_rounding_activation(ActivationOp op, F&& f) {
  switch (op) {
    case ActivationOp::Gelu:
      return f.template operator()<ActivationOp::Gelu>();
    case ActivationOp::GeluTanh:
      return f.template operator()<ActivationOp::GeluTanh>();
    case ActivationOp::Silu:
      return f.template operator()<ActivationOp::Silu>();
    case ActivationOp::Mish:
      return f.template operator()<ActivationOp::Mish>();
    case ActivationOp::Softplus:
      return f.template operator()<ActivationOp::Softplus>();
    case ActivationOp::SmoothL1:
      return f.template operator()<ActivationOp::SmoothL1>();
    case ActivationOp::Huber:
      return f.template operator()<ActivationOp::Huber>();
    case ActivationOp::Hardswish:
      return f.template operator()<ActivationOp::Hardswish>();
    case ActivationOp::Hardsigmoid:
      return f.template operator()<ActivationOp::Hardsigmoid>();
    case ActivationOp::LogSigmoid:
      return f.template operator()<ActivationOp::LogSigmoid>();
    case ActivationOp::Softsign:
      return f.template operator()<ActivationOp::Softsign>();
    case ActivationOp::Tanhshrink:
      return f.template operator()<ActivationOp::Tanhshrink>();
    case ActivationOp::Celu:
      return f.template operator()<ActivationOp::Celu>();
    case ActivationOp::Softshrink:
      return f.template operator()<ActivationOp::Softshrink>();
    case ActivationOp::Hardshrink:
      return f.template operator()<ActivationOp::Hardshrink>();
    case ActivationOp::Threshold:
      return f.template operator()<ActivationOp::Threshold>();
    default:
      break;
  }
  LG_THROW(Error, "ActivationOp ", static_cast<int>(op), " is not a one-rounding activation");
}

// Calls f.template operator()<kOp>() for `op`, whose gradient ActivationMath has (every op's).
// Host code.
template <typename F>
void with_activation_gradient(ActivationOp op, F&& f) {
  switch (op) {
    case ActivationOp::LeakyRelu:
      return f.template operator()<ActivationOp::LeakyRelu>();
    case ActivationOp::Elu:
      return f.template operator()<ActivationOp::Elu>();
    case ActivationOp::EluResult:
      return f.template operator()<ActivationOp::EluResult>();
    case ActivationOp::Hardtanh:
      return f.template operator()<ActivationOp::Hardtanh>();
    case ActivationOp::Clamp:
      return f.template operator()<ActivationOp::Clamp>();
    default:
      return with_one_rounding_activation(op, std::forward<F>(f));
  }
}

// Calls f(element) with the functor of `op` for ops::activation_'s p0 and p1, so that both
// backends build the same one. Only Clamp has integral elements. Host code.
template <typename T, typename F>
void with_activation_element(ActivationOp op, double p0, double p1, F&& f) {
  if (op == ActivationOp::Clamp) return f(make_clamp_element<T>(p0, p1));
  if constexpr (is_floating_type_v<T>) {
    using M = opmath_t<T>;
    switch (op) {
      case ActivationOp::LeakyRelu:
        return f(LeakyReluElement<T>{cast_value<M>(p0)});
      case ActivationOp::Elu:
        return f(EluElement<T>{cast_value<M>(p0), cast_value<M>(p1)});
      case ActivationOp::Hardtanh:
        return f(HardtanhElement<T>{cast_value<T>(p0), cast_value<T>(p1)});
      default:  // EluResult, Clamp (above) and the one-rounding activations: out of place only
        break;
    }
  }
  LG_THROW(Error, "ActivationOp ", static_cast<int>(op), " has no in-place element for this dtype");
}

}  // namespace leangrad::kernels
