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
// - Backward formulas run with grad mode off (no graph of the backward is recorded).
// - Unless retain_graph, each node frees its saved tensors right after it ran; a second backward
//   through it then throws an Error naming the node.
// - AnomalyMode checks every result for NaN/Inf and names the node and its forward op.
// - Callbacks queued during a backward (queue_callback) run after its last node, before it
//   returns. See Note [End-of-backward callbacks].
#include <leangrad/autograd/engine.h>

#include <queue>
#include <unordered_map>

#include <leangrad/autograd/autocast.h>
#include <leangrad/autograd/functions.h>
#include <leangrad/autograd/grad_mode.h>
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

void accumulate(Tensor& slot, Tensor grad) {
  if (!grad.defined()) return;
  slot = slot.defined() ? slot + grad : std::move(grad);
}

}  // namespace

void run_backward(const std::vector<Edge>& roots, std::vector<Tensor> root_grads,
                  bool retain_graph) {
  LG_INTERNAL_ASSERT(roots.size() == root_grads.size());
  NoGradGuard no_grad;
  // Gradients are computed in the dtypes the forward ran in, whatever autocast says here
  // (autograd/autocast.h).
  amp::AutocastGuard no_autocast(kBFloat16, std::nullopt, /*enabled=*/false);
  std::vector<std::function<void()>> callbacks;  // Note [End-of-backward callbacks]
  const bool outermost = tls_callbacks == nullptr;
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
    if (root.valid() && dependencies[node] == 0) {
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
    for (const auto& [output_nr, hook] : node->pre_hooks) {
      if (!inputs[output_nr].defined()) continue;
      Tensor replaced = hook(inputs[output_nr]);
      if (!replaced.defined()) continue;
      check_hook_result(replaced, node->output_meta.at(output_nr), "the output of " + node->name());
      inputs[output_nr] = std::move(replaced);
    }
    std::vector<Tensor> outputs = node->apply(std::move(inputs));
    if (!retain_graph) node->release_saved();
    if (anomaly_mode_enabled()) check_anomaly(*node, outputs);

    LG_INTERNAL_ASSERT(outputs.empty() || outputs.size() == node->next_edges.size(), node->name(),
                       " returned ", outputs.size(), " gradients for ", node->next_edges.size(),
                       " inputs");
    for (std::size_t i = 0; i < node->next_edges.size(); ++i) {
      const Edge& e = node->next_edges[i];
      if (!e.valid()) continue;
      Node* next = e.function.get();
      if (i < outputs.size()) accumulate(buffer_of(next)[e.input_nr], std::move(outputs[i]));
      if (--dependencies[next] == 0) ready.push(next);
    }
  }
  if (!outermost) return;
  for (std::size_t i = 0; i < callbacks.size(); ++i) {
    std::function<void()> callback = std::move(callbacks[i]);  // it may queue more (reallocate)
    callback();
  }
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

void backward(const std::vector<Tensor>& tensors, const std::vector<Tensor>& grad_tensors,
              bool retain_graph) {
  LG_CHECK(grad_tensors.empty() || grad_tensors.size() == tensors.size(), "backward: got ",
           grad_tensors.size(), " gradients for ", tensors.size(), " tensors");
  std::vector<Edge> roots;
  std::vector<Tensor> grads;
  for (std::size_t i = 0; i < tensors.size(); ++i) {
    const Tensor& t = tensors[i];
    LG_CHECK(t.defined(), "backward: tensor ", i, " is undefined");
    LG_CHECK(t.requires_grad(), "backward: tensor ", i, " (shape ", t.shape(),
             ") does not require grad and has no grad_fn; did you run the forward under "
             "NoGradGuard, or forget requires_grad_()?");
    Tensor grad = grad_tensors.empty() ? Tensor() : grad_tensors[i];
    if (!grad.defined()) {
      LG_CHECK_SHAPE(t.numel() == 1,
                     "backward: a gradient can be created implicitly only for "
                     "one-element outputs, got shape ",
                     t.shape(), "; pass backward(grad)");
      grad = ones(t.shape(), t.options());
    } else {
      LG_CHECK_SHAPE(grad.shape() == t.shape(), "backward: gradient of shape ", grad.shape(),
                     " for a tensor of shape ", t.shape());
      LG_CHECK_DEVICE(grad.device() == t.device(), "backward: gradient on ", grad.device(),
                      " for a tensor on ", t.device());
      grad = grad.detach();
      // A leaf root has no node to cast its gradient: do it here, as PyTorch does.
      if (grad.dtype() != t.dtype()) grad = grad.to(t.dtype());
    }
    roots.push_back(gradient_edge(t));
    grads.push_back(std::move(grad));
  }
  run_backward(roots, std::move(grads), retain_graph);
}

}  // namespace leangrad::autograd
