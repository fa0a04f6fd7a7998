// Tests of the caching allocator (core/caching_allocator.cpp) over test backends: a counting host
// backend with an optional byte budget, and the same with fake stream events that the test
// completes by hand. Also the process-wide allocators and the memory:: API (core/memory.cpp).
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <random>
#include <stdexcept>
#include <thread>
#include <vector>

#include <leangrad/core/allocator.h>
#include <leangrad/core/cuda.h>
#include <leangrad/core/error.h>
#include <leangrad/core/macros.h>
#include <leangrad/core/memory.h>
#if LG_ADDRESS_SANITIZER  // core/macros.h
#include <sanitizer/lsan_interface.h>
#endif

namespace leangrad {
namespace {

constexpr std::size_t kKiB = 1024;
constexpr std::size_t kMiB = 1024 * kKiB;

// Host memory that counts its calls and refuses (returns nullptr) past an optional byte budget.
class HostTestBackend : public AllocatorBackend {
 public:
  explicit HostTestBackend(std::size_t budget_bytes = 0, Device device = Device::cpu())
      : budget_bytes_(budget_bytes), device_(device) {}

  void* allocate(std::size_t nbytes) override {
    if (budget_bytes_ != 0 && live_bytes + nbytes > budget_bytes_) {
      ++refusals;
      return nullptr;
    }
    void* ptr = std::aligned_alloc(64, (nbytes + 63) / 64 * 64);
    ++allocs;
    live_bytes += nbytes;
    alloc_sizes.push_back(nbytes);
    return ptr;
  }
  void deallocate(void* ptr, std::size_t nbytes) override {
    std::free(ptr);
    ++frees;
    live_bytes -= nbytes;
  }
  Device device() const override { return device_; }
  std::string name() const override { return "test"; }

  std::int64_t allocs = 0;
  std::int64_t frees = 0;
  std::int64_t refusals = 0;
  std::size_t live_bytes = 0;
  std::vector<std::size_t> alloc_sizes;

 private:
  std::size_t budget_bytes_;
  Device device_;
};

// Adds fake events: streams are arbitrary integers, and an event completes when the test says so.
class StreamTestBackend : public HostTestBackend {
 public:
  struct FakeEvent {
    StreamRef stream;
    bool done = false;
  };

  void* record_event(StreamRef stream) override {
    ++live_events;
    events_.push_back(std::make_unique<FakeEvent>(FakeEvent{stream}));
    return events_.back().get();
  }
  bool event_completed(void* event) override { return static_cast<FakeEvent*>(event)->done; }
  void synchronize_event(void* event) override { static_cast<FakeEvent*>(event)->done = true; }
  void destroy_event(void* event) override {
    --live_events;
    std::erase_if(events_, [&](const auto& e) { return e.get() == event; });
  }

  // The work queued on `stream` so far has finished.
  void complete_stream(StreamRef stream) {
    for (auto& event : events_) {
      if (event->stream == stream) event->done = true;
    }
  }

  std::int64_t live_events = 0;

 private:
  std::vector<std::unique_ptr<FakeEvent>> events_;
};

AllocatorConfig config_with(std::size_t max_split_bytes = 0, std::size_t cap_bytes = 0,
                            bool caching = true) {
  AllocatorConfig config;
  config.max_split_size_bytes = max_split_bytes;
  config.memory_cap_bytes = cap_bytes;
  config.caching = caching;
  return config;
}

// An allocator and a view of its backend (the allocator owns it).
template <typename Backend = HostTestBackend>
struct TestAllocator {
  explicit TestAllocator(AllocatorConfig config = {}, std::unique_ptr<Backend> owned = nullptr) {
    if (owned == nullptr) owned = std::make_unique<Backend>();
    backend = owned.get();
    allocator = std::make_unique<CachingAllocator>(std::move(owned), config);
  }
  CachingAllocator* operator->() { return allocator.get(); }
  MemoryStats stats() const { return allocator->stats(); }

