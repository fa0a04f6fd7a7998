// The host synchronisation counter of core/host_sync.h: one relaxed atomic, so counting costs
// nothing next to the wait it counts.
#include <leangrad/core/host_sync.h>

#include <atomic>

namespace leangrad {
namespace {

std::atomic<std::uint64_t> g_host_syncs{0};

}  // namespace

std::uint64_t host_sync_count() {
  return g_host_syncs.load(std::memory_order_relaxed);
}

void count_host_sync() {
  g_host_syncs.fetch_add(1, std::memory_order_relaxed);
}

}  // namespace leangrad
