// The caching allocator under AddressSanitizer (Note [AddressSanitizer and the pool] in
// core/caching_allocator.cpp): one element past a tensor, a freed block still in the cache, and
// every byte a caller may touch. Runs in the ASan build (tools/sanitize.sh asan), SKIPPED in
// others.
#include <gtest/gtest.h>

#include <cstring>
#include <memory>

#include <leangrad/core/allocator.h>
#include <leangrad/core/allocator_backends.h>
#include <leangrad/core/creation.h>
#include <leangrad/core/macros.h>
#include <leangrad/core/tensor.h>

namespace leangrad {
namespace {

// ASan's report of an access to memory the pool poisoned: use-after-poison, or heap-buffer-overflow
// when the poisoned byte is the last of a backend allocation (ASan names a partly addressable
// granule after the shadow that follows it).
constexpr const char* kPoisonReport = "AddressSanitizer: (use-after-poison|heap-buffer-overflow)";

class CachingAllocatorAsanTest : public ::testing::TestWithParam<bool> {
 protected:
  void SetUp() override {
    if (!LG_ADDRESS_SANITIZER) GTEST_SKIP() << "needs an AddressSanitizer build";
    // The OpenMP pool may have threads: re-run the test in a fresh process rather than fork.
    GTEST_FLAG_SET(death_test_style, "threadsafe");
  }

  // A real host allocator with caching on or off (the test's parameter).
  std::unique_ptr<CachingAllocator> make_allocator() const {
    AllocatorConfig config;
    config.caching = GetParam();
    return std::make_unique<CachingAllocator>(make_cpu_backend(), config);
  }
};

// Writes to bytes [begin, end) of a fresh allocation of `nbytes`. volatile: the compiler may not
// drop a store it could prove is never read.
void write_bytes(CachingAllocator& allocator, std::size_t nbytes, std::size_t begin,
                 std::size_t end) {
  DataPtr block = allocator.allocate(nbytes);
  auto* bytes = static_cast<volatile unsigned char*>(block.get());
  for (std::size_t i = begin; i < end; ++i)
    bytes[i] = 1;
}

TEST_P(CachingAllocatorAsanTest, EveryRequestedByteIsAddressable) {
  auto allocator = make_allocator();
  // Sizes on both sides of an 8-byte ASan granule, of the 512-byte rounding and of a segment.
  for (std::size_t nbytes : {1, 7, 8, 9, 511, 512, 513, 1000, 1 << 20, (1 << 20) + 3}) {
    write_bytes(*allocator, nbytes, 0, nbytes);
  }
  SUCCEED() << "no AddressSanitizer report";
}

TEST_P(CachingAllocatorAsanTest, OneBytePastTheRequestIsReported) {
  auto allocator = make_allocator();
  for (std::size_t nbytes : {1, 7, 8, 20, 511, 1000, (1 << 20) + 3}) {
    SCOPED_TRACE(nbytes);
    EXPECT_DEATH(write_bytes(*allocator, nbytes, nbytes, nbytes + 1), kPoisonReport);
  }
}

TEST_P(CachingAllocatorAsanTest, AFreedBlockIsPoisonedWhileCached) {
  auto allocator = make_allocator();
  DataPtr keeps_the_segment_alive = allocator->allocate(64);
  DataPtr block = allocator->allocate(64);
  auto* bytes = static_cast<volatile unsigned char*>(block.get());
  bytes[0] = 1;
  block.reset();
  if (GetParam()) {
    EXPECT_DEATH(bytes[0] = 2, kPoisonReport);  // still in the pool's segment
  } else {
    EXPECT_DEATH(bytes[0] = 2, "AddressSanitizer: heap-use-after-free");  // back with malloc
  }
}

// The backend gets its memory back unpoisoned: it may reuse it (a pinned pool's cudaFreeHost,
// a test backend writing a pattern) without ASan reports.
class ScribblingBackend final : public AllocatorBackend {
 public:
  void* allocate(std::size_t nbytes) override { return cpu_.allocate(nbytes); }
  void deallocate(void* ptr, std::size_t nbytes) override {
    std::memset(ptr, 0xAB, nbytes);
    cpu_.deallocate(ptr, nbytes);
  }
  Device device() const override { return Device::cpu(); }
  std::string name() const override { return "scribbling"; }

 private:
  CpuBackend cpu_;
};

TEST_P(CachingAllocatorAsanTest, SegmentsGoBackToTheBackendUnpoisoned) {
  AllocatorConfig config;
  config.caching = GetParam();
  CachingAllocator allocator(std::make_unique<ScribblingBackend>(), config);
  allocator.allocate(100).reset();
  allocator.allocate(3 << 20).reset();
  allocator.empty_cache();
  EXPECT_EQ(allocator.stats().reserved, 0);
}

INSTANTIATE_TEST_SUITE_P(CachingOnAndOff, CachingAllocatorAsanTest, ::testing::Bool(),
                         [](const auto& info) { return info.param ? "caching" : "no_caching"; });

// The reproducer of issue 14: a kernel writing one element past a tensor. Uses the process-wide
// allocator as configured (CI runs this build with LEANGRAD_ALLOC_CONF=caching:0).
TEST(TensorAsanTest, WritingOneElementPastATensorIsReported) {
  if (!LG_ADDRESS_SANITIZER) GTEST_SKIP() << "needs an AddressSanitizer build";
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  Tensor t = empty({5}, kFloat32);
  volatile float* data = t.data_ptr<float>();
  for (int i = 0; i < 5; ++i)
    data[i] = static_cast<float>(i);
  EXPECT_DEATH(data[5] = 5.0f, kPoisonReport);
  Tensor bytes = empty({3, 3}, kUInt8);  // 9 bytes: the overrun is inside an 8-byte granule
  volatile std::uint8_t* raw = bytes.data_ptr<std::uint8_t>();
  EXPECT_DEATH(raw[9] = 1, kPoisonReport);
}

}  // namespace
}  // namespace leangrad
