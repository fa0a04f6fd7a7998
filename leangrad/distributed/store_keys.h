// Every key leangrad writes into a Store, in one place (values in parentheses). Keys of one
// process group start with its prefix, "g<generation>/": the n-th init_process_group of a job
// uses generation n, so a group made after destroy_process_group never reads its predecessor's
// keys.
//
//   g<n>/init/settings/<rank>    (text)     "<world size> <backend> <signatures 1|0>", written
//                                           by each rank when it joins; see rendezvous.h
//   g<n>/init/error              (text)     the first reason rendezvous failed, for every rank
//                                           (the TCP store's server writes it too when it
//                                           refuses a rank: see tcp_store_server.h)
//   g<n>/gloo/...                (bytes)    Gloo's own rendezvous: hostnames and pair addresses
//   g<n>/nccl/unique_id          (bytes)    rank 0's ncclUniqueId, read by every rank to join
//                                           the communicator (process_group_nccl.cpp)
//   g<n>/progress/<rank>         (text)     "<seq> <collective>": the last collective the rank
//                                           entered; see Note [Naming the missing ranks]
//   g<n>/finished/<rank>         (decimal)  the last collective the rank completed (Gloo)
//   g<n>/error/<rank>            (text)     why the rank failed: the Error of its failed
//                                           collective, or what distributed::record_error was
//                                           given; quoted by the other ranks' failures (Note
//                                           [Why a rank failed] in progress.cpp)
//   g<n>/left/<rank>             (decimal)  written by the TCP store's server when the
//                                           connection <rank> opened for group n closes (it
//                                           exited, was killed, or destroyed the group):
//                                           milliseconds since the server started
#pragma once

#include <string>

namespace leangrad::distributed::store_keys {

// a + b + c by appending (GCC 12 warns, falsely, about `"text" + std::to_string(n)`: bug 105329).
inline std::string join(std::string a, const std::string& b, const std::string& c = "") {
  a.append(b);
  a.append(c);
  return a;
}

inline std::string group_prefix(int generation) {
  return join("g", std::to_string(generation), "/");
}
inline std::string settings(const std::string& prefix, int rank) {
  return join(prefix, "init/settings/", std::to_string(rank));
}
inline std::string init_error(const std::string& prefix) {
  return join(prefix, "init/error");
}
inline std::string gloo(const std::string& prefix) {
  return join(prefix, "gloo/");
}
inline std::string nccl_unique_id(const std::string& prefix) {
  return join(prefix, "nccl/unique_id");
}
inline std::string progress(const std::string& prefix, int rank) {
  return join(prefix, "progress/", std::to_string(rank));
}
inline std::string finished(const std::string& prefix, int rank) {
  return join(prefix, "finished/", std::to_string(rank));
}
inline std::string error(const std::string& prefix, int rank) {
  return join(prefix, "error/", std::to_string(rank));
}
inline std::string left(const std::string& prefix, int rank) {
  return join(prefix, "left/", std::to_string(rank));
}

}  // namespace leangrad::distributed::store_keys
