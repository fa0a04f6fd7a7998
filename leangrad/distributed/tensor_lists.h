// Collectives over a list of tensors that every rank holds one of each (a model's parameters and
// buffers), shared by DistributedDataParallel and ZeroRedundancyOptimizer:
// - first_mismatch: whether the lists agree (dtype, shape, requires_grad) on every rank, checked
//   before anything is broadcast or reduced, so that a mismatch is named instead of pairing one
//   rank's collective with another's;
// - broadcast_coalesced: one rank's tensors copied into every other rank's, a flat bucket per
//   dtype and device instead of one collective per tensor.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <leangrad/core/tensor.h>
#include <leangrad/distributed/process_group.h>

namespace leangrad::distributed {

// Every rank's `counts` (as many on every rank), gathered: all[r] is rank r's.
std::vector<std::vector<std::int64_t>> all_gather_counts(ProcessGroup& group,
                                                         const std::vector<std::int64_t>& counts);

// Where the lists first differ: tensor `index` is `expected` on rank 0 and `theirs` on `rank`
// ("float32 [4, 6]", with "requiring grad" or "frozen (requires_grad false)" when that is what
// differs, then grad_differs is true).
struct TensorMismatch {
  std::size_t index = 0;
  int rank = 0;
  std::string expected;
  std::string theirs;
  bool grad_differs = false;
};

// Compares every rank's `tensors` with rank 0's: dtype, requires_grad, shape. One all-gather of
// a fixed-size record per tensor, so every rank must pass as many tensors (check the counts with
// all_gather_counts first). Every rank finds the same mismatch.
std::optional<TensorMismatch> first_mismatch(ProcessGroup& group,
                                             const std::vector<Tensor>& tensors);

// Copies rank `root`'s `tensors` into every other rank's, bitwise: the tensors grouped into flat
// buckets per dtype and device (assign_buckets, each at most `bucket_bytes` unless one tensor is
// larger), one broadcast per bucket; a bucket of one tensor is broadcast in place, without the
// flat copy. Every rank passes tensors of the same dtypes, shapes and devices in the same order.
// When a broadcast fails, the Error says `describe(bucket)` (the indices of the tensors in the
// failed bucket), then the group's message.
void broadcast_coalesced(
    ProcessGroup& group, const std::vector<Tensor>& tensors, int root, std::int64_t bucket_bytes,
    const std::function<std::string(const std::vector<std::size_t>&)>& describe);

}  // namespace leangrad::distributed
