// Tensor-level entry of the orthogonal polynomials (kernels/ops.h): checks, contiguous operands,
// the device switch. Launchers: orthogonal_polynomial of kernels/backend.h; the math:
// kernels/orthogonal_polynomials.h.
#include <leangrad/core/creation.h>
#include <leangrad/core/cuda.h>
#include <leangrad/kernels/backend.h>
#include <leangrad/kernels/ops.h>
#include <leangrad/kernels/ops_checks.h>

namespace leangrad {

const char* op_name(OrthogonalPolynomial p) {
  switch (p) {
    case OrthogonalPolynomial::ChebyshevT:
      return "special_chebyshev_polynomial_t";
    case OrthogonalPolynomial::ChebyshevU:
      return "special_chebyshev_polynomial_u";
    case OrthogonalPolynomial::ChebyshevV:
      return "special_chebyshev_polynomial_v";
    case OrthogonalPolynomial::ChebyshevW:
      return "special_chebyshev_polynomial_w";
    case OrthogonalPolynomial::ShiftedChebyshevT:
      return "special_shifted_chebyshev_polynomial_t";
    case OrthogonalPolynomial::ShiftedChebyshevU:
      return "special_shifted_chebyshev_polynomial_u";
    case OrthogonalPolynomial::ShiftedChebyshevV:
      return "special_shifted_chebyshev_polynomial_v";
    case OrthogonalPolynomial::ShiftedChebyshevW:
      return "special_shifted_chebyshev_polynomial_w";
    case OrthogonalPolynomial::HermiteH:
      return "special_hermite_polynomial_h";
    case OrthogonalPolynomial::HermiteHe:
      return "special_hermite_polynomial_he";
    case OrthogonalPolynomial::LaguerreL:
      return "special_laguerre_polynomial_l";
    case OrthogonalPolynomial::LegendreP:
      return "special_legendre_polynomial_p";
  }
  return "orthogonal_polynomial";
}

namespace ops {

Tensor orthogonal_polynomial(OrthogonalPolynomial p, const Tensor& x, const Tensor& n, bool slope) {
  const char* name = op_name(p);
  check_floating(name, x, "input", ListFloatingDTypes::Yes);
  check_floating(name, n, "degree", ListFloatingDTypes::Yes);
  LG_CHECK_DTYPE(n.dtype() == x.dtype(), name, ": degree dtype ", n.dtype(),
                 " differs from the input's ", x.dtype());
  LG_CHECK_SHAPE(n.shape() == x.shape(), name, ": degree of shape ", n.shape(),
                 " does not match the input's shape ", x.shape());
  LG_CHECK_DEVICE(n.device() == x.device(), name, ": degree on ", n.device(), ", input on ",
                  x.device());
  const Tensor xs = contiguous(x);
  const Tensor ns = contiguous(n);
  Tensor out = empty(x.shape(), x.options());
  if (out.numel() == 0) return out;
  const cuda::DeviceGuard guard(x.device());
  switch (x.device().type) {
    case DeviceType::CPU:
      kernels::cpu::orthogonal_polynomial(p, slope, x.dtype(), x.numel(), out.data_ptr(),
                                          xs.data_ptr(), ns.data_ptr());
      break;
    case DeviceType::CUDA:
      kernels::cuda::orthogonal_polynomial(p, slope, x.dtype(), x.numel(), out.data_ptr(),
                                           xs.data_ptr(), ns.data_ptr());
      break;
  }
  return out;
}

}  // namespace ops
}  // namespace leangrad
