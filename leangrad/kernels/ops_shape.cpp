// ops::cat: concatenation along one dim (kernels/ops.h). The output is allocated once; each input
// is copied (and converted to the promoted dtype) into its slice of the output with copy_, whose
// strided cast kernel reads non-contiguous inputs directly.
#include <leangrad/core/creation.h>
#include <leangrad/core/views.h>
#include <leangrad/kernels/ops.h>

namespace leangrad::ops {
namespace {

// PyTorch's legacy rule: 1-D tensors of shape [0] are skipped whatever the other shapes are.
bool is_legacy_empty(const Tensor& t) {
  return t.dim() == 1 && t.shape()[0] == 0;
}

}  // namespace

Tensor cat(const std::vector<Tensor>& tensors, std::int64_t dim) {
  LG_CHECK(!tensors.empty(), "cat: expected a non-empty list of tensors");
  for (std::size_t i = 0; i < tensors.size(); ++i) {
    LG_CHECK(tensors[i].defined(), "cat: expected defined tensors, got an undefined Tensor() ",
             "at position ", i);
  }

  // dtype and device over all inputs (skipped ones included, as PyTorch's result_type).
  DType dtype = tensors[0].dtype();
  const Device device = tensors[0].device();
  for (std::size_t i = 1; i < tensors.size(); ++i) {
    dtype = promote_types(dtype, tensors[i].dtype());
    LG_CHECK_DEVICE(tensors[i].device() == device,
                    "cat: expected all tensors on the same device, got ", device, " and ",
                    tensors[i].device(), " (tensor ", i, ")");
  }

  // The first tensor that takes part gives the shape every other must match off `dim`.
  const Tensor* reference = nullptr;
  for (const Tensor& t : tensors) {
    if (!is_legacy_empty(t)) {
      reference = &t;
      break;
    }
  }
  if (reference == nullptr) return empty({0}, TensorOptions(dtype).device(device));

  const std::int64_t ndim = reference->dim();
  for (std::size_t i = 0; i < tensors.size(); ++i) {
    LG_CHECK_SHAPE(tensors[i].dim() > 0, "cat: zero-dimensional tensor (at position ", i,
                   ") cannot be concatenated");
  }
  const std::int64_t d = wrap_dim(dim, ndim, "cat");

  Shape out_shape = reference->shape();
  out_shape[d] = 0;
  for (std::size_t i = 0; i < tensors.size(); ++i) {
    const Tensor& t = tensors[i];
    if (is_legacy_empty(t)) continue;
    LG_CHECK_SHAPE(t.dim() == ndim, "cat: expected all tensors to have ", ndim, " dims, got ",
                   shape_str(reference->shape()), " and ", shape_str(t.shape()), " (tensor ", i,
                   ")");
    for (std::int64_t k = 0; k < ndim; ++k) {
      LG_CHECK_SHAPE(k == d || t.shape()[k] == reference->shape()[k],
                     "cat: sizes of tensors must match except in dimension ", d, ", got ",
                     shape_str(reference->shape()), " and ", shape_str(t.shape()), " (tensor ", i,
                     ")");
    }
    out_shape[d] = checked_add(out_shape[d], t.shape()[d], "cat");
  }

  Tensor out = empty_for("cat", out_shape, TensorOptions(dtype).device(device));
  std::int64_t offset = 0;
  for (const Tensor& t : tensors) {
    if (is_legacy_empty(t)) continue;
    const std::int64_t n = t.shape()[d];
    if (n > 0 && t.numel() > 0) {
      const Tensor slot = views::slice(out, d, offset, offset + n, 1);  // a strided view of out
      copy_(slot, t);  // converts to the promoted dtype
    }
    offset += n;
  }
  return out;
}

}  // namespace leangrad::ops
