// Sorting on the CPU (kernels/backend.h): each row's positions ordered by a comparison on (key,
// position), so that equal keys keep their positions' order: std::sort gives a stable sort's
// order, and std::partial_sort its first k (topk) in O(size log k). NaN compares as the largest
// key, as PyTorch's sort and topk take it. Threads split the rows. select_rank partitions a copy
// of each row with std::nth_element (O(size), where a sort is O(size log size)) and finds the
// value's first position; searchsorted bisects each value's row by kernels/sort_math.h, threads
// splitting the values.
#include <leangrad/kernels/backend.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <type_traits>
#include <vector>

#include <leangrad/kernels/cpu/parallel_for.h>
#include <leangrad/kernels/dispatch.h>
#include <leangrad/kernels/sort_math.h>

namespace leangrad::kernels::cpu {

namespace {

// Whether key a (at position i) comes before key b (at position j), ascending or descending,
// NaN the largest key, ties in position order.
template <typename Key>
bool comes_before(Key a, std::int64_t i, Key b, std::int64_t j, bool descending) {
  if constexpr (std::is_floating_point_v<Key>) {
    const bool a_nan = std::isnan(a), b_nan = std::isnan(b);
    if (a_nan || b_nan) {
      if (a_nan && b_nan) return i < j;
      return descending ? a_nan : b_nan;
    }
  }
  if (a != b) return descending ? b < a : a < b;
  return i < j;
}

template <typename Key>
void argsort_rows(std::int64_t* indices, const Key* keys, std::int64_t rows, std::int64_t size,
                  std::int64_t k, bool descending) {
  // About log2(size) comparisons per element: a task sorts rows of about kElementwiseGrain work.
  const std::int64_t work = size * (1 + static_cast<std::int64_t>(std::log2(size + 1)));
  parallel_for(rows, grain_for(work), [&](std::int64_t begin, std::int64_t end) {
    std::vector<std::int64_t> order(static_cast<std::size_t>(size));
    for (std::int64_t r = begin; r < end; ++r) {
      const Key* row = keys + r * size;
      std::iota(order.begin(), order.end(), std::int64_t{0});
      const auto before = [row, descending](std::int64_t i, std::int64_t j) {
        return comes_before(row[i], i, row[j], j, descending);
      };
      if (k < size) {
        std::partial_sort(order.begin(), order.begin() + k, order.end(), before);
      } else {
        std::sort(order.begin(), order.end(), before);
      }
      std::copy(order.begin(), order.begin() + k, indices + r * k);
    }
  });
}

}  // namespace

void argsort(DType dtype, std::int64_t* indices, const void* keys, std::int64_t rows,
             std::int64_t size, std::int64_t k, bool descending) {
  dispatch_sort_key(dtype, "argsort", [&]<typename Key>() {
    argsort_rows(indices, static_cast<const Key*>(keys), rows, size, k, descending);
  });
}

void select_rank(DType dtype, std::int64_t* positions, const void* keys, const std::int64_t* ranks,
                 std::int64_t rows, std::int64_t size) {
  dispatch_sort_key(dtype, "select_rank", [&]<typename Key>() {
    const Key* k = static_cast<const Key*>(keys);
    // A selection is a few passes over the row.
    parallel_for(rows, grain_for(4 * size), [&](std::int64_t begin, std::int64_t end) {
      std::vector<Key> buffer(static_cast<std::size_t>(size));
      for (std::int64_t r = begin; r < end; ++r) {
        const Key* row = k + r * size;
        std::copy(row, row + size, buffer.begin());
        const auto nth = buffer.begin() + ranks[r];
        std::nth_element(buffer.begin(), nth, buffer.end(),
                         [](Key a, Key b) { return sort_math::key_less(a, b); });
        positions[r] = sort_math::first_position(row, size, *nth);
      }
    });
  });
}

void searchsorted(DType dtype, std::int64_t* out, const void* sorted, const void* values,
                  const std::int64_t* sorter, std::int64_t rows, std::int64_t size,
                  std::int64_t per_row, bool right) {
  dispatch_sort_key(dtype, "searchsorted", [&]<typename Key>() {
    const Key* s = static_cast<const Key*>(sorted);
    const Key* v = static_cast<const Key*>(values);
    // A bisection is about log2(size) loads.
    parallel_for(rows * per_row, grain_for(64), [&](std::int64_t begin, std::int64_t end) {
      for (std::int64_t i = begin; i < end; ++i) {
        const std::int64_t r = i / per_row;
        out[i] = sort_math::insertion_point(
            s + r * size, sorter != nullptr ? sorter + r * size : nullptr, size, v[i], right);
      }
    });
  });
}

}  // namespace leangrad::kernels::cpu
