// torch.linalg's decompositions and solvers, as LibTorch's torch::linalg functions: LU, Cholesky,
// QR, the symmetric eigenproblem and the SVD, and what is built on them (det, slogdet, inv, solve,
// solve_triangular), with the at:: names inverse, det, logdet, slogdet, cholesky_solve,
// cholesky_inverse and lu_unpack in namespace leangrad. Every function takes a batch of matrices
// (*, m, n) of float32 or float64 (PyTorch refuses 16-bit floats here too) and returns the batch's
// results; batch dims broadcast between two operands. The factorizations run on the host
// (kernels/matrix_decompositions.h), a CUDA tensor's values taking a round trip (Note [Linear
// algebra on the host] in the .cpp). Every gradient is a composition of differentiable functions,
// these among them, so it differentiates again (Note [Gradients of the decompositions]).
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <tuple>
#include <vector>

#include <leangrad/core/tensor.h>

namespace leangrad::linalg {

// A (*, n, n) = P^T L U with partial pivoting, as torch.linalg.lu_factor: LU (*, n, n) holds U
// on and above the diagonal and L's multipliers below it; pivots (*, n) int32, from 1: row i was
// swapped with row pivots[i] - 1 at step i (LAPACK's getrf). A singular A factors (a zero on U's
// diagonal). pivot must be true (PyTorch's CPU refuses false too). Square matrices only.
std::tuple<Tensor, Tensor> lu_factor(const Tensor& A, bool pivot = true);
// lu_factor with LAPACK's info (*) int32 as well, as torch.linalg.lu_factor_ex: 0, or k for the
// first zero U[k - 1, k - 1]; check_errors makes a nonzero info an Error.
std::tuple<Tensor, Tensor, Tensor> lu_factor_ex(const Tensor& A, bool pivot = true,
                                                bool check_errors = false);
// A = P L U, as torch.linalg.lu: P (*, n, n) a permutation matrix in A's dtype, L unit lower
// triangular, U upper triangular. Square matrices only.
std::tuple<Tensor, Tensor, Tensor> lu(const Tensor& A, bool pivot = true);
// The solution X of A X = B from lu_factor's LU and pivots (of A^T X = B with adjoint; X A = B
// with left false), as torch.linalg.lu_solve. Differentiable in LU and B.
Tensor lu_solve(const Tensor& LU, const Tensor& pivots, const Tensor& B, bool left = true,
                bool adjoint = false);

// A (*, n, n) symmetric, its lower triangle read, = P L D L^T P^T by Bunch-Kaufman pivoting, as
// torch.linalg.ldl_factor (LAPACK's sytrf, lower): LD (*, n, n) holds D's 1 x 1 and 2 x 2 blocks
// on the diagonal and first subdiagonal and L's multipliers below them (unit diagonal implied),
// zeros above the diagonal; pivots (*, n) int32, LAPACK's (from 1; a 2 x 2 block stores -p in
// both of its entries). hermitian is PyTorch's and changes nothing for real matrices. A D with an
// exactly zero pivot is an Error naming it (ldl_factor_ex returns info instead). Not
// differentiable, as PyTorch's: the results never require grad.
std::tuple<Tensor, Tensor> ldl_factor(const Tensor& A, bool hermitian = false);
// ldl_factor with LAPACK's info (*) int32 as well, as torch.linalg.ldl_factor_ex: 0, or k for the
// first zero D[k - 1, k - 1] (the factors are complete); check_errors makes a nonzero info an
// Error.
std::tuple<Tensor, Tensor, Tensor> ldl_factor_ex(const Tensor& A, bool hermitian = false,
                                                 bool check_errors = false);
// The solution X of A X = B from ldl_factor's LD and pivots (LAPACK's sytrs), B (*, n, k) with
// batch dims broadcast against LD's, as torch.linalg.ldl_solve. Pivots not as ldl_factor makes
// them (out of range, a 2 x 2 block's pair unmatched) are an Error. Differentiable in B (A is
// symmetric: gB = ldl_solve(LD, pivots, gX)); a gradient for LD is an Error at backward, as
// PyTorch's, which differentiates neither.
Tensor ldl_solve(const Tensor& LD, const Tensor& pivots, const Tensor& B, bool hermitian = false);

// The determinant (*), through the LU factors. Its gradient is the cofactor matrix: det A^{-T}
// for an invertible A, and from the SVD for a singular one (exact there too).
Tensor det(const Tensor& A);
// (sign, log|det|) (*), as torch.linalg.slogdet: (0, -inf) for a singular A.
std::tuple<Tensor, Tensor> slogdet(const Tensor& A);
// The inverse (*, n, n); a singular A is an Error naming the zero pivot, as PyTorch's.
Tensor inv(const Tensor& A);
// inv, and the info (*) int32 of each matrix's LU (0, or k for the first zero U[k - 1, k - 1]), as
// torch.linalg.inv_ex: a singular matrix's inverse is unspecified (infinities and NaN), and an
// Error only with check_errors.
std::tuple<Tensor, Tensor> inv_ex(const Tensor& A, bool check_errors = false);
// The X with A X = B (left) or X A = B, as torch.linalg.solve: B (*, n, k), or a batch of vectors
// (*, n) when B is 1-d or has A's shape without its last dim. A singular A is an Error.
Tensor solve(const Tensor& A, const Tensor& B, bool left = true);
// solve, and the info (broadcast batch) int32 of each A's LU, as torch.linalg.solve_ex: the
// solution for a singular A is unspecified, and an Error only with check_errors.
std::tuple<Tensor, Tensor> solve_ex(const Tensor& A, const Tensor& B, bool left = true,
                                    bool check_errors = false);
// The X with A X = B (left; B (*, n, k)) or X A = B (B (*, k, n)) for the triangle of A that
// upper names (the other is not read), ones taken on the diagonal with unitriangular, as
// torch.linalg.solve_triangular. A zero on the diagonal gives infinities (no Error, as PyTorch's).
Tensor solve_triangular(const Tensor& A, const Tensor& B, bool upper, bool left = true,
                        bool unitriangular = false);

// The Cholesky factor L (A = L L^T, lower triangle of A read) or U = L^T with upper, as
// torch.linalg.cholesky; an A that is not positive definite is an Error naming the first leading
// minor that is not. The gradient is symmetric (A is taken as symmetric).
Tensor cholesky(const Tensor& A, bool upper = false);
// cholesky, and the info (*) int32 (0, or the order of the first leading minor that is not
// positive definite), as torch.linalg.cholesky_ex: a failed matrix's factor is unspecified, and
// an Error only with check_errors. Its gradient is cholesky's.
std::tuple<Tensor, Tensor> cholesky_ex(const Tensor& A, bool upper = false,
                                       bool check_errors = false);

// A (*, m, n) = Q R with Householder reflections, R's diagonal carrying their signs (LAPACK's, so
// the factors are PyTorch's), as torch.linalg.qr. mode "reduced": Q (*, m, k), R (*, k, n), k =
// min(m, n); "complete": Q (*, m, m), R (*, m, n); "r": R only (Q empty, as PyTorch's) and no
// gradient. Not differentiable with "complete" for m > n (Q's last columns are not determined),
// as PyTorch's.
std::tuple<Tensor, Tensor> qr(const Tensor& A, std::string_view mode = "reduced");

// The first n columns of the product H_0 H_1 ... H_(k-1) of Householder reflections H_j = I -
// tau_j v_j v_j^T, v_j column j of A (*, m, n) below the diagonal under a leading 1 (geqrf's
// layout), tau (*, k), k <= n <= m, as torch.linalg.householder_product (torch.orgqr): with
// geqrf's output it is QR's Q. Composed of matmul and elementwise functions, so it
// differentiates in A and tau (twice too).
Tensor householder_product(const Tensor& A, const Tensor& tau);

// The eigenvalues (*, n), ascending, and orthonormal eigenvectors (columns of (*, n, n)) of the
// symmetric A, read from its lower ("L") or upper ("U") triangle, as torch.linalg.eigh. The
// eigenvectors are determined up to sign (and within a repeated eigenvalue's space): their
// gradient is that of a loss that does not depend on that choice, infinite at repeated
// eigenvalues. The gradient is symmetric.
std::tuple<Tensor, Tensor> eigh(const Tensor& A, std::string_view UPLO = "L");
// The eigenvalues of eigh alone, as torch.linalg.eigvalsh.
Tensor eigvalsh(const Tensor& A, std::string_view UPLO = "L");

// A (*, m, n) = U diag(S) Vh, as torch.linalg.svd: S (*, k) descending, U (*, m, m) and Vh (*, n,
// n) with full_matrices, else (*, m, k) and (*, k, n). Singular vectors are determined up to sign
// (and within a repeated value's space): their gradient is that of a loss that does not depend on
// that choice (U's and Vh's columns beyond k get none, as PyTorch's), infinite at repeated values.
std::tuple<Tensor, Tensor, Tensor> svd(const Tensor& A, bool full_matrices = true);
// The singular values alone, as torch.linalg.svdvals.
Tensor svdvals(const Tensor& A);

// ---- Built on the decompositions (compositions, differentiable as their parts are) ----------

// The matrix norm over the two dims `dim` (the last two by default), as torch.linalg.matrix_norm:
// ord 1 / -1 the largest / smallest column sum of |A|, inf / -inf the same over rows, 2 / -2 the
// largest / smallest singular value; "fro" (the default) the Frobenius norm, "nuc" the sum of the
// singular values.
Tensor matrix_norm(const Tensor& A, double ord, const std::vector<std::int64_t>& dim = {-2, -1},
                   bool keepdim = false);
Tensor matrix_norm(const Tensor& A, std::string_view ord = "fro",
                   const std::vector<std::int64_t>& dim = {-2, -1}, bool keepdim = false);
// The condition number in the 2-norm (s_max / s_min; p = -2: s_min / s_max), or in another
// matrix norm p (1, -1, inf, -inf): |A|_p |inv(A)|_p, as torch.linalg.cond.
Tensor cond(const Tensor& A, double p = 2.0);
Tensor cond(const Tensor& A, std::string_view p);
// The Moore-Penrose pseudo-inverse (*, n, m) from the SVD (from eigh with hermitian), singular
// values at or below max(atol, rtol s_max) taken as 0, as torch.linalg.pinv: rtol defaults to
// max(m, n) times the dtype's epsilon when neither is given, atol to 0.
Tensor pinv(const Tensor& A, std::optional<double> atol = std::nullopt,
            std::optional<double> rtol = std::nullopt, bool hermitian = false);
// The number of singular values (absolute eigenvalues with hermitian) above max(atol, rtol s_max),
// int64 (*), as torch.linalg.matrix_rank; the same defaults as pinv.
Tensor matrix_rank(const Tensor& A, std::optional<double> atol = std::nullopt,
                   std::optional<double> rtol = std::nullopt, bool hermitian = false);
// A^n for a square A by repeated squaring; n = 0 gives the identity, n < 0 inverts first, as
// torch.linalg.matrix_power.
Tensor matrix_power(const Tensor& A, std::int64_t n);
// The product of a chain of matrices in the order that costs the fewest multiplications (the
// classic dynamic program); the first may be a 1-d row vector and the last a 1-d column vector,
// as torch.linalg.multi_dot. At least two tensors, all 1-d or 2-d.
Tensor multi_dot(const std::vector<Tensor>& tensors);
// The dot products of x and y along dim of their broadcast shape (sum(x * y, dim)), as
// torch.linalg.vecdot (LibTorch's torch::linalg_vecdot): one floating dtype and one device, the
// sizes along dim equal once broadcast. Real dtypes only, so no conjugate.
Tensor vecdot(const Tensor& x, const Tensor& y, std::int64_t dim = -1);

// torch.linalg.vector_norm: leangrad::norm under its LibTorch name (ord 2 by default, inf, -inf,
// 0 or any other number; over dims, all by default).
Tensor vector_norm(const Tensor& x, double ord = 2.0, const std::vector<std::int64_t>& dim = {},
                   bool keepdim = false);
// torch.linalg.norm: without ord, the 2-norm of the elements over dim (all by default: the
// Frobenius norm of a matrix); with a numeric ord, matrix_norm over two dims (dim, or a 2-d x's
// own) or vector_norm over one (dim, or a 1-d x's own); "fro" and "nuc" are matrix norms.
Tensor norm(const Tensor& x, std::optional<double> ord = std::nullopt,
            const std::vector<std::int64_t>& dim = {}, bool keepdim = false);
Tensor norm(const Tensor& x, std::string_view ord, const std::vector<std::int64_t>& dim = {},
            bool keepdim = false);

// The inverse of A seen as a matrix (the product of its first ind dims) x (the product of the
// rest), which must be square, returned with shape A.shape[ind:] + A.shape[:ind], as
// torch.linalg.tensorinv (tensordot(tensorinv(A), A, ind) is the identity).
Tensor tensorinv(const Tensor& A, std::int64_t ind = 2);
// The X with tensordot(A, X, X.dim()) = B, X of shape A.shape[B.dim():], as
// torch.linalg.tensorsolve; dims (of A) are moved to the end first.
Tensor tensorsolve(const Tensor& A, const Tensor& B, const std::vector<std::int64_t>& dims = {});

// The least-squares solution X (*, n, k) of A X ~ B for A (*, m, n), B (*, m, k), of minimum
// norm when A is rank-deficient (singular values at or below rcond s_max, by default max(m, n)
// times the dtype's epsilon, taken as 0), as torch.linalg.lstsq, computed through the SVD for
// every driver ("gelsy", the CPU's default, "gelsd", "gelss", "gels"). The other results follow
// PyTorch's rules: B (*, m) with one dim fewer than A is a batch of vectors (the solution (*,
// n)); residuals (*, k), the squared column norms of A X - B, only when m > n, every matrix has
// full rank and the driver is not "gelsy" (else empty); rank (*, int64) for every driver but
// "gels" (else empty); singular_values (*, min(m, n)) for "gelsd" and "gelss" (else empty).
struct LstsqResult {
  Tensor solution, residuals, rank, singular_values;
};
LstsqResult lstsq(const Tensor& A, const Tensor& B, std::optional<double> rcond = std::nullopt,
                  std::string_view driver = "gelsy");
// The matrix exponential by scaling and squaring of the [13/13] Pade approximant (Higham 2005),
// each matrix of the batch scaled by its own power of 2, as torch.linalg.matrix_exp. Composed of
// matmul and solve, so it differentiates (again).
Tensor matrix_exp(const Tensor& A);

}  // namespace leangrad::linalg

