// The special functions of autograd/special_functions.h: each an elementwise kernel
// (kernels/special_math.h: Note [Digamma], Note [Hurwitz zeta], Note [Inverse error function])
// recorded with its derivative, written with these same functions so that it differentiates
// again: lgamma' = digamma, digamma' = polygamma(1, .), polygamma(n, .)' = polygamma(n + 1, .)
// (through zeta's derivative in q), erfinv' = sqrt(pi)/2 exp(erfinv^2) from the output.
#include <leangrad/autograd/special_functions.h>

#include <cmath>
#include <limits>
#include <optional>
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
using autograd::floating_or_float32;
using autograd::record_op;
using autograd::sum_to;

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
  const Tensor x = floating_or_float32(x_in);
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

namespace {

constexpr double kTwoOverSqrtPi = 1.12837916709551257390;
constexpr double kSqrtTwo = 1.41421356237309504880;
constexpr double kInvSqrtTwoPi = 0.39894228040143267794;
constexpr double kSqrtTwoPi = 2.50662827463100050242;
constexpr double kSqrtTwoOverPi = 0.79788456080286535588;

// x with its zeros replaced by 1: a denominator whose quotient masked_fill then discards, so
// neither the value nor the gradient of the discarded branch is 0/0.
Tensor nonzero_denominator(const Tensor& x) {
  return masked_fill(x, eq(x, 0.0), 1.0);
}

// x log(y) (xlogy) or, one_plus, x log1p(y) (xlog1py): 0 where x is 0 unless y is NaN, in the
// dtype x and y promote to (float32 for integers). Gradients PyTorch's: the function itself of
// (grad, y) for x, 0 where x is 0 and log's argument is not positive (y <= 0, or y <= -1); and
// x / y (x / (1 + y)) for y.
Tensor x_log(const Tensor& x_in, const Tensor& y_in, bool one_plus) {
  const char* op = one_plus ? "special_xlog1py" : "xlogy";
  LG_CHECK(x_in.defined() && y_in.defined(), op, ": expected two defined tensors");
  const DType dtype = autograd::floating_result_type(x_in, y_in);
  const Tensor x = x_in.to(dtype), y = y_in.to(dtype);
  Tensor out;
  {
    NoGradGuard no_grad;
    const Tensor log_y = one_plus ? log1p(y) : log(y);
    out = masked_fill(mul(x, log_y), logical_and(eq(x, 0.0), logical_not(isnan(y))), 0.0);
  }
  return record_op(
      op, out, {x, y}, {x, y}, [one_plus](const BackwardContext& c) -> std::vector<Tensor> {
        const Tensor& u = c.saved[0];
        const Tensor& v = c.saved[1];
        std::vector<Tensor> grads(2);
        if (c.needs(0)) {
          const Tensor again = one_plus ? special_xlog1py(c.grad, v) : xlogy(c.grad, v);
          const Tensor dead = logical_and(eq(u, 0.0), le(v, one_plus ? -1.0 : 0.0));
          grads[0] = sum_to(masked_fill(again, dead, 0.0), c.shape(0));
        }
        if (c.needs(1)) {
          const Tensor argument = one_plus ? add(v, 1.0) : v;
          grads[1] = sum_to(div(mul(c.grad, u), argument), c.shape(1));
        }
        return grads;
      });
}

[[noreturn]] void refuse_a_gradient(const char* op) {
  LG_THROW(Error, op, ": the derivative with respect to a (the first operand) is not implemented ",
           "(nor in PyTorch); detach a, or let only x require grad");
}

// igamma / igammac: the kernel, and the gradient in x +-exp((a - 1) log x - x - lgamma(a)).
Tensor incomplete_gamma(const char* op, BinaryOp kernel_op, const Tensor& a, const Tensor& x) {
  LG_CHECK(a.defined() && x.defined(), op, ": expected two defined tensors");
  const double sign = kernel_op == BinaryOp::Igamma ? 1.0 : -1.0;
  return record_op(op, ops::binary(kernel_op, a, x), {a, x}, {a, x},
                   [op, sign](const BackwardContext& c) -> std::vector<Tensor> {
                     if (c.needs(0)) refuse_a_gradient(op);
                     const Tensor& s = c.saved[0];
                     const Tensor& y = c.saved[1];
                     const Tensor density = exp(sub(sub(mul(sub(s, 1.0), log(y)), y), lgamma(s)));
                     return {Tensor(), sum_to(mul(c.grad, mul(density, sign)), c.shape(1))};
                   });
}

}  // namespace

