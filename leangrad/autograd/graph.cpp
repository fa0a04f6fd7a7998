// Graph nodes: naming, AccumulateGrad, FunctionNode, and recording an op into the graph.
#include <leangrad/autograd/graph.h>

#include <cctype>

#include <leangrad/autograd/functions.h>
#include <leangrad/autograd/grad_mode.h>
#include <leangrad/autograd/shape_functions.h>
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

namespace {

// Whether `t` is a contiguous gradient that nothing but this handle refers to (no other handle or
// view of its memory, no graph): a node may then keep it or write into it.
bool only_handle(const Tensor& t) {
  return t.impl_ptr().use_count() == 1 && t.storage().use_count() == 1 && t.is_contiguous() &&
         t.impl().autograd_meta == nullptr;
}

}  // namespace

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
    meta.grad = only_handle(grad) ? grad : grad.clone();
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
  refresh_if_view(t);
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
  // Its views' histories are out of date (Note [In-place writes through views]).
  ++t.impl().histories;
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

// A FunctionNode for `forward_op` with `output`'s metadata and edges to `inputs` (their histories
// now).
std::shared_ptr<FunctionNode> make_function_node(const char* forward_op, const Tensor& output,
                                                 const std::vector<Tensor>& inputs,
                                                 std::vector<SavedTensor> saved,
                                                 FunctionNode::Backward backward,
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
  node->output_meta.push_back(TensorMeta::of(output));
  return node;
}

}  // namespace

Tensor record_op(const char* forward_op, const Tensor& out, const std::vector<Tensor>& inputs,
                 const std::vector<Tensor>& saved, FunctionNode::Backward backward,
                 DoubleBackward double_backward) {
  for (const Tensor& in : inputs) {
    // An op that returned one of its inputs unchanged (x.to(x.dtype())) records nothing.
    if (in.defined() && out.is_same(in)) return out;
  }
  if (!any_requires_grad(inputs) || !is_floating(out.dtype())) {
    // A view made with grad mode off of a tensor that requires grad stays out of the graph, and
    // so do the views made of it (Note [In-place writes through views]).
    if (!grad_mode_enabled() && out.impl().view.active()) {
      for (const Tensor& in : inputs)
        if (in.defined() && in.requires_grad()) out.impl().view.outside_graph = true;
    }
    return out;
  }
  std::vector<SavedTensor> saved_tensors;
  saved_tensors.reserve(saved.size());
  for (const Tensor& s : saved)
    saved_tensors.emplace_back(s, s.defined() && s.is_same(out) ? 0 : -1);
  set_history(out, make_function_node(forward_op, out, inputs, std::move(saved_tensors),
                                      std::move(backward), double_backward));
  return out;
}

// Note [In-place writes through views]
// An in-place op on a view writes its base's memory, so the base's values, and the values of all
// its other views, change with it; so must their histories. As in PyTorch:
// - Every view keeps its root base (the tensor at the bottom of its chain of views, which is not a
//   view itself; core/tensor.h's ViewRegistration). A recorded in-place op on a view `v` of base
//   `b` builds the op's node `fn` as for any tensor (edges to v's old value and to the other
//   operands), then wraps it in a CopySlices node that becomes b's history. Its backward takes
//   the gradient of b's new value, gives the part at v's elements to fn, puts fn's gradient for
//   v's old value back in their place and sends the whole to b's old history; fn's gradients for
//   the other operands go to theirs. So
//     y = f(x); y.slice(1, 0, 1).copy_(g(x)); y.sum().backward();
//   sends the gradient of y's first column to g and of the rest to f, and a buffer that does not
//   require grad (`out = zeros(...); out[i].copy_(h)`) comes to require it.
// - v's own history is then made anew: as_strided of b at v's geometry, whose backward reaches
//   CopySlices. So is that of any view of b whose history was made from an older history of b
//   (an in-place op on b itself or through another view), v included, when its history is next
//   read (refresh_view_history, called by gradient_edge, grad_fn and requires_grad): b counts
//   the histories autograd gave it (TensorImpl::histories, set_history and detach_), and the view
//   remembers the count its own was made from (ViewRegistration::base_history). Writes that
//   autograd does not record (under NoGradGuard: an optimizer step) leave b's history and so
//   every view's as it was. A hook registered on a view's old history stays with that history.
// - Refused with an Error naming the op (check_write_through_view), as in PyTorch: a view of a
//   leaf that requires grad (run it under NoGradGuard); a view made with grad mode off of a tensor
//   that requires grad (it is outside the graph: ViewRegistration::outside_graph, set by
//   record_op, inherited by its views; detach_() on a view sets it too). leangrad also refuses a
//   base that is not contiguous (results of ops always are; detach() of a transposed view,
//   empty_strided, from_blob with strides or t_() can make one), a view whose elements may
//   share memory (as_strided windows) and one that reaches past its base's elements into the
//   storage (as_strided of a detached slice), where PyTorch has rules of its own.
// - A custom function that marks a view dirty is recorded the same way, its node inside the
//   CopySlices (rebase_history_through_view); as in PyTorch it must return that one tensor only
//   (Note [Dirty and non-differentiable outputs] in custom_function.cpp).
namespace {

// A view's history made anew from its base's: as_strided of the base at the view's geometry.
void remake_view_history(const Tensor& view) {
  ViewRegistration& registration = view.impl().view;
  const Tensor base(registration.base());
  registration.base_history = base.impl().histories;
  if (!base.requires_grad() || !is_floating(view.dtype())) return;
  const GradModeGuard grad_on(true);
  const Tensor fresh = as_strided(base, view.shape(), view.strides(), view.storage_offset());
  set_history(view, fresh.grad_fn(), 0);
}

// The gradient of a base written through one of its views (Note [In-place writes through
// views]): `fn` is the in-place op's node (its input `view_input` the view's old value, its one
// output the view's new value), the view's geometry is kept relative to the base's first element.
// The base is contiguous, so its gradient made contiguous holds each element where the base holds
// it.
class CopySlices final : public Node {
 public:
  CopySlices(std::shared_ptr<Node> fn, std::size_t view_input, const Tensor& base,
             const Tensor& view)
      : Node("CopySlices"),
        fn_(std::move(fn)),
        view_input_(view_input),
        view_shape_(view.shape()),
        view_strides_(view.strides()),
        view_offset_(view.storage_offset() - base.storage_offset()) {}

