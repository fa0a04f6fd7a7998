// Store: the key-value store the processes of a job meet through. Rendezvous publishes world
// sizes and Gloo's addresses in it, and each process group records there which collective every
// rank has reached, so that a failure can name the ranks that did not arrive. Two
// implementations: TCPStore (tcp_store.h, served by rank 0; the default) and the file store on
// Gloo's FileStore (make_file_store, for LEANGRAD_STORE=file:///shared/dir).
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace leangrad::distributed {

class Store {
 public:
  explicit Store(std::chrono::milliseconds timeout) : timeout_(timeout) {}
  virtual ~Store() = default;
  Store(const Store&) = delete;
  Store& operator=(const Store&) = delete;

  // Sets (or replaces) the value of `key`. Values are bytes; they may hold anything.
  virtual void set(const std::string& key, const std::string& value) = 0;
  // set() without waiting for the store to confirm: the TCP store sends the request and returns
  // (no round trip; its requests are handled in order, so this rank's later requests see it).
  // For records written on every collective (the progress board). Others: set().
  virtual void post(const std::string& key, const std::string& value) { set(key, value); }
  // The value of `key`, or nothing when it is not set. Never waits.
  virtual std::optional<std::string> try_get(const std::string& key) = 0;
  // Adds `delta` to the integer stored at `key` (0 when absent; kept as decimal text) and
  // returns the new value. Atomic: concurrent adds from several ranks all count.
  virtual std::int64_t add(const std::string& key, std::int64_t delta) = 0;
  // "the TCP store at node1:29500 (served by rank 0)": where the store is, for error messages.
  virtual std::string describe() const = 0;

  // The value of `key`, waiting until some rank sets it; Error after timeout().
  std::string get(const std::string& key);
  // Whether every key is set, without waiting.
  bool check(const std::vector<std::string>& keys);
  // Waits until every key is set; after `timeout` throws Error naming the keys still missing.
  // See Note [Waiting by polling] in store.cpp.
  void wait(const std::vector<std::string>& keys, std::chrono::milliseconds timeout);
  void wait(const std::vector<std::string>& keys) { wait(keys, timeout_); }

  std::chrono::milliseconds timeout() const { return timeout_; }

 private:
  std::chrono::milliseconds timeout_;
};

// The file store: keys are files in `directory` (a folder every rank sees, e.g. on NFS), written
// by Gloo's FileStore (distributed/gloo/file_store.cpp). Needs a build with Gloo. Give each job
// its own empty folder: keys left by an earlier job are detected at rendezvous and refused.
std::shared_ptr<Store> make_file_store(const std::string& directory,
                                       std::chrono::milliseconds timeout);

// "2.5 s", "600 s", "150 ms": a timeout as messages print it.
std::string format_duration(std::chrono::milliseconds duration);

}  // namespace leangrad::distributed
