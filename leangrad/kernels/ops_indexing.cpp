// Tensor-level entries of the indexing ops (kernels/ops.h): embedding, index_select, gather,
// scatter_add and scatter, with their gradients. Checks, the int64 indices made contiguous, the
// outputs allocated and the launchers of kernels/backend.h. Gradients and scatter_add's sums
// accumulate in float32 (float64 for float64) and are cast to the operand's dtype.
//
// Every index of a CPU tensor is checked here, so a bad one raises an Error naming it and its
// position; on CUDA that would synchronise, and the kernels give NaN (0 in an integral dtype)
// where they read and add nothing where they write, as cross_entropy's targets.
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <string>

#include <leangrad/core/creation.h>
#include <leangrad/core/cuda.h>
#include <leangrad/core/views.h>
#include <leangrad/kernels/backend.h>
#include <leangrad/kernels/cpu/nonzero.h>
#include <leangrad/kernels/cpu/parallel_for.h>
#include <leangrad/kernels/creation.h>
#include <leangrad/kernels/ops.h>
#include <leangrad/kernels/ops_checks.h>

namespace leangrad::ops {

namespace {

// Each index of a contiguous CPU int64 tensor is in [0, size); `what` names what it indexes. A
// branchless pass, vectorised and on every thread, finds whether any is out of range (as
// unsigned, a negative index is past every size); only then are they walked in order for the
// first, which the Error names.
void check_index_values(const char* op, const Tensor& indices, std::int64_t size,
                        const std::string& what) {
  if (!indices.device().is_cpu()) return;
  const std::int64_t* idx = indices.data_ptr<std::int64_t>();
  const std::int64_t n = indices.numel();
  const auto bound = static_cast<std::uint64_t>(size);
  std::atomic<bool> out_of_range{false};
  kernels::cpu::parallel_for(n, kernels::cpu::kElementwiseGrain,
                             [&](std::int64_t begin, std::int64_t end) {
                               std::uint64_t outside = 0;
                               for (std::int64_t i = begin; i < end; ++i)
                                 outside |= static_cast<std::uint64_t>(idx[i]) >= bound;
                               if (outside != 0)
                                 out_of_range.store(true, std::memory_order_relaxed);
                             });
  if (!out_of_range.load()) return;
  for (std::int64_t i = 0; i < n; ++i) {
    LG_CHECK(idx[i] >= 0 && idx[i] < size, op, ": index ", idx[i], " at position ", i,
             " is out of range for ", what, " (expected [0, ", size - 1, "])");
  }
}

// "dim 1 of the input, of size 4": what an index of index_select, gather or scatter_add indexes.
std::string input_dim(std::int64_t dim, std::int64_t size) {
  return "dim " + std::to_string(dim) + " of the input, of size " + std::to_string(size);
}

// Defined, int64 (int32 too where allow_int32) and on `on`'s device.
void check_indices(const char* op, const Tensor& indices, const Tensor& on, const char* on_name,
                   bool allow_int32 = false) {
  LG_CHECK(indices.defined(), op, ": expected defined indices, got an undefined Tensor()");
  LG_CHECK_DTYPE(indices.dtype() == kInt64 || (allow_int32 && indices.dtype() == kInt32), op,
                 ": expected ", allow_int32 ? "int64 or int32" : "int64", " indices, got ",
                 indices.dtype(), " indices of shape ", indices.shape(),
                 " (convert them with .to(kInt64))");
  LG_CHECK_DEVICE(indices.device() == on.device(), op, ": indices are on ", indices.device(), ", ",
                  on_name, " on ", on.device());
}

// The geometry of gather / scatter_add over an index of shape `index_shape` (contiguous) into a
// self of `self_shape` and `self_strides` (check_gather_shapes has passed), 0-d counted as (1).
GatherGeometry gather_geometry(const Shape& index_shape, const Shape& self_shape,
                               const Strides& self_strides, std::int64_t dim) {
  GatherGeometry g;
  g.dims = static_cast<int>(std::max<std::size_t>(index_shape.size(), 1));
  g.dim = static_cast<int>(dim);
  for (int d = 0; d < g.dims; ++d) {
    g.sizes[d] = index_shape.empty() ? 1 : index_shape[d];
    g.self_strides[d] = self_shape.empty() ? 1 : self_strides[d];
  }
  g.self_dim_size = self_shape.empty() ? 1 : self_shape[dim];
  g.self_extent = 1;
  for (std::size_t d = 0; d < self_shape.size(); ++d) {
    if (self_shape[d] == 0) g.self_extent = 0;
  }
  for (std::size_t d = 0; d < self_shape.size() && g.self_extent > 0; ++d) {
    g.self_extent += (self_shape[d] - 1) * self_strides[d];
  }
  g.inner = run_layout(index_shape, dim).inner;
  return g;
}

// gather's and scatter_add's shape rules, as PyTorch's: the index has self's rank (0-d and 1
// element 1-d alike; at most kMaxDims, GatherGeometry's), and no dim but `dim` larger than self's;
// `src` (scatter_add) is at least the index's size in every dim.
void check_gather_shapes(const char* op, const Shape& self, std::int64_t dim, const Tensor& index,
                         const Tensor* src) {
  const auto self_dim = static_cast<std::int64_t>(self.size());
  const std::int64_t rank = std::max<std::int64_t>(self_dim, 1);
  LG_CHECK_SHAPE(rank <= kMaxDims, op, ": an input of shape ", self, " has ", rank,
                 " dims (at most ", kMaxDims, " are supported)");
  LG_CHECK_SHAPE(std::max<std::int64_t>(index.dim(), 1) == rank, op, ": index of shape ",
                 index.shape(), " has ", index.dim(), " dims, the input of shape ", self, " has ",
                 self_dim, " (expected as many)");
  if (index.dim() == 0 || self_dim == 0) {
    LG_CHECK_SHAPE(index.numel() <= 1 || self_dim > 0, op, ": index of shape ", index.shape(),
                   " is larger than the 0-d input");
  } else {
    for (std::int64_t d = 0; d < rank; ++d) {
      LG_CHECK_SHAPE(d == dim || index.size(d) <= self[d], op, ": index of shape ", index.shape(),
                     " is larger than the input of shape ", self, " in dim ", d, " (only dim ", dim,
                     ", the one indexed, may be)");
    }
  }
  if (src == nullptr) return;
  LG_CHECK_SHAPE(std::max<std::int64_t>(src->dim(), 1) == rank, op, ": src of shape ", src->shape(),
                 " has ", src->dim(), " dims, the index of shape ", index.shape(), " has ",
                 index.dim(), " (expected as many)");
  for (std::int64_t d = 0; d < index.dim() && src->dim() > 0; ++d) {
    LG_CHECK_SHAPE(index.size(d) <= src->size(d), op, ": index of shape ", index.shape(),
                   " is larger than src of shape ", src->shape(), " in dim ", d);
  }
}

void launch_index_select(const Tensor& out, const Tensor& in, const Tensor& idx, std::int64_t outer,
                         std::int64_t size, std::int64_t inner) {
  const cuda::DeviceGuard guard(in.device());
  switch (in.device().type) {
    case DeviceType::CPU:
      kernels::cpu::index_select(in.dtype(), out.data_ptr(), in.data_ptr(),
                                 idx.data_ptr<std::int64_t>(), outer, size, idx.numel(), inner);
      break;
    case DeviceType::CUDA:
      kernels::cuda::index_select(in.dtype(), out.data_ptr(), in.data_ptr(),
                                  idx.data_ptr<std::int64_t>(), outer, size, idx.numel(), inner);
      break;
  }
}

// float32 for the 16-bit floats, the dtype itself otherwise: what the gradients and scatter_add
// sum in.
DType accumulation_dtype(DType dtype) {
  return dtype == kFloat16 || dtype == kBFloat16 ? kFloat32 : dtype;
}

// zeros(in_shape) in the accumulation dtype with grad's rows added at the index's (skip_index
// left out), cast to grad's dtype.
Tensor launch_index_select_backward(const Tensor& grad, const Tensor& idx, const Shape& in_shape,
                                    std::int64_t outer, std::int64_t size, std::int64_t inner,
                                    std::int64_t skip_index) {
  Tensor grad_in =
      zeros(in_shape, TensorOptions(accumulation_dtype(grad.dtype())).device(grad.device()));
  if (grad.numel() > 0) {
    const Tensor dy = contiguous(grad);
    const cuda::DeviceGuard guard(grad.device());
    switch (grad.device().type) {
      case DeviceType::CPU:
        kernels::cpu::index_select_backward(grad.dtype(), grad_in.data_ptr(), dy.data_ptr(),
                                            idx.data_ptr<std::int64_t>(), outer, size, idx.numel(),
                                            inner, skip_index);
        break;
      case DeviceType::CUDA:
        kernels::cuda::index_select_backward(grad.dtype(), grad_in.data_ptr(), dy.data_ptr(),
                                             idx.data_ptr<std::int64_t>(), outer, size, idx.numel(),
                                             inner, skip_index);
        break;
    }
  }
  return grad_in.dtype() == grad.dtype() ? grad_in : cast(grad_in, grad.dtype());
}

// An index tensor as the launchers take it: int64, contiguous.
Tensor contiguous_int64(const Tensor& index) {
  return contiguous(index.dtype() == kInt64 ? index : cast(index, kInt64));
}

}  // namespace

// ---- Embedding -------------------------------------------------------------------------------

Tensor embedding(const Tensor& weight, const Tensor& indices) {
  const char* op = "embedding";
  check_defined(op, weight, "weight");
  LG_CHECK_SHAPE(weight.dim() == 2, op,
                 ": expected a weight of shape (num_embeddings, embedding_dim), got ",
                 weight.shape());
  LG_CHECK_DTYPE(is_floating(weight.dtype()), op, ": expected a floating weight, got ",
                 weight.dtype());
  check_indices(op, indices, weight, "the weight");
  const std::int64_t num_embeddings = weight.size(0), dim = weight.size(1);
  const Tensor idx = contiguous(indices);
  check_index_values(op, idx, num_embeddings,
                     "a weight of " + std::to_string(num_embeddings) + " embeddings");
  Shape out_shape = indices.shape();
  out_shape.push_back(dim);
  Tensor out = empty(out_shape, weight.options());
  if (out.numel() == 0) return out;
  launch_index_select(out, contiguous(weight), idx, 1, num_embeddings, dim);
  return out;
}

Tensor embedding_backward(const Tensor& grad_out, const Tensor& indices,
                          std::int64_t num_embeddings, std::int64_t padding_idx) {
  const char* op = "embedding_backward";
  LG_CHECK(grad_out.defined(), op, ": expected a defined gradient");
  check_indices(op, indices, grad_out, "the gradient");
  LG_CHECK_SHAPE(
      grad_out.dim() == indices.dim() + 1 &&
          std::equal(indices.shape().begin(), indices.shape().end(), grad_out.shape().begin()),
      op, ": gradient of shape ", grad_out.shape(), " does not match indices of shape ",
      indices.shape(), " (expected (*indices.shape, embedding_dim))");
  const std::int64_t dim = grad_out.size(-1);
  return launch_index_select_backward(grad_out, contiguous(indices), {num_embeddings, dim}, 1,
                                      num_embeddings, dim, padding_idx);
}

// ---- index_select ----------------------------------------------------------------------------

Tensor nonzero(const Tensor& mask_in, bool flat) {
  check_defined("nonzero", mask_in, "mask");
  LG_CHECK_DTYPE(mask_in.dtype() == DType::Bool, "nonzero: expected a bool mask, got ",
                 mask_in.dtype(), " (shape ", mask_in.shape(), ")");
  LG_CHECK_DEVICE(mask_in.device().is_cpu(),
                  "nonzero: the fused kernel takes a CPU mask, got one on ", mask_in.device());
  const Tensor mask = contiguous(mask_in);
  const auto* bytes = static_cast<const std::uint8_t*>(mask.data_ptr());
  const std::int64_t count = kernels::cpu::count_true(bytes, mask.numel());
  Tensor out = empty(flat ? Shape{count} : Shape{count, mask.dim()}, TensorOptions(DType::Int64));
  if (count > 0 && (flat || mask.dim() > 0)) {
    kernels::cpu::true_positions(bytes, mask.numel(), flat ? Shape{} : mask.shape(),
                                 static_cast<std::int64_t*>(out.data_ptr()));
  }
  return out;
}

Tensor index_select(const Tensor& x, std::int64_t dim_in, const Tensor& index) {
  const char* op = "index_select";
  check_defined(op, x, "input");
  check_indices(op, index, x, "the input", /*allow_int32=*/true);
  LG_CHECK_SHAPE(index.dim() <= 1, op, ": expected a 0-d or 1-d index, got one of shape ",
                 index.shape());
  const std::int64_t dim = wrap_dim(dim_in, x.dim(), op);
  const Tensor idx = contiguous_int64(index);
  if (x.dim() == 0) {
    LG_CHECK_SHAPE(idx.numel() == 1, op, ": a 0-d input takes one index, got ", idx.numel());
  }
  const Shape& shape = x.shape();
  const std::int64_t size = x.dim() == 0 ? 1 : shape[dim];
  check_index_values(op, idx, size, input_dim(dim, size));
  Shape out_shape = shape;
  if (x.dim() > 0) out_shape[dim] = idx.numel();
  Tensor out = empty(out_shape, x.options());
  if (out.numel() == 0) return out;
  const RunLayout l = run_layout(shape, dim);
  launch_index_select(out, contiguous(x), idx, l.outer, size, l.inner);
  return out;
}

Tensor index_select_backward(const Tensor& grad, std::int64_t dim_in, const Tensor& index,
                             const Shape& x_shape) {
  const char* op = "index_select_backward";
  check_floating(op, grad, "gradient");
  check_indices(op, index, grad, "the gradient", /*allow_int32=*/true);
  const std::int64_t rank = static_cast<std::int64_t>(x_shape.size());
  const std::int64_t dim = wrap_dim(dim_in, rank, op);
  const Tensor idx = contiguous_int64(index);
  Shape grad_shape = x_shape;
  if (rank > 0) grad_shape[dim] = idx.numel();
  LG_CHECK_SHAPE(grad.shape() == grad_shape, op, ": gradient of shape ", grad.shape(),
                 " does not match an input of shape ", x_shape, " and ", idx.numel(),
                 " indices (expected ", grad_shape, ")");
  const std::int64_t size = rank == 0 ? 1 : x_shape[dim];
  check_index_values(op, idx, size, input_dim(dim, size));
  const RunLayout l = run_layout(x_shape, dim);
  return launch_index_select_backward(grad, idx, x_shape, l.outer, size, l.inner, -1);
}

namespace {

// acc (contiguous: of `dtype` for Assign, of accumulation_dtype(dtype) for the others) combined
// with src (of `dtype`) at the positions of the contiguous idx along dim; the shapes and the
// indices are checked by the caller.
void scatter_into(ScatterOp op, const Tensor& acc, DType dtype, std::int64_t dim, const Tensor& idx,
                  const Tensor& src) {
  if (idx.numel() == 0) return;
  // The part of src the index covers.
  Tensor s = src;
  if (s.dim() == idx.dim()) {
    for (std::int64_t d = 0; d < idx.dim(); ++d) {
      if (s.size(d) != idx.size(d)) s = views::slice(s, d, 0, idx.size(d), 1);
    }
  } else {  // one index element: src's first element, 0-d or 1-d against (1) or 0-d
    s = views::view(s.dim() == 0 ? s : views::slice(s, 0, 0, 1, 1), idx.shape());
  }
  s = contiguous(s);
  const GatherGeometry g = gather_geometry(idx.shape(), acc.shape(), acc.strides(), dim);
  const cuda::DeviceGuard guard(acc.device());
  switch (acc.device().type) {
    case DeviceType::CPU:
      kernels::cpu::scatter(op, dtype, acc.data_ptr(), s.data_ptr(), idx.data_ptr<std::int64_t>(),
                            g);
      break;
    case DeviceType::CUDA:
      kernels::cuda::scatter(op, dtype, acc.data_ptr(), s.data_ptr(), idx.data_ptr<std::int64_t>(),
                             g);
      break;
  }
}

}  // namespace

// ---- gather, scatter_add ---------------------------------------------------------------------

Tensor gather(const Tensor& x, std::int64_t dim_in, const Tensor& index) {
  const char* op = "gather";
  check_defined(op, x, "input");
  check_indices(op, index, x, "the input");
  const std::int64_t dim = wrap_dim(dim_in, x.dim(), op);
  check_gather_shapes(op, x.shape(), dim, index, nullptr);
  const Tensor idx = contiguous(index);
  check_index_values(op, idx, x.dim() == 0 ? 1 : x.size(dim),
                     input_dim(dim, x.dim() == 0 ? 1 : x.size(dim)));
  Tensor out = empty(index.shape(), x.options());
  if (out.numel() == 0) return out;
  // x is read through its own strides: a view (transposed, sliced, expanded) needs no copy.
  const GatherGeometry g = gather_geometry(index.shape(), x.shape(), x.strides(), dim);
  const cuda::DeviceGuard guard(x.device());
  switch (x.device().type) {
    case DeviceType::CPU:
      kernels::cpu::gather(x.dtype(), out.data_ptr(), x.data_ptr(), idx.data_ptr<std::int64_t>(),
                           g);
      break;
    case DeviceType::CUDA:
      kernels::cuda::gather(x.dtype(), out.data_ptr(), x.data_ptr(), idx.data_ptr<std::int64_t>(),
                            g);
      break;
  }
  return out;
}

Tensor scatter_add(const Tensor& x, std::int64_t dim_in, const Tensor& index, const Tensor& src) {
  const char* op = "scatter_add";
  check_defined(op, x, "input");
  check_defined(op, src, "src");
  LG_CHECK_DTYPE(is_floating(x.dtype()) || x.dtype() == kInt64 || x.dtype() == kInt32, op,
                 ": expected a floating, int64 or int32 input, got ", x.dtype());
  // The rest (checks, the sums in opmath_t) is scatter's Sum, whose errors name scatter_add.
  return scatter(ScatterOp::Sum, x, dim_in, index, src);
}

Tensor scatter(ScatterOp op, const Tensor& x, std::int64_t dim_in, const Tensor& index,
               const Tensor& src, const char* name) {
  const char* op_label = name != nullptr ? name : op_name(op);
  check_defined(op_label, x, "input");
  check_defined(op_label, src, "src");
  LG_CHECK_DTYPE(src.dtype() == x.dtype(), op_label, ": src is ", src.dtype(), ", the input ",
                 x.dtype(), " (expected the same dtype)");
  LG_CHECK_DEVICE(src.device() == x.device(), op_label, ": src is on ", src.device(),
                  ", the input on ", x.device());
  check_indices(op_label, index, x, "the input");
  const std::int64_t dim = wrap_dim(dim_in, x.dim(), op_label);
  check_gather_shapes(op_label, x.shape(), dim, index, &src);
  const Tensor idx = contiguous(index);
  check_index_values(op_label, idx, x.dim() == 0 ? 1 : x.size(dim),
                     input_dim(dim, x.dim() == 0 ? 1 : x.size(dim)));
  if (op == ScatterOp::Assign) {
    Tensor out = cast(x, x.dtype());  // a fresh contiguous copy
    scatter_into(op, out, x.dtype(), dim, idx, src);
    return out;
  }
  // uint8 and bool are combined as int32 (the launchers take int32 and int64), then cast back:
  // modulo 256 for uint8's sums and products, exact for maxima and minima; bool's sum is its
  // or, its product its and.
  if (x.dtype() == kUInt8 || x.dtype() == kBool) {
    Tensor acc = cast(x, kInt32);
    scatter_into(op, acc, kInt32, dim, idx, cast(src, kInt32));
    return cast(acc, x.dtype());
  }
  Tensor acc = cast(x, accumulation_dtype(x.dtype()));
  scatter_into(op, acc, x.dtype(), dim, idx, src);
  return acc.dtype() == x.dtype() ? acc : cast(acc, x.dtype());
}

Tensor gather_backward(const Tensor& grad, std::int64_t dim_in, const Tensor& index,
                       const Shape& x_shape) {
  const char* op = "gather_backward";
  check_floating(op, grad, "gradient");
  check_indices(op, index, grad, "the gradient");
  const auto rank = static_cast<std::int64_t>(x_shape.size());
  const std::int64_t dim = wrap_dim(dim_in, rank, op);
  check_gather_shapes(op, x_shape, dim, index, nullptr);
  LG_CHECK_SHAPE(grad.shape() == index.shape(), op, ": gradient of shape ", grad.shape(),
                 " for an index of shape ", index.shape(), " (expected the same)");
  const Tensor idx = contiguous(index);
  const std::int64_t size = rank == 0 ? 1 : x_shape[dim];
  check_index_values(op, idx, size, input_dim(dim, size));
  // zeros(x_shape) made in the accumulation dtype and added into: no copy of x's zeros.
  Tensor acc =
      zeros(x_shape, TensorOptions(accumulation_dtype(grad.dtype())).device(grad.device()));
  scatter_into(ScatterOp::Sum, acc, grad.dtype(), dim, idx, grad);
  return acc.dtype() == grad.dtype() ? acc : cast(acc, grad.dtype());
}

}  // namespace leangrad::ops
