// Shapes and strides: small helpers shared by tensors, views and kernels.
// Shapes and strides are counted in elements (never bytes); dims are int64_t, negative dims are
// wrapped Python-style by wrap_dim.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

namespace leangrad {

// A tensor's sizes: a std::vector<int64_t> (every vector operation works on it, and it converts
// both ways), made a type of leangrad's own so that `std::cout << t.sizes()` finds the printer
// below by argument-dependent lookup, without `using namespace leangrad` (as LibTorch's
// IntArrayRef does).
struct Shape : std::vector<std::int64_t> {
  using std::vector<std::int64_t>::vector;
  Shape() = default;
  Shape(const std::vector<std::int64_t>& sizes) : std::vector<std::int64_t>(sizes) {}  // NOLINT
  Shape(std::vector<std::int64_t>&& sizes)  // NOLINT: implicit, as the alias it replaces
      : std::vector<std::int64_t>(std::move(sizes)) {}
};
using Strides = std::vector<std::int64_t>;

// The dims a reduction runs over, as LibTorch's IntArrayRef takes them: one dim (`sum(1)`), a
// braced list (`sum({0, 1})`, `sum({})`: every dim) or a vector.
struct DimList : std::vector<std::int64_t> {
  DimList() = default;
  DimList(std::int64_t dim) : std::vector<std::int64_t>{dim} {}  // NOLINT: implicit
  DimList(std::initializer_list<std::int64_t> dims)              // NOLINT
      : std::vector<std::int64_t>(dims) {}
  DimList(const std::vector<std::int64_t>& dims) : std::vector<std::int64_t>(dims) {}  // NOLINT
};

// "[2, 3, 4]"
std::string shape_str(const Shape& shape);
inline std::ostream& operator<<(std::ostream& out, const Shape& shape) {
  return out << shape_str(shape);
}

// Product of the sizes (1 for a 0-d shape). Throws ShapeError naming `what` (the op that was
// given the shape) on negative sizes or overflow.
std::int64_t shape_numel(const Shape& shape, const char* what = "tensor");

// Row-major strides for `shape` (a size-0 dim counts as 1, as PyTorch). Throws ShapeError when a
// stride overflows int64 (a shape like [0, 2^32, 2^32] has no elements but no strides either).
Strides contiguous_strides(const Shape& shape);
// Whether contiguous_strides(shape) fits in int64 (for a reader that reports a shape from a file
// in its own words rather than as a ShapeError). The sizes must be non-negative.
bool contiguous_strides_fit(const Shape& shape);

// Whether `strides` are row-major for `shape` (size-1 dims may have any stride; a shape without
// elements is contiguous whatever its other sizes: their product may not even fit in int64).
bool is_contiguous(const Shape& shape, const Strides& strides);

// Checked size arithmetic. Every shape, stride, offset, element count and byte count computed
// from input (user calls, file headers) goes through these or shape_numel: a size too large is a
// ShapeError naming `what`, never an integer that wrapped around.
std::int64_t checked_mul(std::int64_t a, std::int64_t b, const char* what);
std::int64_t checked_add(std::int64_t a, std::int64_t b, const char* what);
// The bytes of numel elements of element_size bytes: at most kMaxTensorBytes.
std::size_t checked_nbytes(std::int64_t numel, std::size_t element_size, const char* what);
inline constexpr std::int64_t kMaxTensorBytes = std::int64_t{1} << 62;
// The elements a view addresses, checked: numel fits, every element offset is non-negative and
// offset + sum over dims of (size - 1) * stride stays in int64, and so do their byte offsets.
// Returns one past the largest element offset (the storage elements the view needs; 0 when it
// has no element).
std::int64_t checked_extent(const Shape& sizes, const Strides& strides, std::int64_t offset,
                            std::size_t element_size, const char* what);

// Maps dim in [-ndim, ndim) to [0, ndim); `op` names the caller in the error message.
// With ndim == 0, dims -1 and 0 are accepted (as PyTorch does for scalars).
std::int64_t wrap_dim(std::int64_t dim, std::int64_t ndim, const char* op);

// NumPy broadcasting of two shapes; throws ShapeError naming `op` and both shapes.
Shape broadcast_shapes(const Shape& a, const Shape& b, const char* op);
// Whether `from` broadcasts to exactly `to` (an in-place op's operand, a loss's weight): each of
// its dims, aligned from the right, is 1 or equals to's, and it has no more dims.
bool broadcasts_to(const Shape& from, const Shape& to);

}  // namespace leangrad
