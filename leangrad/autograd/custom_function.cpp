// Context of custom autograd functions (the template side is in function.h).
#include <leangrad/autograd/custom_function.h>

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

std::vector<Tensor> Context::saved() const {
  std::vector<Tensor> out;
  out.reserve(saved_.size());
  for (const SavedTensor& s : saved_)
    out.push_back(s.unpack(name_, owner_.lock()));
  return out;
}

}  // namespace leangrad::autograd