  Backend* backend = nullptr;
  std::unique_ptr<CachingAllocator> allocator;
};

char* address(const DataPtr& ptr) {
  return static_cast<char*>(ptr.get());
}

TEST(CachingAllocatorTest, RoundsTo512Bytes) {
  TestAllocator alloc;
  DataPtr a = alloc->allocate(1);
  EXPECT_EQ(alloc.stats().allocated, 512);
  DataPtr b = alloc->allocate(513);
  EXPECT_EQ(alloc.stats().allocated, 512 + 1024);
  DataPtr c = alloc->allocate(512);
  EXPECT_EQ(alloc.stats().allocated, 512 + 1024 + 512);
  // Carved one after another from the same small segment.
  EXPECT_EQ(address(b), address(a) + 512);
  EXPECT_EQ(address(c), address(b) + 1024);
  EXPECT_EQ(alloc.backend->allocs, 1);

  DataPtr empty = alloc->allocate(0);
  EXPECT_FALSE(empty);
  EXPECT_EQ(alloc.stats().active_blocks, 3);
}

TEST(CachingAllocatorTest, DataPtrCarriesTheBackendDevice) {
  TestAllocator alloc({}, std::make_unique<HostTestBackend>(0, Device::cuda(3)));
  DataPtr a = alloc->allocate(100);
  EXPECT_EQ(a.device(), Device::cuda(3));
  EXPECT_TRUE(alloc->owns(a));
  TestAllocator other;
  EXPECT_FALSE(other->owns(a));
  EXPECT_THROW(other->record_stream(a, StreamRef{1, 0x10}), Error);
}

TEST(CachingAllocatorTest, SegmentSizesOfSmallAndLargePools) {
  const std::pair<std::size_t, std::size_t> request_to_segment[] = {
      {1, 2 * kMiB},                 // small pool
      {1 * kMiB, 2 * kMiB},          // largest small request
      {1 * kMiB + 1, 20 * kMiB},     // large pool, shared segment
      {10 * kMiB - 512, 20 * kMiB},  //
      {10 * kMiB, 10 * kMiB},        // own segment, rounded to 2 MiB
      {11 * kMiB + 1, 12 * kMiB},    //
      {100 * kMiB + 1, 102 * kMiB},  //
  };
  for (auto [request, segment] : request_to_segment) {
    TestAllocator alloc;
    DataPtr p = alloc->allocate(request);
    ASSERT_EQ(alloc.backend->alloc_sizes.size(), 1u) << request;
    EXPECT_EQ(alloc.backend->alloc_sizes[0], segment) << "request " << request;
    EXPECT_EQ(alloc.stats().reserved, static_cast<std::int64_t>(segment));
  }
}

TEST(CachingAllocatorTest, SplitsAndCoalescesLargeSegment) {
  TestAllocator alloc;
  DataPtr a = alloc->allocate(4 * kMiB);
  DataPtr b = alloc->allocate(4 * kMiB);
  DataPtr c = alloc->allocate(4 * kMiB);
  EXPECT_EQ(alloc.backend->allocs, 1);  // all three from one 20 MiB segment
  EXPECT_EQ(address(b), address(a) + 4 * kMiB);
  EXPECT_EQ(address(c), address(b) + 4 * kMiB);
  char* base = address(a);

  b.reset();  // the middle first, then its neighbours
  a.reset();
  c.reset();
  EXPECT_EQ(alloc.stats().reserved, static_cast<std::int64_t>(20 * kMiB));
  EXPECT_EQ(alloc.stats().allocated, 0);

  // One block again: a request as large as the whole segment is served without a backend call.
  DataPtr whole = alloc->allocate(20 * kMiB);
  EXPECT_EQ(address(whole), base);
  EXPECT_EQ(alloc.backend->allocs, 1);
  EXPECT_EQ(alloc.stats().reserved, static_cast<std::int64_t>(20 * kMiB));
}

TEST(CachingAllocatorTest, SplitsAndCoalescesSmallSegment) {
  TestAllocator alloc;
  std::vector<DataPtr> quarters;
  for (int i = 0; i < 4; ++i)
    quarters.push_back(alloc->allocate(512 * kKiB));
  char* base = address(quarters[0]);
  for (int i : {2, 1, 3, 0})
    quarters[i].reset();
  // Without coalescing, four 512 KiB pieces could not hold two 1 MiB blocks.
  DataPtr x = alloc->allocate(1 * kMiB);
  DataPtr y = alloc->allocate(1 * kMiB);
  EXPECT_EQ(address(x), base);
  EXPECT_EQ(address(y), base + 1 * kMiB);
  EXPECT_EQ(alloc.backend->allocs, 1);
}

TEST(CachingAllocatorTest, ReusesTheSmallestFreeBlockThatFits) {
  TestAllocator alloc;
  // Free blocks of 4, 8 and 16 KiB, kept apart by live separators so they cannot merge.
  DataPtr b4 = alloc->allocate(4 * kKiB);
  DataPtr sep1 = alloc->allocate(512);
  DataPtr b8 = alloc->allocate(8 * kKiB);
  DataPtr sep2 = alloc->allocate(512);
  DataPtr b16 = alloc->allocate(16 * kKiB);
  DataPtr sep3 = alloc->allocate(512);
  char* at4 = address(b4);
  char* at8 = address(b8);
  char* at16 = address(b16);
  b16.reset();
  b4.reset();
  b8.reset();

  DataPtr p6 = alloc->allocate(6 * kKiB);
  EXPECT_EQ(address(p6), at8);
  DataPtr p3 = alloc->allocate(3 * kKiB);
  EXPECT_EQ(address(p3), at4);
  DataPtr p12 = alloc->allocate(12 * kKiB);
  EXPECT_EQ(address(p12), at16);
  EXPECT_EQ(alloc.backend->allocs, 1);
}

TEST(CachingAllocatorTest, MaxSplitSizeLimitsOversizeBlocks) {
  TestAllocator alloc(config_with(/*max_split_bytes=*/16 * kMiB));
  DataPtr p40 = alloc->allocate(40 * kMiB);  // above max_split_size: its own segment
  char* at40 = address(p40);
  p40.reset();

  // Below max_split_size: never takes the 40 MiB oversize block; its segment is capped at 16 MiB.
  DataPtr p8 = alloc->allocate(8 * kMiB);
  EXPECT_EQ(alloc.backend->allocs, 2);
  EXPECT_EQ(alloc.backend->alloc_sizes.back(), 16 * kMiB);

  // At/above max_split_size: takes the oversize block because only 10 MiB are wasted.
  DataPtr p30 = alloc->allocate(30 * kMiB);
  EXPECT_EQ(address(p30), at40);
  EXPECT_EQ(alloc.backend->allocs, 2);

  // The oversize block was not split: a second 7 MiB request finds no free block.
  DataPtr q = alloc->allocate(7 * kMiB);
  EXPECT_EQ(address(q), address(p8) + 8 * kMiB);
  EXPECT_EQ(alloc.backend->allocs, 2);
  DataPtr r = alloc->allocate(7 * kMiB);
  EXPECT_EQ(alloc.backend->allocs, 3);

  // Waste of 22 MiB is too much: a new 18 MiB segment instead of the free 40 MiB block.
  p30.reset();
  DataPtr p18 = alloc->allocate(18 * kMiB);
  EXPECT_NE(address(p18), at40);
  EXPECT_EQ(alloc.backend->allocs, 4);
  EXPECT_EQ(alloc.backend->alloc_sizes.back(), 18 * kMiB);
}

TEST(CachingAllocatorTest, MemoryCapThrowsOutOfMemoryThenRecovers) {
  TestAllocator alloc(config_with(0, /*cap_bytes=*/24 * kMiB));
  DataPtr a = alloc->allocate(5 * kMiB);  // a 20 MiB segment
  try {
    DataPtr b = alloc->allocate(16 * kMiB);  // needs a 16 MiB segment: 36 MiB > cap
    FAIL() << "expected OutOfMemoryError";
  } catch (const OutOfMemoryError& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("16777216"), std::string::npos) << message;
    EXPECT_NE(message.find("16.00 MiB"), std::string::npos) << message;
    EXPECT_NE(message.find("cap"), std::string::npos) << message;
    EXPECT_NE(message.find("LEANGRAD_ALLOC_CONF"), std::string::npos) << message;
  }
  MemoryStats stats = alloc.stats();
  EXPECT_EQ(stats.oom_count, 1);
  EXPECT_EQ(stats.alloc_retries, 1);
  EXPECT_EQ(stats.allocated, static_cast<std::int64_t>(5 * kMiB));

