// The special functions of autograd/special_functions.h: each an elementwise kernel
// (kernels/special_math.h: Note [Digamma], Note [Hurwitz zeta], Note [Inverse error function])
// recorded with its derivative, written with these same functions so that it differentiates
// again: lgamma' = digamma, digamma' = polygamma(1, .), polygamma(n, .)' = polygamma(n + 1, .)
// (through zeta's derivative in q), erfinv' = sqrt(pi)/2 exp(erfinv^2) from the output.
#include <leangrad/autograd/special_functions.h>

#include <cmath>
#include <vector>

#include <leangrad/autograd/autocast.h>
#include <leangrad/autograd/functions.h>
#include <leangrad/autograd/graph.h>
#include <leangrad/autograd/nn_internal.h>
#include <leangrad/autograd/reduction_functions.h>
#include <leangrad/autograd/shape_functions.h>
#include <leangrad/core/error.h>
#include <leangrad/core/profiler.h>
#include <leangrad/kernels/creation.h>
#include <leangrad/kernels/ops.h>

namespace leangrad {

using autograd::BackwardContext;
using autograd::record_op;

Tensor lgamma(const Tensor& x) {
  LG_PROFILE_OP(x);
  return record_op("lgamma", ops::unary(UnaryOp::Lgamma, x), {x}, {x},
                   [](const BackwardContext& c) -> std::vector<Tensor> {
                     return {mul(c.grad, digamma(c.saved[0]))};
                   });
}

Tensor digamma(const Tensor& x) {
  LG_PROFILE_OP(x);
  return record_op("digamma", ops::unary(UnaryOp::Digamma, x), {x}, {x},
                   [](const BackwardContext& c) -> std::vector<Tensor> {
                     return {mul(c.grad, polygamma(1, c.saved[0]))};
                   });
}

Tensor polygamma(std::int64_t n, const Tensor& x) {
  LG_PROFILE_OP(x);
  LG_CHECK(n >= 0, "polygamma: expected n >= 0, got ", n);
  LG_CHECK(x.defined(), "polygamma: expected a defined input, got an undefined Tensor()");
  if (n == 0) return digamma(x);
  // (-1)^(n+1) n!: +-inf past n = 170, as the value itself there.
  double factor = 1.0;
  for (std::int64_t k = 2; k <= n; ++k)
    factor *= static_cast<double>(k);
  if (n % 2 == 0) factor = -factor;
  return mul(special_zeta(static_cast<double>(n + 1), x), factor);
}

Tensor mvlgamma(const Tensor& x_in, std::int64_t p) {
  LG_PROFILE_OP(x_in);
  const char* op = "mvlgamma";
  LG_CHECK(x_in.defined(), op, ": expected a defined input, got an undefined Tensor()");
  LG_CHECK(p >= 1, op, ": expected p >= 1, got ", p);
  const Tensor x = is_floating(x_in.dtype()) ? x_in : x_in.to(kFloat32);
  const double bound = static_cast<double>(p - 1) / 2;
  LG_CHECK(all(gt(x.detach(), bound)).item<bool>(), op, ": every element must be greater than ",
           "(p - 1) / 2 = ", bound, " (p = ", p, ", input of shape ", x.shape(), ")");
  const Tensor halves = mul(arange(static_cast<double>(p), x.options()), 0.5);
  const double constant =
      static_cast<double>(p) * static_cast<double>(p - 1) / 4.0 * std::log(3.14159265358979323846);
  return add(sum(lgamma(sub(unsqueeze(x, -1), halves)), {-1}), constant);
}

Tensor erfinv(const Tensor& y_in) {
  LG_PROFILE_OP(y_in);
  const Tensor y = amp::autocast_operand(y_in, amp::CastPolicy::Float32);
  const Tensor out = ops::unary(UnaryOp::Erfinv, y);
  return record_op("erfinv", out, {y}, {out}, [](const BackwardContext& c) -> std::vector<Tensor> {
    const Tensor& x = c.saved[0];
    return {mul(c.grad, mul(exp(mul(x, x)), 0.88622692545275801))};  // sqrt(pi) / 2
  });
}

namespace {

// zeta's backward for x (refused) and q: -x zeta(x + 1, q), summed to q's shape.
Tensor zeta_q_gradient(const Tensor& g, const Tensor& x, const Tensor& q, const Shape& q_shape) {
  return autograd::sum_to(mul(g, neg(mul(x, special_zeta(add(x, 1.0), q)))), q_shape);
}

[[noreturn]] void refuse_x_gradient() {
  LG_THROW(Error, "special_zeta: the derivative with respect to x (the exponent) is not ",
           "implemented (nor in PyTorch); detach x, or let only q require grad");
}

}  // namespace

Tensor special_zeta(const Tensor& x, const Tensor& q) {
  LG_PROFILE_OP(x, q);
  return record_op("special_zeta", ops::binary(BinaryOp::Zeta, x, q), {x, q}, {x, q},
                   [](const BackwardContext& c) -> std::vector<Tensor> {
                     if (c.needs(0)) refuse_x_gradient();
                     return {Tensor(), zeta_q_gradient(c.grad, c.saved[0], c.saved[1], c.shape(1))};
                   });
}

Tensor special_zeta(const Tensor& x, double q) {
  LG_PROFILE_OP(x);
  return record_op("special_zeta", ops::binary(BinaryOp::Zeta, x, q), {x}, {},
                   [](const BackwardContext&) -> std::vector<Tensor> { refuse_x_gradient(); });
}

Tensor special_zeta(double x, const Tensor& q) {
  LG_PROFILE_OP(q);
  return record_op("special_zeta", ops::binary(BinaryOp::Zeta, q, x, /*scalar_first=*/true), {q},
                   {q}, [x](const BackwardContext& c) -> std::vector<Tensor> {
                     const Tensor& q_saved = c.saved[0];
                     return {mul(mul(c.grad, special_zeta(x + 1.0, q_saved)), -x)};
                   });
}

}  // namespace leangrad
