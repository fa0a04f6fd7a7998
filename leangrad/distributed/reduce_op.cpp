// The elementwise reductions of the collectives (reduce_op.h): plain loops over raw buffers,
// dispatched on the dtype, with the arithmetic of 16-bit floats in float (opmath_t).
#include <leangrad/distributed/reduce_op.h>

#include <cstdint>

#include <leangrad/core/error.h>
#include <leangrad/core/half.h>
#include <leangrad/kernels/dispatch.h>
#include <leangrad/kernels/reduce_math.h>

namespace leangrad::distributed {

const char* reduce_op_name(ReduceOp op) {
  switch (op) {
    case ReduceOp::Sum:
      return "sum";
    case ReduceOp::Avg:
      return "avg";
    case ReduceOp::Max:
      return "max";
    case ReduceOp::Min:
      return "min";
  }
  return "unknown";
}

bool reduce_op_supports(ReduceOp op, DType dtype) {
  if (dtype == DType::Bool) return false;
  if (op == ReduceOp::Avg) return is_floating(dtype);
  return true;
}

namespace {

template <typename T, typename Combine>
void combine_loop(void* out, const void* a, const void* b, std::size_t n, Combine combine) {
  using M = opmath_t<T>;
  T* o = static_cast<T*>(out);
  const T* x = static_cast<const T*>(a);
  const T* y = static_cast<const T*>(b);
  for (std::size_t i = 0; i < n; ++i) {
    o[i] = static_cast<T>(combine(static_cast<M>(x[i]), static_cast<M>(y[i])));
  }
}

}  // namespace

void reduce_buffers(ReduceOp op, DType dtype, void* out, const void* a, const void* b,
                    std::size_t n) {
  LG_INTERNAL_ASSERT(op != ReduceOp::Avg, "(Avg reduces with Sum, then divide_buffer)");
  dispatch_numeric(dtype, "distributed reduction", [&]<typename T>() {
    using M = opmath_t<T>;
    switch (op) {
      case ReduceOp::Sum:
        combine_loop<T>(out, a, b, n, [](M x, M y) { return x + y; });
        break;
      case ReduceOp::Max:
        combine_loop<T>(out, a, b, n, reduce_math::max_propagate_nan<M>);
        break;
      case ReduceOp::Min:
        combine_loop<T>(out, a, b, n, reduce_math::min_propagate_nan<M>);
        break;
      case ReduceOp::Avg:
        break;
    }
  });
}

void divide_buffer(DType dtype, void* data, std::size_t n, int divisor) {
  dispatch_floating(dtype, "distributed average", [&]<typename T>() {
    using M = opmath_t<T>;
    T* p = static_cast<T*>(data);
    const M d = static_cast<M>(divisor);
    for (std::size_t i = 0; i < n; ++i)
      p[i] = static_cast<T>(static_cast<M>(p[i]) / d);
  });
}

}  // namespace leangrad::distributed
