// The reductions of autograd/reduction_functions.h.
//
// Note [cumsum's gradient]
//   cumsum is linear: the gradient of out_j = x_0 + ... + x_j with respect to x_i sums g_j over
//   j >= i, the cumulative sum of g taken from the end (ops::scan with reverse). That map's
//   adjoint is cumsum from the start again, so each direction is recorded as an op whose
//   gradient is the other, and second derivatives come for free.
//
// Note [Norm's gradient at 0]
//   d||x||_p / dx = sign(x) |x|^(p-1) / ||x||^(p-1) (x / ||x|| for p = 2), which is 0/0 at a
//   slice of zeros. PyTorch defines it as 0 there (a subgradient: any g with ||g||_q <= 1 is
//   one), and a training loss with a weight decay on ||w|| needs it finite. The backward divides
//   by ||x|| with each 0 replaced by 1: x, and so the numerator, is 0 all over such a slice. For
//   p < 1 the numerator's |x|^(p-1) is infinite at an element 0 even in a slice that is not all
//   zeros; PyTorch gives such an element the gradient 0 (sign(0)), and so does this backward (the
//   power sees 1 there). It is written with the differentiable functions, from x and the saved
//   norm (the op's output, whose own node differentiates it again), so it differentiates again;
//   g / ||x|| is formed at the norm's size, so the backward makes one pass at x's. p = 1 is
//   sum(|x|) (abs's gradient at 0 is 0, as PyTorch's sign), and p = +-inf is amax / amin of |x|,
//   which split the gradient evenly among ties, as PyTorch's.
//
// Note [Products' gradients]
//   d/dx_i of x_0 ... x_{n-1} is the product of the others, which x.prod() / x_i gives only where
//   x_i != 0. prod's backward forms it for every i at once from running products, exact with any
//   number of zeros: (x_0 ... x_{i-1}) (x_{i+1} ... x_{n-1}), a cumprod from the start shifted by
//   one times a cumprod from the end shifted the other way (PyTorch's backward for a dim does the
//   same; without one it divides where nothing is 0).
//   cumprod's: the gradient of out_j = x_0 ... x_j with respect to x_i sums g_j out_j / x_i over
//   j >= i: the cumulative sum from the end of g out, divided by x. That holds up to the first 0
//   of the row, at position k; past it every out_j and every derivative is 0, and at k itself the
//   derivative of out_j (j >= k) is the product of x_0 .. x_j without x_k: the running product of
//   x with x_k replaced by 1, so the gradient there is the cumulative sum from the end of g times
//   that product. The divisions see 1 where they are not used. That form is exact, but its own
//   derivative is not cumprod's second derivative at a 0: past the first 0 it is the constant 0,
//   where the true gradient varies with that 0. So when a graph of the backward is recorded
//   (create_graph), the gradient is formed as PyTorch's double-backward form is, from the
//   products themselves: D[i][j] = prod of x_m over m <= j but m != i for every i at once, an
//   (n, n) block per row (O(n^2) memory along the dim), and the gradient of x_i sums g_j D[i][j]
//   over j >= i. prod's backward is made of cumprods, so it differentiates twice through them.
//
// Note [logcumsumexp's gradient]
//   The gradient of out_j = log(sum_{m <= j} exp(x_m)) with respect to x_i sums g_j exp(x_i -
//   out_j) over j >= i. Summed as written, exp(x_i) and exp(-out_j) overflow for large |x|; in the
//   log domain it is exp(x_i + log(sum_{j >= i} exp(log g_j - out_j))), a logcumsumexp from the
//   end. g's sign splits it in two: the terms of positive g and those of negative g, each a
//   logcumsumexp of log|g| - out (the lowest finite value standing for log 0, where -inf - -inf
//   would be NaN), and the gradient is the difference. PyTorch's backward takes the same route.
#include <leangrad/autograd/reduction_functions.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include <leangrad/autograd/functions.h>
#include <leangrad/autograd/grad_mode.h>
#include <leangrad/autograd/graph.h>
#include <leangrad/autograd/indexing_functions.h>
#include <leangrad/autograd/nn_internal.h>
#include <leangrad/autograd/shape_functions.h>
#include <leangrad/core/error.h>
#include <leangrad/core/profiler.h>
#include <leangrad/kernels/creation.h>
#include <leangrad/kernels/ops.h>

