// Tensor-level entries of the reductions (kernels/ops.h): sum, mean, max and argmax over any set
// of dims, with keepdim. Launchers: kernels/cpu/reduce.h and kernels/cuda/reduce.h.
//
// Strategy: the reduced dims are permuted to the end (kept dims first, each group in its original
// order) and the result is made contiguous, which copies only when the permuted view is not
// already contiguous (reducing trailing dims of a contiguous tensor copies nothing). Then output
// element o reduces the contiguous run in[o * R, (o + 1) * R), R = product of the reduced sizes,
// and the launchers need nothing but (num_outputs, R). Reducing leading dims of a big tensor pays
// for one transposing copy; a strided "column" kernel would avoid it, at the cost of a second
// kernel family per device.
//
// Rules (PyTorch's):
//   - dims are wrapped; an empty list reduces every dim; a repeated dim is a ShapeError;
//   - Sum of integral/bool input gives int64, Mean requires a floating dtype, Max keeps it;
//   - over zero elements: sum = 0, mean = NaN; max and argmax throw;
//   - Max propagates NaN; argmax returns the first maximum, and a NaN counts as the maximum;
//   - argmax without a dim indexes the flattened tensor.
#include <algorithm>

#include "core/creation.h"
#include "core/views.h"
#include "kernels/cpu/reduce.h"
#include "kernels/cuda/reduce.h"
#include "kernels/ops.h"

namespace leangrad::ops {

namespace {

// Which dims of `a` are reduced: every dim for an empty list. A 0-d tensor accepts dims 0 and -1
// (as PyTorch) and has nothing to permute.
std::vector<bool> reduced_dims(const char* op, const Tensor& a,
                               const std::vector<std::int64_t>& dims) {
  const std::int64_t ndim = a.dim();
  const std::int64_t n = std::max<std::int64_t>(ndim, 1);
  std::vector<bool> mask(static_cast<std::size_t>(n), dims.empty());
  std::vector<bool> seen(static_cast<std::size_t>(n), false);
  for (std::int64_t d : dims) {
    LG_CHECK_SHAPE(d >= -n && d < n, op, ": dim ", d, " is out of range for a tensor of shape ",
                   a.shape(), " (expected a dim in [", -n, ", ", n - 1, "])");
    const std::int64_t w = d < 0 ? d + n : d;
    LG_CHECK_SHAPE(!seen[w], op, ": dim ", w, " appears more than once in dims ", shape_str(dims));
    seen[w] = true;
    mask[w] = true;
  }
  mask.resize(static_cast<std::size_t>(ndim));
  return mask;
}

// The input rearranged so that each output reduces one contiguous run.
struct ReductionLayout {
  Tensor input;  // contiguous: (kept dims..., reduced dims...)
  Shape out_shape;
  std::int64_t num_outputs = 1;
  std::int64_t reduce_size = 1;  // R
};

ReductionLayout make_layout(const Tensor& a, const std::vector<bool>& reduced, bool keepdim) {
  ReductionLayout layout;
  std::vector<std::int64_t> kept_dims;
  std::vector<std::int64_t> reduced_list;
  for (std::int64_t d = 0; d < a.dim(); ++d) {
    const std::int64_t size = a.shape()[d];
    if (reduced[d]) {
      reduced_list.push_back(d);
      layout.reduce_size *= size;
      if (keepdim) layout.out_shape.push_back(1);
    } else {
      kept_dims.push_back(d);
      layout.num_outputs *= size;
      layout.out_shape.push_back(size);
    }
  }
  std::vector<std::int64_t> perm = kept_dims;
  perm.insert(perm.end(), reduced_list.begin(), reduced_list.end());
  const bool identity = std::is_sorted(perm.begin(), perm.end());
  const Tensor permuted = identity ? a : views::permute(a, perm);
  // A plain contiguous copy (ops::cast to the same dtype), outside autograd.
  layout.input = permuted.is_contiguous() ? permuted : cast(permuted, a.dtype());
  return layout;
}

void check_defined(const char* op, const Tensor& a) {
  LG_CHECK(a.defined(), op, ": expected a defined tensor, got an undefined Tensor()");
}

void check_not_empty(const char* op, const Tensor& a, const ReductionLayout& layout) {
  LG_CHECK_SHAPE(layout.reduce_size > 0, op,
                 ": cannot reduce over a zero-size dimension (input shape ", a.shape(), ")");
}

}  // namespace

Tensor reduce(ReduceOp op, const Tensor& a, const std::vector<std::int64_t>& dims, bool keepdim) {
  const char* name = op_name(op);
  check_defined(name, a);
  LG_CHECK_DTYPE(op != ReduceOp::Mean || is_floating(a.dtype()),
                 "mean: expected a floating dtype (float32, float64, float16, bfloat16), got ",
                 a.dtype(), " (convert with .to(kFloat32) first)");
  const ReductionLayout layout = make_layout(a, reduced_dims(name, a, dims), keepdim);
  if (op == ReduceOp::Max) check_not_empty(name, a, layout);

  const DType out_dtype = op == ReduceOp::Sum && !is_floating(a.dtype()) ? DType::Int64 : a.dtype();
  Tensor out = empty(layout.out_shape, TensorOptions(out_dtype).device(a.device()));
  if (layout.num_outputs == 0) return out;
  switch (a.device().type) {
    case DeviceType::CPU:
      kernels::cpu::reduce(op, a.dtype(), out.data_ptr(), layout.input.data_ptr(),
                           layout.num_outputs, layout.reduce_size);
      break;
    case DeviceType::CUDA:
      kernels::cuda::reduce(op, a.dtype(), out.data_ptr(), layout.input.data_ptr(),
                            layout.num_outputs, layout.reduce_size);
      break;
  }
  return out;
}

Tensor argmax(const Tensor& a, std::optional<std::int64_t> dim, bool keepdim) {
  check_defined("argmax", a);
  // Without a dim every dim is reduced: the index is into the flattened (row-major) tensor.
  const std::vector<bool> reduced =
      dim ? reduced_dims("argmax", a, {*dim}) : std::vector<bool>(a.dim(), true);
  const ReductionLayout layout = make_layout(a, reduced, keepdim);
  check_not_empty("argmax", a, layout);

  Tensor out = empty(layout.out_shape, TensorOptions(DType::Int64).device(a.device()));
  if (layout.num_outputs == 0) return out;
  auto* out_data = static_cast<std::int64_t*>(out.data_ptr());
  switch (a.device().type) {
    case DeviceType::CPU:
      kernels::cpu::argmax(a.dtype(), out_data, layout.input.data_ptr(), layout.num_outputs,
                           layout.reduce_size);
      break;
    case DeviceType::CUDA:
      kernels::cuda::argmax(a.dtype(), out_data, layout.input.data_ptr(), layout.num_outputs,
                            layout.reduce_size);
      break;
  }
  return out;
}

}  // namespace leangrad::ops
