// Work: the handle of one collective in flight (wait(), is_completed(), as torch's Work), and
// WorkQueue, the worker thread that runs a process group's collectives one after another, in
// the order they were called. A blocking collective is its async form followed by wait(), so
// blocking and async calls interleave in call order.
#pragma once

#include <chrono>
#include <condition_variable>
#include <deque>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <leangrad/core/tensor.h>

namespace leangrad::distributed {

class Work {
 public:
  using Clock = std::chrono::steady_clock;

  explicit Work(std::string description) : description_(std::move(description)) {}
  virtual ~Work() = default;
  Work(const Work&) = delete;
  Work& operator=(const Work&) = delete;

  // Blocks until the collective has run, then throws the Error it failed with, if any. Every
  // collective has a timeout, so this returns (or throws) within the timeouts of the
  // collectives queued before it and its own. (A backend whose collectives run on a GPU stream
  // overrides it to poll the stream instead of waiting to be told.)
  virtual void wait();
  // True once the collective has run, successfully or not (never blocks).
  virtual bool is_completed() const;
  // True once the collective has run without error.
  bool is_success() const;
  // The tensors the collective produced (all_gather's, one per rank); empty for the others.
  // Waits first, as wait() does.
  std::vector<Tensor> result();
  // "all_reduce(sum) of float32 [4] (collective #3)".
  const std::string& description() const { return description_; }

  // When the worker thread started running the collective and when it finished it (Clock's
  // epoch until then): DistributedDataParallel's bucket timeline is made of these.
  Clock::time_point started_at() const;
  Clock::time_point finished_at() const;

  // Called by the backend before running the collective.
  void start();
  // Marks the collective done, with its result or the error it failed with. The first call
  // counts; later ones (a watchdog and a waiter racing) are ignored. Returns whether it counted.
  bool finish(std::vector<Tensor> result, std::exception_ptr error);

 private:
  const std::string description_;
  mutable std::mutex mutex_;
  std::condition_variable done_changed_;
  bool done_ = false;
  Clock::time_point started_at_{};
  Clock::time_point finished_at_{};
  // The error it failed with, as data: see Note [Errors cross threads as data] in work.cpp.
  struct Failure {
    enum class Kind { Error, Shape, DType, Device, OutOfMemory, Other };
    Kind kind = Kind::Other;
    std::string message;  // Error::message(), or what() of an exception that is not an Error
    const char* file = "";
    int line = 0;
  };
  static std::optional<Failure> failure_of(const std::exception_ptr& error);
  [[noreturn]] static void throw_failure(const Failure& failure);

  std::optional<Failure> failure_;
  std::vector<Tensor> result_;
};

// One thread running jobs in FIFO order. The thread blocks SIGPIPE (Note [SIGPIPE] in
// distributed/gloo/process_group_gloo.cpp). stop() (or destroying the queue) refuses new jobs
// with the reason given, lets the jobs already queued run (a collective's ends within its
// timeout, and once the group is broken the rest fail at once), then joins the thread: a
// collective the program queued is run on every rank, as in PyTorch, whenever the program calls
// destroy_process_group.
class WorkQueue {
 public:
  using Job = std::function<std::vector<Tensor>()>;

  WorkQueue();
  ~WorkQueue();
  WorkQueue(const WorkQueue&) = delete;
  WorkQueue& operator=(const WorkQueue&) = delete;

  // Queues `job`; its result or exception finishes `work`. Throws Error (`work`'s description
  // and the reason) after stop().
  void push(std::shared_ptr<Work> work, Job job);
  void stop(const std::string& reason);

 private:
  void run();

  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<std::pair<std::shared_ptr<Work>, Job>> jobs_;
  bool stopping_ = false;
  std::string stop_reason_;
  std::thread thread_;
};

}  // namespace leangrad::distributed
