// CPU launchers of the elementwise comparisons (kernels/backend.h): two tensors, or a tensor and a
// number rounded to its dtype first, into bool. The math is kernels/elementwise_math.h's, shared
// with CUDA. The other elementwise families: kernels/cpu/elementwise.cpp.
#include <leangrad/kernels/backend.h>

#include <type_traits>

#include <leangrad/kernels/cpu/elementwise_loops.h>
#include <leangrad/kernels/dispatch.h>
#include <leangrad/kernels/elementwise_math.h>
#include <leangrad/kernels/op_dispatch.h>

namespace leangrad::kernels::cpu {
void compare(CompareOp op, DType dtype, const ElementwiseGeometry& g, bool* out, const void* a,
             const void* b) {
  with_op(op, [&]<CompareOp kOp>() {
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
  with_op(op, [&]<CompareOp kOp>() {
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
