// The autograd engine: reverse-mode differentiation over the graph recorded by the ops.
//
// Policy
// - One backward runs on the calling thread, without recursion: a 100k-node chain needs no
//   stack depth. First a walk from the roots counts, for every reachable node, how many edges
//   lead into it (its dependencies). A node is ready when all of them have delivered.
//   See Note [Dependency counting].
// - Gradients arriving at the same node input are summed in that node's input buffer, so a
//   tensor used several times gets the sum of its gradients (out of place: an arriving gradient
//   may be shared by several edges).
// - Ready nodes run in decreasing creation order (the reverse of the forward), except that leaf
//   accumulators run as soon as they are ready, so post-accumulate-grad hooks fire early (data
//   parallelism starts reducing a gradient while backward goes on).
// - Before a node runs, the next ready node prefetches its saved tensors: with SaveOnCpu the
//   copy back to the GPU overlaps this node's compute. See Note [Prefetching saved tensors].
// - Backward formulas run with grad mode off (no graph of the backward is recorded), unless
//   create_graph: then they are recorded like a forward. See Note [Double backward].
// - autograd::grad captures the gradients arriving at its inputs' edges instead of accumulating:
//   only the nodes that lead to an input run. See Note [Capturing gradients].
// - Unless retain_graph, each node frees its saved tensors right after it ran; a second backward
//   through it then throws an Error naming the node.
// - AnomalyMode checks every result for NaN/Inf and names the node and its forward op.
// - Callbacks queued during a backward (queue_callback) run after its last node, before it
//   returns. See Note [End-of-backward callbacks].
#include <leangrad/autograd/engine.h>

#include <queue>
#include <unordered_map>
#include <unordered_set>

#include <leangrad/autograd/autocast.h>
#include <leangrad/autograd/functions.h>
#include <leangrad/autograd/grad_mode.h>
#include <leangrad/core/profiler.h>
#include <leangrad/kernels/creation.h>

