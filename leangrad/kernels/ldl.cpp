// LDL^T with Bunch-Kaufman diagonal pivoting (kernels/matrix_decompositions.h: ldl_factor,
// ldl_solve), LAPACK's sytf2 and sytrs for the lower triangle, over row-major matrices.
#include <leangrad/kernels/matrix_decompositions.h>

#include <algorithm>
#include <cmath>
#include <utility>
#include <vector>

#include <leangrad/kernels/cpu/matrix_batches.h>

namespace leangrad::kernels {

// Note [Bunch-Kaufman]
//   A symmetric indefinite A has no LDL^T with a diagonal D in general ([[0, 1], [1, 0]]), and
//   pivoting on the diagonal alone is unstable. Bunch and Kaufman's rule (LAPACK's sytf2, which
//   torch.linalg.ldl_factor calls through sytrf for the matrices it factors unblocked, n <= 64)
//   takes at step k, with alpha = (1 + sqrt(17)) / 8, colmax the largest |A[i, k]| below the
//   diagonal (at row imax) and rowmax the largest off-diagonal |A[imax, j]| of row and column
//   imax within the trailing matrix:
//     - |A[k, k]| >= alpha colmax, or |A[k, k]| >= alpha colmax^2 / rowmax: a 1 x 1 pivot
//       A[k, k], no swap;
//     - else |A[imax, imax]| >= alpha rowmax: a 1 x 1 pivot after swapping k and imax;
//     - else a 2 x 2 pivot on rows k, k + 1 after swapping k + 1 and imax.
//   Growth stays bounded by (2.57)^(n - 1) and the multipliers by 1 / (1 - alpha) for 1 x 1 steps.
//   Swaps are symmetric (rows and columns at once) and, as LAPACK's, act on the trailing matrix
//   only: the multipliers already in L keep their rows, and sytrs applies each swap at its step.
//   A column whose candidates are all 0 (or whose diagonal is NaN) is skipped with info set, as
//   sytf2 does. Only the lower triangle is read and written here (a[i n + j], i >= j); the upper
//   triangle is zeroed at the end, as PyTorch's LD. Unblocked: O(n^3 / 3) flops at level-2 speed,
//   which is what LibTorch runs below 65 columns; a blocked sytrf (dlasyf's panels) would take the
//   trailing updates to a GEMM for large n.

namespace {

// The first index of the largest |x[i]| over x[0], x[stride], ..., as LAPACK's i?amax (0-based).
template <typename T>
std::int64_t index_of_largest(const T* x, std::int64_t count, std::int64_t stride) {
  std::int64_t best = 0;
  T largest = std::abs(x[0]);
  for (std::int64_t i = 1; i < count; ++i) {
    const T v = std::abs(x[i * stride]);
    if (v > largest) {
      largest = v;
      best = i;
    }
  }
  return best;
}

template <typename T>
void factor_one(T* a, std::int64_t n, std::int32_t* pivots, std::int32_t* info) {
  const T alpha = (T(1) + std::sqrt(T(17))) / T(8);
  auto at = [&](std::int64_t i, std::int64_t j) -> T& { return a[i * n + j]; };
  std::vector<T> column(static_cast<std::size_t>(n));
  *info = 0;
  std::int64_t k = 0;
  while (k < n) {
    std::int64_t step = 1;
    std::int64_t kp = k;
    const T absakk = std::abs(at(k, k));
    std::int64_t imax = k;
    T colmax = 0;
    if (k + 1 < n) {
      imax = k + 1 + index_of_largest(&at(k + 1, k), n - k - 1, n);
      colmax = std::abs(at(imax, k));
    }
    if (std::max(absakk, colmax) == T(0) || std::isnan(absakk)) {
      if (*info == 0) *info = static_cast<std::int32_t>(k + 1);
    } else {
      if (absakk < alpha * colmax) {
        // rowmax: the largest off-diagonal element of row and column imax in the trailing matrix.
        T rowmax = std::abs(at(imax, k + index_of_largest(&at(imax, k), imax - k, 1)));
        if (imax + 1 < n) {
          const std::int64_t jmax =
              imax + 1 + index_of_largest(&at(imax + 1, imax), n - imax - 1, n);
          rowmax = std::max(rowmax, std::abs(at(jmax, imax)));
        }
        if (absakk >= alpha * colmax * (colmax / rowmax)) {
          kp = k;
        } else if (std::abs(at(imax, imax)) >= alpha * rowmax) {
          kp = imax;
        } else {
          kp = imax;
          step = 2;
        }
      }
      const std::int64_t kk = k + step - 1;
      if (kp != kk) {
        // Swap rows and columns kk and kp of the trailing matrix's lower triangle.
        for (std::int64_t i = kp + 1; i < n; ++i)
          std::swap(at(i, kk), at(i, kp));
        for (std::int64_t j = kk + 1; j < kp; ++j)
          std::swap(at(j, kk), at(kp, j));
        std::swap(at(kk, kk), at(kp, kp));
        if (step == 2) std::swap(at(k + 1, k), at(kp, k));
      }
      if (step == 1) {
        // A[k+1:, k+1:] -= x x^T / d, x = A[k+1:, k]; then the column becomes x / d.
        if (k + 1 < n) {
          // syr's order: a[i, j] += x[i] (-d11 x[j]).
          const T d11 = T(1) / at(k, k);
          for (std::int64_t j = k + 1; j < n; ++j)
            column[static_cast<std::size_t>(j)] = -d11 * at(j, k);
          for (std::int64_t i = k + 1; i < n; ++i) {
            const T xi = at(i, k);
            T* row = &at(i, 0);
            for (std::int64_t j = k + 1; j <= i; ++j)
              row[j] += xi * column[static_cast<std::size_t>(j)];
          }
          for (std::int64_t i = k + 1; i < n; ++i)
            at(i, k) *= d11;
        }
      } else if (k + 2 < n) {
        // The 2 x 2 block D = [[a, b], [b, c]] at (k, k + 1): each later row j gets its two
        // multipliers (wk, wkp1) = [A[j, k], A[j, k + 1]] D^{-1}, and the trailing matrix loses
        // their products, in sytf2's arithmetic.
        T d21 = at(k + 1, k);
        const T d11 = at(k + 1, k + 1) / d21;
        const T d22 = at(k, k) / d21;
        const T t = T(1) / (d11 * d22 - T(1));
        d21 = t / d21;
        std::vector<T> wk(static_cast<std::size_t>(n)), wkp1(static_cast<std::size_t>(n));
        for (std::int64_t j = k + 2; j < n; ++j) {
          wk[static_cast<std::size_t>(j)] = d21 * (d11 * at(j, k) - at(j, k + 1));
          wkp1[static_cast<std::size_t>(j)] = d21 * (d22 * at(j, k + 1) - at(j, k));
        }
        for (std::int64_t i = k + 2; i < n; ++i) {
          const T aik = at(i, k), aik1 = at(i, k + 1);
          T* row = &at(i, 0);
          for (std::int64_t j = k + 2; j <= i; ++j)
            row[j] = row[j] - aik * wk[static_cast<std::size_t>(j)] -
                     aik1 * wkp1[static_cast<std::size_t>(j)];
        }
        for (std::int64_t j = k + 2; j < n; ++j) {
          at(j, k) = wk[static_cast<std::size_t>(j)];
          at(j, k + 1) = wkp1[static_cast<std::size_t>(j)];
        }
      }
    }
    if (step == 1) {
      pivots[k] = static_cast<std::int32_t>(kp + 1);
    } else {
      pivots[k] = pivots[k + 1] = static_cast<std::int32_t>(-(kp + 1));
    }
    k += step;
  }
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t j = i + 1; j < n; ++j)
      at(i, j) = T(0);
}

template <typename T>
void swap_rows(T* b, std::int64_t k, std::int64_t i, std::int64_t j) {
  if (i != j) std::swap_ranges(b + i * k, b + (i + 1) * k, b + j * k);
}

// sytrs for the lower triangle: L D L^T X = P^T B, one matrix.
template <typename T>
void solve_one(const T* ld, const std::int32_t* pivots, T* b, std::int64_t n, std::int64_t k) {
  auto at = [&](std::int64_t i, std::int64_t j) { return ld[i * n + j]; };
  auto row = [&](std::int64_t i) { return b + i * k; };
  // L D Y = P B, forward.
  for (std::int64_t s = 0; s < n;) {
    if (pivots[s] > 0) {
      swap_rows(b, k, s, pivots[s] - 1);
      for (std::int64_t i = s + 1; i < n; ++i) {
        const T l = at(i, s);
        for (std::int64_t c = 0; c < k; ++c)
          row(i)[c] -= l * row(s)[c];
      }
      const T inverse = T(1) / at(s, s);  // scal's
      for (std::int64_t c = 0; c < k; ++c)
        row(s)[c] *= inverse;
      s += 1;
    } else {
      swap_rows(b, k, s + 1, -pivots[s] - 1);
      for (std::int64_t i = s + 2; i < n; ++i) {
        const T l0 = at(i, s), l1 = at(i, s + 1);
        for (std::int64_t c = 0; c < k; ++c)
          row(i)[c] -= l0 * row(s)[c] + l1 * row(s + 1)[c];
      }
      const T akm1k = at(s + 1, s);
      const T akm1 = at(s, s) / akm1k;
      const T ak = at(s + 1, s + 1) / akm1k;
      const T denom = akm1 * ak - T(1);
      for (std::int64_t c = 0; c < k; ++c) {
        const T bkm1 = row(s)[c] / akm1k;
        const T bk = row(s + 1)[c] / akm1k;
        row(s)[c] = (ak * bkm1 - bk) / denom;
        row(s + 1)[c] = (akm1 * bk - bkm1) / denom;
      }
      s += 2;
    }
  }
  // L^T P^T X = Y, backward.
  for (std::int64_t s = n - 1; s >= 0;) {
    const std::int64_t first = pivots[s] > 0 ? s : s - 1;  // the block's first row
    for (std::int64_t r = first; r <= s; ++r) {
      for (std::int64_t i = s + 1; i < n; ++i) {
        const T l = at(i, r);
        for (std::int64_t c = 0; c < k; ++c)
          row(r)[c] -= l * row(i)[c];
      }
    }
    swap_rows(b, k, s, std::abs(pivots[s]) - 1);
    s = first - 1;
  }
}

}  // namespace

template <typename T>
void ldl_factor(T* a, std::int64_t batch, std::int64_t n, std::int32_t* pivots,
                std::int32_t* info) {
  cpu::for_each_matrix(
      batch, n, n, [&](std::int64_t b) { factor_one(a + b * n * n, n, pivots + b * n, info + b); });
}

template <typename T>
void ldl_solve(const T* ld, const std::int32_t* pivots, T* b, std::int64_t batch, std::int64_t n,
               std::int64_t k) {
  cpu::for_each_matrix(batch, n, std::max(n, k), [&](std::int64_t m) {
    solve_one(ld + m * n * n, pivots + m * n, b + m * n * k, n, k);
  });
}

template void ldl_factor<float>(float*, std::int64_t, std::int64_t, std::int32_t*, std::int32_t*);
template void ldl_factor<double>(double*, std::int64_t, std::int64_t, std::int32_t*, std::int32_t*);
template void ldl_solve<float>(const float*, const std::int32_t*, float*, std::int64_t,
                               std::int64_t, std::int64_t);
template void ldl_solve<double>(const double*, const std::int32_t*, double*, std::int64_t,
                                std::int64_t, std::int64_t);

}  // namespace leangrad::kernels
