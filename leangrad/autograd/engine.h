// The backward engine: runs the graph from some root tensors to the leaves. See engine.cpp.
#pragma once

#include <functional>
#include <optional>
#include <vector>

#include <leangrad/autograd/graph.h>

namespace leangrad::autograd {

// Backpropagates `grad_tensors` (one per tensor; an undefined one means ones, allowed only for
// one-element tensors) from `tensors` through the graph, accumulating into the leaves' .grad.
// Frees the graph's saved tensors afterwards unless retain_graph (default: create_graph).
// create_graph records the backward itself, so the gradients can be differentiated again.
void backward(const std::vector<Tensor>& tensors, const std::vector<Tensor>& grad_tensors = {},
              std::optional<bool> retain_graph = std::nullopt, bool create_graph = false);

// The gradients of `outputs` (weighted by grad_outputs, as in backward) with respect to each of
// `inputs`, returned instead of accumulated: no leaf's .grad changes, and only the part of the
// graph between them runs (torch::autograd::grad). An input the outputs do not depend on is an
// error unless allow_unused (then its gradient is undefined). With create_graph the results
// have a graph of their own (second derivatives, gradient penalties); through an op whose
// backward is a fused kernel, that second backward throws, naming the op (docs/autograd.md).
std::vector<Tensor> grad(const std::vector<Tensor>& outputs, const std::vector<Tensor>& inputs,
                         const std::vector<Tensor>& grad_outputs = {},
                         std::optional<bool> retain_graph = std::nullopt, bool create_graph = false,
                         bool allow_unused = false);

// What one run of the engine is asked for.
struct BackwardOptions {
  bool retain_graph = false;
  bool create_graph = false;  // record the backward (grad mode on while nodes run)
  // When set: return the gradient arriving at each of these edges, run only the nodes that lead
  // to them, and accumulate into no leaf (autograd::grad). Unset: accumulate (backward).
  std::optional<std::vector<Edge>> capture;
};

// The engine proper, on edges: used by backward(), grad() and by nodes that run a graph of their
// own (checkpoint recomputes a segment and backpropagates through it from inside its node).
// Returns the captured gradients (empty without options.capture).
std::vector<Tensor> run_backward(const std::vector<Edge>& roots, std::vector<Tensor> root_grads,
                                 const BackwardOptions& options);
inline void run_backward(const std::vector<Edge>& roots, std::vector<Tensor> root_grads,
                         bool retain_graph) {
  run_backward(roots, std::move(root_grads), BackwardOptions{retain_graph, false, std::nullopt});
}

// True while the backward running on this thread captures gradients for autograd::grad instead
// of accumulating them (checkpoint refuses to run inside it: it accumulates).
bool backward_captures();

// Runs `callback` once the backward running on this thread has run every node, just before
// backward() returns: the end-of-backward hook that data parallelism waits for its all-reduces
// in (PyTorch's queue_callback). Only callable while a backward runs (from a hook or a node);
// callbacks run in the order queued, with grad mode off, and may queue more. A backward nested
// in another (checkpoint's recompute) hands its callbacks to the outermost one. A backward that
// throws drops the callbacks not yet run; a callback that throws ends backward with its error.
// See Note [End-of-backward callbacks].
void queue_callback(std::function<void()> callback);

// True while a backward runs on this thread (in its nodes, hooks and callbacks, and in the
// forward of a checkpoint's recompute).
bool backward_running();

}  // namespace leangrad::autograd