  std::vector<Tensor> apply(std::vector<Tensor>&& grad_outputs) override {
    const TensorMeta& base = output_meta.at(0);
    Tensor grad = std::move(grad_outputs.at(0));
    if (!grad.defined()) grad = zeros(base.shape, TensorOptions(base.dtype).device(base.device));
    // The base's gradient is the incoming one with the view's part replaced. Written into the
    // incoming one when nothing else can see it (no graph to keep, no other handle or view of
    // its memory: a recurrence writing T rows of a buffer then copies T rows, not T buffers);
    // otherwise into a copy, made of differentiable ops (create_graph).
    const bool in_place = !grad_mode_enabled() && only_handle(grad);
    const Tensor whole = grad.contiguous();
    Tensor at_view =
        as_strided(whole, view_shape_, view_strides_, whole.storage_offset() + view_offset_);
    // fn's gradients may be what it was given (copy_ passes it on): a copy, if the slot is then
    // written in place.
    if (in_place) at_view = at_view.clone();
    std::vector<Tensor> grads = fn_->apply({at_view});
    Tensor& for_view = grads.at(view_input_);
    if (next_edges[view_input_].valid()) {
      // The base's old value: the gradient everywhere but at the view, there fn's for the view's
      // old value (none: zero).
      Tensor result = in_place ? whole : clone(whole);
      Tensor slot =
          as_strided(result, view_shape_, view_strides_, result.storage_offset() + view_offset_);
      if (for_view.defined()) {
        slot.copy_(for_view);
      } else {
        slot.zero_();
      }
      for_view = result;
    } else {
      for_view = Tensor();
    }
    return grads;
  }
  void release_saved() override { fn_->release_saved(); }
  void prefetch_saved() override { fn_->prefetch_saved(); }

  // `view` (the written view's values) with the history of the view made from the base's new
  // history: as_strided of an alias of the base (contiguous, rebuilt from view's storage) whose
  // history is this node.
  Tensor view_of_new_base(const Tensor& view) {
    const TensorMeta& base_meta = output_meta.at(0);
    const Tensor base =
        views::as_strided(views::alias(view), base_meta.shape, contiguous_strides(base_meta.shape),
                          view.storage_offset() - view_offset_);
    set_history(base, shared_from_this(), 0);
    const GradModeGuard grad_on(true);
    return as_strided(base, view.shape(), view.strides(), view.storage_offset());
  }

 private:
  std::shared_ptr<Node> fn_;
  std::size_t view_input_;
  Shape view_shape_;
  Strides view_strides_;
  std::int64_t view_offset_;
};

}  // namespace

Tensor saved_output_through_view(const Tensor& data, const Node& fn) {
  const std::shared_ptr<Node> node = fn.copy_slices.lock();
  if (!node) return Tensor();
  return static_cast<CopySlices&>(*node).view_of_new_base(data);
}

