// ProcessGroupGloo: the collectives of ProcessGroup on CPU tensors, over Gloo's TCP transport.
// Private to distributed/gloo/; the rest of leangrad makes one with make_gloo_process_group
// (distributed/process_group.h). The design is at the top of process_group_gloo.cpp.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <leangrad/distributed/collective.h>
#include <leangrad/distributed/gloo/gloo_watchdog.h>
#include <leangrad/distributed/process_group.h>
#include <leangrad/distributed/progress.h>
#include <leangrad/distributed/work.h>

namespace gloo {
class Context;
namespace transport {
class UnboundBuffer;
}
}  // namespace gloo

namespace leangrad::distributed {

class ProcessGroupGloo final : public ProcessGroup {
 public:
  // Connects to every other rank through Gloo's rendezvous on `setup.store`.
  explicit ProcessGroupGloo(const ProcessGroupSetup& setup);
  ~ProcessGroupGloo() override;

  const char* backend_name() const override { return "gloo"; }
  Device device() const override { return Device::cpu(); }
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
  // What moves the data of one collective, run on the worker after the signatures agreed.
  using Payload = std::function<std::vector<Tensor>(std::uint32_t tag)>;

  // Checks the call, numbers it and queues it (Note [One collective, step by step]).
  std::shared_ptr<Work> enqueue(Collective c, const Tensor& tensor,
                                const std::vector<Tensor>& inputs, Payload payload);
  // The worker's part of one collective.
  std::vector<Tensor> run(const Collective& c, const Payload& payload);
  void exchange_signatures(const Collective& c);
  // Gloo's view of `bytes` bytes at `data`.
  std::unique_ptr<gloo::transport::UnboundBuffer> unbound(void* data, std::size_t bytes);
  // Runs one Gloo call under the watchdog, which may abort the waits on `buffers`.
  void watched(const std::vector<gloo::transport::UnboundBuffer*>& buffers,
               const std::function<void()>& gloo_call);
  // Turns a failure of Gloo (or of the store) in collective `c` into the Error the caller sees,
  // and marks the group broken.
  [[noreturn]] void fail(const Collective& c, const std::string& cause, bool timed_out,
                         double elapsed_s);

  std::shared_ptr<Store> store_;
  bool check_signatures_;
  ProgressBoard progress_;
  std::shared_ptr<gloo::Context> context_;
  std::unique_ptr<GlooWatchdog> watchdog_;
  std::uint64_t running_seq_ = 0;  // the collective the worker runs (read by watched())

  std::mutex mutex_;  // guards next_seq_ and the order of pushes onto the queue
  std::uint64_t next_seq_ = 1;
  mutable std::mutex broken_mutex_;
  std::string broken_;                // the first failure that left the group unusable
  std::unique_ptr<WorkQueue> queue_;  // last: its thread stops before the members above go
};

}  // namespace leangrad::distributed
