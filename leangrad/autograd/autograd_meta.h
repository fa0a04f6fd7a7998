// AutogradMeta: the autograd state a tensor carries once autograd needs it (null otherwise):
// whether it requires grad, the node that produced it (grad_fn) or, for a leaf, its gradient
// accumulator and .grad, and the hooks registered on it.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include <leangrad/core/tensor.h>

namespace leangrad::autograd {

class Node;

struct AutogradMeta {
  bool requires_grad = false;
  // Non-leaves: the node that produced this tensor and which of its outputs it is.
  std::shared_ptr<Node> grad_fn;
  std::uint32_t output_nr = 0;
  // Leaves: the accumulated gradient and the node that accumulates into it (weak: the graph
  // owns the accumulator, the accumulator owns a reference to this tensor).
  Tensor grad;
  std::weak_ptr<Node> grad_accumulator;
  // Leaves: hooks run on each incoming gradient before accumulation (may replace it), and hooks
  // run once .grad is final for this backward.
  std::vector<std::function<Tensor(const Tensor&)>> grad_hooks;
  std::vector<std::function<void(const Tensor&)>> post_accumulate_grad_hooks;
  // Every hook register_hook gave this tensor, at the position it returned (leaf or not): the
  // hook runs through its slot, and remove_hook empties the slot (Note [Removing hooks]).
  std::vector<std::shared_ptr<std::function<Tensor(const Tensor&)>>> hook_slots;
  // Non-leaves: retain_grad() was called, so .grad receives this tensor's gradient (Note
  // [Retained gradients] in graph.cpp).
  bool retains_grad = false;
};

// The tensor's AutogradMeta, created on first use.
AutogradMeta& autograd_meta(const Tensor& t);
// The tensor's AutogradMeta, or null.
inline AutogradMeta* autograd_meta_or_null(const Tensor& t) {
  return t.defined() ? t.impl().autograd_meta.get() : nullptr;
}

}  // namespace leangrad::autograd
