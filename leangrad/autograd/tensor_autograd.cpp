// Tensor's autograd methods: requires_grad, grad, backward, hooks.
#include <leangrad/autograd/autograd_meta.h>
#include <leangrad/autograd/engine.h>
#include <leangrad/autograd/graph.h>
#include <leangrad/core/views.h>

namespace leangrad {

bool Tensor::requires_grad() const {
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
  const autograd::AutogradMeta* meta = autograd::autograd_meta_or_null(*this);
  return meta != nullptr ? meta->grad_fn : nullptr;
}

bool Tensor::is_leaf() const {
  return grad_fn() == nullptr;
}

void Tensor::add_grad_hook(std::function<Tensor(const Tensor&)> hook) {
  LG_CHECK(requires_grad(), "register_hook: the tensor does not require grad");
  autograd::AutogradMeta& meta = autograd::autograd_meta(*this);
  if (meta.grad_fn) {
    meta.grad_fn->pre_hooks.emplace_back(meta.output_nr, std::move(hook));
  } else {
    meta.grad_hooks.push_back(std::move(hook));
  }
}

void Tensor::register_post_accumulate_grad_hook(std::function<void(const Tensor&)> hook) {
  LG_CHECK(requires_grad() && is_leaf(),
           "register_post_accumulate_grad_hook: only leaf tensors that require grad accumulate "
           "gradients");
  autograd::autograd_meta(*this).post_accumulate_grad_hooks.push_back(std::move(hook));
}

}  // namespace leangrad
