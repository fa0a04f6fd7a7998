// GlooWatchdog: ends a Gloo collective that waits on a rank which has exited, instead of letting
// it wait for the whole timeout. Private to distributed/gloo/; see Note [Waking Gloo] in
// gloo_watchdog.cpp for why Gloo needs it.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <leangrad/distributed/progress.h>

namespace gloo::transport {
class UnboundBuffer;
}

namespace leangrad::distributed {

class GlooWatchdog {
 public:
  // Reads the group's progress board, which must outlive the watchdog.
  explicit GlooWatchdog(ProgressBoard& board);
  ~GlooWatchdog();  // stops its thread
  GlooWatchdog(const GlooWatchdog&) = delete;
  GlooWatchdog& operator=(const GlooWatchdog&) = delete;

  // One Gloo call of collective #seq in flight, for the lifetime of this object: its unbound
  // buffers, whose waits the watchdog may abort. Make it after the Gloo options that own the
  // buffers (so it is destroyed before them), and call check() after the Gloo call returns or
  // throws.
  class Call {
   public:
    Call(GlooWatchdog& watchdog, std::uint64_t seq,
         std::vector<gloo::transport::UnboundBuffer*> buffers);
    ~Call();
    Call(const Call&) = delete;
    Call& operator=(const Call&) = delete;
    // Throws std::runtime_error with the reason when the watchdog aborted the call: whatever
    // Gloo returned, the collective did not complete.
    void check() const;

   private:
    GlooWatchdog& watchdog_;
  };

 private:
  void run();
  // Why collective #seq cannot complete ("rank 2 has exited ..."), or "".
  std::string look_for_exited_ranks(std::uint64_t seq);

  ProgressBoard& board_;

  std::mutex mutex_;
  std::condition_variable changed_;
  bool stopping_ = false;
  // The call in flight (one at a time: the worker thread runs one collective at a time).
  std::vector<gloo::transport::UnboundBuffer*> buffers_;
  bool in_flight_ = false;
  std::uint64_t seq_ = 0;
  std::chrono::steady_clock::time_point started_;
  std::string abort_reason_;
  std::thread thread_;
};

}  // namespace leangrad::distributed