Tensor erfc(const Tensor& x) {
  LG_PROFILE_OP(x);
  return record_op("erfc", ops::unary(UnaryOp::Erfc, x), {x}, {x},
                   [](const BackwardContext& c) -> std::vector<Tensor> {
                     const Tensor& v = c.saved[0];
                     return {mul(c.grad, mul(exp(neg(mul(v, v))), -kTwoOverSqrtPi))};
                   });
}

Tensor special_erfcx(const Tensor& x) {
  LG_PROFILE_OP(x);
  const Tensor out = ops::unary(UnaryOp::Erfcx, x);
  return record_op("special_erfcx", out, {x}, {x, out},
                   [](const BackwardContext& c) -> std::vector<Tensor> {
                     const Tensor d = sub(mul(mul(c.saved[0], c.saved[1]), 2.0), kTwoOverSqrtPi);
                     return {mul(c.grad, d)};
                   });
}

Tensor special_ndtr(const Tensor& x) {
  LG_PROFILE_OP(x);
  LG_CHECK(x.defined(), "special_ndtr: expected a defined tensor");
  return mul(erfc(mul(x, -1.0 / kSqrtTwo)), 0.5);
}

Tensor special_log_ndtr(const Tensor& x_in) {
  LG_PROFILE_OP(x_in);
  LG_CHECK(x_in.defined(), "special_log_ndtr: expected a defined tensor");
  const Tensor x = floating_or_float32(x_in);
  Tensor out;
  {
    NoGradGuard no_grad;
    // Below 0, log Phi(x) = log(erfcx(-x / sqrt 2) / 2) - x^2 / 2, two terms of one sign; from 0
    // on, log1p(-erfc(x / sqrt 2) / 2), where erfc is small.
    const Tensor negative = lt(x, 0.0);
    const Tensor lower =
        sub(log(mul(special_erfcx(mul(x, -1.0 / kSqrtTwo)), 0.5)), mul(mul(x, x), 0.5));
    const Tensor upper = log1p(mul(erfc(mul(x, 1.0 / kSqrtTwo)), -0.5));
    out = where(negative, lower, upper);
  }
  // d/dx log Phi(x) = phi(x) / Phi(x): below 0, with Phi = erfcx(t) exp(-t^2) / 2 and
  // phi = exp(-t^2) / sqrt(2 pi) for t = -x / sqrt 2, sqrt(2 / pi) / erfcx(-x / sqrt 2), finite and
  // accurate where phi and Phi both underflow (PyTorch's exp(-(log_ndtr + x^2 / 2)) / sqrt(2 pi)
  // loses x^2 ulps to the cancellation in the exponent); from 0 on phi / Phi directly. Each branch
  // sees x clamped to its side, so the other's values (and their derivatives) stay finite.
  return record_op(
      "special_log_ndtr", out, {x}, {x}, [](const BackwardContext& c) -> std::vector<Tensor> {
        const Tensor& v = c.saved[0];
        const Tensor negative = lt(v, 0.0);
        const Tensor below = masked_fill(v, logical_not(negative), 0.0);
        const Tensor above = masked_fill(v, negative, 0.0);
        const Tensor lower =
            div(full({}, kSqrtTwoOverPi, v.options()), special_erfcx(mul(below, -1.0 / kSqrtTwo)));
        const Tensor density = mul(exp(mul(mul(above, above), -0.5)), kInvSqrtTwoPi);
        const Tensor upper = div(density, special_ndtr(above));
        return {mul(c.grad, where(negative, lower, upper))};
      });
}

Tensor special_ndtri(const Tensor& p) {
  LG_PROFILE_OP(p);
  const Tensor out = ops::unary(UnaryOp::Ndtri, p);
  return record_op("special_ndtri", out, {p}, {out},
                   [](const BackwardContext& c) -> std::vector<Tensor> {
                     const Tensor& y = c.saved[0];
                     return {mul(c.grad, mul(exp(mul(mul(y, y), 0.5)), kSqrtTwoPi))};
                   });
}

