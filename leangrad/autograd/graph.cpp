// Graph nodes: naming, AccumulateGrad, FunctionNode, and recording an op into the graph.
#include <leangrad/autograd/graph.h>

#include <cctype>

#include <leangrad/autograd/grad_mode.h>
#include <leangrad/core/views.h>
#include <leangrad/kernels/creation.h>

namespace leangrad::autograd {

namespace {
std::atomic<std::uint64_t> next_sequence_nr{0};
}  // namespace

AutogradMeta& autograd_meta(const Tensor& t) {
  auto& meta = t.impl().autograd_meta;
  if (meta == nullptr) meta = std::make_shared<AutogradMeta>();
  return *meta;
}

Node::Node(std::string name) : name_(std::move(name)), sequence_nr_(next_sequence_nr++) {}

// Note [Deleting long graphs]: a node owns the nodes of its inputs through its edges, so
// shared_ptr would delete a chain recursively, one stack frame per node. Instead, before a node
// is deleted, the input nodes that this node alone keeps alive are moved out to a local stack;
// each is then released from the loop, its own such inputs having been moved out first.
void delete_node(Node* node) {
  std::vector<std::shared_ptr<Node>> stack;
  auto take_inputs = [&stack](Node* n) {
    // A saved input keeps its own history alive too (SavedTensor::original_, for create_graph):
    // drop the saved tensors first, so that the edges are the only owners counted below.
    n->release_saved();
    // An input used twice (y + y) is owned by two edges: dropping all but the last edge's
    // reference lets that one count 1 and go to the stack instead of being deleted by
    // recursion inside this node's destructor.
    for (Edge& e : n->next_edges) {
      if (!e.function) continue;
      if (e.function.use_count() == 1) {
        stack.push_back(std::move(e.function));
      } else {
        std::shared_ptr<Node> shared = std::move(e.function);
        if (shared.use_count() == 1) stack.push_back(std::move(shared));
      }
    }
  };
  take_inputs(node);
  delete node;
  while (!stack.empty()) {
    std::shared_ptr<Node> next = std::move(stack.back());
    stack.pop_back();
    take_inputs(next.get());
    next.reset();  // deletes it; its edges no longer own anything unique, so no recursion
  }
}

std::string backward_name(const std::string& forward_op) {
  std::string name;
  bool capitalize = true;
  for (char c : forward_op) {
    if (c == '_') {
      capitalize = true;
      continue;
    }
    name += capitalize ? static_cast<char>(std::toupper(static_cast<unsigned char>(c))) : c;
    capitalize = false;
  }
  return name + "Backward";
}

// ---- AccumulateGrad --------------------------------------------------------------------------

AccumulateGrad::AccumulateGrad(std::shared_ptr<TensorImpl> leaf)
    : Node("AccumulateGrad"), leaf_(std::move(leaf)) {
  output_meta.push_back(TensorMeta::of(Tensor(leaf_)));
}

Tensor AccumulateGrad::run_hooks(Tensor grad) const {
  const Tensor leaf(leaf_);
  // A copy of the list: a hook may register another hook on this leaf, which would reallocate
  // the list under the loop (the new hook runs from the next backward on, as in PyTorch).
  const std::vector<GradHook> hooks = autograd_meta(leaf).grad_hooks;
  for (const auto& hook : hooks) {
    Tensor replaced = hook(grad);
    if (!replaced.defined()) continue;
    TensorMeta::of(leaf).check(replaced, "a gradient hook returned a gradient", "a leaf");
    grad = std::move(replaced);
  }
  return grad;
}

std::vector<Tensor> AccumulateGrad::apply(std::vector<Tensor>&& grad_outputs) {
  Tensor grad = std::move(grad_outputs.at(0));
  if (!grad.defined()) return {};
  const Tensor leaf(leaf_);
  AutogradMeta& meta = autograd_meta(leaf);
  grad = run_hooks(std::move(grad));
  // .grad has the leaf's shape, dtype and device (Note [What .grad holds] in
  // tensor_autograd.cpp): the gradient, and the .grad it is added to, are checked against the
  // leaf as it is now.
  const TensorMeta leaf_meta = TensorMeta::of(leaf);
  leaf_meta.check(grad, "backward: accumulating a gradient", "a leaf",
                  " (was the leaf given other data with set_data after the forward?)");
  if (meta.grad.defined()) {
    leaf_meta.check(meta.grad, "backward: accumulating into .grad", "a leaf",
                    " (.grad was assigned through mutable_grad(), or the leaf was given other "
                    "data with set_data; clear it with set_grad(Tensor()))");
  }
  if (!meta.grad.defined()) {
    // Take the gradient over when nothing else refers to its memory; otherwise copy it, so that
    // .grad never aliases another tensor (the same gradient may reach several leaves).
    const bool sole_owner = grad.impl_ptr().use_count() == 1 && grad.storage().use_count() == 1 &&
                            grad.is_contiguous() && grad.impl().autograd_meta == nullptr;
    meta.grad = sole_owner ? grad : grad.clone();
  } else if (grad_mode_enabled()) {
    meta.grad = meta.grad + grad;  // create_graph: keep the graph of both terms
  } else {
    meta.grad.add_(grad);
  }
  const auto post_hooks = meta.post_accumulate_grad_hooks;  // a copy, as in run_hooks
  for (const auto& hook : post_hooks)
    hook(leaf);
  return {};
}

// ---- FunctionNode ----------------------------------------------------------------------------

namespace {

// Under create_graph, a backward computed by a fused kernel gives results with no graph: taken
// as they are, a second derivative through them would silently miss terms. When what they
// depend on (the incoming gradient, the saved tensors) requires grad, each result gets a node
// ("Conv2dBackwardBackward") whose backward throws, naming the op. See Note [Double backward]
// in engine.cpp.
void refuse_double_backward(const std::string& node_name, const std::string& forward_op,
                            const BackwardContext& ctx, std::vector<Tensor>& grads) {
  std::vector<Tensor> sources{ctx.grad};
  sources.insert(sources.end(), ctx.saved.begin(), ctx.saved.end());
  if (!any_requires_grad(sources)) return;  // grad mode off, or nothing to differentiate
  const std::string op = forward_op + "_backward";
  for (Tensor& g : grads) {
    if (!g.defined()) continue;
    g = record_op(op.c_str(), g.detach(), sources, {},
                  [node_name, forward_op](const BackwardContext&) -> std::vector<Tensor> {
                    LG_THROW(Error, "autograd: double backward (create_graph=true) through ",
                             forward_op, " is not implemented: ", node_name,
                             " runs a fused kernel with no derivative of its own. Take the "
                             "second derivative of a composition of differentiable functions "
                             "instead (docs/autograd.md, \"Higher-order gradients\")");
                  });
  }
}

}  // namespace

FunctionNode::FunctionNode(std::string name, std::string forward_op,
                           std::vector<TensorMeta> input_meta, std::vector<SavedTensor> saved,
                           Backward backward, DoubleBackward double_backward)
    : Node(std::move(name)),
      forward_op_(std::move(forward_op)),
      input_meta_(std::move(input_meta)),
      saved_(std::move(saved)),
      backward_(std::move(backward)),
      double_backward_(double_backward) {}

std::vector<Tensor> FunctionNode::apply(std::vector<Tensor>&& grad_outputs) {
  LG_INTERNAL_ASSERT(grad_outputs.size() == 1, name(), " expects one gradient");
  BackwardContext ctx{{}, std::move(grad_outputs[0]), input_meta_, {}};
  if (!ctx.grad.defined()) {
    const TensorMeta& out = output_meta.at(0);
    ctx.grad = zeros(out.shape, TensorOptions(out.dtype).device(out.device));
  }
  ctx.saved.reserve(saved_.size());
  for (const SavedTensor& s : saved_)
    ctx.saved.push_back(s.unpack(name(), shared_from_this()));
  ctx.needs_grad.reserve(next_edges.size());
  for (const Edge& e : next_edges)
    ctx.needs_grad.push_back(e.valid());

  std::vector<Tensor> grads = backward_(ctx);
  if (double_backward_ == DoubleBackward::NotImplemented) {
    refuse_double_backward(name(), forward_op_, ctx, grads);
  }
  LG_INTERNAL_ASSERT(grads.size() == input_meta_.size(), name(), " returned ", grads.size(),
                     " gradients for ", input_meta_.size(), " inputs");
  for (std::size_t i = 0; i < grads.size(); ++i) {
    if (!next_edges[i].valid() || !grads[i].defined()) {
      grads[i] = Tensor();
      continue;
    }
    const TensorMeta& in = input_meta_[i];
    LG_INTERNAL_ASSERT(grads[i].shape() == in.shape, name(), " produced a gradient of shape ",
                       grads[i].shape(), " for input ", i, " of shape ", in.shape);
    if (grads[i].dtype() != in.dtype || grads[i].device() != in.device) {
      grads[i] = grads[i].to(in.device).to(in.dtype);
    }
  }
  return grads;
}

void FunctionNode::release_saved() {
  for (SavedTensor& s : saved_)
    s.release();
}

void FunctionNode::prefetch_saved() {
  for (SavedTensor& s : saved_)
    s.prefetch();
}

// ---- Recording -------------------------------------------------------------------------------

bool any_requires_grad(std::initializer_list<const Tensor*> tensors) {
  if (!grad_mode_enabled()) return false;
  for (const Tensor* t : tensors) {
    if (t->defined() && t->requires_grad()) return true;
  }
  return false;
}

bool any_requires_grad(const std::vector<Tensor>& tensors) {
  if (!grad_mode_enabled()) return false;
  for (const Tensor& t : tensors) {
    if (t.defined() && t.requires_grad()) return true;
  }
  return false;
}

Edge gradient_edge(const Tensor& t) {
  AutogradMeta* meta = autograd_meta_or_null(t);
  if (meta == nullptr || !meta->requires_grad) return Edge{};
  if (meta->grad_fn) return Edge{meta->grad_fn, meta->output_nr};
  std::shared_ptr<Node> accumulator = meta->grad_accumulator.lock();
  if (!accumulator) {
    accumulator = make_node<AccumulateGrad>(t.impl_ptr());
    meta->grad_accumulator = accumulator;
  }
  return Edge{accumulator, 0};
}

void set_history(const Tensor& t, const std::shared_ptr<Node>& fn, std::uint32_t output_nr) {
  AutogradMeta& meta = autograd_meta(t);
  meta.requires_grad = true;
  const bool moved = meta.grad_fn != fn || meta.output_nr != output_nr;
  meta.grad_fn = fn;
  meta.output_nr = output_nr;
  if (meta.retains_grad && moved && fn) retain_grad_at_history(t);
}

// Note [Retained gradients]
// retain_grad() on a non-leaf keeps its gradient in .grad, as PyTorch's: a pre-hook on the
// tensor's grad_fn, at its output, clones the first gradient of a backward into .grad and adds
// later ones (out of place under create_graph, so the graph is kept). It runs among the
// tensor's register_hook hooks in the order they were registered (PyTorch 1.13's order: a hook
// registered before retain_grad changes what is retained, one registered after does not). An
// in-place op gives the tensor a new grad_fn; the hook then follows it (set_history installs a
// new one and the old one, which checks that it is still its tensor's history, does nothing),
// so .grad is the gradient of the tensor's current value, as in PyTorch. The hook holds the
// tensor weakly: the tensor owns its grad_fn, which owns the hook.
void retain_grad_at_history(const Tensor& t) {
  AutogradMeta& meta = autograd_meta(t);
  const Node* node = meta.grad_fn.get();
  const std::weak_ptr<TensorImpl> weak = t.impl_ptr();
  meta.grad_fn->pre_hooks.emplace_back(meta.output_nr, [weak, node](const Tensor& grad) {
    const std::shared_ptr<TensorImpl> impl = weak.lock();
    if (!impl) return Tensor();
    const Tensor self(impl);
    AutogradMeta& m = autograd_meta(self);
    if (!m.retains_grad || m.grad_fn.get() != node) return Tensor();  // moved to a newer history
    if (!m.grad.defined()) {
      m.grad = grad.clone();
    } else if (grad_mode_enabled()) {
      m.grad = m.grad + grad;
    } else {
      m.grad.add_(grad);
    }
    return Tensor();  // observes only
  });
}

namespace {

// Makes a FunctionNode with edges to `inputs` (their histories now) the history of `out`.
void attach_node(const char* forward_op, const Tensor& out, const std::vector<Tensor>& inputs,
                 std::vector<SavedTensor> saved, FunctionNode::Backward backward,
                 DoubleBackward double_backward) {
  std::vector<TensorMeta> input_meta;
  input_meta.reserve(inputs.size());
  for (const Tensor& in : inputs) {
    input_meta.push_back(in.defined() ? TensorMeta::of(in) : TensorMeta{});
  }
  auto node = make_node<FunctionNode>(backward_name(forward_op), forward_op, std::move(input_meta),
                                      std::move(saved), std::move(backward), double_backward);
  node->next_edges.reserve(inputs.size());
  for (const Tensor& in : inputs)
    node->next_edges.push_back(gradient_edge(in));
  node->output_meta.push_back(TensorMeta::of(out));
  set_history(out, node, 0);
}

}  // namespace

Tensor record_op(const char* forward_op, const Tensor& out, const std::vector<Tensor>& inputs,
                 const std::vector<Tensor>& saved, FunctionNode::Backward backward,
                 DoubleBackward double_backward) {
  if (!any_requires_grad(inputs) || !is_floating(out.dtype())) return out;
  for (const Tensor& in : inputs) {
    // An op that returned one of its inputs unchanged (x.to(x.dtype())) records nothing.
    if (in.defined() && out.is_same(in)) return out;
  }
  std::vector<SavedTensor> saved_tensors;
  saved_tensors.reserve(saved.size());
  for (const Tensor& s : saved)
    saved_tensors.emplace_back(s, s.defined() && s.is_same(out) ? 0 : -1);
  attach_node(forward_op, out, inputs, std::move(saved_tensors), std::move(backward),
              double_backward);
  return out;
}

void record_in_place(const char* forward_op, const Tensor& self, const std::vector<Tensor>& inputs,
                     std::vector<SavedTensor> saved, FunctionNode::Backward backward) {
  LG_INTERNAL_ASSERT(!inputs.empty() && inputs.front().is_same(self), forward_op,
                     ": record_in_place expects self as its first input");
  attach_node(forward_op, self, inputs, std::move(saved), std::move(backward),
              DoubleBackward::Differentiable);
}

}  // namespace leangrad::autograd
