// The decompositions of kernels/matrix_decompositions.h: each matrix of the batch decomposed on
// one thread, the batch split across threads. LU and Cholesky are LAPACK's right-looking blocked
// algorithms (getrf, potrf) written here, whose trailing updates are one gemm per panel
// (kernels/cpu/gemm.h: oneDNN or Eigen, over every thread for a single matrix; Note [Blocked
// factorizations]); the SVD bidiagonalizes with Eigen and finishes with kernels/bidiagonal_svd.h
// (Note [SVD by bidiagonal QR]); the others map each matrix as a row-major Eigen matrix and call
// Eigen's decomposition.
#include <leangrad/kernels/matrix_decompositions.h>

#include <Eigen/Core>
#include <Eigen/Eigenvalues>
#include <Eigen/QR>
#include <Eigen/SVD>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <vector>

#include <leangrad/kernels/bidiagonal_svd.h>
#include <leangrad/kernels/cpu/gemm.h>
#include <leangrad/kernels/cpu/matrix_batches.h>
#include <leangrad/kernels/cpu/parallel_for.h>

namespace leangrad::kernels {

namespace {

template <typename T>
using RowMatrix = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
// Eigen's Householder QR runs on a column-major copy: its reflections update columns, and in a
// row-major matrix each column is strided (the 256 x 256 QR with Q was 1.3x slower, 512 1.45x).
template <typename T>
using ColMatrix = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::ColMajor>;
template <typename T>
using MatrixMap = Eigen::Map<RowMatrix<T>>;
template <typename T>
using ConstMatrixMap = Eigen::Map<const RowMatrix<T>>;
template <typename T>
using VectorMap = Eigen::Map<Eigen::Matrix<T, Eigen::Dynamic, 1>>;

using cpu::for_each_matrix;

// Note [Blocked factorizations]
// LU with partial pivoting and Cholesky are LAPACK's right-looking blocked algorithms (getrf,
// potrf) over panels of kPanel columns. Each panel is factored by the unblocked algorithm (its
// n x kPanel columns: O(n kPanel) work per column; LU's in a column-major copy of the panel, so
// the pivot search and the updates run over contiguous columns), then the rest of the matrix
// takes the panel in one gemm: A22 -= L21 U12 (LU) or A22 -= L21 L21^T (Cholesky). The gemms hold
// all but O(n^2 kPanel) of the n^3 flops and run at the GEMM's speed over every thread (Eigen's
// PartialPivLU and LLT factor one panel after another on one thread: a 256 x 256 LU took 0.40
// ms there, 27 GFLOP/s in float32 on Zen 4). The pivot of each column is its first element of
// largest magnitude at or below the diagonal after the updates, as getrf's (a NaN is never
// chosen over a number, as isamax's), and rows are swapped across the whole matrix, so the
// pivots are getrf's (ties aside: the updates round in another order than a LAPACK's).
constexpr std::int64_t kPanel = 32;
// The rows of one of Cholesky's trailing gemms.
constexpr std::int64_t kStrip = 128;

// Columns k .. end of rows k .. n of a (n, n) row-major factored unblocked with partial
// pivoting, as getf2: the panel is copied into `panel` (column-major, so the pivot search and
// each column's update run over contiguous memory), factored there, and copied back; each row
// swap is applied to the rest of the row in a at once. pivots[k .. end) from 1.
template <typename T>
void factor_panel(T* a, std::int64_t n, std::int64_t k, std::int64_t end, std::int32_t* pivots,
                  std::vector<T>& panel) {
  const std::int64_t rows = n - k;
  const std::int64_t width = end - k;
  panel.resize(static_cast<std::size_t>(rows * width));
  T* p = panel.data();
  for (std::int64_t r = 0; r < rows; ++r) {
    for (std::int64_t c = 0; c < width; ++c)
      p[c * rows + r] = a[(k + r) * n + k + c];
  }
  for (std::int64_t j = 0; j < width; ++j) {
    T* column = p + j * rows;
    std::int64_t best = j;
    T largest = std::abs(column[j]);
    for (std::int64_t r = j + 1; r < rows; ++r) {
      if (std::abs(column[r]) > largest) {
        largest = std::abs(column[r]);
        best = r;
      }
    }
    pivots[k + j] = static_cast<std::int32_t>(k + best + 1);
    if (best != j) {
      for (std::int64_t c = 0; c < width; ++c)
        std::swap(p[c * rows + j], p[c * rows + best]);
      T* row = a + (k + j) * n;
      T* other = a + (k + best) * n;
      std::swap_ranges(row, row + k, other);
      std::swap_ranges(row + end, row + n, other + end);
    }
    const T d = column[j];
    // A zero pivot (the column is zero at and below the diagonal): nothing to eliminate.
    if (d == T(0)) continue;
    // The multipliers by the reciprocal where it is normal, as getf2's (a division by d is
    // within an ulp of it, and its latency held the column back).
    if (std::abs(d) >= std::numeric_limits<T>::min()) {
      const T reciprocal = T(1) / d;
      for (std::int64_t r = j + 1; r < rows; ++r)
        column[r] *= reciprocal;
    } else {
      for (std::int64_t r = j + 1; r < rows; ++r)
        column[r] /= d;
    }
    // The panel's later columns less the multipliers times their pivot-row element.
    for (std::int64_t c = j + 1; c < width; ++c) {
      T* target = p + c * rows;
      const T u = target[j];
      if (u == T(0)) continue;
      for (std::int64_t r = j + 1; r < rows; ++r)
        target[r] -= column[r] * u;
    }
  }
  for (std::int64_t r = 0; r < rows; ++r) {
    for (std::int64_t c = 0; c < width; ++c)
      a[(k + r) * n + k + c] = p[c * rows + r];
  }
}

// a (n, n) row-major = P^T L U in place; pivots (n) from 1 as getrf's.
template <typename T>
void blocked_lu(T* a, std::int64_t n, std::int32_t* pivots) {
  const auto at = [a, n](std::int64_t i, std::int64_t j) -> T& { return a[i * n + j]; };
  std::vector<T> panel;
  for (std::int64_t k = 0; k < n; k += kPanel) {
    const std::int64_t end = std::min(k + kPanel, n);
    factor_panel(a, n, k, end, pivots, panel);
    if (end == n) break;
    // U12 = L11^-1 A12: the panel's rows right of it, by the unit lower triangle.
    for (std::int64_t r = k + 1; r < end; ++r) {
      T* row = a + r * n;
      for (std::int64_t q = k; q < r; ++q) {
        const T l = at(r, q);
        const T* upper = a + q * n;
        for (std::int64_t c = end; c < n; ++c)
          row[c] -= l * upper[c];
      }
    }
    // A22 -= L21 U12.
    const std::int64_t rest = n - end;
    cpu::gemm<T>(false, false, rest, rest, end - k, T(-1), a + end * n + k, n, a + k * n + end, n,
                 T(1), a + end * n + end, n);
  }
}

// a (n, n) row-major, its lower triangle = L L^T: L in place in the lower triangle, the upper
// one zeroed. Returns potrf's info: 0, or j + 1 for the first leading minor of order j + 1 that
// is not positive definite (a NaN pivot included), a then unspecified.
template <typename T>
std::int32_t blocked_cholesky(T* a, std::int64_t n) {
  const auto at = [a, n](std::int64_t i, std::int64_t j) -> T& { return a[i * n + j]; };
  for (std::int64_t k = 0; k < n; k += kPanel) {
    const std::int64_t end = std::min(k + kPanel, n);
    // The panel: columns k .. end of rows k .. n, unblocked (the columns left of k are already
    // subtracted by the updates).
    for (std::int64_t j = k; j < end; ++j) {
      T d = at(j, j);
      for (std::int64_t p = k; p < j; ++p)
        d -= at(j, p) * at(j, p);
      if (!(d > T(0))) return static_cast<std::int32_t>(j + 1);
      d = std::sqrt(d);
      at(j, j) = d;
      for (std::int64_t i = j + 1; i < n; ++i) {
        T s = at(i, j);
        for (std::int64_t p = k; p < j; ++p)
          s -= at(i, p) * at(j, p);
        at(i, j) = s / d;
      }
    }
    if (end == n) break;
    // A22 -= L21 L21^T on and below the diagonal, a strip of kStrip rows at a time (each to
    // its diagonal block's end: the upper triangle is not read, and is zeroed below), so about
    // half of the whole block's flops.
    for (std::int64_t r = end; r < n; r += kStrip) {
      const std::int64_t rows = std::min(kStrip, n - r);
      cpu::gemm<T>(false, true, rows, r + rows - end, end - k, T(-1), a + r * n + k, n,
                   a + end * n + k, n, T(1), a + r * n + end, n);
    }
  }
  for (std::int64_t i = 0; i < n; ++i)
    std::fill(a + i * n + i + 1, a + (i + 1) * n, T(0));
  return 0;
}

template <int Mode, typename T, typename B>
void solve_with(const ConstMatrixMap<T>& a, B& b, bool left) {
  if (left) {
    a.template triangularView<Mode>().solveInPlace(b);
  } else {
    a.template triangularView<Mode>().template solveInPlace<Eigen::OnTheRight>(b);
  }
}

}  // namespace

template <typename T>
void lu_factor(T* a, std::int64_t batch, std::int64_t n, std::int32_t* pivots, std::int32_t* info) {
  for_each_matrix(batch, n, n, [&](std::int64_t b) {
    T* m = a + b * n * n;
    blocked_lu(m, n, pivots + b * n);
    info[b] = 0;
    for (std::int64_t k = 0; k < n; ++k) {
      if (m[k * n + k] == T(0)) {
        info[b] = static_cast<std::int32_t>(k + 1);
        break;
      }
    }
  });
}

template <typename T>
void lu_solve(const T* lu, const std::int32_t* pivots, T* b, std::int64_t batch, std::int64_t n,
              std::int64_t k, bool adjoint) {
  for_each_matrix(batch, n, std::max(n, k), [&](std::int64_t i) {
    const ConstMatrixMap<T> f(lu + i * n * n, n, n);
    MatrixMap<T> x(b + i * n * k, n, k);
    const std::int32_t* p = pivots + i * n;
    if (n == 0 || k == 0) return;
    if (!adjoint) {
      // A = P^T L U: X = U^{-1} L^{-1} P B, P B by getrf's swaps in order.
      for (std::int64_t r = 0; r < n; ++r) {
        if (p[r] - 1 != r) x.row(r).swap(x.row(p[r] - 1));
      }
      f.template triangularView<Eigen::UnitLower>().solveInPlace(x);
      f.template triangularView<Eigen::Upper>().solveInPlace(x);
      return;
    }
    // A^T = U^T L^T P: X = P^T L^{-T} U^{-T} B, P^T by the swaps undone in reverse order.
    f.transpose().template triangularView<Eigen::Lower>().solveInPlace(x);
    f.transpose().template triangularView<Eigen::UnitUpper>().solveInPlace(x);
    for (std::int64_t r = n - 1; r >= 0; --r) {
      if (p[r] - 1 != r) x.row(r).swap(x.row(p[r] - 1));
    }
  });
}

template <typename T>
void cholesky(T* a, std::int64_t batch, std::int64_t n, std::int32_t* info) {
  for_each_matrix(batch, n, n,
                  [&](std::int64_t b) { info[b] = blocked_cholesky(a + b * n * n, n); });
}

template <typename T>
void triangular_solve(const T* a, T* b, std::int64_t batch, std::int64_t n, std::int64_t k,
                      bool upper, bool left, bool unit_diagonal) {
  if (batch == 0 || n == 0 || k == 0) return;  // (and no division by a batch of 0 below)
  // The k right-hand sides (B's columns when left, its rows otherwise) are independent: fewer
  // matrices than threads split each one's into `pieces`, one Eigen solve (blocked, on one
  // thread) each, of at least kMinPiece of them and of enough work to pay for a task. Eigen's
  // triangular solve does not thread, where OpenBLAS's trsm does: the backward of a single
  // large Cholesky or solve_triangular ran on one core.
  constexpr std::int64_t kMinPiece = 64;
  constexpr std::int64_t kMinPieceWork = std::int64_t{1} << 21;  // n^2 * columns multiply-adds
  const std::int64_t threads = cpu::max_threads();
  std::int64_t pieces = 1;
  if (batch < threads) {
    const std::int64_t by_width = k / kMinPiece;
    const std::int64_t by_work = n * n * k / kMinPieceWork;
    pieces =
        std::max<std::int64_t>(1, std::min({(threads + batch - 1) / batch, by_width, by_work}));
  }
  const auto solve = [&](std::int64_t i, std::int64_t first, std::int64_t count) {
    const ConstMatrixMap<T> am(a + i * n * n, n, n);
    MatrixMap<T> whole(b + i * n * k, left ? n : k, left ? k : n);
    auto part = left ? whole.block(0, first, n, count) : whole.block(first, 0, count, n);
    if (upper) {
      unit_diagonal ? solve_with<Eigen::UnitUpper>(am, part, left)
                    : solve_with<Eigen::Upper>(am, part, left);
    } else {
      unit_diagonal ? solve_with<Eigen::UnitLower>(am, part, left)
                    : solve_with<Eigen::Lower>(am, part, left);
    }
  };
  if (pieces == 1) {
    for_each_matrix(batch, n, std::max<std::int64_t>(n, k),
                    [&](std::int64_t i) { solve(i, 0, k); });
    return;
  }
  cpu::parallel_for(batch * pieces, 1, [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t t = begin; t < end; ++t) {
      const std::int64_t i = t / pieces;
      const std::int64_t p = t % pieces;
      const std::int64_t first = k * p / pieces;
      solve(i, first, k * (p + 1) / pieces - first);
    }
  });
}

