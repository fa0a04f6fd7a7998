// What the tensor-level entries (kernels/ops_*.cpp) share: the operand checks (a defined tensor,
// and a defined tensor of a floating dtype, with the Error naming the op and the operand), the
// (outer, R, inner) layout of an op along one dim, and the rows an elementwise launcher reads a
// transposed input as. Internal: no public header includes it.
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

// (outer, R, inner) of a reduction-like op along `dim` of a contiguous tensor: the sizes before
// dim, dim's, and those after, multiplied (all 1 for a 0-d shape).
struct RunLayout {
  std::int64_t outer = 1, R = 1, inner = 1;
};
inline RunLayout run_layout(const Shape& shape, std::int64_t dim) {
  RunLayout l;
  for (std::int64_t d = 0; d < static_cast<std::int64_t>(shape.size()); ++d) {
    (d < dim ? l.outer : d == dim ? l.R : l.inner) *= shape[d];
  }
  return l;
}

// `in`, or a row-major copy of it when out is written in rows and in's stride-1 dim is another
// one (a t() view, a permute): what a CPU elementwise launcher reads in as. Note [Transposed
// operands of elementwise ops] in kernels/ops_copy.cpp.
Tensor rows_for(const Tensor& out, const Tensor& in);

}  // namespace leangrad::ops
