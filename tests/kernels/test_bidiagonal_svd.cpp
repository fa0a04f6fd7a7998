// kernels/bidiagonal_svd.h: the SVD of an upper bidiagonal matrix by implicit QR (Note [Bidiagonal
// QR]) and its 2 x 2 step, against references computed here in long double: the singular values
// by bisection on the Golub-Kahan matrix (an independent algorithm, with high relative accuracy
// of its own), the factors by multiplying them back. The matrices are random, graded in either
// direction (large at the top, then at the bottom: the sweeps run down and up, and the zero-shift
// sweep runs where the values span many decades), with zeros on the diagonal or above it, and
// with clustered values; in float and double. Then kernels::svd's two algorithms (bidiagonal QR up
// to kSvdQrLimit columns, Eigen's divide and conquer above) on the same matrices.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include <leangrad/kernels/bidiagonal_svd.h>
#include <leangrad/kernels/matrix_decompositions.h>

namespace leangrad::test {
namespace {

using kernels::bidiagonal_svd;
using kernels::svd_2x2;

template <typename T>
constexpr long double kUnit = std::numeric_limits<T>::epsilon() / 2;

// The singular values of the bidiagonal (d, e), descending: the non-negative eigenvalues of the
// Golub-Kahan matrix, the symmetric tridiagonal of order 2n with zero diagonal and d_0, e_0, d_1,
// e_1, ... beside it, each found by bisection on Sturm counts in long double to full precision
// (the count of eigenvalues below x of a zero-diagonal tridiagonal is computed with relative
// accuracy, Demmel and Kahan 1990).
std::vector<long double> reference_values(const std::vector<long double>& d,
                                          const std::vector<long double>& e) {
  const std::size_t n = d.size();
  std::vector<long double> off;  // the Golub-Kahan off-diagonal, 2n - 1 entries
  for (std::size_t i = 0; i < n; ++i) {
    off.push_back(d[i]);
    if (i + 1 < n) off.push_back(e[i]);
  }
  // How many eigenvalues lie below x.
  auto below = [&](long double x) {
    std::size_t count = 0;
    long double q = -x;
    if (q < 0) ++count;
    for (const long double b : off) {
      if (q == 0) q = std::numeric_limits<long double>::min();
      q = -x - b * b / q;
      if (q < 0) ++count;
    }
    return count;
  };
  long double bound = 0;  // Gershgorin
  for (std::size_t i = 0; i < off.size(); ++i) {
    const long double left = std::fabs(off[i]);
    const long double right = i + 1 < off.size() ? std::fabs(off[i + 1]) : 0.0L;
    bound = std::max(bound, left + right);
  }
  std::vector<long double> values(n);
  for (std::size_t k = 0; k < n; ++k) {
    // The (n - k)-th largest eigenvalue of 2n: below it lie 2n - (k + 1) of them.
    const std::size_t rank = 2 * n - (k + 1);
    long double lo = 0, hi = bound * (1 + 1e-15L) + std::numeric_limits<long double>::min();
    for (int it = 0; it < 20000 && hi - lo > 0; ++it) {
      const long double mid = lo + (hi - lo) / 2;
      if (mid <= lo || mid >= hi) break;
      (below(mid) > rank ? hi : lo) = mid;
    }
    values[k] = hi;
  }
  return values;
}

enum class Kind { Random, GradedDown, GradedUp, ZerosOnDiagonal, ZerosAbove, Clustered };

const char* kind_name(Kind kind) {
  switch (kind) {
    case Kind::Random:
      return "random";
    case Kind::GradedDown:
      return "graded down";
    case Kind::GradedUp:
      return "graded up";
    case Kind::ZerosOnDiagonal:
      return "zeros on the diagonal";
    case Kind::ZerosAbove:
      return "zeros above it";
    case Kind::Clustered:
      return "clustered";
  }
  return "";
}

struct Bidiagonal {
  std::vector<long double> d, e;
};

// Entries of a bidiagonal of the kind; graded ones span `decades` (fewer for float, whose range
// they must stay within).
Bidiagonal make_bidiagonal(Kind kind, std::size_t n, double decades, std::mt19937_64& rng) {
  std::normal_distribution<double> normal;
  Bidiagonal b{std::vector<long double>(n), std::vector<long double>(n > 0 ? n - 1 : 0)};
  auto grade = [&](std::size_t i) {
    const double t = n > 1 ? static_cast<double>(i) / static_cast<double>(n - 1) : 0.0;
    if (kind == Kind::GradedDown) return std::pow(10.0, -decades * t);
    if (kind == Kind::GradedUp) return std::pow(10.0, -decades * (1 - t));
    return 1.0;
  };
  for (std::size_t i = 0; i < n; ++i) {
    b.d[i] = normal(rng) * grade(i);
    if (kind == Kind::ZerosOnDiagonal && i % 3 == 1) b.d[i] = 0;
    if (kind == Kind::Clustered) b.d[i] = 1 + 1e-3 * normal(rng);
  }
  for (std::size_t i = 0; i + 1 < n; ++i) {
    b.e[i] = normal(rng) * grade(i);
    if (kind == Kind::ZerosAbove && i % 4 == 2) b.e[i] = 0;
    if (kind == Kind::Clustered) b.e[i] = 1e-4 * normal(rng);
  }
  return b;
}

// bdsqr's tol: the relative accuracy its convergence tests keep (Note [Bidiagonal QR]).
template <typename T>
long double qr_tolerance() {
  return std::clamp(std::pow(kUnit<T>, -0.125L), 10.0L, 100.0L) * kUnit<T>;
}

// max |<x_i, x_j> - delta_ij| over `count` vectors of `length` entries, in long double: entry r
// of vector i at x[i * vector_stride + r * entry_stride] (columns of a column-major matrix, rows
// of a row-major one, or columns of a row-major one).
template <typename T>
long double orthonormality_error(const std::vector<T>& x, std::int64_t count, std::int64_t length,
                                 std::int64_t vector_stride, std::int64_t entry_stride) {
  long double worst = 0;
  for (std::int64_t i = 0; i < count; ++i) {
    for (std::int64_t j = 0; j < count; ++j) {
      long double dot = 0;
      for (std::int64_t r = 0; r < length; ++r) {
        dot += static_cast<long double>(x[i * vector_stride + r * entry_stride]) *
               x[j * vector_stride + r * entry_stride];
      }
      worst = std::max(worst, std::fabs(dot - (i == j ? 1 : 0)));
    }
  }
  return worst;
}

template <typename T>
void check_bidiagonal(Kind kind, std::size_t n, double decades, std::uint64_t seed) {
  SCOPED_TRACE(std::string(kind_name(kind)) + ", n = " + std::to_string(n) +
               (sizeof(T) == 4 ? ", float" : ", double"));
  std::mt19937_64 rng(seed);
  const Bidiagonal b = make_bidiagonal(kind, n, decades, rng);
  // The entries as T (the reference takes the same rounded entries).
  std::vector<T> d(b.d.begin(), b.d.end()), e(b.e.begin(), b.e.end());
  const std::vector<long double> d_exact(d.begin(), d.end()), e_exact(e.begin(), e.end());
  const std::int64_t size = static_cast<std::int64_t>(n);
  std::vector<T> u(n * n, T(0)), v(n * n, T(0));  // column-major identities
  for (std::size_t i = 0; i < n; ++i)
    u[i * n + i] = v[i * n + i] = 1;
  std::vector<T> values = d, scratch = e;
  ASSERT_TRUE(bidiagonal_svd(values.data(), scratch.data(), size, u.data(), size, v.data(), size));

  // Each value to high relative accuracy: the convergence tests drop entries below tol times a
  // lower bound on the nearby singular values, each changing them by a relative tol at most, and
  // a value meets at most n of them; the sweeps' roundings add a few u each.
  const std::vector<long double> exact = reference_values(d_exact, e_exact);
  const long double relative = 2 * static_cast<long double>(n) * qr_tolerance<T>();
  long double big = 0;
  for (const long double x : exact)
    big = std::max(big, x);
  for (std::size_t i = 0; i < n; ++i) {
    EXPECT_GE(values[i], T(0));
    if (i > 0) {
      EXPECT_GE(values[i - 1], values[i]) << "not descending at " << i;
    }
    // An exact zero (a zero on the diagonal can make one; bisection leaves it far below T's
    // range) is a zero to a relative tol of the largest value.
    const bool zero = exact[i] < std::numeric_limits<T>::min();
    const long double scale = zero ? big : exact[i];
    EXPECT_LE(std::fabs(values[i] - exact[i]), relative * scale)
        << "value " << i << ": " << static_cast<double>(values[i]) << " against "
        << static_cast<double>(exact[i]);
  }

  // U S V^T = B and U, V orthogonal, to a rounding per rotation applied: each column pair takes
  // at most 6 n^2 rotations in all (the iteration cap), far fewer in practice; 4 n u bounds them
  // on these matrices (the measured residuals are below n u).
  const long double residual_bound = 4 * static_cast<long double>(n) * kUnit<T>;
  long double worst_residual = 0;
  for (std::size_t r = 0; r < n; ++r) {
    for (std::size_t c = 0; c < n; ++c) {
      long double product = 0;
      for (std::size_t k = 0; k < n; ++k)
        product += static_cast<long double>(u[k * n + r]) * values[k] * v[k * n + c];
      long double entry = 0;
      if (c == r) entry = d_exact[r];
      if (c == r + 1) entry = e_exact[r];
      worst_residual = std::max(worst_residual, std::fabs(product - entry));
    }
  }
  EXPECT_LE(worst_residual, residual_bound * big);
  EXPECT_LE(orthonormality_error(u, size, size, size, 1), residual_bound);  // columns
  EXPECT_LE(orthonormality_error(v, size, size, size, 1), residual_bound);

  // Without vectors the same values, bit for bit: the rotations never feed back into d and e.
  std::vector<T> alone = d, alone_scratch = e;
  ASSERT_TRUE(bidiagonal_svd<T>(alone.data(), alone_scratch.data(), size, nullptr, 0, nullptr, 0));
  EXPECT_EQ(alone, values);
}

TEST(BidiagonalSvd, MatchesBisectionAndReconstructs) {
  std::uint64_t seed = 1;
  for (const Kind kind : {Kind::Random, Kind::GradedDown, Kind::GradedUp, Kind::ZerosOnDiagonal,
                          Kind::ZerosAbove, Kind::Clustered}) {
    for (const std::size_t n : {1, 2, 3, 4, 7, 16, 41, 90}) {
      check_bidiagonal<double>(kind, n, 24.0, seed);
      check_bidiagonal<float>(kind, n, 12.0, seed);
      ++seed;
    }
  }
}

// A NaN never converges: the iteration stops at its cap and says so, rather than loop forever.
TEST(BidiagonalSvd, ReportsANaNAsNotConverged) {
  std::vector<double> d = {1.0, std::numeric_limits<double>::quiet_NaN(), 2.0, 3.0};
  std::vector<double> e = {0.5, 0.5, 0.5};
  EXPECT_FALSE(bidiagonal_svd<double>(d.data(), e.data(), 4, nullptr, 0, nullptr, 0));
}

// [c_l s_l; -s_l c_l] [f g; 0 h] [c_r -s_r; s_r c_r] = diag(larger, smaller), in long double, for
// magnitudes over 60 decades and with zeros: the off-diagonal entries and the rotations' norms
// within a few ulps, and both values to a few ulps of relative accuracy (their product is |f h|
// and the sum of their squares f^2 + g^2 + h^2).
TEST(BidiagonalSvd, TwoByTwoIsExact) {
  std::mt19937_64 rng(7);
  std::normal_distribution<double> normal;
  std::uniform_real_distribution<double> exponent(-30, 30);
  // Each quantity is a dozen roundings or so from the inputs.
  const long double bound = 16 * kUnit<double>;
  for (int trial = 0; trial < 100000; ++trial) {
    const double f = trial % 7 == 0 ? 0.0 : normal(rng) * std::pow(10.0, exponent(rng));
    const double g = trial % 13 == 0 ? 0.0 : normal(rng) * std::pow(10.0, exponent(rng));
    const double h = trial % 11 == 0 ? 0.0 : normal(rng) * std::pow(10.0, exponent(rng));
    const long double scale = std::max({std::fabs(f), std::fabs(g), std::fabs(h)});
    if (scale == 0) continue;
    const kernels::Svd2x2<double> s = svd_2x2(f, g, h);
    SCOPED_TRACE("f " + std::to_string(f) + " g " + std::to_string(g) + " h " + std::to_string(h));
    const long double cl = s.cos_left, sl = s.sin_left, cr = s.cos_right, sr = s.sin_right;
    const long double a00 = cl * f, a01 = cl * g + sl * h, a10 = -sl * f, a11 = -sl * g + cl * h;
    const long double r00 = a00 * cr + a01 * sr, r01 = -a00 * sr + a01 * cr;
    const long double r10 = a10 * cr + a11 * sr, r11 = -a10 * sr + a11 * cr;
    ASSERT_LE(std::fabs(r00 - s.larger) / scale, bound);
    ASSERT_LE(std::fabs(r11 - s.smaller) / scale, bound);
    ASSERT_LE(std::fabs(r01) / scale, bound);
    ASSERT_LE(std::fabs(r10) / scale, bound);
    ASSERT_LE(std::fabs(cl * cl + sl * sl - 1), bound);
    ASSERT_LE(std::fabs(cr * cr + sr * sr - 1), bound);
    ASSERT_GE(std::fabs(s.larger), std::fabs(s.smaller));
    const long double product = std::fabs(static_cast<long double>(f) * h);
    const long double got = std::fabs(static_cast<long double>(s.smaller) * s.larger);
    if (product > 0) {
      ASSERT_LE(std::fabs(got / product - 1), bound);
    } else {
      ASSERT_EQ(s.smaller, 0.0);
    }
    const long double squares = static_cast<long double>(f) * f + static_cast<long double>(g) * g +
                                static_cast<long double>(h) * h;
    const long double got_squares = static_cast<long double>(s.larger) * s.larger +
                                    static_cast<long double>(s.smaller) * s.smaller;
    if (std::isfinite(static_cast<double>(squares)) && squares > 0 &&
        squares > std::numeric_limits<double>::min()) {
      ASSERT_LE(std::fabs(got_squares / squares - 1), 2 * bound);
    }
  }
}

// kernels::svd with qr_limit 0 takes BDCSVD, which the library uses only above kSvdQrLimit (1024)
// columns: both algorithms give a factorization of A, within the residual of a backward-stable
// one (a sum of n products per entry, so c n u max|A| with the max norm's gap to the 2-norm
// another n), the same values to that bound, orthonormal factors and descending values.
template <typename T>
void check_both_svds(std::int64_t m, std::int64_t n, bool full, std::uint64_t seed) {
  SCOPED_TRACE(std::to_string(m) + " x " + std::to_string(n) + (full ? " full" : " thin") +
               (sizeof(T) == 4 ? ", float" : ", double"));
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal;
  std::vector<T> a(static_cast<std::size_t>(m * n));
  for (T& x : a)
    x = static_cast<T>(normal(rng));
  const std::int64_t k = std::min(m, n);
  const std::int64_t u_cols = full ? m : k, vh_rows = full ? n : k;
  long double max_a = 0;
  for (const T x : a)
    max_a = std::max(max_a, std::fabs(static_cast<long double>(x)));
  const long double big = static_cast<long double>(std::max(m, n));
  const long double bound = 8 * big * big * kUnit<T> * max_a;
  std::vector<std::vector<T>> values;
  for (const std::int64_t limit : {kernels::kSvdQrLimit, std::int64_t{0}}) {
    SCOPED_TRACE(limit == 0 ? "divide and conquer" : "bidiagonal QR");
    std::vector<T> u(static_cast<std::size_t>(m * u_cols)), s(static_cast<std::size_t>(k)),
        vh(static_cast<std::size_t>(vh_rows * n));
    std::int32_t info = -1;
    kernels::svd<T>(a.data(), u.data(), s.data(), vh.data(), 1, m, n, full, &info, limit);
    ASSERT_EQ(info, 0);
    long double residual = 0;
    for (std::int64_t i = 0; i < m; ++i) {
      for (std::int64_t j = 0; j < n; ++j) {
        long double sum = 0;
        for (std::int64_t p = 0; p < k; ++p)
          sum += static_cast<long double>(u[i * u_cols + p]) * s[p] * vh[p * n + j];
        residual = std::max(residual, std::fabs(sum - a[i * n + j]));
      }
    }
    EXPECT_LE(residual, bound);
    // U's columns and Vh's rows, each row-major.
    EXPECT_LE(orthonormality_error(u, u_cols, m, 1, u_cols), bound / max_a);
    EXPECT_LE(orthonormality_error(vh, vh_rows, n, n, 1), bound / max_a);
    EXPECT_TRUE(std::is_sorted(s.rbegin(), s.rend()));
    EXPECT_GE(s.back(), T(0));
    values.push_back(s);
  }
  for (std::int64_t i = 0; i < k; ++i)
    EXPECT_LE(std::fabs(static_cast<long double>(values[0][i]) - values[1][i]), 2 * bound);
}

TEST(KernelSvd, BidiagonalQrAndDivideAndConquerAgree) {
  std::uint64_t seed = 100;
  for (const auto& [m, n] :
       {std::pair<std::int64_t, std::int64_t>{7, 7}, {40, 12}, {12, 40}, {33, 33}, {1, 5}}) {
    for (const bool full : {false, true}) {
      check_both_svds<double>(m, n, full, seed);
      check_both_svds<float>(m, n, full, seed);
      ++seed;
    }
  }
}

}  // namespace
}  // namespace leangrad::test