namespace leangrad {

// at:: spellings: torch.inverse, torch.det, torch.logdet (NaN for a negative determinant),
// torch.slogdet, and torch.cholesky_solve (the X with A X = B from A's Cholesky factor L, or U =
// L^T with upper; B first, as PyTorch's).
Tensor inverse(const Tensor& A);
Tensor det(const Tensor& A);
Tensor logdet(const Tensor& A);
std::tuple<Tensor, Tensor> slogdet(const Tensor& A);
Tensor cholesky_solve(const Tensor& B, const Tensor& L, bool upper = false);
Tensor matrix_exp(const Tensor& A);
// The inverse of A = L L^T from its Cholesky factor L (*, n, n) (of A = U^T U from U with
// upper), as torch.cholesky_inverse: cholesky_solve(I, L), differentiable in L.
Tensor cholesky_inverse(const Tensor& L, bool upper = false);
// (P, L, U) of A = P L U from lu_factor's LU (*, m, n) and pivots (*, min(m, n)), as
// torch.lu_unpack: P (*, m, m) a permutation matrix in LU's dtype, L (*, m, k) unit lower
// triangular and U (*, k, n) upper triangular, k = min(m, n). Without unpack_data L and U, without
// unpack_pivots P, are empty (shape (0)). L and U differentiate in LU; pivots are checked (from
// 1 to m) on the host.
std::tuple<Tensor, Tensor, Tensor> lu_unpack(const Tensor& LU, const Tensor& pivots,
                                             bool unpack_data = true, bool unpack_pivots = true);
// LAPACK's geqrf of A (*, m, n), as torch.geqrf: (a, tau) with a (*, m, n) holding R on and above
// the diagonal and the Householder vectors' essential parts below it, tau (*, min(m, n)), A = Q R
// with Q = householder_product(a, tau) (and R's diagonal linalg::qr's). Not differentiable, as
// PyTorch's. orgqr is householder_product.
std::tuple<Tensor, Tensor> geqrf(const Tensor& A);
Tensor orgqr(const Tensor& A, const Tensor& tau);
// Q other, Q^T other (transpose), other Q (left false) or other Q^T, with Q (mn x mn) the product
// H_0 ... H_(k-1) of the Householder reflections in A (*, mn, k') and tau (*, k), k <= k' (geqrf's
// output), mn other's rows (left) or columns, as torch.ormqr (LAPACK's ormqr). The reflections
// are applied to other one by one, Q never formed; composed as householder_product is, so
// differentiable in all three (PyTorch 1.13's is not).
Tensor ormqr(const Tensor& A, const Tensor& tau, const Tensor& other, bool left = true,
             bool transpose = false);

// torch's deprecated norms, for programs that still call them: nuclear_norm is
// linalg::matrix_norm(A, "nuc") over the last two dims (or dim), frobenius_norm the 2-norm of
// the elements over all dims (or dim).
Tensor nuclear_norm(const Tensor& A, bool keepdim = false);
Tensor nuclear_norm(const Tensor& A, const std::vector<std::int64_t>& dim, bool keepdim = false);
Tensor frobenius_norm(const Tensor& A);
Tensor frobenius_norm(const Tensor& A, const std::vector<std::int64_t>& dim, bool keepdim = false);

}  // namespace leangrad