Tensor i0(const Tensor& x) {
  LG_PROFILE_OP(x);
  return record_op("i0", ops::unary(UnaryOp::I0, x), {x}, {x},
                   [](const BackwardContext& c) -> std::vector<Tensor> {
                     return {mul(c.grad, special_i1(c.saved[0]))};
                   });
}

Tensor special_i0e(const Tensor& x) {
  LG_PROFILE_OP(x);
  const Tensor out = ops::unary(UnaryOp::I0e, x);
  return record_op("special_i0e", out, {x}, {x, out},
                   [](const BackwardContext& c) -> std::vector<Tensor> {
                     const Tensor& v = c.saved[0];
                     return {mul(c.grad, sub(special_i1e(v), mul(sign(v), c.saved[1])))};
                   });
}

// Below this |x| the derivatives of i1 and i1e are 1/2 to within x^2 / 2 < 2^-121 (i0 - i1 / x =
// 1/2 + 3 x^2 / 16 + ...): the formulas' i1(x) / x and 1 / x underflow or overflow near the
// subnormals (i1e's gradient was -inf at 1e-40), so 1/2 is taken.
constexpr double kI1SeriesLimit = 0x1p-60;

Tensor special_i1(const Tensor& x) {
  LG_PROFILE_OP(x);
  const Tensor out = ops::unary(UnaryOp::I1, x);
  return record_op("special_i1", out, {x}, {x, out},
                   [](const BackwardContext& c) -> std::vector<Tensor> {
                     const Tensor& v = c.saved[0];
                     const Tensor d = sub(i0(v), div(c.saved[1], nonzero_denominator(v)));
                     return {mul(c.grad, masked_fill(d, lt(abs(v), kI1SeriesLimit), 0.5))};
                   });
}

Tensor special_i1e(const Tensor& x) {
  LG_PROFILE_OP(x);
  const Tensor out = ops::unary(UnaryOp::I1e, x);
  return record_op("special_i1e", out, {x}, {x, out},
                   [](const BackwardContext& c) -> std::vector<Tensor> {
                     const Tensor& v = c.saved[0];
                     const Tensor scale = add(sign(v), reciprocal(nonzero_denominator(v)));
                     const Tensor d = sub(special_i0e(v), mul(c.saved[1], scale));
                     return {mul(c.grad, masked_fill(d, lt(abs(v), kI1SeriesLimit), 0.5))};
                   });
}

// The Bessel functions of torch.special (Note [Bessel functions of the first and second kind]).
// Each gradient is the recurrence DLMF 10.6.2 / 10.29.2 gives, in the functions themselves, so
// that it differentiates again; J1 / x and K1 / x at 0 take their limit (1/2) or leave the
// infinity of the pole (K), never 0/0.
Tensor special_bessel_j0(const Tensor& x) {
  LG_PROFILE_OP(x);
  return record_op("special_bessel_j0", ops::unary(UnaryOp::BesselJ0, x), {x}, {x},
                   [](const BackwardContext& c) -> std::vector<Tensor> {
                     return {mul(c.grad, neg(special_bessel_j1(c.saved[0])))};
                   });
}

Tensor special_bessel_j1(const Tensor& x) {
  LG_PROFILE_OP(x);
  const Tensor out = ops::unary(UnaryOp::BesselJ1, x);
  return record_op(
      "special_bessel_j1", out, {x}, {x, out}, [](const BackwardContext& c) -> std::vector<Tensor> {
        const Tensor& v = c.saved[0];
        const Tensor d = sub(special_bessel_j0(v), div(c.saved[1], nonzero_denominator(v)));
        return {mul(c.grad, masked_fill(d, eq(v, 0.0), 0.5))};
      });
}

Tensor special_bessel_y0(const Tensor& x) {
  LG_PROFILE_OP(x);
  return record_op("special_bessel_y0", ops::unary(UnaryOp::BesselY0, x), {x}, {x},
                   [](const BackwardContext& c) -> std::vector<Tensor> {
                     return {mul(c.grad, neg(special_bessel_y1(c.saved[0])))};
                   });
}

