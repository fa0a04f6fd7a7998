// Shapes and strides: small helpers shared by tensors, views and kernels.
// Shapes and strides are counted in elements (never bytes); dims are int64_t, negative dims are
// wrapped Python-style by wrap_dim.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

namespace leangrad {

using Shape = std::vector<std::int64_t>;
using Strides = std::vector<std::int64_t>;

// "[2, 3, 4]"
std::string shape_str(const Shape& shape);
inline std::ostream& operator<<(std::ostream& out, const Shape& shape) {
  return out << shape_str(shape);
}

// Product of the sizes (1 for a 0-d shape). Throws ShapeError on negative sizes or overflow.
std::int64_t shape_numel(const Shape& shape);

// Row-major strides for `shape`.
Strides contiguous_strides(const Shape& shape);

// Maps dim in [-ndim, ndim) to [0, ndim); `op` names the caller in the error message.
// With ndim == 0, dims -1 and 0 are accepted (as PyTorch does for scalars).
std::int64_t wrap_dim(std::int64_t dim, std::int64_t ndim, const char* op);

// NumPy broadcasting of two shapes; throws ShapeError naming `op` and both shapes.
Shape broadcast_shapes(const Shape& a, const Shape& b, const char* op);

}  // namespace leangrad