template <typename T>
void qr(const T* a, T* q, T* r, std::int64_t batch, std::int64_t m, std::int64_t n, bool complete) {
  const std::int64_t k = std::min(m, n);
  const std::int64_t q_cols = complete ? m : k;
  const std::int64_t r_rows = complete ? m : k;
  for_each_matrix(batch, m, n, [&](std::int64_t b) {
    const ConstMatrixMap<T> am(a + b * m * n, m, n);
    MatrixMap<T> rm(r + b * r_rows * n, r_rows, n);
    if (m == 0 || n == 0) {
      rm.setZero();
      if (q != nullptr) MatrixMap<T>(q + b * m * q_cols, m, q_cols).setIdentity();
      return;
    }
    const Eigen::HouseholderQR<ColMatrix<T>> h(am);
    rm = h.matrixQR().topRows(r_rows).template triangularView<Eigen::Upper>();
    if (q == nullptr) return;
    ColMatrix<T> qc = ColMatrix<T>::Identity(m, q_cols);
    qc.applyOnTheLeft(h.householderQ());
    MatrixMap<T>(q + b * m * q_cols, m, q_cols) = qc;
  });
}

template <typename T>
void geqrf(T* a, T* tau, std::int64_t batch, std::int64_t m, std::int64_t n) {
  const std::int64_t k = std::min(m, n);
  for_each_matrix(batch, m, n, [&](std::int64_t b) {
    if (k == 0) return;
    MatrixMap<T> am(a + b * m * n, m, n);
    // Eigen's reflections are dlarfg's: beta = -sign(alpha) |x|, tau = (beta - alpha) / beta,
    // v = x / (alpha - beta) below a leading 1, and tau = 0 for a column already reduced.
    const Eigen::HouseholderQR<ColMatrix<T>> h(am);
    am = h.matrixQR();
    VectorMap<T>(tau + b * k, k) = h.hCoeffs();
  });
}

