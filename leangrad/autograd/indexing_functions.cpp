// The indexing and splitting functions of autograd/indexing_functions.h.
//
// Note [Indexing ops' gradients]
//   All three kernel-backed ops are linear in the tensor they index, so each gradient is the
//   adjoint of a linear map, recorded as an op of its own whose gradient is the forward again
//   (Note [Fused backwards that differentiate again] in nn_functions.cpp):
//   - index_select(x, dim, idx): dx = index_select_backward(g), each slice g[..., i, ...] added
//     into dx[..., idx[i], ...] (torch's index_add into zeros); that map's adjoint is
//     index_select(gg, dim, idx).
//   - gather(x, dim, idx): dx = scatter_add(zeros(x.shape), dim, idx, g)
//     (ops::gather_backward); the adjoint of scatter_add in its src is gather(gg, dim, idx).
//   - scatter_add(x, dim, idx, src): dx = g (the copy), dsrc = gather(g, dim, idx). A src larger
//     than the index is sliced to the index's shape first with the differentiable slice, so the
//     part it does not read gets a zero gradient through slice's own backward.
//   Repeated indices are what make the gradients sums; the CPU adds them in index order
//   (deterministic), CUDA with atomics (kernels/cuda/indexing.cu).
// flip is index_select with a reversed arange per dim; roll a cat of two narrows per dim; repeat
// an expand of a view with a new dim before each, reshaped (one strided copy); tril and triu a
// where over the mask j - i <= diagonal (>=); constant padding narrows (negative amounts) and
// cats with constant blocks, the other modes index_select (Note [Padding by copies]); one_hot
// compares the indices with an arange. Their gradients are those of the ops they are made of. The
// splitting functions are views made by slice and select, which carry the gradient: each piece's
// backward writes its gradient into zeros of the input's shape, and the engine sums the pieces'
// contributions (PyTorch's split records one node for all pieces and concatenates; here a backward
// through k pieces of an n-element input costs k n, not n).
#include <leangrad/autograd/indexing_functions.h>

#include <algorithm>
#include <string_view>
#include <vector>

#include <leangrad/autograd/advanced_indexing.h>
#include <leangrad/autograd/functions.h>
#include <leangrad/autograd/grad_mode.h>
#include <leangrad/autograd/graph.h>
#include <leangrad/autograd/nn_internal.h>
#include <leangrad/autograd/reduction_functions.h>
#include <leangrad/core/creation.h>
#include <leangrad/core/error.h>
#include <leangrad/core/profiler.h>
#include <leangrad/kernels/creation.h>
#include <leangrad/kernels/ops.h>

