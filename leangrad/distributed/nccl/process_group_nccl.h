// ProcessGroupNccl: the collectives of ProcessGroup on CUDA tensors of one GPU, over NCCL.
// Private to distributed/nccl/; the rest of leangrad makes one with make_nccl_process_group
// (distributed/process_group.h). The design is at the top of process_group_nccl.cpp.
#pragma once

#include <nccl.h>

#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <leangrad/core/cuda.h>
#include <leangrad/distributed/collective.h>
#include <leangrad/distributed/process_group.h>
#include <leangrad/distributed/progress.h>
#include <leangrad/distributed/work.h>

namespace leangrad::distributed {

class ProcessGroupNccl;

// One NCCL collective in flight: done when the event recorded after it on the group's stream
// has completed. wait() polls that event (and the group's health) rather than waiting to be
// told, so it returns microseconds after the GPU finishes; the watchdog fails it on timeout.
class NcclWork final : public Work {
 public:
  NcclWork(std::string description, ProcessGroupNccl* group, Collective collective,
           std::chrono::steady_clock::time_point deadline);

  void wait() override;
  bool is_completed() const override;

  // Finishes the work if its event has completed; returns whether the work is done.
  bool poll();

  const Collective& collective() const { return collective_; }
  std::chrono::steady_clock::time_point deadline() const { return deadline_; }

 private:
  friend class ProcessGroupNccl;
  ProcessGroupNccl* group_;  // outlives every work: shutdown fails the works in flight
  Collective collective_;
  std::chrono::steady_clock::time_point deadline_;
  cuda::Event done_{/*enable_timing=*/false};
  std::vector<Tensor> result_;  // what finish() hands over once the event completed
};

class ProcessGroupNccl final : public ProcessGroup {
 public:
  // Creates the communicator: rank 0 makes NCCL's unique id and posts it in the store, every
  // rank reads it and joins, within the group's timeout.
  explicit ProcessGroupNccl(const ProcessGroupSetup& setup);
  ~ProcessGroupNccl() override;

  const char* backend_name() const override { return "nccl"; }
  Device device() const override { return device_; }
  std::shared_ptr<Work> all_reduce_async(const Tensor& tensor, ReduceOp op) override;
  std::shared_ptr<Work> broadcast_async(const Tensor& tensor, int root) override;
  std::shared_ptr<Work> all_gather_async(const Tensor& tensor) override;
  std::shared_ptr<Work> reduce_scatter_async(const Tensor& output,
                                             const std::vector<Tensor>& inputs,
                                             ReduceOp op) override;
  std::shared_ptr<Work> barrier_async() override;
  bool is_broken() const override;
  void shutdown() override;

 private:
  friend class NcclWork;
  // What launches one collective's NCCL call on the group's stream.
  using Launch = std::function<ncclResult_t(cudaStream_t stream)>;

  // Orders and launches one checked collective (Note [Stream order]) and returns its work.
  // `tensor` is the one written in place (its version is bumped); `buffers` the tensors the NCCL
  // call reads or writes, kept from reuse until it is done; `result` what Work::result gives;
  // `write_backs` (caller's tensor, staged buffer) pairs copied after the call.
  std::shared_ptr<Work> launch(Collective c, const Tensor& tensor,
                               const std::vector<Tensor>& buffers, std::vector<Tensor> result,
                               const std::vector<std::pair<Tensor, Tensor>>& write_backs,
                               const Launch& call);
  // Waits (bounded by the deadline) while NCCL finishes enqueuing on `comm` in non-blocking mode.
  void settle(ncclComm_t comm, ncclResult_t status, const char* what,
              std::chrono::steady_clock::time_point deadline);
  // Marks the group broken with `error` (the first one counts), fails every work in flight,
  // then aborts the communicator so kernels waiting on peers return. Never throws.
  void break_group(const std::string& error);
  std::string broken_message() const;
  void watchdog();

  Device device_;
  std::shared_ptr<Store> store_;
  ProgressBoard progress_;
  cuda::Stream stream_;        // the group's own stream: Note [Stream order]
  ncclComm_t comm_ = nullptr;  // read and written under mutex_ once the constructor is done

  std::mutex mutex_;  // guards comm_, next_seq_, in_flight_, stopping_, and launching (call order)
  std::uint64_t next_seq_ = 1;
  std::deque<std::shared_ptr<NcclWork>> in_flight_;
  bool stopping_ = false;
  std::condition_variable watchdog_wake_;
  mutable std::mutex broken_mutex_;
  std::string broken_;
  std::thread watchdog_;
};

}  // namespace leangrad::distributed
