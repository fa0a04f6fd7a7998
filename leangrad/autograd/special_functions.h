// The special functions, as LibTorch's (torch::lgamma, digamma, polygamma, mvlgamma, erfinv,
// erfc, i0, sinc, igamma, igammac, xlogy, logit and torch::special's zeta, erfcx, ndtr, log_ndtr,
// ndtri, i0e, i1, i1e, gammainc, gammaincc, xlog1py, entr, logit, expit and the Bessel
// functions), with their gradients, on every device: elementwise kernels of
// kernels/special_math.h (UnaryOp Lgamma, Digamma, Erfinv, Erfc, Erfcx, Sinc, I0, I0e, I1, I1e,
// Ndtri, BesselJ0, ...; BinaryOp Zeta, Igamma, Igammac), computed
// in double and rounded once, and compositions of them. Integral input is computed
// in float32, as PyTorch promotes it. Values at the poles and outside the domains are PyTorch's
// (docs/api-notes.md lists the few that differ).
//   Tensor nll = lgamma(alpha) - (alpha - 1) * log(x) + x;  // a Gamma log-density's terms
//   Tensor z = erfinv(2 * u - 1) * std::sqrt(2.0);           // uniform to standard normal
#pragma once

#include <cstdint>
#include <optional>

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

// 1 - erf(x) without the cancellation (libm's erfc, in double). Gradient -2/sqrt(pi) exp(-x^2).
Tensor erfc(const Tensor& x);
// exp(x^2) erfc(x), finite where erfc underflows (Note [Scaled complementary error function]);
// +inf below -26.7. Gradient 2x erfcx(x) - 2/sqrt(pi).
Tensor special_erfcx(const Tensor& x);
// The standard normal distribution function Phi(x) = erfc(-x / sqrt(2)) / 2, its logarithm
// (accurate in both tails: through erfcx below 0, log1p above) and its inverse (Note [Inverse
// normal distribution function]: -inf at 0, +inf at 1, NaN outside [0, 1]). Gradients
// exp(-x^2/2) / sqrt(2 pi), that over Phi(x), and sqrt(2 pi) exp(ndtri(p)^2 / 2).
Tensor special_ndtr(const Tensor& x);
Tensor special_log_ndtr(const Tensor& x);
Tensor special_ndtri(const Tensor& p);
// The modified Bessel functions of the first kind I0 and I1 and their scaled forms
// exp(-|x|) I0(x) and exp(-|x|) I1(x) (Note [Modified Bessel functions]), as torch.i0 and
// torch.special's i0e, i1, i1e. Gradients I1, I1e - sgn(x) I0e, I0 - I1 / x and
// I0e - I1e (sgn(x) + 1/x) (1/2 at 0 for the last two), PyTorch's.
Tensor i0(const Tensor& x);
Tensor special_i0e(const Tensor& x);
Tensor special_i1(const Tensor& x);
Tensor special_i1e(const Tensor& x);
// torch.special's Bessel functions (Note [Bessel functions of the first and second kind], Note
// [Modified Bessel functions]): of the first kind J0, J1 (even and odd), of the second kind Y0,
// Y1 (NaN below 0, -inf at 0), the modified ones of the first kind I0, I1 (i0 and special_i1
// under torch.special's other names) and of the second kind K0, K1 (NaN below 0, +inf at 0),
// the latter also scaled, exp(x) K(x); and the spherical j0(x) = sin(x) / x. At +-inf each is
// its limit 0 (PyTorch's J and Y are NaN there). Differentiable, where PyTorch's are not:
// J0' = -J1, J1' = J0 - J1 / x (1/2 at 0), Y0' = -Y1, Y1' = Y0 - Y1 / x, K0' = -K1,
// K1' = -K0 - K1 / x, exp(x) K0 and exp(x) K1 differentiate to K0e - K1e and K1e (1 - 1/x) - K0e,
// and j0' = (cos x - j0(x)) / x (0 at 0). Every floating dtype is computed in double and
// rounded once (PyTorch's have no float16 or bfloat16 kernels); integral input gives float32.
Tensor special_bessel_j0(const Tensor& x);
Tensor special_bessel_j1(const Tensor& x);
Tensor special_bessel_y0(const Tensor& x);
Tensor special_bessel_y1(const Tensor& x);
Tensor special_modified_bessel_i0(const Tensor& x);
Tensor special_modified_bessel_i1(const Tensor& x);
Tensor special_modified_bessel_k0(const Tensor& x);
Tensor special_modified_bessel_k1(const Tensor& x);
Tensor special_scaled_modified_bessel_k0(const Tensor& x);
Tensor special_scaled_modified_bessel_k1(const Tensor& x);
Tensor special_spherical_bessel_j0(const Tensor& x);
// The Airy function Ai(x), as torch.special.airy_ai (Note [Airy function]): the solution of
// y'' = x y that decays as x -> +inf, oscillating below 0. 0 at +-inf (PyTorch's is NaN there).
// Differentiable to any order, where PyTorch's is not: Ai' from its own kernel, and
// Ai'' = x Ai(x). Every floating dtype is computed in double and rounded once; integral input
// gives float32.
Tensor special_airy_ai(const Tensor& x);
// sin(pi x) / (pi x), 1 at 0, exactly 0 at the other integers. Gradient (cos(pi x) - sinc(x)) / x,
// 0 at 0.
Tensor sinc(const Tensor& x);
// The regularized lower and upper incomplete gamma functions P(a, x) and Q(a, x) = 1 - P(a, x)
// (Note [Regularized incomplete gamma functions]), a and x broadcast together, as torch.igamma
// and igammac (torch.special.gammainc and gammaincc). The gradient with respect to x is
// +-exp((a - 1) log x - x - lgamma(a)); with respect to a it is not implemented (nor in
// PyTorch): a backward that needs it raises.
Tensor igamma(const Tensor& a, const Tensor& x);
Tensor igammac(const Tensor& a, const Tensor& x);
Tensor special_gammainc(const Tensor& a, const Tensor& x);
Tensor special_gammaincc(const Tensor& a, const Tensor& x);
// x log(y), 0 where x is 0 (unless y is NaN), as torch.xlogy (special_xlogy); x log1p(y) the
// same way (special_xlog1py). Integral operands give float32. Gradients PyTorch's: log(y)
// (0 where x = 0 and y <= 0) and x / y; log1p(y) and x / (1 + y).
Tensor xlogy(const Tensor& x, const Tensor& y);
Tensor xlogy(const Tensor& x, double y);
Tensor xlogy(double x, const Tensor& y);
Tensor special_xlogy(const Tensor& x, const Tensor& y);
Tensor special_xlog1py(const Tensor& x, const Tensor& y);
// The entropy term -x log(x): 0 at 0, -inf for x < 0, as torch.special.entr. Gradient
// -(1 + log x).
Tensor special_entr(const Tensor& x);
// log(z / (1 - z)) for z = x, or x clamped to [eps, 1 - eps] when eps is given, as torch.logit
// (special_logit). Gradient 1 / (x (1 - x)), 0 outside [eps, 1 - eps] with eps, NaN outside
// [0, 1] without, as PyTorch's. special_expit is sigmoid.
Tensor logit(const Tensor& x, std::optional<double> eps = std::nullopt);
Tensor special_logit(const Tensor& x, std::optional<double> eps = std::nullopt);
Tensor special_expit(const Tensor& x);

}  // namespace leangrad
