// The CUDA compare ops of kernels/backend.h: compare and compare_scalar, each op's element the
// CPU's (kernels/elementwise_math.h), walked by kernels/cuda/elementwise_loops.cuh.
#include <leangrad/kernels/backend.h>
#include <leangrad/kernels/dispatch.h>
#include <leangrad/kernels/elementwise_math.h>
#include <leangrad/kernels/op_dispatch.h>
#include <leangrad/kernels/cuda/elementwise_loops.cuh>

namespace leangrad::kernels::cuda {
namespace {

template <CompareOp op, typename T>
struct CompareFunctor {
  __device__ bool operator()(T a, T b) const { return compare_element<op, T>(a, b); }
};

// s is already rounded to T, as on the CPU (PyTorch compares in the tensor's dtype).
template <CompareOp op, typename T>
struct CompareScalarFunctor {
  T s;
  __device__ bool operator()(T a) const { return compare_element<op, T>(a, s); }
};

}  // namespace

void compare(CompareOp op, DType dtype, const ElementwiseGeometry& g, bool* out, const void* a,
             const void* b) {
  dispatch_all(dtype, op_name(op), [&]<typename T>() {
    with_op(op, [&]<CompareOp kOp>() {
      launch_elementwise(g, CompareFunctor<kOp, T>{}, out, static_cast<const T*>(a),
                         static_cast<const T*>(b));
    });
  });
}

void compare_scalar(CompareOp op, DType dtype, const ElementwiseGeometry& g, bool* out,
                    const void* a, double s) {
  dispatch_all(dtype, op_name(op), [&]<typename T>() {
    const T scalar = cast_value<T>(s);
    with_op(op, [&]<CompareOp kOp>() {
      launch_elementwise(g, CompareScalarFunctor<kOp, T>{scalar}, out, static_cast<const T*>(a));
    });
  });
}

}  // namespace leangrad::kernels::cuda
