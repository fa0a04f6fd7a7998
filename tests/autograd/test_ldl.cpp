// linalg::ldl_factor, ldl_factor_ex and ldl_solve (autograd/linalg_decompositions.h; the kernel
// kernels/ldl.cpp, Note [Bunch-Kaufman]) against PyTorch 1.13 (tests/data/ldl.json, written by
// make_ldl.py: LAPACK's sytrf and sytrs), against their definition (P L D L^T P^T rebuilt here
// from LAPACK's storage, within the backward error bound of Bunch-Kaufman), by finite differences
// (ldl_solve in B), and the refusals (tests/misuse/test_misuse_array_functions.cpp has the rest).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include <leangrad/autograd/functions.h>
#include <leangrad/autograd/indexing_functions.h>
#include <leangrad/autograd/linalg_decompositions.h>
#include <leangrad/kernels/creation.h>
#include "testing/gradcheck.h"
#include "testing/reference_data.h"
#include "testing/tensor_testing.h"

namespace leangrad {
namespace {

using Matrix = std::vector<std::vector<double>>;

// Matrix `m` of a batch of (n, n) matrices held as doubles.
Matrix matrix_at(const std::vector<double>& values, std::int64_t m, std::int64_t n) {
  Matrix out(static_cast<std::size_t>(n), std::vector<double>(static_cast<std::size_t>(n)));
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t j = 0; j < n; ++j)
      out[static_cast<std::size_t>(i)][static_cast<std::size_t>(j)] =
          values[static_cast<std::size_t>((m * n + i) * n + j)];
  return out;
}

// P L D L^T P^T from LAPACK's lower storage (sytrf's documentation: L = P(1) L(1) P(2) L(2) ...,
// each L(k) the identity but for its block's multipliers below it, each P(k) one swap), applied
// from the innermost block out to D; with `magnitudes` |L| and |D| instead, which gives the
// matrix of Bunch-Kaufman's backward error bound.
Matrix rebuild(const Matrix& ld, const std::vector<std::int32_t>& pivots, bool magnitudes) {
  const auto n = static_cast<std::int64_t>(ld.size());
  auto v = [&](std::int64_t i, std::int64_t j) {
    const double x = ld[static_cast<std::size_t>(i)][static_cast<std::size_t>(j)];
    return magnitudes ? std::abs(x) : x;
  };
  struct Block {
    std::int64_t first, size, swap_with;
  };
  std::vector<Block> blocks;
  for (std::int64_t k = 0; k < n;) {
    const std::int32_t p = pivots[static_cast<std::size_t>(k)];
    const std::int64_t size = p > 0 ? 1 : 2;
    blocks.push_back({k, size, std::abs(p) - 1});
    k += size;
  }
  Matrix m(static_cast<std::size_t>(n), std::vector<double>(static_cast<std::size_t>(n), 0.0));
  auto at = [&](std::int64_t i, std::int64_t j) -> double& {
    return m[static_cast<std::size_t>(i)][static_cast<std::size_t>(j)];
  };
  for (const Block& b : blocks) {
    at(b.first, b.first) = v(b.first, b.first);
    if (b.size == 2) {
      at(b.first + 1, b.first + 1) = v(b.first + 1, b.first + 1);
      at(b.first + 1, b.first) = at(b.first, b.first + 1) = v(b.first + 1, b.first);
    }
  }
  for (auto it = blocks.rbegin(); it != blocks.rend(); ++it) {
    const Block& b = *it;
    // M = L(k) M L(k)^T: row and column i below the block gain the block's rows and columns
    // times the multipliers.
    const std::int64_t below = b.first + b.size;
    Matrix rows_added = m;
    for (std::int64_t i = below; i < n; ++i)
      for (std::int64_t j = 0; j < n; ++j)
        for (std::int64_t c = 0; c < b.size; ++c)
          rows_added[static_cast<std::size_t>(i)][static_cast<std::size_t>(j)] +=
              v(i, b.first + c) *
              m[static_cast<std::size_t>(b.first + c)][static_cast<std::size_t>(j)];
    m = rows_added;
    for (std::int64_t j = below; j < n; ++j)
      for (std::int64_t i = 0; i < n; ++i)
        for (std::int64_t c = 0; c < b.size; ++c)
          at(i, j) +=
              v(j, b.first + c) *
              rows_added[static_cast<std::size_t>(i)][static_cast<std::size_t>(b.first + c)];
    // M = P(k) M P(k)^T: the block's last row and column with swap_with.
    const std::int64_t last = b.first + b.size - 1;
    std::swap(m[static_cast<std::size_t>(last)], m[static_cast<std::size_t>(b.swap_with)]);
    for (std::int64_t i = 0; i < n; ++i)
      std::swap(at(i, last), at(i, b.swap_with));
  }
  return m;
}

std::vector<std::int32_t> int_values(const Tensor& t) {
  const Tensor c = t.to(kInt32).contiguous();
  const std::int32_t* p = c.data_ptr<std::int32_t>();
  return std::vector<std::int32_t>(p, p + c.numel());
}

// Higham's Theorem 11.3: the computed factors of Bunch-Kaufman satisfy P A P^T + E = L D L^T with
// |E| <= p(n) u (|A| + P^T |L| |D| |L^T| P), p(n) linear; with p(n) = 8 n every element of A
// rebuilt from LD and pivots is within that of A's.
void expect_factors_rebuild(const Tensor& a, const Tensor& ld, const Tensor& pivots,
                            const std::string& what) {
  const std::int64_t n = a.size(-1);
  const std::int64_t count = a.numel() / std::max<std::int64_t>(n * n, 1);
  const std::vector<double> av = test::to_vector(a), lv = test::to_vector(ld);
  const std::vector<std::int32_t> pv = int_values(pivots);
  const double u = test::math_unit_roundoff(a.dtype());
  for (std::int64_t m = 0; m < count; ++m) {
    const Matrix want = matrix_at(av, m, n), factors = matrix_at(lv, m, n);
    const std::vector<std::int32_t> p(pv.begin() + m * n, pv.begin() + (m + 1) * n);
    const Matrix got = rebuild(factors, p, false), size = rebuild(factors, p, true);
    for (std::int64_t i = 0; i < n; ++i) {
      for (std::int64_t j = 0; j < n; ++j) {
        const auto si = static_cast<std::size_t>(i), sj = static_cast<std::size_t>(j);
        // A is symmetric and only its lower triangle is read.
        const double a_ij = i >= j ? want[si][sj] : want[sj][si];
        const double bound = 8.0 * static_cast<double>(n) * u * (std::abs(a_ij) + size[si][sj]);
        ASSERT_LE(std::abs(got[si][sj] - a_ij), bound)
            << what << ": matrix " << m << ", element (" << i << ", " << j << ")";
      }
    }
  }
}

const std::vector<test::ReferenceCase>& cases() {
  static const std::vector<test::ReferenceCase> all = test::load_reference("ldl.json");
  return all;
}

// LD as PyTorch's within the factorization's rounding (the same algorithm, sytf2, summing in
// another order: an element of LD takes at most n updates, each rounding within u of the
// magnitudes involved, and a division by a pivot; 64 n u of the largest |LD| leaves room and
// any wrong swap or block is off by O(1)); pivots equal; the factors rebuild A.
TEST(LdlFactor, MatchesPyTorchAndRebuildsA) {
  int checked = 0;
  for (const test::ReferenceCase& c : cases()) {
    const std::string op = c.params.at("op").get<std::string>();
    if (op != "ldl_factor" && op != "ldl_factor_ex") continue;
    SCOPED_TRACE(c.name);
    ++checked;
    const Tensor a = c.at("a");
    const auto [ld, pivots, info] = linalg::ldl_factor_ex(a);
    EXPECT_EQ(ld.dtype(), a.dtype());
    EXPECT_EQ(ld.shape(), c.at("ld").shape());
    EXPECT_EQ(int_values(pivots), int_values(c.at("pivots")));
    const double n = static_cast<double>(a.size(-1));
    EXPECT_TRUE(test::all_close(
        ld, test::to_vector(c.at("ld")), 0,
        64 * n * test::math_unit_roundoff(a.dtype()) * std::max(1.0, test::max_abs(c.at("ld")))));
    if (op == "ldl_factor_ex") {
      EXPECT_EQ(int_values(info), int_values(c.at("info")));
      continue;  // a singular D: the rebuild bound is for a completed factorization too, but
                 // D's zero block makes the case only a check of info and the factors
    }
    EXPECT_EQ(int_values(info),
              std::vector<std::int32_t>(static_cast<std::size_t>(info.numel()), 0));
    expect_factors_rebuild(a, ld, pivots, c.name);
    // ldl_factor is ldl_factor_ex without info.
    const auto [ld2, pivots2] = linalg::ldl_factor(a);
    EXPECT_EQ(test::to_vector(ld2), test::to_vector(ld));
    EXPECT_EQ(int_values(pivots2), int_values(pivots));
  }
  EXPECT_EQ(checked, 9);  // make_ldl.py's factor cases
}

// X as PyTorch's, and A X - B within the backward error bound of the solve: the computed X solves
// (A + dA) X = B with |dA| <= p(n) u (|A| + P^T |L| |D| |L^T| P) (Higham 11.3), so |A X - B| <=
// 8 n u (|A| + that) |X|.
TEST(LdlSolve, MatchesPyTorchWithinTheBackwardErrorBound) {
  int checked = 0;
  for (const test::ReferenceCase& c : cases()) {
    if (c.params.at("op").get<std::string>() != "ldl_solve") continue;
    SCOPED_TRACE(c.name);
    ++checked;
    const Tensor a = c.at("a"), b = c.at("b");
    const auto [ld, pivots] = linalg::ldl_factor(a);
    const Tensor x = linalg::ldl_solve(ld, pivots, b);
    ASSERT_EQ(x.shape(), c.at("x").shape());
    const double u = test::math_unit_roundoff(a.dtype());
    const std::int64_t n = a.size(-1), k = b.size(-1);
    const std::int64_t count = x.numel() / (n * k);
    const Tensor a_e = a.expand([&] {
                          Shape s(x.shape().begin(), x.shape().end() - 2);
                          s.push_back(n);
                          s.push_back(n);
                          return s;
                        }())
                           .contiguous();
    const Tensor ld_e = ld.expand(a_e.shape()).contiguous();
    Shape pivot_shape(a_e.shape().begin(), a_e.shape().end() - 1);
    const Tensor p_e = pivots.expand(pivot_shape).contiguous();
    const Tensor b_e = b.expand(x.shape()).contiguous();
    const std::vector<double> av = test::to_vector(a_e), lv = test::to_vector(ld_e),
                              xv = test::to_vector(x), bv = test::to_vector(b_e),
                              axv = test::to_vector(matmul(a_e, x));
    const std::vector<std::int32_t> pv = int_values(p_e);
    for (std::int64_t m = 0; m < count; ++m) {
      const Matrix am = matrix_at(av, m, n);
      const std::vector<std::int32_t> p(pv.begin() + m * n, pv.begin() + (m + 1) * n);
      const Matrix size = rebuild(matrix_at(lv, m, n), p, true);
      for (std::int64_t i = 0; i < n; ++i) {
        for (std::int64_t j = 0; j < k; ++j) {
          double bound = 0;
          for (std::int64_t l = 0; l < n; ++l) {
            const auto si = static_cast<std::size_t>(i), sl = static_cast<std::size_t>(l);
            bound += (std::abs(am[si][sl]) + size[si][sl]) *
                     std::abs(xv[static_cast<std::size_t>((m * n + l) * k + j)]);
          }
          bound *= 8.0 * static_cast<double>(n) * u;
          const auto e = static_cast<std::size_t>((m * n + i) * k + j);
          ASSERT_LE(std::abs(axv[e] - bv[e]), bound)
              << "matrix " << m << ", (" << i << ", " << j << ")";
        }
      }
    }
    // PyTorch's X solves the same system: both within the bound above of B, so within a
    // conditioned multiple of each other; compare at 1e4 n u of the largest |X| (the matrices
    // have condition numbers below 1e3).
    EXPECT_TRUE(test::all_close(
        x, test::to_vector(c.at("x")), 0,
        1e4 * static_cast<double>(n) * u * std::max(1.0, test::max_abs(c.at("x")))));
  }
  EXPECT_EQ(checked, 4);  // make_ldl.py's solve cases
}

// Larger matrices with many 2 x 2 blocks (a small diagonal) and the two dtypes: the factors
// rebuild A, and solving gives the residual bound's X.
TEST(LdlFactor, RebuildsLargerIndefiniteMatrices) {
  for (const DType dtype : {kFloat64, kFloat32}) {
    for (const std::int64_t n : {40, 97}) {
      SCOPED_TRACE(::testing::Message() << dtype << " n " << n);
      const Tensor r = test::uniform_input({n, n}, -1.0, 1.0, 500 + n).detach();
      Tensor a = add(r, r.t());
      a = sub(a, mul(eye(n, a.options()), mul(a, 0.98)));  // diagonal shrunk to 2%
      a = a.to(dtype);
      const auto [ld, pivots] = linalg::ldl_factor(a);
      const std::vector<std::int32_t> p = int_values(pivots);
      EXPECT_GT(std::count_if(p.begin(), p.end(), [](std::int32_t v) { return v < 0; }), 4);
      expect_factors_rebuild(a, ld, pivots, "n " + std::to_string(n));
      // The strict upper triangle is zero, as PyTorch's LD.
      EXPECT_EQ(test::max_abs(triu(ld, 1)), 0.0);
    }
  }
}

// ldl_solve differentiates in B (gB = ldl_solve(LD, pivots, gX), A symmetric), with broadcast
// batch dims, to the second order; a gradient for LD is refused at backward.
TEST(LdlSolve, DifferentiatesInB) {
  const Tensor r = test::uniform_input({5, 5}, -1.0, 1.0, 610).detach();
  const Tensor a = mul(add(r, r.t()), rsub(mul(eye(5, r.options()), 0.9), 1.0));
  // Named tensors, not a structured binding: clang 14 cannot capture a binding in a lambda.
  const auto factors = linalg::ldl_factor(a);
  const Tensor ld = std::get<0>(factors);
  const Tensor pivots = std::get<1>(factors);
  const Tensor b = test::uniform_input({3, 5, 2}, -1.0, 1.0, 611);
  const test::GradcheckFn f = [&](const std::vector<Tensor>& in) {
    const Tensor x = linalg::ldl_solve(ld, pivots, in[0]);
    return mul(x, x);
  };
  EXPECT_TRUE(test::gradcheck(f, {b}));
  EXPECT_TRUE(test::gradgradcheck(f, {b}));
  const Tensor ld_leaf = ld.detach().requires_grad_();
  const Tensor x = linalg::ldl_solve(ld_leaf, pivots, b.detach());
  try {
    sum(x).backward();
    ADD_FAILURE() << "no error for LD's gradient";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(
                  "linalg_ldl_solve: the derivative with respect to LD is not implemented"),
              std::string::npos)
        << e.what();
  }
}

