// The gamma-family special functions, the inverse error function and the Hurwitz zeta function,
// as LibTorch's (torch::lgamma, digamma, polygamma, mvlgamma, erfinv, special_zeta), with their
// gradients, on every device: elementwise kernels of kernels/special_math.h (UnaryOp Lgamma,
// Digamma, Erfinv; BinaryOp Zeta), computed in double and rounded once. Integral input is computed
// in float32, as PyTorch promotes it. Values at the poles and outside the domains are PyTorch's
// (docs/api-notes.md lists the few that differ).
//   Tensor nll = lgamma(alpha) - (alpha - 1) * log(x) + x;  // a Gamma log-density's terms
//   Tensor z = erfinv(2 * u - 1) * std::sqrt(2.0);           // uniform to standard normal
#pragma once

#include <cstdint>

#include <leangrad/core/tensor.h>

namespace leangrad {

// log|Gamma(x)|: +inf at 0, the negative integers and -inf. Gradient digamma(x).
Tensor lgamma(const Tensor& x);
// d/dx log Gamma(x): -inf at +0, +inf at -0, NaN at the negative integers and -inf (PyTorch's).
// Gradient polygamma(1, x).
Tensor digamma(const Tensor& x);
// The n-th derivative of digamma (n >= 0; n = 0 is digamma itself): (-1)^(n+1) n! zeta(n + 1,
// x) for n >= 1, +inf at the poles 0, -1, -2, ... Gradient polygamma(n + 1, x).
Tensor polygamma(std::int64_t n, const Tensor& x);
// The multivariate log-gamma of dimension p >= 1: sum over j < p of lgamma(x - j/2), plus
// p (p - 1) / 4 log(pi). Every element must exceed (p - 1) / 2 (checked, as PyTorch's: on CUDA
// that reads a flag back, a synchronisation).
Tensor mvlgamma(const Tensor& x, std::int64_t p);
// The inverse of erf on (-1, 1): +-inf at +-1, NaN beyond. Gradient sqrt(pi)/2 exp(erfinv(y)^2).
// Runs in float32 under autocast (PyTorch's float32 list).
Tensor erfinv(const Tensor& y);
// The Hurwitz zeta function zeta(x, q) = sum over k >= 0 of (k + q)^-x, for x > 1 (+inf at
// x = 1, NaN below), x and q broadcast together, as torch.special.zeta. The gradient with
// respect to q is -x zeta(x + 1, q); with respect to x it is not implemented (nor in PyTorch):
// a backward that needs it raises an Error.
Tensor special_zeta(const Tensor& x, const Tensor& q);
Tensor special_zeta(const Tensor& x, double q);
Tensor special_zeta(double x, const Tensor& q);

}  // namespace leangrad
