// for_each_matrix: a batch of matrices split across threads (parallel_for), for the host
// decompositions (kernels/matrix_decompositions.cpp, kernels/ldl.cpp).
#pragma once

#include <algorithm>
#include <cstdint>

#include <leangrad/kernels/cpu/parallel_for.h>

namespace leangrad::kernels::cpu {

// One task per matrix once a matrix holds a few thousand flops; small matrices are grouped.
inline std::int64_t grain_for_matrices(std::int64_t m, std::int64_t n) {
  return std::max<std::int64_t>(1, 4096 / std::max<std::int64_t>(m * n, 1));
}

// fn(b) for each matrix b of the batch, each (m, n) for the grain.
template <typename F>
void for_each_matrix(std::int64_t batch, std::int64_t m, std::int64_t n, const F& fn) {
  parallel_for(batch, grain_for_matrices(m, n), [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t b = begin; b < end; ++b)
      fn(b);
  });
}

}  // namespace leangrad::kernels::cpu
