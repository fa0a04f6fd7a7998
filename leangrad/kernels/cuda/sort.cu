// Sorting in CUDA (kernels/backend.h); kernels/cpu/sort.cpp is the reference. The rows are the
// segments of CUB's stable segmented radix sort (cub::DeviceSegmentedSort, from the CUDA
// toolkit), the positions 0 .. size - 1 of each row the values sorted with its keys. A radix sort
// orders floats by their bits: -0 before +0, and a NaN with its sign bit set before -inf, which
// is why ops::argsort hands over keys without -0 and with one positive NaN; then its order is
// the CPU's (NaN the largest, equal keys in position order), element for element. The first k of
// each row are copied out for topk. Rows are sorted in chunks of at most 2^30 elements (CUB
// counts items in int). select_rank sorts the rows so, then one thread per row reads the rank's
// value and finds its first position; argsort_at sorts them and reads the order at the ranks.
// searchsorted: one thread per value, bisecting by kernels/sort_math.h.
#include <cub/device/device_segmented_sort.cuh>

#include <algorithm>
#include <cstdint>

#include <leangrad/core/error.h>
#include <leangrad/kernels/backend.h>
#include <leangrad/kernels/dispatch.h>
#include <leangrad/kernels/sort_math.h>
#include <leangrad/kernels/cuda/cuda_common.cuh>

namespace leangrad::kernels::cuda {

namespace {

constexpr int kThreads = 256;
constexpr std::int64_t kChunkItems = std::int64_t{1} << 30;

// positions[i] = i % size for the rows' elements; offsets[r] = r size for r in [0, rows].
__global__ void positions_kernel(std::int64_t* positions, std::int64_t* offsets, std::int64_t rows,
                                 std::int64_t size) {
  const std::int64_t total = rows * size;
  for (std::int64_t i = global_thread_index(); i < total; i += grid_thread_count())
    positions[i] = i % size;
  for (std::int64_t r = global_thread_index(); r <= rows; r += grid_thread_count())
    offsets[r] = r * size;
}

// indices (rows, k) = the first k of each row of sorted (rows, size).
__global__ void first_k_kernel(std::int64_t* indices, const std::int64_t* sorted, std::int64_t rows,
                               std::int64_t size, std::int64_t k) {
  const std::int64_t total = rows * k;
  for (std::int64_t i = global_thread_index(); i < total; i += grid_thread_count())
    indices[i] = sorted[(i / k) * size + i % k];
}

template <typename Key>
cudaError_t segmented_sort(void* temp, std::size_t& temp_bytes, const Key* keys_in, Key* keys_out,
                           const std::int64_t* positions, std::int64_t* sorted, std::int64_t items,
                           std::int64_t rows, const std::int64_t* offsets, bool descending,
                           cudaStream_t stream) {
  const int n = static_cast<int>(items), segments = static_cast<int>(rows);
  return descending ? cub::DeviceSegmentedSort::StableSortPairsDescending(
                          temp, temp_bytes, keys_in, keys_out, positions, sorted, n, segments,
                          offsets, offsets + 1, stream)
                    : cub::DeviceSegmentedSort::StableSortPairs(temp, temp_bytes, keys_in, keys_out,
                                                                positions, sorted, n, segments,
                                                                offsets, offsets + 1, stream);
}

template <typename Key>
void argsort_rows(std::int64_t* indices, const Key* keys, std::int64_t rows, std::int64_t size,
                  std::int64_t k, bool descending) {
  LG_CHECK(size <= kChunkItems, "argsort: rows of ", size, " elements (at most ", kChunkItems,
           " on CUDA)");
  const cudaStream_t stream = current_stream();
  const std::int64_t chunk_rows = std::max<std::int64_t>(1, kChunkItems / size);
  for (std::int64_t first = 0; first < rows; first += chunk_rows) {
    const std::int64_t n_rows = std::min(chunk_rows, rows - first);
    const std::int64_t items = n_rows * size;
    std::size_t temp_bytes = 0;
    LG_CUDA_CHECK(segmented_sort<Key>(nullptr, temp_bytes, nullptr, nullptr, nullptr, nullptr,
                                      items, n_rows, nullptr, descending, stream));
    Workspace workspace(Workspace::bytes_for<Key>(items) +
                        2 * Workspace::bytes_for<std::int64_t>(items) +
                        Workspace::bytes_for<std::int64_t>(n_rows + 1) +
                        Workspace::bytes_for<unsigned char>(static_cast<std::int64_t>(temp_bytes)));
    Key* keys_out = workspace.take<Key>(items);
    std::int64_t* positions = workspace.take<std::int64_t>(items);
    std::int64_t* sorted = workspace.take<std::int64_t>(items);
    std::int64_t* offsets = workspace.take<std::int64_t>(n_rows + 1);
    void* temp = workspace.take<unsigned char>(static_cast<std::int64_t>(temp_bytes));
    const unsigned int blocks =
        grid_size(positions_kernel, kThreads, ceil_div(std::max(items, n_rows + 1), kThreads));
    positions_kernel<<<blocks, kThreads, 0, stream>>>(positions, offsets, n_rows, size);
    LG_CUDA_CHECK_LAUNCH();
    LG_CUDA_CHECK(segmented_sort<Key>(temp, temp_bytes, keys + first * size, keys_out, positions,
                                      sorted, items, n_rows, offsets, descending, stream));
    const unsigned int copy_blocks =
        grid_size(first_k_kernel, kThreads, ceil_div(n_rows * k, kThreads));
    first_k_kernel<<<copy_blocks, kThreads, 0, stream>>>(indices + first * k, sorted, n_rows, size,
                                                         k);
    LG_CUDA_CHECK_LAUNCH();
  }
}

// positions[r] = the first position of row r holding its element of rank ranks[r], order (rows,
// size) being the rows' ascending orders.
template <typename Key>
__global__ void rank_position_kernel(std::int64_t* positions, const Key* keys,
                                     const std::int64_t* order, const std::int64_t* ranks,
                                     std::int64_t rows, std::int64_t size) {
  for (std::int64_t r = global_thread_index(); r < rows; r += grid_thread_count()) {
    const Key* row = keys + r * size;
    positions[r] = sort_math::first_position(row, size, row[order[r * size + ranks[r]]]);
  }
}

// positions (rows, per_row) = the rows' ascending orders (rows, size) at the ranks (rows, per_row).
__global__ void order_at_kernel(std::int64_t* positions, const std::int64_t* order,
                                const std::int64_t* ranks, std::int64_t rows, std::int64_t size,
                                std::int64_t per_row) {
  const std::int64_t total = rows * per_row;
  for (std::int64_t i = global_thread_index(); i < total; i += grid_thread_count())
    positions[i] = order[(i / per_row) * size + ranks[i]];
}

template <typename Key>
__global__ void searchsorted_kernel(std::int64_t* out, const Key* sorted, const Key* values,
                                    const std::int64_t* sorter, std::int64_t count,
                                    std::int64_t size, std::int64_t per_row, bool right) {
  for (std::int64_t i = global_thread_index(); i < count; i += grid_thread_count()) {
    const std::int64_t r = i / per_row;
    out[i] = sort_math::insertion_point(
        sorted + r * size, sorter != nullptr ? sorter + r * size : nullptr, size, values[i], right);
  }
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
    const std::int64_t items = rows * size;
    Workspace workspace(Workspace::bytes_for<std::int64_t>(items));
    std::int64_t* order = workspace.take<std::int64_t>(items);
    const Key* k = static_cast<const Key*>(keys);
    argsort_rows(order, k, rows, size, size, /*descending=*/false);
    auto* kernel = rank_position_kernel<Key>;
    const unsigned int blocks = grid_size(kernel, kThreads, ceil_div(rows, kThreads));
    kernel<<<blocks, kThreads, 0, current_stream()>>>(positions, k, order, ranks, rows, size);
    LG_CUDA_CHECK_LAUNCH();
  });
}

