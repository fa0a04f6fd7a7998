// Reductions beside sum, mean, max and var of autograd/functions.h, as torch's: logsumexp, the
// vector norm (and normalize, which divides by it), the cumulative sum, and bincount. All
// differentiate, twice too (Note [Norm's gradient at 0] and Note [cumsum's gradient] in
// reduction_functions.cpp).
#pragma once

#include <cstdint>

#include <leangrad/core/tensor.h>

namespace leangrad {

// log(sum(exp(input))) over dims (none: all), shifted by the largest element of each slice so
// that nothing overflows: a slice of -inf gives -inf, one holding +inf gives +inf, one holding
// NaN gives NaN, as torch.logsumexp. Its gradient is softmax's. Integral input gives float32.
Tensor logsumexp(const Tensor& input, const DimList& dims, bool keepdim = false);
// The vector p-norm over dims (none: all), as torch.linalg.vector_norm (and torch.norm with a
// number p): (sum |x|^p)^(1/p) for p > 0; p = inf the largest |x|, -inf the smallest, 0 the count
// of non-zero elements (no gradient). Floating input only. The sums run in float64 for float32
// and float64 input and in float32 for float16 and bfloat16 (squares of float16 overflow from
// 256), so a float32 norm overflows only where the result itself does. At a slice of zeros the
// gradient is 0, as PyTorch's (Note [Norm's gradient at 0]).
Tensor norm(const Tensor& input, double p = 2.0, const DimList& dims = {}, bool keepdim = false);
// input divided by its p-norm along dim, the norm taken at least eps, as
// torch.nn.functional.normalize (p 2, dim 1 and eps 1e-12 by default).
Tensor normalize(const Tensor& input, double p = 2.0, std::int64_t dim = 1, double eps = 1e-12);
// How often each value 0, 1, ..., max occurs in input (1-d, int64 or int32, no negative value),
// at least minlength of them, as torch.bincount: int64 counts, or with weights (1-d, input's
// length, floating) the sum of each value's weights in weights' dtype. Reads the largest value
// back from the device (a synchronisation on CUDA, as PyTorch's).
Tensor bincount(const Tensor& input, const Tensor& weights = Tensor(), std::int64_t minlength = 0);
// The running sum along dim: out[..., j, ...] = input[..., 0, ...] + ... + input[..., j, ...],
// added in that order on either device. Floating input keeps its dtype (float16 and bfloat16
// summed in float32, each output rounded once); integral and bool input give int64.
Tensor cumsum(const Tensor& input, std::int64_t dim);

}  // namespace leangrad
