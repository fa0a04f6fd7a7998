// Gradient checkpointing (recompute): trade compute for memory.
//   auto outputs = autograd::checkpoint([&](const std::vector<Tensor>& in) {
//     return std::vector<Tensor>{block->forward(in[0])};
//   }, {x});
// The forward runs without recording a graph, keeping only the inputs (through SavedTensor, so
// SaveOnCpu offloads them too) and the random-number state. Backward reruns `fn` with grad mode
// on from the same random state and backpropagates through that fresh graph. Checkpoints nest.
#pragma once

#include <functional>
#include <vector>

#include <leangrad/core/tensor.h>

namespace leangrad::autograd {

using CheckpointFn = std::function<std::vector<Tensor>(const std::vector<Tensor>&)>;

// Returns fn(inputs). Parameters that fn uses (captured tensors that require grad) receive their
// gradients when the segment is recomputed during backward.
std::vector<Tensor> checkpoint(const CheckpointFn& fn, const std::vector<Tensor>& inputs);

}  // namespace leangrad::autograd
