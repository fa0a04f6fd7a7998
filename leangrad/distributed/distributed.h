// leangrad::distributed: several processes (on one machine or many) working as one job, as
// torch.distributed. init_process_group makes the default process group from the launcher's
// environment; the collectives below run on it. docs/distributed.md describes the design, the
// environment variables and every error.
//
//   // leangrad-run --nproc-per-node 2 ./program   (or torchrun, mpirun, srun)
//   distributed::init_process_group(distributed::Backend::Gloo);
//   Tensor t = full({4}, distributed::get_rank() + 1.0);
//   distributed::all_reduce(t);                    // every rank: [3, 3, 3, 3]
//   distributed::destroy_process_group();
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <leangrad/core/tensor.h>
#include <leangrad/distributed/init_options.h>
#include <leangrad/distributed/process_group.h>
#include <leangrad/distributed/reduce_op.h>
#include <leangrad/distributed/work.h>

namespace leangrad::distributed {

// ---- The default process group -----------------------------------------------------------------
// Joins the job: reads the rank, the world size and rank 0's address from the environment
// (environment.h lists the variables of torchrun, Open MPI and Slurm), meets the other ranks
// through the store and connects the backend. Throws Error within seconds for a bad environment
// (a rank not below the world size, mismatched world sizes, a port in use), and after the
// timeout for ranks that never come or a store that cannot be reached.
void init_process_group(Backend backend);
void init_process_group(const InitOptions& options);
bool is_initialized();
// Stops the default group: the collectives already queued run first (each within the timeout),
// later calls throw, also through a handle kept from before. Rank 0, when its process serves
// the TCP store (not under leangrad-run, whose launcher serves it), then waits for the other
// ranks to leave it: at most the timeout, or at most 5 s after a failure (the others are reading
// the store to name the missing ranks).
// Other threads are not held up meanwhile: from its start, is_initialized() is false and
// get_rank() throws, at once; init_process_group waits for it to end.
void destroy_process_group();

// Records why this process is failing, for the other ranks: when their collectives fail because
// this rank exited (or never arrived), their Error quotes `message` ("rank 1 has exited (its
// connection to the store closed); it reported: <message>"). Call it from the program's
// top-level catch before exiting, as torch.distributed.elastic's @record does for Python; a
// collective that fails records its own Error already. The report is stored when it returns.
// Works while destroy_process_group runs (on another thread), until destroy closes this rank's
// connection to the store; does nothing without a process group, so nothing once
// destroy_process_group has returned (Note [Reports while destroying] in distributed.cpp).
// Never throws. Note [Why a rank failed] in progress.cpp.
//
//   } catch (const leangrad::Error& e) {
//     distributed::record_error(e.what());
//     return 1;
//   }
void record_error(const std::string& message) noexcept;

int get_rank();
int get_world_size();
// This process's rank among those on its machine (LOCAL_RANK and its equivalents), -1 when the
// launcher did not say.
int get_local_rank();
// The default group itself (for what the free functions below do not cover).
ProcessGroup& default_process_group();
// The same as a shared handle, for objects that keep using the group (DistributedDataParallel):
// after destroy_process_group its collectives throw instead of touching freed memory.
std::shared_ptr<ProcessGroup> default_process_group_handle();

bool is_gloo_available();
bool is_nccl_available();

// ---- Collectives on the default group (ProcessGroup has the details) ----------------------------
void all_reduce(const Tensor& tensor, ReduceOp op = ReduceOp::Sum);
void broadcast(const Tensor& tensor, int root);
std::vector<Tensor> all_gather(const Tensor& tensor);
void reduce_scatter(const Tensor& output, const std::vector<Tensor>& inputs,
                    ReduceOp op = ReduceOp::Sum);
void barrier();

std::shared_ptr<Work> all_reduce_async(const Tensor& tensor, ReduceOp op = ReduceOp::Sum);
std::shared_ptr<Work> broadcast_async(const Tensor& tensor, int root);
std::shared_ptr<Work> all_gather_async(const Tensor& tensor);  // tensors in Work::result()
std::shared_ptr<Work> reduce_scatter_async(const Tensor& output, const std::vector<Tensor>& inputs,
                                           ReduceOp op = ReduceOp::Sum);
std::shared_ptr<Work> barrier_async();

}  // namespace leangrad::distributed
