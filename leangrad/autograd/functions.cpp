// The public functions, each with its backward beside its forward.
// A function computes its result with the kernel entry of kernels/ops.h, then record_op attaches
// a graph node when grad mode is on and an input requires grad. Backward formulas are written
// with these same public functions (they run with grad mode off). Broadcasting is undone by
// sum_to; dtypes and devices of gradients are restored by the node (autograd/graph.cpp).
// Each opens with LG_PROFILE_OP (core/profiler.h): a span named after it while a profiler records,
// one branch otherwise.
#include <leangrad/autograd/functions.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>

#include <leangrad/autograd/autocast.h>
#include <leangrad/autograd/grad_mode.h>
#include <leangrad/autograd/graph.h>
#include <leangrad/autograd/indexing_functions.h>
#include <leangrad/autograd/nn_internal.h>
#include <leangrad/core/profiler.h>
#include <leangrad/core/views.h>
#include <leangrad/kernels/creation.h>
#include <leangrad/kernels/dispatch.h>
#include <leangrad/kernels/elementwise_math.h>
#include <leangrad/kernels/ops.h>

namespace leangrad {

using autograd::BackwardContext;
using autograd::in_working_precision;
using autograd::record_op;
using autograd::sum_to;

Tensor autograd::sum_to(const Tensor& g, const Shape& shape) {
  if (g.shape() == shape) return g;
  const std::int64_t lead = g.dim() - static_cast<std::int64_t>(shape.size());
  std::vector<std::int64_t> dims;
  for (std::int64_t d = 0; d < g.dim(); ++d) {
    if (d < lead || (shape[d - lead] == 1 && g.shape()[d] != 1)) dims.push_back(d);
  }
  Tensor summed = dims.empty() ? g : sum(g, dims, /*keepdim=*/true);
  return summed.reshape(shape);
}

namespace {

Tensor zero_like_scalar(const Tensor& g) {
  return zeros({}, g.options());
}

// The sorted, wrapped dims the reduction `op` runs over (empty list = every dim); a dim out of
// range or named twice is an error naming op.
std::vector<std::int64_t> reduction_dims(const char* op, const Tensor& a,
                                         const std::vector<std::int64_t>& dims) {
  std::vector<std::int64_t> out;
  if (dims.empty()) {
    for (std::int64_t d = 0; d < a.dim(); ++d)
      out.push_back(d);
    return out;
  }
  for (std::int64_t d : dims) {
    const std::int64_t wrapped = wrap_dim(d, a.dim(), op);
    // A 0-d tensor accepts dim 0 or -1 (as PyTorch does) but has no dim to reduce.
    if (a.dim() > 0) out.push_back(wrapped);
  }
  std::sort(out.begin(), out.end());
  const auto twice = std::adjacent_find(out.begin(), out.end());
  LG_CHECK_SHAPE(twice == out.end(), op, ": dim ", twice == out.end() ? 0 : *twice,
                 " appears more than once in dims ", shape_str(dims));
  return out;
}

// `shape` with the reduced dims kept as size 1.
Shape keepdim_shape(const Shape& shape, const std::vector<std::int64_t>& dims) {
  Shape out = shape;
  for (std::int64_t d : dims)
    out[d] = 1;
  return out;
}

// The gradient of a reduction's output, reshaped so it broadcasts against the input.
Tensor unreduce(const Tensor& g, const Shape& input_shape, const std::vector<std::int64_t>& dims) {
  return g.reshape(keepdim_shape(input_shape, dims));
}

// maximum / minimum, as PyTorch's formula: an input gets no gradient where the other one was
// strictly picked, half of it at a tie, and all of it otherwise. So a NaN on either side (which
// compares unequal and neither above nor below) sends the whole gradient to both inputs, as in
// PyTorch 1.13. saved = {a, b}.
std::vector<Tensor> extremum_backward(const BackwardContext& c, bool is_max) {
  const Tensor& x = c.saved[0];
  const Tensor& y = c.saved[1];
  const Tensor zero = zero_like_scalar(c.grad);
  const Tensor half = c.grad * 0.5;
  const Tensor tie = eq(x, y);
  const Tensor x_lost = is_max ? lt(x, y) : gt(x, y);
  const Tensor y_lost = is_max ? lt(y, x) : gt(y, x);
  return {sum_to(where(tie, half, where(x_lost, zero, c.grad)), c.shape(0)),
          sum_to(where(tie, half, where(y_lost, zero, c.grad)), c.shape(1))};
}

// Where a max reduction's gradient goes when the maximum is NaN. Elsewhere both rules split it
// evenly among the elements equal to the maximum (ties), as PyTorch 1.13 does.
enum class NanMaximum {
  // torch.max() over everything (evenly_distribute_backward): the NaNs are the maximum, and the
  // gradient is split evenly among them.
  SplitAmongNans,
  // torch.amax / torch.amin (scale_grad_by_count): no element equals a NaN maximum, so the count
  // of maxima is 0 and (grad / 0) * 0 makes the gradient of every element of that slice NaN.
  NanGradients,
};

// The gradient of a max reduction over `reduced` (sorted dims). saved = {a, out}.
std::vector<Tensor> max_reduction_backward(const BackwardContext& c,
                                           const std::vector<std::int64_t>& reduced,
                                           NanMaximum nan_rule) {
  const Tensor& x = c.saved[0];
  const Tensor m = unreduce(c.saved[1], c.shape(0), reduced);
  const Tensor g = unreduce(c.grad, c.shape(0), reduced);
  if (nan_rule == NanMaximum::SplitAmongNans) {
    const Tensor mask = where(ne(m, m), ne(x, x), eq(x, m));
    const Tensor count = sum(mask.to(c.grad.dtype()), reduced, /*keepdim=*/true);
    return {where(mask, g / count, zero_like_scalar(c.grad))};
  }
  const Tensor mask = eq(x, m).to(c.grad.dtype());
  return {g / sum(mask, reduced, /*keepdim=*/true) * mask};
}

// The maximum (op Max) or minimum (Min) over `dims` (empty: all), recorded as `name` with the
// gradient rule `nan_rule`: the gradient goes to the elements equal to the result either way.
Tensor max_reduction(const char* name, const Tensor& a, const std::vector<std::int64_t>& dims,
                     bool keepdim, NanMaximum nan_rule, ReduceOp op = ReduceOp::Max) {
  // The dims checked in `name`'s name (amax, amin), before the kernel checks them in its own.
  LG_CHECK(a.defined(), name, ": expected a defined input, got an undefined Tensor()");
  const std::vector<std::int64_t> reduced = reduction_dims(name, a, dims);
  const Tensor out = ops::reduce(op, a, dims, keepdim);
  if (!autograd::any_requires_grad({&a})) return out;
  return record_op(name, out, {a}, {a, out}, [reduced, nan_rule](const BackwardContext& c) {
    return max_reduction_backward(c, reduced, nan_rule);
  });
}

// max(dim) / min(dim)'s values: the whole gradient goes to the element the indices name
// (saved[0]: the first extremum, or the first NaN), as PyTorch's
// value_selecting_reduction_backward; ties are not split. `reduced` is the one dim, or none for
// a 0-d input.
std::vector<Tensor> selected_backward(const BackwardContext& c,
                                      const std::vector<std::int64_t>& reduced) {
  const Shape& shape = c.shape(0);
  if (reduced.empty()) return {c.grad.reshape(shape)};
  const std::int64_t d = reduced.front();
  Shape positions_shape(shape.size(), 1);  // (1, ..., size(d), ..., 1)
  positions_shape[d] = shape[d];
  const Tensor positions =
      arange(static_cast<double>(shape[d]), TensorOptions(DType::Int64).device(c.grad.device()))
          .reshape(positions_shape);
  const Tensor picked = eq(positions, unreduce(c.saved[0], shape, reduced));
  return {where(picked, unreduce(c.grad, shape, reduced), zero_like_scalar(c.grad))};
}

}  // namespace

// ---- Elementwise arithmetic ------------------------------------------------------------------

Tensor add(const Tensor& a, const Tensor& b) {
  LG_PROFILE_OP(a, b);
  return record_op("add", ops::binary(BinaryOp::Add, a, b), {a, b}, {},
                   [](const BackwardContext& c) -> std::vector<Tensor> {
                     return {sum_to(c.grad, c.shape(0)), sum_to(c.grad, c.shape(1))};
                   });
}

Tensor sub(const Tensor& a, const Tensor& b) {
  LG_PROFILE_OP(a, b);
  return record_op("sub", ops::binary(BinaryOp::Sub, a, b), {a, b}, {},
                   [](const BackwardContext& c) -> std::vector<Tensor> {
                     return {sum_to(c.grad, c.shape(0)),
                             c.needs(1) ? sum_to(neg(c.grad), c.shape(1)) : Tensor()};
                   });
}

Tensor mul(const Tensor& a, const Tensor& b) {
  LG_PROFILE_OP(a, b);
  return record_op("mul", ops::binary(BinaryOp::Mul, a, b), {a, b}, {a, b},
                   [](const BackwardContext& c) -> std::vector<Tensor> {
                     const Tensor& x = c.saved[0];
                     const Tensor& y = c.saved[1];
                     return {c.needs(0) ? sum_to(c.grad * y, c.shape(0)) : Tensor(),
                             c.needs(1) ? sum_to(c.grad * x, c.shape(1)) : Tensor()};
                   });
}

Tensor div(const Tensor& a, const Tensor& b) {
  LG_PROFILE_OP(a, b);
  const Tensor out = ops::binary(BinaryOp::Div, a, b);
  return record_op("div", out, {a, b}, {b, out},
                   [](const BackwardContext& c) -> std::vector<Tensor> {
                     const Tensor& y = c.saved[0];
                     const Tensor& q = c.saved[1];  // a / b
                     return {c.needs(0) ? sum_to(c.grad / y, c.shape(0)) : Tensor(),
                             c.needs(1) ? sum_to(neg(c.grad * q / y), c.shape(1)) : Tensor()};
                   });
}

Tensor pow(const Tensor& a_in, const Tensor& b_in) {
  LG_PROFILE_OP(a_in, b_in);
  const Tensor a = amp::autocast_operand(a_in, amp::CastPolicy::Float32);
  const Tensor b = amp::autocast_operand(b_in, amp::CastPolicy::Float32);
  const Tensor out = ops::binary(BinaryOp::Pow, a, b);
  return record_op(
      "pow", out, {a, b}, {a, b, out}, [](const BackwardContext& c) -> std::vector<Tensor> {
        const Tensor& x = c.saved[0];
        const Tensor& e = c.saved[1];
        const Tensor& p = c.saved[2];
        Tensor ga, gb;
        // d/dx x^e = e x^(e-1); taken as 0 where e == 0 (x^0 is constant, and 0 * 0^-1 at
        // x == 0 would be NaN), as PyTorch does.
        if (c.needs(0)) {
          ga = sum_to(where(eq(e, 0.0), zero_like_scalar(c.grad), c.grad * e * pow(x, e - 1.0)),
                      c.shape(0));
        }
        // d/de x^e = x^e log x; taken as 0 where x == 0 and e >= 0 (x^e is 0 or 1 there), as
        // PyTorch does; for e < 0 it is inf * -inf = -inf.
        if (c.needs(1)) {
          const Tensor base_zero = eq(x, 0.0);
          const Tensor constant = where(base_zero, ge(e, 0.0), base_zero);  // x == 0 && e >= 0
          gb = sum_to(where(constant, zero_like_scalar(c.grad), c.grad * p * log(x)), c.shape(1));
        }
        return {ga, gb};
      });
}

Tensor maximum(const Tensor& a, const Tensor& b) {
  LG_PROFILE_OP(a, b);
  return record_op("maximum", ops::binary(BinaryOp::Maximum, a, b), {a, b}, {a, b},
                   [](const BackwardContext& c) { return extremum_backward(c, /*is_max=*/true); });
}

Tensor minimum(const Tensor& a, const Tensor& b) {
  LG_PROFILE_OP(a, b);
  return record_op("minimum", ops::binary(BinaryOp::Minimum, a, b), {a, b}, {a, b},
                   [](const BackwardContext& c) { return extremum_backward(c, /*is_max=*/false); });
}

Tensor add(const Tensor& a, double b) {
  LG_PROFILE_OP(a);
  return record_op("add", ops::binary(BinaryOp::Add, a, b), {a}, {},
                   [](const BackwardContext& c) -> std::vector<Tensor> { return {c.grad}; });
}

Tensor sub(const Tensor& a, double b) {
  LG_PROFILE_OP(a);
  return record_op("sub", ops::binary(BinaryOp::Sub, a, b), {a}, {},
                   [](const BackwardContext& c) -> std::vector<Tensor> { return {c.grad}; });
}

Tensor mul(const Tensor& a, double b) {
  LG_PROFILE_OP(a);
  return record_op("mul", ops::binary(BinaryOp::Mul, a, b), {a}, {},
                   [b](const BackwardContext& c) -> std::vector<Tensor> { return {c.grad * b}; });
}

Tensor div(const Tensor& a, double b) {
  LG_PROFILE_OP(a);
  return record_op("div", ops::binary(BinaryOp::Div, a, b), {a}, {},
                   [b](const BackwardContext& c) -> std::vector<Tensor> { return {c.grad / b}; });
}

Tensor pow(const Tensor& a_in, double exponent) {
  LG_PROFILE_OP(a_in);
  const Tensor a = amp::autocast_operand(a_in, amp::CastPolicy::Float32);
  return record_op("pow", ops::binary(BinaryOp::Pow, a, exponent), {a}, {a},
                   [exponent](const BackwardContext& c) -> std::vector<Tensor> {
                     if (exponent == 0.0) return {zeros_like(c.grad)};
                     return {c.grad * exponent * pow(c.saved[0], exponent - 1.0)};
                   });
}

Tensor rsub(const Tensor& a, double b) {
  LG_PROFILE_OP(a);
  return record_op("rsub", ops::binary(BinaryOp::Sub, a, b, /*scalar_first=*/true), {a}, {},
                   [](const BackwardContext& c) -> std::vector<Tensor> { return {neg(c.grad)}; });
}

Tensor rdiv(const Tensor& a_in, double b) {
  LG_PROFILE_OP(a_in);
  const Tensor a = amp::autocast_operand(a_in, amp::CastPolicy::Float32);  // torch's __rdiv__
  const Tensor out = ops::binary(BinaryOp::Div, a, b, /*scalar_first=*/true);
  return record_op("rdiv", out, {a}, {a, out}, [](const BackwardContext& c) -> std::vector<Tensor> {
    // d/da (b / a) = -(b / a) / a
    return {neg(c.grad * c.saved[1] / c.saved[0])};
  });
}

Tensor neg(const Tensor& a) {
  LG_PROFILE_OP(a);
  return record_op("neg", ops::unary(UnaryOp::Neg, a), {a}, {},
                   [](const BackwardContext& c) -> std::vector<Tensor> { return {neg(c.grad)}; });
}

Tensor abs(const Tensor& a) {
  LG_PROFILE_OP(a);
  return record_op(
      "abs", ops::unary(UnaryOp::Abs, a), {a}, {a},
      [](const BackwardContext& c) -> std::vector<Tensor> { return {c.grad * sign(c.saved[0])}; });
}

Tensor exp(const Tensor& a_in) {
  LG_PROFILE_OP(a_in);
  const Tensor a = amp::autocast_operand(a_in, amp::CastPolicy::Float32);
  const Tensor out = ops::unary(UnaryOp::Exp, a);
  return record_op("exp", out, {a}, {out}, [](const BackwardContext& c) -> std::vector<Tensor> {
    return {c.grad * c.saved[0]};
  });
}

Tensor log(const Tensor& a_in) {
  LG_PROFILE_OP(a_in);
  const Tensor a = amp::autocast_operand(a_in, amp::CastPolicy::Float32);
  return record_op(
      "log", ops::unary(UnaryOp::Log, a), {a}, {a},
      [](const BackwardContext& c) -> std::vector<Tensor> { return {c.grad / c.saved[0]}; });
}

Tensor sqrt(const Tensor& a) {
  LG_PROFILE_OP(a);
  const Tensor out = ops::unary(UnaryOp::Sqrt, a);
  return record_op("sqrt", out, {a}, {out}, [](const BackwardContext& c) -> std::vector<Tensor> {
    return {c.grad / (c.saved[0] * 2.0)};
  });
}

Tensor erf(const Tensor& a) {
  LG_PROFILE_OP(a);
  // d erf(a) / da = 2 / sqrt(pi) exp(-a^2).
  return record_op("erf", ops::unary(UnaryOp::Erf, a), {a}, {a},
                   [](const BackwardContext& c) -> std::vector<Tensor> {
                     const Tensor& x = c.saved[0];
                     return {c.grad * (exp(-(x * x)) * 1.1283791670955126)};
                   });
}

Tensor expm1(const Tensor& a_in) {
  LG_PROFILE_OP(a_in);
  const Tensor a = amp::autocast_operand(a_in, amp::CastPolicy::Float32);
  const Tensor out = ops::unary(UnaryOp::Expm1, a);
  // d/da = exp(a) = out + 1.
  return record_op("expm1", out, {a}, {out}, [](const BackwardContext& c) -> std::vector<Tensor> {
    return {c.grad * (c.saved[0] + 1.0)};
  });
}

Tensor log1p(const Tensor& a_in) {
  LG_PROFILE_OP(a_in);
  const Tensor a = amp::autocast_operand(a_in, amp::CastPolicy::Float32);
  return record_op("log1p", ops::unary(UnaryOp::Log1p, a), {a}, {a},
                   [](const BackwardContext& c) -> std::vector<Tensor> {
                     return {c.grad / (c.saved[0] + 1.0)};
                   });
}

Tensor sin(const Tensor& a) {
  LG_PROFILE_OP(a);
  return record_op(
      "sin", ops::unary(UnaryOp::Sin, a), {a}, {a},
      [](const BackwardContext& c) -> std::vector<Tensor> { return {c.grad * cos(c.saved[0])}; });
}

Tensor cos(const Tensor& a) {
  LG_PROFILE_OP(a);
  return record_op("cos", ops::unary(UnaryOp::Cos, a), {a}, {a},
                   [](const BackwardContext& c) -> std::vector<Tensor> {
                     return {-(c.grad * sin(c.saved[0]))};
                   });
}

Tensor rsqrt(const Tensor& a_in) {
  LG_PROFILE_OP(a_in);
  const Tensor a = amp::autocast_operand(a_in, amp::CastPolicy::Float32);
  const Tensor out = ops::unary(UnaryOp::Rsqrt, a);
  // d a^(-1/2) / da = -a^(-3/2) / 2 = -out^3 / 2.
  return record_op("rsqrt", out, {a}, {out}, [](const BackwardContext& c) -> std::vector<Tensor> {
    const Tensor& y = c.saved[0];
    return {c.grad * (y * y * y) * -0.5};
  });
}

Tensor reciprocal(const Tensor& a_in) {
  LG_PROFILE_OP(a_in);
  const Tensor a = amp::autocast_operand(a_in, amp::CastPolicy::Float32);
  const Tensor out = ops::unary(UnaryOp::Reciprocal, a);
  // d (1/a) / da = -1/a^2 = -out^2.
  return record_op("reciprocal", out, {a}, {out},
                   [](const BackwardContext& c) -> std::vector<Tensor> {
                     const Tensor& y = c.saved[0];
                     return {-(c.grad * (y * y))};
                   });
}

Tensor log2(const Tensor& a_in) {
  LG_PROFILE_OP(a_in);
  const Tensor a = amp::autocast_operand(a_in, amp::CastPolicy::Float32);
  return record_op("log2", ops::unary(UnaryOp::Log2, a), {a}, {a},
                   [](const BackwardContext& c) -> std::vector<Tensor> {
                     return {c.grad / (c.saved[0] * 0.6931471805599453)};  // a ln 2
                   });
}

Tensor log10(const Tensor& a_in) {
  LG_PROFILE_OP(a_in);
  const Tensor a = amp::autocast_operand(a_in, amp::CastPolicy::Float32);
  return record_op("log10", ops::unary(UnaryOp::Log10, a), {a}, {a},
                   [](const BackwardContext& c) -> std::vector<Tensor> {
                     return {c.grad / (c.saved[0] * 2.302585092994046)};  // a ln 10
                   });
}

// The trigonometric and hyperbolic functions: PyTorch's derivative formulas, written with these
// same functions so that they differentiate again. At the edges of a domain they give what
// PyTorch gives: asin'(1) = rsqrt(0) = inf, acosh'(0.5) = rsqrt(-0.75) = NaN, and atanh'(2) =
// 1 / (1 - 4) = -1/3 (the formula, though atanh(2) is NaN). tan, asin, acos, sinh and cosh run in
// float32 under autocast, as in PyTorch's list (Note [Autocast policy]).
Tensor tan(const Tensor& a_in) {
  LG_PROFILE_OP(a_in);
  const Tensor a = amp::autocast_operand(a_in, amp::CastPolicy::Float32);
  const Tensor out = ops::unary(UnaryOp::Tan, a);
  // d tan(a) / da = 1 + tan(a)^2.
  return record_op("tan", out, {a}, {out}, [](const BackwardContext& c) -> std::vector<Tensor> {
    const Tensor& y = c.saved[0];
    return {c.grad * (y * y + 1.0)};
  });
}

Tensor asin(const Tensor& a_in) {
  LG_PROFILE_OP(a_in);
  const Tensor a = amp::autocast_operand(a_in, amp::CastPolicy::Float32);
  return record_op("asin", ops::unary(UnaryOp::Asin, a), {a}, {a},
                   [](const BackwardContext& c) -> std::vector<Tensor> {
                     const Tensor& x = c.saved[0];
                     return {c.grad * rsqrt(1.0 - x * x)};
                   });
}

Tensor acos(const Tensor& a_in) {
  LG_PROFILE_OP(a_in);
  const Tensor a = amp::autocast_operand(a_in, amp::CastPolicy::Float32);
  return record_op("acos", ops::unary(UnaryOp::Acos, a), {a}, {a},
                   [](const BackwardContext& c) -> std::vector<Tensor> {
                     const Tensor& x = c.saved[0];
                     return {c.grad * -rsqrt(1.0 - x * x)};
                   });
}

Tensor atan(const Tensor& a) {
  LG_PROFILE_OP(a);
  return record_op("atan", ops::unary(UnaryOp::Atan, a), {a}, {a},
                   [](const BackwardContext& c) -> std::vector<Tensor> {
                     const Tensor& x = c.saved[0];
                     return {c.grad / (x * x + 1.0)};
                   });
}

Tensor sinh(const Tensor& a_in) {
  LG_PROFILE_OP(a_in);
  const Tensor a = amp::autocast_operand(a_in, amp::CastPolicy::Float32);
  return record_op(
      "sinh", ops::unary(UnaryOp::Sinh, a), {a}, {a},
      [](const BackwardContext& c) -> std::vector<Tensor> { return {c.grad * cosh(c.saved[0])}; });
}

Tensor cosh(const Tensor& a_in) {
  LG_PROFILE_OP(a_in);
  const Tensor a = amp::autocast_operand(a_in, amp::CastPolicy::Float32);
  return record_op(
      "cosh", ops::unary(UnaryOp::Cosh, a), {a}, {a},
      [](const BackwardContext& c) -> std::vector<Tensor> { return {c.grad * sinh(c.saved[0])}; });
}

Tensor asinh(const Tensor& a) {
  LG_PROFILE_OP(a);
  return record_op("asinh", ops::unary(UnaryOp::Asinh, a), {a}, {a},
                   [](const BackwardContext& c) -> std::vector<Tensor> {
                     const Tensor& x = c.saved[0];
                     return {c.grad * rsqrt(x * x + 1.0)};
                   });
}

Tensor acosh(const Tensor& a) {
  LG_PROFILE_OP(a);
  return record_op("acosh", ops::unary(UnaryOp::Acosh, a), {a}, {a},
                   [](const BackwardContext& c) -> std::vector<Tensor> {
                     const Tensor& x = c.saved[0];
                     return {c.grad * rsqrt(x * x - 1.0)};
                   });
}

Tensor atanh(const Tensor& a) {
  LG_PROFILE_OP(a);
  return record_op("atanh", ops::unary(UnaryOp::Atanh, a), {a}, {a},
                   [](const BackwardContext& c) -> std::vector<Tensor> {
                     const Tensor& x = c.saved[0];
                     return {c.grad / (1.0 - x * x)};
                   });
}

Tensor exp2(const Tensor& a) {
  LG_PROFILE_OP(a);
  const Tensor out = ops::unary(UnaryOp::Exp2, a);
  // d 2^a / da = 2^a ln 2.
  return record_op("exp2", out, {a}, {out}, [](const BackwardContext& c) -> std::vector<Tensor> {
    return {c.grad * c.saved[0] * 0.6931471805599453};
  });
}

Tensor atan2(const Tensor& a, const Tensor& b) {
  LG_PROFILE_OP(a, b);
  // PyTorch's formula: d/da = b / (a^2 + b^2), d/db = -a / (a^2 + b^2); NaN at (0, 0), as there.
  return record_op("atan2", ops::binary(BinaryOp::Atan2, a, b), {a, b}, {a, b},
                   [](const BackwardContext& c) -> std::vector<Tensor> {
                     const Tensor& x = c.saved[0];
                     const Tensor& y = c.saved[1];
                     const Tensor r = reciprocal(x * x + y * y);
                     return {c.needs(0) ? sum_to(c.grad * y * r, c.shape(0)) : Tensor(),
                             c.needs(1) ? sum_to(c.grad * -x * r, c.shape(1)) : Tensor()};
                   });
}

// ---- Division with rounding, and bits ----------------------------------------------------------

namespace {

// remainder's and fmod's gradient for the divisor: -(a rounded-divided by b), floor or trunc.
Tensor divisor_gradient(const BackwardContext& c, const Tensor& a, const Tensor& b, bool floor) {
  const Tensor quotient =
      floor ? ops::binary(BinaryOp::FloorDivide, a, b) : trunc(div(a, b).detach());
  return mul(c.grad, neg(quotient));
}

Tensor rounded_remainder(const char* name, BinaryOp op, const Tensor& a, const Tensor& b) {
  const bool floor = op == BinaryOp::Remainder;
  return record_op(
      name, ops::binary(op, a, b), {a, b}, {a, b},
      [floor](const BackwardContext& c) -> std::vector<Tensor> {
        const Tensor& x = c.saved[0];
        const Tensor& y = c.saved[1];
        return {c.needs(0) ? sum_to(c.grad, c.shape(0)) : Tensor(),
                c.needs(1) ? sum_to(divisor_gradient(c, x, y, floor), c.shape(1)) : Tensor()};
      });
}

// A number divisor of a float16 or bfloat16 tensor rounded to its dtype first, as PyTorch's and as
// the tensor overloads take it: fmod(65504, 0.1) is by 0.0999755859375 (float16's 0.1), not by
// float's 0.1, whose remainder rounded to float16 was 0.099 where the true one is 0.096.
double divisor_in_dtype_of(const Tensor& a, double b) {
  if (!a.defined() || !is_reduced_precision(a.dtype())) return b;
  return full({}, b, a.dtype()).item<double>();
}

}  // namespace

Tensor remainder(const Tensor& a, const Tensor& b) {
  LG_PROFILE_OP(a, b);
  return rounded_remainder("remainder", BinaryOp::Remainder, a, b);
}

Tensor remainder(const Tensor& a, double b) {
  LG_PROFILE_OP(a);
  return record_op("remainder", ops::binary(BinaryOp::Remainder, a, divisor_in_dtype_of(a, b)), {a},
                   {}, [](const BackwardContext& c) -> std::vector<Tensor> { return {c.grad}; });
}

Tensor remainder(double a, const Tensor& b) {
  LG_PROFILE_OP(b);
  return record_op("remainder", ops::binary(BinaryOp::Remainder, b, a, /*scalar_first=*/true), {b},
                   {b}, [a](const BackwardContext& c) -> std::vector<Tensor> {
                     const Tensor& y = c.saved[0];
                     return {divisor_gradient(c, full({}, a, y.options()), y, true)};
                   });
}

Tensor fmod(const Tensor& a, const Tensor& b) {
  LG_PROFILE_OP(a, b);
  return rounded_remainder("fmod", BinaryOp::Fmod, a, b);
}

Tensor fmod(const Tensor& a, double b) {
  LG_PROFILE_OP(a);
  return record_op("fmod", ops::binary(BinaryOp::Fmod, a, divisor_in_dtype_of(a, b)), {a}, {},
                   [](const BackwardContext& c) -> std::vector<Tensor> { return {c.grad}; });
}

Tensor floor_divide(const Tensor& a, const Tensor& b) {
  LG_PROFILE_OP(a, b);
  return ops::binary(BinaryOp::FloorDivide, a, b);
}

Tensor floor_divide(const Tensor& a, double b) {
  LG_PROFILE_OP(a);
  return ops::binary(BinaryOp::FloorDivide, a, b);
}

Tensor bitwise_and(const Tensor& a, const Tensor& b) {
  LG_PROFILE_OP(a, b);
  return ops::binary(BinaryOp::BitwiseAnd, a, b);
}
Tensor bitwise_and(const Tensor& a, double b) {
  LG_PROFILE_OP(a);
  return autograd::integral_binary(BinaryOp::BitwiseAnd, a, b);
}
Tensor bitwise_or(const Tensor& a, const Tensor& b) {
  LG_PROFILE_OP(a, b);
  return ops::binary(BinaryOp::BitwiseOr, a, b);
}
Tensor bitwise_or(const Tensor& a, double b) {
  LG_PROFILE_OP(a);
  return autograd::integral_binary(BinaryOp::BitwiseOr, a, b);
}
Tensor bitwise_xor(const Tensor& a, const Tensor& b) {
  LG_PROFILE_OP(a, b);
  return ops::binary(BinaryOp::BitwiseXor, a, b);
}
Tensor bitwise_xor(const Tensor& a, double b) {
  LG_PROFILE_OP(a);
  return autograd::integral_binary(BinaryOp::BitwiseXor, a, b);
}

Tensor bitwise_not(const Tensor& a) {
  LG_PROFILE_OP(a);
  LG_CHECK(a.defined(), "bitwise_not: expected a defined tensor");
  LG_CHECK_DTYPE(!is_floating(a.dtype()), "bitwise_not: expected an integral or bool tensor, got ",
                 a.dtype(), " of shape ", a.shape());
  if (a.dtype() == kBool) return logical_not(a);
  // ~x == -x - 1 in two's complement (and 255 - x for uint8), both wrapping.
  return ops::binary(BinaryOp::BitwiseXor, a, -1.0);
}

namespace {

// sign and the roundings are piecewise constant: their gradient is 0 everywhere (PyTorch's
// choice at the jumps too), so the graph still reaches the input, with zeros.
Tensor piecewise_constant(const char* name, const Tensor& out, const Tensor& a) {
  return record_op(name, out, {a}, {}, [](const BackwardContext& c) -> std::vector<Tensor> {
    return {zeros_like(c.grad)};
  });
}
Tensor piecewise_constant(const char* name, UnaryOp op, const Tensor& a) {
  return piecewise_constant(name, ops::unary(op, a), a);
}

// Whether rounding_mode asks for floor (true) or trunc (false); anything else is an Error.
bool floor_mode(std::string_view rounding_mode) {
  LG_CHECK(rounding_mode == "floor" || rounding_mode == "trunc",
           "div: expected rounding_mode to be one of None, 'trunc', or 'floor' but found '",
           rounding_mode, "'");
  return rounding_mode == "floor";
}

// a / b rounded toward zero (trunc) or down (floor) in the dtype a and b promote to: an integral
// one exactly (a - fmod(a, b) is a multiple of b, so floor-dividing it truncates), a floating one
// as trunc(a / b) and floor_divide. B is a Tensor or a double.
template <typename B>
Tensor rounded_quotient(const Tensor& a, const B& b, bool floor, bool integral) {
  if (floor) return ops::binary(BinaryOp::FloorDivide, a, b);
  if (integral) {
    return ops::binary(BinaryOp::FloorDivide,
                       ops::binary(BinaryOp::Sub, a, ops::binary(BinaryOp::Fmod, a, b)), b);
  }
  const Tensor quotient = ops::binary(BinaryOp::Div, a, b);
  if (!is_reduced_precision(quotient.dtype())) return ops::unary(UnaryOp::Trunc, quotient);
  // A 16-bit quotient rounded before the trunc can reach the next integer (2826 / 11 = 256.9
  // is 257 in float16, and PyTorch 1.13's CPU gives 257): the float32 quotient is truncated,
  // then rounded once to the 16-bit dtype.
  const auto wide = [](const auto& x) {
    if constexpr (std::is_same_v<std::decay_t<decltype(x)>, Tensor>) {
      return x.to(kFloat32);
    } else {
      return x;
    }
  };
  return ops::unary(UnaryOp::Trunc, ops::binary(BinaryOp::Div, wide(a), wide(b)))
      .to(quotient.dtype());
}

}  // namespace

Tensor div(const Tensor& a, const Tensor& b, std::optional<std::string_view> rounding_mode) {
  if (!rounding_mode) return div(a, b);
  LG_PROFILE_OP(a, b);
  const bool floor = floor_mode(*rounding_mode);
  LG_CHECK_DTYPE(a.dtype() != kBool || b.dtype() != kBool, "div: rounding_mode '", *rounding_mode,
                 "' is not defined for two bool tensors, as PyTorch's");
  const bool integral = !is_floating(a.dtype()) && !is_floating(b.dtype());
  return record_op("div", rounded_quotient(a, b, floor, integral), {a, b}, {},
                   [](const BackwardContext& c) -> std::vector<Tensor> {
                     const Tensor zero = zeros_like(c.grad);
                     return {c.needs(0) ? sum_to(zero, c.shape(0)) : Tensor(),
                             c.needs(1) ? sum_to(zero, c.shape(1)) : Tensor()};
                   });
}

Tensor div(const Tensor& a, double b, std::optional<std::string_view> rounding_mode) {
  if (!rounding_mode) return div(a, b);
  LG_PROFILE_OP(a);
  const bool floor = floor_mode(*rounding_mode);
  LG_CHECK_DTYPE(a.dtype() != kBool, "div: rounding_mode '", *rounding_mode,
                 "' of a bool tensor by a number is not defined (convert the tensor first)");
  const bool integral = !is_floating(a.dtype()) && std::isfinite(b) && b == std::trunc(b);
  return piecewise_constant("div", rounded_quotient(a, b, floor, integral), a);
}

namespace autograd {

double power_of_ten_in(DType dtype, std::int64_t decimals) {
  const double p = std::pow(10.0, static_cast<double>(decimals < 0 ? -decimals : decimals));
  return dispatch_floating(dtype, "round", [&]<typename T>() {
    return kernels::cast_value<double>(kernels::cast_value<T>(p));
  });
}

}  // namespace autograd

Tensor sign(const Tensor& a) {
  LG_PROFILE_OP(a);
  return piecewise_constant("sign", UnaryOp::Sign, a);
}

Tensor floor(const Tensor& a) {
  LG_PROFILE_OP(a);
  return piecewise_constant("floor", UnaryOp::Floor, a);
}

Tensor ceil(const Tensor& a) {
  LG_PROFILE_OP(a);
  return piecewise_constant("ceil", UnaryOp::Ceil, a);
}

Tensor round(const Tensor& a) {
  LG_PROFILE_OP(a);
  return piecewise_constant("round", UnaryOp::Round, a);
}

// Note [Rounding to decimals]
//   PyTorch's round(x, decimals) (1.13, round_decimals_kernel): with t = 10^|decimals| rounded to
//   x's dtype, round_half_even(x * t) / t for decimals > 0 and round_half_even(x / t) * t for
//   decimals < 0, each operation rounded to x's dtype (its CPU kernel computes in scalar_t, and
//   c10's BFloat16 arithmetic rounds each product and quotient to bfloat16). Composed here of the
//   same three operations (ops::binary rounds each result to the dtype), so the values are
//   PyTorch's bit for bit, bfloat16 included; float16, which PyTorch's CPU kernel refuses, is
//   computed the same way. 10^|decimals| past the dtype's range is inf, and the result NaN, as
//   in PyTorch. Integral input with decimals != 0 is refused, as PyTorch ("round_cpu" is not
//   implemented for integral dtypes).
Tensor round(const Tensor& a, std::int64_t decimals) {
  LG_PROFILE_OP(a);
  if (decimals == 0) return piecewise_constant("round", UnaryOp::Round, a);
  LG_CHECK_DTYPE(a.defined() && is_floating(a.dtype()), "round: decimals = ", decimals,
                 " expects a floating tensor (float32, float64, float16, bfloat16), got ",
                 a.defined() ? dtype_name(a.dtype()) : "an undefined tensor");
  const double t = autograd::power_of_ten_in(a.dtype(), decimals);
  const Tensor out =
      decimals > 0 ? ops::binary(BinaryOp::Div,
                                 ops::unary(UnaryOp::Round, ops::binary(BinaryOp::Mul, a, t)), t)
                   : ops::binary(BinaryOp::Mul,
                                 ops::unary(UnaryOp::Round, ops::binary(BinaryOp::Div, a, t)), t);
  return piecewise_constant("round", out, a);
}

Tensor trunc(const Tensor& a) {
  LG_PROFILE_OP(a);
  return piecewise_constant("trunc", UnaryOp::Trunc, a);
}

Tensor tanh(const Tensor& a) {
  LG_PROFILE_OP(a);
  const Tensor out = ops::unary(UnaryOp::Tanh, a);
  return record_op("tanh", out, {a}, {out}, [](const BackwardContext& c) -> std::vector<Tensor> {
    const Tensor& y = c.saved[0];
    return {c.grad * rsub(y * y, 1.0)};
  });
}

Tensor sigmoid(const Tensor& a) {
  LG_PROFILE_OP(a);
  const Tensor out = ops::unary(UnaryOp::Sigmoid, a);
  return record_op("sigmoid", out, {a}, {out}, [](const BackwardContext& c) -> std::vector<Tensor> {
    const Tensor& y = c.saved[0];
    return {c.grad * y * rsub(y, 1.0)};
  });
}

Tensor relu(const Tensor& a) {
  LG_PROFILE_OP(a);
  const Tensor out = ops::unary(UnaryOp::Relu, a);
  return record_op("relu", out, {a}, {out}, [](const BackwardContext& c) -> std::vector<Tensor> {
    // Zero where the output is <= 0 and the gradient elsewhere, a NaN output included (PyTorch's
    // threshold_backward), in one pass; a select, so an infinite gradient gives 0, not NaN,
    // where cut.
    return {autograd::relu_backward(c.grad, c.saved[0])};
  });
}

// ---- Comparisons (no gradient) ---------------------------------------------------------------
Tensor gt(const Tensor& a, const Tensor& b) {
  LG_PROFILE_OP(a, b);
  return ops::compare(CompareOp::Gt, a, b);
}
Tensor lt(const Tensor& a, const Tensor& b) {
  LG_PROFILE_OP(a, b);
  return ops::compare(CompareOp::Lt, a, b);
}
Tensor ge(const Tensor& a, const Tensor& b) {
  LG_PROFILE_OP(a, b);
  return ops::compare(CompareOp::Ge, a, b);
}
Tensor le(const Tensor& a, const Tensor& b) {
  LG_PROFILE_OP(a, b);
  return ops::compare(CompareOp::Le, a, b);
}
Tensor eq(const Tensor& a, const Tensor& b) {
  LG_PROFILE_OP(a, b);
  return ops::compare(CompareOp::Eq, a, b);
}
Tensor ne(const Tensor& a, const Tensor& b) {
  LG_PROFILE_OP(a, b);
  return ops::compare(CompareOp::Ne, a, b);
}
Tensor gt(const Tensor& a, double b) {
  LG_PROFILE_OP(a);
  return ops::compare(CompareOp::Gt, a, b);
}
Tensor lt(const Tensor& a, double b) {
  LG_PROFILE_OP(a);
  return ops::compare(CompareOp::Lt, a, b);
}
Tensor ge(const Tensor& a, double b) {
  LG_PROFILE_OP(a);
  return ops::compare(CompareOp::Ge, a, b);
}
Tensor le(const Tensor& a, double b) {
  LG_PROFILE_OP(a);
  return ops::compare(CompareOp::Le, a, b);
}
Tensor eq(const Tensor& a, double b) {
  LG_PROFILE_OP(a);
  return ops::compare(CompareOp::Eq, a, b);
}
Tensor ne(const Tensor& a, double b) {
  LG_PROFILE_OP(a);
  return ops::compare(CompareOp::Ne, a, b);
}

Tensor where(const Tensor& cond, const Tensor& a, const Tensor& b) {
  LG_PROFILE_OP(cond, a, b);
  return record_op("where", ops::where(cond, a, b), {a, b}, {cond},
                   [](const BackwardContext& c) -> std::vector<Tensor> {
                     const Tensor& mask = c.saved[0];
                     const Tensor zero = zero_like_scalar(c.grad);
                     return {c.needs(0) ? sum_to(where(mask, c.grad, zero), c.shape(0)) : Tensor(),
                             c.needs(1) ? sum_to(where(mask, zero, c.grad), c.shape(1)) : Tensor()};
                   });
}

bool has_non_finite(const Tensor& a) {
  LG_PROFILE_OP(a);
  if (!is_floating(a.dtype())) return false;
  const Tensor d = sub(a, a);  // 0 where finite, NaN where a is NaN or +-Inf
  return ne(d, d).sum().item<std::int64_t>() > 0;
}

// ---- Reductions ------------------------------------------------------------------------------

Tensor sum(const Tensor& a_in, const DimList& dims, bool keepdim) {
  LG_PROFILE_OP(a_in);
  const Tensor a = amp::autocast_operand(a_in, amp::CastPolicy::Float32);
  const Tensor out = ops::reduce(ReduceOp::Sum, a, dims, keepdim);
  if (!autograd::any_requires_grad({&a})) return out;
  const std::vector<std::int64_t> reduced = reduction_dims("sum", a, dims);
  return record_op("sum", out, {a}, {}, [reduced](const BackwardContext& c) -> std::vector<Tensor> {
    return {unreduce(c.grad, c.shape(0), reduced).expand(c.shape(0))};
  });
}

Tensor mean(const Tensor& a, const DimList& dims, bool keepdim) {
  LG_PROFILE_OP(a);
  const Tensor out = ops::reduce(ReduceOp::Mean, a, dims, keepdim);
  if (!autograd::any_requires_grad({&a})) return out;
  const std::vector<std::int64_t> reduced = reduction_dims("mean", a, dims);
  return record_op("mean", out, {a}, {},
                   [reduced](const BackwardContext& c) -> std::vector<Tensor> {
                     std::int64_t count = 1;
                     for (std::int64_t d : reduced)
                       count *= c.shape(0)[d];
                     const Tensor g = unreduce(c.grad, c.shape(0), reduced);
                     return {(g / static_cast<double>(count)).expand(c.shape(0))};
                   });
}

Tensor max(const Tensor& a, const std::vector<std::int64_t>& dims, bool keepdim) {
  LG_PROFILE_OP(a);
  return max_reduction("max", a, dims, keepdim, NanMaximum::SplitAmongNans);
}

Tensor argmax(const Tensor& a) {
  LG_PROFILE_OP(a);
  return ops::argmax(a, std::nullopt, false);
}
Tensor argmax(const Tensor& a, std::int64_t dim, bool keepdim) {
  LG_PROFILE_OP(a);
  return ops::argmax(a, dim, keepdim);
}

// ---- Linear algebra, joining -----------------------------------------------------------------

// Note [Batched matmul beyond 3-d]
// torch.matmul broadcasts the batch dims of operands of any rank (attention's (B, H, T, D) @
// (B, H, D, T), a (B, T, H, D) activation through a (D, E) weight). The kernel takes 1-d to 3-d
// operands, so a higher rank is brought down to them here, with differentiable views: a 1-d
// operand becomes a matrix (its unit dim removed from the result, as below); an operand with
// batch dims is expanded to the broadcast batch and flattened to one batch dim (a view when it
// has the whole batch and is contiguous, else a copy, as PyTorch's expand + reshape); a 2-d
// operand stays 2-d, which the kernel broadcasts over the batch without a copy. The product is
// then unflattened. The gradients are those of the views: expand's backward sums the
// broadcast dims.
namespace {

Tensor matmul_beyond_3d(const Tensor& a, const Tensor& b) {
  const Tensor a2 = a.dim() == 1 ? a.unsqueeze(0) : a;
  const Tensor b2 = b.dim() == 1 ? b.unsqueeze(-1) : b;
  const Shape& sa = a2.shape();
  const Shape& sb = b2.shape();
  const std::int64_t n = sa[sa.size() - 2], k = sa[sa.size() - 1];
  const std::int64_t k_b = sb[sb.size() - 2], p = sb[sb.size() - 1];
  LG_CHECK_SHAPE(k == k_b, "matmul: shapes ", a.shape(), " and ", b.shape(),
                 " cannot be multiplied (", k, " != ", k_b, ")");
  const Shape batch =
      broadcast_shapes(Shape(sa.begin(), sa.end() - 2), Shape(sb.begin(), sb.end() - 2), "matmul");
  const std::int64_t batch_numel = shape_numel(batch, "matmul");
  auto flattened = [&](const Tensor& t, std::int64_t rows, std::int64_t cols) {
    if (t.dim() == 2) return t;
    Shape full = batch;
    full.push_back(rows);
    full.push_back(cols);
    return t.expand(full).reshape({batch_numel, rows, cols});
  };
  Shape out_shape = batch;
  out_shape.push_back(n);
  out_shape.push_back(p);
  Tensor out = matmul(flattened(a2, n, k), flattened(b2, k, p)).reshape(out_shape);
  if (b.dim() == 1) out = out.squeeze(-1);
  if (a.dim() == 1) out = out.squeeze(b.dim() == 1 ? -1 : -2);
  return out;
}

}  // namespace

Tensor matmul(const Tensor& a_in, const Tensor& b_in) {
  LG_PROFILE_OP(a_in, b_in);
  const Tensor a = amp::autocast_operand(a_in, amp::CastPolicy::LowerPrecision);
  const Tensor b = amp::autocast_operand(b_in, amp::CastPolicy::LowerPrecision);
  // In matmul's name with the shapes given (the kernel would see a 1-d operand made a matrix).
  LG_CHECK_SHAPE(!a.defined() || !b.defined() || (a.dim() >= 1 && b.dim() >= 1),
                 "matmul: both operands need at least 1 dim, got shapes ", a.shape(), " and ",
                 b.shape());
  if (a.defined() && b.defined() && (a.dim() > 3 || b.dim() > 3)) return matmul_beyond_3d(a, b);
  // 1-D operands are matrices with a unit dim added (and removed from the result), so the
  // node below only sees 2-D and batched 3-D operands.
  if (a.defined() && b.defined() && (a.dim() == 1 || b.dim() == 1) &&
      autograd::any_requires_grad({&a, &b})) {
    const Tensor a2 = a.dim() == 1 ? a.unsqueeze(0) : a;
    const Tensor b2 = b.dim() == 1 ? b.unsqueeze(-1) : b;
    Tensor out = matmul(a2, b2);
    if (b.dim() == 1) out = out.squeeze(-1);
    if (a.dim() == 1) out = out.squeeze(out.dim() == 1 ? 0 : -2);
    return out;
  }
  return record_op("matmul", ops::matmul(a, b), {a, b}, {a, b},
                   [](const BackwardContext& c) -> std::vector<Tensor> {
                     const Tensor& x = c.saved[0];  // (B?, M, K)
                     const Tensor& y = c.saved[1];  // (B?, K, N)
                     Tensor gx, gy;
                     if (c.needs(0)) gx = sum_to(matmul(c.grad, y.transpose(-1, -2)), c.shape(0));
                     if (c.needs(1)) {
                       // A 2-D y stored transposed (linear's W^T) gets its gradient in that
                       // layout, (g^T x)^T: the transpose's backward then hands W's
                       // AccumulateGrad a contiguous gradient, which it keeps, instead of a
                       // transposed one it must copy (13% of the mlp step's instructions). The
                       // same sums in another layout, as PyTorch's mm backward does.
                       const bool y_transposed = y.dim() == 2 && c.shape(1).size() == 2 &&
                                                 !y.is_contiguous() &&
                                                 y.transpose(0, 1).is_contiguous();
                       gy = y_transposed ? matmul(c.grad.transpose(-1, -2), x).transpose(-1, -2)
                                         : sum_to(matmul(x.transpose(-1, -2), c.grad), c.shape(1));
                     }
                     return {gx, gy};
                   });
}

Tensor cat(const std::vector<Tensor>& tensors, std::int64_t dim) {
  LG_PROFILE_OP(tensors);
  const Tensor out = ops::cat(tensors, dim);
  if (!autograd::any_requires_grad(tensors)) return out;
  const std::int64_t d = wrap_dim(dim, out.dim(), "cat");
  return record_op("cat", out, tensors, {}, [d](const BackwardContext& c) -> std::vector<Tensor> {
    std::vector<Tensor> grads;
    std::int64_t offset = 0;
    for (const autograd::TensorMeta& in : c.inputs) {
      if (in.shape.size() == 1 && in.shape[0] == 0 && c.grad.dim() != 1) {
        grads.push_back(zeros(in.shape, c.grad.options()));  // a skipped legacy empty tensor
        continue;
      }
      const std::int64_t n = in.shape[d];
      grads.push_back(c.grad.slice(d, offset, offset + n));
      offset += n;
    }
    return grads;
  });
}

Tensor stack(const std::vector<Tensor>& tensors, std::int64_t dim) {
  LG_PROFILE_OP(tensors);
  LG_CHECK(!tensors.empty(), "stack: expected a non-empty list of tensors");
  const std::int64_t d = wrap_dim(dim, tensors[0].dim() + 1, "stack");
  std::vector<Tensor> expanded;
  expanded.reserve(tensors.size());
  for (const Tensor& t : tensors) {
    LG_CHECK_SHAPE(t.shape() == tensors[0].shape(), "stack: expected tensors of equal shape, got ",
                   tensors[0].shape(), " and ", t.shape());
    expanded.push_back(unsqueeze(t, d));
  }
  return cat(expanded, d);
}

// ---- Views and copies ------------------------------------------------------------------------
// A view's gradient is the gradient of the base, reshaped, permuted back or scattered into
// zeros; the view itself shares the base's storage as in the forward.

Tensor view(const Tensor& a, const Shape& shape) {
  LG_PROFILE_OP(a);
  return record_op(
      "view", views::view(a, shape), {a}, {},
      [](const BackwardContext& c) -> std::vector<Tensor> { return {c.grad.reshape(c.shape(0))}; });
}

Tensor reshape(const Tensor& a, const Shape& shape) {
  LG_PROFILE_OP(a);
  const Shape new_shape = views::infer_size(shape, a.numel(), "reshape");
  if (views::view_strides(a.shape(), a.strides(), new_shape)) return view(a, new_shape);
  return view(clone(a), new_shape);
}

Tensor permute(const Tensor& a, const std::vector<std::int64_t>& dims) {
  LG_PROFILE_OP(a);
  const Tensor out = views::permute(a, dims);
  std::vector<std::int64_t> inverse(dims.size());
  for (std::size_t i = 0; i < dims.size(); ++i) {
    inverse[static_cast<std::size_t>(wrap_dim(dims[i], a.dim(), "permute"))] =
        static_cast<std::int64_t>(i);
  }
  return record_op("permute", out, {a}, {},
                   [inverse](const BackwardContext& c) -> std::vector<Tensor> {
                     return {c.grad.permute(inverse)};
                   });
}

Tensor transpose(const Tensor& a, std::int64_t dim0, std::int64_t dim1) {
  LG_PROFILE_OP(a);
  return record_op("transpose", views::transpose(a, dim0, dim1), {a}, {},
                   [dim0, dim1](const BackwardContext& c) -> std::vector<Tensor> {
                     return {c.grad.transpose(dim0, dim1)};
                   });
}

namespace {

// The backward of slice and select: the gradient of the view placed into zeros of the input's
// shape. Recorded as an op of its own, whose backward takes the same view of its gradient, so
// that a gradient computed with create_graph differentiates again (a raw copy_ into zeros would
// drop the gradient's graph and give a silently wrong second derivative).
// `raw_view` is the plain view (no span, no graph) the copy writes through; `view` the
// differentiable one, which only a second derivative runs.
Tensor scatter_into_zeros(const char* op, const Tensor& grad, const Shape& input_shape,
                          const std::function<Tensor(const Tensor&)>& raw_view,
                          const std::function<Tensor(const Tensor&)>& view) {
  Tensor g = zeros(input_shape, grad.options());
  ops::copy_(raw_view(g), grad);
  return record_op(op, g, {grad}, {}, [view](const BackwardContext& c) -> std::vector<Tensor> {
    return {view(c.grad)};
  });
}

}  // namespace

Tensor slice(const Tensor& a, std::int64_t dim, std::int64_t start, std::int64_t end,
             std::int64_t step) {
  LG_PROFILE_OP(a);
  return record_op("slice", views::slice(a, dim, start, end, step), {a}, {},
                   [dim, start, end, step](const BackwardContext& c) -> std::vector<Tensor> {
                     return {scatter_into_zeros(
                         "slice_backward", c.grad, c.shape(0),
                         [=](const Tensor& t) { return views::slice(t, dim, start, end, step); },
                         [=](const Tensor& t) { return slice(t, dim, start, end, step); })};
                   });
}

Tensor select(const Tensor& a, std::int64_t dim, std::int64_t index) {
  LG_PROFILE_OP(a);
  return record_op("select", views::select(a, dim, index), {a}, {},
                   [dim, index](const BackwardContext& c) -> std::vector<Tensor> {
                     return {scatter_into_zeros(
                         "select_backward", c.grad, c.shape(0),
                         [=](const Tensor& t) { return views::select(t, dim, index); },
                         [=](const Tensor& t) { return select(t, dim, index); })};
                   });
}

Tensor unsqueeze(const Tensor& a, std::int64_t dim) {
  LG_PROFILE_OP(a);
  return record_op(
      "unsqueeze", views::unsqueeze(a, dim), {a}, {},
      [](const BackwardContext& c) -> std::vector<Tensor> { return {c.grad.reshape(c.shape(0))}; });
}

Tensor squeeze(const Tensor& a) {
  LG_PROFILE_OP(a);
  return record_op(
      "squeeze", views::squeeze(a), {a}, {},
      [](const BackwardContext& c) -> std::vector<Tensor> { return {c.grad.reshape(c.shape(0))}; });
}

Tensor squeeze(const Tensor& a, std::int64_t dim) {
  LG_PROFILE_OP(a);
  return record_op(
      "squeeze", views::squeeze(a, dim), {a}, {},
      [](const BackwardContext& c) -> std::vector<Tensor> { return {c.grad.reshape(c.shape(0))}; });
}

Tensor expand(const Tensor& a, const Shape& shape, const char* op) {
  LG_PROFILE_OP(a);
  return record_op(
      "expand", views::expand(a, shape, op), {a}, {},
      [](const BackwardContext& c) -> std::vector<Tensor> { return {sum_to(c.grad, c.shape(0))}; });
}

Tensor flatten(const Tensor& a, std::int64_t start_dim, std::int64_t end_dim) {
  LG_PROFILE_OP(a);
  if (a.dim() == 0) return reshape(a, {1});
  const std::int64_t start = wrap_dim(start_dim, a.dim(), "flatten");
  const std::int64_t end = wrap_dim(end_dim, a.dim(), "flatten");
  LG_CHECK_SHAPE(start <= end, "flatten: start_dim ", start_dim, " comes after end_dim ", end_dim,
                 " for shape ", a.shape());
  Shape shape(a.shape().begin(), a.shape().begin() + start);
  std::int64_t merged = 1;
  for (std::int64_t d = start; d <= end; ++d)
    merged *= a.shape()[d];
  shape.push_back(merged);
  shape.insert(shape.end(), a.shape().begin() + end + 1, a.shape().end());
  return reshape(a, shape);
}

Tensor unflatten(const Tensor& a, std::int64_t dim, const Shape& sizes) {
  LG_PROFILE_OP(a);
  LG_CHECK_SHAPE(a.dim() > 0, "unflatten: cannot unflatten a 0-d tensor");
  const std::int64_t d = wrap_dim(dim, a.dim(), "unflatten");
  LG_CHECK_SHAPE(!sizes.empty(), "unflatten: sizes must not be empty (shape ", a.shape(), ")");
  std::int64_t known = 1;
  int unknown = 0;
  for (const std::int64_t s : sizes) {
    LG_CHECK_SHAPE(s >= -1, "unflatten: sizes ", sizes, " hold ", s, ", below -1");
    if (s == -1) {
      ++unknown;
    } else {
      known = checked_mul(known, s, "unflatten");
    }
  }
  LG_CHECK_SHAPE(unknown <= 1, "unflatten: sizes ", sizes, " hold more than one -1");
  const std::int64_t size = a.shape()[d];
  LG_CHECK_SHAPE(unknown == 1 ? (known > 0 && size % known == 0) : known == size,
                 "unflatten: sizes ", sizes, " do not split dim ", dim, " of size ", size,
                 " (shape ", a.shape(), ")");
  Shape shape(a.shape().begin(), a.shape().begin() + d);
  for (const std::int64_t s : sizes)
    shape.push_back(s == -1 ? size / known : s);
  shape.insert(shape.end(), a.shape().begin() + d + 1, a.shape().end());
  return reshape(a, shape);
}

Tensor clone(const Tensor& a) {
  LG_PROFILE_OP(a);
  Tensor out = empty(a.shape(), a.options());
  ops::copy_(out, a);
  return record_op("clone", out, {a}, {},
                   [](const BackwardContext& c) -> std::vector<Tensor> { return {c.grad}; });
}

Tensor to(const Tensor& a, Device device, DType dtype, bool non_blocking) {
  LG_PROFILE_OP(a);
  if (a.device() == device && a.dtype() == dtype) return a;
  // A non_blocking copy to the host lands in pinned memory, so it can really be asynchronous.
  const bool pinned = non_blocking && device.is_cpu() && a.is_cuda();
  Tensor out =
      empty_for("to", a.shape(), TensorOptions(dtype).device(device).pinned_memory(pinned));
  ops::copy_(out, a, non_blocking);
  // The node casts the gradient back to a's dtype and device.
  return record_op("to", out, {a}, {},
                   [](const BackwardContext& c) -> std::vector<Tensor> { return {c.grad}; });
}

}  // namespace leangrad

