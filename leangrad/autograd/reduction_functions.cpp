// The reductions of autograd/reduction_functions.h.
//
// Note [cumsum's gradient]
//   cumsum is linear: the gradient of out_j = x_0 + ... + x_j with respect to x_i sums g_j over
//   j >= i, the cumulative sum of g taken from the end (ops::cumsum with reverse). That map's
//   adjoint is cumsum from the start again, so each direction is recorded as an op whose
//   gradient is the other, and second derivatives come for free.
//
// Note [Norm's gradient at 0]
//   d||x||_p / dx = sign(x) |x|^(p-1) / ||x||^(p-1) (x / ||x|| for p = 2), which is 0/0 at a
//   slice of zeros. PyTorch defines it as 0 there (a subgradient: any g with ||g||_q <= 1 is
//   one), and a training loss with a weight decay on ||w|| needs it finite. The backward divides
//   by ||x|| with each 0 replaced by 1: x, and so the numerator, is 0 all over such a slice. It
//   is written with the differentiable functions, from x and the saved norm (the op's output,
//   whose own node differentiates it again), so it differentiates again; g / ||x|| is formed at
//   the norm's size, so the backward makes one pass at x's. p = 1 is sum(|x|) (abs's gradient at 0
//   is 0, as PyTorch's sign), and p = +-inf is amax / amin of |x|, which split the gradient evenly
//   among ties, as PyTorch's.
#include <leangrad/autograd/reduction_functions.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include <leangrad/autograd/functions.h>
#include <leangrad/autograd/grad_mode.h>
#include <leangrad/autograd/graph.h>
#include <leangrad/autograd/indexing_functions.h>
#include <leangrad/core/error.h>
#include <leangrad/core/profiler.h>
#include <leangrad/kernels/creation.h>
#include <leangrad/kernels/ops.h>