// Pivots that ldl_factor cannot have made are refused before any row is read; a singular D is an
// Error from ldl_factor and from ldl_factor_ex with check_errors.
TEST(LdlSolve, RefusesPivotsNotFromLdlFactor) {
  const Tensor a = tensor(std::vector<double>{0, 1, 1, 0}, {2, 2});
  const auto factors = linalg::ldl_factor(a);
  const Tensor ld = std::get<0>(factors);
  const Tensor pivots = std::get<1>(factors);
  EXPECT_EQ(int_values(pivots), (std::vector<std::int32_t>{-2, -2}));
  const Tensor b = ones({2, 1}, a.options());
  EXPECT_TRUE(test::all_close(linalg::ldl_solve(ld, pivots, b), {1.0, 1.0}, 0, 1e-15));
  const auto bad = [&](std::vector<std::int32_t> p, const std::string& words) {
    const Tensor pt = tensor(std::vector<std::int64_t>(p.begin(), p.end()), {2}).to(kInt32);
    try {
      linalg::ldl_solve(ld, pt, b);
      ADD_FAILURE() << "no error for pivots " << ::testing::PrintToString(p);
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
    }
  };
  bad({3, 1}, "expected pivots in [1, 2]");
  bad({0, 2}, "expected pivots in [1, 2]");
  bad({1, -2}, "opens a 2 x 2 block");
  bad({-2, -1}, "opens a 2 x 2 block");
  const Tensor singular = tensor(std::vector<double>{1, 1, 1, 1}, {2, 2});
  EXPECT_THROW(linalg::ldl_factor(singular), Error);
  EXPECT_THROW(linalg::ldl_factor_ex(singular, false, /*check_errors=*/true), Error);
  EXPECT_EQ(int_values(std::get<2>(linalg::ldl_factor_ex(singular))),
            (std::vector<std::int32_t>{2}));
}

}  // namespace
}  // namespace leangrad
