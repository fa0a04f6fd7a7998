// LibTorch's torch::special namespace: special::gammaln(x), special::expit(x), special::zeta(x, q)
// ..., each the leangrad function of the same meaning (lgamma, sigmoid, special_zeta ...), so a
// program written against torch::special compiles unchanged under `namespace torch = leangrad;`.
// The orthogonal polynomials (chebyshev_polynomial_t and the rest) are
// autograd/orthogonal_polynomials.h's.
#pragma once

#include <cstdint>
#include <optional>

#include <leangrad/autograd/functions.h>
#include <leangrad/autograd/nn_functions.h>
#include <leangrad/autograd/orthogonal_polynomials.h>
#include <leangrad/autograd/reduction_functions.h>
#include <leangrad/autograd/special_functions.h>
#include <leangrad/core/tensor.h>

namespace leangrad::special {

// ---- Gamma and related functions ----
inline Tensor gammaln(const Tensor& x) {
  return ::leangrad::lgamma(x);
}
inline Tensor digamma(const Tensor& x) {
  return ::leangrad::digamma(x);
}
inline Tensor psi(const Tensor& x) {
  return ::leangrad::digamma(x);
}
inline Tensor polygamma(std::int64_t n, const Tensor& x) {
  return ::leangrad::polygamma(n, x);
}
inline Tensor multigammaln(const Tensor& x, std::int64_t p) {
  return ::leangrad::mvlgamma(x, p);
}
inline Tensor gammainc(const Tensor& a, const Tensor& x) {
  return ::leangrad::special_gammainc(a, x);
}
inline Tensor gammaincc(const Tensor& a, const Tensor& x) {
  return ::leangrad::special_gammaincc(a, x);
}
inline Tensor zeta(const Tensor& x, const Tensor& q) {
  return ::leangrad::special_zeta(x, q);
}
inline Tensor zeta(const Tensor& x, double q) {
  return ::leangrad::special_zeta(x, q);
}
inline Tensor zeta(double x, const Tensor& q) {
  return ::leangrad::special_zeta(x, q);
}

// ---- Error functions and the normal distribution ----
inline Tensor erf(const Tensor& x) {
  return ::leangrad::erf(x);
}
inline Tensor erfc(const Tensor& x) {
  return ::leangrad::erfc(x);
}
inline Tensor erfcx(const Tensor& x) {
  return ::leangrad::special_erfcx(x);
}
inline Tensor erfinv(const Tensor& x) {
  return ::leangrad::erfinv(x);
}
inline Tensor ndtr(const Tensor& x) {
  return ::leangrad::special_ndtr(x);
}
inline Tensor log_ndtr(const Tensor& x) {
  return ::leangrad::special_log_ndtr(x);
}
inline Tensor ndtri(const Tensor& x) {
  return ::leangrad::special_ndtri(x);
}

// ---- Bessel functions ----
inline Tensor i0(const Tensor& x) {
  return ::leangrad::i0(x);
}
inline Tensor i0e(const Tensor& x) {
  return ::leangrad::special_i0e(x);
}
inline Tensor i1(const Tensor& x) {
  return ::leangrad::special_i1(x);
}
inline Tensor i1e(const Tensor& x) {
  return ::leangrad::special_i1e(x);
}
inline Tensor bessel_j0(const Tensor& x) {
  return ::leangrad::special_bessel_j0(x);
}
inline Tensor bessel_j1(const Tensor& x) {
  return ::leangrad::special_bessel_j1(x);
}
inline Tensor bessel_y0(const Tensor& x) {
  return ::leangrad::special_bessel_y0(x);
}
inline Tensor bessel_y1(const Tensor& x) {
  return ::leangrad::special_bessel_y1(x);
}
inline Tensor modified_bessel_i0(const Tensor& x) {
  return ::leangrad::special_modified_bessel_i0(x);
}
inline Tensor modified_bessel_i1(const Tensor& x) {
  return ::leangrad::special_modified_bessel_i1(x);
}
inline Tensor modified_bessel_k0(const Tensor& x) {
  return ::leangrad::special_modified_bessel_k0(x);
}
inline Tensor modified_bessel_k1(const Tensor& x) {
  return ::leangrad::special_modified_bessel_k1(x);
}
inline Tensor scaled_modified_bessel_k0(const Tensor& x) {
  return ::leangrad::special_scaled_modified_bessel_k0(x);
}
inline Tensor scaled_modified_bessel_k1(const Tensor& x) {
  return ::leangrad::special_scaled_modified_bessel_k1(x);
}
inline Tensor spherical_bessel_j0(const Tensor& x) {
  return ::leangrad::special_spherical_bessel_j0(x);
}
inline Tensor airy_ai(const Tensor& x) {
  return ::leangrad::special_airy_ai(x);
}

// ---- Orthogonal polynomials: x and the degree n, either a number ----
inline Tensor chebyshev_polynomial_t(const Tensor& x, const Tensor& n) {
  return ::leangrad::special_chebyshev_polynomial_t(x, n);
}
inline Tensor chebyshev_polynomial_t(const Tensor& x, double n) {
  return ::leangrad::special_chebyshev_polynomial_t(x, n);
}
inline Tensor chebyshev_polynomial_t(double x, const Tensor& n) {
  return ::leangrad::special_chebyshev_polynomial_t(x, n);
}
inline Tensor chebyshev_polynomial_u(const Tensor& x, const Tensor& n) {
  return ::leangrad::special_chebyshev_polynomial_u(x, n);
}
inline Tensor chebyshev_polynomial_u(const Tensor& x, double n) {
  return ::leangrad::special_chebyshev_polynomial_u(x, n);
}
inline Tensor chebyshev_polynomial_u(double x, const Tensor& n) {
  return ::leangrad::special_chebyshev_polynomial_u(x, n);
}
inline Tensor chebyshev_polynomial_v(const Tensor& x, const Tensor& n) {
  return ::leangrad::special_chebyshev_polynomial_v(x, n);
}
inline Tensor chebyshev_polynomial_v(const Tensor& x, double n) {
  return ::leangrad::special_chebyshev_polynomial_v(x, n);
}
inline Tensor chebyshev_polynomial_v(double x, const Tensor& n) {
  return ::leangrad::special_chebyshev_polynomial_v(x, n);
}
inline Tensor chebyshev_polynomial_w(const Tensor& x, const Tensor& n) {
  return ::leangrad::special_chebyshev_polynomial_w(x, n);
}
inline Tensor chebyshev_polynomial_w(const Tensor& x, double n) {
  return ::leangrad::special_chebyshev_polynomial_w(x, n);
}
inline Tensor chebyshev_polynomial_w(double x, const Tensor& n) {
  return ::leangrad::special_chebyshev_polynomial_w(x, n);
}
inline Tensor shifted_chebyshev_polynomial_t(const Tensor& x, const Tensor& n) {
  return ::leangrad::special_shifted_chebyshev_polynomial_t(x, n);
}
inline Tensor shifted_chebyshev_polynomial_t(const Tensor& x, double n) {
  return ::leangrad::special_shifted_chebyshev_polynomial_t(x, n);
}
inline Tensor shifted_chebyshev_polynomial_t(double x, const Tensor& n) {
  return ::leangrad::special_shifted_chebyshev_polynomial_t(x, n);
}
inline Tensor shifted_chebyshev_polynomial_u(const Tensor& x, const Tensor& n) {
  return ::leangrad::special_shifted_chebyshev_polynomial_u(x, n);
}
inline Tensor shifted_chebyshev_polynomial_u(const Tensor& x, double n) {
  return ::leangrad::special_shifted_chebyshev_polynomial_u(x, n);
}
inline Tensor shifted_chebyshev_polynomial_u(double x, const Tensor& n) {
  return ::leangrad::special_shifted_chebyshev_polynomial_u(x, n);
}
inline Tensor shifted_chebyshev_polynomial_v(const Tensor& x, const Tensor& n) {
  return ::leangrad::special_shifted_chebyshev_polynomial_v(x, n);
}
inline Tensor shifted_chebyshev_polynomial_v(const Tensor& x, double n) {
  return ::leangrad::special_shifted_chebyshev_polynomial_v(x, n);
}
inline Tensor shifted_chebyshev_polynomial_v(double x, const Tensor& n) {
  return ::leangrad::special_shifted_chebyshev_polynomial_v(x, n);
}
inline Tensor shifted_chebyshev_polynomial_w(const Tensor& x, const Tensor& n) {
  return ::leangrad::special_shifted_chebyshev_polynomial_w(x, n);
}
inline Tensor shifted_chebyshev_polynomial_w(const Tensor& x, double n) {
  return ::leangrad::special_shifted_chebyshev_polynomial_w(x, n);
}
inline Tensor shifted_chebyshev_polynomial_w(double x, const Tensor& n) {
  return ::leangrad::special_shifted_chebyshev_polynomial_w(x, n);
}
inline Tensor hermite_polynomial_h(const Tensor& x, const Tensor& n) {
  return ::leangrad::special_hermite_polynomial_h(x, n);
}
inline Tensor hermite_polynomial_h(const Tensor& x, double n) {
  return ::leangrad::special_hermite_polynomial_h(x, n);
}
inline Tensor hermite_polynomial_h(double x, const Tensor& n) {
  return ::leangrad::special_hermite_polynomial_h(x, n);
}
inline Tensor hermite_polynomial_he(const Tensor& x, const Tensor& n) {
  return ::leangrad::special_hermite_polynomial_he(x, n);
}
inline Tensor hermite_polynomial_he(const Tensor& x, double n) {
  return ::leangrad::special_hermite_polynomial_he(x, n);
}
inline Tensor hermite_polynomial_he(double x, const Tensor& n) {
  return ::leangrad::special_hermite_polynomial_he(x, n);
}
inline Tensor laguerre_polynomial_l(const Tensor& x, const Tensor& n) {
  return ::leangrad::special_laguerre_polynomial_l(x, n);
}
inline Tensor laguerre_polynomial_l(const Tensor& x, double n) {
  return ::leangrad::special_laguerre_polynomial_l(x, n);
}
inline Tensor laguerre_polynomial_l(double x, const Tensor& n) {
  return ::leangrad::special_laguerre_polynomial_l(x, n);
}
inline Tensor legendre_polynomial_p(const Tensor& x, const Tensor& n) {
  return ::leangrad::special_legendre_polynomial_p(x, n);
}
inline Tensor legendre_polynomial_p(const Tensor& x, double n) {
  return ::leangrad::special_legendre_polynomial_p(x, n);
}
inline Tensor legendre_polynomial_p(double x, const Tensor& n) {
  return ::leangrad::special_legendre_polynomial_p(x, n);
}

// ---- Exponentials, logarithms and the rest ----
inline Tensor exp2(const Tensor& x) {
  return ::leangrad::exp2(x);
}
inline Tensor expm1(const Tensor& x) {
  return ::leangrad::expm1(x);
}
inline Tensor log1p(const Tensor& x) {
  return ::leangrad::log1p(x);
}
inline Tensor expit(const Tensor& x) {
  return ::leangrad::special_expit(x);
}
inline Tensor logit(const Tensor& x, std::optional<double> eps = std::nullopt) {
  return ::leangrad::logit(x, eps);
}
inline Tensor xlogy(const Tensor& x, const Tensor& y) {
  return ::leangrad::xlogy(x, y);
}
inline Tensor xlogy(const Tensor& x, double y) {
  return ::leangrad::xlogy(x, y);
}
inline Tensor xlogy(double x, const Tensor& y) {
  return ::leangrad::xlogy(x, y);
}
inline Tensor xlog1py(const Tensor& x, const Tensor& y) {
  return ::leangrad::special_xlog1py(x, y);
}
inline Tensor entr(const Tensor& x) {
  return ::leangrad::special_entr(x);
}
inline Tensor sinc(const Tensor& x) {
  return ::leangrad::sinc(x);
}
inline Tensor round(const Tensor& x, std::int64_t decimals = 0) {
  return decimals == 0 ? ::leangrad::round(x) : ::leangrad::round(x, decimals);
}
inline Tensor logsumexp(const Tensor& x, const DimList& dims, bool keepdim = false) {
  return ::leangrad::logsumexp(x, dims, keepdim);
}
// With dtype, the input is converted to it first, as LibTorch's.
inline Tensor softmax(const Tensor& x, std::int64_t dim,
                      std::optional<DType> dtype = std::nullopt) {
  return ::leangrad::softmax(dtype ? x.to(*dtype) : x, dim);
}
inline Tensor log_softmax(const Tensor& x, std::int64_t dim,
                          std::optional<DType> dtype = std::nullopt) {
  return ::leangrad::log_softmax(dtype ? x.to(*dtype) : x, dim);
}

}  // namespace leangrad::special
