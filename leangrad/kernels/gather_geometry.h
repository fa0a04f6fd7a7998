// GatherGeometry: the iteration space of gather and scatter (kernels/ops.h), shared by the CPU and
// CUDA kernels.
//
// Note [Gather lines]
//   The index tensor is contiguous with `dims` dims of `sizes`; gather's output and scatter's
//   source are contiguous in the same shape (the entries make them so). The other tensor, self
//   (gather's input, scatter's destination), is read or written through its own strides:
//   index element (c_0, ..., c_n-1) with value v stands for self's element at c with c_dim
//   replaced by v. A line is the elements of the index that differ only in c_dim; its elements
//   touch one line of self, and two lines never the same element of self. So the CPU's threads
//   split the lines, and scatter combines in index order within each: deterministic, the same
//   sums and the same last writer on any number of threads. Line l starts at element
//   (l / inner) * sizes[dim] * inner + l % inner and steps by inner, the product of the sizes
//   after dim.
#pragma once

#include <cstdint>

#include <leangrad/core/macros.h>
#include <leangrad/kernels/elementwise_geometry.h>

namespace leangrad {

struct GatherGeometry {
  int dims = 0;                              // at least 1: the entries view 0-d tensors as (1)
  int dim = 0;                               // the dim the index runs along
  std::int64_t sizes[kMaxDims] = {};         // the index's shape
  std::int64_t self_strides[kMaxDims] = {};  // self's strides, in elements
  std::int64_t self_dim_size = 0;            // self.size(dim): the valid indices are [0, this)
  std::int64_t self_extent = 0;              // one past self's largest offset (numel if contiguous)
  std::int64_t inner = 1;                    // the product of sizes[dim + 1 ...]

  LG_HOST_DEVICE std::int64_t line_length() const { return sizes[dim]; }
  // The number of lines: the product of the sizes but dim's.
  LG_HOST_DEVICE std::int64_t line_count() const {
    std::int64_t n = 1;
    for (int d = 0; d < dims; ++d) {
      if (d != dim) n *= sizes[d];
    }
    return n;
  }
  // The first element of line l (Note [Gather lines]).
  LG_HOST_DEVICE std::int64_t line_start(std::int64_t l) const {
    return (l / inner) * sizes[dim] * inner + l % inner;
  }
  // The offset in self of index element k (row-major), without dim's term: the caller adds
  // v * self_strides[dim] for the element's value v.
  LG_HOST_DEVICE std::int64_t self_base(std::int64_t k) const {
    std::int64_t offset = 0;
    for (int d = dims - 1; d >= 0; --d) {
      const std::int64_t c = k % sizes[d];
      k /= sizes[d];
      if (d != dim) offset += c * self_strides[d];
    }
    return offset;
  }
  LG_HOST_DEVICE bool valid(std::int64_t v) const { return v >= 0 && v < self_dim_size; }
};

}  // namespace leangrad
