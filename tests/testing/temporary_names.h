// The names write_file_atomically gives its temporary files (Note [Atomic file writes] in
// data/file_io.cpp), spelled out independently for the tests that plant such files:
// ".<name>.tmp.<host>.<pid>.<n>", the host as gethostname gives it with each byte other than a
// letter, a digit or '-' written %XX.
#pragma once

#include <sys/types.h>
#include <unistd.h>

#include <cstdio>
#include <string>

namespace leangrad::test {

inline std::string host_in_temporary_names() {
  char name[256] = {};
  ::gethostname(name, sizeof(name) - 1);
  std::string spelled;
  for (const char c : std::string(name)) {
    const bool plain =
        (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-';
    char escaped[4];
    std::snprintf(escaped, sizeof(escaped), "%%%02X", static_cast<unsigned char>(c));
    spelled += plain ? std::string(1, c) : std::string(escaped);
  }
  return spelled;
}

// The temporary a writer on `host` with `pid` makes for `name`, its `n`th.
inline std::string temporary_name(const std::string& name, const std::string& host, pid_t pid,
                                  int n) {
  return "." + name + ".tmp." + host + "." + std::to_string(pid) + "." + std::to_string(n);
}

}  // namespace leangrad::test
