// UnprivilegedFileAccess: while alive, the calling thread's file accesses are checked as user and
// group 65534 (nobody), so that a test can meet a folder it may not write even when it runs as
// root (setfsuid to a non-zero id drops the file capabilities as well; back to 0 restores them).
// For any other user it does nothing: permissions bind that user already.
//   { test::UnprivilegedFileAccess nobody; ASSERT_TRUE(nobody.active()); ...EACCES... }
#pragma once

#include <sys/fsuid.h>
#include <unistd.h>

namespace leangrad::test {

class UnprivilegedFileAccess {
 public:
  static constexpr unsigned kNobody = 65534;

  UnprivilegedFileAccess() {
    if (::geteuid() != 0) {
      active_ = true;
      return;
    }
    ::setfsgid(kNobody);
    ::setfsuid(kNobody);
    // setfsuid reports no error; asking with an invalid id returns the id in force.
    active_ = static_cast<unsigned>(::setfsuid(static_cast<uid_t>(-1))) == kNobody;
  }
  ~UnprivilegedFileAccess() {
    if (::geteuid() != 0) return;
    ::setfsuid(0);
    ::setfsgid(0);
  }
  UnprivilegedFileAccess(const UnprivilegedFileAccess&) = delete;
  UnprivilegedFileAccess& operator=(const UnprivilegedFileAccess&) = delete;

  // Whether folder permissions now bind this thread.
  bool active() const { return active_; }

 private:
  bool active_ = false;
};

}  // namespace leangrad::test
