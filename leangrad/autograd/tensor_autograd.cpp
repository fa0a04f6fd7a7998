// Tensor's autograd methods: requires_grad, grad, backward, hooks.
#include <leangrad/autograd/autograd_meta.h>
#include <leangrad/autograd/engine.h>
#include <leangrad/autograd/graph.h>
#include <leangrad/core/views.h>

namespace leangrad {

bool Tensor::requires_grad() const {
  autograd::refresh_if_view(*this);
  const autograd::AutogradMeta* meta = autograd::autograd_meta_or_null(*this);
  return meta != nullptr && meta->requires_grad;
}

Tensor& Tensor::requires_grad_(bool requires_grad) {
  LG_CHECK_DTYPE(!requires_grad || is_floating(dtype()),
                 "requires_grad_: only floating tensors can require gradients, got ", dtype());
  autograd::AutogradMeta& meta = autograd::autograd_meta(*this);
  LG_CHECK(requires_grad || meta.grad_fn == nullptr,
           "requires_grad_(false) on a non-leaf tensor (produced by ", meta.grad_fn->name(),
           "); use detach() to get a tensor outside the graph");
  meta.requires_grad = requires_grad;
  return *this;
}

Tensor Tensor::detach() const {
  return views::alias(*this);
}

void Tensor::backward(const Tensor& grad, std::optional<bool> retain_graph,
                      bool create_graph) const {
  autograd::backward({*this}, {grad}, retain_graph, create_graph);
}

Tensor Tensor::grad() const {
  const autograd::AutogradMeta* meta = autograd::autograd_meta_or_null(*this);
  return meta != nullptr ? meta->grad : Tensor();
}

// Note [What .grad holds]
// A tensor's .grad is undefined or has the tensor's shape, dtype and device (its strides may
// differ), as in PyTorch, where `x.grad = g` refuses another size, dtype or device. set_grad
// checks at assignment. mutable_grad() is LibTorch's plain reference and cannot check what is
// assigned through it, so whoever reads .grad checks it again: backward before accumulating into
// it (AccumulateGrad, graph.cpp) and the optimizer step (optim/optimizer.cpp). A .grad that no
// longer fits because the tensor was given other data (set_data) is caught the same way.
Tensor& Tensor::mutable_grad() const {
  return autograd::autograd_meta(*this).grad;
}

void Tensor::set_grad(const Tensor& grad) const {
  if (grad.defined()) {
    LG_CHECK(!grad.is_same(*this), "set_grad: a tensor (shape ", shape(),
             ") cannot be its own gradient; assign a copy (clone())");
    autograd::TensorMeta::of(*this).check(grad, "set_grad: a gradient", "a tensor");
  }
  autograd::autograd_meta(*this).grad = grad;
}

std::shared_ptr<autograd::Node> Tensor::grad_fn() const {
  autograd::refresh_if_view(*this);
  const autograd::AutogradMeta* meta = autograd::autograd_meta_or_null(*this);
  return meta != nullptr ? meta->grad_fn : nullptr;
}

bool Tensor::is_leaf() const {
  return grad_fn() == nullptr;
}

namespace autograd {
std::string grad_fn_name(const Tensor& t) {
  const std::shared_ptr<Node> node = t.grad_fn();
  return node != nullptr ? node->name() : std::string();
}
}  // namespace autograd

// Note [Removing hooks]
// register_hook returns a position, as LibTorch's (PyTorch returns a handle with remove()). The
// hook is kept in a slot the tensor owns (AutogradMeta::hook_slots), and what goes on the
// graph (a leaf's grad_hooks, a grad_fn's pre_hooks) runs it through that slot; remove_hook
// empties the slot, which frees what the hook captured. The slot is read into a copy before the
// hook runs, so a hook may remove itself, or another, while the engine runs it: a removed hook
// does not run again, even in the backward that is running.
unsigned Tensor::add_grad_hook(std::function<Tensor(const Tensor&)> hook) {
  LG_CHECK(requires_grad(), "register_hook: the tensor (shape ", shape(),
           ") does not require grad");
  autograd::AutogradMeta& meta = autograd::autograd_meta(*this);
  auto slot = std::make_shared<autograd::GradHook>(std::move(hook));
  autograd::GradHook run = [slot](const Tensor& grad) {
    const autograd::GradHook hook = *slot;  // a copy: the hook may remove itself
    return hook ? hook(grad) : Tensor();
  };
  if (meta.grad_fn) {
    meta.grad_fn->pre_hooks.emplace_back(meta.output_nr, std::move(run));
  } else {
    meta.grad_hooks.push_back(std::move(run));
  }
  meta.hook_slots.push_back(std::move(slot));
  return static_cast<unsigned>(meta.hook_slots.size() - 1);
}

void Tensor::remove_hook(unsigned position) const {
  autograd::AutogradMeta* meta = autograd::autograd_meta_or_null(*this);
  const std::size_t count = meta != nullptr ? meta->hook_slots.size() : 0;
  LG_CHECK(position < count && *meta->hook_slots[position], "remove_hook: no hook at position ",
           position, " (the tensor of shape ", shape(), " has had ", count,
           " hook(s) registered; a removed hook cannot be removed again)");
  *meta->hook_slots[position] = nullptr;
}

void Tensor::retain_grad() const {
  LG_CHECK(requires_grad(), "retain_grad: the tensor (shape ", shape(),
           ") does not require grad, so it has no gradient to retain");
  autograd::AutogradMeta& meta = autograd::autograd_meta(*this);
  if (!meta.grad_fn || meta.retains_grad) return;  // a leaf keeps its .grad anyway
  meta.retains_grad = true;
  autograd::retain_grad_at_history(*this);
}

bool Tensor::retains_grad() const {
  const autograd::AutogradMeta* meta = autograd::autograd_meta_or_null(*this);
  return meta != nullptr && meta->retains_grad;
}

void Tensor::register_post_accumulate_grad_hook(std::function<void(const Tensor&)> hook) {
  LG_CHECK(requires_grad() && is_leaf(),
           "register_post_accumulate_grad_hook: only leaf tensors that require grad accumulate "
           "gradients");
  autograd::autograd_meta(*this).post_accumulate_grad_hooks.push_back(std::move(hook));
}

}  // namespace leangrad
