// Work and the worker thread of a process group (work.h).
#include <leangrad/distributed/work.h>

#include <signal.h>

#include <leangrad/core/error.h>

namespace leangrad::distributed {

void Work::wait() {
  std::unique_lock lock(mutex_);
  done_changed_.wait(lock, [&] { return done_; });
  if (error_) std::rethrow_exception(error_);
}

bool Work::is_completed() const {
  std::lock_guard lock(mutex_);
  return done_;
}

bool Work::is_success() const {
  std::lock_guard lock(mutex_);
  return done_ && !error_;
}

std::vector<Tensor> Work::result() {
  wait();
  std::lock_guard lock(mutex_);
  return result_;
}

Work::Clock::time_point Work::started_at() const {
  std::lock_guard lock(mutex_);
  return started_at_;
}

Work::Clock::time_point Work::finished_at() const {
  std::lock_guard lock(mutex_);
  return finished_at_;
}

void Work::start() {
  std::lock_guard lock(mutex_);
  started_at_ = Clock::now();
}

bool Work::finish(std::vector<Tensor> result, std::exception_ptr error) {
  {
    std::lock_guard lock(mutex_);
    if (done_) return false;
    finished_at_ = Clock::now();
    result_ = std::move(result);
    error_ = std::move(error);
    done_ = true;
  }
  done_changed_.notify_all();
  return true;
}

WorkQueue::WorkQueue() {
  thread_ = std::thread([this] { run(); });
}

WorkQueue::~WorkQueue() {
  stop("the process group was destroyed");
}

void WorkQueue::push(std::shared_ptr<Work> work, Job job) {
  {
    std::lock_guard lock(mutex_);
    LG_CHECK(!stopping_, work->description(), ": ", stop_reason_);
    jobs_.emplace_back(std::move(work), std::move(job));
  }
  changed_.notify_one();
}

void WorkQueue::stop(const std::string& reason) {
  {
    std::lock_guard lock(mutex_);
    if (!stopping_) {
      stopping_ = true;
      stop_reason_ = reason;
    }
  }
  changed_.notify_one();
  if (thread_.joinable() && thread_.get_id() != std::this_thread::get_id()) thread_.join();
}

void WorkQueue::run() {
  sigset_t pipe_signal;
  sigemptyset(&pipe_signal);
  sigaddset(&pipe_signal, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &pipe_signal, nullptr);
  for (;;) {
    std::pair<std::shared_ptr<Work>, Job> next;
    {
      std::unique_lock lock(mutex_);
      changed_.wait(lock, [&] { return stopping_ || !jobs_.empty(); });
      if (stopping_) {
        // Jobs never started fail; the group is going away.
        for (auto& [work, job] : jobs_) {
          work->finish(
              {}, std::make_exception_ptr(Error(
                      work->description() + " did not run: " + stop_reason_, __FILE__, __LINE__)));
        }
        jobs_.clear();
        return;
      }
      next = std::move(jobs_.front());
      jobs_.pop_front();
    }
    std::vector<Tensor> result;
    std::exception_ptr error;
    next.first->start();
    try {
      result = next.second();
    } catch (...) {
      error = std::current_exception();
    }
    next.first->finish(std::move(result), error);
  }
}

}  // namespace leangrad::distributed
