// Tensor-level entry of sorting (kernels/ops.h): the keys made as the launchers take them (dim
// moved last and contiguous; float32 for the 16-bit floats, int32 for uint8 and bool, exact
// conversions that keep the order; -0 made +0 and every NaN the quiet NaN, which a CUDA radix
// sort needs to order them as the CPU does: kernels/cuda/sort.cu), sorted, and the positions
// moved back to dim.
#include <algorithm>
#include <limits>

#include <leangrad/core/creation.h>
#include <leangrad/core/cuda.h>
#include <leangrad/core/views.h>
#include <leangrad/kernels/backend.h>
#include <leangrad/kernels/creation.h>
#include <leangrad/kernels/ops.h>
#include <leangrad/kernels/ops_checks.h>

namespace leangrad::ops {

namespace {

DType key_dtype(DType dtype) {
  switch (dtype) {
    case kFloat64:
    case kInt64:
      return dtype;
    case kFloat32:
    case kFloat16:
    case kBFloat16:
      return kFloat32;
    default:
      return kInt32;
  }
}

}  // namespace

Tensor argsort(const Tensor& x, std::int64_t dim_in, bool descending, std::int64_t k) {
  const char* op = "argsort";
  check_defined(op, x, "input");
  const std::int64_t dim = wrap_dim(dim_in, x.dim(), op);
  const std::int64_t last = std::max<std::int64_t>(x.dim(), 1) - 1;
  const std::int64_t size = x.dim() == 0 ? 1 : x.size(dim);
  if (k < 0) k = size;
  LG_CHECK(k <= size, op, ": ", k, " positions asked of dim ", dim, " of size ", size);
  // The slices along dim as the rows of a contiguous (rows, size) copy.
  const Tensor moved = x.dim() == 0 ? views::view(x, {1}) : views::transpose(x, dim, last);
  Shape out_shape = moved.shape();
  out_shape[last] = k;
  Tensor indices = empty(out_shape, TensorOptions(kInt64).device(x.device()));
  if (indices.numel() > 0) {
    Tensor keys = cast(moved, key_dtype(x.dtype()));
    if (is_floating(keys.dtype())) {
      const Tensor nan = full({}, std::numeric_limits<double>::quiet_NaN(), keys.options());
      keys = where(compare(CompareOp::Ne, keys, keys), nan, binary(BinaryOp::Add, keys, 0.0));
    }
    const std::int64_t rows = keys.numel() / size;
    const cuda::DeviceGuard guard(x.device());
    switch (x.device().type) {
      case DeviceType::CPU:
        kernels::cpu::argsort(keys.dtype(), indices.data_ptr<std::int64_t>(), keys.data_ptr(), rows,
                              size, k, descending);
        break;
      case DeviceType::CUDA:
        kernels::cuda::argsort(keys.dtype(), indices.data_ptr<std::int64_t>(), keys.data_ptr(),
                               rows, size, k, descending);
        break;
    }
  }
  if (x.dim() == 0) return k == 1 ? views::view(indices, {}) : indices;
  return contiguous(views::transpose(indices, dim, last));
}

}  // namespace leangrad::ops
