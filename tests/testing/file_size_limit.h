// FileSizeLimit: while alive, this process may not write files past `bytes` (RLIMIT_FSIZE), and
// a write that would is an EFBIG error instead of the SIGXFSZ that would end the process. It
// stands in for a full disk, and works as root. The limit and the signal's handler are restored
// when it goes away.
//   { test::FileSizeLimit limit(4096); ASSERT_TRUE(limit.active()); ...a write fails... }
#pragma once

#include <signal.h>
#include <sys/resource.h>

namespace leangrad::test {

class FileSizeLimit {
 public:
  explicit FileSizeLimit(rlim_t bytes) {
    if (::getrlimit(RLIMIT_FSIZE, &saved_) != 0) return;
    struct sigaction ignore {};
    ignore.sa_handler = SIG_IGN;
    if (::sigaction(SIGXFSZ, &ignore, &previous_) != 0) return;
    signal_set_ = true;
    struct rlimit small = saved_;
    small.rlim_cur = bytes;
    active_ = ::setrlimit(RLIMIT_FSIZE, &small) == 0;
  }
  ~FileSizeLimit() {
    if (active_) ::setrlimit(RLIMIT_FSIZE, &saved_);
    if (signal_set_) ::sigaction(SIGXFSZ, &previous_, nullptr);
  }
  FileSizeLimit(const FileSizeLimit&) = delete;
  FileSizeLimit& operator=(const FileSizeLimit&) = delete;

  // Whether the limit is in force (every system call succeeded).
  bool active() const { return active_; }

 private:
  struct rlimit saved_ {};
  struct sigaction previous_ {};
  bool signal_set_ = false;
  bool active_ = false;
};

}  // namespace leangrad::test
