// The singular value decomposition of an upper bidiagonal matrix by implicit QR sweeps (Demmel and
// Kahan's, as LAPACK's bdsqr), the second half of kernels::svd (matrix_decompositions.cpp), after
// Eigen's Householder bidiagonalization: B = U S V^T, the singular values to high relative
// accuracy, the rotations accumulated into the caller's U and V.
//
// Note [Bidiagonal QR]
//   - B (n, n) has d on its diagonal and e above it. Each sweep chases a bulge down (or up) the
//     unreduced block [ll, m] with plane rotations from the right and the left, one pair per row,
//     so that it stays bidiagonal and its last (first) off-diagonal entry shrinks; the right
//     rotations are applied to the columns of V and the left ones to those of U as they are made.
//   - The sweep runs from the larger end of the block to the smaller (chosen when a new block
//     starts): on a graded matrix the shift then comes from the small end, where the values
//     converge, and an entry is dropped as negligible relative to its own neighbourhood.
//   - An off-diagonal entry is set to 0 when it is below tol times mu, mu the running lower
//     bound on the smallest singular value of the block above (below) it (the recurrence
//     mu_j = |d_j| mu_(j-1) / (mu_(j-1) + |e_(j-1)|)); that keeps every singular value's relative
//     accuracy (about n tol), not only the largest's. tol = clamp(eps^(-1/8), 10, 100) eps, as
//     bdsqr's. An absolute floor, thresh, stops the iteration where mu underflows.
//   - The shift is the smaller singular value of the 2 x 2 block at the converging end. Where it
//     is negligible against the block's largest value (n tol sigma_min / sigma_max below
//     max(eps, tol / 100)), the sweep is the zero-shift one, which makes every entry with
//     products and rotations only (no subtraction) and so keeps the small singular values
//     accurate; otherwise the standard shifted sweep.
//   - A 2 x 2 block is finished at once by its exact SVD (svd_2x2). Rotations are made with
//     scaling where a square would overflow or underflow (make_rotation).
//   - At the end every singular value is made non-negative (negating V's column) and the values
//     are sorted in descending order with their vectors (selection sort: n swaps of columns).
//   - The iterations are capped at 6 n^2 inner steps, as bdsqr's; past that the call fails.
#pragma once

#include <cstdint>

namespace leangrad::kernels {

// The singular values of the upper bidiagonal B with diagonal d (n) and superdiagonal e (n - 1)
// into d, descending and non-negative; e is destroyed. u (u_rows, n) and v (v_rows, n), each
// column-major (column j at u + j * u_rows) or null, are multiplied on the right by B's left and
// right singular vectors: U B V^T = (u U_B) S (v V_B)^T. Returns false when the iteration did not
// converge (d and e then hold no meaning). float and double.
template <typename T>
bool bidiagonal_svd(T* d, T* e, std::int64_t n, T* u, std::int64_t u_rows, T* v,
                    std::int64_t v_rows);

// The SVD of the 2 x 2 upper triangular [f g; 0 h]:
//   [ cos_left sin_left; -sin_left cos_left] [f g; 0 h] [cos_right -sin_right; sin_right cos_right]
//     = [larger 0; 0 smaller],
// |larger| >= |smaller|, either of them possibly negative; both to a few ulps of relative accuracy
// (LAPACK's lasv2). Exposed for its test.
template <typename T>
struct Svd2x2 {
  T smaller;
  T larger;
  T cos_left;
  T sin_left;
  T cos_right;
  T sin_right;
};

template <typename T>
Svd2x2<T> svd_2x2(T f, T g, T h);

}  // namespace leangrad::kernels
