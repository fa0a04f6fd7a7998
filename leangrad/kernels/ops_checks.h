// The operand checks that the tensor-level entries (kernels/ops_*.cpp) share: a defined tensor,
// and a defined tensor of a floating dtype, with the Error naming the op and the operand.
// Internal: no public header includes it.
#pragma once

#include <leangrad/core/error.h>
#include <leangrad/core/tensor.h>

namespace leangrad::ops {

// Whether a floating check's message lists the floating dtypes after the operand's name.
enum class ListFloatingDTypes : bool { No, Yes };

// `t` is defined. `what` names it in the message ("tensor", "input", "weight").
inline void check_defined(const char* op, const Tensor& t, const char* what = "tensor") {
  LG_CHECK(t.defined(), op, ": expected a defined ", what, ", got an undefined Tensor()");
}

// `t` is defined and of a floating dtype (float32, float64, float16, bfloat16).
inline void check_floating(const char* op, const Tensor& t, const char* what = "tensor",
                           ListFloatingDTypes list = ListFloatingDTypes::No) {
  check_defined(op, t, what);
  LG_CHECK_DTYPE(is_floating(t.dtype()), op, ": expected a floating ", what,
                 list == ListFloatingDTypes::Yes ? " (float32, float64, float16, bfloat16)" : "",
                 ", got ", t.dtype());
}

}  // namespace leangrad::ops
