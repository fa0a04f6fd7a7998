// Reductions beside sum, mean, max and var of autograd/functions.h, as torch's: logsumexp, the
// vector norm (and normalize, which divides by it), the product, the running reductions (cumsum,
// cumprod, logcumsumexp, cummax, cummin), and bincount. All differentiate, twice too (Notes
// [cumsum's gradient], [Norm's gradient at 0], [Products' gradients] and [logcumsumexp's
// gradient] in reduction_functions.cpp).
#pragma once

#include <cstdint>
#include <tuple>

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
// The product of all elements, or along dim, as torch.prod: multiplied in order (the 16-bit
// floats in float32, rounded once); integral and bool input give int64 (wrapping around), and the
// product of nothing is 1. The gradient of each element is the product of the others, exact
// where elements are 0 (Note [Products' gradients]).
Tensor prod(const Tensor& input);
Tensor prod(const Tensor& input, std::int64_t dim, bool keepdim = false);
// The running product along dim, as torch.cumprod: dtypes as cumsum's; the gradient is exact
// where elements are 0 (Note [Products' gradients]).
Tensor cumprod(const Tensor& input, std::int64_t dim);
// log(cumsum(exp(input))) along dim without overflow, as torch.logcumsumexp: each step is
// log(exp(a) + exp(b)) taken as max + log1p(exp(min - max)) in float32 (float64 for float64),
// rounded once per output; -inf elements add nothing and NaN propagates. Floating input only.
Tensor logcumsumexp(const Tensor& input, std::int64_t dim);
// (values, indices) of the running maximum / minimum along dim, as torch.cummax and torch.cummin:
// indices int64; among equal values the later index, and once a NaN appears it is the extremum
// (the latest NaN's index). The gradient of each value goes to the element its index names.
std::tuple<Tensor, Tensor> cummax(const Tensor& input, std::int64_t dim);
std::tuple<Tensor, Tensor> cummin(const Tensor& input, std::int64_t dim);

}  // namespace leangrad
