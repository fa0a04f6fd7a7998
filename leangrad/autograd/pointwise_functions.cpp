// The pointwise math of autograd/pointwise_functions.h.
#include <leangrad/autograd/pointwise_functions.h>

#include <cmath>
#include <numbers>
#include <vector>

#include <leangrad/autograd/functions.h>
#include <leangrad/autograd/graph.h>
#include <leangrad/autograd/nn_internal.h>
#include <leangrad/core/error.h>
#include <leangrad/core/profiler.h>
#include <leangrad/kernels/creation.h>
#include <leangrad/kernels/ops.h>

namespace leangrad {

using autograd::BackwardContext;
using autograd::check_operands;
using autograd::floating_or_float32;
using autograd::integral_binary;
using autograd::record_op;
using autograd::sum_to;

namespace {

constexpr double kLn2 = 0.69314718055994530942;
constexpr double kPi = 3.14159265358979323846;

void check_defined_pair(const char* op, const Tensor& a, const Tensor& b) {
  LG_CHECK(a.defined() && b.defined(), op, ": expected two defined tensors, got ",
           a.defined() ? "a tensor" : "an undefined Tensor()", " and ",
           b.defined() ? "a tensor" : "an undefined Tensor()");
}

// fmax / fmin: the gradient goes to a where a >= b (a <= b for fmin) or b is NaN, to b
// elsewhere (PyTorch's masks).
Tensor extremum(const char* op, BinaryOp kernel_op, const Tensor& a, const Tensor& b) {
  const bool is_max = kernel_op == BinaryOp::Fmax;
  return record_op(op, ops::binary(kernel_op, a, b), {a, b}, {a, b},
                   [is_max](const BackwardContext& c) -> std::vector<Tensor> {
                     const Tensor& x = c.saved[0];
                     const Tensor& y = c.saved[1];
                     const Tensor a_wins = logical_or(is_max ? ge(x, y) : le(x, y), isnan(y));
                     std::vector<Tensor> grads(2);
                     if (c.needs(0)) {
                       grads[0] = sum_to(masked_fill(c.grad, logical_not(a_wins), 0.0), c.shape(0));
                     }
                     if (c.needs(1))
                       grads[1] = sum_to(masked_fill(c.grad, a_wins, 0.0), c.shape(1));
                     return grads;
                   });
}

// copysign's gradient for a: out / a, 0 where a is 0 (PyTorch's copysign_tensor_self_backward).
Tensor copysign_gradient(const Tensor& grad, const Tensor& a, const Tensor& out) {
  return mul(grad, masked_fill(div(out, a), eq(a, 0.0), 0.0));
}

}  // namespace

Tensor hypot(const Tensor& a, const Tensor& b) {
  LG_PROFILE_OP(a, b);
  const Tensor out = ops::binary(BinaryOp::Hypot, a, b);
  return record_op(
      "hypot", out, {a, b}, {a, b, out}, [](const BackwardContext& c) -> std::vector<Tensor> {
        // grad a / out, multiplied first: grad / out overflows where out is
        // subnormal (hypot(1e-40, 0)'s gradient was inf), as PyTorch's order.
        const Tensor& out = c.saved[2];
        return {c.needs(0) ? sum_to(div(mul(c.grad, c.saved[0]), out), c.shape(0)) : Tensor(),
                c.needs(1) ? sum_to(div(mul(c.grad, c.saved[1]), out), c.shape(1)) : Tensor()};
      });
}

Tensor copysign(const Tensor& a, const Tensor& b) {
  LG_PROFILE_OP(a, b);
  const Tensor out = ops::binary(BinaryOp::Copysign, a, b);
  return record_op(
      "copysign", out, {a, b}, {a, out}, [](const BackwardContext& c) -> std::vector<Tensor> {
        std::vector<Tensor> grads(2);
        if (c.needs(0)) {
          grads[0] = sum_to(copysign_gradient(c.grad, c.saved[0], c.saved[1]), c.shape(0));
        }
        if (c.needs(1)) grads[1] = zeros(c.shape(1), c.grad.options());
        return grads;
      });
}

Tensor copysign(const Tensor& a, double b) {
  LG_PROFILE_OP(a);
  const Tensor out = ops::binary(BinaryOp::Copysign, a, b);
  return record_op("copysign", out, {a}, {a, out},
                   [](const BackwardContext& c) -> std::vector<Tensor> {
                     return {copysign_gradient(c.grad, c.saved[0], c.saved[1])};
                   });
}

Tensor nextafter(const Tensor& a, const Tensor& b) {
  LG_PROFILE_OP(a, b);
  return record_op("nextafter", ops::binary(BinaryOp::Nextafter, a, b), {a, b}, {},
                   [](const BackwardContext&) -> std::vector<Tensor> {
                     LG_THROW(Error, "nextafter: the derivative is not implemented (nor in ",
                              "PyTorch): the result is a step function of a; detach the ",
                              "operands");
                   });
}

Tensor fmax(const Tensor& a, const Tensor& b) {
  LG_PROFILE_OP(a, b);
  return extremum("fmax", BinaryOp::Fmax, a, b);
}

Tensor fmin(const Tensor& a, const Tensor& b) {
  LG_PROFILE_OP(a, b);
  return extremum("fmin", BinaryOp::Fmin, a, b);
}

Tensor gcd(const Tensor& a, const Tensor& b) {
  LG_PROFILE_OP(a, b);
  return ops::binary(BinaryOp::Gcd, a, b);
}

Tensor lcm(const Tensor& a, const Tensor& b) {
  LG_PROFILE_OP(a, b);
  return ops::binary(BinaryOp::Lcm, a, b);
}

Tensor bitwise_left_shift(const Tensor& a, const Tensor& b) {
  LG_PROFILE_OP(a, b);
  return ops::binary(BinaryOp::LeftShift, a, b);
}

Tensor bitwise_left_shift(const Tensor& a, double b) {
  LG_PROFILE_OP(a);
  return integral_binary(BinaryOp::LeftShift, a, b);
}

Tensor bitwise_right_shift(const Tensor& a, const Tensor& b) {
  LG_PROFILE_OP(a, b);
  return ops::binary(BinaryOp::RightShift, a, b);
}

Tensor bitwise_right_shift(const Tensor& a, double b) {
  LG_PROFILE_OP(a);
  return integral_binary(BinaryOp::RightShift, a, b);
}

Tensor heaviside(const Tensor& input, const Tensor& values) {
  LG_PROFILE_OP(input, values);
  check_operands("heaviside", {input, values});
  // values where input is 0, else (input > 0) in input's dtype: 0 for NaN.
  return where(eq(input, 0.0), values, gt(input, 0.0).to(input.dtype()));
}

Tensor logaddexp2(const Tensor& a, const Tensor& b) {
  LG_PROFILE_OP(a, b);
  check_operands("logaddexp2", {a, b}, /*floating=*/true);
  Tensor out;
  {
    NoGradGuard no_grad;
    out = autograd::in_working_precision(a, b, [](const Tensor& x, const Tensor& y) {
      const Tensor m = maximum(x, y);
      const Tensor stable = add(m, mul(log1p(exp2(neg(abs(sub(x, y))))), 1.0 / kLn2));
      return where(logical_and(isinf(x), eq(x, y)), m, stable);  // the same infinity twice
    });
  }
  // d/da = 2^a / (2^a + 2^b) = sigmoid((a - b) ln 2).
  return record_op("logaddexp2", out, {a, b}, {a, b},
                   [](const BackwardContext& c) -> std::vector<Tensor> {
                     const Tensor d = mul(sub(c.saved[0], c.saved[1]), kLn2);
                     std::vector<Tensor> grads(2);
                     if (c.needs(0)) grads[0] = sum_to(mul(c.grad, sigmoid(d)), c.shape(0));
                     if (c.needs(1)) grads[1] = sum_to(mul(c.grad, sigmoid(neg(d))), c.shape(1));
                     return grads;
                   });
}

Tensor float_power(const Tensor& a, const Tensor& b) {
  LG_PROFILE_OP(a, b);
  check_defined_pair("float_power", a, b);
  return pow(a.to(kFloat64), b.to(kFloat64));
}

Tensor float_power(const Tensor& a, double b) {
  LG_PROFILE_OP(a);
  LG_CHECK(a.defined(), "float_power: expected a defined tensor");
  return pow(a.to(kFloat64), b);
}

Tensor float_power(double a, const Tensor& b) {
  LG_PROFILE_OP(b);
  LG_CHECK(b.defined(), "float_power: expected a defined tensor");
  return pow(full({}, a, TensorOptions(kFloat64).device(b.device())), b.to(kFloat64));
}

Tensor ldexp(const Tensor& a, const Tensor& e) {
  LG_PROFILE_OP(a, e);
  check_defined_pair("ldexp", a, e);
  return mul(a, exp2(e.to(autograd::floating_result_type(a, e))));
}

std::tuple<Tensor, Tensor> frexp(const Tensor& a) {
  LG_PROFILE_OP(a);
  check_operands("frexp", {a}, /*floating=*/true);
  Tensor exponent;
  {
    NoGradGuard no_grad;
    exponent = ops::unary(UnaryOp::FrexpExponent, a).to(kInt32);
  }
  Tensor mantissa = record_op("frexp", ops::unary(UnaryOp::FrexpMantissa, a), {a}, {exponent},
                              [](const BackwardContext& c) -> std::vector<Tensor> {
                                const Tensor scale = exp2(c.saved[0].to(c.grad.dtype()));
                                return {div(c.grad, scale)};
                              });
  return {std::move(mantissa), std::move(exponent)};
}

Tensor deg2rad(const Tensor& a) {
  LG_PROFILE_OP(a);
  LG_CHECK(a.defined(), "deg2rad: expected a defined tensor");
  return mul(floating_or_float32(a), kPi / 180.0);
}

Tensor rad2deg(const Tensor& a) {
  LG_PROFILE_OP(a);
  LG_CHECK(a.defined(), "rad2deg: expected a defined tensor");
  return mul(floating_or_float32(a), 180.0 / kPi);
}

Tensor frac(const Tensor& a) {
  LG_PROFILE_OP(a);
  check_operands("frac", {a}, /*floating=*/true);
  return sub(a, trunc(a));  // exact: a and trunc(a) share a's binade or trunc(a) is 0
}

Tensor sgn(const Tensor& a) {
  return sign(a);
}

Tensor fix(const Tensor& a) {
  return trunc(a);
}

Tensor positive(const Tensor& a) {
  LG_CHECK(a.defined(), "positive: expected a defined tensor");
  LG_CHECK_DTYPE(a.dtype() != DType::Bool, "positive: not supported for bool tensors (PyTorch's ",
                 "unary + refuses them too)");
  return a;
}

Tensor signbit(const Tensor& a) {
  LG_PROFILE_OP(a);
  LG_CHECK(a.defined(), "signbit: expected a defined tensor");
  NoGradGuard no_grad;
  if (!is_floating(a.dtype())) return lt(a, 0.0);  // false for uint8 and bool
  return lt(ops::binary(BinaryOp::Copysign, a, 1.0, /*scalar_first=*/true), 0.0);
}

Tensor angle(const Tensor& a) {
  LG_PROFILE_OP(a);
  LG_CHECK(a.defined(), "angle: expected a defined tensor");
  Tensor out;
  {
    NoGradGuard no_grad;
    const Tensor x = is_floating(a.dtype()) ? a : a.to(kFloat32);
    // pi rounded to x's dtype where x < 0, 0 elsewhere, x itself where it is NaN.
    out = where(isnan(x), x, mul(lt(x, 0.0).to(x.dtype()), std::numbers::pi));
  }
  return record_op("angle", out, {a}, {}, [](const BackwardContext& c) -> std::vector<Tensor> {
    return {zeros_like(c.grad)};
  });
}

Tensor isreal(const Tensor& a) {
  LG_CHECK(a.defined(), "isreal: expected a defined tensor");
  return full(a.shape(), 1.0, TensorOptions(kBool).device(a.device()));
}

}  // namespace leangrad
