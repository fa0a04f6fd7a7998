// Bucket assignment of DistributedDataParallel (bucket_assignment.h).
//
// Note [Bucket assignment]
// Backward produces gradients roughly in the reverse of the order the forward used the
// parameters, and modules register parameters in about the order their forward uses them. So
// the parameters are walked from the last registered to the first, and each joins the open
// bucket of its dtype and device (a bucket holds one dtype: it is one flat tensor, all-reduced
// by one collective). A bucket closes as soon as it holds at least its limit: the first bucket of
// a dtype and device 1 MiB, every later one bucket_cap_mb (25 MiB by default), as in PyTorch.
// The small first bucket starts the first all-reduce early in backward; the large ones amortise
// the fixed cost of a collective. A parameter larger than the limit gets a bucket of its own.
// The buckets are then ordered by their first parameter in the walk, which is the order their
// last gradients are expected: the reducer launches them in exactly this order on every rank
// (Note [Launching in bucket order] in reducer.cpp).
#include <leangrad/distributed/bucket_assignment.h>

#include <algorithm>
#include <map>
#include <utility>

#include <leangrad/core/error.h>

namespace leangrad::distributed {

std::vector<std::vector<std::size_t>> assign_buckets(
    const std::vector<BucketCandidate>& params, const std::vector<std::int64_t>& limits_bytes) {
  LG_CHECK(!limits_bytes.empty(), "assign_buckets: no bucket size limits given");
  for (std::int64_t limit : limits_bytes)
    LG_CHECK(limit > 0, "assign_buckets: bucket size limits must be positive, got ", limit);
  struct Open {
    std::vector<std::size_t> members;
    std::int64_t nbytes = 0;
    std::size_t closed = 0;  // how many buckets of this key were closed: picks the limit
  };
  using Key = std::pair<int, std::pair<int, int>>;  // dtype, device type, device index
  std::map<Key, Open> open;
  std::vector<std::vector<std::size_t>> buckets;
  for (std::size_t k = params.size(); k-- > 0;) {
    const BucketCandidate& p = params[k];
    Open& bucket = open[{static_cast<int>(p.dtype),
                         {static_cast<int>(p.device.type), static_cast<int>(p.device.index)}}];
    bucket.members.push_back(k);
    bucket.nbytes += p.nbytes;
    const std::int64_t limit = limits_bytes[std::min(bucket.closed, limits_bytes.size() - 1)];
    if (bucket.nbytes >= limit) {
      buckets.push_back(std::move(bucket.members));
      bucket.members.clear();
      bucket.nbytes = 0;
      ++bucket.closed;
    }
  }
  for (auto& [key, bucket] : open) {
    if (!bucket.members.empty()) buckets.push_back(std::move(bucket.members));
  }
  // Order by the first member in the walk: the highest registration index comes first.
  std::stable_sort(buckets.begin(), buckets.end(),
                   [](const auto& a, const auto& b) { return a.front() > b.front(); });
  return buckets;
}

}  // namespace leangrad::distributed
