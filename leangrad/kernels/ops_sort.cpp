// Tensor-level entry of sorting (kernels/ops.h): the keys made as the launchers take them (dim
// moved last and contiguous; float32 for the 16-bit floats, int32 for uint8 and bool, exact
// conversions that keep the order; -0 made +0 and every NaN the quiet NaN, which a CUDA radix
// sort needs to order them as the CPU does: kernels/cuda/sort.cu), sorted, and the positions
// moved back to dim. searchsorted takes the same key dtypes (exact conversions keep every
// comparison's result) and bisects each value's row.
#include <algorithm>
#include <limits>
#include <optional>

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

// x's elements as the keys the launchers take (key_dtype, contiguous), floating ones canonical:
// -0 made +0 and every NaN the quiet NaN.
Tensor sort_keys(const Tensor& x) {
  Tensor keys = contiguous(cast(x, key_dtype(x.dtype())));
  if (is_floating(keys.dtype())) {
    const Tensor nan = full({}, std::numeric_limits<double>::quiet_NaN(), keys.options());
    keys = where(compare(CompareOp::Ne, keys, keys), nan, binary(BinaryOp::Add, keys, 0.0));
  }
  return keys;
}

// The first element of positions (int64, non-empty) outside [0, size), or nullopt when every
// one is inside: positions a kernel reads rows at (select_rank's ranks, searchsorted's sorter).
// A reduction each way; on CUDA their results are read back (a synchronisation).
std::optional<std::int64_t> outside_range(const Tensor& positions, std::int64_t size) {
  const std::int64_t largest = reduce(ReduceOp::Max, positions, {}, false).item<std::int64_t>();
  const std::int64_t smallest =
      -reduce(ReduceOp::Max, unary(UnaryOp::Neg, positions), {}, false).item<std::int64_t>();
  if (smallest < 0) return smallest;
  if (largest >= size) return largest;
  return std::nullopt;
}

