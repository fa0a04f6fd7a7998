// A copy between two layouts whose contiguous dims differ (x.t().contiguous(), a permute to
// channels-last, copy_ into a transposed view) in tiles (Note [Tiled transposed copy]).
#pragma once

#include <cstddef>

#include <leangrad/kernels/elementwise_geometry.h>

namespace leangrad::kernels::cpu {

// Copies in to out, element for element and bit for bit, over a two-operand geometry (operand 0
// out, 1 in) of elements of element_size bytes (1, 2, 4 or 8), when out has stride 1 along one dim
// of at least kTransposeMinSide elements and in has stride 1 along another: returns true. Returns
// false, having written nothing, for any other geometry (the strided loop's to copy).
bool copy_transposed(const ElementwiseGeometry& g, std::size_t element_size, void* out,
                     const void* in);

// Below this many elements along either of the two dims, the strided loop is as fast.
inline constexpr std::int64_t kTransposeMinSide = 8;

}  // namespace leangrad::kernels::cpu
