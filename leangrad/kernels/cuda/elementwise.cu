// The CUDA elementwise ops of kernels/backend.h that take one op each or none: unary, where,
// cast and fill, each element the CPU's (kernels/elementwise_math.h), walked by
// kernels/cuda/elementwise_loops.cuh. The binary ops, the activations and the compare ops have
// files of their own beside this one.
#include <leangrad/kernels/backend.h>
#include <leangrad/kernels/dispatch.h>
#include <leangrad/kernels/elementwise_math.h>
#include <leangrad/kernels/op_dispatch.h>
#include <leangrad/kernels/cuda/elementwise_loops.cuh>

namespace leangrad::kernels::cuda {
namespace {

template <UnaryOp op, typename T>
struct UnaryFunctor {
  __device__ T operator()(T a) const { return unary_element<op, T>(a); }
};

template <typename T>
struct WhereFunctor {
  __device__ T operator()(bool cond, T a, T b) const { return cond ? a : b; }
};

template <typename To, typename From>
struct CastFunctor {
  __device__ To operator()(From x) const { return cast_value<To>(x); }
};

template <typename T>
struct FillFunctor {
  T value;
  __device__ T operator()() const { return value; }
};

}  // namespace

void unary(UnaryOp op, DType dtype, const ElementwiseGeometry& g, void* out, const void* a) {
  with_op(op, [&]<UnaryOp kOp>() {
    const auto launch = [&]<typename T>() {
      launch_elementwise(g, UnaryFunctor<kOp, T>{}, static_cast<T*>(out), static_cast<const T*>(a));
    };
    // exp, log, ... exist only for floating types (ops::unary computes integers in float32).
    if constexpr (is_floating_only(kOp)) {
      dispatch_floating(dtype, op_name(op), launch);
    } else {
      dispatch_numeric(dtype, op_name(op), launch);
    }
  });
}

void where(DType dtype, const ElementwiseGeometry& g, void* out, const bool* cond, const void* a,
           const void* b) {
  dispatch_all(dtype, "where", [&]<typename T>() {
    launch_elementwise(g, WhereFunctor<T>{}, static_cast<T*>(out), cond, static_cast<const T*>(a),
                       static_cast<const T*>(b));
  });
}

void cast(DType out_dtype, DType in_dtype, const ElementwiseGeometry& g, void* out,
          const void* in) {
  dispatch_all(out_dtype, "cast", [&]<typename To>() {
    dispatch_all(in_dtype, "cast", [&]<typename From>() {
      launch_elementwise(g, CastFunctor<To, From>{}, static_cast<To*>(out),
                         static_cast<const From*>(in));
    });
  });
}

void fill(DType dtype, const ElementwiseGeometry& g, void* out, double value) {
  dispatch_all(dtype, "fill", [&]<typename T>() {
    launch_elementwise(g, FillFunctor<T>{cast_value<T>(value)}, static_cast<T*>(out));
  });
}

}  // namespace leangrad::kernels::cuda
