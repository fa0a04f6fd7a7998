// Reducer: the gradient machinery of DistributedDataParallel (ddp.h). Parameters live in flat
// buckets (bucket_assignment.h); each parameter's post-accumulate-grad hook marks it ready, a
// bucket whose gradients are all in is all-reduced (averaged) on the process group's worker
// thread while backward goes on, and backward's end waits for every bucket. The design and its
// notes are at the top of reducer.cpp.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <leangrad/core/tensor.h>
#include <leangrad/distributed/process_group.h>
#include <leangrad/distributed/work.h>

namespace leangrad::distributed {

// One bucket as the user may look at it (DistributedDataParallel::buckets()).
struct BucketInfo {
  DType dtype = DType::Float32;
  Device device;
  std::int64_t numel = 0;               // elements of its flat tensor
  std::vector<std::string> parameters;  // names, in the order they sit in the flat tensor
};

// When things happened in the last synchronised backward (steady clock), for benchmarks: how
// long each all-reduce took and how much of it backward's compute hid.
struct BucketTimeline {
  Work::Clock::time_point ready;     // its last gradient arrived (or backward ended: unused ones)
  Work::Clock::time_point started;   // the process group's worker began its all-reduce
  Work::Clock::time_point finished;  // ... and ended it
};
struct StepTimeline {
  Work::Clock::time_point first_gradient;  // the first hook of the backward ran
  Work::Clock::time_point last_gradient;   // the last one did: backward's compute is over
  Work::Clock::time_point backward_done;   // the engine had run every node (end-of-backward)
  Work::Clock::time_point reduced;         // every bucket reduced: backward returns after this
  std::vector<BucketTimeline> buckets;     // in bucket order
};

class Reducer : public std::enable_shared_from_this<Reducer> {
 public:
  // `parameters`: the named parameters to reduce, in registration order (distinct tensors,
  // leaves requiring grad). `limits_bytes`: assign_buckets's limits.
  static std::shared_ptr<Reducer> make(NamedTensors parameters, std::shared_ptr<ProcessGroup> group,
                                       const std::vector<std::int64_t>& limits_bytes,
                                       bool find_unused_parameters);
  ~Reducer();
  Reducer(const Reducer&) = delete;
  Reducer& operator=(const Reducer&) = delete;

  // Arms the hooks for the backward of the forward about to run (Note [Armed by forward]);
  // first finishes what a backward that threw left in flight.
  void prepare_for_backward();
  // The next backward accumulates locally (a forward under no_sync, or without grad mode).
  void disarm();

  const std::vector<BucketInfo>& buckets() const { return infos_; }
  // The flat tensor of bucket `b`: every parameter's .grad is a view of one of these after its
  // first synchronised backward. Undefined in a group of one, which holds no buckets (Note [A
  // group of one] in reducer.cpp).
  const Tensor& bucket_tensor(std::size_t b) const;
  // The last synchronised backward's timeline (empty before the first).
  const StepTimeline& last_step() const { return last_step_; }
  const ProcessGroup& process_group() const { return *group_; }

 private:
  Reducer(std::shared_ptr<ProcessGroup> group, bool find_unused_parameters);
  struct Slot;
  struct Bucket;

  void install_hooks();
  void refuse_second_gradient(std::size_t slot);  // the gradient hook of slot's parameter
  void mark_ready(std::size_t slot);  // the post-accumulate-grad hook of slot's parameter
  void finalize();                    // the end-of-backward callback
  void make_grad_a_view(Slot& slot);
  void mark_slot_done(Slot& slot);
  void launch_ready_buckets();
  void drain() noexcept;
  std::exception_ptr wait_for_buckets();
  void reset_step();
  std::string describe_bucket(std::size_t b) const;

  std::shared_ptr<ProcessGroup> group_;
  bool find_unused_parameters_;
  std::vector<Slot> slots_;
  std::vector<Bucket> buckets_;
  std::vector<BucketInfo> infos_;
  // The state of one backward (Note [One step of the reducer]).
  bool armed_ = false;
  bool step_started_ = false;
  std::size_t next_bucket_ = 0;
  StepTimeline step_;
  StepTimeline last_step_;
};

}  // namespace leangrad::distributed
