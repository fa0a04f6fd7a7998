// Tensor-level entries of the running reductions (kernels/ops.h): x made contiguous (integral and
// bool x cast to int64 first for the sum and the product), viewed as (outer, size, inner) around
// dim, and the launchers of kernels/backend.h.
#include <leangrad/core/creation.h>
#include <leangrad/core/cuda.h>
#include <leangrad/kernels/backend.h>
#include <leangrad/kernels/ops.h>
#include <leangrad/kernels/ops_checks.h>

namespace leangrad::ops {

Tensor scan(ScanOp op, const Tensor& x, std::int64_t dim_in, bool reverse) {
  const char* name = op_name(op);
  check_defined(name, x, "input");
  const std::int64_t dim = wrap_dim(dim_in, x.dim(), name);
  LG_CHECK_DTYPE(op != ScanOp::LogSumExp || is_floating(x.dtype()), name,
                 ": expected a floating dtype (float32, float64, float16, bfloat16), got ",
                 x.dtype(), " (shape ", x.shape(), ")");
  const Tensor in = contiguous(is_floating(x.dtype()) ? x : cast(x, kInt64));
  Tensor out = empty(x.shape(), in.options());
  if (out.numel() == 0) return out;
  const RunLayout l = run_layout(x.shape(), dim);
  const cuda::DeviceGuard guard(x.device());
  switch (x.device().type) {
    case DeviceType::CPU:
      kernels::cpu::scan(op, in.dtype(), out.data_ptr(), in.data_ptr(), l.outer, l.R, l.inner,
                         reverse);
      break;
    case DeviceType::CUDA:
      kernels::cuda::scan(op, in.dtype(), out.data_ptr(), in.data_ptr(), l.outer, l.R, l.inner,
                          reverse);
      break;
  }
  return out;
}

std::tuple<Tensor, Tensor> scan_extremum(const Tensor& x, std::int64_t dim_in, bool is_max) {
  const char* name = is_max ? "cummax" : "cummin";
  check_defined(name, x, "input");
  const std::int64_t dim = wrap_dim(dim_in, x.dim(), name);
  const Tensor in = contiguous(x);
  Tensor values = empty(x.shape(), in.options());
  Tensor indices = empty(x.shape(), TensorOptions(kInt64).device(x.device()));
  if (values.numel() == 0) return {values, indices};
  const RunLayout l = run_layout(x.shape(), dim);
  auto* index_data = static_cast<std::int64_t*>(indices.data_ptr());
  const cuda::DeviceGuard guard(x.device());
  switch (x.device().type) {
    case DeviceType::CPU:
      kernels::cpu::scan_extremum(in.dtype(), values.data_ptr(), index_data, in.data_ptr(), l.outer,
                                  l.R, l.inner, is_max);
      break;
    case DeviceType::CUDA:
      kernels::cuda::scan_extremum(in.dtype(), values.data_ptr(), index_data, in.data_ptr(),
                                   l.outer, l.R, l.inner, is_max);
      break;
  }
  return {values, indices};
}

}  // namespace leangrad::ops
