// Creation functions that need no kernel: uninitialised tensors and tensors over or copied from
// user data. All take a shape and TensorOptions (dtype float32 on the CPU by default), as in
// LibTorch. The filling ones (zeros, ones, full, arange, rand, randn) are in kernels/creation.h.
#pragma once

#include <cstdint>
#include <cstring>
#include <functional>
#include <initializer_list>
#include <vector>

#include <leangrad/core/tensor.h>

namespace leangrad {

Tensor empty(const Shape& shape, const TensorOptions& options = {});
Tensor empty_like(const Tensor& t, const TensorOptions& options = {});
// An uninitialised tensor of `size` laid out with `stride` (one per dim, each >= 0) over a new
// storage just large enough, as torch.empty_strided: strides that overlap are allowed (the
// tensor is then not writable elementwise where a dim of size > 1 has stride 0, as any
// expanded tensor).
Tensor empty_strided(const Shape& size, const Strides& stride, const TensorOptions& options = {});
// The options of a *_like function: t's dtype and device with the fields options set taken from
// options (TensorOptions::merge_in), as LibTorch's. An undefined t is an Error naming `op`.
TensorOptions like_options(const char* op, const Tensor& t, const TensorOptions& options);
// empty() for the library's own ops: a negative or too large shape is a ShapeError naming `op`
// (zeros, add, ...), the function the caller called, rather than "empty".
Tensor empty_for(const char* op, const Shape& shape, const TensorOptions& options);

// A tensor over memory the caller owns (not copied, not freed): contiguous strides.
// `deleter`, when given, is called with `data` once the last tensor using it is gone.
Tensor from_blob(void* data, const Shape& shape, const TensorOptions& options = {},
                 std::function<void(void*)> deleter = nullptr);

// A new CPU tensor holding a copy of `values` with dtype_of<T> (float -> float32,
// double -> float64, int64_t -> int64, int32_t -> int32, uint8_t -> uint8, bool -> bool), then
// moved to options.device(); options.dtype() is ignored (use .to(dtype)). An empty shape means
// 1-D of values.size() elements (as torch.tensor([...]); a 0-d scalar is full({}, v));
// otherwise numel must equal values.size().
template <typename T>
Tensor tensor(const std::vector<T>& values, const Shape& shape = {},
              const TensorOptions& options = {});
// tensor({1.f, 2.f, 3.f}): the same from a braced list (1-D; dtype from the elements' type, so
// {1, 2} is int32 and {1.0, 2.0} float64).
template <typename T>
Tensor tensor(std::initializer_list<T> values, const TensorOptions& options = {}) {
  return tensor(std::vector<T>(values), {}, options);
}

}  // namespace leangrad
