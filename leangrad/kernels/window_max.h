// The place of the maximum of windows that each plane places for itself (fractional max pooling,
// autograd/fractional_max_pool.h), by a loop on the CPU, the planes split across threads. Other
// devices find the places with a gather and max(dim) (Note [Fractional windows by gather]).
#pragma once

#include <cstdint>
#include <vector>

#include <leangrad/core/tensor.h>

namespace leangrad::kernels {

// x: (planes, plane elements), contiguous on the CPU, floating. Window (o_0, ..., o_{D-1}) of
// plane p holds the elements sum_d starts[d][p out_d + o_d] + taps[k] for every k: starts[d]
// (planes out[d]) the plane-flat offset where each window begins along dim d, taps the offset of
// each of a window's elements from its first. Returns the plane-flat index of each window's first
// maximum (a NaN is a maximum, the first one kept), (planes, prod out) int64.
Tensor window_max_places(const Tensor& x, const std::vector<std::vector<std::int64_t>>& starts,
                         const std::vector<std::int64_t>& out,
                         const std::vector<std::int64_t>& taps);

}  // namespace leangrad::kernels
