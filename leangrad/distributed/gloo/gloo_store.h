// GlooStore: leangrad's Store (distributed/store.h) seen through Gloo's gloo::rendezvous::Store
// interface, so Gloo's rendezvous (Context::connectFullMesh) exchanges its addresses through
// the TCP or file store, under the group's key prefix. Private to distributed/gloo/.
#pragma once

#include <gloo/rendezvous/store.h>

#include <chrono>
#include <string>
#include <vector>

#include <leangrad/distributed/store.h>

namespace leangrad::distributed {

class GlooStore final : public gloo::rendezvous::Store {
 public:
  GlooStore(distributed::Store& store, std::string prefix)
      : store_(store), prefix_(std::move(prefix)) {}

  void set(const std::string& key, const std::vector<char>& data) override {
    store_.set(prefix_ + key, std::string(data.begin(), data.end()));
  }
  std::vector<char> get(const std::string& key) override {
    const std::string value = store_.get(prefix_ + key);
    return std::vector<char>(value.begin(), value.end());
  }
  void wait(const std::vector<std::string>& keys) override { wait(keys, store_.timeout()); }
  void wait(const std::vector<std::string>& keys,
            const std::chrono::milliseconds& timeout) override {
    std::vector<std::string> prefixed;
    for (const std::string& key : keys)
      prefixed.push_back(prefix_ + key);
    store_.wait(prefixed, timeout);
  }

 private:
  distributed::Store& store_;
  std::string prefix_;
};

}  // namespace leangrad::distributed