namespace leangrad {

using autograd::BackwardContext;
using autograd::record_op;

namespace {

Tensor index_select_backward_fn(const Tensor& g, std::int64_t dim, const Tensor& index,
                                const Shape& input_shape) {
  return record_op("index_select_backward", ops::index_select_backward(g, dim, index, input_shape),
                   {g}, {index}, [dim](const BackwardContext& c) -> std::vector<Tensor> {
                     return {index_select(c.grad, dim, c.saved[0])};
                   });
}

Tensor gather_backward_fn(const Tensor& g, std::int64_t dim, const Tensor& index,
                          const Shape& input_shape) {
  return record_op("gather_backward", ops::gather_backward(g, dim, index, input_shape), {g},
                   {index}, [dim](const BackwardContext& c) -> std::vector<Tensor> {
                     return {gather(c.grad, dim, c.saved[0])};
                   });
}

// The size of dim `dim` of `input` (defined, at least 1-d), the dim wrapped into *out.
std::int64_t dim_size(const Tensor& input, std::int64_t dim, const char* op, std::int64_t* out) {
  LG_CHECK(input.defined(), op, ": expected a defined input, got an undefined Tensor()");
  *out = wrap_dim(dim, input.dim(), op);
  LG_CHECK_SHAPE(input.dim() > 0, op, ": expected an input of at least 1 dim, got a 0-d one");
  return input.size(*out);
}

// The positions `index` (int64, input's device, each in [-numel, numel)) names in the flattened
// input, negative ones counted from the end, as a 1-d int64 tensor (take and put).
Tensor flat_positions(const char* op, const Tensor& input, const Tensor& index) {
  LG_CHECK_DTYPE(index.dtype() == kInt64, op, ": expected an int64 index, got ", index.dtype());
  LG_CHECK_DEVICE(index.device() == input.device(), op, ": index is on ", index.device(),
                  " but input is on ", input.device());
  const auto n = static_cast<double>(input.numel());
  const Tensor flat = reshape(index, {-1});
  LG_CHECK_SHAPE(flat.numel() == 0 || all(logical_and(ge(flat, -n), lt(flat, n))).item<bool>(), op,
                 ": expected every index in [-", input.numel(), ", ", input.numel(),
                 ") for input of shape ", input.shape(), ", got index of shape ", index.shape());
  return where(lt(flat, 0.0), add(flat, n), flat);
}

}  // namespace

// ---- Indexing by tensors ---------------------------------------------------------------------

Tensor take(const Tensor& input, const Tensor& index) {
  LG_PROFILE_OP(input, index);
  const char* op = "take";
  LG_CHECK(input.defined() && index.defined(), op,
           ": expected a defined input and index, got an undefined Tensor()");
  return reshape(index_select(reshape(input, {-1}), 0, flat_positions(op, input, index)),
                 index.shape());
}

Tensor put(const Tensor& input, const Tensor& index, const Tensor& source, bool accumulate) {
  LG_PROFILE_OP(input, index, source);
  const char* op = "put";
  LG_CHECK(input.defined() && index.defined() && source.defined(), op,
           ": expected a defined input, index and source, got an undefined Tensor()");
  LG_CHECK_SHAPE(index.numel() == source.numel(), op,
                 ": expected as many elements in source as in "
                 "index, got source of shape ",
                 source.shape(), " and index of shape ", index.shape());
  LG_CHECK_DTYPE(source.dtype() == input.dtype(), op, ": expected source of input's dtype ",
                 input.dtype(), ", got ", source.dtype());
  LG_CHECK_DEVICE(source.device() == input.device(), op, ": source is on ", source.device(),
                  " but input is on ", input.device());
  const Tensor positions = flat_positions(op, input, index);
  return reshape(index_put(reshape(input, {-1}), {positions}, reshape(source, {-1}), accumulate),
                 input.shape());
}

Tensor index_select(const Tensor& input, std::int64_t dim, const Tensor& index) {
  LG_PROFILE_OP(input, index);
  return record_op("index_select", ops::index_select(input, dim, index), {input}, {index},
                   [dim](const BackwardContext& c) -> std::vector<Tensor> {
                     return {index_select_backward_fn(c.grad, dim, c.saved[0], c.shape(0))};
                   });
}

Tensor gather(const Tensor& input, std::int64_t dim, const Tensor& index) {
  LG_PROFILE_OP(input, index);
  return record_op("gather", ops::gather(input, dim, index), {input}, {index},
                   [dim](const BackwardContext& c) -> std::vector<Tensor> {
                     return {gather_backward_fn(c.grad, dim, c.saved[0], c.shape(0))};
                   });
}

namespace {

// Checks index_add's and index_fill's index (1-d or 0-d, int64 or int32, on input's device, and
// on the CPU each value in [0, size), or in [-size, size) where `negative_wraps`: index_fill's, as
// PyTorch's, where its index_add, index_copy and index_reduce refuse -1) and returns the wrapped
// dim.
std::int64_t check_slice_index(const char* op, const Tensor& input, std::int64_t dim,
                               const Tensor& index, bool negative_wraps = false) {
  std::int64_t d = 0;
  const std::int64_t size = dim_size(input, dim, op, &d);
  LG_CHECK(index.defined(), op, ": expected a defined index, got an undefined Tensor()");
  LG_CHECK_SHAPE(index.dim() <= 1, op, ": expected a 0-d or 1-d index, got shape ", index.shape());
  LG_CHECK_DTYPE(index.dtype() == kInt64 || index.dtype() == kInt32, op,
                 ": expected an int64 or int32 index, got ", index.dtype());
  LG_CHECK_DEVICE(index.device() == input.device(), op, ": the index is on ", index.device(),
                  ", the input on ", input.device());
  if (index.device().is_cpu()) {
    // (On CUDA the kernel's own reading of a bad index gives NaN, without a synchronisation.)
    const Tensor idx = index.to(kInt64).contiguous();
    const std::int64_t* v = idx.data_ptr<std::int64_t>();
    const std::int64_t count = idx.numel();  // out of the loop: numel() is a call each time
    const std::int64_t lowest = negative_wraps ? -size : 0;
    for (std::int64_t i = 0; i < count; ++i) {
      LG_CHECK(v[i] >= lowest && v[i] < size, op, ": index ", v[i], " at position ", i,
               " is out of range for dim ", d, " of size ", size, " (expected [", lowest, ", ",
               size - 1, "]; input shape ", input.shape(), ")");
    }
  }
  return d;
}

// index_add, index_copy, index_fill and index_reduce take a 0-d input as a 1-d one of one element
// (dim 0 or -1, index 0), as PyTorch's: `f` of that row and of source's elements in a row, its
// result back to 0-d.
template <typename F>
Tensor on_one_element_row(const char* op, const Tensor& input, std::int64_t dim,
                          const Tensor& source, const F& f) {
  wrap_dim(dim, 0, op);
  const Tensor row_source = source.defined() ? reshape(source, {source.numel()}) : source;
  return reshape(f(reshape(input, {1}), row_source), {});
}

}  // namespace

Tensor index_add(const Tensor& input, std::int64_t dim, const Tensor& index, const Tensor& source,
                 double alpha) {
  LG_PROFILE_OP(input, index, source);
  const char* op = "index_add";
  if (input.defined() && input.dim() == 0) {
    return on_one_element_row(op, input, dim, source, [&](const Tensor& row, const Tensor& src) {
      return index_add(row, 0, index, src, alpha);
    });
  }
  const std::int64_t d = check_slice_index(op, input, dim, index);
  LG_CHECK(source.defined(), op, ": expected a defined source, got an undefined Tensor()");
  LG_CHECK_DTYPE(is_floating(input.dtype()) && source.dtype() == input.dtype(), op,
                 ": expected a floating input and a source of its dtype, got ", input.dtype(),
                 " and ", source.dtype());
  LG_CHECK_DEVICE(source.device() == input.device(), op, ": the source is on ", source.device(),
                  ", the input on ", input.device());
  Shape expected = input.shape();
  expected[static_cast<std::size_t>(d)] = index.numel();
  LG_CHECK_SHAPE(source.shape() == expected, op, ": expected a source of shape ", expected,
                 " (the input's ", input.shape(), " with ", index.numel(), " along dim ", d,
                 "), got ", source.shape());
  // Each slice of source added into zeros at its index: index_select's gradient, whose own
  // gradient is index_select (Note [Indexing ops' gradients]).
  const Tensor spread = index_select_backward_fn(source, d, index, input.shape());
  return add(input, alpha == 1.0 ? spread : mul(spread, alpha));
}

namespace {

// The flat positions (row-major) of the true elements of a bool tensor, int64 (count), on its
// device. On the CPU, ops::nonzero's two passes (Note [True positions in two passes] in
// kernels/cpu/nonzero.cpp). On CUDA each true element's position goes to slot (number of trues
// up to it) - 1 of a scatter_add into zeros, each false one to a spare last slot, which is cut
// off: the kernels of cumsum, where and scatter_add; the count is read back.
Tensor flat_true_positions(const Tensor& mask_in) {
  if (mask_in.device().is_cpu()) return ops::nonzero(mask_in, /*flat=*/true);
  const Tensor mask = reshape(mask_in, {mask_in.numel()});
  const TensorOptions longs = TensorOptions(kInt64).device(mask.device());
  if (mask.numel() == 0) return zeros({0}, longs);
  const Tensor rank = cumsum(mask, 0);  // int64
  const std::int64_t count = select(rank, 0, mask.numel() - 1).item<std::int64_t>();
  const Tensor slot =
      where(mask, sub(rank, full({}, 1.0, longs)), full({}, static_cast<double>(count), longs));
  const Tensor positions = scatter_add(zeros({count + 1}, longs), 0, slot,
                                       arange(0.0, static_cast<double>(mask.numel()), 1.0, longs));
  return slice(positions, 0, 0, count);
}

}  // namespace

Tensor nonzero(const Tensor& input) {
  LG_PROFILE_OP(input);
  LG_CHECK(input.defined(), "nonzero: expected a defined input, got an undefined Tensor()");
  NoGradGuard no_grad;
  const Tensor mask = input.dtype() == kBool ? input : ne(input, 0.0);
  if (mask.device().is_cpu()) return ops::nonzero(mask, /*flat=*/false);
  const Tensor flat = flat_true_positions(mask);
  const std::int64_t count = flat.numel();
  const std::int64_t rank = input.dim();
  if (rank == 0) return zeros({count, 0}, TensorOptions(kInt64).device(input.device()));
  if (rank == 1) return reshape(flat, {count, 1});
  // Each position's index along each dim: floor(flat / stride) mod size, in float64 (exact: a
  // tensor's positions are far below 2^53).
  std::vector<Tensor> columns;
  const Tensor position = flat.to(kFloat64);
  std::int64_t stride = 1;
  std::vector<std::int64_t> strides(static_cast<std::size_t>(rank));
  for (std::int64_t d = rank - 1; d >= 0; --d) {
    strides[static_cast<std::size_t>(d)] = stride;
    stride *= input.size(d);
  }
  for (std::int64_t d = 0; d < rank; ++d) {
    const auto s = static_cast<double>(strides[static_cast<std::size_t>(d)]);
    const auto n = static_cast<double>(input.size(d));
    const Tensor q = floor(div(position, s));
    columns.push_back(sub(q, mul(floor(div(q, n)), n)));
  }
  return stack(columns, 1).to(kInt64);
}

Tensor argwhere(const Tensor& input) {
  LG_PROFILE_OP(input);
  return nonzero(input);
}

Tensor masked_select(const Tensor& input, const Tensor& mask) {
  LG_PROFILE_OP(input, mask);
  const char* op = "masked_select";
  LG_CHECK(input.defined() && mask.defined(), op,
           ": expected a defined input and mask, got an undefined Tensor()");
  LG_CHECK_DTYPE(mask.dtype() == kBool, op, ": expected a bool mask, got ", mask.dtype());
  LG_CHECK_DEVICE(mask.device() == input.device(), op, ": the mask is on ", mask.device(),
                  ", the input on ", input.device());
  const Shape shape = broadcast_shapes(input.shape(), mask.shape(), op);
  Tensor positions;
  {
    NoGradGuard no_grad;
    positions = flat_true_positions(expand(mask, shape));
  }
  return index_select(reshape(expand(input, shape), {shape_numel(shape, op)}), 0, positions);
}

Tensor masked_scatter(const Tensor& input, const Tensor& mask, const Tensor& source) {
  LG_PROFILE_OP(input, mask, source);
  const char* op = "masked_scatter";
  LG_CHECK(input.defined() && mask.defined() && source.defined(), op,
           ": expected a defined input, mask and source, got an undefined Tensor()");
  LG_CHECK_DTYPE(mask.dtype() == kBool, op, ": expected a bool mask, got ", mask.dtype());
  LG_CHECK_DTYPE(source.dtype() == input.dtype(), op, ": expected source of input's dtype ",
                 input.dtype(), ", got ", source.dtype());
  LG_CHECK_DEVICE(mask.device() == input.device() && source.device() == input.device(), op,
                  ": expected input, mask and source on one device, got ", input.device(), ", ",
                  mask.device(), " and ", source.device());
  const Shape shape = broadcast_shapes(input.shape(), mask.shape(), op);
  Tensor positions;
  {
    NoGradGuard no_grad;
    positions = flat_true_positions(expand(mask, shape));
  }
  const std::int64_t count = positions.size(0);
  LG_CHECK_SHAPE(source.numel() >= count, op, ": the mask has ", count,
                 " true places but source only ", source.numel(), " elements (shape ",
                 source.shape(), ")");
  // The mask's places, in row-major order, take source's first elements (index_copy carries
  // the gradients: source's first count elements get the gradient there, input the rest).
  const Tensor flat = reshape(expand(input, shape), {shape_numel(shape, op)});
  const Tensor values = narrow(reshape(source, {source.numel()}), 0, 0, count);
  return reshape(index_copy(flat, 0, positions, values), shape);
}

Tensor count_nonzero(const Tensor& input, const DimList& dims) {
  LG_PROFILE_OP(input);
  LG_CHECK(input.defined(), "count_nonzero: expected a defined input, got an undefined Tensor()");
  return sum(input.dtype() == kBool ? input : ne(input, 0.0), dims);
}

Tensor index_fill(const Tensor& input, std::int64_t dim, const Tensor& index, double value) {
  LG_PROFILE_OP(input, index);
  const char* op = "index_fill";
  if (input.defined() && input.dim() == 0) {
    return on_one_element_row(op, input, dim, Tensor(), [&](const Tensor& row, const Tensor&) {
      return index_fill(row, 0, index, value);
    });
  }
  const std::int64_t d = check_slice_index(op, input, dim, index, /*negative_wraps=*/true);
  LG_CHECK_DTYPE(scalar_fits(value, input.dtype()), op, ": value ", value,
                 " cannot be converted to dtype ", input.dtype(), " without overflow");
  // Which slices the index names: a count per slice, > 0 where named, along dim.
  const std::int64_t size = input.size(d);
  const TensorOptions float_options = TensorOptions(kFloat32).device(input.device());
  Tensor flat = reshape(index, {index.numel()}).to(kInt64);
  flat = where(lt(flat, 0.0), add(flat, static_cast<double>(size)), flat);  // -1 is size - 1
  const Tensor counts =
      ops::index_select_backward(ones({index.numel()}, float_options), 0, flat, {size});
  Shape along(static_cast<std::size_t>(input.dim()), 1);
  along[static_cast<std::size_t>(d)] = size;
  const Tensor named = reshape(gt(counts, 0.0), along);
  return where(named, full({}, value, TensorOptions(input.dtype()).device(input.device())), input);
}

namespace {

// index_copy's and index_reduce's operands checked (index as index_add's; source of input's dtype
// and device, input's shape but index.numel() along dim); returns the wrapped dim.
std::int64_t check_slice_source(const char* op, const Tensor& input, std::int64_t dim,
                                const Tensor& index, const Tensor& source) {
  const std::int64_t d = check_slice_index(op, input, dim, index);
  LG_CHECK(source.defined(), op, ": expected a defined source, got an undefined Tensor()");
  LG_CHECK_DTYPE(source.dtype() == input.dtype(), op, ": the source is ", source.dtype(),
                 ", the input ", input.dtype(), " (expected the same dtype)");
  LG_CHECK_DEVICE(source.device() == input.device(), op, ": the source is on ", source.device(),
                  ", the input on ", input.device());
  Shape expected = input.shape();
  expected[static_cast<std::size_t>(d)] = index.numel();
  LG_CHECK_SHAPE(source.shape() == expected, op, ": expected a source of shape ", expected,
                 " (the input's ", input.shape(), " with ", index.numel(), " along dim ", d,
                 "), got ", source.shape());
  return d;
}

// A slice index as a scatter index of source's shape: index[i] at every element of source's
// i-th slice along d (an expanded view).
Tensor spread_index(const Tensor& index, std::int64_t d, const Tensor& source) {
  Shape shape(static_cast<std::size_t>(source.dim()), 1);
  shape[static_cast<std::size_t>(d)] = index.numel();
  return expand(reshape(index.to(kInt64), shape), source.shape());
}

}  // namespace

Tensor index_copy(const Tensor& input, std::int64_t dim, const Tensor& index,
                  const Tensor& source) {
  LG_PROFILE_OP(input, index, source);
  if (input.defined() && input.dim() == 0) {
    return on_one_element_row(
        "index_copy", input, dim, source,
        [&](const Tensor& row, const Tensor& src) { return index_copy(row, 0, index, src); });
  }
  const std::int64_t d = check_slice_source("index_copy", input, dim, index, source);
  return scatter(input, d, spread_index(index, d, source), source);
}

Tensor index_reduce(const Tensor& input, std::int64_t dim, const Tensor& index,
                    const Tensor& source, std::string_view reduce, bool include_self) {
  LG_PROFILE_OP(input, index, source);
  const char* op = "index_reduce";
  if (input.defined() && input.dim() == 0) {
    return on_one_element_row(op, input, dim, source, [&](const Tensor& row, const Tensor& src) {
      return index_reduce(row, 0, index, src, reduce, include_self);
    });
  }
  LG_CHECK(reduce == "prod" || reduce == "mean" || reduce == "amax" || reduce == "amin", op,
           ": expected reduce to be \"prod\", \"mean\", \"amax\" or \"amin\" (index_add ",
           "sums), got \"", reduce, "\"");
  const std::int64_t d = check_slice_source(op, input, dim, index, source);
  return scatter_reduce(input, d, spread_index(index, d, source), source, reduce, include_self);
}

// ---- Splitting -------------------------------------------------------------------------------

Tensor narrow(const Tensor& input, std::int64_t dim, std::int64_t start, std::int64_t length) {
  LG_PROFILE_OP(input);
  const char* op = "narrow";
  std::int64_t d = 0;
  const std::int64_t size = dim_size(input, dim, op, &d);
  LG_CHECK(start >= -size && start <= size, op, ": start ", start, " is out of range for dim ", d,
           " of size ", size, " (expected [", -size, ", ", size, "])");
  if (start < 0) start += size;
  LG_CHECK(length >= 0 && length <= size - start, op, ": start ", start, " + length ", length,
           " exceeds dim ", d, " of size ", size, " (input of shape ", input.shape(), ")");
  return slice(input, d, start, start + length);
}

std::vector<Tensor> split(const Tensor& input, std::int64_t split_size, std::int64_t dim) {
  LG_PROFILE_OP(input);
  const char* op = "split";
  std::int64_t d = 0;
  const std::int64_t size = dim_size(input, dim, op, &d);
  LG_CHECK(split_size > 0 || (split_size == 0 && size == 0), op, ": split_size ", split_size,
           " cannot split dim ", d, " of size ", size, " (expected a positive split_size)");
  std::vector<Tensor> pieces;
  if (size == 0) {
    pieces.push_back(slice(input, d, 0, 0));
    return pieces;
  }
  for (std::int64_t start = 0; start < size; start += split_size)
    pieces.push_back(slice(input, d, start, std::min(start + split_size, size)));
  return pieces;
}

std::vector<Tensor> split_with_sizes(const Tensor& input,
                                     const std::vector<std::int64_t>& split_sizes,
                                     std::int64_t dim) {
  LG_PROFILE_OP(input);
  const char* op = "split_with_sizes";
  std::int64_t d = 0;
  const std::int64_t size = dim_size(input, dim, op, &d);
  std::int64_t total = 0;
  for (const std::int64_t s : split_sizes) {
    LG_CHECK(s >= 0 && s <= size - total, op, ": split_sizes ", Shape(split_sizes),
             " do not add up to dim ", d, " of size ", size, " (a negative size, or too much)");
    total += s;
  }
  LG_CHECK(total == size, op, ": split_sizes ", Shape(split_sizes), " add up to ", total, ", dim ",
           d, " has size ", size);
  std::vector<Tensor> pieces;
  pieces.reserve(split_sizes.size());
  std::int64_t start = 0;
  for (const std::int64_t s : split_sizes) {
    pieces.push_back(slice(input, d, start, start + s));
    start += s;
  }
  return pieces;
}

std::vector<Tensor> chunk(const Tensor& input, std::int64_t chunks, std::int64_t dim) {
  LG_PROFILE_OP(input);
  const char* op = "chunk";
  LG_CHECK(chunks > 0, op, ": expected a positive number of chunks, got ", chunks);
  std::int64_t d = 0;
  const std::int64_t size = dim_size(input, dim, op, &d);
  if (size == 0) {  // `chunks` empty views, as torch.chunk
    return std::vector<Tensor>(static_cast<std::size_t>(chunks), slice(input, d, 0, 0));
  }
  return split(input, size / chunks + (size % chunks != 0), d);
}

std::vector<Tensor> unbind(const Tensor& input, std::int64_t dim) {
  LG_PROFILE_OP(input);
  std::int64_t d = 0;
  const std::int64_t size = dim_size(input, dim, "unbind", &d);
  std::vector<Tensor> pieces;
  pieces.reserve(static_cast<std::size_t>(size));
  for (std::int64_t i = 0; i < size; ++i)
    pieces.push_back(select(input, d, i));
  return pieces;
}

// ---- Rearranging -----------------------------------------------------------------------------

Tensor flip(const Tensor& input, const std::vector<std::int64_t>& dims) {
  LG_PROFILE_OP(input);
  const char* op = "flip";
  LG_CHECK(input.defined(), op, ": expected a defined input, got an undefined Tensor()");
  std::vector<bool> seen(static_cast<std::size_t>(std::max<std::int64_t>(input.dim(), 1)));
  Tensor out = input;
  for (const std::int64_t dim : dims) {
    const std::int64_t d = wrap_dim(dim, input.dim(), op);
    LG_CHECK(!seen[d], op, ": dim ", d, " appears twice in dims ", Shape(dims));
    seen[d] = true;
    if (input.dim() == 0 || input.size(d) <= 1) continue;
    const std::int64_t n = input.size(d);
    out = index_select(out, d,
                       arange(static_cast<double>(n - 1), -1.0, -1.0,
                              TensorOptions(kInt64).device(input.device())));
  }
  return out.is_same(input) ? clone(input) : out;
}

Tensor roll(const Tensor& input, const DimList& shifts, const DimList& dims) {
  LG_PROFILE_OP(input);
  const char* op = "roll";
  LG_CHECK(input.defined(), op, ": expected a defined input, got an undefined Tensor()");
  if (dims.empty()) {
    LG_CHECK(shifts.size() == 1, op, ": with no dims, expected one shift (over the flattened ",
             "input), got ", shifts.size());
    return reshape(roll(flatten(input), shifts, DimList(0)), input.shape());
  }
  LG_CHECK(shifts.size() == dims.size(), op, ": ", shifts.size(), " shifts for ", dims.size(),
           " dims (expected one shift per dim)");
  Tensor out = input;
  for (std::size_t i = 0; i < dims.size(); ++i) {
    const std::int64_t d = wrap_dim(dims[i], input.dim(), op);
    if (input.dim() == 0) continue;
    const std::int64_t n = input.size(d);
    if (n == 0) continue;
    const std::int64_t shift = (shifts[i] % n + n) % n;
    if (shift == 0) continue;
    out = cat({narrow(out, d, n - shift, shift), narrow(out, d, 0, n - shift)}, d);
  }
  return out.is_same(input) ? clone(input) : out;
}

Tensor repeat(const Tensor& input, const std::vector<std::int64_t>& repeats) {
  LG_PROFILE_OP(input);
  const char* op = "repeat";
  LG_CHECK(input.defined(), op, ": expected a defined input, got an undefined Tensor()");
  const std::size_t rank = repeats.size();
  LG_CHECK_SHAPE(rank >= static_cast<std::size_t>(input.dim()), op, ": ", rank,
                 " repeats for an input of shape ", input.shape(),
                 " (expected at least one per dim)");
  if (rank == 0) return clone(input);
  Shape padded(rank - input.dim(), 1);
  padded.insert(padded.end(), input.shape().begin(), input.shape().end());
  // (1, s0, 1, s1, ...) expanded to (r0, s0, r1, s1, ...), reshaped to (r0 s0, r1 s1, ...).
  Shape interleaved, expanded, result;
  for (std::size_t i = 0; i < rank; ++i) {
    LG_CHECK(repeats[i] >= 0, op, ": repeats ", Shape(repeats), " hold a negative count");
    interleaved.insert(interleaved.end(), {1, padded[i]});
    expanded.insert(expanded.end(), {repeats[i], padded[i]});
    result.push_back(checked_mul(repeats[i], padded[i], op));
  }
  shape_numel(result, op);
  // All ones: the reshapes are views, and torch's repeat returns a copy.
  if (std::all_of(repeats.begin(), repeats.end(), [](std::int64_t r) { return r == 1; })) {
    return clone(reshape(input, result));
  }
  return reshape(expand(reshape(input, interleaved), expanded), result);
}

Tensor tile(const Tensor& input, const std::vector<std::int64_t>& reps) {
  LG_PROFILE_OP(input);
  LG_CHECK(input.defined(), "tile: expected a defined input, got an undefined Tensor()");
  for (const std::int64_t r : reps) {  // before padding: repeat would name itself and the padded
    LG_CHECK_SHAPE(r >= 0, "tile: reps ", Shape(reps), " hold a negative count (input shape ",
                   input.shape(), ")");
  }
  std::vector<std::int64_t> padded;
  if (static_cast<std::int64_t>(reps.size()) < input.dim())
    padded.assign(static_cast<std::size_t>(input.dim()) - reps.size(), 1);
  padded.insert(padded.end(), reps.begin(), reps.end());
  return repeat(input, padded);
}

Tensor repeat_interleave(const Tensor& input, std::int64_t repeats,
                         std::optional<std::int64_t> dim) {
  LG_PROFILE_OP(input);
  const char* op = "repeat_interleave";
  LG_CHECK(input.defined(), op, ": expected a defined input, got an undefined Tensor()");
  LG_CHECK(repeats >= 0, op, ": expected a non-negative number of repeats, got ", repeats);
  const Tensor x = dim.has_value() ? input : reshape(input, {input.numel()});
  std::int64_t d = 0;
  const std::int64_t n = dim_size(x, dim.value_or(0), op, &d);
  // Source position of each output position along d: i repeated `repeats` times.
  std::vector<std::int64_t> sources(static_cast<std::size_t>(checked_mul(n, repeats, op)));
  for (std::size_t j = 0; j < sources.size(); ++j)
    sources[j] = static_cast<std::int64_t>(j) / repeats;
  const auto count = static_cast<std::int64_t>(sources.size());
  return index_select(x, d, tensor(sources, {count}).to(x.device()));
}

std::vector<Tensor> meshgrid(const std::vector<Tensor>& tensors, std::string_view indexing) {
  LG_PROFILE_OP(tensors);
  const char* op = "meshgrid";
  LG_CHECK(!tensors.empty(), op, ": expected at least one tensor, got none");
  LG_CHECK(indexing == "ij" || indexing == "xy", op, ": indexing must be \"ij\" or \"xy\", got \"",
           indexing, "\"");
  autograd::check_operands(op, tensors);
  Shape shape;
  for (std::size_t i = 0; i < tensors.size(); ++i) {
    const Tensor& t = tensors[i];
    LG_CHECK_SHAPE(t.dim() <= 1, op, ": expected 0-d or 1-d tensors, got shape ", t.shape(),
                   " (tensor ", i, ")");
    shape.push_back(t.numel());
  }
  // "xy": the first two tensors' dims swapped.
  std::vector<std::size_t> place(tensors.size());
  for (std::size_t i = 0; i < place.size(); ++i)
    place[i] = i;
  if (indexing == "xy" && tensors.size() >= 2) {
    std::swap(place[0], place[1]);
    std::swap(shape[0], shape[1]);
  }
  std::vector<Tensor> grids;
  for (std::size_t i = 0; i < tensors.size(); ++i) {
    Shape along(tensors.size(), 1);
    along[place[i]] = tensors[i].numel();
    grids.push_back(expand(reshape(tensors[i], along), shape));
  }
  return grids;
}

namespace {

// tril (lower) and triu: input where the column minus the row is <= diagonal (>=), 0 elsewhere.
Tensor triangle(const char* op, const Tensor& input, std::int64_t diagonal, bool lower) {
  LG_CHECK(input.defined(), op, ": expected a defined input, got an undefined Tensor()");
  LG_CHECK_SHAPE(input.dim() >= 2, op, ": expected an input of at least 2 dims, got shape ",
                 input.shape());
  const TensorOptions index_options = TensorOptions(kInt64).device(input.device());
  Tensor keep;
  {
    NoGradGuard no_grad;
    const Tensor offset =
        sub(unsqueeze(arange(static_cast<double>(input.size(-1)), index_options), 0),
            unsqueeze(arange(static_cast<double>(input.size(-2)), index_options), 1));
    const double d = static_cast<double>(diagonal);
    keep = lower ? le(offset, d) : ge(offset, d);
  }
  return where(keep, input, zeros({}, input.options()));
}

}  // namespace

Tensor tril(const Tensor& input, std::int64_t diagonal) {
  LG_PROFILE_OP(input);
  return triangle("tril", input, diagonal, /*lower=*/true);
}

Tensor triu(const Tensor& input, std::int64_t diagonal) {
  LG_PROFILE_OP(input);
  return triangle("triu", input, diagonal, /*lower=*/false);
}

const char* pad_mode_name(PadMode mode) {
  switch (mode) {
    case PadMode::Constant:
      return "constant";
    case PadMode::Reflect:
      return "reflect";
    case PadMode::Replicate:
      return "replicate";
    case PadMode::Circular:
      return "circular";
  }
  return "unknown";
}

namespace {

// Calls f(d, before, after) for each dim that `pad` pads, the last dim first.
template <typename F>
void for_each_padded_dim(const Tensor& input, const std::vector<std::int64_t>& pad, F&& f) {
  for (std::size_t i = 0; i < pad.size() / 2; ++i)
    f(input.dim() - 1 - static_cast<std::int64_t>(i), pad[2 * i], pad[2 * i + 1]);
}

// The checks every mode shares: pairs for at most input.dim() dims, and no dim cut below 0.
// Returns the padded shape.
Shape padded_shape(const char* op, const Tensor& input, const std::vector<std::int64_t>& pad) {
  LG_CHECK(input.defined(), op, ": expected a defined input, got an undefined Tensor()");
  LG_CHECK_SHAPE(pad.size() % 2 == 0 && pad.size() / 2 <= static_cast<std::size_t>(input.dim()), op,
                 ": expected (before, after) pairs for at most the ", input.dim(),
                 " dims of an input of shape ", input.shape(), ", got pad ", Shape(pad));
  Shape shape = input.shape();
  for_each_padded_dim(input, pad, [&](std::int64_t d, std::int64_t before, std::int64_t after) {
    const std::int64_t n = shape[d];
    shape[d] = checked_add(checked_add(n, before, op), after, op);
    LG_CHECK_SHAPE(shape[d] >= 0 && -before <= n && -after <= n, op, ": pad ", Shape(pad),
                   " leaves no valid dim ", d, " from an input of shape ", input.shape());
  });
  return shape;
}

// Note [Padding by copies]
//   reflect, replicate and circular padding is index_select along each padded dim with the source
//   position of every output position o. reflect and replicate take i = o - before in the input's
//   own coordinates and map it into [0, n) by reflecting at the ends (-i, 2 (n - 1) - i) or
//   clamping, so a cut (negative amount) at one end leaves the other end's mirror where PyTorch's
//   kernels put it (reflect (-1, 3) of x0 .. x4 is x1 x2 x3 x4 x3 x2 x1). circular wraps within
//   what the cuts leave, as PyTorch's does (x1 x2 x3 x4 x1 x2 x3). index_select's gradient adds
//   the upstream gradient of every copy into its source (index_add: an element copied k times
//   gets k terms) and differentiates again, so pad needs no backward of its own. Two or more
//   padded dims are merged into one (a view of a contiguous input) and padded in one pass, as
//   PyTorch's reflection_pad2d, with one index of each output position's source in the merged
//   dim, built on the host and copied to the input's device (one int64 per element of a padded
//   block, up to 2^22; a larger block, a 3-D volume, goes a dim at a time, a pass each).
// The source positions of a padded dim, an int64 CPU tensor (allocated as a tensor, so that a
// size beyond memory is pad's Error, not std::bad_alloc).
Tensor pad_sources(PadMode mode, std::int64_t n, std::int64_t before, std::int64_t after) {
  const std::int64_t size = n + before + after;
  const std::int64_t cut_before = std::max<std::int64_t>(-before, 0);
  const std::int64_t kept = n - cut_before - std::max<std::int64_t>(-after, 0);
  Tensor sources = empty_for("pad", {size}, TensorOptions(kInt64));
  std::int64_t* source = sources.data_ptr<std::int64_t>();
  for (std::int64_t o = 0; o < size; ++o) {
    std::int64_t i = o - before;
    switch (mode) {
      case PadMode::Reflect:
        i = i < 0 ? -i : (i >= n ? 2 * (n - 1) - i : i);
        break;
      case PadMode::Replicate:
        i = std::clamp<std::int64_t>(i, 0, n - 1);
        break;
      case PadMode::Circular:  // within the kept [cut_before, cut_before + kept)
        i = cut_before + ((i - cut_before) % kept + kept) % kept;
        break;
      case PadMode::Constant:
        break;
    }
    source[o] = i;
  }
  return sources;
}

// Indices of a merged pass at most: larger padded blocks (a 3-D volume) go a dim at a time.
constexpr std::int64_t kMergedPadIndexLimit = std::int64_t{1} << 22;

Tensor pad_by_copies(const Tensor& input, const std::vector<std::int64_t>& pad, PadMode mode) {
  const char* op = "pad";
  const Shape out_shape = padded_shape(op, input, pad);
  // The checks, and each padded dim's source positions (sources[j] of dim first + j).
  const auto dims = static_cast<std::int64_t>(pad.size() / 2);
  const std::int64_t first = input.dim() - dims;  // the first padded dim
  std::vector<Tensor> sources(static_cast<std::size_t>(dims));
  for_each_padded_dim(input, pad, [&](std::int64_t d, std::int64_t before, std::int64_t after) {
    const std::int64_t n = input.size(d);
    const std::int64_t grows = std::max(before, after);
    const std::int64_t kept =
        n - std::max<std::int64_t>(-before, 0) - std::max<std::int64_t>(-after, 0);
    LG_CHECK_SHAPE(grows <= 0 || kept > 0, op, ": ", pad_mode_name(mode), " padding of dim ", d,
                   " needs elements to copy, got an input of shape ", input.shape(), " and pad ",
                   Shape(pad));
    LG_CHECK_SHAPE(mode != PadMode::Reflect || grows < n, op, ": reflect padding of dim ", d,
                   " must be smaller than its size ", n,
                   " (the edge element is not repeated), got pad ", Shape(pad),
                   " for an input of shape ", input.shape());
    LG_CHECK_SHAPE(mode != PadMode::Circular || grows <= n, op, ": circular padding of dim ", d,
                   " must be at most its size ", n, ", got pad ", Shape(pad),
                   " for an input of shape ", input.shape());
    sources[static_cast<std::size_t>(d - first)] = pad_sources(mode, n, before, after);
  });
  std::int64_t block = 1;  // the padded output block's elements
  for (std::int64_t d = first; d < input.dim(); ++d)
    block = checked_mul(block, out_shape[d], op);
  if (dims >= 2 && block <= kMergedPadIndexLimit) {
    // One pass: the padded dims merged into one (a view of a contiguous input), and one index of
    // each output position's source in that merged dim.
    Tensor merged = empty_for(op, {block}, TensorOptions(kInt64));
    std::int64_t* index = merged.data_ptr<std::int64_t>();
    std::vector<const std::int64_t*> source_of(static_cast<std::size_t>(dims));
    for (std::int64_t j = 0; j < dims; ++j)
      source_of[j] = sources[j].data_ptr<std::int64_t>();
    std::vector<std::int64_t> position(static_cast<std::size_t>(dims), 0);  // first dim first
    for (std::int64_t k = 0; k < block; ++k) {
      std::int64_t source = 0;
      for (std::int64_t j = 0; j < dims; ++j)
        source = source * input.size(first + j) + source_of[j][position[j]];
      index[k] = source;
      for (std::int64_t j = dims - 1; j >= 0 && ++position[j] == out_shape[first + j]; --j)
        position[j] = 0;
    }
    Shape flat(input.shape().begin(), input.shape().begin() + first);
    flat.push_back(shape_numel(Shape(input.shape().begin() + first, input.shape().end()), op));
    return index_select(input.reshape(flat), first, merged.to(input.device())).reshape(out_shape);
  }
  Tensor out = input;
  for_each_padded_dim(input, pad, [&](std::int64_t d, std::int64_t before, std::int64_t after) {
    if (before == 0 && after == 0) return;
    out = index_select(out, d, sources[static_cast<std::size_t>(d - first)].to(input.device()));
  });
  return out.is_same(input) ? clone(input) : out;
}

}  // namespace

Tensor pad(const Tensor& input, const std::vector<std::int64_t>& pad, PadMode mode, double value) {
  LG_PROFILE_OP(input);
  if (mode != PadMode::Constant) {
    LG_CHECK(value == 0.0, "pad: a value (", value, ") is only for constant padding, not ",
             pad_mode_name(mode));
    return pad_by_copies(input, pad, mode);
  }
  const char* op = "pad";
  padded_shape(op, input, pad);
  Tensor out = input;
  for_each_padded_dim(input, pad, [&](std::int64_t d, std::int64_t before, std::int64_t after) {
    const std::int64_t n = out.size(d);
    const std::int64_t cut_before = std::max<std::int64_t>(-before, 0);
    const std::int64_t cut_after = std::max<std::int64_t>(-after, 0);
    if (cut_before > 0 || cut_after > 0) {
      out = narrow(out, d, cut_before, n - cut_before - cut_after);
    }
    std::vector<Tensor> parts;
    const auto block = [&](std::int64_t size) {
      Shape shape = out.shape();
      shape[d] = size;
      return full(shape, value, out.options());
    };
    if (before > 0) parts.push_back(block(before));
    parts.push_back(out);
    if (after > 0) parts.push_back(block(after));
    if (parts.size() > 1) out = cat(parts, d);
  });
  return out.is_same(input) ? clone(input) : out;
}

Tensor pad(const Tensor& input, const std::vector<std::int64_t>& pad, double value) {
  return leangrad::pad(input, pad, PadMode::Constant, value);
}

Tensor one_hot(const Tensor& indices, std::int64_t num_classes) {
  LG_PROFILE_OP(indices);
  const char* op = "one_hot";
  LG_CHECK(indices.defined(), op, ": expected defined indices, got an undefined Tensor()");
  LG_CHECK_DTYPE(indices.dtype() == kInt64, op, ": expected int64 indices, got ", indices.dtype());
  LG_CHECK(num_classes >= -1, op, ": expected num_classes >= 0, or -1, got ", num_classes);
  NoGradGuard no_grad;
  if (indices.numel() > 0) {
    const std::int64_t low = amin(indices).item<std::int64_t>();
    const std::int64_t high = amax(indices).item<std::int64_t>();
    LG_CHECK(low >= 0, op, ": class index ", low, " is negative");
    if (num_classes == -1) num_classes = high + 1;
    LG_CHECK(high < num_classes, op, ": class index ", high, " is out of range for ", num_classes,
             " classes");
  } else {
    LG_CHECK(num_classes >= 0, op, ": cannot infer num_classes from empty indices (pass it)");
  }
  const Tensor classes =
      arange(static_cast<double>(num_classes), TensorOptions(kInt64).device(indices.device()));
  return eq(unsqueeze(indices, -1), classes).to(kInt64);
}

Tensor index_put(const Tensor& self, const std::vector<std::optional<Tensor>>& indices,
                 const Tensor& values, bool accumulate) {
  LG_PROFILE_OP(self, values);
  LG_CHECK(self.defined() && values.defined(), "index_put: expected a defined self and values");
  std::vector<indexing::TensorIndex> list;
  bool holds_tensor = false;
  for (const std::optional<Tensor>& index : indices) {
    if (index && index->defined()) {
      list.emplace_back(*index);
      holds_tensor = true;
    } else {
      list.emplace_back(indexing::Slice());
    }
  }
  Tensor out = clone(self);
  if (holds_tensor) return autograd::advanced_index_put_(out, list, values, accumulate);
  if (accumulate) {
    out.index(list).add_(values);
  } else {
    out.index(list).copy_(values);
  }
  return out;
}

}  // namespace leangrad
