// A process-wide count of host synchronisations: the times the host waited for device work or
// read a tensor's value. A training step that never reads a value on the host (amp::GradScaler's,
// clip_grad_norm_) leaves it unchanged, which is how the tests prove it; a benchmark can print it.
// docs/optimizers.md ("Mixed precision: GradScaler") lists what counts.
#pragma once

#include <cstdint>

namespace leangrad {

// How many host synchronisations this process has made so far (all threads, all devices):
//   - cuda::synchronize, Stream::synchronize, Event::synchronize, and the caching allocator's
//     waits on the events that guard a block's reuse;
//   - every stream synchronisation of a blocking copy between host and device, or between two
//     GPUs (kernels/cuda/copy.cu: one each for host <-> device, two for GPU -> GPU);
//   - Tensor::item() of a CPU tensor (the host reading a value: what a step must avoid on any
//     device). item() of a CUDA tensor counts once, through its device-to-host copy.
std::uint64_t host_sync_count();

// Adds one to the count; called at each of the places above (not for users).
void count_host_sync();

}  // namespace leangrad