  a.reset();
  DataPtr b = alloc->allocate(16 * kMiB);  // fits the freed segment
  EXPECT_TRUE(b);
  EXPECT_EQ(alloc.stats().oom_count, 1);
}

// Issue 14, defect 5: an 8 MiB request normally takes a shared 20 MiB segment, which a 16 MiB cap
// refuses; the request itself fits, so the retry asks for a segment of exactly its size.
TEST(CachingAllocatorTest, MemoryCapAdmitsARequestWhoseSegmentWouldNotFit) {
  TestAllocator alloc(parse_allocator_config("memory_cap_mb:16"));
  DataPtr a = alloc->allocate(8 * kMiB);
  ASSERT_TRUE(a);
  EXPECT_EQ(alloc.backend->alloc_sizes, (std::vector<std::size_t>{8 * kMiB}));
  DataPtr b = alloc->allocate(7 * kMiB + 100);  // 7 MiB + 512 of exact segment: 15 MiB + 512
  EXPECT_EQ(alloc.backend->alloc_sizes.back(), 7 * kMiB + 512);
  MemoryStats stats = alloc.stats();
  EXPECT_EQ(stats.reserved, static_cast<std::int64_t>(15 * kMiB + 512));
  EXPECT_EQ(stats.allocated, stats.reserved);
  EXPECT_EQ(stats.alloc_retries, 2);
  EXPECT_EQ(stats.oom_count, 0);

  // The cap still holds exactly: 1 MiB more would make 16 MiB + 512 bytes.
  try {
    DataPtr c = alloc->allocate(1 * kMiB);
    FAIL() << "expected OutOfMemoryError";
  } catch (const OutOfMemoryError& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("a new segment of 1.00 MiB would exceed the memory cap"),
              std::string::npos)
        << message;
  }
  EXPECT_EQ(alloc.stats().oom_count, 1);

  // The exact-size segments are cached like any other: the same request again is no backend call.
  a.reset();
  DataPtr again = alloc->allocate(8 * kMiB);
  EXPECT_EQ(alloc.backend->allocs, 2);
}

// The small pool's 2 MiB segments pass a 1 MiB cap; a 4 KiB tensor still fits.
TEST(CachingAllocatorTest, MemoryCapBelowTheSmallSegmentSize) {
  TestAllocator alloc(parse_allocator_config("memory_cap_mb:1"));
  DataPtr a = alloc->allocate(4000);
  ASSERT_TRUE(a);
  EXPECT_EQ(alloc.backend->alloc_sizes, (std::vector<std::size_t>{4096}));
  EXPECT_EQ(alloc.stats().reserved, 4096);
}

