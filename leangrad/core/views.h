// View construction: new sizes/strides/offset over the same storage, no data copied.
// These are the kernels of the view ops: pure metadata, validated here with ShapeErrors that
// name the op and the shapes. The differentiable forms are in autograd/functions.h.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include <leangrad/core/tensor.h>

namespace leangrad::views {

// A tensor sharing `base`'s storage and version counter with the given geometry: a view, which
// keeps its root base (ViewRegistration in core/tensor.h).
Tensor as_strided(const Tensor& base, Shape sizes, Strides strides, std::int64_t storage_offset);
// The same tensor again (same storage, geometry and version counter) under a new TensorImpl
// without autograd state, not counted as a view: what autograd keeps for backward and what
// detach() returns.
Tensor alias(const Tensor& t);

// Replaces a single -1 in `shape` by the size that makes numel match; checks the product.
Shape infer_size(const Shape& shape, std::int64_t numel, const char* op);
// Strides that let `new_shape` view memory laid out as (old_shape, old_strides), if any.
std::optional<Strides> view_strides(const Shape& old_shape, const Strides& old_strides,
                                    const Shape& new_shape);

Tensor view(const Tensor& t, const Shape& shape);
Tensor permute(const Tensor& t, const std::vector<std::int64_t>& dims);
Tensor transpose(const Tensor& t, std::int64_t dim0, std::int64_t dim1);
Tensor slice(const Tensor& t, std::int64_t dim, std::int64_t start, std::int64_t end,
             std::int64_t step);
Tensor select(const Tensor& t, std::int64_t dim, std::int64_t index);
Tensor unsqueeze(const Tensor& t, std::int64_t dim);
Tensor squeeze(const Tensor& t);
Tensor squeeze(const Tensor& t, std::int64_t dim);
// `op` names the public op in the errors (broadcast_to shares expand's rules).
Tensor expand(const Tensor& t, const Shape& shape, const char* op = "expand");

}  // namespace leangrad::views
