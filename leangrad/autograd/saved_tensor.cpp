// SavedTensor and the thread-local stack of saved-tensor hooks.
#include <leangrad/autograd/saved_tensor.h>

#include <vector>

#include <leangrad/autograd/grad_mode.h>
#include <leangrad/core/error.h>
#include <leangrad/core/views.h>

namespace leangrad::autograd {

namespace {
struct Hooks {
  PackHook pack;
  UnpackHook unpack;
};
thread_local std::vector<Hooks> hooks_stack;
}  // namespace

SavedTensorHooksGuard::SavedTensorHooksGuard(PackHook pack, UnpackHook unpack) {
  LG_CHECK(pack && unpack, "SavedTensorHooksGuard: both pack and unpack hooks are required");
  hooks_stack.push_back(Hooks{std::move(pack), std::move(unpack)});
}

SavedTensorHooksGuard::~SavedTensorHooksGuard() {
  hooks_stack.pop_back();
}

int saved_tensor_hooks_depth() {
  return static_cast<int>(hooks_stack.size());
}

SavedTensor::SavedTensor(const Tensor& t) {
  if (!t.defined()) return;
  defined_ = true;
  version_counter_ = t.impl().version_counter;
  saved_version_ = t.version();
  // The alias carries data and version counter but no autograd state: no reference cycle when
  // a node saves its own output, and hooks see a plain tensor.
  Tensor alias = views::as_strided(t, t.shape(), t.strides(), t.storage_offset());
  if (hooks_stack.empty()) {
    data_ = std::move(alias);
    return;
  }
  // Run the hook's own ops without recording a graph (a copy to the host is not part of it).
  const Hooks& hooks = hooks_stack.back();
  NoGradGuard no_grad;
  packed_ = hooks.pack(alias);
  unpack_ = hooks.unpack;
}

Tensor SavedTensor::unpack(const std::string& node_name) const {
  if (!defined_) return Tensor();
  LG_CHECK(!released_, "backward through ", node_name,
           " a second time: its saved tensors were already freed. Pass retain_graph=true to "
           "the first backward() to backward through the graph again");
  const std::uint32_t current = version_counter_->version.load();
  LG_CHECK(current == saved_version_, "one of the tensors saved by ", node_name,
           " for backward was modified by an in-place operation (its version is ", current,
           ", expected ", saved_version_, "); compute on a clone() instead of writing in place");
  if (!unpack_) return data_;
  if (prefetched_.defined()) {
    Tensor t = std::move(prefetched_);
    prefetched_ = Tensor();
    return t;
  }
  NoGradGuard no_grad;
  Tensor t = unpack_(packed_);
  LG_CHECK(t.defined(), "the unpack hook returned an undefined tensor for ", node_name);
  return t;
}

void SavedTensor::prefetch() {
  if (!defined_ || released_ || !unpack_ || prefetched_.defined()) return;
  NoGradGuard no_grad;
  prefetched_ = unpack_(packed_);
}

void SavedTensor::release() {
  if (!defined_) return;
  released_ = true;
  data_ = Tensor();
  packed_.reset();
  prefetched_ = Tensor();
}

}  // namespace leangrad::autograd