// The same retry when the backend, not the cap, refuses the shared segment (a GPU with 10 MiB
// left).
TEST(CachingAllocatorTest, BackendRefusingTheSegmentGetsAskedForTheRequestAlone) {
  TestAllocator alloc({}, std::make_unique<HostTestBackend>(/*budget_bytes=*/10 * kMiB));
  DataPtr a = alloc->allocate(8 * kMiB);
  ASSERT_TRUE(a);
  EXPECT_EQ(alloc.backend->refusals, 2);  // 20 MiB, then 20 MiB after releasing the cache
  EXPECT_EQ(alloc.backend->alloc_sizes, (std::vector<std::size_t>{8 * kMiB}));
  EXPECT_EQ(alloc.stats().reserved, static_cast<std::int64_t>(8 * kMiB));
}

TEST(CachingAllocatorTest, BackendFailureReleasesCacheAndRetries) {
  TestAllocator alloc({}, std::make_unique<HostTestBackend>(/*budget_bytes=*/22 * kMiB));
  alloc->allocate(1 * kMiB).reset();  // leaves a cached, free 2 MiB small segment
  EXPECT_EQ(alloc.stats().reserved, static_cast<std::int64_t>(2 * kMiB));

  DataPtr big = alloc->allocate(21 * kMiB);  // a 22 MiB segment: only fits without the cache
  EXPECT_TRUE(big);
  MemoryStats stats = alloc.stats();
  EXPECT_EQ(stats.alloc_retries, 1);
  EXPECT_EQ(stats.oom_count, 0);
  EXPECT_EQ(stats.backend_frees, 1);
  EXPECT_EQ(alloc.backend->frees, 1);
  EXPECT_EQ(alloc.backend->refusals, 1);
  EXPECT_EQ(stats.reserved, static_cast<std::int64_t>(22 * kMiB));
}

TEST(CachingAllocatorTest, CachingOffCallsTheBackendEveryTime) {
  TestAllocator alloc(config_with(0, 0, /*caching=*/false));
  for (int i = 0; i < 10; ++i) {
    DataPtr small = alloc->allocate(100);
    DataPtr large = alloc->allocate(3 * kMiB);
    EXPECT_EQ(alloc.stats().reserved, static_cast<std::int64_t>(512 + 3 * kMiB));
  }
  EXPECT_EQ(alloc.backend->allocs, 20);
  EXPECT_EQ(alloc.backend->frees, 20);
  EXPECT_EQ(alloc.backend->alloc_sizes[0], 512u);  // the rounded size, no segment
  EXPECT_EQ(alloc.backend->alloc_sizes[1], 3 * kMiB);
  MemoryStats stats = alloc.stats();
  EXPECT_EQ(stats.backend_allocs, 20);
  EXPECT_EQ(stats.backend_frees, 20);
  EXPECT_EQ(stats.reserved, 0);
  EXPECT_EQ(stats.peak_allocated, static_cast<std::int64_t>(512 + 3 * kMiB));
}

TEST(CachingAllocatorTest, StatsAreExact) {
  TestAllocator alloc;
  DataPtr a = alloc->allocate(1000);      // 1024 bytes, small segment of 2 MiB
  DataPtr b = alloc->allocate(3 * kMiB);  // large segment of 20 MiB
  DataPtr c = alloc->allocate(1);         // 512 bytes
  const std::int64_t peak = 1024 + 3 * kMiB + 512;
  MemoryStats stats = alloc.stats();
  EXPECT_EQ(stats.allocated, peak);
  EXPECT_EQ(stats.reserved, static_cast<std::int64_t>(22 * kMiB));
  EXPECT_EQ(stats.peak_allocated, peak);
  EXPECT_EQ(stats.peak_reserved, static_cast<std::int64_t>(22 * kMiB));
  EXPECT_EQ(stats.active_blocks, 3);
  EXPECT_EQ(stats.backend_allocs, 2);
  EXPECT_EQ(stats.backend_frees, 0);

  b.reset();
  stats = alloc.stats();
  EXPECT_EQ(stats.allocated, 1024 + 512);
  EXPECT_EQ(stats.peak_allocated, peak);
  EXPECT_EQ(stats.active_blocks, 2);
  EXPECT_EQ(stats.reserved, static_cast<std::int64_t>(22 * kMiB));  // cached

  alloc->reset_peak();
  stats = alloc.stats();
  EXPECT_EQ(stats.peak_allocated, 1024 + 512);
  EXPECT_EQ(stats.peak_reserved, static_cast<std::int64_t>(22 * kMiB));

  alloc->empty_cache();  // the free large segment goes; the small one is in use
  stats = alloc.stats();
  EXPECT_EQ(stats.reserved, static_cast<std::int64_t>(2 * kMiB));
  EXPECT_EQ(stats.peak_reserved, static_cast<std::int64_t>(22 * kMiB));
  EXPECT_EQ(stats.backend_frees, 1);

  a.reset();
  c.reset();
  alloc->empty_cache();
  stats = alloc.stats();
  EXPECT_EQ(stats.allocated, 0);
  EXPECT_EQ(stats.reserved, 0);
  EXPECT_EQ(stats.active_blocks, 0);
  EXPECT_EQ(stats.backend_frees, 2);
  EXPECT_EQ(alloc.backend->live_bytes, 0u);
}

