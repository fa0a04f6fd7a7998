// torch.special's orthogonal polynomials, as LibTorch's torch::special_chebyshev_polynomial_t(x,
// n) and the rest (torch::special::chebyshev_polynomial_t in autograd/special.h): the Chebyshev
// polynomials of the first to fourth kinds T, U, V, W, the same shifted to [0, 1]
// (T*_n(x) = T_n(2x - 1)), the physicists' and probabilists' Hermite polynomials H and He, the
// Laguerre polynomials L and the Legendre polynomials P, elementwise in x and the degree n,
// broadcast together (x and n on one device; either may be a number).
//   - The degree is n truncated toward zero: 0 below 0, 1 at 0 (Note [Orthogonal polynomials]
//     in kernels/orthogonal_polynomials.h has the rest: the closed forms, the infinities).
//   - The dtype is x's and n's promoted, float32 where that is integral or bool. Every floating
//     dtype is computed in double and rounded (PyTorch's have no float16 or bfloat16 kernels).
//   - Differentiable in x, where PyTorch's are not: the gradient is the derivative of the
//     recurrence, computed beside it (not differentiable again). The degree gets no gradient
//     (truncation is piecewise constant).
//   - Laguerre and Legendre values, and every gradient, run n steps of the recurrence: a degree
//     above 2^20 (+inf too) there is an Error (one read of a flag from the device, a
//     synchronisation on CUDA), where PyTorch runs its loop however long.
//   Tensor p = special_legendre_polynomial_p(x, 3);              // (5x^3 - 3x) / 2
//   Tensor t = special_chebyshev_polynomial_t(x, arange(0, 8));  // T_0 .. T_7 at each x
#pragma once

#include <leangrad/core/tensor.h>

namespace leangrad {

Tensor special_chebyshev_polynomial_t(const Tensor& x, const Tensor& n);
Tensor special_chebyshev_polynomial_t(const Tensor& x, double n);
Tensor special_chebyshev_polynomial_t(double x, const Tensor& n);
Tensor special_chebyshev_polynomial_u(const Tensor& x, const Tensor& n);
Tensor special_chebyshev_polynomial_u(const Tensor& x, double n);
Tensor special_chebyshev_polynomial_u(double x, const Tensor& n);
Tensor special_chebyshev_polynomial_v(const Tensor& x, const Tensor& n);
Tensor special_chebyshev_polynomial_v(const Tensor& x, double n);
Tensor special_chebyshev_polynomial_v(double x, const Tensor& n);
Tensor special_chebyshev_polynomial_w(const Tensor& x, const Tensor& n);
Tensor special_chebyshev_polynomial_w(const Tensor& x, double n);
Tensor special_chebyshev_polynomial_w(double x, const Tensor& n);
Tensor special_shifted_chebyshev_polynomial_t(const Tensor& x, const Tensor& n);
Tensor special_shifted_chebyshev_polynomial_t(const Tensor& x, double n);
Tensor special_shifted_chebyshev_polynomial_t(double x, const Tensor& n);
Tensor special_shifted_chebyshev_polynomial_u(const Tensor& x, const Tensor& n);
Tensor special_shifted_chebyshev_polynomial_u(const Tensor& x, double n);
Tensor special_shifted_chebyshev_polynomial_u(double x, const Tensor& n);
Tensor special_shifted_chebyshev_polynomial_v(const Tensor& x, const Tensor& n);
Tensor special_shifted_chebyshev_polynomial_v(const Tensor& x, double n);
Tensor special_shifted_chebyshev_polynomial_v(double x, const Tensor& n);
Tensor special_shifted_chebyshev_polynomial_w(const Tensor& x, const Tensor& n);
Tensor special_shifted_chebyshev_polynomial_w(const Tensor& x, double n);
Tensor special_shifted_chebyshev_polynomial_w(double x, const Tensor& n);
Tensor special_hermite_polynomial_h(const Tensor& x, const Tensor& n);
Tensor special_hermite_polynomial_h(const Tensor& x, double n);
Tensor special_hermite_polynomial_h(double x, const Tensor& n);
Tensor special_hermite_polynomial_he(const Tensor& x, const Tensor& n);
Tensor special_hermite_polynomial_he(const Tensor& x, double n);
Tensor special_hermite_polynomial_he(double x, const Tensor& n);
Tensor special_laguerre_polynomial_l(const Tensor& x, const Tensor& n);
Tensor special_laguerre_polynomial_l(const Tensor& x, double n);
Tensor special_laguerre_polynomial_l(double x, const Tensor& n);
Tensor special_legendre_polynomial_p(const Tensor& x, const Tensor& n);
Tensor special_legendre_polynomial_p(const Tensor& x, double n);
Tensor special_legendre_polynomial_p(double x, const Tensor& n);

}  // namespace leangrad
