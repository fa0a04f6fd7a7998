// The caching allocator's hot path on the CPU backend, against the C library it caches.
// Each iteration is one allocate + free pair, so the time column is ns per pair; items/s counts
// pairs. The recurring-set benchmarks allocate a batch of 16 mixed sizes, then free it (a
// training step in miniature); there an item is one block.
// Target (core/caching_allocator.cpp): a pooled pair under 200 ns median.
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <vector>

#include <leangrad/core/allocator.h>

namespace {

using leangrad::CachingAllocator;
using leangrad::DataPtr;
using leangrad::Device;

constexpr std::size_t kKiB = 1024;
constexpr std::size_t kMiB = 1024 * kKiB;

// Mixed sizes of one step: small activations, medium buffers, a few large weights.
const std::vector<std::size_t> kRecurringSizes = {
    512,        3000,     64 * kKiB, 1 * kMiB, 1 * kMiB + 1, 5 * kMiB,  12 * kMiB, 700,
    200 * kKiB, 3 * kMiB, 40 * kMiB, 1,        8 * kMiB,     33 * kKiB, 2 * kMiB,  19 * kMiB};

void set_size_args(benchmark::internal::Benchmark* bench) {
  bench->Arg(512)->Arg(64 * kKiB)->Arg(4 * kMiB);
}

void BM_CachingAllocatorPair(benchmark::State& state) {
  CachingAllocator& allocator = leangrad::allocator_for(Device::cpu());
  const auto nbytes = static_cast<std::size_t>(state.range(0));
  allocator.allocate(nbytes).reset();  // warm the pool: the first call makes the segment
  for (auto _ : state) {
    DataPtr ptr = allocator.allocate(nbytes);
    benchmark::DoNotOptimize(ptr.get());
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_CachingAllocatorPair)->Apply(set_size_args);

void BM_MallocPair(benchmark::State& state) {
  const auto nbytes = static_cast<std::size_t>(state.range(0));
  for (auto _ : state) {
    void* ptr = std::malloc(nbytes);
    benchmark::DoNotOptimize(ptr);
    std::free(ptr);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_MallocPair)->Apply(set_size_args);

void BM_AlignedAllocPair(benchmark::State& state) {
  const auto nbytes = static_cast<std::size_t>(state.range(0));
  for (auto _ : state) {
    void* ptr = std::aligned_alloc(64, nbytes);  // sizes here are multiples of 64
    benchmark::DoNotOptimize(ptr);
    std::free(ptr);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_AlignedAllocPair)->Apply(set_size_args);

void BM_CachingAllocatorRecurringSet(benchmark::State& state) {
  CachingAllocator& allocator = leangrad::allocator_for(Device::cpu());
  std::vector<DataPtr> batch;
  batch.reserve(kRecurringSizes.size());
  for (auto _ : state) {
    for (std::size_t n : kRecurringSizes)
      batch.push_back(allocator.allocate(n));
    benchmark::DoNotOptimize(batch.data());
    batch.clear();
  }
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(kRecurringSizes.size()));
  state.counters["backend_allocs"] = static_cast<double>(allocator.stats().backend_allocs);
}
BENCHMARK(BM_CachingAllocatorRecurringSet);

void BM_MallocRecurringSet(benchmark::State& state) {
  std::vector<void*> batch;
  batch.reserve(kRecurringSizes.size());
  for (auto _ : state) {
    for (std::size_t n : kRecurringSizes)
      batch.push_back(std::malloc(n));
    benchmark::DoNotOptimize(batch.data());
    for (void* ptr : batch)
      std::free(ptr);
    batch.clear();
  }
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(kRecurringSizes.size()));
}
BENCHMARK(BM_MallocRecurringSet);

}  // namespace

BENCHMARK_MAIN();