TEST(CachingAllocatorTest, SummaryNamesPoolsAndConfig) {
  TestAllocator alloc(config_with(256 * kMiB, 0));
  DataPtr a = alloc->allocate(1000);
  const std::string text = alloc->summary();
  for (const char* word : {"test", "allocated", "reserved", "small", "large", "backend allocs",
                           "max_split_size 256.00 MiB", "caching on"}) {
    EXPECT_NE(text.find(word), std::string::npos) << word << " missing in\n" << text;
  }
}

// The driver reuses the cudaStream_t of a destroyed stream for the next one it creates. Blocks are
// keyed by the stream's id, which is never reused: a new stream with the old handle must not be
// handed the old stream's blocks (its queued work may still be using them), and events are
// recorded on the handle.
TEST(CachingAllocatorTest, StreamIdsNotHandlesKeyTheFreeLists) {
  TestAllocator<StreamTestBackend> alloc;
  StreamTestBackend& backend = *alloc.backend;
  constexpr std::uintptr_t kReusedHandle = 0x1234;
  constexpr StreamRef kOldStream{41, kReusedHandle}, kNewStream{42, kReusedHandle};
  DataPtr a = alloc->allocate(4096, kOldStream);
  char* old_block = address(a);
  a.reset();
  DataPtr b = alloc->allocate(4096, kNewStream);
  EXPECT_EQ(backend.allocs, 2);  // a segment of its own
  EXPECT_TRUE(address(b) < old_block || address(b) >= old_block + 2 * kMiB);
  DataPtr c = alloc->allocate(4096, kOldStream);  // the same id finds its block again
  EXPECT_EQ(address(c), old_block);
  alloc->record_stream(c, kNewStream);  // same handle, other stream: an event is needed
  c.reset();
  EXPECT_EQ(backend.live_events, 1);
  backend.complete_stream(kNewStream);
}

// A stream event that cannot be recorded in free(): the block is left out of the pool for good,
// even when another stream's event was recorded first and completes (it would otherwise return
// the block while the failed stream may still use it), and that event is not left pending.
class FailingEventBackend : public StreamTestBackend {
 public:
  void* record_event(StreamRef stream) override {
    if (stream.id == 2) throw std::runtime_error("record_event failed on stream 2");
    return StreamTestBackend::record_event(stream);
  }
};

TEST(CachingAllocatorTest, AStreamEventThatFailsLeaksTheBlockWholly) {
  TestAllocator<FailingEventBackend> alloc;
  FailingEventBackend& backend = *alloc.backend;
  constexpr StreamRef kStream0{0, 0}, kStream1{1, 0x10}, kStream2{2, 0x20};
  char* leaked = nullptr;
  {
#if LG_ADDRESS_SANITIZER
    // The block and its segment are leaked on purpose: LeakSanitizer is told so.
    const __lsan::ScopedDisabler intended_leak;
#endif
    DataPtr a = alloc->allocate(4096, kStream0);
    leaked = address(a);
    alloc->record_stream(a, kStream1);  // recorded first, succeeds
    alloc->record_stream(a, kStream2);  // fails
    a.reset();
  }
  EXPECT_EQ(backend.live_events, 0);  // stream 1's event destroyed, not left pending
  backend.complete_stream(kStream1);
  for (int i = 0; i < 4; ++i) {
    DataPtr b = alloc->allocate(4096, kStream0);
    EXPECT_NE(address(b), leaked) << "the block whose stream 2 event failed was handed out again";
    b.reset();  // never record_stream-ed: goes back to the pool at once, no event
    EXPECT_EQ(backend.live_events, 0);
  }
}

// Note [Default streams of several GPUs]: a pinned block copied on the default streams of two
// GPUs (id 0 and handle 0 both) has two uses, each fenced by an event on its own device; the
// block comes back only when both have completed.
TEST(CachingAllocatorTest, DefaultStreamsOfTwoDevicesAreTwoUses) {
  TestAllocator<StreamTestBackend> alloc;
  StreamTestBackend& backend = *alloc.backend;
  constexpr StreamRef kDefault0{0, 0, 0}, kDefault1{0, 0, 1};
  DataPtr a = alloc->allocate(4096, kHostStream);
  char* base = address(a);
  alloc->record_stream(a, kDefault0);
  alloc->record_stream(a, kDefault1);
  a.reset();
  EXPECT_EQ(backend.live_events, 2);
  backend.complete_stream(kDefault0);  // cuda:0's copy is done, cuda:1's is not
  DataPtr b = alloc->allocate(4096, kHostStream);
  EXPECT_NE(address(b), base);
  backend.complete_stream(kDefault1);
  DataPtr c = alloc->allocate(4096, kHostStream);
  EXPECT_EQ(address(c), base);
  EXPECT_EQ(backend.live_events, 0);
}

