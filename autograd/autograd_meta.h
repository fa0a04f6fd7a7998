// AutogradMeta: the autograd state a tensor carries once autograd needs it (null otherwise).
// Today it holds the requires_grad flag; the graph (grad_fn, grad, hooks) joins it with the
// autograd engine.
#pragma once

namespace leangrad::autograd {

struct AutogradMeta {
  bool requires_grad = false;
};

}  // namespace leangrad::autograd