namespace {

void refuse_view_outside_graph(const char* op, const Tensor& self, const Tensor& base) {
  LG_THROW(Error, op, ": in-place operation on a view (shape ", self.shape(),
           ") made while grad mode was off, or detached in place, of a tensor (shape ",
           base.shape(),
           ") that requires grad: the view is outside the graph, so autograd cannot follow the "
           "write into the base. Make the view with grad mode on, or write under NoGradGuard");
}

}  // namespace

void check_write_through_view(const char* op, const Tensor& self) {
  const ViewRegistration& registration = self.impl().view;
  if (!registration.active()) return;
  const Tensor base(registration.base());
  LG_CHECK(!(base.requires_grad() && base.is_leaf()), op, ": in-place operation on a view (shape ",
           self.shape(), ") of a leaf tensor (shape ", base.shape(),
           ") that requires grad; run it under NoGradGuard (initialisation, "
           "optimizer steps), or use the out-of-place op");
  if (registration.outside_graph) refuse_view_outside_graph(op, self, base);
  LG_CHECK(base.is_contiguous(), op, ": in-place operation recorded by autograd on a view (shape ",
           self.shape(), ") of a base that is not contiguous (shape ", base.shape(), ", strides ",
           shape_str(base.strides()), "); clone() the base first");
  LG_CHECK(surely_disjoint(self.shape(), self.strides()), op,
           ": in-place operation recorded by autograd on a view (shape ", self.shape(),
           ", strides ", shape_str(self.strides()),
           ") whose elements may share memory; clone() it first");
  // The view's elements must be the base's (as_strided may reach past them into the storage).
  const std::int64_t end =
      checked_extent(self.shape(), self.strides(), self.storage_offset(), self.element_size(), op);
  LG_CHECK(self.numel() == 0 || (self.storage_offset() >= base.storage_offset() &&
                                 end <= base.storage_offset() + base.numel()),
           op, ": in-place operation recorded by autograd on a view (shape ", self.shape(),
           ", offset ", self.storage_offset(), ") that reaches outside its base (shape ",
           base.shape(), ", offset ", base.storage_offset(), ")");
}

void check_unrecorded_write_through_view(const char* op, const Tensor& self) {
  const ViewRegistration& registration = self.impl().view;
  if (!registration.active() || !registration.outside_graph) return;
  const Tensor base(registration.base());
  if (base.requires_grad()) refuse_view_outside_graph(op, self, base);
}

void refresh_view_history(const Tensor& t) {
  const ViewRegistration& registration = t.impl().view;
  if (!registration.active() || registration.outside_graph) return;
  if (registration.base_history == registration.base()->histories) return;
  const AutogradMeta* meta = autograd_meta_or_null(t);
  if (meta != nullptr && meta->requires_grad && !meta->grad_fn) return;  // a leaf view
  remake_view_history(t);
}

void record_in_place(const char* forward_op, const Tensor& self, const std::vector<Tensor>& inputs,
                     std::vector<SavedTensor> saved, FunctionNode::Backward backward) {
  LG_INTERNAL_ASSERT(!inputs.empty() && inputs.front().is_same(self), forward_op,
                     ": record_in_place expects self as its first input");
  std::shared_ptr<Node> fn =
      make_function_node(forward_op, self, inputs, std::move(saved), std::move(backward),
                         DoubleBackward::Differentiable);
  if (self.impl().view.active()) {
    rebase_history_through_view(self, fn, 0);  // Note [In-place writes through views]
  } else {
    set_history(self, fn);
  }
}

void rebase_history_through_view(const Tensor& view, const std::shared_ptr<Node>& fn,
                                 std::size_t view_input) {
  // CopySlices, with fn inside, takes the gradient of the base's new value to the base's old
  // history and to fn's other inputs. fn runs only inside it (a saved output of fn unpacks
  // through it: saved_output_through_view); fn keeps its own edges, which say which of its
  // inputs need a gradient.
  LG_INTERNAL_ASSERT(view.impl().view.active() && view_input < fn->next_edges.size(), fn->name(),
                     ": rebase_history_through_view expects a view among fn's inputs");
  const Tensor base(view.impl().view.base());
  auto copy_slices = make_node<CopySlices>(fn, view_input, base, view);
  fn->copy_slices = copy_slices;
  copy_slices->next_edges = fn->next_edges;
  copy_slices->next_edges[view_input] = gradient_edge(base);
  copy_slices->output_meta.push_back(TensorMeta::of(base));
  set_history(base, copy_slices, 0);  // the view's history follows when next read
}

}  // namespace leangrad::autograd