TEST(CachingAllocatorTest, StreamOrderedReuse) {
  TestAllocator<StreamTestBackend> alloc;
  StreamTestBackend& backend = *alloc.backend;
  constexpr StreamRef kStream1{1, 0x10}, kStream2{2, 0x20}, kCopyStream{7, 0x70};

  // Freed on its own stream: reusable on that stream at once.
  DataPtr a = alloc->allocate(4096, kStream1);
  char* base = address(a);
  a.reset();
  DataPtr b = alloc->allocate(4096, kStream1);
  EXPECT_EQ(address(b), base);
  EXPECT_EQ(backend.allocs, 1);

  // Another stream never gets the block: it gets a segment of its own.
  DataPtr c = alloc->allocate(4096, kStream2);
  EXPECT_EQ(backend.allocs, 2);
  EXPECT_TRUE(address(c) < base || address(c) >= base + 2 * kMiB);
  c.reset();
  DataPtr z = alloc->allocate(4096, {});  // free blocks of streams 1 and 2 exist, none for 0
  EXPECT_EQ(backend.allocs, 3);
  z.reset();
  c = alloc->allocate(4096, kStream2);

  // Used on a copy stream: not reused until the event recorded at free time has completed.
  alloc->record_stream(b, kCopyStream);
  b.reset();
  EXPECT_EQ(backend.live_events, 1);
  EXPECT_EQ(alloc.stats().allocated, 512 * 8);  // only c; b counts as freed
  DataPtr d = alloc->allocate(4096, kStream1);
  EXPECT_EQ(address(d), base + 4096);  // not b's block
  d.reset();
  backend.complete_stream(kCopyStream);
  DataPtr e = alloc->allocate(4096, kStream1);  // polls the event: b's block is back
  EXPECT_EQ(address(e), base);
  EXPECT_EQ(backend.live_events, 0);

  // record_stream with the allocation stream itself records nothing.
  alloc->record_stream(e, kStream1);
  e.reset();
  EXPECT_EQ(backend.live_events, 0);

  // empty_cache waits for pending events, then releases the segment.
  DataPtr f = alloc->allocate(4096, kStream1);
  alloc->record_stream(f, kCopyStream);
  f.reset();
  EXPECT_EQ(backend.live_events, 1);
  alloc->empty_cache();
  EXPECT_EQ(backend.live_events, 0);
  EXPECT_EQ(alloc.stats().reserved, static_cast<std::int64_t>(2 * kMiB));  // c's segment
  EXPECT_EQ(backend.frees, 2);
}

// ---- Randomized stress against a shadow model ------------------------------------------------

struct LiveBlock {
  DataPtr ptr;
  std::size_t nbytes;
  unsigned char tag;
};

// Writes `tag` into the first and last bytes of the block (all of a small one).
void write_pattern(const LiveBlock& block) {
  const std::size_t span = std::min<std::size_t>(block.nbytes, 256);
  std::memset(block.ptr.get(), block.tag, span);
  std::memset(address(block.ptr) + block.nbytes - span, block.tag, span);
}

bool pattern_intact(const LiveBlock& block) {
  const std::size_t span = std::min<std::size_t>(block.nbytes, 256);
  const auto* head = reinterpret_cast<const unsigned char*>(block.ptr.get());
  const unsigned char* tail = head + block.nbytes - span;
  for (std::size_t i = 0; i < span; ++i) {
    if (head[i] != block.tag || tail[i] != block.tag) return false;
  }
  return true;
}

// 1 B .. 8 MiB, skewed small: 60% up to 4 KiB, 30% up to 1 MiB, 10% up to 8 MiB.
std::size_t random_size(std::mt19937_64& rng) {
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  const double pick = unit(rng);
  const double lo = pick < 0.6 ? 1.0 : pick < 0.9 ? 4096.0 : 1048576.0;
  const double hi = pick < 0.6 ? 4096.0 : pick < 0.9 ? 1048576.0 : 8388608.0;
  return static_cast<std::size_t>(
      std::exp(std::log(lo) + unit(rng) * (std::log(hi) - std::log(lo))));
}

