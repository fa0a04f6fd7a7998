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

Tensor& Tensor::mutable_grad() const {
  return autograd::autograd_meta(*this).grad;
}

void Tensor::set_grad(const Tensor& grad) const {
  LG_CHECK_SHAPE(!grad.defined() || grad.shape() == shape(), "set_grad: gradient of shape ",
                 grad.defined() ? grad.shape() : Shape{}, " for a tensor of shape ", shape());
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
