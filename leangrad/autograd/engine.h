// The backward engine: runs the graph from some root tensors to the leaves. See engine.cpp.
#pragma once

#include <functional>
#include <vector>

#include <leangrad/autograd/graph.h>

namespace leangrad::autograd {

// Backpropagates `grad_tensors` (one per tensor; an undefined one means ones, allowed only for
// one-element tensors) from `tensors` through the graph, accumulating into the leaves' .grad.
// Frees the graph's saved tensors afterwards unless retain_graph.
void backward(const std::vector<Tensor>& tensors, const std::vector<Tensor>& grad_tensors = {},
              bool retain_graph = false);

// The engine proper, on edges: used by backward() and by nodes that run a graph of their own
// (checkpoint recomputes a segment and backpropagates through it from inside its node).
void run_backward(const std::vector<Edge>& roots, std::vector<Tensor> root_grads,
                  bool retain_graph);

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
