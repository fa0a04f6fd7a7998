// The comparisons of searchsorted and select_rank, shared by the CPU and CUDA kernels
// (kernels/cpu/sort.cpp, kernels/cuda/sort.cu), so the CPU tests exercise the comparisons the GPU
// makes.
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

// The sort's order of keys: NaN the largest (and equal to another NaN), as ops::argsort's.
template <typename Key>
LG_HOST_DEVICE LG_INLINE bool key_less(Key a, Key b) {
  return a < b || (a == a && b != b);
}

// Whether two keys are the same value: equal, or both NaN.
template <typename Key>
LG_HOST_DEVICE LG_INLINE bool same_key(Key a, Key b) {
  return a == b || (a != a && b != b);
}

// The first position of row[0, size) holding `value` (same_key), or size.
template <typename Key>
LG_HOST_DEVICE LG_INLINE std::int64_t first_position(const Key* row, std::int64_t size, Key value) {
  for (std::int64_t i = 0; i < size; ++i)
    if (same_key(row[i], value)) return i;
  return size;
}

}  // namespace leangrad::sort_math