Tensor special_bessel_y1(const Tensor& x) {
  LG_PROFILE_OP(x);
  const Tensor out = ops::unary(UnaryOp::BesselY1, x);
  return record_op("special_bessel_y1", out, {x}, {x, out},
                   [](const BackwardContext& c) -> std::vector<Tensor> {
                     const Tensor& v = c.saved[0];
                     return {mul(c.grad, sub(special_bessel_y0(v), div(c.saved[1], v)))};
                   });
}

Tensor special_modified_bessel_i0(const Tensor& x) {
  return i0(x);
}

Tensor special_modified_bessel_i1(const Tensor& x) {
  return special_i1(x);
}

Tensor special_modified_bessel_k0(const Tensor& x) {
  LG_PROFILE_OP(x);
  return record_op("special_modified_bessel_k0", ops::unary(UnaryOp::BesselK0, x), {x}, {x},
                   [](const BackwardContext& c) -> std::vector<Tensor> {
                     return {mul(c.grad, neg(special_modified_bessel_k1(c.saved[0])))};
                   });
}

Tensor special_modified_bessel_k1(const Tensor& x) {
  LG_PROFILE_OP(x);
  const Tensor out = ops::unary(UnaryOp::BesselK1, x);
  return record_op("special_modified_bessel_k1", out, {x}, {x, out},
                   [](const BackwardContext& c) -> std::vector<Tensor> {
                     const Tensor& v = c.saved[0];
                     const Tensor d = add(special_modified_bessel_k0(v), div(c.saved[1], v));
                     return {mul(c.grad, neg(d))};
                   });
}

Tensor special_scaled_modified_bessel_k0(const Tensor& x) {
  LG_PROFILE_OP(x);
  const Tensor out = ops::unary(UnaryOp::BesselK0e, x);
  return record_op("special_scaled_modified_bessel_k0", out, {x}, {x, out},
                   [](const BackwardContext& c) -> std::vector<Tensor> {
                     const Tensor k1e = special_scaled_modified_bessel_k1(c.saved[0]);
                     return {mul(c.grad, sub(c.saved[1], k1e))};
                   });
}

Tensor special_scaled_modified_bessel_k1(const Tensor& x) {
  LG_PROFILE_OP(x);
  const Tensor out = ops::unary(UnaryOp::BesselK1e, x);
  return record_op("special_scaled_modified_bessel_k1", out, {x}, {x, out},
                   [](const BackwardContext& c) -> std::vector<Tensor> {
                     const Tensor& v = c.saved[0];
                     const Tensor k0e = special_scaled_modified_bessel_k0(v);
                     const Tensor d = sub(sub(c.saved[1], div(c.saved[1], v)), k0e);
                     return {mul(c.grad, d)};
                   });
}

namespace {

// Ai'(x), the gradient of special_airy_ai, differentiable again by Airy's equation:
// Ai''(x) = x Ai(x).
Tensor airy_ai_prime(const Tensor& x) {
  return record_op("special_airy_ai_prime", ops::unary(UnaryOp::AiryAiPrime, x), {x}, {x},
                   [](const BackwardContext& c) -> std::vector<Tensor> {
                     return {mul(c.grad, mul(c.saved[0], special_airy_ai(c.saved[0])))};
                   });
}

}  // namespace

Tensor special_airy_ai(const Tensor& x) {
  LG_PROFILE_OP(x);
  return record_op("special_airy_ai", ops::unary(UnaryOp::AiryAi, x), {x}, {x},
                   [](const BackwardContext& c) -> std::vector<Tensor> {
                     return {mul(c.grad, airy_ai_prime(c.saved[0]))};
                   });
}

Tensor special_spherical_bessel_j0(const Tensor& x) {
  LG_PROFILE_OP(x);
  const Tensor out = ops::unary(UnaryOp::SphericalBesselJ0, x);
  return record_op("special_spherical_bessel_j0", out, {x}, {x, out},
                   [](const BackwardContext& c) -> std::vector<Tensor> {
                     const Tensor& v = c.saved[0];
                     const Tensor safe = nonzero_denominator(v);
                     const Tensor d = div(sub(cos(safe), c.saved[1]), safe);
                     return {mul(c.grad, masked_fill(d, eq(v, 0.0), 0.0))};
                   });
}