void run_stress(AllocatorConfig config, int operations, std::uint64_t seed) {
  TestAllocator<StreamTestBackend> alloc(config);
  StreamTestBackend& backend = *alloc.backend;
  constexpr StreamRef kCopyStream{9, 0x90};
  std::mt19937_64 rng(seed);
  std::vector<LiveBlock> live;
  std::map<std::uintptr_t, std::uintptr_t> intervals;  // begin -> end of live rounded blocks
  std::int64_t live_rounded_bytes = 0;
  unsigned char next_tag = 1;

  auto rounded = [](std::size_t n) { return static_cast<std::int64_t>((n + 511) / 512 * 512); };
  for (int op = 0; op < operations; ++op) {
    const bool do_allocate = live.empty() || (live.size() < 400 && rng() % 100 < 55);
    if (do_allocate) {
      const std::size_t nbytes = random_size(rng);
      const std::uint64_t id = rng() % 2;
      const StreamRef stream{id, id * 0x10};
      LiveBlock block{alloc->allocate(nbytes, stream), nbytes, next_tag};
      next_tag = static_cast<unsigned char>(next_tag % 255 + 1);
      ASSERT_TRUE(block.ptr);
      const auto begin = reinterpret_cast<std::uintptr_t>(block.ptr.get());
      const auto end = begin + static_cast<std::uintptr_t>(rounded(nbytes));
      auto after = intervals.lower_bound(begin);
      ASSERT_TRUE(after == intervals.end() || after->first >= end) << "overlap at op " << op;
      ASSERT_TRUE(after == intervals.begin() || std::prev(after)->second <= begin)
          << "overlap at op " << op;
      intervals.emplace(begin, end);
      live_rounded_bytes += rounded(nbytes);
      write_pattern(block);
      if (rng() % 20 == 0) alloc->record_stream(block.ptr, kCopyStream);
      live.push_back(std::move(block));
    } else {
      const std::size_t index = rng() % live.size();
      ASSERT_TRUE(pattern_intact(live[index])) << "block overwritten (aliasing) at op " << op;
      intervals.erase(reinterpret_cast<std::uintptr_t>(live[index].ptr.get()));
      live_rounded_bytes -= rounded(live[index].nbytes);
      std::swap(live[index], live.back());
      live.pop_back();
    }
    if (op % 64 == 0) backend.complete_stream(kCopyStream);
    const MemoryStats stats = alloc.stats();
    ASSERT_EQ(stats.allocated, live_rounded_bytes) << "at op " << op;
    ASSERT_EQ(stats.active_blocks, static_cast<std::int64_t>(live.size()));
    ASSERT_LE(stats.allocated, stats.reserved);
  }

  for (const LiveBlock& block : live)
    ASSERT_TRUE(pattern_intact(block));
  live.clear();
  alloc->empty_cache();
  const MemoryStats stats = alloc.stats();
  EXPECT_EQ(stats.allocated, 0);
  EXPECT_EQ(stats.active_blocks, 0);
  EXPECT_EQ(stats.reserved, 0);
  EXPECT_EQ(stats.backend_allocs, stats.backend_frees);
  EXPECT_EQ(backend.live_bytes, 0u);
  EXPECT_EQ(backend.live_events, 0);
}

TEST(CachingAllocatorStressTest, RandomAllocateFreeMatchesShadowModel) {
  run_stress({}, 100000, /*seed=*/1);
}

TEST(CachingAllocatorStressTest, RandomWithMaxSplitSize) {
  run_stress(config_with(/*max_split_bytes=*/4 * kMiB), 50000, /*seed=*/2);
}

TEST(CachingAllocatorStressTest, RandomWithCachingOff) {
  run_stress(config_with(0, 0, /*caching=*/false), 20000, /*seed=*/3);
}

TEST(CachingAllocatorStressTest, ThreadsShareOneAllocator) {
  TestAllocator alloc;
  auto work = [&](std::uint64_t seed) {
    std::mt19937_64 rng(seed);
    std::vector<DataPtr> mine;
    for (int i = 0; i < 20000; ++i) {
      if (mine.size() < 32 && rng() % 2 == 0) {
        mine.push_back(alloc->allocate(1 + rng() % 70000));
        std::memset(mine.back().get(), 0x5a, 1);
      } else if (!mine.empty()) {
        mine.erase(mine.begin() + static_cast<std::ptrdiff_t>(rng() % mine.size()));
      }
    }
  };
  std::thread t1(work, 11), t2(work, 12);
  t1.join();
  t2.join();
  EXPECT_EQ(alloc.stats().allocated, 0);
  EXPECT_EQ(alloc.stats().active_blocks, 0);
}

// A training step allocates the same sizes every iteration: after the first one the pools hold
// everything, and no backend call may happen.
void expect_recurring_sizes_cached(AllocatorConfig config) {
  const std::size_t sizes[] = {512,       3000,      64 * kKiB,  1 * kMiB, 1 * kMiB + 1, 5 * kMiB,
                               12 * kMiB, 700,       200 * kKiB, 3 * kMiB, 40 * kMiB,    1,
                               8 * kMiB,  33 * kKiB, 2 * kMiB,   19 * kMiB};
  TestAllocator alloc(config);
  std::mt19937_64 rng(5);
  std::int64_t allocs_after_first_round = 0;
  for (int round = 0; round < 20; ++round) {
    std::vector<DataPtr> batch;
    for (std::size_t n : sizes)
      batch.push_back(alloc->allocate(n));
    std::shuffle(batch.begin(), batch.end(), rng);  // freed in any order
    batch.clear();
    if (round == 0) allocs_after_first_round = alloc.backend->allocs;
  }
  EXPECT_EQ(alloc.backend->allocs, allocs_after_first_round);
  EXPECT_EQ(alloc.backend->frees, 0);
}

TEST(CachingAllocatorTest, RecurringSizesMakeNoBackendCallsAfterFirstRound) {
  expect_recurring_sizes_cached({});
  expect_recurring_sizes_cached(config_with(/*max_split_bytes=*/16 * kMiB));
}

// ---- Configuration ------------------------------------------------------------------------

