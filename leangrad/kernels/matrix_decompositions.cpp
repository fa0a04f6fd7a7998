// The decompositions of kernels/matrix_decompositions.h: each matrix of the batch mapped in place
// as a row-major Eigen matrix and decomposed on one thread, the batch split across threads. A
// single large matrix keeps Eigen's own blocking on one thread (Eigen parallelises only its GEMM,
// and the factorizations' panels dominate for the sizes these ops see).
#include <leangrad/kernels/matrix_decompositions.h>

#include <Eigen/Cholesky>
#include <Eigen/Core>
#include <Eigen/Eigenvalues>
#include <Eigen/LU>
#include <Eigen/QR>
#include <Eigen/SVD>

#include <algorithm>
#include <cstddef>
#include <numeric>
#include <vector>

#include <leangrad/kernels/cpu/parallel_for.h>

namespace leangrad::kernels {

namespace {

template <typename T>
using RowMatrix = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
template <typename T>
using MatrixMap = Eigen::Map<RowMatrix<T>>;
template <typename T>
using ConstMatrixMap = Eigen::Map<const RowMatrix<T>>;
template <typename T>
using VectorMap = Eigen::Map<Eigen::Matrix<T, Eigen::Dynamic, 1>>;

// One task per matrix once a matrix holds a few thousand flops; small matrices are grouped.
std::int64_t grain_for_matrices(std::int64_t m, std::int64_t n) {
  return std::max<std::int64_t>(1, 4096 / std::max<std::int64_t>(m * n, 1));
}

template <typename F>
void for_each_matrix(std::int64_t batch, std::int64_t m, std::int64_t n, const F& fn) {
  cpu::parallel_for(batch, grain_for_matrices(m, n), [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t b = begin; b < end; ++b)
      fn(b);
  });
}

// LAPACK's pivots from the row order of P A (row i of P A is row order[i] of A): the swaps that,
// applied in turn to A's rows (row i with row pivots[i] - 1 >= i), give that order. The sequence
// is unique, so it is getrf's whenever the row order is.
void pivots_of(const Eigen::VectorXi& order, std::int32_t* pivots) {
  const auto n = static_cast<std::size_t>(order.size());
  std::vector<int> at(n), where(n);  // at[r]: the original row at position r; where: its inverse
  std::iota(at.begin(), at.end(), 0);
  std::iota(where.begin(), where.end(), 0);
  for (std::size_t i = 0; i < n; ++i) {
    const auto j =
        static_cast<std::size_t>(where[static_cast<std::size_t>(order[Eigen::Index(i)])]);
    pivots[i] = static_cast<std::int32_t>(j + 1);
    std::swap(at[i], at[j]);
    where[static_cast<std::size_t>(at[i])] = static_cast<int>(i);
    where[static_cast<std::size_t>(at[j])] = static_cast<int>(j);
  }
}

// The order of the first leading minor of `a` (lower triangle read) that is not positive
// definite, by an unblocked Cholesky: run only after Eigen's LLT failed, to name it as potrf.
template <typename T>
std::int32_t failing_minor(RowMatrix<T> a) {
  const Eigen::Index n = a.rows();
  for (Eigen::Index j = 0; j < n; ++j) {
    T d = a(j, j);
    for (Eigen::Index p = 0; p < j; ++p)
      d -= a(j, p) * a(j, p);
    if (!(d > T(0))) return static_cast<std::int32_t>(j + 1);
    d = std::sqrt(d);
    a(j, j) = d;
    for (Eigen::Index i = j + 1; i < n; ++i) {
      T s = a(i, j);
      for (Eigen::Index p = 0; p < j; ++p)
        s -= a(i, p) * a(j, p);
      a(i, j) = s / d;
    }
  }
  return static_cast<std::int32_t>(n);  // Eigen failed where this loop did not: name the last
}

template <int Mode, typename T>
void solve_with(const ConstMatrixMap<T>& a, MatrixMap<T>& b, bool left) {
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
    MatrixMap<T> m(a + b * n * n, n, n);
    if (n == 0) {
      info[b] = 0;
      return;
    }
    const Eigen::PartialPivLU<Eigen::Ref<RowMatrix<T>>> lu(m);  // in place
    const Eigen::VectorXi order = lu.permutationP() * Eigen::VectorXi::LinSpaced(n, 0, int(n - 1));
    pivots_of(order, pivots + b * n);
    info[b] = 0;
    for (std::int64_t k = 0; k < n; ++k) {
      if (m(k, k) == T(0)) {
        info[b] = static_cast<std::int32_t>(k + 1);
        break;
      }
    }
  });
}

