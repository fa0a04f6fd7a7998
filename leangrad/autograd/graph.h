// The autograd graph: nodes (one per recorded op, named like "MulBackward"), the edges that link
// a node to the nodes of its inputs, and the two node kinds every op uses: FunctionNode (a
// backward formula over saved tensors) and AccumulateGrad (a leaf's .grad). The engine that runs
// the graph is engine.cpp; ops record themselves through record_op (functions.cpp).
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <leangrad/autograd/autograd_meta.h>
#include <leangrad/autograd/saved_tensor.h>
#include <leangrad/core/tensor.h>

namespace leangrad::autograd {

class Node;

// Where a gradient goes: input `input_nr` of `function`. An edge without a function means the
// corresponding forward input needs no gradient.
struct Edge {
  std::shared_ptr<Node> function;
  std::uint32_t input_nr = 0;
  bool valid() const { return function != nullptr; }
};

// (TensorMeta, what a gradient must look like, is in saved_tensor.h.)
using GradHook = std::function<Tensor(const Tensor&)>;

class Node : public std::enable_shared_from_this<Node> {
 public:
  explicit Node(std::string name);
  virtual ~Node() = default;
  Node(const Node&) = delete;
  Node& operator=(const Node&) = delete;

  // Gradients for the forward inputs (one per next edge; undefined = none) from the gradients
  // of the forward outputs (one per output; undefined = zero).
  virtual std::vector<Tensor> apply(std::vector<Tensor>&& grad_outputs) = 0;
  // Frees what the node saved for backward (after backward, unless retain_graph).
  virtual void release_saved() {}
  // Starts bringing saved tensors back early (the engine calls this for the next node to run).
  virtual void prefetch_saved() {}

  const std::string& name() const { return name_; }
  std::uint64_t sequence_nr() const { return sequence_nr_; }

  std::vector<Edge> next_edges;         // one per forward input
  std::vector<TensorMeta> output_meta;  // one per forward output
  // Hooks on the gradients of this node's outputs (tensor.register_hook on a non-leaf).
  std::vector<std::pair<std::uint32_t, GradHook>> pre_hooks;
  // Set when the node's one output was written through a view (rebase_history_through_view): the
  // CopySlices node that became the base's history. Held weakly: it owns this node.
  std::weak_ptr<Node> copy_slices;

 private:
  std::string name_;
  std::uint64_t sequence_nr_;
};

// Accumulates the gradient of a leaf into its .grad, running the leaf's hooks.
class AccumulateGrad final : public Node {
 public:
  explicit AccumulateGrad(std::shared_ptr<TensorImpl> leaf);
  // Runs the leaf's gradient hooks, accumulates into .grad, then runs its post-accumulate hooks:
  // the engine applies a node once per backward, after all contributions to it were summed, so
  // .grad is final for this backward when they run. Under create_graph (grad mode on) .grad
  // becomes old + new out of place, so it keeps the graph of its computation.
  std::vector<Tensor> apply(std::vector<Tensor>&& grad_outputs) override;
  // The leaf's gradient hooks alone: autograd::grad runs them on a leaf's gradient before
  // returning it (it accumulates nothing).
  Tensor run_hooks(Tensor grad) const;

 private:
  std::shared_ptr<TensorImpl> leaf_;
};

// What a backward formula gets: the unpacked saved tensors, the gradient of the op's output
// (zeros if none flowed), and for each forward input its metadata and whether it needs a grad.
struct BackwardContext {
  std::vector<Tensor> saved;
  Tensor grad;
  const std::vector<TensorMeta>& inputs;
  std::vector<bool> needs_grad;
  bool needs(std::size_t i) const { return needs_grad[i]; }
  const Shape& shape(std::size_t i) const { return inputs[i].shape; }
};

// Whether an op's backward formula can itself be differentiated (create_graph=true, double
// backward). Formulas written with the public functions can (the engine records them like any
// forward); a fused backward kernel of kernels/ops.h cannot, and its results then carry a node
// that refuses a second backward by name instead of giving a silently wrong second derivative.
// See Note [Double backward] in engine.cpp.
enum class DoubleBackward : bool { Differentiable, NotImplemented };

// The backward of one single-output op: gradients of the inputs from a BackwardContext.
// Results are cast back to each input's dtype and device and checked against its shape.
class FunctionNode final : public Node {
 public:
  using Backward = std::function<std::vector<Tensor>(const BackwardContext& ctx)>;
  FunctionNode(std::string name, std::string forward_op, std::vector<TensorMeta> input_meta,
               std::vector<SavedTensor> saved, Backward backward,
               DoubleBackward double_backward = DoubleBackward::Differentiable);
  std::vector<Tensor> apply(std::vector<Tensor>&& grad_outputs) override;
  void release_saved() override;
  void prefetch_saved() override;
  const std::string& forward_op() const { return forward_op_; }

