// View metadata: each function computes the sizes, strides and offset of a view and checks them.
#include <leangrad/core/views.h>

#include <algorithm>

namespace leangrad::views {

namespace {
// A new TensorImpl over `base`'s storage and version counter with this geometry (unchecked).
Tensor share_storage(const Tensor& base, Shape sizes, Strides strides,
                     std::int64_t storage_offset) {
  auto impl = std::make_shared<TensorImpl>();
  impl->storage = base.storage();
  impl->storage_offset = storage_offset;
  impl->set_geometry(std::move(sizes), std::move(strides));
  impl->dtype = base.dtype();
  impl->version_counter = base.impl().version_counter;  // views share the version counter
  return Tensor(std::move(impl));
}
}  // namespace

Tensor as_strided(const Tensor& base, Shape sizes, Strides strides, std::int64_t storage_offset) {
  // A view addresses only elements of its base's storage (every view below relies on it).
  const std::int64_t extent =
      checked_extent(sizes, strides, storage_offset, base.element_size(), "view");
  LG_CHECK_SHAPE(static_cast<std::size_t>(extent) * base.element_size() <= base.storage()->nbytes(),
                 "view of shape ", sizes, " (strides ", shape_str(strides), ", offset ",
                 storage_offset, ") reaches past its storage of ", base.storage()->nbytes(),
                 " bytes");
  Tensor view = share_storage(base, std::move(sizes), std::move(strides), storage_offset);
  // The root base: a view of a view records the tensor at the bottom of the chain, and which of
  // its histories that tensor has now, from which autograd makes the view's (Note [In-place
  // writes through views] in autograd/graph.cpp).
  const ViewRegistration& parent = base.impl().view;
  std::shared_ptr<TensorImpl> root = parent.active() ? parent.base() : base.impl_ptr();
  const std::uint32_t histories = root->histories;
  view.impl().view = ViewRegistration(std::move(root), histories, parent.outside_graph);
  return view;
}

Tensor alias(const Tensor& t) {
  return share_storage(t, t.shape(), t.strides(), t.storage_offset());
}

Shape infer_size(const Shape& shape, std::int64_t numel, const char* op) {
  Shape out = shape;
  std::int64_t known = 1;
  std::optional<std::size_t> infer_dim;
  for (std::size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == -1) {
      LG_CHECK_SHAPE(!infer_dim, op, ": only one dimension can be inferred (-1) in ", shape);
      infer_dim = d;
    } else {
      LG_CHECK_SHAPE(shape[d] >= 0, op, ": invalid size ", shape[d], " in shape ", shape);
      known = checked_mul(known, shape[d], op);
    }
  }
  if (infer_dim) {
    LG_CHECK_SHAPE(known != 0 && numel % known == 0, op, ": shape ", shape,
                   " is invalid for input of size ", numel);
    out[*infer_dim] = numel / known;
  } else {
    LG_CHECK_SHAPE(known == numel, op, ": shape ", shape, " is invalid for input of size ", numel);
  }
  return out;
}

// Note [View strides]: memory is a set of "chunks" of dims that are contiguous with respect to
// each other. A new shape can view it only if each chunk is split or merged within itself.
// Walk both shapes from the innermost dim, matching element counts chunk by chunk.
std::optional<Strides> view_strides(const Shape& old_shape, const Strides& old_strides,
                                    const Shape& new_shape) {
  const std::int64_t numel = shape_numel(old_shape);
  if (numel == 0 || old_shape.empty()) return contiguous_strides(new_shape);
  Strides new_strides(new_shape.size());
  std::int64_t view_d = static_cast<std::int64_t>(new_shape.size()) - 1;
  std::int64_t chunk_base_stride = old_strides.back();
  std::int64_t tensor_numel = 1;
  std::int64_t view_numel = 1;
  for (std::int64_t tensor_d = static_cast<std::int64_t>(old_shape.size()) - 1; tensor_d >= 0;
       --tensor_d) {
    tensor_numel *= old_shape[tensor_d];
    const bool chunk_ends =
        tensor_d == 0 || (old_shape[tensor_d - 1] != 1 &&
                          old_strides[tensor_d - 1] != tensor_numel * chunk_base_stride);
    if (!chunk_ends) continue;
    while (view_d >= 0 && (view_numel < tensor_numel || new_shape[view_d] == 1)) {
      new_strides[view_d] = view_numel * chunk_base_stride;
      view_numel *= new_shape[view_d];
      --view_d;
    }
    if (view_numel != tensor_numel) return std::nullopt;
    if (tensor_d > 0) {
      chunk_base_stride = old_strides[tensor_d - 1];
      tensor_numel = 1;
      view_numel = 1;
    }
  }
  if (view_d != -1) return std::nullopt;
  return new_strides;
}

