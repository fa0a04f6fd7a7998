// CPU launchers of the elementwise kernels (kernels/backend.h): the reference
// implementations the CUDA kernels are tested against. The per-element math is shared with CUDA
// through kernels/elementwise_math.h; this file picks each op's loop (kernels/cpu/
// elementwise_loops.h). The range-limited ops, sin, cos and tan of float and the special
// functions, have a file of their own (kernels/cpu/elementwise_range_limited.cpp).
#include <leangrad/kernels/backend.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <utility>

#include <leangrad/kernels/cpu/elementwise_loops.h>
#include <leangrad/kernels/cpu/elementwise_range_limited.h>
#include <leangrad/kernels/cpu/half_convert.h>
#include <leangrad/kernels/cpu/parallel_for.h>
#include <leangrad/kernels/cpu/transpose_copy.h>
#include <leangrad/kernels/dispatch.h>
#include <leangrad/kernels/elementwise_math.h>

namespace leangrad::kernels::cpu {
namespace {

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
    if constexpr (kOp == BinaryOp::Igamma || kOp == BinaryOp::Igammac) {
      incomplete_gamma(dtype, kOp == BinaryOp::Igamma, g, out, a, b);  // in lanes
    } else {
      dispatch_binary_dtype<kOp>(dtype, [&]<typename T>() {
        elementwise_loop_as<T>(
            g, [](T x, T y) LG_LAMBDA_ALWAYS_INLINE { return binary_element<kOp>(x, y); },
            [](auto x, auto y) LG_LAMBDA_ALWAYS_INLINE { return binary_op_apply<kOp>(x, y); },
            static_cast<T*>(out), static_cast<const T*>(a), static_cast<const T*>(b));
      });
    }
  });
}

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
          zeta_of_two(dtype, g, out_t, a_t);  // in lanes
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

void unary(UnaryOp op, DType dtype, const ElementwiseGeometry& g, void* out, const void* a) {
  with_op(op, [&](auto op_constant) {
    constexpr UnaryOp kOp = decltype(op_constant)::value;
    auto run = [&]<typename T>() {
      // (kOp through op_constant's type: naming kOp here made GCC 12 ask the lambdas below to
      // capture it.)
      constexpr UnaryOp kThisOp = decltype(op_constant)::value;
      if constexpr (is_range_limited<kThisOp, T>()) {
        range_limited_unary(kThisOp, dtype, g, out, a);
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
// conversions, which run in vector lanes (elementwise_loop converts one value at a time: GCC does
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
