// A copy between two layouts whose contiguous dims differ (x.t().contiguous(), a permute to
// channels-last, copy_ into a transposed view) in tiles (Note [Tiled transposed copy]), or along
// the long dim when the other is narrow (Note [Copies with a narrow side]).
#pragma once

#include <cstddef>

#include <leangrad/kernels/elementwise_geometry.h>

namespace leangrad::kernels::cpu {

// Copies in to out, element for element and bit for bit, over a two-operand geometry (operand 0
// out, 1 in) of elements of element_size bytes (1, 2, 4 or 8), when out has stride 1 along one dim
// and in along another, one of them at least kTransposeMinSide elements long and the other at
// least 2 (Note [Copies with a narrow side] below kTransposeMinSide): returns true. Returns false,
// having written nothing, for any other geometry (the strided loop's to copy).
bool copy_transposed(const ElementwiseGeometry& g, std::size_t element_size, void* out,
                     const void* in);

// The smallest side of the tiles; below it along one dim (but at least 2), the copy with a narrow
// side; below it along both, the strided loop, which is then as fast.
inline constexpr std::int64_t kTransposeMinSide = 8;

}  // namespace leangrad::kernels::cpu
