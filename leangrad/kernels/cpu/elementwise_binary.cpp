// CPU launchers of the binary elementwise ops (kernels/backend.h): two tensors, or a tensor and a
// number (pow's common exponents by their own forms, Note [pow with a scalar exponent]). The
// per-element math is kernels/elementwise_math.h's, shared with CUDA; igamma, igammac and zeta(2,
// q) run in the lanes of kernels/cpu/elementwise_range_limited.cpp. The other elementwise
// families: kernels/cpu/elementwise.cpp.
#include <leangrad/kernels/backend.h>

#include <type_traits>

#include <leangrad/kernels/cpu/elementwise_loops.h>
#include <leangrad/kernels/cpu/elementwise_range_limited.h>
#include <leangrad/kernels/dispatch.h>
#include <leangrad/kernels/elementwise_math.h>
#include <leangrad/kernels/op_dispatch.h>

namespace leangrad::kernels::cpu {
namespace {

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
  with_op(op, [&]<BinaryOp kOp>() {
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
  with_op(op, [&]<BinaryOp kOp>() {
    dispatch_binary_dtype<kOp>(dtype, [&]<typename T>() {
      const opmath_t<T> scalar = cast_value<opmath_t<T>>(s);
      auto* out_t = static_cast<T*>(out);
      const auto* a_t = static_cast<const T*>(a);
      if constexpr (kOp == BinaryOp::Pow && (kPowScalarShortcuts<T> || std::is_same_v<T, Half>)) {
        // Note [pow with a scalar exponent]: float16 takes e = 2's only.
        if (!scalar_first &&
            (kPowScalarShortcuts<T> || pow_exponent_kind(s) == PowExponent::Square)) {
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
      if constexpr (kOp == BinaryOp::Zeta) {
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

}  // namespace leangrad::kernels::cpu
