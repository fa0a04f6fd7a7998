// Work and the worker thread of a process group (work.h).
#include <leangrad/distributed/work.h>

#include <signal.h>

#include <leangrad/core/error.h>

namespace leangrad::distributed {

// Note [Errors cross threads as data]
// A collective fails on the thread that runs it (the worker, or a watchdog), and wait() raises
// the failure on the caller's thread. Rethrowing the worker's exception object there would share
// one object between two threads, whose last owner destroys it after an atomic decrement inside
// libstdc++, which ThreadSanitizer cannot see: it reports the caller's read of the object and the
// worker's destruction of it as a race. So finish() turns the exception into a Failure (its
// type, message and throw site, copied on the failing thread) and wait() throws a new exception
// of the same type, made and owned by the waiting thread. What the caller catches is the same:
// the type, message() and what() of the original. An exception that is not a leangrad::Error
// (none is expected) comes back as a std::runtime_error with its what().
std::optional<Work::Failure> Work::failure_of(const std::exception_ptr& error) {
  if (!error) return std::nullopt;
  using Kind = Failure::Kind;
  const auto from = [](Kind kind, const Error& e) {
    return Failure{kind, e.message(), e.file(), e.line()};
  };
  try {
    std::rethrow_exception(error);
  } catch (const OutOfMemoryError& e) {
    return from(Kind::OutOfMemory, e);
  } catch (const ShapeError& e) {
    return from(Kind::Shape, e);
  } catch (const DTypeError& e) {
    return from(Kind::DType, e);
  } catch (const DeviceError& e) {
    return from(Kind::Device, e);
  } catch (const Error& e) {
    return from(Kind::Error, e);
  } catch (const std::exception& e) {
    return Failure{Kind::Other, e.what(), "", 0};
  } catch (...) {
    return Failure{Kind::Other, "an exception that is not a std::exception", "", 0};
  }
}

void Work::throw_failure(const Failure& f) {
  switch (f.kind) {
    case Failure::Kind::OutOfMemory:
      throw OutOfMemoryError(f.message, f.file, f.line);
    case Failure::Kind::Shape:
      throw ShapeError(f.message, f.file, f.line);
    case Failure::Kind::DType:
      throw DTypeError(f.message, f.file, f.line);
    case Failure::Kind::Device:
      throw DeviceError(f.message, f.file, f.line);
    case Failure::Kind::Error:
      throw Error(f.message, f.file, f.line);
    case Failure::Kind::Other:
      break;
  }
  throw std::runtime_error(f.message);
}

void Work::wait() {
  std::optional<Failure> failure;
  {
    std::unique_lock lock(mutex_);
    done_changed_.wait(lock, [&] { return done_; });
    failure = failure_;  // a copy the caller's thread owns
  }
  if (failure) throw_failure(*failure);
}

bool Work::is_completed() const {
  std::lock_guard lock(mutex_);
  return done_;
}

bool Work::is_success() const {
  std::lock_guard lock(mutex_);
  return done_ && !failure_.has_value();
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
  // On this thread: Note [Errors cross threads as data].
  std::optional<Failure> failure = failure_of(error);
  {
    std::lock_guard lock(mutex_);
    if (done_) return false;
    finished_at_ = Clock::now();
    result_ = std::move(result);
    failure_ = std::move(failure);
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
      if (jobs_.empty()) return;  // stopping, and every job queued before stop() has run
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
    next.first->finish(std::move(result), std::move(error));
  }
}

}  // namespace leangrad::distributed