Tensor sinc(const Tensor& x) {
  LG_PROFILE_OP(x);
  const Tensor out = ops::unary(UnaryOp::Sinc, x);
  return record_op("sinc", out, {x}, {x, out}, [](const BackwardContext& c) -> std::vector<Tensor> {
    const Tensor& v = c.saved[0];
    const Tensor safe = nonzero_denominator(v);
    const Tensor d = div(sub(cos(mul(safe, 3.14159265358979323846)), c.saved[1]), safe);
    return {mul(c.grad, masked_fill(d, eq(v, 0.0), 0.0))};
  });
}

Tensor igamma(const Tensor& a, const Tensor& x) {
  LG_PROFILE_OP(a, x);
  return incomplete_gamma("igamma", BinaryOp::Igamma, a, x);
}

Tensor igammac(const Tensor& a, const Tensor& x) {
  LG_PROFILE_OP(a, x);
  return incomplete_gamma("igammac", BinaryOp::Igammac, a, x);
}

Tensor special_gammainc(const Tensor& a, const Tensor& x) {
  return igamma(a, x);
}

Tensor special_gammaincc(const Tensor& a, const Tensor& x) {
  return igammac(a, x);
}

Tensor xlogy(const Tensor& x, const Tensor& y) {
  LG_PROFILE_OP(x, y);
  return x_log(x, y, /*one_plus=*/false);
}

Tensor xlogy(const Tensor& x, double y) {
  LG_CHECK(x.defined(), "xlogy: expected a defined tensor");
  return xlogy(x,
               full({}, y, TensorOptions(autograd::floating_result_type(x, x)).device(x.device())));
}

Tensor xlogy(double x, const Tensor& y) {
  LG_CHECK(y.defined(), "xlogy: expected a defined tensor");
  return xlogy(full({}, x, TensorOptions(autograd::floating_result_type(y, y)).device(y.device())),
               y);
}

Tensor special_xlogy(const Tensor& x, const Tensor& y) {
  return xlogy(x, y);
}

Tensor special_xlog1py(const Tensor& x, const Tensor& y) {
  LG_PROFILE_OP(x, y);
  return x_log(x, y, /*one_plus=*/true);
}

Tensor special_entr(const Tensor& x_in) {
  LG_PROFILE_OP(x_in);
  LG_CHECK(x_in.defined(), "special_entr: expected a defined tensor");
  const Tensor x = floating_or_float32(x_in);
  Tensor out;
  {
    NoGradGuard no_grad;
    // -x log x above 0, 0 at 0, -inf below (NaN stays NaN: every comparison is false).
    const Tensor positive_part = masked_fill(neg(mul(x, log(x))), le(x, 0.0), 0.0);
    out = masked_fill(positive_part, lt(x, 0.0), -std::numeric_limits<double>::infinity());
  }
  return record_op("special_entr", out, {x}, {x},
                   [](const BackwardContext& c) -> std::vector<Tensor> {
                     return {mul(c.grad, neg(add(log(c.saved[0]), 1.0)))};
                   });
}

Tensor logit(const Tensor& x_in, std::optional<double> eps) {
  LG_PROFILE_OP(x_in);
  LG_CHECK(x_in.defined(), "logit: expected a defined tensor");
  const Tensor x = floating_or_float32(x_in);
  Tensor out;
  {
    NoGradGuard no_grad;
    const Tensor z = eps ? clamp(x, *eps, 1.0 - *eps) : x;
    out = log(div(z, rsub(z, 1.0)));
  }
  return record_op("logit", out, {x}, {x}, [eps](const BackwardContext& c) -> std::vector<Tensor> {
    const Tensor& v = c.saved[0];
    // + 0: v (1 - v) at v = -0 is -0, and the limit of the gradient there is +inf, as at +0.
    const Tensor d = div(c.grad, add(mul(v, rsub(v, 1.0)), 0.0));
    if (eps) return {masked_fill(d, logical_or(lt(v, *eps), gt(v, 1.0 - *eps)), 0.0)};
    const Tensor outside = logical_or(lt(v, 0.0), gt(v, 1.0));
    return {masked_fill(d, outside, std::numeric_limits<double>::quiet_NaN())};
  });
}

Tensor special_logit(const Tensor& x, std::optional<double> eps) {
  return logit(x, eps);
}

Tensor special_expit(const Tensor& x) {
  return sigmoid(x);
}

}  // namespace leangrad
