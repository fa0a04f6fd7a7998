// Bucket assignment of DistributedDataParallel (distributed/bucket_assignment.cpp), without
// processes: reverse registration order, the 1 MiB first bucket then the cap, one dtype and
// device per bucket, oversized parameters alone, and the launch order.
#include <gtest/gtest.h>

#include <leangrad/core/error.h>
#include <leangrad/distributed/bucket_assignment.h>

namespace leangrad::distributed {
namespace {

using Buckets = std::vector<std::vector<std::size_t>>;
constexpr std::int64_t kMiB = 1 << 20;

BucketCandidate f32(std::int64_t nbytes) {
  return {DType::Float32, Device::cpu(), nbytes};
}

TEST(BucketAssignment, ReverseOrderFirstBucketSmallThenTheCap) {
  // Registration order 0..5; gradients come last-first, so bucket 0 starts at parameter 5.
  const std::vector<BucketCandidate> params = {f32(10 * kMiB), f32(10 * kMiB), f32(10 * kMiB),
                                               f32(kMiB / 2),  f32(kMiB / 2),  f32(4)};
  const Buckets buckets = assign_buckets(params, {kMiB, 25 * kMiB});
  // 5 + 4 + 3 = 1 MiB + 4 B >= 1 MiB closes the first; then 2 + 1 + 0 = 30 MiB >= 25 MiB.
  EXPECT_EQ(buckets, (Buckets{{5, 4, 3}, {2, 1, 0}}));
}

TEST(BucketAssignment, TheCapAppliesToEveryLaterBucket) {
  std::vector<BucketCandidate> params(7, f32(kMiB));
  const Buckets buckets = assign_buckets(params, {kMiB, 2 * kMiB});
  EXPECT_EQ(buckets, (Buckets{{6}, {5, 4}, {3, 2}, {1, 0}}));
}

TEST(BucketAssignment, ALargeParameterGetsABucketOfItsOwn) {
  const std::vector<BucketCandidate> params = {f32(4), f32(100 * kMiB), f32(4)};
  EXPECT_EQ(assign_buckets(params, {kMiB, 25 * kMiB}), (Buckets{{2, 1}, {0}}));
}

TEST(BucketAssignment, OneDtypeAndDevicePerBucket) {
  const std::vector<BucketCandidate> params = {f32(8),
                                               {DType::Float64, Device::cpu(), 8},
                                               f32(8),
                                               {DType::Float32, Device::cuda(0), 8},
                                               {DType::Float64, Device::cpu(), 8}};
  // Nothing reaches a limit: one bucket per (dtype, device), ordered by its first member in the
  // reverse walk: float64 (4, 1), cuda float32 (3), cpu float32 (2, 0).
  EXPECT_EQ(assign_buckets(params, {kMiB, 25 * kMiB}), (Buckets{{4, 1}, {3}, {2, 0}}));
}

TEST(BucketAssignment, EachDtypeHasItsOwnFirstBucket) {
  const std::vector<BucketCandidate> params = {{DType::Float64, Device::cpu(), kMiB},
                                               f32(kMiB),
                                               {DType::Float64, Device::cpu(), kMiB},
                                               f32(kMiB)};
  EXPECT_EQ(assign_buckets(params, {kMiB, 25 * kMiB}), (Buckets{{3}, {2}, {1}, {0}}));
}

TEST(BucketAssignment, NoParametersNoBuckets) {
  EXPECT_TRUE(assign_buckets({}, {kMiB}).empty());
  EXPECT_THROW(assign_buckets({f32(4)}, {}), Error);
  EXPECT_THROW(assign_buckets({f32(4)}, {0}), Error);
}

}  // namespace
}  // namespace leangrad::distributed
