// Context of custom autograd functions (the template side is in custom_function.h).
#include <leangrad/autograd/custom_function.h>

#include <algorithm>

#include <leangrad/autograd/grad_mode.h>

namespace leangrad::autograd {

void Context::save_for_backward(const std::vector<Tensor>& tensors) {
  LG_CHECK(!save_called_, name_, ": save_for_backward may be called only once per forward");
  save_called_ = true;
  to_save_ = tensors;
}

void Context::save_pending() {
  saved_.reserve(to_save_.size());
  for (const Tensor& t : to_save_)
    saved_.emplace_back(t);
  to_save_.clear();
}

// Note [Dirty and non-differentiable outputs]
// LibTorch's custom functions may modify an input in place (ctx->mark_dirty) or return outputs
// that carry no gradient, such as indices (ctx->mark_non_differentiable). Function::apply:
// - checks each dirty tensor when forward returns: it must be an input and an output (the
//   caller's tensor is what changed, so it is what carries the new history), and not a leaf that
//   requires grad. A dirty view must be one autograd can follow a write through
//   (check_write_through_view, as for the built-in in-place ops), and forward must return it
//   alone, as in PyTorch ("Functions which modify views in-place must return a single
//   Variable"): CopySlices hands the function the gradient of that one output. The checks run
//   even when no graph is recorded, as LibTorch's;
// - makes the function the dirty tensor's history, in place (set_history on the caller's
//   TensorImpl): its edge to the previous history was taken before, so backward chains through
//   the function to whatever computed the input. Its version has moved with forward's writes,
//   so a tensor saved earlier by another op refuses to unpack, as after any in-place op. A dirty
//   view's base takes a CopySlices node with the function inside as its history instead
//   (rebase_history_through_view), and every view of the written memory, the dirty one included,
//   gets a history made from the base's when it is next read (Note [In-place writes through
//   views] in graph.cpp);
// - gives a non-differentiable output no history; backward receives zeros in its place.
void Context::mark_dirty(const std::vector<Tensor>& inputs) {
  dirty_.insert(dirty_.end(), inputs.begin(), inputs.end());
}

void Context::mark_non_differentiable(const std::vector<Tensor>& outputs) {
  non_differentiable_.insert(non_differentiable_.end(), outputs.begin(), outputs.end());
}

void Context::check_dirty(const std::vector<Tensor>& inputs,
                          const std::vector<Tensor>& outputs) const {
  for (const Tensor& t : dirty_) {
    LG_CHECK(contains(inputs, t), name_, ": mark_dirty was given a tensor (shape ", t.shape(),
             ") that is not an input of forward; mark only the inputs forward modified in place");
    LG_CHECK(contains(outputs, t), name_, ": an input marked dirty (shape ", t.shape(),
             ") must also be returned by forward, as LibTorch requires: it is the caller's tensor "
             "that now holds the result");
    // Recorded: the function becomes t's history (an input requires grad, grad mode is on).
    const bool recorded =
        grad_mode_enabled() && std::any_of(inputs.begin(), inputs.end(), [](const Tensor& in) {
          return in.defined() && in.requires_grad();
        });
    if (!recorded) continue;
    LG_CHECK(!(t.requires_grad() && t.is_leaf()), name_,
             ": mark_dirty on a leaf tensor that requires grad (shape ", t.shape(),
             "); modify a copy, or run under NoGradGuard");
    if (!t.impl().view.active()) continue;
    check_write_through_view(name_.c_str(), t);
    LG_CHECK(outputs.size() == 1, name_, ": mark_dirty on a view (shape ", t.shape(),
             ") by a function that returns ", outputs.size(),
             " tensors; a function that modifies a view in place must return that view alone, as "
             "in LibTorch (autograd hands it the gradient of one output)");
  }
}

std::vector<Tensor> Context::saved() const {
  std::vector<Tensor> out;
  out.reserve(saved_.size());
  for (const SavedTensor& s : saved_)
    out.push_back(s.unpack(name_, owner_.lock()));
  return out;
}

}  // namespace leangrad::autograd