 private:
  std::string forward_op_;
  std::vector<TensorMeta> input_meta_;
  std::vector<SavedTensor> saved_;
  Backward backward_;
  DoubleBackward double_backward_;
};

// Deletes a node and, iteratively, the nodes only it kept alive: destroying a graph of a million
// nodes must not recurse a million deep. See Note [Deleting long graphs].
void delete_node(Node* node);

// Every node is created through this, so its deleter is delete_node.
template <typename T, typename... Args>
std::shared_ptr<T> make_node(Args&&... args) {
  return std::shared_ptr<T>(new T(std::forward<Args>(args)...), &delete_node);
}

// "mul" -> "MulBackward", "max_pool2d" -> "MaxPool2dBackward".
std::string backward_name(const std::string& forward_op);

// True when grad mode is on and any of the tensors requires grad.
bool any_requires_grad(std::initializer_list<const Tensor*> tensors);
bool any_requires_grad(const std::vector<Tensor>& tensors);

// The edge a gradient for `t` flows along: its grad_fn, or its leaf accumulator (created on
// demand), or an invalid edge when t does not require grad.
Edge gradient_edge(const Tensor& t);

// Makes `fn` the producer of `t` (its output_nr-th output) and marks t as requiring grad. A
// tensor that retains its gradient takes that along to its new history (an in-place op).
void set_history(const Tensor& t, const std::shared_ptr<Node>& fn, std::uint32_t output_nr = 0);

// Makes the non-leaf `t`'s grad_fn store t's gradient in t's .grad (Tensor::retain_grad; Note
// [Retained gradients]).
void retain_grad_at_history(const Tensor& t);

// Records a single-output op: when grad mode is on, an input requires grad and `out` is
// floating, `out` gets a FunctionNode named after `forward_op` with edges to `inputs`, keeping
// `saved` for `backward`. Returns `out`. A backward that calls a fused kernel of kernels/ops.h
// (no derivative of its own) passes DoubleBackward::NotImplemented.
Tensor record_op(const char* forward_op, const Tensor& out, const std::vector<Tensor>& inputs,
                 const std::vector<Tensor>& saved, FunctionNode::Backward backward,
                 DoubleBackward double_backward = DoubleBackward::Differentiable);

// Records an in-place op whose kernel has already written its result into `self` (PyTorch's
// rebase_history): a FunctionNode named after `forward_op`, with edges to `inputs` (self first,
// through the history it had before the write; then the other operands), becomes self's history.
// When self is a view, the node goes into a CopySlices node that becomes the history of self's
// base, and self's history is made anew as a view of it (Note [In-place writes through views]).
// `saved` were made by the caller, each at the moment its value is the one backward needs: self
// after the write (SavedTensor(self, 0), self being the node's output), an operand before it (so
// a write through an alias of it is caught). The caller has checked that autograd records the op
// (Note [In-place ops in the graph] in tensor_methods.cpp).
void record_in_place(const char* forward_op, const Tensor& self, const std::vector<Tensor>& inputs,
                     std::vector<SavedTensor> saved, FunctionNode::Backward backward);

// The history of a write through `view` (PyTorch's rebase_history of a view): `fn`, the node of
// the op that wrote it, one output, its input `view_input` the view's old value, goes into a
// CopySlices node that becomes the history of the view's base; the view's own history is made
// anew from it when next read (Note [In-place writes through views]). record_in_place's path for
// a view, and that of a custom function that marks a view dirty. The caller has checked the write
// (check_write_through_view).
void rebase_history_through_view(const Tensor& view, const std::shared_ptr<Node>& fn,
                                 std::size_t view_input);

// A saved output of `fn` unpacked under create_graph when fn wrote it through a view: an alias of
// `data` whose history is an as_strided view of the base's CopySlices node, as PyTorch's
// SavedVariable restores an in-place-on-view output (not fn itself, which runs only inside
// CopySlices: a graph reaching fn both ways would run it twice, the second time after its saved
// tensors were freed). Undefined when fn wrote no view, or its CopySlices node is gone (then
// nothing reaches it).
Tensor saved_output_through_view(const Tensor& data, const Node& fn);

// Refuses, naming the op, an in-place write through the view `self` that autograd cannot record
// (Note [In-place writes through views]): a view of a leaf that requires grad, a view made with
// grad mode off of a tensor that requires grad, a base that is not contiguous, a view whose
// elements may share memory, a view reaching past its base's elements. Nothing when self is not a
// view.
void check_write_through_view(const char* op, const Tensor& self);

// Refuses, naming the op, a write with grad mode on that autograd does not record (neither self
// nor the operand requires grad) into a view outside the graph whose base requires grad: a view
// made with grad mode off, or detached in place. The base's value would change where its graph
// does not look (its gradient silently wrong); PyTorch refuses the write too.
void check_unrecorded_write_through_view(const char* op, const Tensor& self);

// A view whose base has had its history changed since the view's own was made (an in-place op on
// the base or through another of its views) gets a new one: an as_strided view of the base's
// (Note [In-place writes through views]). Called wherever a tensor's history is read.
void refresh_view_history(const Tensor& t);
inline void refresh_if_view(const Tensor& t) {
  if (t.defined() && t.impl().view.active()) refresh_view_history(t);
}

}  // namespace leangrad::autograd
