// What every Store does the same way: get, check and wait are built on try_get (store.h).
//
// Note [Waiting by polling]
// A wait asks the store for the keys, and when one is missing sleeps a little and asks again,
// starting at 1 ms and doubling up to 50 ms, until the keys are there or the deadline passes. The
// TCP store's server therefore never holds a request open (each one is answered at once), and
// the timeout is measured in one place, by the waiting rank, for every kind of store. Waiting is
// rare and short (rendezvous, and reading a failed collective's records), so polling costs
// little; a rank that sets a key is seen by a waiting one within 50 ms.
#include <leangrad/distributed/store.h>

#include <algorithm>
#include <cstdio>
#include <thread>

#include <leangrad/core/error.h>

namespace leangrad::distributed {

std::string format_duration(std::chrono::milliseconds duration) {
  const auto ms = duration.count();
  char text[64];
  if (ms < 1000) {
    std::snprintf(text, sizeof(text), "%lld ms", static_cast<long long>(ms));
  } else if (ms % 1000 == 0) {
    std::snprintf(text, sizeof(text), "%lld s", static_cast<long long>(ms / 1000));
  } else {
    std::snprintf(text, sizeof(text), "%.1f s", static_cast<double>(ms) / 1000.0);
  }
  return text;
}

std::string Store::get(const std::string& key) {
  wait({key});
  std::optional<std::string> value = try_get(key);
  LG_CHECK(value.has_value(), "distributed store: key '", printable(key), "' vanished from ",
           describe());
  return *value;
}

bool Store::check(const std::vector<std::string>& keys) {
  return std::all_of(keys.begin(), keys.end(),
                     [&](const std::string& key) { return try_get(key).has_value(); });
}

void Store::wait(const std::vector<std::string>& keys, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  auto pause = std::chrono::milliseconds(1);
  std::size_t first_missing = 0;  // keys before this one were seen (keys are never deleted)
  for (;;) {
    while (first_missing < keys.size() && try_get(keys[first_missing]).has_value()) {
      ++first_missing;
    }
    if (first_missing == keys.size()) return;
    if (std::chrono::steady_clock::now() >= deadline) break;
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::milliseconds(50));
  }
  std::vector<std::string> missing;
  for (std::size_t i = first_missing; i < keys.size(); ++i) {
    if (!try_get(keys[i]).has_value()) missing.push_back(printable(keys[i]));
  }
  LG_THROW(Error, "distributed store: waited ", format_duration(timeout), " for key(s) ", missing,
           " in ", describe(), ", which no rank set");
}

}  // namespace leangrad::distributed
