// Shape helpers: printing, numel, strides, dim wrapping and broadcasting.
#include <leangrad/core/shape.h>

#include <algorithm>
#include <limits>

#include <leangrad/core/error.h>

namespace leangrad {

std::string shape_str(const Shape& shape) {
  std::string s = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (i > 0) s += ", ";
    s += std::to_string(shape[i]);
  }
  return s + "]";
}

std::int64_t shape_numel(const Shape& shape, const char* what) {
  std::int64_t n = 1;
  for (std::int64_t size : shape) {
    LG_CHECK_SHAPE(size >= 0, what, ": invalid shape ", shape, ": sizes must be non-negative");
    LG_CHECK_SHAPE(size == 0 || n <= std::numeric_limits<std::int64_t>::max() / size, what,
                   ": invalid shape ", shape, ": number of elements overflows int64");
    n *= size;
  }
  return n;
}

Strides contiguous_strides(const Shape& shape) {
  Strides strides(shape.size());
  std::int64_t stride = 1;
  for (std::size_t i = shape.size(); i-- > 0;) {
    strides[i] = stride;
    if (i > 0) stride = checked_mul(stride, std::max<std::int64_t>(shape[i], 1), "strides");
  }
  return strides;
}

bool contiguous_strides_fit(const Shape& shape) {
  std::int64_t stride = 1;
  for (std::size_t i = shape.size(); i-- > 1;) {
    if (__builtin_mul_overflow(stride, std::max<std::int64_t>(shape[i], 1), &stride)) return false;
  }
  return true;
}

std::int64_t checked_mul(std::int64_t a, std::int64_t b, const char* what) {
  std::int64_t out = 0;
  LG_CHECK_SHAPE(!__builtin_mul_overflow(a, b, &out), what, ": ", a, " * ", b,
                 " overflows int64 (a size or stride too large)");
  return out;
}

std::int64_t checked_add(std::int64_t a, std::int64_t b, const char* what) {
  std::int64_t out = 0;
  LG_CHECK_SHAPE(!__builtin_add_overflow(a, b, &out), what, ": ", a, " + ", b,
                 " overflows int64 (a size or offset too large)");
  return out;
}

std::size_t checked_nbytes(std::int64_t numel, std::size_t element_size, const char* what) {
  LG_CHECK_SHAPE(numel >= 0, what, ": negative number of elements ", numel);
  const std::int64_t nbytes = checked_mul(numel, static_cast<std::int64_t>(element_size), what);
  LG_CHECK_SHAPE(nbytes <= kMaxTensorBytes, what, ": ", numel, " elements of ", element_size,
                 " bytes are ", nbytes, " bytes, more than any memory (at most 2^62)");
  return static_cast<std::size_t>(nbytes);
}

bool is_contiguous(const Shape& shape, const Strides& strides) {
  for (const std::int64_t size : shape)
    if (size == 0) return true;
  std::int64_t expected = 1;
  for (std::size_t d = shape.size(); d-- > 0;) {
    if (shape[d] != 1 && strides[d] != expected) return false;
    expected *= shape[d];  // bounded by the element count: no overflow
  }
  return true;
}

std::int64_t checked_extent(const Shape& sizes, const Strides& strides, std::int64_t offset,
                            std::size_t element_size, const char* what) {
  LG_CHECK_SHAPE(sizes.size() == strides.size(), what, ": ", sizes.size(), " sizes but ",
                 strides.size(), " strides");
  LG_CHECK_SHAPE(offset >= 0, what, ": negative storage offset ", offset);
  for (std::size_t d = 0; d < sizes.size(); ++d) {
    LG_CHECK_SHAPE(strides[d] >= 0, what, ": negative stride ", strides[d], " in dim ", d,
                   " (shape ", sizes, ")");
  }
  // A view without elements reads nothing, but its offset in bytes must still be a number
  // (Tensor::data_ptr computes it).
  if (shape_numel(sizes, what) == 0) {
    checked_nbytes(offset, element_size, what);
    return 0;
  }
  std::int64_t last = offset;
  for (std::size_t d = 0; d < sizes.size(); ++d)
    last = checked_add(last, checked_mul(sizes[d] - 1, strides[d], what), what);
  const std::int64_t extent = checked_add(last, 1, what);
  checked_nbytes(extent, element_size, what);
  return extent;
}

std::int64_t wrap_dim(std::int64_t dim, std::int64_t ndim, const char* op) {
  const std::int64_t n = std::max<std::int64_t>(ndim, 1);
  LG_CHECK_SHAPE(dim >= -n && dim < n, op, ": dimension ", dim, " is out of range for a ", ndim,
                 "-d tensor (expected a dim in [", -n, ", ", n - 1, "])");
  return dim < 0 ? dim + n : dim;
}

bool broadcasts_to(const Shape& from, const Shape& to) {
  if (from.size() > to.size()) return false;
  const std::size_t lead = to.size() - from.size();
  for (std::size_t d = 0; d < from.size(); ++d) {
    if (from[d] != 1 && from[d] != to[lead + d]) return false;
  }
  return true;
}

Shape broadcast_shapes(const Shape& a, const Shape& b, const char* op) {
  const std::size_t ndim = std::max(a.size(), b.size());
  Shape out(ndim);
  for (std::size_t i = 0; i < ndim; ++i) {
    const std::int64_t sa = i < ndim - a.size() ? 1 : a[i - (ndim - a.size())];
    const std::int64_t sb = i < ndim - b.size() ? 1 : b[i - (ndim - b.size())];
    LG_CHECK_SHAPE(sa == sb || sa == 1 || sb == 1, op, ": shapes ", a, " and ", b,
                   " cannot be broadcast together (dimension ", i, ": ", sa, " vs ", sb, ")");
    out[i] = sa == 1 ? sb : sa;
  }
  return out;
}

}  // namespace leangrad
