// Context of custom autograd functions (the template side is in function.h).
#include <leangrad/autograd/custom_function.h>

namespace leangrad::autograd {

void Context::save_for_backward(const std::vector<Tensor>& tensors) {
  LG_CHECK(saved_.empty(), name_, ": save_for_backward may be called only once per forward");
  saved_.reserve(tensors.size());
  for (const Tensor& t : tensors)
    saved_.emplace_back(t);
}

std::vector<Tensor> Context::saved() const {
  std::vector<Tensor> out;
  out.reserve(saved_.size());
  for (const SavedTensor& s : saved_)
    out.push_back(s.unpack(name_, owner_.lock()));
  return out;
}

}  // namespace leangrad::autograd