Tensor view(const Tensor& t, const Shape& shape) {
  const Shape new_shape = infer_size(shape, t.numel(), "view");
  const auto strides = view_strides(t.shape(), t.strides(), new_shape);
  LG_CHECK_SHAPE(strides.has_value(), "view: shape ", new_shape,
                 " is not compatible with the input's size ", t.shape(), " and strides ",
                 shape_str(t.strides()), " (at least one dimension spans two contiguous chunks);",
                 " use reshape() instead");
  return as_strided(t, new_shape, *strides, t.storage_offset());
}

Tensor permute(const Tensor& t, const std::vector<std::int64_t>& dims) {
  const std::int64_t ndim = t.dim();
  LG_CHECK_SHAPE(static_cast<std::int64_t>(dims.size()) == ndim, "permute: got ", dims.size(),
                 " dims ", shape_str(dims), " for a ", ndim, "-d tensor of shape ", t.shape());
  Shape sizes(ndim);
  Strides strides(ndim);
  std::vector<bool> seen(ndim, false);
  for (std::int64_t i = 0; i < ndim; ++i) {
    const std::int64_t d = wrap_dim(dims[i], ndim, "permute");
    LG_CHECK_SHAPE(!seen[d], "permute: dims ", shape_str(dims), " repeat dimension ", d);
    seen[d] = true;
    sizes[i] = t.shape()[d];
    strides[i] = t.strides()[d];
  }
  return as_strided(t, sizes, strides, t.storage_offset());
}

Tensor transpose(const Tensor& t, std::int64_t dim0, std::int64_t dim1) {
  const std::int64_t d0 = wrap_dim(dim0, t.dim(), "transpose");
  const std::int64_t d1 = wrap_dim(dim1, t.dim(), "transpose");
  if (t.dim() == 0) return as_strided(t, t.shape(), t.strides(), t.storage_offset());
  Shape sizes = t.shape();
  Strides strides = t.strides();
  std::swap(sizes[d0], sizes[d1]);
  std::swap(strides[d0], strides[d1]);
  return as_strided(t, sizes, strides, t.storage_offset());
}

Tensor slice(const Tensor& t, std::int64_t dim, std::int64_t start, std::int64_t end,
             std::int64_t step) {
  LG_CHECK_SHAPE(t.dim() > 0, "slice: cannot slice a 0-d tensor");
  const std::int64_t d = wrap_dim(dim, t.dim(), "slice");
  LG_CHECK_SHAPE(step > 0, "slice: step must be positive, got ", step);
  const std::int64_t size = t.shape()[d];
  // Python semantics: negative indices count from the end, out-of-range bounds clamp.
  if (start < 0) start += size;
  if (end < 0) end += size;
  start = std::clamp<std::int64_t>(start, 0, size);
  end = std::clamp<std::int64_t>(end, start, size);
  Shape sizes = t.shape();
  Strides strides = t.strides();
  // ceil((end - start) / step) without forming end - start + step, which overflows for huge steps.
  sizes[d] = end == start ? 0 : 1 + (end - start - 1) / step;
  const std::int64_t offset =
      sizes[d] > 0
          ? checked_add(t.storage_offset(), checked_mul(start, strides[d], "slice"), "slice")
          : t.storage_offset();
  // A one-element slice never steps: keep the stride (step * stride could overflow).
  if (sizes[d] > 1) strides[d] = checked_mul(strides[d], step, "slice");
  return as_strided(t, sizes, strides, offset);
}

