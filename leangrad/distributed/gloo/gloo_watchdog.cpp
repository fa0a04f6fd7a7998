// The Gloo watchdog (gloo_watchdog.h).
//
// Note [Waking Gloo]
// When a peer's connection breaks, Gloo's TCP pair wakes every operation waiting on it with an
// error, except one kind: a send of an unbound buffer that is already queued for writing
// (Pair::signalException in gloo/transport/tcp/pair.cc walks its queue of writes but only wakes
// bound buffers). A rank whose send to a dying peer was blocked on a full socket therefore waits
// for the whole timeout, 10 minutes by default, although the store knew within milliseconds that
// the peer exited. The watchdog closes that gap:
// - every Gloo call registers its unbound buffers (GlooWatchdog::Call) for its duration;
// - when a call has been in flight for 100 ms, the watchdog reads the store every 100 ms: a
//   store_keys::left key of a rank of the group that had not completed the collective (Note [A
//   rank that exits after its last collective] in progress.cpp), or a store that cannot be
//   reached any more (rank 0, its server, is gone), means the call cannot complete;
// - it then aborts the buffers' waits (abortWaitSend/abortWaitRecv, Gloo's public way to wake a
//   waiting thread), every 10 ms until the call returns, because each abort wakes one wait;
// - Gloo's algorithms take an aborted wait for a finished one and go on until they return or
//   throw; Call::check() then reports the abort, so the collective fails with the reason.
// Short collectives never touch the store; a long one costs a few store reads per second. The
// file store has no left keys: there, a blocked send still waits for the timeout.
#include <leangrad/distributed/gloo/gloo_watchdog.h>

#include <gloo/transport/unbound_buffer.h>

#include <stdexcept>

#include <leangrad/core/error.h>
#include <leangrad/distributed/progress.h>

namespace leangrad::distributed {
namespace {

constexpr auto kQuietPeriod = std::chrono::milliseconds(100);  // calls shorter than this: no reads
constexpr auto kStorePollPeriod = std::chrono::milliseconds(100);
constexpr auto kAbortPeriod = std::chrono::milliseconds(10);

}  // namespace

GlooWatchdog::GlooWatchdog(ProgressBoard& board) : board_(board) {
  thread_ = std::thread([this] { run(); });
}

GlooWatchdog::~GlooWatchdog() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  changed_.notify_all();
  thread_.join();
}

GlooWatchdog::Call::Call(GlooWatchdog& watchdog, std::uint64_t seq,
                         std::vector<gloo::transport::UnboundBuffer*> buffers)
    : watchdog_(watchdog) {
  {
    std::lock_guard lock(watchdog_.mutex_);
    watchdog_.buffers_ = std::move(buffers);
    watchdog_.in_flight_ = true;
    watchdog_.seq_ = seq;
    watchdog_.started_ = std::chrono::steady_clock::now();
    watchdog_.abort_reason_.clear();
  }
  watchdog_.changed_.notify_all();
}

GlooWatchdog::Call::~Call() {
  std::lock_guard lock(watchdog_.mutex_);
  watchdog_.buffers_.clear();
  watchdog_.in_flight_ = false;
}

void GlooWatchdog::Call::check() const {
  std::lock_guard lock(watchdog_.mutex_);
  if (!watchdog_.abort_reason_.empty()) throw std::runtime_error(watchdog_.abort_reason_);
}

std::string GlooWatchdog::look_for_exited_ranks(std::uint64_t seq) {
  try {
    const std::vector<int> exited = board_.exited_before_finishing(seq);
    if (exited.empty()) return "";
    return detail::str_cat("aborted by leangrad's watchdog: rank ", exited[0],
                           " has exited (its connection to the store closed)");
  } catch (const Error& e) {
    return "aborted by leangrad's watchdog: " + e.message();
  }
}

void GlooWatchdog::run() {
  std::unique_lock lock(mutex_);
  auto next_poll = std::chrono::steady_clock::now();
  for (;;) {
    if (stopping_) return;
    if (!in_flight_) {
      changed_.wait(lock, [&] { return stopping_ || in_flight_; });
      next_poll = started_ + kQuietPeriod;
      continue;
    }
    if (!abort_reason_.empty()) {
      // Keep waking the call's waits until it returns (each abort wakes one wait).
      for (gloo::transport::UnboundBuffer* buffer : buffers_) {
        buffer->abortWaitSend();
        buffer->abortWaitRecv();
      }
      changed_.wait_for(lock, kAbortPeriod);
      continue;
    }
    const auto now = std::chrono::steady_clock::now();
    if (now < next_poll) {
      changed_.wait_until(lock, next_poll);
      continue;
    }
    next_poll = now + kStorePollPeriod;
    const auto call_started = started_;
    const std::uint64_t seq = seq_;
    lock.unlock();  // the store may take a while to answer; the worker must not wait for us
    std::string reason = look_for_exited_ranks(seq);
    lock.lock();
    if (!reason.empty() && in_flight_ && started_ == call_started)
      abort_reason_ = std::move(reason);
  }
}

}  // namespace leangrad::distributed