void argsort_at(DType dtype, std::int64_t* positions, const void* keys, const std::int64_t* ranks,
                std::int64_t rows, std::int64_t size, std::int64_t per_row) {
  dispatch_sort_key(dtype, "argsort_at", [&]<typename Key>() {
    const std::int64_t items = rows * size;
    Workspace workspace(Workspace::bytes_for<std::int64_t>(items));
    std::int64_t* order = workspace.take<std::int64_t>(items);
    argsort_rows(order, static_cast<const Key*>(keys), rows, size, size, /*descending=*/false);
    const unsigned int blocks =
        grid_size(order_at_kernel, kThreads, ceil_div(rows * per_row, kThreads));
    order_at_kernel<<<blocks, kThreads, 0, current_stream()>>>(positions, order, ranks, rows, size,
                                                               per_row);
    LG_CUDA_CHECK_LAUNCH();
  });
}

void searchsorted(DType dtype, std::int64_t* out, const void* sorted, const void* values,
                  const std::int64_t* sorter, std::int64_t rows, std::int64_t size,
                  std::int64_t per_row, bool right) {
  dispatch_sort_key(dtype, "searchsorted", [&]<typename Key>() {
    constexpr int kThreads = 256;
    const std::int64_t count = rows * per_row;
    auto* kernel = searchsorted_kernel<Key>;
    const unsigned int blocks = grid_size(kernel, kThreads, ceil_div(count, kThreads));
    kernel<<<blocks, kThreads, 0, current_stream()>>>(out, static_cast<const Key*>(sorted),
                                                      static_cast<const Key*>(values), sorter,
                                                      count, size, per_row, right);
    LG_CUDA_CHECK_LAUNCH();
  });
}

}  // namespace leangrad::kernels::cuda