// ---- LibTorch's other tensor functions, composed from the ones above -------------------------
// Each is written with differentiable functions, so its gradient is theirs (checked by the
// gradchecks of tests/autograd/test_tensor_api.cpp).

namespace leangrad {

namespace {

// A 0-d tensor holding `value` with a's dtype and device: the scalar operand of where.
Tensor scalar_like(const Tensor& a, double value) {
  return full({}, value, a.options());
}

// A strictly decreasing map of a's values onto values of the same dtype, exact and without
// overflow, so that max and argmax of it are min and argmin of a: -a for floating dtypes (NaN
// stays NaN, so it still wins, as min propagates NaN), -1 - a (the bitwise complement) for
// signed integers, 255 - a for uint8. Bool has no arithmetic: it maps as its uint8 copy does, and
// order_restored casts the values back.
Tensor order_reversed(const Tensor& a, const char* op) {
  switch (a.dtype()) {
    case DType::Int64:
    case DType::Int32:
      return rsub(a, -1.0);
    case DType::UInt8:
      return rsub(a, 255.0);
    case DType::Bool:
      return rsub(a.to(DType::UInt8), 255.0);
    default:
      LG_CHECK_DTYPE(is_floating(a.dtype()), op, ": unsupported dtype ", a.dtype());
      return neg(a);
  }
}

// The values of a min taken as the max of order_reversed(a): the map undone, in a's dtype.
Tensor order_restored(const Tensor& values, const Tensor& a, const char* op) {
  const Tensor restored = order_reversed(values, op);
  return restored.dtype() == a.dtype() ? restored : restored.to(a.dtype());
}

}  // namespace

Tensor square(const Tensor& a) {
  LG_PROFILE_OP(a);
  return mul(a, a);
}

Tensor clamp(const Tensor& a, std::optional<double> min, std::optional<double> max) {
  LG_PROFILE_OP(a);
  LG_CHECK(min.has_value() || max.has_value(),
           "clamp: at least one of min and max must be given (shape ", a.shape(), ")");
  LG_CHECK_DTYPE(a.dtype() != DType::Bool, "clamp: unsupported dtype bool");
  // The result dtype is that of `a op bound` (Note [Elementwise dtype rules]): an integral tensor
  // with a non-integral bound gives float32, as PyTorch's result_type of Tensor and Scalar.
  const auto fractional = [](std::optional<double> bound) {
    return bound.has_value() && !(std::isfinite(*bound) && std::trunc(*bound) == *bound);
  };
  const Tensor x =
      !is_floating(a.dtype()) && (fractional(min) || fractional(max)) ? a.to(kFloat32) : a;
  for (const std::optional<double>& bound : {min, max}) {
    LG_CHECK(!bound.has_value() || scalar_fits(*bound, x.dtype()), "clamp: bound ", *bound,
             " cannot be converted to dtype ", x.dtype(), " without overflow");
  }
  // One pass (ops::activation), the bits of where(x < lo, lo, x), then where(that > hi, hi,
  // that), the bounds rounded to x's dtype; a NaN passes both selects. The gradient passes where
  // lo <= x <= hi, bounds included, and is 0 for a NaN x (PyTorch's mask is false for it).
  const double nan = std::numeric_limits<double>::quiet_NaN();
  return autograd::fused_clamp(x, min.value_or(nan), max.value_or(nan));
}

Tensor clamp_min(const Tensor& a, double min) {
  LG_PROFILE_OP(a);
  return clamp(a, min, std::nullopt);
}

Tensor clamp_max(const Tensor& a, double max) {
  LG_PROFILE_OP(a);
  return clamp(a, std::nullopt, max);
}

Tensor masked_fill(const Tensor& a, const Tensor& mask, const Tensor& value) {
  LG_PROFILE_OP(a, mask, value);
  LG_CHECK_DTYPE(mask.dtype() == DType::Bool, "masked_fill: the mask must be bool, got ",
                 mask.dtype(), " (shape ", mask.shape(), ")");
  LG_CHECK_SHAPE(value.dim() == 0, "masked_fill: the value must be a 0-d tensor, got shape ",
                 value.shape());
  LG_CHECK_DEVICE(value.device() == a.device() || value.device().is_cpu(),
                  "masked_fill: the value is on ", value.device(), ", the tensor on ", a.device());
  broadcast_shapes(a.shape(), mask.shape(), "masked_fill");  // named here, not by where
  return where(mask, value.to(a.device()).to(a.dtype()), a);
}

Tensor masked_fill(const Tensor& a, const Tensor& mask, double value) {
  LG_PROFILE_OP(a, mask);
  LG_CHECK(scalar_fits(value, a.dtype()), "masked_fill: value ", value,
           " cannot be converted to dtype ", a.dtype(), " without overflow");
  return masked_fill(a, mask, scalar_like(a, value));
}

Tensor isposinf(const Tensor& a) {
  LG_PROFILE_OP(a);
  LG_CHECK(a.defined(), "isposinf: expected a defined tensor");
  if (!is_floating(a.dtype())) return zeros(a.shape(), TensorOptions(kBool).device(a.device()));
  return eq(a, std::numeric_limits<double>::infinity());
}

Tensor isneginf(const Tensor& a) {
  LG_PROFILE_OP(a);
  LG_CHECK(a.defined(), "isneginf: expected a defined tensor");
  if (!is_floating(a.dtype())) return zeros(a.shape(), TensorOptions(kBool).device(a.device()));
  return eq(a, -std::numeric_limits<double>::infinity());
}

Tensor isclose(const Tensor& a_in, const Tensor& b_in, double rtol, double atol, bool equal_nan) {
  LG_PROFILE_OP(a_in, b_in);
  const char* op = "isclose";
  LG_CHECK(a_in.defined() && b_in.defined(), op, ": expected two defined tensors");
  LG_CHECK_DTYPE(a_in.dtype() == b_in.dtype(), op, ": expected a and b of one dtype, got ",
                 a_in.dtype(), " and ", b_in.dtype());
  LG_CHECK(rtol >= 0 && atol >= 0, op, ": rtol and atol must be >= 0, got ", rtol, " and ", atol);
  NoGradGuard no_grad;
  const bool floating = is_floating(a_in.dtype());
  const Tensor a = floating ? a_in : a_in.to(kFloat32);
  const Tensor b = floating ? b_in : b_in.to(kFloat32);
  // Equality of the operands themselves: integers beyond 2^24 that differ may round to one float.
  Tensor close = eq(a_in, b_in);
  if (equal_nan) close = logical_or(close, logical_and(isnan(a), isnan(b)));
  if (rtol == 0 && atol == 0) return close;
  const Tensor allowed = add(abs(mul(b, rtol)), atol);
  const Tensor actual = abs(sub(a, b));
  return logical_or(close, logical_and(isfinite(actual), le(actual, allowed)));
}

Tensor isin(const Tensor& elements, const Tensor& test_elements, bool /*assume_unique*/,
            bool invert) {
  LG_PROFILE_OP(elements, test_elements);
  const char* op = "isin";
  LG_CHECK(elements.defined() && test_elements.defined(), op, ": expected two defined tensors");
  LG_CHECK_DEVICE(elements.device() == test_elements.device(), op,
                  ": expected elements and test_elements on one device, got ", elements.device(),
                  " and ", test_elements.device());
  NoGradGuard no_grad;
  const Tensor flat = elements.reshape({-1});
  const Tensor tests = test_elements.reshape({1, -1});
  // The comparisons are (elements, tests) bools: taken in chunks of elements of at most 2^24.
  constexpr std::int64_t kComparisonsPerChunk = std::int64_t{1} << 24;
  const std::int64_t chunk =
      std::max<std::int64_t>(1, kComparisonsPerChunk / std::max<std::int64_t>(tests.numel(), 1));
  std::vector<Tensor> parts;
  for (std::int64_t first = 0; first < flat.numel(); first += chunk) {
    const std::int64_t count = std::min(chunk, flat.numel() - first);
    parts.push_back(any(eq(flat.narrow(0, first, count).unsqueeze(1), tests), {1}));
  }
  Tensor found = parts.empty()       ? zeros({0}, TensorOptions(kBool).device(elements.device()))
                 : parts.size() == 1 ? parts.front()
                                     : cat(parts, 0);
  found = found.reshape(elements.shape());
  return invert ? logical_not(found) : found;
}

bool allclose(const Tensor& a, const Tensor& b, double rtol, double atol, bool equal_nan) {
  LG_PROFILE_OP(a, b);
  LG_CHECK(rtol >= 0 && atol >= 0, "allclose: rtol and atol must be >= 0, got ", rtol, " and ",
           atol);
  NoGradGuard no_grad;
  const Tensor x = a.to(DType::Float64);
  const Tensor y = b.to(DType::Float64);
  // 1 where close: both finite and within the tolerance, or equal (equal infinities), or both
  // NaN if asked. (v - v is 0 exactly when v is finite; an infinity would pass inf <= inf.)
  const auto finite = [](const Tensor& v) { return eq(sub(v, v), 0.0).to(DType::Float64); };
  Tensor close = le(abs(sub(x, y)), add(mul(abs(y), rtol), atol)).to(DType::Float64);
  close = mul(mul(close, finite(x)), finite(y));
  close = maximum(close, eq(x, y).to(DType::Float64));
  if (equal_nan)
    close = maximum(close, mul(ne(x, x).to(DType::Float64), ne(y, y).to(DType::Float64)));
  return close.numel() == 0 || min(close).item<double>() == 1.0;
}

bool equal(const Tensor& a, const Tensor& b) {
  LG_PROFILE_OP(a, b);
  if (a.shape() != b.shape()) return false;
  if (a.numel() == 0) return true;
  NoGradGuard no_grad;
  return min(eq(a, b).to(DType::UInt8)).item<std::int64_t>() == 1;
}

std::tuple<Tensor, Tensor> max(const Tensor& a, std::int64_t dim, bool keepdim) {
  LG_PROFILE_OP(a);
  const Tensor values = ops::reduce(ReduceOp::Max, a, {dim}, keepdim);
  const Tensor indices = argmax(a, dim, keepdim);
  if (!autograd::any_requires_grad({&a})) return {values, indices};
  const std::vector<std::int64_t> reduced = reduction_dims("max", a, {dim});
  return {record_op("max", values, {a}, {indices},
                    [reduced](const BackwardContext& c) { return selected_backward(c, reduced); }),
          indices};
}

std::tuple<Tensor, Tensor> min(const Tensor& a, std::int64_t dim, bool keepdim) {
  LG_PROFILE_OP(a);
  const auto [values, indices] = max(order_reversed(a, "min"), dim, keepdim);
  return {order_restored(values, a, "min"), indices};
}

Tensor amax(const Tensor& a, const std::vector<std::int64_t>& dims, bool keepdim) {
  LG_PROFILE_OP(a);
  return max_reduction("amax", a, dims, keepdim, NanMaximum::NanGradients);
}

Tensor amin(const Tensor& a, const std::vector<std::int64_t>& dims, bool keepdim) {
  LG_PROFILE_OP(a);
  return max_reduction("amin", a, dims, keepdim, NanMaximum::NanGradients, ReduceOp::Min);
}

Tensor min(const Tensor& a) {
  LG_PROFILE_OP(a);
  return max_reduction("min", a, {}, false, NanMaximum::SplitAmongNans, ReduceOp::Min);
}

Tensor argmin(const Tensor& a) {
  LG_PROFILE_OP(a);
  return argmax(order_reversed(a, "argmin"));
}

Tensor argmin(const Tensor& a, std::int64_t dim, bool keepdim) {
  LG_PROFILE_OP(a);
  return argmax(order_reversed(a, "argmin"), dim, keepdim);
}

namespace {

// The variance of a float32 or float64 tensor in two passes: the mean, then the sum of squared
// deviations from it (no cancellation). The divisor N - 1 (unbiased) or N is clamped at 0, as
// PyTorch's: one element with unbiased, and no element at all, divide 0 by 0: NaN.
Tensor two_pass_variance(const char* op, const Tensor& a, const DimList& dims, bool unbiased,
                         bool keepdim) {
  std::int64_t count = 1;
  for (std::int64_t d : reduction_dims(op, a, dims))
    count *= a.shape()[static_cast<std::size_t>(d)];
  const Tensor centred = sub(a, mean(a, dims, /*keepdim=*/true));
  const Tensor squares = sum(mul(centred, centred), dims, keepdim);
  const std::int64_t divisor = std::max<std::int64_t>(count - (unbiased ? 1 : 0), 0);
  return div(squares, static_cast<double>(divisor));
}

}  // namespace

Tensor var(const Tensor& a, const DimList& dims, bool unbiased, bool keepdim) {
  LG_PROFILE_OP(a);
  LG_CHECK_DTYPE(is_floating(a.dtype()), "var: expected a floating dtype, got ", a.dtype(),
                 " (shape ", a.shape(), ")");
  return in_working_precision(
      a, [&](const Tensor& x) { return two_pass_variance("var", x, dims, unbiased, keepdim); });
}

Tensor std(const Tensor& a, const DimList& dims, bool unbiased, bool keepdim) {
  LG_PROFILE_OP(a);
  LG_CHECK_DTYPE(is_floating(a.dtype()), "std: expected a floating dtype, got ", a.dtype(),
                 " (shape ", a.shape(), ")");
  return in_working_precision(a, [&](const Tensor& x) {
    // The root with no gradient where the variance is 0, as PyTorch's std_backward (which masks
    // grad / (2 std) there): a constant slice's variance has a zero gradient, and sqrt's infinite
    // derivative times it was NaN. The zeros go through where twice, so that no branch computes
    // sqrt's derivative at 0 (second derivatives included).
    const Tensor variance = two_pass_variance("std", x, dims, unbiased, keepdim);
    const Tensor zero = eq(variance, 0.0);
    return where(zero, scalar_like(variance, 0.0),
                 sqrt(where(zero, scalar_like(variance, 1.0), variance)));
  });
}

Tensor mm(const Tensor& a, const Tensor& b) {
  LG_PROFILE_OP(a, b);
  LG_CHECK_SHAPE(a.dim() == 2 && b.dim() == 2, "mm: expected two matrices, got shapes ", a.shape(),
                 " and ", b.shape(), " (matmul takes other dims)");
  return matmul(a, b);
}

Tensor bmm(const Tensor& a, const Tensor& b) {
  LG_PROFILE_OP(a, b);
  LG_CHECK(a.defined() && b.defined(), "bmm: expected two defined tensors");
  LG_CHECK_SHAPE(a.dim() == 3 && b.dim() == 3 && a.size(0) == b.size(0), "bmm: expected two ",
                 "batches of matrices of one batch size, got shapes ", a.shape(), " and ",
                 b.shape(), " (matmul broadcasts batches)");
  return matmul(a, b);
}

Tensor dot(const Tensor& a, const Tensor& b) {
  LG_PROFILE_OP(a, b);
  LG_CHECK(a.defined() && b.defined(), "dot: expected two defined tensors");
  LG_CHECK_SHAPE(a.dim() == 1 && b.dim() == 1 && a.size(0) == b.size(0),
                 "dot: expected two 1-d tensors of one size, got shapes ", a.shape(), " and ",
                 b.shape());
  LG_CHECK_DTYPE(a.dtype() == b.dtype(), "dot: expected one dtype, got ", a.dtype(), " and ",
                 b.dtype());
  return matmul(a, b);
}

Tensor outer(const Tensor& a, const Tensor& b) {
  LG_PROFILE_OP(a, b);
  LG_CHECK(a.defined() && b.defined(), "outer: expected two defined tensors");
  LG_CHECK_SHAPE(a.dim() == 1 && b.dim() == 1, "outer: expected two 1-d tensors, got shapes ",
                 a.shape(), " and ", b.shape());
  return mul(unsqueeze(a, 1), unsqueeze(b, 0));
}

// ---- Tests, logic, nan_to_num ---------------------------------------------------------------

Tensor isnan(const Tensor& a) {
  LG_PROFILE_OP(a);
  LG_CHECK(a.defined(), "isnan: expected a defined tensor");
  if (!is_floating(a.dtype())) return zeros(a.shape(), TensorOptions(kBool).device(a.device()));
  return ne(a, a);
}

Tensor isinf(const Tensor& a) {
  LG_PROFILE_OP(a);
  LG_CHECK(a.defined(), "isinf: expected a defined tensor");
  if (!is_floating(a.dtype())) return zeros(a.shape(), TensorOptions(kBool).device(a.device()));
  return eq(abs(a), std::numeric_limits<double>::infinity());
}

Tensor isfinite(const Tensor& a) {
  LG_PROFILE_OP(a);
  LG_CHECK(a.defined(), "isfinite: expected a defined tensor");
  if (!is_floating(a.dtype())) return ones(a.shape(), TensorOptions(kBool).device(a.device()));
  // |a| < inf is false for NaN and the infinities.
  return lt(abs(a), std::numeric_limits<double>::infinity());
}

Tensor logical_not(const Tensor& a) {
  LG_PROFILE_OP(a);
  LG_CHECK(a.defined(), "logical_not: expected a defined tensor");
  return eq(a, 0.0);
}

Tensor logical_and(const Tensor& a, const Tensor& b) {
  LG_PROFILE_OP(a, b);
  LG_CHECK(a.defined() && b.defined(), "logical_and: expected two defined tensors");
  return where(ne(a, 0.0), ne(b, 0.0), zeros({}, TensorOptions(kBool).device(a.device())));
}

Tensor logical_or(const Tensor& a, const Tensor& b) {
  LG_PROFILE_OP(a, b);
  LG_CHECK(a.defined() && b.defined(), "logical_or: expected two defined tensors");
  return where(ne(a, 0.0), ones({}, TensorOptions(kBool).device(a.device())), ne(b, 0.0));
}

Tensor logical_xor(const Tensor& a, const Tensor& b) {
  LG_PROFILE_OP(a, b);
  LG_CHECK(a.defined() && b.defined(), "logical_xor: expected two defined tensors");
  return ne(ne(a, 0.0), ne(b, 0.0));
}

namespace {

// The number of elements of `a` equal to 0 (zero_count) or not, over dims, as int64.
Tensor count_over(const char* op, const Tensor& a, const DimList& dims, bool keepdim,
                  bool non_zero) {
  LG_CHECK(a.defined(), op, ": expected a defined tensor");
  for (const std::int64_t d : dims)
    wrap_dim(d, a.dim(), op);
  return sum(non_zero ? ne(a, 0.0) : eq(a, 0.0), dims, keepdim);
}

// all's and any's result: bool, but uint8 for a uint8 input, as PyTorch's.
Tensor truth_of(const Tensor& a, const Tensor& truth) {
  return a.dtype() == kUInt8 ? truth.to(kUInt8) : truth;
}

}  // namespace

Tensor all(const Tensor& a, const DimList& dims, bool keepdim) {
  LG_PROFILE_OP(a);
  return truth_of(a, eq(count_over("all", a, dims, keepdim, /*non_zero=*/false), 0.0));
}

Tensor any(const Tensor& a, const DimList& dims, bool keepdim) {
  LG_PROFILE_OP(a);
  return truth_of(a, gt(count_over("any", a, dims, keepdim, /*non_zero=*/true), 0.0));
}

Tensor nan_to_num(const Tensor& a, double nan, std::optional<double> posinf,
                  std::optional<double> neginf) {
  LG_PROFILE_OP(a);
  LG_CHECK(a.defined(), "nan_to_num: expected a defined tensor");
  if (!is_floating(a.dtype())) return clone(a);
  const double largest = dtype_max(a.dtype());
  const double high = posinf.value_or(largest), low = neginf.value_or(-largest);
  // With the infinities' replacements the dtype's extremes (the defaults), every finite value
  // lies between them, so they are clamp's bounds: a clamp (which keeps NaN) and a where for the
  // NaNs, three passes where the general form below takes six (3.5 -> 1.7 ms for a (2048, 2048)
  // float32 on one thread); the same values, and the same gradient (the upstream one where x is
  // finite, else 0: clamp's outside its bounds, where's at the NaNs). Replacements beyond the
  // extremes round to infinity in the dtype, which a clamp's bounds may not.
  if (high == largest && low == -largest)
    return where(ne(a, a), scalar_like(a, nan), clamp(a, low, high));
  const double inf = std::numeric_limits<double>::infinity();
  Tensor out = where(ne(a, a), scalar_like(a, nan), a);
  out = where(eq(a, inf), scalar_like(a, posinf.value_or(largest)), out);
  return where(eq(a, -inf), scalar_like(a, neginf.value_or(-largest)), out);
}

// ---- Sorting ----------------------------------------------------------------------------------

std::tuple<Tensor, Tensor> sort(const Tensor& a, std::int64_t dim, bool descending) {
  LG_PROFILE_OP(a);
  // Checked in sort's name (the kernel names argsort).
  LG_CHECK(a.defined(), "sort: expected a defined input, got an undefined Tensor()");
  wrap_dim(dim, a.dim(), "sort");
  Tensor indices = ops::argsort(a, dim, descending);
  return {gather(a, dim, indices), indices};
}

Tensor argsort(const Tensor& a, std::int64_t dim, bool descending) {
  LG_PROFILE_OP(a);
  return ops::argsort(a, dim, descending);
}

std::tuple<Tensor, Tensor> topk(const Tensor& a, std::int64_t k, std::int64_t dim, bool largest,
                                bool /*sorted*/) {
  LG_PROFILE_OP(a);
  LG_CHECK(a.defined(), "topk: expected a defined tensor");
  const std::int64_t d = wrap_dim(dim, a.dim(), "topk");
  const std::int64_t size = a.dim() == 0 ? 1 : a.size(d);
  LG_CHECK(k >= 0 && k <= size, "topk: k ", k, " is out of range for dim ", d, " of size ", size,
           " (expected [0, ", size, "])");
  Tensor indices = ops::argsort(a, d, largest, k);
  return {gather(a, d, indices), indices};
}

Tensor t(const Tensor& a) {
  LG_PROFILE_OP(a);
  LG_CHECK_SHAPE(a.dim() <= 2, "t: expected a tensor of at most 2 dims, got shape ", a.shape(),
                 " (use transpose(dim0, dim1))");
  return a.dim() == 2 ? transpose(a, 0, 1) : view(a, a.shape());
}

}  // namespace leangrad
