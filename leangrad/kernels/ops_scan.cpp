// Tensor-level entry of the cumulative sum (kernels/ops.h): x made contiguous (integral and bool
// x cast to int64 first), viewed as (outer, size, inner) around dim, and the launchers of
// kernels/backend.h.
#include <leangrad/core/creation.h>
#include <leangrad/core/cuda.h>
#include <leangrad/kernels/backend.h>
#include <leangrad/kernels/ops.h>
#include <leangrad/kernels/ops_checks.h>

namespace leangrad::ops {

Tensor cumsum(const Tensor& x, std::int64_t dim_in, bool reverse) {
  const char* op = "cumsum";
  check_defined(op, x, "input");
  const std::int64_t dim = wrap_dim(dim_in, x.dim(), op);
  const Tensor in = contiguous(is_floating(x.dtype()) ? x : cast(x, kInt64));
  Tensor out = empty(x.shape(), in.options());
  if (out.numel() == 0) return out;
  const RunLayout l = run_layout(x.shape(), dim);
  const cuda::DeviceGuard guard(x.device());
  switch (x.device().type) {
    case DeviceType::CPU:
      kernels::cpu::cumsum(in.dtype(), out.data_ptr(), in.data_ptr(), l.outer, l.R, l.inner,
                           reverse);
      break;
    case DeviceType::CUDA:
      kernels::cuda::cumsum(in.dtype(), out.data_ptr(), in.data_ptr(), l.outer, l.R, l.inner,
                            reverse);
      break;
  }
  return out;
}

}  // namespace leangrad::ops