template <typename T>
void eigh(const T* a, T* w, T* v, std::int64_t batch, std::int64_t n, bool upper,
          std::int32_t* info) {
  for_each_matrix(batch, n, n, [&](std::int64_t b) {
    const ConstMatrixMap<T> am(a + b * n * n, n, n);
    info[b] = 0;
    if (n == 0) return;
    const int options = v != nullptr ? Eigen::ComputeEigenvectors : Eigen::EigenvaluesOnly;
    // The solver reads the lower triangle; the upper one of A is the lower one of A^T.
    const Eigen::SelfAdjointEigenSolver<RowMatrix<T>> es =
        upper ? Eigen::SelfAdjointEigenSolver<RowMatrix<T>>(RowMatrix<T>(am.transpose()), options)
              : Eigen::SelfAdjointEigenSolver<RowMatrix<T>>(am, options);
    if (es.info() != Eigen::Success) {
      info[b] = 1;
      return;
    }
    VectorMap<T>(w + b * n, n) = es.eigenvalues();
    if (v != nullptr) MatrixMap<T>(v + b * n * n, n, n) = es.eigenvectors();
  });
}

// Note [SVD by bidiagonal QR]
//   A (or A^T where A is wide, A^T = V S U^T swapping the roles) is scaled by its largest
//   magnitude, reduced to upper bidiagonal form B = Q^T A P by Eigen's Householder
//   bidiagonalization (blocked), and B's SVD is computed by implicit QR (kernels/bidiagonal_svd.h,
//   Note [Bidiagonal QR]), its rotations applied to Q and P formed from the reflections: U = Q U_B,
//   V = P V_B; the values are scaled back. The values have B's high relative accuracy on top of
//   the reduction's backward error, as LAPACK's gesvd. Eigen's BDCSVD (divide and conquer) spent
//   5 of its 7.6 ms on a 256 x 256 float32 matrix in the bidiagonal part, where the QR takes 2.4
//   (1.4 without vectors: svdvals); bench/results/2026-12-06-cpu-svd-bidiagonal-qr-zen4-2core.md.
//   The QR's rotations stream U's and V's columns once a sweep, O(k^2) sweeps' steps of O(k) work
//   each, where the divide and conquer's merges are matrix products: one thread, 512 x 512 float32
//   33 ms against 41, 1024 255 against 259, 2048 2.02 s against 1.69. Above kSvdQrLimit columns
//   (k) the SVD is BDCSVD's.
//   A NaN or an infinity is refused up front (info 1), as the iteration would not converge on it.

