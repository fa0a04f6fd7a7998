// Tensor's methods that change the tensor itself rather than its values: the view ops done in
// place (t_, transpose_, squeeze_, ...), alias, detach_, resize_ and set_.
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>

#include <leangrad/autograd/autograd_meta.h>
#include <leangrad/autograd/functions.h>
#include <leangrad/autograd/grad_mode.h>
#include <leangrad/autograd/graph.h>
#include <leangrad/autograd/shape_functions.h>
#include <leangrad/core/error.h>
#include <leangrad/core/shape.h>
#include <leangrad/core/storage.h>
#include <leangrad/kernels/ops.h>

namespace leangrad {

namespace {

// Note [In-place view ops]
// x.t_() is PyTorch's: x takes the sizes, strides and offset of the view x.t() would return, and
// keeps its memory, its TensorImpl (every handle sees the change) and its version (no element is
// written). When autograd records the view (x requires grad, grad mode on), the view's node
// (TransposeBackward, with its edge to x's previous history) becomes x's history, so a gradient
// for the new x flows back to the old one; the node saves geometry, not x, so the change cannot
// invalidate it. Refused, as for in-place writes: a leaf that requires grad under grad mode
// (PyTorch refuses it too); and, unlike PyTorch, which fails only at backward time with a shape
// mismatch, a non-leaf that requires grad while grad mode is off, whose history would then no
// longer match its shape. A view stays allowed: no element changes, so its base's history is
// unaffected.
Tensor& view_in_place(const char* op, Tensor& self,
                      const std::function<Tensor(const Tensor&)>& view) {
  LG_CHECK(self.defined(), op, ": expected a defined tensor, got an undefined Tensor()");
  if (self.requires_grad()) {
    if (autograd::grad_mode_enabled()) {
      LG_CHECK(!self.is_leaf(), op,
               ": in-place operation on a leaf tensor that requires grad (shape ", self.shape(),
               "); run it under NoGradGuard, or use the out-of-place view");
    } else {
      LG_CHECK(self.is_leaf(), op, ": changing the shape of a tensor (shape ", self.shape(),
               ") that requires grad while grad mode is off: its history (",
               autograd::grad_fn_name(self),
               ") would no longer match it; use the out-of-place view, or detach() first");
    }
  }
  const Tensor out = view(self);
  TensorImpl& impl = self.impl();
  impl.set_geometry(out.sizes(), out.strides());
  impl.storage_offset = out.storage_offset();
  if (out.grad_fn() != nullptr) {
    const autograd::Edge edge = autograd::gradient_edge(out);
    autograd::set_history(self, edge.function, edge.input_nr);
  }
  return self;
}

}  // namespace

Tensor& Tensor::t_() {
  return view_in_place("t_", *this, [](const Tensor& self) { return self.t(); });
}
Tensor& Tensor::transpose_(std::int64_t dim0, std::int64_t dim1) {
  return view_in_place("transpose_", *this,
                       [&](const Tensor& self) { return self.transpose(dim0, dim1); });
}
Tensor& Tensor::swapdims_(std::int64_t dim0, std::int64_t dim1) {
  return view_in_place("swapdims_", *this,
                       [&](const Tensor& self) { return self.swapdims(dim0, dim1); });
}
Tensor& Tensor::swapaxes_(std::int64_t axis0, std::int64_t axis1) {
  return view_in_place("swapaxes_", *this,
                       [&](const Tensor& self) { return self.swapaxes(axis0, axis1); });
}
Tensor& Tensor::squeeze_() {
  return view_in_place("squeeze_", *this, [](const Tensor& self) { return self.squeeze(); });
}
Tensor& Tensor::squeeze_(std::int64_t dim) {
  return view_in_place("squeeze_", *this, [&](const Tensor& self) { return self.squeeze(dim); });
}
Tensor& Tensor::unsqueeze_(std::int64_t dim) {
  return view_in_place("unsqueeze_", *this,
                       [&](const Tensor& self) { return self.unsqueeze(dim); });
}
Tensor& Tensor::as_strided_(const Shape& size, const Strides& stride,
                            std::optional<std::int64_t> storage_offset) {
  return view_in_place("as_strided_", *this, [&](const Tensor& self) {
    return self.as_strided(size, stride, storage_offset);
  });
}

Tensor Tensor::alias() const {
  LG_CHECK(defined(), "alias: expected a defined tensor, got an undefined Tensor()");
  return view(shape());  // the same strides: a view of a geometry onto itself
}

Tensor& Tensor::detach_() {
  LG_CHECK(defined(), "detach_: expected a defined tensor, got an undefined Tensor()");
  autograd::AutogradMeta* meta = autograd::autograd_meta_or_null(*this);
  if (meta != nullptr) {
    if (meta->grad_fn) ++impl().histories;
    meta->grad_fn.reset();
    meta->output_nr = 0;
    meta->requires_grad = false;
    meta->retains_grad = false;
  }
  // A view detached in place stays out of the graph: its history is not made anew when its
  // base's changes (Note [In-place writes through views] in graph.cpp).
  if (impl().view.active()) impl().view.outside_graph = true;
  return *this;
}

namespace {

// Refuses set_ where autograd has a stake: while grad mode is on, self or source requiring grad
// (under NoGradGuard a parameter may be given other memory, as set_data does).
void check_set(const Tensor& self, const Tensor& source) {
  const bool recording = autograd::grad_mode_enabled();
  LG_CHECK(!(recording && self.requires_grad()), "set_: this tensor (shape ", self.shape(),
           ") requires grad; run set_ under NoGradGuard");
  LG_CHECK(!(recording && source.defined() && source.requires_grad()), "set_: the source (shape ",
           source.shape(), ") requires grad; run set_ under NoGradGuard or pass source.detach()");
}

// Grows `storage` to `nbytes` (more than it has), keeping its bytes: a new block from the same
// allocator takes its place, so every tensor viewing the storage sees the same values.
void grow_storage(const std::shared_ptr<Storage>& storage, std::size_t nbytes, const char* op) {
  LG_CHECK(storage->has_memory(), op,
           ": the tensor's memory was given back (an offloaded "
           "parameter's device copy); it cannot be resized");
  const std::shared_ptr<Storage> fresh =
      Storage::allocate(nbytes, storage->device(), storage->is_pinned());
  const auto old_bytes = static_cast<std::int64_t>(storage->nbytes());
  if (old_bytes > 0) {
    const Tensor from = make_tensor(storage, kUInt8, {old_bytes}, {1});
    const Tensor to = make_tensor(fresh, kUInt8, {old_bytes}, {1});
    NoGradGuard no_grad;
    ops::copy_(to, from);
  }
  storage->replace_memory(fresh->release_memory(), nbytes);
}

}  // namespace

Tensor& Tensor::resize_(const Shape& size) {
  const char* op = "resize_";
  LG_CHECK(defined(), op, ": expected a defined tensor, got an undefined Tensor()");
  LG_CHECK(!requires_grad(), op, ": cannot resize a tensor (shape ", shape(),
           ") that requires grad, as LibTorch's; resize a detach()ed tensor");
  for (const std::int64_t s : size)
    LG_CHECK_SHAPE(s >= 0, op, ": expected sizes of at least 0, got ", size);
  if (size == shape()) return *this;
  Strides strides = contiguous_strides(size);
  const std::int64_t numel = shape_numel(size, op);
  const std::size_t needed =
      checked_nbytes(checked_add(storage_offset(), numel, op), element_size(), op);
  TensorImpl& impl = this->impl();
  if (numel > 0 && needed > impl.storage->nbytes()) grow_storage(impl.storage, needed, op);
  impl.set_geometry(size, std::move(strides));
  bump_version();
  return *this;
}

Tensor& Tensor::resize_as_(const Tensor& other) {
  LG_CHECK(other.defined(), "resize_as_: expected a defined other, got an undefined Tensor()");
  return resize_(other.shape());
}

Tensor& Tensor::set_(const Tensor& source) {
  const char* op = "set_";
  LG_CHECK(defined() && source.defined(), op,
           ": expected a defined tensor and source, got an undefined Tensor()");
  check_set(*this, source);
  LG_CHECK_DTYPE(source.dtype() == dtype(), op, ": expected source of this tensor's dtype ",
                 dtype(), ", got ", source.dtype());
  set_data(source);
  return *this;
}

Tensor& Tensor::set_() {
  LG_CHECK(defined(), "set_: expected a defined tensor, got an undefined Tensor()");
  check_set(*this, Tensor());
  TensorImpl& impl = this->impl();
  impl.storage = Storage::allocate(0, device(), is_pinned());
  impl.storage_offset = 0;
  impl.set_geometry({0}, {1});
  bump_version();
  return *this;
}

}  // namespace leangrad