Tensor select(const Tensor& t, std::int64_t dim, std::int64_t index) {
  LG_CHECK_SHAPE(t.dim() > 0, "select: cannot select from a 0-d tensor");
  const std::int64_t d = wrap_dim(dim, t.dim(), "select");
  const std::int64_t size = t.shape()[d];
  LG_CHECK_SHAPE(index >= -size && index < size, "select: index ", index,
                 " is out of range for dimension ", d, " of size ", size, " (shape ", t.shape(),
                 ")");
  if (index < 0) index += size;
  Shape sizes = t.shape();
  Strides strides = t.strides();
  const std::int64_t offset =
      checked_add(t.storage_offset(), checked_mul(index, strides[d], "select"), "select");
  sizes.erase(sizes.begin() + d);
  strides.erase(strides.begin() + d);
  return as_strided(t, sizes, strides, offset);
}

Tensor unsqueeze(const Tensor& t, std::int64_t dim) {
  const std::int64_t d = wrap_dim(dim, t.dim() + 1, "unsqueeze");
  Shape sizes = t.shape();
  Strides strides = t.strides();
  const std::int64_t stride = d < t.dim() ? checked_mul(sizes[d], strides[d], "unsqueeze") : 1;
  sizes.insert(sizes.begin() + d, 1);
  strides.insert(strides.begin() + d, stride);
  return as_strided(t, sizes, strides, t.storage_offset());
}

Tensor squeeze(const Tensor& t) {
  Shape sizes;
  Strides strides;
  for (std::int64_t d = 0; d < t.dim(); ++d) {
    if (t.shape()[d] != 1) {
      sizes.push_back(t.shape()[d]);
      strides.push_back(t.strides()[d]);
    }
  }
  return as_strided(t, sizes, strides, t.storage_offset());
}

Tensor squeeze(const Tensor& t, std::int64_t dim) {
  const std::int64_t d = wrap_dim(dim, t.dim(), "squeeze");
  if (t.dim() == 0) return as_strided(t, t.shape(), t.strides(), t.storage_offset());
  Shape sizes = t.shape();
  Strides strides = t.strides();
  if (sizes[d] == 1) {  // as in PyTorch, squeezing a dim that is not 1 leaves the tensor as is
    sizes.erase(sizes.begin() + d);
    strides.erase(strides.begin() + d);
  }
  return as_strided(t, sizes, strides, t.storage_offset());
}

Tensor expand(const Tensor& t, const Shape& shape, const char* op) {
  const std::int64_t ndim = static_cast<std::int64_t>(shape.size());
  LG_CHECK_SHAPE(ndim >= t.dim(), op, ": the target shape ", shape, " has fewer dims than ",
                 t.shape());
  Shape sizes(ndim);
  Strides strides(ndim);
  const std::int64_t lead = ndim - t.dim();
  for (std::int64_t d = 0; d < ndim; ++d) {
    if (d < lead) {
      LG_CHECK_SHAPE(shape[d] >= 0, op, ": size ", shape[d],
                     " is not allowed in a new leading dim (", t.shape(), " to ", shape, ")");
      sizes[d] = shape[d];
      strides[d] = 0;
      continue;
    }
    const std::int64_t old_size = t.shape()[d - lead];
    const std::int64_t want = shape[d] == -1 ? old_size : shape[d];
    LG_CHECK_SHAPE(want >= 0, op, ": invalid size ", want, " in the target shape ", shape, " for ",
                   t.shape());
    LG_CHECK_SHAPE(want == old_size || old_size == 1, op, ": cannot expand ", t.shape(), " to ",
                   shape, " (dimension ", d, ": ", old_size, " -> ", want,
                   "; only size-1 dims expand)");
    sizes[d] = want;
    strides[d] = want == old_size ? t.strides()[d - lead] : 0;
  }
  shape_numel(sizes, op);  // every size is valid; their product must fit too
  return as_strided(t, sizes, strides, t.storage_offset());
}

}  // namespace leangrad::views
