// ElementwiseGeometry: the iteration space of an elementwise op, shared by CPU and CUDA kernels.
// Operand 0 is the output, 1..n the inputs; each has per-dim strides (in elements) over the
// common output shape, 0 for broadcast dims. Adjacent dims that are contiguous for every operand
// are merged, so a plain contiguous op becomes a 1-D loop.
#pragma once

#include <cstdint>
#include <initializer_list>

#include "core/macros.h"
#include "core/tensor.h"

namespace leangrad {

constexpr int kMaxDims = 12;     // the most dims a tensor in an elementwise op may have
constexpr int kMaxOperands = 4;  // output + up to 3 inputs (where(cond, a, b))

struct ElementwiseGeometry {
  int ndim = 0;  // after merging; 0 for a single element
  int num_operands = 0;
  std::int64_t numel = 0;
  std::int64_t sizes[kMaxDims] = {};
  std::int64_t strides[kMaxOperands][kMaxDims] = {};  // elements

  // Element offset of operand `k` for the linear (row-major) output index `i`.
  LG_HOST_DEVICE std::int64_t offset(int k, std::int64_t i) const {
    std::int64_t off = 0;
    for (int d = ndim - 1; d >= 0; --d) {
      const std::int64_t size = sizes[d];
      off += (i % size) * strides[k][d];
      i /= size;
    }
    return off;
  }

  // True when every operand is contiguous over the whole range (one dim of stride 1, or 0-d).
  LG_HOST_DEVICE bool is_contiguous(int k) const {
    return ndim == 0 || (ndim == 1 && strides[k][0] == 1);
  }
};

// Builds the geometry of `out` (already shaped as the broadcast result) and the inputs, each
// broadcast to out's shape. Throws ShapeError naming `op` if an input cannot broadcast to it.
ElementwiseGeometry make_elementwise_geometry(const char* op, const Tensor& out,
                                              std::initializer_list<const Tensor*> inputs);

}  // namespace leangrad