TEST(AllocatorConfigTest, ParsesValidStrings) {
  AllocatorConfig config = parse_allocator_config("");
  EXPECT_EQ(config.max_split_size_bytes, 0u);
  EXPECT_EQ(config.memory_cap_bytes, 0u);
  EXPECT_TRUE(config.caching);

  config = parse_allocator_config("max_split_size_mb:256,memory_cap_mb:12288,caching:0");
  EXPECT_EQ(config.max_split_size_bytes, 256 * kMiB);
  EXPECT_EQ(config.memory_cap_bytes, 12288 * kMiB);
  EXPECT_FALSE(config.caching);

  for (const char* on : {"caching:1", "caching:true", " caching : on "}) {
    EXPECT_TRUE(parse_allocator_config(on).caching) << on;
  }
  for (const char* off : {"caching:0", "caching:false", "caching:off"}) {
    EXPECT_FALSE(parse_allocator_config(off).caching) << off;
  }
}

TEST(AllocatorConfigTest, RejectsInvalidStringsNamingTheItem) {
  const char* bad[] = {"foo:1",
                       "max_split_size_mb:abc",
                       "memory_cap_mb:-5",
                       "caching:maybe",
                       "max_split_size_mb",
                       "max_split_size_mb:1.5",
                       "memory_cap_mb:",
                       "caching:1,bogus:2",
                       "memory_cap_mb:0",
                       "max_split_size_mb:0"};
  for (const char* conf : bad) {
    try {
      parse_allocator_config(conf);
      ADD_FAILURE() << "accepted '" << conf << "'";
    } catch (const Error& e) {
      const std::string message = e.what();
      const std::string conf_text = conf;
      const std::string item = conf_text.substr(conf_text.find_last_of(',') + 1);
      EXPECT_NE(message.find(item), std::string::npos) << message;
    }
  }
}

// Issue 14, defect 5: memory_cap_mb:0 silently meant "no cap". A size of 0 is now an error that
// names the key and the value and says how to ask for no limit.
TEST(AllocatorConfigTest, ZeroSizesAreRefusedNotTakenAsNoLimit) {
  for (const std::string key : {"memory_cap_mb", "max_split_size_mb"}) {
    try {
      parse_allocator_config("caching:1, " + key + ":0");
      ADD_FAILURE() << key << ":0 accepted";
    } catch (const Error& e) {
      const std::string message = e.what();
      EXPECT_NE(message.find("'" + key + ":0'"), std::string::npos) << message;
      EXPECT_NE(message.find(key + " must be at least 1 MiB, got 0"), std::string::npos) << message;
      EXPECT_NE(message.find("leave " + key + " out"), std::string::npos) << message;
    }
  }
  EXPECT_THROW(memory::configure("memory_cap_mb:0"), Error);
  EXPECT_EQ(parse_allocator_config("memory_cap_mb:1").memory_cap_bytes, 1 * kMiB);
}

TEST(AllocatorConfigTest, BadValuesAreQuotedWithTheirKey) {
  try {
    parse_allocator_config("caching:maybe");
    ADD_FAILURE() << "accepted caching:maybe";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("expected caching to be one of 0, 1, true, false, on, "
                                         "off, got 'maybe'"),
              std::string::npos)
        << e.what();
  }
  try {
    parse_allocator_config("memory_cap_mb:12GB");
    ADD_FAILURE() << "accepted memory_cap_mb:12GB";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("expected memory_cap_mb to be a positive integer number "
                                         "of MiB, got '12GB'"),
              std::string::npos)
        << e.what();
  }
}

// ---- The process-wide allocators and memory:: ----------------------------------------------

TEST(MemoryApiTest, CpuAllocatorFeedsMemoryStats) {
  CachingAllocator& cpu = allocator_for(Device::cpu());
  EXPECT_EQ(&cpu, &allocator_for(Device::cpu()));
  const MemoryStats before = memory::stats(Device::cpu());
  DataPtr p = cpu.allocate(1000);
  EXPECT_EQ(p.device(), Device::cpu());
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(p.get()) % 64, 0u);
  MemoryStats during = memory::stats(Device::cpu());
  EXPECT_EQ(during.allocated, before.allocated + 1024);
  EXPECT_EQ(during.active_blocks, before.active_blocks + 1);
  EXPECT_NE(memory::summary(Device::cpu()).find("cpu"), std::string::npos);
  p.reset();
  EXPECT_EQ(memory::stats(Device::cpu()).allocated, before.allocated);
  memory::reset_peak(Device::cpu());
  memory::empty_cache(Device::cpu());
}

TEST(MemoryApiTest, PinnedPoolIsHostMemory) {
  DataPtr p = pinned_allocator().allocate(100);
  EXPECT_EQ(p.device(), Device::cpu());
  EXPECT_EQ(pinned_allocator().backend().name(), "pinned");
  EXPECT_GE(memory::pinned_stats().active_blocks, 1);
}

TEST(MemoryApiTest, CudaAllocatorWithoutGpuThrowsDeviceError) {
  if (cuda::is_available()) GTEST_SKIP() << "a GPU is present";
  EXPECT_THROW(allocator_for(Device::cuda()), DeviceError);
  EXPECT_THROW(memory::stats(Device::cuda(1)), DeviceError);
}

TEST(MemoryApiTest, ConfigureRejectsBadConfig) {
  EXPECT_THROW(memory::configure("max_split_size_mb:lots"), Error);
}

}  // namespace
}  // namespace leangrad