namespace leangrad::autograd {

namespace {

// Note [Dependency counting]: dependencies[n] = number of edges into n from nodes reachable from
// the roots. The walk is an explicit stack, not recursion.
std::unordered_map<Node*, int> count_dependencies(const std::vector<Edge>& roots) {
  std::unordered_map<Node*, int> dependencies;
  std::vector<Node*> stack;
  std::unordered_map<Node*, bool> seen;
  for (const Edge& root : roots) {
    if (root.valid() && !seen[root.function.get()]) {
      seen[root.function.get()] = true;
      stack.push_back(root.function.get());
    }
  }
  while (!stack.empty()) {
    Node* node = stack.back();
    stack.pop_back();
    for (const Edge& e : node->next_edges) {
      if (!e.valid()) continue;
      ++dependencies[e.function.get()];
      bool& visited = seen[e.function.get()];
      if (!visited) {
        visited = true;
        stack.push_back(e.function.get());
      }
    }
  }
  return dependencies;
}

void check_anomaly(const Node& node, const std::vector<Tensor>& grads) {
  for (std::size_t i = 0; i < grads.size(); ++i) {
    if (!grads[i].defined() || !has_non_finite(grads[i])) continue;
    const auto* fn = dynamic_cast<const FunctionNode*>(&node);
    LG_THROW(Error, "AnomalyMode: ", node.name(),
             " returned NaN or Inf values in its gradient for "
             "input ",
             i, " (shape ", grads[i].shape(), ")",
             fn ? " ; the forward op that created it was '" + fn->forward_op() + "'" : "");
  }
}

struct ReadyOrder {
  // Leaf accumulators first, then the most recently created node.
  static std::uint64_t priority(const Node* n) {
    return dynamic_cast<const AccumulateGrad*>(n) != nullptr ? UINT64_MAX : n->sequence_nr();
  }
  bool operator()(const Node* a, const Node* b) const { return priority(a) < priority(b); }
};

// Note [End-of-backward callbacks]: a hook sees one gradient; some work needs the whole backward
// done (DistributedDataParallel waits there for the all-reduces its hooks started, so that
// backward() returns only reduced gradients). Each thread has at most one list of callbacks,
// owned by its outermost run_backward; nested runs (checkpoint recomputes and backpropagates
// from inside a node) add to it. The outermost run calls them, in order, after its last node;
// a callback may queue another, which runs after it. If the backward throws, the list dies with
// the run's frame: nothing half-done runs after an error.
thread_local std::vector<std::function<void()>>* tls_callbacks = nullptr;
thread_local bool tls_captures = false;

// Note [Double backward]: with create_graph the engine runs every node with grad mode on, so a
// backward formula written with the public functions (mul, exp, where, ...) is recorded like a
// forward, and the gradients it returns can be differentiated again (autograd::grad twice,
// gradient penalties, Hessian-vector products). For that the formula must see its saved tensors
// in the graph: SavedTensor::unpack hands back a saved input itself and a saved output as an
// alias whose grad_fn is the saving node (plain backward still gets detached aliases). Two
// things cannot take part and say so instead of returning a silently wrong second derivative:
// a backward recorded as DoubleBackward::NotImplemented (graph.h: its results get a node that
// throws, naming the op; no built-in op is recorded so any more: the fused backward kernels of
// kernels/ops.h are recorded as ops with formulas of their own, Note [Fused backwards that
// differentiate again] in nn_functions.cpp, and the normalizations differentiate a composite,
// Note [Normalizations differentiated twice]), and a tensor saved through saved-tensor hooks
// (unpack throws). AccumulateGrad adds out of place under create_graph, so .grad keeps its graph.
//
// Note [Capturing gradients]: autograd::grad wants the gradient of each input, not a .grad
// updated. The gradient of a tensor is what its edge's node has summed in its input buffer when
// it becomes ready, so it is read there (after the tensor's hooks). Nodes that lead to no
// captured edge are not run at all (that spares the work, and it is what keeps every leaf's
// .grad untouched: AccumulateGrad nodes never run). A node leads to a captured edge when one of
// its edges is captured or leads to one; as the graph is acyclic, one post-order walk decides
// it for every node. Every parent of a node that runs also runs, so the dependency counts of
// the nodes that run are complete without the others.
std::unordered_map<Node*, bool> nodes_leading_to(const std::vector<Edge>& roots,
                                                 const std::unordered_set<Node*>& targets) {
  std::unordered_map<Node*, bool> leads;  // absent: not seen; false until its walk is done
  std::vector<std::pair<Node*, std::size_t>> stack;  // a node and its next edge to visit
  for (const Edge& root : roots) {
    if (!root.valid() || leads.count(root.function.get()) != 0) continue;
    leads[root.function.get()] = false;
    stack.emplace_back(root.function.get(), 0);
    while (!stack.empty()) {
      Node* node = stack.back().first;
      const std::size_t i = stack.back().second;
      if (i < node->next_edges.size()) {
        ++stack.back().second;
        Node* next = node->next_edges[i].function.get();
        if (next != nullptr && leads.count(next) == 0) {
          leads[next] = false;
          stack.emplace_back(next, 0);
        }
        continue;
      }
      bool lead = false;
      for (const Edge& e : node->next_edges) {
        if (e.valid() && (targets.count(e.function.get()) != 0 || leads[e.function.get()])) {
          lead = true;
        }
      }
      leads[node] = lead;
      stack.pop_back();
    }
  }
  return leads;
}

void accumulate(Tensor& slot, Tensor grad) {
  if (!grad.defined()) return;
  slot = slot.defined() ? slot + grad : std::move(grad);
}

}  // namespace

std::vector<Tensor> run_backward(const std::vector<Edge>& roots, std::vector<Tensor> root_grads,
                                 const BackwardOptions& options) {
  LG_INTERNAL_ASSERT(roots.size() == root_grads.size());
  const bool retain_graph = options.retain_graph;
  GradModeGuard grad_mode(options.create_graph);  // Note [Double backward]
  const bool captures = options.capture.has_value();
  struct CapturesScope {
    bool previous;
    ~CapturesScope() { tls_captures = previous; }
  } captures_scope{tls_captures};
  tls_captures = captures;
  std::unordered_set<Node*> targets;
  std::vector<Tensor> captured;
  std::unordered_map<Node*, bool> leads;
  if (captures) {
    for (const Edge& e : *options.capture) {
      if (e.valid()) targets.insert(e.function.get());
    }
    captured.resize(options.capture->size());
    leads = nodes_leading_to(roots, targets);
  }
  // Whether a node takes part: every node in a backward; in a capture, those that run and those
  // whose buffer is read.
  auto takes_part = [&](Node* node) { return !captures || leads[node] || targets.count(node); };
  // Gradients are computed in the dtypes the forward ran in, whatever autocast says here
  // (autograd/autocast.h).
  amp::AutocastGuard no_autocast(kBFloat16, std::nullopt, /*enabled=*/false);
  std::vector<std::function<void()>> callbacks;  // Note [End-of-backward callbacks]
  const bool outermost = tls_callbacks == nullptr;
  // A nested run queues onto the outermost run's list, and keeps what it queued even if it
  // throws: the owners of those callbacks (DistributedDataParallel's reducer, ParameterOffload)
  // queue one per outer backward behind a flag, and would not queue it again.
  struct CallbacksScope {
    bool active;
    ~CallbacksScope() {
      if (active) tls_callbacks = nullptr;
    }
  } scope{outermost};
  if (outermost) tls_callbacks = &callbacks;
  std::unordered_map<Node*, int> dependencies = count_dependencies(roots);
  std::unordered_map<Node*, std::vector<Tensor>> buffers;
  auto buffer_of = [&](Node* node) -> std::vector<Tensor>& {
    std::vector<Tensor>& buffer = buffers[node];
    if (buffer.empty()) buffer.resize(std::max<std::size_t>(node->output_meta.size(), 1));
    return buffer;
  };
  std::priority_queue<Node*, std::vector<Node*>, ReadyOrder> ready;
  for (std::size_t i = 0; i < roots.size(); ++i) {
    if (!roots[i].valid()) continue;
    accumulate(buffer_of(roots[i].function.get())[roots[i].input_nr], std::move(root_grads[i]));
  }
  for (const Edge& root : roots) {
    Node* node = root.function.get();
    if (root.valid() && dependencies[node] == 0 && takes_part(node)) {
      dependencies[node] = -1;  // queued once even if several roots share it
      ready.push(node);
    }
  }

  while (!ready.empty()) {
    Node* node = ready.top();
    ready.pop();
    // Note [Prefetching saved tensors]: the node that runs next starts unpacking now, so an
    // asynchronous unpack hook (SaveOnCpu's copy to the GPU) overlaps this node's compute.
    if (!ready.empty()) ready.top()->prefetch_saved();

    std::vector<Tensor> inputs = std::move(buffer_of(node));
    buffers.erase(node);
    // A copy of the hooks: one may register another hook on this tensor, which would reallocate
    // the list under the loop.
    const auto pre_hooks = node->pre_hooks;
    for (const auto& [output_nr, hook] : pre_hooks) {
      if (!inputs[output_nr].defined()) continue;
      Tensor replaced = hook(inputs[output_nr]);
      if (!replaced.defined()) continue;
      node->output_meta.at(output_nr).check(replaced, "a gradient hook returned a gradient",
                                            "the output of " + node->name());
      inputs[output_nr] = std::move(replaced);
    }
    if (captures && targets.count(node) != 0) {
      const auto* accumulator = dynamic_cast<const AccumulateGrad*>(node);
      for (std::size_t i = 0; i < captured.size(); ++i) {
        const Edge& e = (*options.capture)[i];
        if (e.function.get() != node || !inputs[e.input_nr].defined()) continue;
        captured[i] = accumulator != nullptr ? accumulator->run_hooks(inputs[e.input_nr])
                                             : inputs[e.input_nr];
      }
      if (!leads[node]) continue;
    }
    std::vector<Tensor> outputs;
    {
      const profiler::Span span(node->name().c_str(), profiler::Category::Backward);
      outputs = node->apply(std::move(inputs));
      if (!retain_graph) node->release_saved();
    }
    if (anomaly_mode_enabled()) check_anomaly(*node, outputs);

    LG_INTERNAL_ASSERT(outputs.empty() || outputs.size() == node->next_edges.size(), node->name(),
                       " returned ", outputs.size(), " gradients for ", node->next_edges.size(),
                       " inputs");
    for (std::size_t i = 0; i < node->next_edges.size(); ++i) {
      const Edge& e = node->next_edges[i];
      if (!e.valid()) continue;
      Node* next = e.function.get();
      if (!takes_part(next)) continue;
      if (i < outputs.size()) accumulate(buffer_of(next)[e.input_nr], std::move(outputs[i]));
      if (--dependencies[next] == 0) ready.push(next);
    }
  }
  if (!outermost) return captured;
  for (std::size_t i = 0; i < callbacks.size(); ++i) {
    std::function<void()> callback = std::move(callbacks[i]);  // it may queue more (reallocate)
    callback();
  }
  return captured;
}

bool backward_captures() {
  return tls_captures;
}

bool backward_running() {
  return tls_callbacks != nullptr;
}

void queue_callback(std::function<void()> callback) {
  LG_CHECK(tls_callbacks != nullptr,
           "autograd::queue_callback: no backward is running on this thread (call it from a "
           "gradient hook or a node while backward runs)");
  tls_callbacks->push_back(std::move(callback));
}

namespace {

// The root edges and gradients of a backward or grad call from `tensors` and `grad_tensors`.
// `what` names the call in errors.
void make_roots(const char* what, const std::vector<Tensor>& tensors,
                const std::vector<Tensor>& grad_tensors, bool create_graph,
                std::vector<Edge>& roots, std::vector<Tensor>& grads) {
  LG_CHECK(grad_tensors.empty() || grad_tensors.size() == tensors.size(), what, ": got ",
           grad_tensors.size(), " gradients for ", tensors.size(), " tensors");
  for (std::size_t i = 0; i < tensors.size(); ++i) {
    const Tensor& t = tensors[i];
    LG_CHECK(t.defined(), what, ": tensor ", i, " is undefined");
    LG_CHECK(t.requires_grad(), what, ": tensor ", i, " (shape ", t.shape(),
             ") does not require grad and has no grad_fn; did you run the forward under "
             "NoGradGuard, or forget requires_grad_()?");
    Tensor grad = grad_tensors.empty() ? Tensor() : grad_tensors[i];
    if (!grad.defined()) {
      LG_CHECK_SHAPE(t.numel() == 1, what,
                     ": a gradient can be created implicitly only for "
                     "one-element outputs, got shape ",
                     t.shape(), "; pass the gradient of each output");
      grad = ones(t.shape(), t.options());
    } else {
      LG_CHECK_SHAPE(grad.shape() == t.shape(), what, ": gradient of shape ", grad.shape(),
                     " for a tensor of shape ", t.shape());
      LG_CHECK_DEVICE(grad.device() == t.device(), what, ": gradient on ", grad.device(),
                      " for a tensor on ", t.device());
      // A given gradient takes part in the graph only under create_graph (a Hessian-vector
      // product differentiates through it).
      if (!create_graph) grad = grad.detach();
      // A leaf root has no node to cast its gradient: do it here, as PyTorch does.
      if (grad.dtype() != t.dtype()) grad = grad.to(t.dtype());
    }
    roots.push_back(gradient_edge(t));
    grads.push_back(std::move(grad));
  }
}

}  // namespace

void backward(const std::vector<Tensor>& tensors, const std::vector<Tensor>& grad_tensors,
              std::optional<bool> retain_graph, bool create_graph) {
  std::vector<Edge> roots;
  std::vector<Tensor> grads;
  make_roots("backward", tensors, grad_tensors, create_graph, roots, grads);
  run_backward(roots, std::move(grads),
               BackwardOptions{retain_graph.value_or(create_graph), create_graph, std::nullopt});
}

std::vector<Tensor> grad(const std::vector<Tensor>& outputs, const std::vector<Tensor>& inputs,
                         const std::vector<Tensor>& grad_outputs, std::optional<bool> retain_graph,
                         bool create_graph, bool allow_unused) {
  LG_CHECK(!outputs.empty(), "autograd::grad: expected at least one output");
  LG_CHECK(!inputs.empty(), "autograd::grad: expected at least one input");
  std::vector<Edge> roots;
  std::vector<Tensor> grads;
  make_roots("autograd::grad", outputs, grad_outputs, create_graph, roots, grads);
  std::vector<Edge> capture;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const Tensor& in = inputs[i];
    LG_CHECK(in.defined(), "autograd::grad: input ", i, " is undefined");
    LG_CHECK(in.requires_grad(), "autograd::grad: input ", i, " (shape ", in.shape(),
             ") does not require grad: nothing can have a gradient with respect to it");
    capture.push_back(gradient_edge(in));
  }
  std::vector<Tensor> result =
      run_backward(roots, std::move(grads),
                   BackwardOptions{retain_graph.value_or(create_graph), create_graph, capture});
  for (std::size_t i = 0; i < result.size(); ++i) {
    LG_CHECK(result[i].defined() || allow_unused, "autograd::grad: input ", i, " (shape ",
             inputs[i].shape(),
             ") was not used to compute the outputs; pass allow_unused=true to get an "
             "undefined gradient for it");
  }
  return result;
}

}  // namespace leangrad::autograd
