// ProcessGroup: the processes that run collectives together, and the list of what every backend
// provides (one pure virtual per collective, async; the blocking forms are the async ones
// followed by Work::wait). The Gloo backend is distributed/gloo/process_group_gloo.h; the free
// functions of distributed.h run on the default group that init_process_group makes.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include <leangrad/core/tensor.h>
#include <leangrad/distributed/reduce_op.h>
#include <leangrad/distributed/store.h>
#include <leangrad/distributed/work.h>

namespace leangrad::distributed {

class ProcessGroup {
 public:
  ProcessGroup(int rank, int size, std::chrono::milliseconds timeout)
      : rank_(rank), size_(size), timeout_(timeout) {}
  virtual ~ProcessGroup() = default;
  ProcessGroup(const ProcessGroup&) = delete;
  ProcessGroup& operator=(const ProcessGroup&) = delete;

  int rank() const { return rank_; }
  int size() const { return size_; }
  // The timeout of every collective: a collective that has not completed after it fails.
  std::chrono::milliseconds timeout() const { return timeout_; }
  virtual const char* backend_name() const = 0;
  // The device whose tensors the collectives take: the CPU (Gloo) or the group's GPU (NCCL).
  virtual Device device() const = 0;

  // ---- Collectives: every rank calls the same ones in the same order -----------------------
  // Reduces `tensor` over the ranks, in place: every rank ends with the same result.
  virtual std::shared_ptr<Work> all_reduce_async(const Tensor& tensor,
                                                 ReduceOp op = ReduceOp::Sum) = 0;
  // Copies rank `root`'s tensor into every other rank's `tensor`.
  virtual std::shared_ptr<Work> broadcast_async(const Tensor& tensor, int root) = 0;
  // Every rank's `tensor`, in rank order (Work::result()); they share one storage.
  virtual std::shared_ptr<Work> all_gather_async(const Tensor& tensor) = 0;
  // `inputs` holds one tensor per rank; rank r's `output` receives the reduction over the ranks
  // of their inputs[r].
  virtual std::shared_ptr<Work> reduce_scatter_async(const Tensor& output,
                                                     const std::vector<Tensor>& inputs,
                                                     ReduceOp op = ReduceOp::Sum) = 0;
  // Returns once every rank has called it.
  virtual std::shared_ptr<Work> barrier_async() = 0;

  // ---- Blocking forms ------------------------------------------------------------------------
  void all_reduce(const Tensor& tensor, ReduceOp op = ReduceOp::Sum);
  void broadcast(const Tensor& tensor, int root);
  std::vector<Tensor> all_gather(const Tensor& tensor);
  void reduce_scatter(const Tensor& output, const std::vector<Tensor>& inputs,
                      ReduceOp op = ReduceOp::Sum);
  void barrier();

  // Whether an earlier collective failed in a way that left the group unusable (a rank died,
  // a timeout): every later collective then throws at once, repeating the first failure.
  virtual bool is_broken() const = 0;
  // Stops the group: the collectives already queued or in flight end first (each within the
  // timeout; after a failure the rest fail at once), later ones throw. Called by
  // destroy_process_group; the destructor does it too.
  virtual void shutdown() = 0;

 private:
  int rank_;
  int size_;
  std::chrono::milliseconds timeout_;
};

// What a backend needs to make its group: the store the ranks met through, the prefix of this
// group's keys (store_keys.h), and this process's address as the other ranks can reach it
// (empty: the machine's host name).
struct ProcessGroupSetup {
  std::shared_ptr<Store> store;
  std::string prefix;
  int rank = 0;
  int size = 1;
  std::chrono::milliseconds timeout{0};
  std::string local_address;
  bool check_signatures = true;  // Note [Signatures] in collective.cpp
  int local_rank = -1;           // the rank on this machine (-1: unknown); NCCL's GPU
};

// The Gloo process group (distributed/gloo/), or, in a build without Gloo
// (LEANGRAD_WITH_GLOO=OFF), an Error saying so.
std::shared_ptr<ProcessGroup> make_gloo_process_group(const ProcessGroupSetup& setup);
bool is_gloo_available();

// The NCCL process group (distributed/nccl/) for CUDA tensors on this process's GPU (cuda:
// local_rank when the launcher gave one, else the current device), or, in a build without NCCL
// (LEANGRAD_WITH_NCCL=OFF, always without CUDA), an Error saying so.
std::shared_ptr<ProcessGroup> make_nccl_process_group(const ProcessGroupSetup& setup);
bool is_nccl_available();

}  // namespace leangrad::distributed
