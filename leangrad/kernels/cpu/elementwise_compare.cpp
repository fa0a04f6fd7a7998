// CPU launchers of the elementwise comparisons (kernels/backend.h): two tensors, or a tensor and a
// number rounded to its dtype first, into bool. The math is kernels/elementwise_math.h's, shared
// with CUDA. The other elementwise families: kernels/cpu/elementwise.cpp.
#include <leangrad/kernels/backend.h>

#include <type_traits>

#include <leangrad/kernels/cpu/elementwise_loops.h>
#include <leangrad/kernels/dispatch.h>
#include <leangrad/kernels/elementwise_math.h>

namespace leangrad::kernels::cpu {
namespace {

// Calls f(std::integral_constant<Enum, value>) so an op chosen at runtime becomes a template
// argument of the element function.
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

}  // namespace

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

}  // namespace leangrad::kernels::cpu
