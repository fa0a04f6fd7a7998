// ElementwiseGeometry: the iteration space of an elementwise op, shared by CPU and CUDA kernels.
// Operand 0 is the output, 1..n the inputs; each has per-dim strides (in elements) over the
// common output shape, 0 for broadcast dims. Adjacent dims that are contiguous for every operand
// are merged, so a plain contiguous op becomes a 1-D loop.
#pragma once

#include <cstdint>
#include <initializer_list>

#include <leangrad/core/macros.h>
#include <leangrad/core/tensor.h>

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

// Division by a fixed 32-bit divisor as a multiply-high, add and shift (Granlund & Montgomery,
// 1994; as PyTorch's IntDivider): the strided CUDA kernels split a linear index into coordinates
// with it when every index fits in 31 bits, where a 64-bit division would cost ~40 instructions.
// Exact for every divisor >= 1 and numerator < 2^31 (tests/kernels/test_elementwise.cpp checks
// it against / and %); LG_HOST_DEVICE, so the CPU test runs the code the GPU runs.
struct FastDivmod {
  std::uint32_t divisor = 1;
  std::uint32_t multiplier = 0;
  std::uint32_t shift = 0;

  FastDivmod() = default;
  LG_HOST_DEVICE explicit FastDivmod(std::uint32_t d) : divisor(d) {
    while ((std::uint64_t{1} << shift) < d)
      ++shift;  // shift = ceil(log2 d)
    multiplier = static_cast<std::uint32_t>(
        ((std::uint64_t{1} << 32) * ((std::uint64_t{1} << shift) - d)) / d + 1);
  }
  // n / divisor, for n < 2^31.
  LG_HOST_DEVICE std::uint32_t div(std::uint32_t n) const {
#if defined(__CUDA_ARCH__)
    const std::uint32_t high = __umulhi(n, multiplier);
#else
    const auto high = static_cast<std::uint32_t>((std::uint64_t{n} * multiplier) >> 32);
#endif
    return (high + n) >> shift;
  }
  // n % divisor, given q = div(n).
  LG_HOST_DEVICE std::uint32_t mod(std::uint32_t n, std::uint32_t q) const {
    return n - q * divisor;
  }
};

// Builds the geometry of `out` (already shaped as the broadcast result) and the inputs, each
// broadcast to out's shape. Throws ShapeError naming `op` if an input cannot broadcast to it.
ElementwiseGeometry make_elementwise_geometry(const char* op, const Tensor& out,
                                              std::initializer_list<const Tensor*> inputs);

// Checks that `out` can be written elementwise by `op` (copy_, fill_, add_, ...): no dim of size
// > 1 has stride 0, so no two elements of an expanded tensor share one memory location.
void check_writable(const char* op, const Tensor& out);

// Whether reading `src` while writing `dst` element by element is safe: src is not in dst's
// memory, or views exactly dst's elements (the same offset, sizes, strides and dtype). Any other
// view of dst's memory (a shifted slice, a transpose) must be copied first (copy_, binary_).
bool safe_to_read_while_writing(const Tensor& dst, const Tensor& src);

}  // namespace leangrad
