// The orthogonal polynomials of autograd/orthogonal_polynomials.h: the dtype, broadcasting and
// degree checks here, the values and slopes from ops::orthogonal_polynomial (kernels/
// orthogonal_polynomials.h, Note [Orthogonal polynomials]), recorded with the gradient
// g * p'_n(x) in x.
#include <leangrad/autograd/orthogonal_polynomials.h>

#include <cstdint>
#include <vector>

#include <leangrad/autograd/functions.h>
#include <leangrad/autograd/grad_mode.h>
#include <leangrad/autograd/graph.h>
#include <leangrad/autograd/nn_internal.h>
#include <leangrad/core/error.h>
#include <leangrad/core/profiler.h>
#include <leangrad/kernels/creation.h>
#include <leangrad/kernels/ops.h>
#include <leangrad/kernels/orthogonal_polynomials.h>
#include <leangrad/kernels/result_type.h>

namespace leangrad {

namespace {

using autograd::BackwardContext;
using kernels::orthogonal_polynomials::kMaxRecurrenceDegree;
using P = OrthogonalPolynomial;

DType floating_or_float32(DType d) {
  return is_floating(d) ? d : kFloat32;
}

// p_n(x), or p'_n(x) with slope, without a graph: x and n in `dtype`, broadcast together.
Tensor evaluate(P p, const Tensor& x, const Tensor& n, DType dtype, bool slope) {
  const char* op = op_name(p);
  const NoGradGuard no_grad;
  const Shape shape = broadcast_shapes(x.shape(), n.shape(), op);
  const Tensor xs = expand(x.detach().to(dtype), shape);
  const Tensor ns = expand(n.detach().to(dtype), shape);
  if (kernels::orthogonal_polynomials::runs_degree_long_recurrence(p, slope) && ns.numel() > 0) {
    const auto limit = static_cast<std::int64_t>(kMaxRecurrenceDegree);
    LG_CHECK(!any(gt(ns, kMaxRecurrenceDegree)).item<bool>(), op, ": a degree above 2^20 = ", limit,
             " (in n of shape ", n.shape(), "); ",
             slope ? "the gradient runs" : "Laguerre and Legendre polynomials run",
             " n steps of the recurrence");
  }
  return ops::orthogonal_polynomial(p, xs, ns, slope);
}

// The op of x (defined) and n (defined) in `dtype`, recorded for x's gradient.
Tensor polynomial(P p, const Tensor& x, const Tensor& n, DType dtype) {
  const char* op = op_name(p);
  LG_CHECK_DEVICE(x.device() == n.device(), op, ": expected the input and the degree on one ",
                  "device, got ", x.device(), " and ", n.device());
  return autograd::record_op(
      op, evaluate(p, x, n, dtype, /*slope=*/false), {x}, {x, n},
      [p, dtype](const BackwardContext& c) -> std::vector<Tensor> {
        const Tensor& x_saved = c.saved[0];
        const Tensor slope = evaluate(p, x_saved, c.saved[1], dtype, /*slope=*/true);
        return {autograd::sum_to(mul(c.grad, slope), c.shape(0))};
      },
      autograd::DoubleBackward::NotImplemented);
}

Tensor polynomial(P p, const Tensor& x, const Tensor& n) {
  LG_PROFILE_OP(x, n);
  const char* op = op_name(p);
  LG_CHECK(x.defined(), op, ": expected a defined input, got an undefined Tensor()");
  LG_CHECK(n.defined(), op, ": expected a defined degree, got an undefined Tensor()");
  return polynomial(p, x, n, floating_or_float32(ops::result_type(x, n)));
}

Tensor polynomial(P p, const Tensor& x, double n) {
  LG_PROFILE_OP(x);
  LG_CHECK(x.defined(), op_name(p), ": expected a defined input, got an undefined Tensor()");
  const Tensor degree = scalar_tensor(n, TensorOptions(kFloat64).device(x.device()));
  return polynomial(p, x, degree, floating_or_float32(ops::scalar_result_dtype(x.dtype(), n)));
}

Tensor polynomial(P p, double x, const Tensor& n) {
  LG_PROFILE_OP(n);
  LG_CHECK(n.defined(), op_name(p), ": expected a defined degree, got an undefined Tensor()");
  const Tensor point = scalar_tensor(x, TensorOptions(kFloat64).device(n.device()));
  return polynomial(p, point, n, floating_or_float32(ops::scalar_result_dtype(n.dtype(), x)));
}

}  // namespace

// The three overloads of each public name.
#define LG_ORTHOGONAL_POLYNOMIAL(name, family)    \
  Tensor name(const Tensor& x, const Tensor& n) { \
    return polynomial(P::family, x, n);           \
  }                                               \
  Tensor name(const Tensor& x, double n) {        \
    return polynomial(P::family, x, n);           \
  }                                               \
  Tensor name(double x, const Tensor& n) {        \
    return polynomial(P::family, x, n);           \
  }

LG_ORTHOGONAL_POLYNOMIAL(special_chebyshev_polynomial_t, ChebyshevT)
LG_ORTHOGONAL_POLYNOMIAL(special_chebyshev_polynomial_u, ChebyshevU)
LG_ORTHOGONAL_POLYNOMIAL(special_chebyshev_polynomial_v, ChebyshevV)
LG_ORTHOGONAL_POLYNOMIAL(special_chebyshev_polynomial_w, ChebyshevW)
LG_ORTHOGONAL_POLYNOMIAL(special_shifted_chebyshev_polynomial_t, ShiftedChebyshevT)
LG_ORTHOGONAL_POLYNOMIAL(special_shifted_chebyshev_polynomial_u, ShiftedChebyshevU)
LG_ORTHOGONAL_POLYNOMIAL(special_shifted_chebyshev_polynomial_v, ShiftedChebyshevV)
LG_ORTHOGONAL_POLYNOMIAL(special_shifted_chebyshev_polynomial_w, ShiftedChebyshevW)
LG_ORTHOGONAL_POLYNOMIAL(special_hermite_polynomial_h, HermiteH)
LG_ORTHOGONAL_POLYNOMIAL(special_hermite_polynomial_he, HermiteHe)
LG_ORTHOGONAL_POLYNOMIAL(special_laguerre_polynomial_l, LaguerreL)
LG_ORTHOGONAL_POLYNOMIAL(special_legendre_polynomial_p, LegendreP)

#undef LG_ORTHOGONAL_POLYNOMIAL

}  // namespace leangrad
