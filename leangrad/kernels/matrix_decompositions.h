// The matrix decompositions behind torch.linalg's solvers (autograd/linalg_decompositions.h): LU
// with partial pivoting, LDL^T with Bunch-Kaufman pivoting (kernels/ldl.cpp), Cholesky, triangular
// solves, Householder QR, the symmetric eigenproblem and the SVD, on the host over a batch of
// row-major matrices in float or double, one matrix per task across threads (parallel_for). LU and
// Cholesky are LAPACK's right-looking blocked algorithms written here (Note [Blocked
// factorizations] in the .cpp), LDL^T its unblocked sytf2; the SVD Eigen's Householder
// bidiagonalization and then implicit QR on the bidiagonal, written here as LAPACK's bdsqr
// (kernels/bidiagonal_svd.h; Note [SVD by bidiagonal QR] in the .cpp), Eigen's BDCSVD above
// kSvdQrLimit columns; the others are Eigen's
// (HouseholderQR, SelfAdjointEigenSolver: tridiagonal QR). All
// are LAPACK's in what they return: getrf's and sytf2's pivots, potrf's failing minor, geqrf's
// signs (R's diagonal carries the Householder reflections' signs, so Q and R match LAPACK's and
// PyTorch's), syevd's ascending eigenvalues, gesdd's descending singular values.
// autograd/linalg_decompositions.cpp checks the arguments, makes the operands contiguous on the
// host, and moves the results back to the input's device (the CUDA tensors of these ops take the
// round trip; Note [Linear algebra on the host] there).
//
// Sizes: a batch of `batch` matrices, each (m, n) with m, n >= 0 and the products checked by the
// caller; every pointer is to `batch` contiguous row-major matrices of the stated shape.
#pragma once

#include <cstdint>

namespace leangrad::kernels {

// a (n, n) becomes its LU factors in place, as LAPACK's getrf: U on and above the diagonal, L's
// multipliers below it (L's unit diagonal implied). pivots (n, int32, from 1): row i was swapped
// with row pivots[i] - 1 at step i. info: 0, or k + 1 for the first exactly zero U[k, k] (the
// factors are still complete, as getrf's).
template <typename T>
void lu_factor(T* a, std::int64_t batch, std::int64_t n, std::int32_t* pivots, std::int32_t* info);

// b (n, k) becomes the solution X of A X = B (of A^T X = B with adjoint) from lu_factor's factors
// and pivots of A. A zero on U's diagonal gives infinities and NaN (the caller checks info).
template <typename T>
void lu_solve(const T* lu, const std::int32_t* pivots, T* b, std::int64_t batch, std::int64_t n,
              std::int64_t k, bool adjoint = false);

// a (n, n) symmetric, its lower triangle read, becomes the factors of A = P L D L^T P^T by
// Bunch-Kaufman diagonal pivoting, as LAPACK's sytf2 with uplo 'L' (kernels/ldl.cpp, Note
// [Bunch-Kaufman]): D's 1 x 1 and 2 x 2 blocks on the diagonal and first subdiagonal, L's
// multipliers below them (its unit diagonal implied), 0 above the diagonal. pivots (n, int32,
// from 1), LAPACK's: pivots[k] = p > 0 for a 1 x 1 block at k (rows and columns k and p - 1
// swapped); pivots[k] = pivots[k + 1] = -p for a 2 x 2 block at k, k + 1 (k + 1 and p - 1 swapped).
// info: 0, or k + 1 for the first D[k, k] that is exactly zero (the factors are still complete).
template <typename T>
void ldl_factor(T* a, std::int64_t batch, std::int64_t n, std::int32_t* pivots, std::int32_t* info);

// b (n, k) becomes the solution X of A X = B from ldl_factor's factors and pivots of A (sytrs).
// The pivots must be as ldl_factor writes them (the caller checks them): each |p| in [1, n], a
// negative one repeated in the next entry. A singular D gives infinities and NaN.
template <typename T>
void ldl_solve(const T* ld, const std::int32_t* pivots, T* b, std::int64_t batch, std::int64_t n,
               std::int64_t k);

// a (n, n) becomes its Cholesky factor L (A = L L^T, lower triangle of a read) in place, the upper
// triangle set to 0. info: 0, or k for the first leading minor of order k that is not positive
// definite (a is then left unspecified), as potrf's.
template <typename T>
void cholesky(T* a, std::int64_t batch, std::int64_t n, std::int32_t* info);

// b becomes the solution X of A X = B (left; b (n, k)) or X A = B (right; b (k, n)) for the
// triangle of a (n, n) named by upper, its diagonal taken as ones when unit_diagonal; the other
// triangle of a is not read. A zero on the diagonal gives infinities and NaN, as trsm's.
template <typename T>
void triangular_solve(const T* a, T* b, std::int64_t batch, std::int64_t n, std::int64_t k,
                      bool upper, bool left, bool unit_diagonal);

// A (m, n) = Q R with Householder reflections. k = min(m, n). complete: q (m, m), r (m, n);
// otherwise q (m, k), r (k, n). q may be null (torch's mode "r").
template <typename T>
void qr(const T* a, T* q, T* r, std::int64_t batch, std::int64_t m, std::int64_t n, bool complete);

// a (m, n) becomes LAPACK's geqrf output in place: R on and above the diagonal, the essential
// part of Householder vector j below the diagonal of column j (its leading 1 implied); tau
// (min(m, n)) the reflections' scalars, A = H_0 H_1 ... H_(k-1) R with H_j = I - tau_j v_j v_j^T.
template <typename T>
void geqrf(T* a, T* tau, std::int64_t batch, std::int64_t m, std::int64_t n);

// The symmetric A (n, n), read from its lower triangle (or upper), = V diag(w) V^T: w (n)
// ascending, v (n, n) the orthonormal eigenvectors as columns, or null for the values only.
// info: 0, or 1 where the iteration did not converge (w and v then unspecified).
template <typename T>
void eigh(const T* a, T* w, T* v, std::int64_t batch, std::int64_t n, bool upper,
          std::int32_t* info);

// A (m, n) = U diag(s) Vh: s (k = min(m, n)) descending and non-negative; u (m, m or k) and vh (n
// or k, n) orthonormal (full_matrices or not), both null for the values only. info: 0, or 1
// where the input holds a NaN or an infinity or the iteration did not converge. Matrices with k
// up to qr_limit finish with bidiagonal QR, larger ones with Eigen's divide and conquer (Note [SVD
// by bidiagonal QR]); the tests lower qr_limit to reach the second on small matrices.
inline constexpr std::int64_t kSvdQrLimit = 1024;
template <typename T>
void svd(const T* a, T* u, T* s, T* vh, std::int64_t batch, std::int64_t m, std::int64_t n,
         bool full_matrices, std::int32_t* info, std::int64_t qr_limit = kSvdQrLimit);

}  // namespace leangrad::kernels
