// How DistributedDataParallel groups parameters into buckets (PyTorch's
// compute_bucket_assignment_by_size): a pure function of the parameters' dtypes, devices and
// sizes, tested without processes. The reducer (reducer.h) allocates one flat tensor per bucket.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include <leangrad/core/device.h>
#include <leangrad/core/dtype.h>

namespace leangrad::distributed {

// What the assignment looks at in a parameter.
struct BucketCandidate {
  DType dtype = DType::Float32;
  Device device;
  std::int64_t nbytes = 0;
};

// Groups `params` (in registration order) into buckets and returns them in the order their
// all-reduces run, each a list of indices into `params`. See Note [Bucket assignment] in
// bucket_assignment.cpp: reverse registration order, one open bucket per (dtype, device), a
// bucket closes once it holds at least its limit (limits_bytes[k] for the k-th bucket of its
// dtype and device, the last limit for every later one).
std::vector<std::vector<std::size_t>> assign_buckets(const std::vector<BucketCandidate>& params,
                                                     const std::vector<std::int64_t>& limits_bytes);

}  // namespace leangrad::distributed
