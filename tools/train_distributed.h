// leangrad-train in several processes: which rank this process is, and sums over the ranks.
//
// Note [Several processes]
// Started by leangrad-run (or torchrun, mpirun, srun: a world of more than one process), every
// process trains a replica as DistributedDataParallel (docs/distributed.md, docs/training.md):
// - each rank reads its own share of every epoch's shuffled order (DistributedSampler), so
//   --batch-size is the batch of one process and the global batch is world size times it;
// - DDP averages the gradients, so every rank takes the same optimizer step; --accumulate runs
//   the first micro-batches of a step under no_sync (one all-reduce per step);
// - the loss in the progress lines and the epoch lines is averaged over the ranks, and the test
//   set is split among them (rank r takes images r, r + W, ...), the correct predictions summed;
// - only rank 0 prints (the other ranks' stdout is closed for writing), writes --log-json,
//   checkpoints and --save-model; the checkpoint folder must be one every rank sees: each rank
//   resumes from it, and the ranks check that they resumed at the same step.
#pragma once

#include <leangrad/leangrad.h>

#include <string>
#include <vector>

namespace leangrad::tools {

struct World {
  int rank = 0;
  int size = 1;
  bool is_main() const { return rank == 0; }
};

// Several processes when a launcher says so (RANK, OMPI_COMM_WORLD_RANK or SLURM_PROCID set, and
// a world of more than one): the process group joined with `backend` ("gloo", "nccl"; empty: nccl
// on CUDA, gloo on the CPU and with `offload_params`), `device` set to cuda:LOCAL_RANK on CUDA
// (with Gloo, LOCAL_RANK modulo the visible GPUs: ranks may share one), and this rank's stdout
// closed unless it is rank 0. One process otherwise (no collective is ever called). With
// `offload_params` (--offload-params) the gradients are reduced in host memory, so the group is
// Gloo's (it stages the CUDA tensors of the loss sums through pinned buffers).
World join_world(const std::string& backend, Device& device, bool offload_params);

// The element-wise reduction of `values` over the ranks, through a float64 tensor on `device`
// (the process group's); the values themselves with one process. Every rank must call it.
std::vector<double> reduce_over_ranks(const World& world, std::vector<double> values, Device device,
                                      distributed::ReduceOp op = distributed::ReduceOp::Sum);

}  // namespace leangrad::tools
