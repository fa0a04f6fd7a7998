// Creation functions: new tensors filled with constants, ranges, random numbers, or user data.
// All take a shape and TensorOptions (dtype float32 on the CPU by default), as in LibTorch.
#pragma once

#include <cstdint>
#include <cstring>
#include <functional>
#include <vector>

#include "core/tensor.h"

namespace leangrad {

Tensor empty(const Shape& shape, const TensorOptions& options = {});
Tensor zeros(const Shape& shape, const TensorOptions& options = {});
Tensor ones(const Shape& shape, const TensorOptions& options = {});
Tensor full(const Shape& shape, double value, const TensorOptions& options = {});
Tensor empty_like(const Tensor& t);
Tensor zeros_like(const Tensor& t);
Tensor ones_like(const Tensor& t);

// [start, end) in steps of `step` (the dtype comes from options: float32 by default; pass kInt64
// for integer ranges). Throws Error for step 0 or a step that moves away from end.
Tensor arange(double end, const TensorOptions& options = {});
Tensor arange(double start, double end, double step = 1.0, const TensorOptions& options = {});

// U[0, 1) and N(0, 1) from the device's default Philox generator (see manual_seed). Floating
// dtypes only. The same seed gives the same numbers on the CPU and on CUDA.
Tensor rand(const Shape& shape, const TensorOptions& options = {});
Tensor randn(const Shape& shape, const TensorOptions& options = {});

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

}  // namespace leangrad