// select_rank's and argsort_at's operands once their shapes are checked: the ranks (int64, x's
// shape but along dim) checked to lie in [0, size(dim)), then x's keys and the ranks with dim
// moved last (contiguous), and the positions to fill, of the moved ranks' shape.
struct RankedRows {
  Tensor keys, ranks, positions;
  std::int64_t rows;  // slices
};
RankedRows ranked_rows(const char* op, const Tensor& x, std::int64_t dim, const Tensor& ranks) {
  const std::int64_t size = x.size(dim);
  const std::optional<std::int64_t> bad_rank = outside_range(ranks, size);
  LG_CHECK(!bad_rank.has_value(), op, ": rank ", bad_rank.value_or(0), " is out of range for dim ",
           dim, " of size ", size, " (expected [0, ", size - 1, "])");
  const std::int64_t last = x.dim() - 1;
  RankedRows r;
  r.keys = sort_keys(views::transpose(x, dim, last));
  r.ranks = contiguous(views::transpose(ranks, dim, last));
  r.positions = empty(r.ranks.shape(), TensorOptions(kInt64).device(x.device()));
  r.rows = r.keys.numel() / size;
  return r;
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
    const Tensor keys = sort_keys(moved);
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

Tensor select_rank(const Tensor& x, std::int64_t dim_in, const Tensor& rank) {
  const char* op = "select_rank";
  check_defined(op, x, "input");
  check_defined(op, rank, "rank");
  LG_CHECK_DTYPE(x.dtype() != kBool, op, ": expected numbers, got dtype bool");
  LG_CHECK_SHAPE(x.dim() >= 1, op, ": expected an input of at least 1 dim, got shape ", x.shape());
  const std::int64_t dim = wrap_dim(dim_in, x.dim(), op);
  const std::int64_t size = x.size(dim);
  LG_CHECK_SHAPE(size > 0, op, ": expected a non-empty dim ", dim, ", got shape ", x.shape());
  Shape kept = x.shape();
  kept[static_cast<std::size_t>(dim)] = 1;
  LG_CHECK_DTYPE(rank.dtype() == kInt64, op, ": expected int64 ranks, got ", rank.dtype());
  LG_CHECK_SHAPE(rank.shape() == kept, op, ": expected ranks of shape ", kept, ", got ",
                 rank.shape());
  LG_CHECK_DEVICE(rank.device() == x.device(), op, ": the ranks are on ", rank.device(),
                  ", the input on ", x.device());
  if (rank.numel() == 0) return empty(kept, TensorOptions(kInt64).device(x.device()));
  const RankedRows r = ranked_rows(op, x, dim, rank);
  const cuda::DeviceGuard guard(x.device());
  switch (x.device().type) {
    case DeviceType::CPU:
      kernels::cpu::select_rank(r.keys.dtype(), r.positions.data_ptr<std::int64_t>(),
                                r.keys.data_ptr(), r.ranks.data_ptr<std::int64_t>(), r.rows, size);
      break;
    case DeviceType::CUDA:
      kernels::cuda::select_rank(r.keys.dtype(), r.positions.data_ptr<std::int64_t>(),
                                 r.keys.data_ptr(), r.ranks.data_ptr<std::int64_t>(), r.rows, size);
      break;
  }
  return contiguous(views::transpose(r.positions, dim, x.dim() - 1));
}

Tensor argsort_at(const Tensor& x, std::int64_t dim_in, const Tensor& ranks) {
  const char* op = "argsort_at";
  check_defined(op, x, "input");
  check_defined(op, ranks, "ranks");
  LG_CHECK_SHAPE(x.dim() >= 1, op, ": expected an input of at least 1 dim, got shape ", x.shape());
  const std::int64_t dim = wrap_dim(dim_in, x.dim(), op);
  const std::int64_t size = x.size(dim);
  LG_CHECK_SHAPE(size > 0, op, ": expected a non-empty dim ", dim, ", got shape ", x.shape());
  LG_CHECK_DTYPE(ranks.dtype() == kInt64, op, ": expected int64 ranks, got ", ranks.dtype());
  Shape expected = x.shape();
  expected[static_cast<std::size_t>(dim)] = ranks.dim() == x.dim() ? ranks.size(dim) : 0;
  LG_CHECK_SHAPE(ranks.shape() == expected, op, ": expected ranks of the input's shape ", x.shape(),
                 " but along dim ", dim, ", got ", ranks.shape());
  LG_CHECK_DEVICE(ranks.device() == x.device(), op, ": the ranks are on ", ranks.device(),
                  ", the input on ", x.device());
  if (ranks.numel() == 0) return empty(ranks.shape(), TensorOptions(kInt64).device(x.device()));
  const RankedRows r = ranked_rows(op, x, dim, ranks);
  const std::int64_t per_row = ranks.size(dim);
  const cuda::DeviceGuard guard(x.device());
  switch (x.device().type) {
    case DeviceType::CPU:
      kernels::cpu::argsort_at(r.keys.dtype(), r.positions.data_ptr<std::int64_t>(),
                               r.keys.data_ptr(), r.ranks.data_ptr<std::int64_t>(), r.rows, size,
                               per_row);
      break;
    case DeviceType::CUDA:
      kernels::cuda::argsort_at(r.keys.dtype(), r.positions.data_ptr<std::int64_t>(),
                                r.keys.data_ptr(), r.ranks.data_ptr<std::int64_t>(), r.rows, size,
                                per_row);
      break;
  }
  return contiguous(views::transpose(r.positions, dim, x.dim() - 1));
}

Tensor searchsorted(const Tensor& sorted, const Tensor& values, bool right, const Tensor& sorter) {
  const char* op = "searchsorted";
  check_defined(op, sorted, "sorted sequence");
  check_defined(op, values, "values");
  LG_CHECK_DEVICE(sorted.device() == values.device(), op, ": the sorted sequence is on ",
                  sorted.device(), ", the values on ", values.device());
  LG_CHECK_DTYPE(sorted.dtype() == values.dtype() && sorted.dtype() != kBool, op,
                 ": expected a sorted sequence and values of one dtype, not bool, got ",
                 sorted.dtype(), " and ", values.dtype());
  LG_CHECK_SHAPE(sorted.dim() >= 1, op, ": expected a sorted sequence of at least 1 dim, got ",
                 "shape ", sorted.shape());
  const bool shared_row = sorted.dim() == 1;
  if (!shared_row) {
    const Shape lead(sorted.shape().begin(), sorted.shape().end() - 1);
    LG_CHECK_SHAPE(values.dim() == sorted.dim() &&
                       Shape(values.shape().begin(), values.shape().end() - 1) == lead,
                   op, ": the sorted sequence of shape ", sorted.shape(), " and the values of ",
                   "shape ", values.shape(), " differ before their last dim (a 1-d sorted ",
                   "sequence serves any values)");
  }
  const std::int64_t size = sorted.size(-1);
  Tensor order;
  if (sorter.defined()) {
    LG_CHECK_DTYPE(sorter.dtype() == kInt64, op, ": expected an int64 sorter, got ",
                   sorter.dtype());
    LG_CHECK_SHAPE(sorter.shape() == sorted.shape(), op, ": expected a sorter of the sorted ",
                   "sequence's shape ", sorted.shape(), ", got ", sorter.shape());
    LG_CHECK_DEVICE(sorter.device() == sorted.device(), op, ": the sorter is on ", sorter.device(),
                    ", the sorted sequence on ", sorted.device());
    order = contiguous(sorter);
    if (order.numel() > 0) {
      // Every entry is read as a position in its row: one outside [0, size) would read outside.
      const std::optional<std::int64_t> bad = outside_range(order, size);
      LG_CHECK(!bad.has_value(), op, ": the sorter holds ", bad.value_or(0),
               ", out of range for rows of size ", size, " (expected [0, ", size - 1, "])");
    }
  }
  Tensor out = empty(values.shape(), TensorOptions(kInt64).device(values.device()));
  if (out.numel() == 0) return out;
  const DType key = key_dtype(sorted.dtype());
  const Tensor keys = contiguous(cast(sorted, key));
  const Tensor probes = contiguous(cast(values, key));
  const std::int64_t per_row =
      shared_row ? values.numel() : std::max<std::int64_t>(values.size(-1), 1);
  const std::int64_t rows = values.numel() / per_row;
  const std::int64_t* order_data = order.defined() ? order.data_ptr<std::int64_t>() : nullptr;
  auto* out_data = out.data_ptr<std::int64_t>();
  const cuda::DeviceGuard guard(values.device());
  switch (values.device().type) {
    case DeviceType::CPU:
      kernels::cpu::searchsorted(key, out_data, keys.data_ptr(), probes.data_ptr(), order_data,
                                 rows, size, per_row, right);
      break;
    case DeviceType::CUDA:
      kernels::cuda::searchsorted(key, out_data, keys.data_ptr(), probes.data_ptr(), order_data,
                                  rows, size, per_row, right);
      break;
  }
  return out;
}

}  // namespace leangrad::ops