// The SVD of the row-major A by Eigen's BDCSVD into s, and u and vh when vectors, as svd's.
template <typename T>
void divide_and_conquer_svd(const ConstMatrixMap<T>& am, T* u, T* s, T* vh, bool full_matrices,
                            std::int32_t& info) {
  int options = 0;
  if (u != nullptr) {
    options = full_matrices ? Eigen::ComputeFullU | Eigen::ComputeFullV
                            : Eigen::ComputeThinU | Eigen::ComputeThinV;
  }
  const Eigen::BDCSVD<RowMatrix<T>> d(am, options);
  if (d.info() != Eigen::Success) {
    info = 1;
    return;
  }
  const std::int64_t k = d.singularValues().size();
  VectorMap<T>(s, k) = d.singularValues();
  if (u == nullptr) return;
  const auto matrix_u = d.matrixU();
  const auto matrix_v = d.matrixV();
  MatrixMap<T>(u, matrix_u.rows(), matrix_u.cols()) = matrix_u;
  MatrixMap<T>(vh, matrix_v.cols(), matrix_v.rows()) = matrix_v.transpose();
}

template <typename T>
void svd(const T* a, T* u, T* s, T* vh, std::int64_t batch, std::int64_t m, std::int64_t n,
         bool full_matrices, std::int32_t* info, std::int64_t qr_limit) {
  const std::int64_t k = std::min(m, n);
  const std::int64_t u_cols = full_matrices ? m : k;
  const std::int64_t vh_rows = full_matrices ? n : k;
  // An empty U or Vh may have no data at all (m = 0 or n = 0): vectors are asked for when either
  // pointer is given (the empty one is then never read).
  const bool vectors = u != nullptr || vh != nullptr;
  const bool wide = m < n;
  for_each_matrix(batch, m, n, [&](std::int64_t b) {
    const ConstMatrixMap<T> am(a + b * m * n, m, n);
    info[b] = 0;
    if (k == 0) {
      if (vectors) {
        MatrixMap<T>(u + b * m * u_cols, m, u_cols).setIdentity();
        MatrixMap<T>(vh + b * vh_rows * n, vh_rows, n).setIdentity();
      }
      return;
    }
    if (!am.allFinite()) {
      info[b] = 1;
      return;
    }
    if (k > qr_limit) {
      divide_and_conquer_svd<T>(am, vectors ? u + b * m * u_cols : nullptr, s + b * k,
                                vectors ? vh + b * vh_rows * n : nullptr, full_matrices, info[b]);
      return;
    }
    ColMatrix<T> tall = wide ? ColMatrix<T>(am.transpose()) : ColMatrix<T>(am);
    const T scale = tall.cwiseAbs().maxCoeff();
    if (scale > 0) tall /= scale;
    // Not const: Eigen 3.4 declares householderV() non-const.
    Eigen::internal::UpperBidiagonalization<ColMatrix<T>> reduction(tall);
    Eigen::Matrix<T, Eigen::Dynamic, 1> diagonal = reduction.bidiagonal().diagonal();
    Eigen::Matrix<T, Eigen::Dynamic, 1> super = reduction.bidiagonal().diagonal(1);
    // The tall side's left vectors (rows, all its columns when full_matrices) and right (k, k).
    const std::int64_t rows = tall.rows();
    ColMatrix<T> left, right;
    if (vectors) {
      left = ColMatrix<T>::Identity(rows, full_matrices ? rows : k);
      left.applyOnTheLeft(reduction.householderU());
      right = ColMatrix<T>::Identity(k, k);
      right.applyOnTheLeft(reduction.householderV());
    }
    if (!bidiagonal_svd(diagonal.data(), super.data(), k, vectors ? left.data() : nullptr, rows,
                        vectors ? right.data() : nullptr, k)) {
      info[b] = 1;
      return;
    }
    VectorMap<T>(s + b * k, k) = diagonal * (scale > 0 ? scale : T(1));
    if (!vectors) return;
    MatrixMap<T> um(u + b * m * u_cols, m, u_cols);
    MatrixMap<T> vhm(vh + b * vh_rows * n, vh_rows, n);
    if (wide) {  // A = right S left^T
      um = right;
      vhm = left.transpose();
    } else {
      um = left;
      vhm = right.transpose();
    }
  });
}