namespace leangrad {

using autograd::BackwardContext;
using autograd::record_op;

namespace {

Tensor cumsum_fn(const Tensor& x, std::int64_t dim, bool reverse) {
  return record_op("cumsum", ops::scan(ScanOp::Sum, x, dim, reverse), {x}, {},
                   [dim, reverse](const BackwardContext& c) -> std::vector<Tensor> {
                     return {cumsum_fn(c.grad, dim, !reverse)};
                   });
}

// cumprod's gradient (Note [Products' gradients]): g and x of x's shape, out = cumprod(x).
Tensor cumprod_backward(const Tensor& g, const Tensor& x, const Tensor& out, std::int64_t dim,
                        bool reverse);

Tensor cumprod_fn(const Tensor& x, std::int64_t dim, bool reverse) {
  const Tensor out = ops::scan(ScanOp::Prod, x, dim, reverse);
  return record_op("cumprod", out, {x}, {x, out},
                   [dim, reverse](const BackwardContext& c) -> std::vector<Tensor> {
                     return {cumprod_backward(c.grad, c.saved[0], c.saved[1], dim, reverse)};
                   });
}

// cumprod's gradient as a sum of products, differentiable again everywhere (Note [Products'
// gradients]): with the dim moved last, D[i][j] = prod of x_m over m <= j but m != i (a
// cumprod of x with x_i replaced by 1, for every i at once: (..., n, n)), and the gradient of x_i
// sums g_j D[i][j] over j >= i.
Tensor cumprod_backward_twice_differentiable(const Tensor& g, const Tensor& x, std::int64_t dim,
                                             bool reverse) {
  const std::int64_t d = wrap_dim(dim, x.dim(), "cumprod");
  Tensor xl = movedim(x, d, -1);
  Tensor gl = movedim(g, d, -1);
  if (reverse) {
    xl = flip(xl, {-1});
    gl = flip(gl, {-1});
  }
  const std::int64_t n = xl.size(-1);
  Shape square = xl.shape();
  square.push_back(n);
  Tensor diagonal;
  Tensor below;  // j < i
  {
    NoGradGuard no_grad;
    const TensorOptions options = TensorOptions(kInt64).device(x.device());
    const Tensor i = unsqueeze(arange(static_cast<double>(n), options), 1);
    const Tensor j = unsqueeze(arange(static_cast<double>(n), options), 0);
    diagonal = eq(i, j);
    below = lt(j, i);
  }
  const Tensor others =
      cumprod_fn(masked_fill(expand(unsqueeze(xl, -2), square), diagonal, 1.0), -1, false);
  Tensor grad = sum(masked_fill(mul(unsqueeze(gl, -2), others), below, 0.0), {-1});
  if (reverse) grad = flip(grad, {-1});
  return movedim(grad, -1, d);
}

Tensor cumprod_backward(const Tensor& g, const Tensor& x, const Tensor& out, std::int64_t dim,
                        bool reverse) {
  if (GradMode::is_enabled() && x.dim() > 0) {
    // A graph of the backward is recorded (create_graph): the O(n) form below is exact but its
    // derivative is not cumprod's second derivative where x holds 0 (the gradient past a row's
    // first 0 is set to 0, which does not vary with that 0 as the true one does).
    return cumprod_backward_twice_differentiable(g, x, dim, reverse);
  }
  Tensor before_zero;  // no 0 at or before this position (in the scan's direction)
  Tensor first_zero;   // the row's first 0
  {
    NoGradGuard no_grad;
    const Tensor zero = eq(x, 0.0);
    const Tensor zeros_so_far = ops::scan(ScanOp::Sum, zero, dim, reverse);
    before_zero = eq(zeros_so_far, 0.0);
    first_zero = logical_and(zero, eq(zeros_so_far, 1.0));
  }
  const Tensor plain =
      div(cumsum_fn(mul(g, out), dim, !reverse), masked_fill(x, logical_not(before_zero), 1.0));
  const Tensor without_zero = cumprod_fn(masked_fill(x, first_zero, 1.0), dim, reverse);
  const Tensor at_zero = cumsum_fn(mul(g, without_zero), dim, !reverse);
  return where(before_zero, plain, masked_fill(at_zero, logical_not(first_zero), 0.0));
}

// For each element of x, the product of the others along dim (Note [Products' gradients]).
Tensor product_of_others(const Tensor& x, std::int64_t dim) {
  const std::int64_t n = x.size(dim);
  if (n == 0) return x;
  const Tensor one = ones_like(narrow(x, dim, 0, 1));
  const Tensor before = cat({one, narrow(cumprod_fn(x, dim, false), dim, 0, n - 1)}, dim);
  const Tensor after = cat({narrow(cumprod_fn(x, dim, true), dim, 1, n - 1), one}, dim);
  return mul(before, after);
}

Tensor logcumsumexp_fn(const Tensor& x, std::int64_t dim, bool reverse) {
  const Tensor result = ops::scan(ScanOp::LogSumExp, x, dim, reverse);
  return record_op("logcumsumexp", result, {x}, {x, result},
                   [dim, reverse](const BackwardContext& c) -> std::vector<Tensor> {
                     // Note [logcumsumexp's gradient]
                     const Tensor& x_saved = c.saved[0];
                     const Tensor& out = c.saved[1];
                     const Tensor& g = c.grad;
                     const double log_zero = dtype_lowest(g.dtype());
                     const Tensor log_abs = log(abs(g));
                     const auto part = [&](const Tensor& keep) {
                       const Tensor log_g = masked_fill(log_abs, logical_not(keep), log_zero);
                       return exp(add(logcumsumexp_fn(sub(log_g, out), dim, !reverse), x_saved));
                     };
                     return {sub(part(gt(g, 0.0)), part(lt(g, 0.0)))};
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
  return record_op(
      "norm", n, {x}, {x, n}, [p, dims](const BackwardContext& c) -> std::vector<Tensor> {
        const Tensor& x_saved = c.saved[0];
        const Shape shape = kept_shape(x_saved, dims);
        const Tensor n_kept = reshape(c.saved[1], shape);
        const Tensor g = reshape(c.grad, shape);
        // Note [Norm's gradient at 0]: 1 where the norm is 0.
        const Tensor safe = where(eq(n_kept, 0.0), ones_like(n_kept), n_kept);
        // The factors of the norm's shape first: one pass over x's size.
        if (p == 2.0) return {mul(x_saved, div(g, safe))};
        // For p < 1, |x|^(p-1) is infinite at an element 0, whose gradient is 0
        // (sign(0)): the power sees 1 there.
        const Tensor magnitude =
            p < 1.0 ? where(eq(x_saved, 0.0), ones_like(x_saved), abs(x_saved)) : abs(x_saved);
        const Tensor num = mul(sign(x_saved), pow(magnitude, p - 1));
        return {mul(num, div(g, pow(safe, p - 1)))};
      });
}

}  // namespace

Tensor logsumexp(const Tensor& input, const DimList& dims, bool keepdim) {
  LG_PROFILE_OP(input);
  LG_CHECK(input.defined(), "logsumexp: expected a defined input, got an undefined Tensor()");
  for (const std::int64_t d : dims)
    wrap_dim(d, input.dim(), "logsumexp");
  const Tensor x = autograd::floating_or_float32(input);
  // The shift: each slice's largest element, 0 where that is infinite (exp(x - m) would be
  // NaN for -inf - -inf and inf - inf). It takes no gradient: the result does not depend on it.
  // An empty input has no largest element: 0, so that each empty slice gives log(0) = -inf, as
  // torch's.
  Tensor m;
  {
    NoGradGuard no_grad;
    if (x.numel() == 0) {
      m = zeros(sum(x, dims, /*keepdim=*/true).shape(), x.options());
    } else {
      m = amax(x, dims, /*keepdim=*/true);
      m = where(eq(abs(m), std::numeric_limits<double>::infinity()), zeros_like(m), m);
    }
  }
  const Tensor s = log(sum(exp(sub(x, m)), dims, keepdim));
  return add(s, reshape(m, s.shape()));
}

namespace {

// norm's arguments, checked in the name of the op the user called (norm, normalize).
void check_norm_arguments(const char* op, const Tensor& input, double p, const DimList& dims) {
  LG_CHECK(input.defined(), op, ": expected a defined input, got an undefined Tensor()");
  LG_CHECK_DTYPE(is_floating(input.dtype()), op,
                 ": expected a floating input (float32, float64, float16, bfloat16), got ",
                 input.dtype());
  LG_CHECK(!std::isnan(p) && (p >= 0 || std::isinf(p)), op, ": expected p >= 0 or -inf, got ", p);
  for (const std::int64_t d : dims)
    wrap_dim(d, input.dim(), op);
}

}  // namespace

Tensor norm(const Tensor& input, double p, const DimList& dims, bool keepdim) {
  LG_PROFILE_OP(input);
  check_norm_arguments("norm", input, p, dims);
  if (std::isinf(p))
    return p > 0 ? amax(abs(input), dims, keepdim) : amin(abs(input), dims, keepdim);
  if (p == 0) {
    // A count, piecewise constant: no gradient flows, but the result is in the graph, as torch's
    // (backward through it runs, and leaves the input's grad undefined, as torch's None).
    const Tensor count = sum(ne(input, 0.0), dims, keepdim).to(input.dtype());
    return record_op("norm", count, {input}, {},
                     [](const BackwardContext&) { return std::vector<Tensor>{Tensor()}; });
  }
  if (p == 1) {
    return sum(abs(input.to(norm_accumulation_dtype(input.dtype()))), dims, keepdim)
        .to(input.dtype());
  }
  return power_norm_fn(input, p, dims, keepdim);
}

Tensor normalize(const Tensor& input, double p, std::int64_t dim, double eps) {
  LG_PROFILE_OP(input);
  check_norm_arguments("normalize", input, p, {dim});
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

Tensor prod(const Tensor& input) {
  LG_PROFILE_OP(input);
  const Tensor out = ops::reduce(ReduceOp::Prod, input, {}, /*keepdim=*/false);
  return record_op("prod", out, {input}, {input}, [](const BackwardContext& c) {
    const Tensor& x = c.saved[0];
    return std::vector<Tensor>{
        mul(c.grad, reshape(product_of_others(reshape(x, {-1}), 0), x.shape()))};
  });
}

Tensor prod(const Tensor& input, std::int64_t dim, bool keepdim) {
  LG_PROFILE_OP(input);
  const Tensor out = ops::reduce(ReduceOp::Prod, input, {dim}, keepdim);
  if (input.dim() == 0) {
    return record_op("prod", out, {input}, {},
                     [](const BackwardContext& c) { return std::vector<Tensor>{c.grad}; });
  }
  const std::int64_t d = wrap_dim(dim, input.dim(), "prod");
  return record_op("prod", out, {input}, {input}, [d, keepdim](const BackwardContext& c) {
    const Tensor& x = c.saved[0];
    const Tensor g = keepdim ? c.grad : unsqueeze(c.grad, d);
    return std::vector<Tensor>{mul(g, product_of_others(x, d))};
  });
}

Tensor cumprod(const Tensor& input, std::int64_t dim) {
  LG_PROFILE_OP(input);
  return cumprod_fn(input, dim, /*reverse=*/false);
}

Tensor logcumsumexp(const Tensor& input, std::int64_t dim) {
  LG_PROFILE_OP(input);
  return logcumsumexp_fn(input, dim, /*reverse=*/false);
}

namespace {

std::tuple<Tensor, Tensor> cumulative_extremum(const char* name, const Tensor& input,
                                               std::int64_t dim, bool is_max) {
  auto [values, indices] = ops::scan_extremum(input, dim, is_max);
  if (!autograd::any_requires_grad({&input})) return {values, indices};
  if (input.dim() == 0) {
    return {record_op(name, values, {input}, {},
                      [](const BackwardContext& c) { return std::vector<Tensor>{c.grad}; }),
            indices};
  }
  const std::int64_t d = wrap_dim(dim, input.dim(), name);
  // The gradient of each value goes to the element its index names (several values may name
  // one element: their gradients add up).
  values = record_op(name, values, {input}, {indices}, [d](const BackwardContext& c) {
    return std::vector<Tensor>{
        scatter_add(zeros(c.shape(0), c.grad.options()), d, c.saved[0], c.grad)};
  });
  return {values, indices};
}

}  // namespace

std::tuple<Tensor, Tensor> cummax(const Tensor& input, std::int64_t dim) {
  LG_PROFILE_OP(input);
  return cumulative_extremum("cummax", input, dim, /*is_max=*/true);
}

std::tuple<Tensor, Tensor> cummin(const Tensor& input, std::int64_t dim) {
  LG_PROFILE_OP(input);
  return cumulative_extremum("cummin", input, dim, /*is_max=*/false);
}

}  // namespace leangrad
