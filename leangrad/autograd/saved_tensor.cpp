// SavedTensor and the thread-local stack of saved-tensor hooks.
#include <leangrad/autograd/saved_tensor.h>

#include <algorithm>
#include <atomic>
#include <memory>
#include <vector>

#include <leangrad/autograd/grad_mode.h>
#include <leangrad/autograd/graph.h>
#include <leangrad/core/error.h>
#include <leangrad/core/views.h>

namespace leangrad::autograd {

namespace {
struct Hooks {
  PackHook pack;
  UnpackHook unpack;
  std::shared_ptr<const std::atomic<bool>> closed;  // set when its guard dies
};
thread_local std::vector<Hooks> hooks_stack;

// Note [Closing a guard]
// Guards are meant to live in scopes, so they die in the reverse order of their making, on the
// thread that made them, and the last entry of the stack is theirs. But a guard held by a
// unique_ptr can die before a guard made after it, and one handed to another thread dies there.
// Popping the last entry would then take off the wrong hooks, leaving the dead guard's pack
// applied (SaveOnCpu's pack uses the guard's members), or pop another thread's empty stack. So
// each entry carries a flag its guard sets when it dies, and the entries whose flag is set are
// dropped, wherever they are in the stack: by the dying guard on its own thread, and by the
// thread that owns the stack the next time it looks at it (a thread_local stack is touched by its
// own thread only). The other guards stay, in their order.
void drop_closed_hooks() {
  std::erase_if(hooks_stack,
                [](const Hooks& h) { return h.closed->load(std::memory_order_acquire); });
}
}  // namespace

SavedTensorHooksGuard::SavedTensorHooksGuard(PackHook pack, UnpackHook unpack)
    : closed_(std::make_shared<std::atomic<bool>>(false)) {
  LG_CHECK(pack && unpack, "SavedTensorHooksGuard: both pack and unpack hooks are required");
  hooks_stack.push_back(Hooks{std::move(pack), std::move(unpack), closed_});
}

SavedTensorHooksGuard::~SavedTensorHooksGuard() {
  closed_->store(true, std::memory_order_release);
  drop_closed_hooks();  // Note [Closing a guard]
}

int saved_tensor_hooks_depth() {
  drop_closed_hooks();
  return static_cast<int>(hooks_stack.size());
}

void TensorMeta::check(const Tensor& t, std::string_view what, std::string_view target,
                       std::string_view hint) const {
  LG_CHECK_SHAPE(t.shape() == shape, what, " of shape ", t.shape(), " for ", target, " of shape ",
                 shape, hint);
  LG_CHECK_DTYPE(t.dtype() == dtype, what, " of dtype ", t.dtype(), " for ", target, " of dtype ",
                 dtype, hint);
  LG_CHECK_DEVICE(t.device() == device, what, " on ", t.device(), " for ", target, " on ", device,
                  hint);
}

SavedTensor::SavedTensor(const Tensor& t, int output_nr) {
  if (!t.defined()) return;
  defined_ = true;
  source_ = &t.impl();
  output_nr_ = output_nr;
  requires_grad_ = t.requires_grad();
  version_counter_ = t.impl().version_counter;
  saved_version_ = t.version();
  // The alias carries data and version counter but no autograd state: no reference cycle when
  // a node saves its own output, and hooks see a plain tensor.
  Tensor alias = views::alias(t);
  drop_closed_hooks();  // a guard closed on another thread (Note [Closing a guard])
  if (hooks_stack.empty()) {
    data_ = std::move(alias);
    // An input keeps its graph identity for create_graph. (The node's own output must not: its
    // history points at the node, which would then own itself.) A view is kept as an alias that
    // shares its autograd state but not its base: a view holds its base, whose history may come
    // to reach this node (a recurrence writing its results into the buffer it reads), and the
    // graph would then own itself (Note [In-place writes through views] in graph.cpp).
    if (requires_grad_ && output_nr_ < 0) {
      if (t.impl().view.active()) {
        original_ = views::alias(t);
        original_.impl().autograd_meta = t.impl().autograd_meta;
      } else {
        original_ = t;
      }
    }
    return;
  }
  // Run the hook's own ops without recording a graph (a copy to the host is not part of it).
  // A copy: the pack hook may open a SavedTensorHooksGuard of its own, which pushes onto the
  // stack and can reallocate it under a reference.
  const Hooks hooks = hooks_stack.back();
  NoGradGuard no_grad;
  packed_ = hooks.pack(alias);
  unpack_ = hooks.unpack;
  meta_ = TensorMeta::of(t);
}

void SavedTensor::mark_if_output(const Tensor& out, std::uint32_t output_nr) {
  if (!defined_ || !out.defined() || &out.impl() != source_) return;
  output_nr_ = static_cast<int>(output_nr);
  original_ = Tensor();
}

Tensor SavedTensor::unpack(const std::string& node_name, const std::shared_ptr<Node>& owner) const {
  if (!defined_) return Tensor();
  LG_CHECK(!released_, "backward through ", node_name,
           " a second time: its saved tensors were already freed. Pass retain_graph=true to "
           "the first backward() to backward through the graph again");
  const std::uint32_t current = version_counter_->version.load();
  LG_CHECK(current == saved_version_, "one of the tensors saved by ", node_name,
           " for backward was modified by an in-place operation (its version is ", current,
           ", expected ", saved_version_, "); compute on a clone() instead of writing in place");
  const bool in_graph = grad_mode_enabled() && (requires_grad_ || output_nr_ >= 0);
  if (!unpack_) {
    if (!in_graph) return data_;
    if (original_.defined()) return original_;
    if (output_nr_ >= 0 && owner != nullptr) {
      // Written through a view: the view's new history, through the CopySlices node that owns
      // `owner` (graph.h).
      if (Tensor through_view = saved_output_through_view(data_, *owner); through_view.defined())
        return through_view;
      Tensor alias = views::alias(data_);
      set_history(alias, owner, static_cast<std::uint32_t>(output_nr_));
      return alias;
    }
    return data_;
  }
  LG_CHECK(!in_graph, "double backward (create_graph=true) through ", node_name,
           ": one of its saved tensors went through saved-tensor hooks (SaveOnCpu, the memory "
           "planner), and the unpacked copy has no place in the graph; take higher-order "
           "gradients without the hooks");
  Tensor t;
  if (prefetched_.defined()) {
    t = std::move(prefetched_);
    prefetched_ = Tensor();
  } else {
    NoGradGuard no_grad;
    t = unpack_(packed_);
  }
  // Note [What an unpack hook returns]
  // The unpacked tensor stands for the saved one in a backward formula, so it must have the saved
  // shape, dtype and device; its strides may differ (SaveOnCpu gives back a contiguous copy, and
  // the formulas only read values). Anything else is refused here, naming the node: another
  // shape would broadcast into a wrong gradient or fail deep inside the formula, another dtype
  // would change the gradient's precision, and a tensor on another device would hand a kernel
  // memory it cannot read. So a hook that moved the tensor to the host must bring it back to its
  // device, as SaveOnCpu does. (PyTorch's SavedVariable checks none of these.)
  LG_CHECK(t.defined(), "the unpack hook returned an undefined tensor for a tensor of shape ",
           meta_.shape, " saved by ", node_name);
  meta_.check(t, "the unpack hook returned a tensor", "a tensor saved by " + node_name,
              " (an unpack hook must give back the saved tensor's shape, dtype and device)");
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
  original_ = Tensor();
  packed_.reset();
  prefetched_ = Tensor();
}

}  // namespace leangrad::autograd
