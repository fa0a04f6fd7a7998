// Sorting on the CPU (kernels/backend.h): each row's positions ordered by a comparison on (key,
// position), so that equal keys keep their positions' order: std::sort gives a stable sort's
// order, and std::partial_sort its first k (topk) in O(size log k). NaN compares as the largest
// key, as PyTorch's sort and topk take it. Threads split the rows. select_rank partitions a copy
// of each row with std::nth_element (O(size), where a sort is O(size log size)) and finds the
// value's first position; argsort_at selects so too where a row asks for few ranks (Note
// [Stable positions by selection]); searchsorted bisects each value's row by kernels/sort_math.h,
// threads splitting the values.
#include <leangrad/kernels/backend.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <numeric>
#include <type_traits>
#include <utility>
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

// order (size): its first k the positions of row's k smallest keys (descending: largest) in
// order, equal keys in position order.
template <typename Key>
void order_row(std::int64_t* order, const Key* row, std::int64_t size, std::int64_t k,
               bool descending) {
  std::iota(order, order + size, std::int64_t{0});
  const auto before = [row, descending](std::int64_t i, std::int64_t j) {
    return comes_before(row[i], i, row[j], j, descending);
  };
  if (k < size) {
    std::partial_sort(order, order + k, order + size, before);
  } else {
    std::sort(order, order + size, before);
  }
}

template <typename Key>
void argsort_rows(std::int64_t* indices, const Key* keys, std::int64_t rows, std::int64_t size,
                  std::int64_t k, bool descending) {
  // About log2(size) comparisons per element: a task sorts rows of about kElementwiseGrain work.
  const std::int64_t work = size * (1 + static_cast<std::int64_t>(std::log2(size + 1)));
  parallel_for(rows, grain_for(work), [&](std::int64_t begin, std::int64_t end) {
    std::vector<std::int64_t> order(static_cast<std::size_t>(size));
    for (std::int64_t r = begin; r < end; ++r) {
      order_row(order.data(), keys + r * size, size, k, descending);
      std::copy(order.begin(), order.begin() + k, indices + r * k);
    }
  });
}

// Note [Stable positions by selection]
//   argsort_at wants the position a stable ascending sort puts at rank r, not the whole order.
//   std::nth_element on a copy of the row finds the value v of rank r in O(size); the positions
//   holding v are sorted among themselves by position, and `less` keys come before the first of
//   them, so rank r is v's (r - less)-th position: one pass counts `less`, another walks v's
//   positions. Ranks are taken in ascending order, each selection partitioning only what lies
//   after the previous rank (the copy's elements there are all at least the previous value).
//   Each rank costs a selection and two passes, a few comparisons an element; the sort costs
//   log2(size) of them, through the positions, so each is several times dearer and a cache miss
//   on long rows. Measured over 2^24 float32 elements at one thread (quantile's forward, Zen 4):
//   sorting costs 630 ms for rows of 64, 800 for 256, 1100 for 4096, 1480 for 65536, and
//   selecting costs as much at about 5, 15, 32 and 64 distinct ranks. A row selects when its
//   distinct ranks are at most bit_width(size)^2 / 8 (6, 10, 21 and 36 there), else it sorts.

// The position a stable ascending sort of row puts at rank `rank`, v being the value there.
template <typename Key>
std::int64_t stable_position(const Key* row, std::int64_t size, Key v, std::int64_t rank) {
  std::int64_t less = 0;
  for (std::int64_t i = 0; i < size; ++i)
    less += sort_math::key_less(row[i], v) ? 1 : 0;
  std::int64_t occurrence = rank - less;  // in [0, count of v)
  for (std::int64_t i = 0; i < size; ++i) {
    if (sort_math::same_key(row[i], v) && occurrence-- == 0) return i;
  }
  LG_THROW(Error, "argsort_at: rank ", rank, " not found (an internal error)");
}

template <typename Key>
void argsort_at_rows(std::int64_t* positions, const Key* keys, const std::int64_t* ranks,
                     std::int64_t rows, std::int64_t size, std::int64_t per_row) {
  const auto log_size = static_cast<std::int64_t>(std::bit_width(static_cast<std::uint64_t>(size)));
  // The most distinct ranks a row selects; more, it sorts (Note [Stable positions by selection]).
  const std::int64_t most_selected = log_size * log_size / 8;
  const std::int64_t work = size * std::min<std::int64_t>(4 * per_row, 4 * log_size);
  parallel_for(rows, grain_for(work), [&](std::int64_t begin, std::int64_t end) {
    std::vector<Key> buffer;
    std::vector<std::int64_t> order;
    std::vector<std::pair<std::int64_t, std::int64_t>> by_rank;  // (rank, slot)
    for (std::int64_t r = begin; r < end; ++r) {
      const Key* row = keys + r * size;
      const std::int64_t* row_ranks = ranks + r * per_row;
      std::int64_t* row_positions = positions + r * per_row;
      by_rank.clear();
      for (std::int64_t j = 0; j < per_row; ++j)
        by_rank.emplace_back(row_ranks[j], j);
      std::sort(by_rank.begin(), by_rank.end());
      const auto distinct =
          std::unique(by_rank.begin(), by_rank.end(),
                      [](const auto& a, const auto& b) { return a.first == b.first; }) -
          by_rank.begin();
      if (distinct > most_selected) {
        order.resize(static_cast<std::size_t>(size));
        order_row(order.data(), row, size, size, /*descending=*/false);
        for (std::int64_t j = 0; j < per_row; ++j)
          row_positions[j] = order[static_cast<std::size_t>(row_ranks[j])];
        continue;
      }
      buffer.assign(row, row + size);
      auto unselected = buffer.begin();  // the copy before it is partitioned already
      for (std::int64_t j = 0; j < distinct; ++j) {
        const std::int64_t rank = by_rank[static_cast<std::size_t>(j)].first;
        const auto nth = buffer.begin() + rank;
        std::nth_element(unselected, nth, buffer.end(),
                         [](Key a, Key b) { return sort_math::key_less(a, b); });
        unselected = nth + 1;
        by_rank[static_cast<std::size_t>(j)].second = stable_position(row, size, *nth, rank);
      }
      // by_rank's first `distinct` entries now hold (rank, position): look each slot's rank up.
      for (std::int64_t j = 0; j < per_row; ++j) {
        const auto found = std::lower_bound(
            by_rank.begin(), by_rank.begin() + distinct, row_ranks[j],
            [](const auto& entry, std::int64_t rank) { return entry.first < rank; });
        row_positions[j] = found->second;
      }
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

void argsort_at(DType dtype, std::int64_t* positions, const void* keys, const std::int64_t* ranks,
                std::int64_t rows, std::int64_t size, std::int64_t per_row) {
  dispatch_sort_key(dtype, "argsort_at", [&]<typename Key>() {
    argsort_at_rows(positions, static_cast<const Key*>(keys), ranks, rows, size, per_row);
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