#define LEANGRAD_DECOMPOSITIONS(T)                                                                \
  template void lu_factor<T>(T*, std::int64_t, std::int64_t, std::int32_t*, std::int32_t*);       \
  template void lu_solve<T>(const T*, const std::int32_t*, T*, std::int64_t, std::int64_t,        \
                            std::int64_t, bool);                                                  \
  template void cholesky<T>(T*, std::int64_t, std::int64_t, std::int32_t*);                       \
  template void triangular_solve<T>(const T*, T*, std::int64_t, std::int64_t, std::int64_t, bool, \
                                    bool, bool);                                                  \
  template void qr<T>(const T*, T*, T*, std::int64_t, std::int64_t, std::int64_t, bool);          \
  template void geqrf<T>(T*, T*, std::int64_t, std::int64_t, std::int64_t);                       \
  template void eigh<T>(const T*, T*, T*, std::int64_t, std::int64_t, bool, std::int32_t*);       \
  template void svd<T>(const T*, T*, T*, T*, std::int64_t, std::int64_t, std::int64_t, bool,      \
                       std::int32_t*, std::int64_t);
LEANGRAD_DECOMPOSITIONS(float)
LEANGRAD_DECOMPOSITIONS(double)
#undef LEANGRAD_DECOMPOSITIONS

}  // namespace leangrad::kernels
