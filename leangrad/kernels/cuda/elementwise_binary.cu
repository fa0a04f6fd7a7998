// The CUDA binary elementwise ops of kernels/backend.h: binary and binary_scalar, each op's
// element the CPU's (kernels/elementwise_math.h), walked by kernels/cuda/elementwise_loops.cuh.
#include <leangrad/kernels/backend.h>
#include <leangrad/kernels/dispatch.h>
#include <leangrad/kernels/elementwise_math.h>
#include <leangrad/kernels/op_dispatch.h>
#include <leangrad/kernels/cuda/elementwise_loops.cuh>

namespace leangrad::kernels::cuda {
namespace {

// a op b.
template <BinaryOp op, typename T>
struct BinaryFunctor {
  __device__ T operator()(T a, T b) const { return binary_element<op, T>(a, b); }
};

// a op s, or s op a when scalar_first; s is already in the math type (converted on the host).
// pow of a floating a with the exponent s takes its kind's shortcut (Note [pow with a scalar
// exponent]), the kind chosen on the host: a branch every thread takes alike.
template <BinaryOp op, typename T>
struct BinaryScalarFunctor {
  opmath_t<T> s;
  bool scalar_first;
  PowExponent pow_kind = PowExponent::Other;
  __device__ T operator()(T a) const {
    const opmath_t<T> m = to_opmath(a);
    if constexpr (op == BinaryOp::Pow && kPowScalarShortcuts<T>) {
      if (!scalar_first) return static_cast<T>(pow_scalar_apply(m, s, pow_kind));
    }
    return static_cast<T>(scalar_first ? binary_op_apply<op>(s, m) : binary_op_apply<op>(m, s));
  }
};

}  // namespace

void binary(BinaryOp op, DType dtype, const ElementwiseGeometry& g, void* out, const void* a,
            const void* b) {
  with_op(op, [&]<BinaryOp kOp>() {
    dispatch_binary_dtype<kOp>(dtype, [&]<typename T>() {
      launch_elementwise(g, BinaryFunctor<kOp, T>{}, static_cast<T*>(out), static_cast<const T*>(a),
                         static_cast<const T*>(b));
    });
  });
}

void binary_scalar(BinaryOp op, DType dtype, const ElementwiseGeometry& g, void* out, const void* a,
                   double s, bool scalar_first) {
  with_op(op, [&]<BinaryOp kOp>() {
    dispatch_binary_dtype<kOp>(dtype, [&]<typename T>() {
      const opmath_t<T> scalar = cast_value<opmath_t<T>>(s);
      launch_elementwise(g, BinaryScalarFunctor<kOp, T>{scalar, scalar_first, pow_exponent_kind(s)},
                         static_cast<T*>(out), static_cast<const T*>(a));
    });
  });
}

}  // namespace leangrad::kernels::cuda