namespace leangrad {

using autograd::BackwardContext;
using autograd::record_op;

namespace {

Tensor cumsum_fn(const Tensor& x, std::int64_t dim, bool reverse) {
  return record_op("cumsum", ops::cumsum(x, dim, reverse), {x}, {},
                   [dim, reverse](const BackwardContext& c) -> std::vector<Tensor> {
                     return {cumsum_fn(c.grad, dim, !reverse)};
                   });
}

// The dtype a norm's sum runs in (the docstring in reduction_functions.h).
DType norm_accumulation_dtype(DType dtype) {
  return dtype == kFloat16 || dtype == kBFloat16 ? kFloat32 : kFloat64;
}

// (sum |x|^p)^(1/p) over dims for a finite p > 0 but 1, without a node of its own: the caller
// records one (and the backward calls this again, so that it differentiates).
Tensor power_norm(const Tensor& x, double p, const DimList& dims, bool keepdim) {
  const Tensor wide = x.to(norm_accumulation_dtype(x.dtype()));
  const Tensor n = p == 2.0 ? sqrt(sum(square(wide), dims, keepdim))
                            : pow(sum(pow(abs(wide), p), dims, keepdim), 1.0 / p);
  return n.to(x.dtype());
}

// x's shape with each of dims (all, when none is named) of size 1: the norm's with keepdim.
Shape kept_shape(const Tensor& x, const DimList& dims) {
  Shape shape = x.shape();
  if (dims.empty()) {
    std::fill(shape.begin(), shape.end(), std::int64_t{1});
  } else {
    for (const std::int64_t d : dims)
      shape[static_cast<std::size_t>(wrap_dim(d, x.dim(), "norm"))] = 1;
  }
  return shape;
}

Tensor power_norm_fn(const Tensor& x, double p, const DimList& dims, bool keepdim) {
  Tensor n;
  {
    NoGradGuard no_grad;
    n = power_norm(x, p, dims, keepdim);
  }
  return record_op("norm", n, {x}, {x, n},
                   [p, dims](const BackwardContext& c) -> std::vector<Tensor> {
                     const Tensor& x_saved = c.saved[0];
                     const Shape shape = kept_shape(x_saved, dims);
                     const Tensor n_kept = reshape(c.saved[1], shape);
                     const Tensor g = reshape(c.grad, shape);
                     // Note [Norm's gradient at 0]: 1 where the norm is 0.
                     const Tensor safe = where(eq(n_kept, 0.0), ones_like(n_kept), n_kept);
                     // The factors of the norm's shape first: one pass over x's size.
                     if (p == 2.0) return {mul(x_saved, div(g, safe))};
                     const Tensor num = mul(sign(x_saved), pow(abs(x_saved), p - 1));
                     return {mul(num, div(g, pow(safe, p - 1)))};
                   });
}

}  // namespace

Tensor logsumexp(const Tensor& input, const DimList& dims, bool keepdim) {
  LG_PROFILE_OP(input);
  LG_CHECK(input.defined(), "logsumexp: expected a defined input, got an undefined Tensor()");
  for (const std::int64_t d : dims)
    wrap_dim(d, input.dim(), "logsumexp");
  const Tensor x = is_floating(input.dtype()) ? input : input.to(kFloat32);
  // The shift: each slice's largest element, 0 where that is infinite (exp(x - m) would be
  // NaN for -inf - -inf and inf - inf). It takes no gradient: the result does not depend on it.
  Tensor m;
  {
    NoGradGuard no_grad;
    m = amax(x, dims, /*keepdim=*/true);
    m = where(eq(abs(m), std::numeric_limits<double>::infinity()), zeros_like(m), m);
  }
  const Tensor s = log(sum(exp(sub(x, m)), dims, keepdim));
  return add(s, reshape(m, s.shape()));
}

Tensor norm(const Tensor& input, double p, const DimList& dims, bool keepdim) {
  LG_PROFILE_OP(input);
  const char* op = "norm";
  LG_CHECK(input.defined(), op, ": expected a defined input, got an undefined Tensor()");
  LG_CHECK_DTYPE(is_floating(input.dtype()), op,
                 ": expected a floating input (float32, float64, float16, bfloat16), got ",
                 input.dtype());
  LG_CHECK(!std::isnan(p) && (p >= 0 || std::isinf(p)), op, ": expected p >= 0 or -inf, got ", p);
  for (const std::int64_t d : dims)
    wrap_dim(d, input.dim(), op);
  if (std::isinf(p))
    return p > 0 ? amax(abs(input), dims, keepdim) : amin(abs(input), dims, keepdim);
  if (p == 0) return sum(ne(input, 0.0), dims, keepdim).to(input.dtype());
  if (p == 1) {
    return sum(abs(input.to(norm_accumulation_dtype(input.dtype()))), dims, keepdim)
        .to(input.dtype());
  }
  return power_norm_fn(input, p, dims, keepdim);
}

Tensor normalize(const Tensor& input, double p, std::int64_t dim, double eps) {
  LG_PROFILE_OP(input);
  return div(input, clamp_min(norm(input, p, dim, /*keepdim=*/true), eps));
}

Tensor bincount(const Tensor& input, const Tensor& weights, std::int64_t minlength) {
  LG_PROFILE_OP(input, weights);
  const char* op = "bincount";
  LG_CHECK(input.defined(), op, ": expected a defined input, got an undefined Tensor()");
  LG_CHECK_SHAPE(input.dim() == 1, op, ": expected a 1-d input, got shape ", input.shape());
  LG_CHECK_DTYPE(input.dtype() == kInt64 || input.dtype() == kInt32, op,
                 ": expected an int64 or int32 input, got ", input.dtype());
  LG_CHECK(minlength >= 0, op, ": expected minlength >= 0, got ", minlength);
  if (weights.defined()) {
    LG_CHECK_SHAPE(weights.shape() == input.shape(), op, ": expected weights of the input's shape ",
                   input.shape(), ", got ", weights.shape());
    LG_CHECK_DTYPE(is_floating(weights.dtype()), op, ": expected floating weights, got ",
                   weights.dtype());
    LG_CHECK_DEVICE(weights.device() == input.device(), op, ": the weights are on ",
                    weights.device(), ", the input on ", input.device());
  }
  const Tensor values = input.to(kInt64);
  std::int64_t length = minlength;
  if (values.numel() > 0) {
    NoGradGuard no_grad;
    const std::int64_t lowest = amin(values, {0}).item<std::int64_t>();
    LG_CHECK(lowest >= 0, op, ": expected no negative value, got ", lowest);
    length = std::max(length, amax(values, {0}).item<std::int64_t>() + 1);
  }
  const TensorOptions options =
      TensorOptions(weights.defined() ? weights.dtype() : kInt64).device(input.device());
  const Tensor counted = weights.defined() ? weights : ones(input.shape(), options);
  return scatter_add(zeros({length}, options), 0, values, counted);
}

Tensor cumsum(const Tensor& input, std::int64_t dim) {
  LG_PROFILE_OP(input);
  return cumsum_fn(input, dim, /*reverse=*/false);
}

}  // namespace leangrad