template <typename T>
void lu_solve(const T* lu, const std::int32_t* pivots, T* b, std::int64_t batch, std::int64_t n,
              std::int64_t k) {
  for_each_matrix(batch, n, std::max(n, k), [&](std::int64_t i) {
    const ConstMatrixMap<T> f(lu + i * n * n, n, n);
    MatrixMap<T> x(b + i * n * k, n, k);
    const std::int32_t* p = pivots + i * n;
    if (n == 0 || k == 0) return;
    // A = P^T L U: X = U^{-1} L^{-1} P B, P B by getrf's swaps in order.
    for (std::int64_t r = 0; r < n; ++r) {
      if (p[r] - 1 != r) x.row(r).swap(x.row(p[r] - 1));
    }
    f.template triangularView<Eigen::UnitLower>().solveInPlace(x);
    f.template triangularView<Eigen::Upper>().solveInPlace(x);
  });
}

template <typename T>
void cholesky(T* a, std::int64_t batch, std::int64_t n, std::int32_t* info) {
  for_each_matrix(batch, n, n, [&](std::int64_t b) {
    MatrixMap<T> m(a + b * n * n, n, n);
    info[b] = 0;
    if (n == 0) return;
    const RowMatrix<T> original = m;
    const Eigen::LLT<Eigen::Ref<RowMatrix<T>>, Eigen::Lower> llt(m);  // in place, lower triangle
    // Eigen's test is d <= 0, which a NaN passes; potrf's also stops at a NaN pivot.
    if (llt.info() != Eigen::Success || m.diagonal().hasNaN()) {
      info[b] = failing_minor<T>(original);
      return;
    }
    m.template triangularView<Eigen::StrictlyUpper>().setZero();
  });
}

template <typename T>
void triangular_solve(const T* a, T* b, std::int64_t batch, std::int64_t n, std::int64_t k,
                      bool upper, bool left, bool unit_diagonal) {
  for_each_matrix(batch, n, std::max<std::int64_t>(n, k), [&](std::int64_t i) {
    const ConstMatrixMap<T> am(a + i * n * n, n, n);
    MatrixMap<T> bm(b + i * n * k, left ? n : k, left ? k : n);
    if (n == 0 || k == 0) return;
    if (upper) {
      unit_diagonal ? solve_with<Eigen::UnitUpper>(am, bm, left)
                    : solve_with<Eigen::Upper>(am, bm, left);
    } else {
      unit_diagonal ? solve_with<Eigen::UnitLower>(am, bm, left)
                    : solve_with<Eigen::Lower>(am, bm, left);
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
    const Eigen::HouseholderQR<RowMatrix<T>> h(am);
    rm = h.matrixQR().topRows(r_rows).template triangularView<Eigen::Upper>();
    if (q == nullptr) return;
    MatrixMap<T> qm(q + b * m * q_cols, m, q_cols);
    qm.setIdentity();
    qm.applyOnTheLeft(h.householderQ());
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

template <typename T>
void svd(const T* a, T* u, T* s, T* vh, std::int64_t batch, std::int64_t m, std::int64_t n,
         bool full_matrices, std::int32_t* info) {
  const std::int64_t k = std::min(m, n);
  const std::int64_t u_cols = full_matrices ? m : k;
  const std::int64_t vh_rows = full_matrices ? n : k;
  const bool vectors = u != nullptr;
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
    int options = 0;
    if (vectors) {
      options = full_matrices ? Eigen::ComputeFullU | Eigen::ComputeFullV
                              : Eigen::ComputeThinU | Eigen::ComputeThinV;
    }
    const Eigen::BDCSVD<RowMatrix<T>> d(am, options);
    if (d.info() != Eigen::Success) {
      info[b] = 1;
      return;
    }
    VectorMap<T>(s + b * k, k) = d.singularValues();
    if (!vectors) return;
    MatrixMap<T>(u + b * m * u_cols, m, u_cols) = d.matrixU();
    MatrixMap<T>(vh + b * vh_rows * n, vh_rows, n) = d.matrixV().transpose();
  });
}

#define LEANGRAD_DECOMPOSITIONS(T)                                                                \
  template void lu_factor<T>(T*, std::int64_t, std::int64_t, std::int32_t*, std::int32_t*);       \
  template void lu_solve<T>(const T*, const std::int32_t*, T*, std::int64_t, std::int64_t,        \
                            std::int64_t);                                                        \
  template void cholesky<T>(T*, std::int64_t, std::int64_t, std::int32_t*);                       \
  template void triangular_solve<T>(const T*, T*, std::int64_t, std::int64_t, std::int64_t, bool, \
                                    bool, bool);                                                  \
  template void qr<T>(const T*, T*, T*, std::int64_t, std::int64_t, std::int64_t, bool);          \
  template void eigh<T>(const T*, T*, T*, std::int64_t, std::int64_t, bool, std::int32_t*);       \
  template void svd<T>(const T*, T*, T*, T*, std::int64_t, std::int64_t, std::int64_t, bool,      \
                       std::int32_t*);
LEANGRAD_DECOMPOSITIONS(float)
LEANGRAD_DECOMPOSITIONS(double)
#undef LEANGRAD_DECOMPOSITIONS

}  // namespace leangrad::kernels
