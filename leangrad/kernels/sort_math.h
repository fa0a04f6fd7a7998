// The bisection of searchsorted, shared by the CPU and CUDA kernels (kernels/cpu/sort.cpp,
// kernels/cuda/sort.cu), so the CPU tests exercise the comparisons the GPU makes.
#pragma once

#include <cstdint>

#include <leangrad/core/macros.h>

namespace leangrad::sort_math {

// The first i in [0, size) with !(row[i] < v) (right: !(row[i] <= v)), or size: the insertion
// point of v in an ascending row, row[i] being element sorter[i] of the row when sorter is not
// null. Written with exactly these negated comparisons, as torch's, so a NaN v, or NaN elements
// at the row's end, bisect the same way there: every comparison with a NaN is false.
template <typename Key>
LG_HOST_DEVICE LG_INLINE std::int64_t insertion_point(const Key* row, const std::int64_t* sorter,
                                                      std::int64_t size, Key v, bool right) {
  std::int64_t lo = 0;
  std::int64_t hi = size;
  while (lo < hi) {
    const std::int64_t mid = lo + (hi - lo) / 2;
    const Key m = row[sorter != nullptr ? sorter[mid] : mid];
    const bool before = right ? !(m > v) : !(m >= v);
    if (before) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  return lo;
}

}  // namespace leangrad::sort_math
