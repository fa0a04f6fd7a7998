// The backward engine: runs the graph from some root tensors to the leaves. See engine.cpp.
#pragma once

#include <vector>

#include "autograd/graph.h"

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

}  // namespace leangrad::autograd
