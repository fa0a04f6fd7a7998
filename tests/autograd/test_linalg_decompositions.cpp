// The decompositions and solvers of autograd/linalg_decompositions.h: against PyTorch 1.13
// (tests/data/linalg_decompositions.json, written by make_linalg_decompositions.py) values and
// gradients, eigenvectors and singular vectors through quantities that do not depend on their
// signs; against the defining identities in long double on sizes up to 64 (P^T L U = A, L L^T = A,
// Q R = A with Q orthonormal, V diag(w) V^T = A, U diag(s) Vh = A, A inv(A) = I, A X = B, the
// determinant against the eigenvalues' product); finite differences, twice. Misuse: the Linalg
// table of tests/misuse/test_misuse_ops.cpp.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include <gtest/gtest.h>

#include <leangrad/autograd/engine.h>
#include <leangrad/autograd/functions.h>
#include <leangrad/autograd/indexing_functions.h>
#include <leangrad/autograd/linalg_decompositions.h>
#include <leangrad/autograd/linalg_functions.h>
#include <leangrad/autograd/shape_functions.h>
#include <leangrad/core/creation.h>
#include <leangrad/core/generator.h>
#include <leangrad/core/parallel.h>
#include <leangrad/kernels/creation.h>
#include "testing/gradcheck.h"
#include "testing/reference_data.h"
#include "testing/tensor_testing.h"

namespace leangrad::test {
namespace {

const std::vector<ReferenceCase>& cases() {
  static const std::vector<ReferenceCase> all = load_reference("linalg_decompositions.json");
  return all;
}

Tensor mT(const Tensor& a) {
  return transpose(a, -2, -1);
}

// The weights c = linspace(0.5, 2, k) of make_linalg_decompositions.py's sign-free outputs.
Tensor fixed_weights(std::int64_t k, DType dtype) {
  return linspace(0.5, 2.0, k, TensorOptions(dtype));
}

std::vector<Tensor> run_case(const ReferenceCase& c, const std::vector<Tensor>& x) {
  const nlohmann::json& p = c.params;
  const std::string fn = p.at("fn").get<std::string>();
  auto flag = [&p](const char* key, bool fallback) {
    return p.contains(key) ? p.at(key).get<bool>() : fallback;
  };
  if (fn == "lu_factor") {
    const auto [lu, pivots] = linalg::lu_factor(x[0]);
    return {lu, pivots};
  }
  if (fn == "lu") {
    const auto [P, L, U] = linalg::lu(x[0]);
    return {P, L, U};
  }
  if (fn == "lu_solve")
    return {linalg::lu_solve(x[0], x[1], x[2], flag("left", true), flag("adjoint", false))};
  if (fn == "det") return {linalg::det(x[0])};
  if (fn == "slogdet") {
    const auto [sign, logabsdet] = linalg::slogdet(x[0]);
    return {sign, logabsdet};
  }
  if (fn == "logdet") return {logdet(x[0])};
  if (fn == "inv") return {linalg::inv(x[0])};
  if (fn == "solve") return {linalg::solve(x[0], x[1], flag("left", true))};
  if (fn == "solve_triangular") {
    return {linalg::solve_triangular(x[0], x[1], flag("upper", false), flag("left", true),
                                     flag("unitriangular", false))};
  }
  if (fn == "cholesky") return {linalg::cholesky(x[0], flag("upper", false))};
  if (fn == "cholesky_solve") return {cholesky_solve(x[0], x[1], flag("upper", false))};
  if (fn == "qr") {
    const std::string mode = p.at("mode").get<std::string>();
    const auto [Q, R] = linalg::qr(x[0], mode);
    if (mode == "r") return {R};
    return {Q, R};
  }
  if (fn == "eigh") {
    const auto [w, V] = linalg::eigh(x[0], p.at("UPLO").get<std::string>());
    const Tensor c_w = fixed_weights(w.size(-1), w.dtype());
    return {w, matmul(mul(V, c_w), mT(V))};
  }
  if (fn == "eigvalsh") return {linalg::eigvalsh(x[0])};
  if (fn == "svd") {
    const auto [U, S, Vh] = linalg::svd(x[0], flag("full_matrices", true));
    const std::int64_t k = S.size(-1);
    const Tensor c_w = fixed_weights(k, S.dtype());
    return {S, matmul(mul(slice(U, -1, 0, k), c_w), slice(Vh, -2, 0, k))};
  }
  if (fn == "svdvals") return {linalg::svdvals(x[0])};
  if (fn == "matrix_norm") {
    const std::string ord = p.at("ord").get<std::string>();
    const auto dim = p.contains("dim") ? p.at("dim").get<std::vector<std::int64_t>>()
                                       : std::vector<std::int64_t>{-2, -1};
    const bool keepdim = flag("keepdim", false);
    if (ord == "fro" || ord == "nuc") return {linalg::matrix_norm(x[0], ord, dim, keepdim)};
    return {linalg::matrix_norm(x[0], std::stod(ord), dim, keepdim)};
  }
  if (fn == "cond") {
    const std::string ord = p.at("p").get<std::string>();
    if (ord == "fro" || ord == "nuc") return {linalg::cond(x[0], ord)};
    return {linalg::cond(x[0], std::stod(ord))};
  }
  if (fn == "pinv") {
    const std::optional<double> atol =
        p.contains("atol") ? std::optional<double>(p.at("atol").get<double>()) : std::nullopt;
    return {linalg::pinv(x[0], atol, std::nullopt, flag("hermitian", false))};
  }
  if (fn == "matrix_rank")
    return {linalg::matrix_rank(x[0], std::nullopt, std::nullopt, flag("hermitian", false))};
  if (fn == "matrix_power") return {linalg::matrix_power(x[0], p.at("n").get<std::int64_t>())};
  if (fn == "multi_dot") return {linalg::multi_dot(x)};
  if (fn == "lstsq") {
    const linalg::LstsqResult r =
        linalg::lstsq(x[0], x[1], std::nullopt, p.at("driver").get<std::string>());
    return {r.solution, r.residuals, r.rank, r.singular_values};
  }
  if (fn == "matrix_exp") return {linalg::matrix_exp(x[0])};
  if (fn == "tensorinv") return {linalg::tensorinv(x[0], p.at("ind").get<std::int64_t>())};
  if (fn == "tensorsolve") {
    return {linalg::tensorsolve(x[0], x[1],
                                p.contains("dims") ? p.at("dims").get<std::vector<std::int64_t>>()
                                                   : std::vector<std::int64_t>{})};
  }
  if (fn == "vector_norm" || fn == "norm") {
    const auto dim = p.contains("dim") ? p.at("dim").get<std::vector<std::int64_t>>()
                                       : std::vector<std::int64_t>{};
    const bool keepdim = flag("keepdim", false);
    if (fn == "vector_norm")
      return {linalg::vector_norm(x[0], std::stod(p.at("ord").get<std::string>()), dim, keepdim)};
    if (!p.contains("ord")) return {linalg::norm(x[0], std::nullopt, dim, keepdim)};
    const std::string ord = p.at("ord").get<std::string>();
    if (ord == "fro" || ord == "nuc") return {linalg::norm(x[0], ord, dim, keepdim)};
    return {linalg::norm(x[0], std::stod(ord), dim, keepdim)};
  }
  ADD_FAILURE() << "no function for case " << c.name;
  return {};
}

// The largest matrix dim among the inputs.
std::int64_t largest_dim(const std::vector<Tensor>& x) {
  std::int64_t n = 1;
  for (const Tensor& t : x) {
    for (std::int64_t d = std::max<std::int64_t>(0, t.dim() - 2); d < t.dim(); ++d)
      n = std::max(n, t.size(d));
  }
  return n;
}

// max |got - want| <= tol max(1, max |want|), NaN and infinities where want has them.
::testing::AssertionResult close_relative(const Tensor& got, const Tensor& want, double tol) {
  if (got.shape() != want.shape()) {
    return ::testing::AssertionFailure() << "shape " << got.shape() << ", want " << want.shape();
  }
  const std::vector<double> g = to_vector(got), w = to_vector(want);
  double scale = 1.0;
  for (const double v : w) {
    if (std::isfinite(v)) scale = std::max(scale, std::fabs(v));
  }
  for (std::size_t i = 0; i < g.size(); ++i) {
    const bool same_special = (std::isnan(g[i]) && std::isnan(w[i])) || (g[i] == w[i]);
    if (same_special) continue;
    if (!(std::fabs(g[i] - w[i]) <= tol * scale)) {
      return ::testing::AssertionFailure() << "element " << i << ": " << g[i] << ", want " << w[i]
                                           << " (tolerance " << tol << " x " << scale << ")";
    }
  }
  return ::testing::AssertionSuccess();
}

// Backward-stable factorizations on both sides (Eigen's here, LAPACK's in PyTorch) each give the
// exact result of an input perturbed by about n u |A| (Higham, Accuracy and Stability, 9.3, 10.1,
// 19.3); the outputs move by at most the case's kappa times that (the conditioning script-side:
// the condition number, squared for inverses and gradients, or |A| over the eigenvalue gap), so
// 16 n^2 u kappa bounds the difference with room for the n-term sums.
double tolerance(const ReferenceCase& c, const std::vector<Tensor>& x, DType dtype) {
  const auto n = static_cast<double>(largest_dim(x));
  return 16 * n * n * math_unit_roundoff(dtype) * c.params.at("kappa").get<double>();
}

TEST(LinalgDecompositions, MatchPyTorch) {
  int checked = 0;
  for (const ReferenceCase& c : cases()) {
    SCOPED_TRACE(c.name);
    const ReferenceInputs reference = reference_inputs(c);
    const std::vector<std::string>& order = reference.names;
    const std::vector<Tensor>& inputs = reference.tensors;
    const bool differentiable = reference.differentiable;
    const std::vector<Tensor> outs = run_case(c, inputs);
    const double tol = tolerance(c, inputs, inputs[0].dtype());
    Tensor loss;
    for (std::size_t i = 0; i < outs.size(); ++i) {
      const std::string key = "out" + std::to_string(i);
      const Tensor& want = c.at(key);
      ASSERT_EQ(outs[i].dtype(), want.dtype()) << key;
      if (is_floating(want.dtype())) {
        EXPECT_TRUE(close_relative(outs[i], want, tol)) << key;
      } else {
        EXPECT_EQ(to_vector(outs[i]), to_vector(want)) << key;
      }
      const auto w = c.tensors.find("w" + std::to_string(i));
      if (w == c.tensors.end()) continue;
      const Tensor term = sum(mul(outs[i], w->second));
      loss = loss.defined() ? add(loss, term) : term;
    }
    if (differentiable) {
      ASSERT_TRUE(loss.defined());
      loss.backward();
      for (std::size_t k = 0; k < order.size(); ++k) {
        const auto grad = c.tensors.find("d_" + order[k]);
        if (grad == c.tensors.end()) continue;
        ASSERT_TRUE(inputs[k].grad().defined()) << "d_" << order[k];
        Tensor want = grad->second;
        if (c.params.at("fn") == "cholesky_solve" && order[k] == "L") {
          // PyTorch's gradient of the factor is -(C L) or -(L C) for the whole matrix, though the
          // solve reads one triangle; ours is the derivative of what is computed, the other
          // triangle's 0 (as solve_triangular's, PyTorch's included).
          want = c.params.at("upper").get<bool>() ? triu(want) : tril(want);
        }
        if (c.params.at("fn") == "pinv" && c.params.contains("hermitian")) {
          // PyTorch differentiates pinv as a function of a general matrix, though with hermitian
          // it reads one triangle (eigh); ours is eigh's symmetric gradient: PyTorch's
          // symmetrized, which a symmetric perturbation cannot tell apart.
          want = mul(add(want, mT(want)), 0.5);
        }
        EXPECT_TRUE(close_relative(inputs[k].grad(), want, tol)) << "d_" << order[k];
      }
    }
    ++checked;
  }
  EXPECT_EQ(checked, 105);
}

// ---- Identities, in long double -----------------------------------------------------------------

using Matrix = std::vector<std::vector<long double>>;

Matrix matrix_of(const Tensor& t, std::int64_t batch = 0) {
  const std::int64_t m = t.size(-2);
  const std::int64_t n = t.size(-1);
  const std::vector<double> v = to_vector(t.contiguous());
  Matrix out(static_cast<std::size_t>(m), std::vector<long double>(static_cast<std::size_t>(n)));
  for (std::int64_t i = 0; i < m; ++i) {
    for (std::int64_t j = 0; j < n; ++j)
      out[i][j] = v[static_cast<std::size_t>((batch * m + i) * n + j)];
  }
  return out;
}

Matrix product(const Matrix& a, const Matrix& b) {
  const std::size_t m = a.size();
  const std::size_t k = b.size();
  const std::size_t n = k == 0 ? 0 : b[0].size();
  Matrix out(m, std::vector<long double>(n, 0.0L));
  for (std::size_t i = 0; i < m; ++i) {
    for (std::size_t p = 0; p < k; ++p) {
      for (std::size_t j = 0; j < n; ++j)
        out[i][j] += a[i][p] * b[p][j];
    }
  }
  return out;
}

Matrix transposed(const Matrix& a) {
  Matrix out(a.empty() ? 0 : a[0].size(), std::vector<long double>(a.size()));
  for (std::size_t i = 0; i < a.size(); ++i) {
    for (std::size_t j = 0; j < a[i].size(); ++j)
      out[j][i] = a[i][j];
  }
  return out;
}

Matrix identity(std::size_t n) {
  Matrix out(n, std::vector<long double>(n, 0.0L));
  for (std::size_t i = 0; i < n; ++i)
    out[i][i] = 1;
  return out;
}

long double max_entry(const Matrix& a) {
  long double m = 0;
  for (const auto& row : a) {
    for (const long double v : row)
      m = std::max(m, std::fabs(v));
  }
  return m;
}

long double max_difference(const Matrix& a, const Matrix& b) {
  long double m = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    for (std::size_t j = 0; j < a[i].size(); ++j)
      m = std::max(m, std::fabs(a[i][j] - b[i][j]));
  }
  return m;
}

// The residual bound of a backward-stable factorization of an n x n-ish A: c n u |A|max (each
// entry an inner product of n terms, Higham 3.1), with c = 8 n for the max norm's gap to the
// Frobenius norm the bounds are stated in.
double residual_bound(std::int64_t n, DType dtype, long double scale) {
  return 8.0 * static_cast<double>(n * n) * math_unit_roundoff(dtype) *
         std::max(1.0, static_cast<double>(scale));
}

Tensor random_matrix(const Shape& shape, DType dtype, std::uint64_t seed) {
  manual_seed(seed);
  return randn(shape, TensorOptions(dtype));
}

struct Size {
  std::int64_t m, n;
};

TEST(LinalgDecompositions, LuReconstructs) {
  for (const DType dtype : {kFloat64, kFloat32}) {
    // 40 and 64 take one and two of the blocked LU's panels of 32 columns; 130 takes five, four
    // of them followed by a gemm over the rest (Note [Blocked factorizations]).
    for (const std::int64_t n : {1, 7, 40, 64, 130}) {
      SCOPED_TRACE(std::to_string(n) + " " + dtype_name(dtype));
      const Tensor a = random_matrix({2, n, n}, dtype, 100 + static_cast<std::uint64_t>(n));
      const auto [P, L, U] = linalg::lu(a);
      for (std::int64_t b = 0; b < 2; ++b) {
        const Matrix A = matrix_of(a, b), l = matrix_of(L, b), u = matrix_of(U, b);
        EXPECT_LE(max_difference(product(matrix_of(P, b), product(l, u)), A),
                  residual_bound(n, dtype, max_entry(A) * n));
        for (std::int64_t i = 0; i < n; ++i) {
          EXPECT_EQ(l[i][i], 1.0L);
          for (std::int64_t j = 0; j < n; ++j) {
            if (j > i) {
              EXPECT_EQ(l[i][j], 0.0L);
            } else if (j < i) {
              EXPECT_EQ(u[i][j], 0.0L);
              EXPECT_LE(std::fabs(l[i][j]), 1.0L);  // partial pivoting
            }
          }
        }
      }
    }
  }
}

// The pivot of each column is its first element of largest magnitude, as getrf's (isamax):
// column 0 of this matrix ties three ways, and column 1 after the first step is (5, -2).
TEST(LinalgDecompositions, LuPivotsTakeTheFirstLargest) {
  const Tensor a = tensor({1.0, 2.0, 0.0, -1.0, 3.0, 1.0, 1.0, 0.0, 2.0}).reshape({3, 3});
  const auto [lu, pivots] = linalg::lu_factor(a);
  EXPECT_TRUE(pivots.equal(tensor({1, 2, 3})));
  const Matrix f = matrix_of(lu);
  const Matrix want = {{1, 2, 0}, {-1, 5, 1}, {1, -0.4L, 2.4L}};
  for (std::size_t i = 0; i < 3; ++i) {
    for (std::size_t j = 0; j < 3; ++j)
      EXPECT_NEAR(static_cast<double>(f[i][j]), static_cast<double>(want[i][j]), 1e-15);
  }
}

// solve's backward takes the forward's LU factors unless it records a graph (then it solves
// with A again): both give the same gradients, with B's batch broadcast against A's.
TEST(LinalgDecompositions, SolveBackwardFromTheFactors) {
  const Tensor a =
      add(random_matrix({3, 40, 40}, kFloat64, 901), mul(eye(40, TensorOptions(kFloat64)), 8.0))
          .requires_grad_(true);
  const Tensor b = random_matrix({40, 5}, kFloat64, 902).requires_grad_(true);
  const Tensor g = random_matrix({3, 40, 5}, kFloat64, 903);
  const std::vector<Tensor> fast = autograd::grad({linalg::solve(a, b)}, {a, b}, {g});
  const std::vector<Tensor> recorded =
      autograd::grad({linalg::solve(a, b)}, {a, b}, {g}, std::nullopt, /*create_graph=*/true);
  for (std::size_t i = 0; i < 2; ++i) {
    SCOPED_TRACE(i);
    EXPECT_TRUE(fast[i].allclose(recorded[i].detach(), 1e-12, 1e-12));
  }
}

TEST(LinalgDecompositions, QrReconstructs) {
  for (const DType dtype : {kFloat64, kFloat32}) {
    for (const Size s : {Size{6, 6}, Size{50, 20}, Size{20, 50}, Size{64, 1}}) {
      for (const char* mode : {"reduced", "complete"}) {
        SCOPED_TRACE(std::to_string(s.m) + "x" + std::to_string(s.n) + " " + mode + " " +
                     dtype_name(dtype));
        const Tensor a = random_matrix({s.m, s.n}, dtype, 200 + static_cast<std::uint64_t>(s.m));
        const auto [Q, R] = linalg::qr(a, mode);
        const Matrix A = matrix_of(a), q = matrix_of(Q), r = matrix_of(R);
        const std::int64_t big = std::max(s.m, s.n);
        EXPECT_LE(max_difference(product(q, r), A), residual_bound(big, dtype, max_entry(A)));
        EXPECT_LE(max_difference(product(transposed(q), q), identity(q[0].size())),
                  residual_bound(big, dtype, 1.0L));
        for (std::size_t i = 0; i < r.size(); ++i) {
          for (std::size_t j = 0; j < i && j < r[i].size(); ++j)
            EXPECT_EQ(r[i][j], 0.0L);
        }
      }
    }
  }
}

TEST(LinalgDecompositions, CholeskyReconstructs) {
  for (const DType dtype : {kFloat64, kFloat32}) {
    // 150: five panels, and trailing updates of two strips of rows.
    for (const std::int64_t n : {1, 9, 48, 150}) {
      SCOPED_TRACE(std::to_string(n) + " " + dtype_name(dtype));
      const Tensor m = random_matrix({n, n}, dtype, 300 + static_cast<std::uint64_t>(n));
      const Tensor a = add(matmul(m, mT(m)), eye(n, TensorOptions(dtype)));
      const Matrix A = matrix_of(a), l = matrix_of(linalg::cholesky(a));
      EXPECT_LE(max_difference(product(l, transposed(l)), A),
                residual_bound(n, dtype, max_entry(A)));
      const Matrix u = matrix_of(linalg::cholesky(a, /*upper=*/true));
      EXPECT_EQ(max_difference(u, transposed(l)), 0.0L);
    }
  }
}

TEST(LinalgDecompositions, EighReconstructs) {
  for (const DType dtype : {kFloat64, kFloat32}) {
    for (const std::int64_t n : {1, 10, 50}) {
      SCOPED_TRACE(std::to_string(n) + " " + dtype_name(dtype));
      const Tensor m = random_matrix({n, n}, dtype, 400 + static_cast<std::uint64_t>(n));
      const Tensor a = add(m, mT(m));
      const auto [w, V] = linalg::eigh(a);
      const Matrix A = matrix_of(a), v = matrix_of(V);
      const std::vector<double> wv = to_vector(w);
      Matrix vw = v;
      for (std::int64_t i = 0; i < n; ++i) {
        for (std::int64_t j = 0; j < n; ++j)
          vw[i][j] *= wv[static_cast<std::size_t>(j)];
      }
      EXPECT_LE(max_difference(product(vw, transposed(v)), A),
                residual_bound(n, dtype, max_entry(A) * n));
      EXPECT_LE(max_difference(product(transposed(v), v), identity(static_cast<std::size_t>(n))),
                residual_bound(n, dtype, 1.0L));
      EXPECT_TRUE(std::is_sorted(wv.begin(), wv.end()));
      EXPECT_TRUE(close_relative(linalg::eigvalsh(a), w, 0.0));  // the same values alone
    }
  }
}

TEST(LinalgDecompositions, SvdReconstructs) {
  for (const DType dtype : {kFloat64, kFloat32}) {
    for (const Size s : {Size{7, 7}, Size{40, 12}, Size{12, 40}, Size{64, 64}}) {
      for (const bool full : {false, true}) {
        SCOPED_TRACE(std::to_string(s.m) + "x" + std::to_string(s.n) + " full " +
                     std::to_string(full) + " " + dtype_name(dtype));
        const Tensor a = random_matrix({s.m, s.n}, dtype, 500 + static_cast<std::uint64_t>(s.n));
        const auto [U, S, Vh] = linalg::svd(a, full);
        const std::int64_t k = std::min(s.m, s.n);
        ASSERT_EQ(U.shape(), (Shape{s.m, full ? s.m : k}));
        ASSERT_EQ(Vh.shape(), (Shape{full ? s.n : k, s.n}));
        const Matrix A = matrix_of(a), u = matrix_of(U), vh = matrix_of(Vh);
        const std::vector<double> sv = to_vector(S);
        Matrix us(static_cast<std::size_t>(s.m), std::vector<long double>(k));
        Matrix vk(vh.begin(), vh.begin() + k);
        for (std::int64_t i = 0; i < s.m; ++i) {
          for (std::int64_t j = 0; j < k; ++j)
            us[i][j] = u[i][j] * sv[static_cast<std::size_t>(j)];
        }
        const std::int64_t big = std::max(s.m, s.n);
        EXPECT_LE(max_difference(product(us, vk), A),
                  residual_bound(big, dtype, max_entry(A) * big));
        EXPECT_LE(max_difference(product(transposed(u), u), identity(u[0].size())),
                  residual_bound(big, dtype, 1.0L));
        EXPECT_LE(max_difference(product(vh, transposed(vh)), identity(vh.size())),
                  residual_bound(big, dtype, 1.0L));
        EXPECT_TRUE(std::is_sorted(sv.rbegin(), sv.rend()));
        EXPECT_GE(sv.back(), 0.0);
        // svdvals: the same values without the vectors (another path through the kernel).
        EXPECT_TRUE(
            close_relative(linalg::svdvals(a), S, residual_bound(big, dtype, max_entry(A) * big)));
      }
    }
  }
}

// A inv(A) = I and A X = B to the residual of a backward-stable solve times the condition
// number's share (these matrices: a random part plus 2 sqrt(n) I, condition numbers of a few
// units, as make_linalg_decompositions.py's; with their rows reversed too, so that partial
// pivoting swaps rows at every step).
TEST(LinalgDecompositions, InverseAndSolveResiduals) {
  for (const DType dtype : {kFloat64, kFloat32}) {
    for (const std::int64_t n : {1, 12, 60, 140}) {
      for (const bool reversed : {false, true}) {
        SCOPED_TRACE(std::to_string(n) + " " + dtype_name(dtype) + (reversed ? " reversed" : ""));
        const Tensor dominant =
            add(random_matrix({n, n}, dtype, 600 + static_cast<std::uint64_t>(n)),
                mul(eye(n, TensorOptions(dtype)), 2 * std::sqrt(double(n))));
        const Tensor a = reversed ? flip(dominant, {0}).contiguous() : dominant;
        const Tensor b = random_matrix({n, 3}, dtype, 700);
        const Matrix A = matrix_of(a);
        const long double scale = max_entry(A) * n;
        EXPECT_LE(max_difference(product(A, matrix_of(linalg::inv(a))),
                                 identity(static_cast<std::size_t>(n))),
                  16 * residual_bound(n, dtype, scale));
        EXPECT_LE(max_difference(product(A, matrix_of(linalg::solve(a, b))), matrix_of(b)),
                  16 * residual_bound(n, dtype, scale * max_entry(matrix_of(b))));
        if (reversed) continue;  // its triangles are not well conditioned
        const Tensor lower = tril(a);
        EXPECT_LE(max_difference(
                      product(matrix_of(lower), matrix_of(linalg::solve_triangular(a, b, false))),
                      matrix_of(b)),
                  16 * residual_bound(n, dtype, scale * max_entry(matrix_of(b))));
      }
    }
  }
}

// A single triangular system with many right-hand sides is split among threads (a block of B's
// columns, or of its rows when solving from the right, per task): each side and triangle, at 4
// threads, where 200^2 x 300 multiply-adds make 4 pieces. The residual is bounded by |A| |X|
// (a triangular solve is backward stable, Higham 8.1): with a unit diagonal these triangles
// are badly conditioned and X is large.
TEST(LinalgDecompositions, TriangularSolvesSplitWideRightHandSides) {
  struct Threads {  // 4 threads for the test, the count before restored after it
    int before = get_num_threads();
    Threads() { set_num_threads(4); }
    ~Threads() { set_num_threads(before); }
  } threads;
  const std::int64_t n = 200, k = 300;
  const DType dtype = kFloat64;
  const Tensor dominant = add(random_matrix({n, n}, dtype, 801),
                              mul(eye(n, TensorOptions(dtype)), 2 * std::sqrt(double(n))));
  for (const bool upper : {false, true}) {
    for (const bool left : {true, false}) {
      for (const bool unit : {false, true}) {
        SCOPED_TRACE(std::string(upper ? "upper" : "lower") + (left ? " left" : " right") +
                     (unit ? " unit" : ""));
        const Tensor b = random_matrix(left ? Shape{n, k} : Shape{k, n}, dtype, 802);
        Tensor a = upper ? triu(dominant) : tril(dominant);
        const Tensor x = linalg::solve_triangular(a, b, upper, left, unit);
        if (unit) a = add(upper ? triu(a, 1) : tril(a, -1), eye(n, TensorOptions(dtype)));
        const Matrix A = matrix_of(a);
        const Matrix X = matrix_of(x);
        EXPECT_LE(max_difference(left ? product(A, X) : product(X, A), matrix_of(b)),
                  16 * residual_bound(n, dtype, max_entry(A) * n * max_entry(X)));
      }
    }
  }
}

// det against the product of the eigenvalues of a symmetric matrix (another decomposition), and
// slogdet and logdet against log|det|.
TEST(LinalgDecompositions, DeterminantIsTheEigenvaluesProduct) {
  const Tensor m = random_matrix({8, 8}, kFloat64, 800);
  const Tensor a = add(m, mT(m));
  long double expected = 1;
  for (const double v : to_vector(linalg::eigvalsh(a)))
    expected *= v;
  const double got = linalg::det(a).item<double>();
  EXPECT_NEAR(got, static_cast<double>(expected),
              residual_bound(8, kFloat64, 1.0L) * 100 * std::fabs(static_cast<double>(expected)));
  const auto [sign, logabsdet] = linalg::slogdet(a);
  EXPECT_EQ(sign.item<double>(), got > 0 ? 1.0 : -1.0);
  EXPECT_NEAR(logabsdet.item<double>(), std::log(std::fabs(got)), 1e-12);
  if (got < 0) {
    EXPECT_TRUE(std::isnan(logdet(a).item<double>()));
  }
  // A singular matrix: det 0, slogdet (0, -inf), as PyTorch's.
  const Tensor singular = make_tensor({1, 2, 3, 2, 4, 6, 0, 1, 1}, {3, 3}, kFloat64);
  EXPECT_EQ(linalg::det(singular).item<double>(), 0.0);
  const auto [s0, l0] = linalg::slogdet(singular);
  EXPECT_EQ(s0.item<double>(), 0.0);
  EXPECT_EQ(l0.item<double>(), -std::numeric_limits<double>::infinity());
}

// Determinants beyond the dtype's range keep their logarithm: slogdet adds the logs of the pivots,
// as torch's (log|det| of their product overflowed to inf, or underflowed to -inf with sign 0).
// torch 1.13: diag(1e200, 1e200) -> (1, 921.0340), diag(1e-200, 1e-200) -> (1, -921.0340), float32
// diag(1e30, 1e30) -> (1, 138.1551). Two logs, each within an ulp, and one addition: 3 ulps.
TEST(LinalgDecompositions, SlogdetBeyondTheRangeOfTheDeterminant) {
  const double ln10 = std::log(10.0);
  const auto expect = [](const Tensor& a, double sign, double logabsdet, const char* what) {
    const auto [s, l] = linalg::slogdet(a);
    EXPECT_EQ(s.item<double>(), sign) << what;
    const double u = math_unit_roundoff(a.dtype());
    EXPECT_NEAR(l.item<double>(), logabsdet, 3 * u * std::fabs(logabsdet)) << what;
  };
  expect(diag(make_tensor({1e200, 1e200}, {2}, kFloat64)), 1, 400 * ln10, "1e200");
  expect(diag(make_tensor({1e-200, 1e-200}, {2}, kFloat64)), 1, -400 * ln10, "1e-200");
  expect(diag(make_tensor({-1e200, 1e200}, {2}, kFloat64)), -1, 400 * ln10, "-1e200");
  expect(make_tensor({0, 1e200, 1e200, 0}, {2, 2}, kFloat64), -1, 400 * ln10, "a row swap");
  expect(diag(make_tensor({1e30, 1e30}, {2}, kFloat32)), 1, 60 * ln10, "float32 1e30");
  EXPECT_NEAR(logdet(mul(eye(2, TensorOptions(kFloat64)), 1e-200)).item<double>(), -400 * ln10,
              3 * math_unit_roundoff(kFloat64) * 400 * ln10);
  // A well-conditioned 40 x 40 matrix scaled by 1e10: its determinant's 1e400 overflows double;
  // the log is the unscaled one's plus 40 ln(1e10), to the roundoff of 40 logs and additions.
  const Tensor m =
      add(random_matrix({40, 40}, kFloat64, 801), mul(eye(40, TensorOptions(kFloat64)), 8.0));
  const auto [s1, l1] = linalg::slogdet(m);
  const auto [s2, l2] = linalg::slogdet(mul(m, 1e10));
  EXPECT_EQ(s2.item<double>(), s1.item<double>());
  const double want = l1.item<double>() + 400 * ln10;
  EXPECT_NEAR(l2.item<double>(), want, 80 * math_unit_roundoff(kFloat64) * std::fabs(want));
  EXPECT_TRUE(std::isinf(linalg::det(mul(m, 1e10)).item<double>()));  // what log(|det|) read
}

// cond of a singular matrix is inf where it goes through the inverse (fro, 1, inf, -1), as
// torch's (it raised inv's error); of a zero matrix inf too (0 times inf); of an empty one 0;
// "nuc" from the singular values, as torch's: sum(s) sum(1 / s). pinv(hermitian) of 0 x 0 is 0 x 0.
TEST(LinalgDecompositions, CondOfSingularAndEmptyMatrices) {
  const TensorOptions f64(kFloat64);
  const double inf = std::numeric_limits<double>::infinity();
  const Tensor singular = make_tensor({1, 2, 2, 4}, {2, 2}, kFloat64);
  EXPECT_EQ(linalg::cond(singular, "fro").item<double>(), inf);
  for (const double p : {1.0, -1.0, inf, -inf})
    EXPECT_EQ(linalg::cond(singular, p).item<double>(), inf) << p;
  EXPECT_EQ(linalg::cond(zeros({2, 2}, f64), "fro").item<double>(), inf);
  // A batch: the singular matrix's inf beside the identity's 1.
  const Tensor batch = stack({singular, eye(2, f64)});
  EXPECT_EQ(to_vector(linalg::cond(batch, 1.0)), (std::vector<double>{inf, 1.0}));
  for (const double p : {2.0, 1.0})
    EXPECT_EQ(to_vector(linalg::cond(zeros({2, 0, 0}, f64), p)), (std::vector<double>{0.0, 0.0}));
  EXPECT_EQ(linalg::cond(zeros({0, 0}, f64), "fro").item<double>(), 0.0);
  // nuc of a well-conditioned matrix: sum(s) sum(1/s), within the SVD's roundoff of |A| |A^-1|.
  const Tensor m = make_tensor({4, 1, 2, 3}, {2, 2}, kFloat64);
  const double by_inverse =
      (linalg::matrix_norm(m, "nuc") * linalg::matrix_norm(linalg::inv(m), "nuc")).item<double>();
  EXPECT_NEAR(linalg::cond(m, "nuc").item<double>(), by_inverse, 64 * 2.2e-16 * by_inverse);
  EXPECT_EQ(
      linalg::pinv(zeros({0, 0}, f64), std::nullopt, std::nullopt, /*hermitian=*/true).shape(),
      (Shape{0, 0}));
  EXPECT_EQ(linalg::pinv(zeros({3, 0, 0}, f64), std::nullopt, std::nullopt, true).shape(),
            (Shape{3, 0, 0}));
}

TEST(LinalgDecompositions, EmptyMatrices) {
  const TensorOptions f64(kFloat64);
  EXPECT_EQ(linalg::det(zeros({2, 0, 0}, f64)).shape(), (Shape{2}));
  EXPECT_EQ(to_vector(linalg::det(zeros({2, 0, 0}, f64))), (std::vector<double>{1.0, 1.0}));
  EXPECT_EQ(linalg::inv(zeros({0, 0}, f64)).shape(), (Shape{0, 0}));
  EXPECT_EQ(linalg::inv(zeros({0, 3, 3}, f64)).shape(), (Shape{0, 3, 3}));
  // No rows: full_matrices' Vh is the identity, as torch's (it was left as the allocator's block
  // held it: U, empty, has no data, and the kernel took that for "no vectors").
  for (int i = 0; i < 4; ++i)
    full({3, 3}, 7.0, f64);  // freed blocks of Vh's size that hold 7s
  const auto [U, S, Vh] = linalg::svd(zeros({0, 3}, f64));
  EXPECT_EQ(U.shape(), (Shape{0, 0}));
  EXPECT_EQ(S.shape(), (Shape{0}));
  EXPECT_EQ(to_vector(Vh), to_vector(eye(3, f64)));
  const auto [U2, S2, Vh2] = linalg::svd(zeros({2, 0, 3}));
  EXPECT_EQ(to_vector(Vh2), to_vector(eye(3).expand({2, 3, 3})));
  const auto [U3, S3, Vh3] = linalg::svd(zeros({3, 0}, f64));
  EXPECT_EQ(to_vector(U3), to_vector(eye(3, f64)));
  EXPECT_EQ(Vh3.shape(), (Shape{0, 0}));
  const auto [Q, R] = linalg::qr(zeros({4, 0}, f64));
  EXPECT_EQ(Q.shape(), (Shape{4, 0}));
  EXPECT_EQ(R.shape(), (Shape{0, 0}));
}

// A batch of no matrices (n > 0): empty results of torch 1.13's shapes, forward and backward (the
// triangular solves divided by the batch size, and stopped the process with SIGFPE).
TEST(LinalgDecompositions, ABatchOfNoMatrices) {
  const TensorOptions f64(kFloat64);
  const auto A = [&] { return zeros({0, 3, 3}, f64).requires_grad_(); };
  const auto B = [&] { return zeros({0, 3, 2}, f64).requires_grad_(); };
  const std::vector<std::tuple<const char*, std::function<Tensor()>, Shape>> calls = {
      {"det", [&] { return linalg::det(A()); }, {0}},
      {"slogdet", [&] { return std::get<1>(linalg::slogdet(A())); }, {0}},
      {"inv", [&] { return linalg::inv(A()); }, {0, 3, 3}},
      {"solve", [&] { return linalg::solve(A(), B()); }, {0, 3, 2}},
      {"solve_triangular", [&] { return linalg::solve_triangular(A(), B(), true); }, {0, 3, 2}},
      {"cholesky", [&] { return linalg::cholesky(A()); }, {0, 3, 3}},
      {"cholesky_inverse", [&] { return cholesky_inverse(A()); }, {0, 3, 3}},
      {"cholesky_solve", [&] { return cholesky_solve(B(), A()); }, {0, 3, 2}},
      {"lu_solve",
       [&] {
         const auto [lu, pivots] = linalg::lu_factor(A());
         return linalg::lu_solve(lu, pivots, B());
       },
       {0, 3, 2}},
      {"qr", [&] { return std::get<0>(linalg::qr(A())); }, {0, 3, 3}},
      {"eigh", [&] { return std::get<1>(linalg::eigh(A())); }, {0, 3, 3}},
      {"svd", [&] { return std::get<0>(linalg::svd(A())); }, {0, 3, 3}},
      {"pinv", [&] { return linalg::pinv(A()); }, {0, 3, 3}},
      {"matrix_power", [&] { return linalg::matrix_power(A(), -2); }, {0, 3, 3}},
      {"matrix_exp", [&] { return linalg::matrix_exp(A()); }, {0, 3, 3}},
  };
  for (const auto& [name, call, shape] : calls) {
    const Tensor y = call();
    EXPECT_EQ(y.shape(), shape) << name;
    sum(y).backward();
  }
}

// exp(A) exp(-A) = I; exp of a diagonal matrix is the exponentials of its entries; exp of a
// nilpotent N (N^3 = 0) is I + N + N^2 / 2 exactly; over norms that need 0 to 8 squarings, each
// squaring doubling the approximant's relative error at most (Higham 2005, section 3).
TEST(LinalgDecompositions, MatrixExpIdentities) {
  for (const double scale : {0.01, 1.0, 30.0}) {
    SCOPED_TRACE(scale);
    const Tensor a = mul(random_matrix({5, 5}, kFloat64, 900), scale / 5.0);
    const Matrix product_ =
        product(matrix_of(linalg::matrix_exp(a)), matrix_of(linalg::matrix_exp(neg(a))));
    const double squarings = std::max(0.0, std::ceil(std::log2(scale / 5.371920351148152)));
    EXPECT_LE(max_difference(product_, identity(5)),
              residual_bound(5, kFloat64, 1.0L) * std::exp(2 * scale) * std::pow(2.0, squarings));
  }
  const Tensor d = diag(make_tensor({-3.0, 0.0, 0.5, 7.0}, {4}, kFloat64));
  const std::vector<double> e = to_vector(linalg::matrix_exp(d));
  const std::vector<double> want = {std::exp(-3.0), 1.0, std::exp(0.5), std::exp(7.0)};
  // |D|_1 = 7 takes one squaring: the approximant's rounding (a residual bound of the 4 x 4
  // evaluation at the norm), doubled.
  for (std::size_t i = 0; i < 4; ++i)
    EXPECT_NEAR(e[i * 5], want[i], 2 * residual_bound(4, kFloat64, 7.0L) * want[i]) << i;
  const Tensor nilpotent = make_tensor({0, 2, 5, 0, 0, 3, 0, 0, 0}, {3, 3}, kFloat64);
  const std::vector<double> got = to_vector(linalg::matrix_exp(nilpotent));
  // I + N + N^2 / 2, N^2 = [[0, 0, 6], 0, 0]: [1, 2, 5 + 3], [0, 1, 3], [0, 0, 1].
  const std::vector<double> exact = {1, 2, 8, 0, 1, 3, 0, 0, 1};
  for (std::size_t i = 0; i < 9; ++i)
    EXPECT_NEAR(got[i], exact[i], 16 * math_unit_roundoff(kFloat64) * 8) << i;
}

// The least-squares solution satisfies the normal equations A^T (A X - B) = 0 (a tall full-rank
// A), and a wide A's minimum-norm solution solves A X = B and lies in A's row space (X = A^T Y).
TEST(LinalgDecompositions, LstsqNormalEquations) {
  const Tensor tall = random_matrix({30, 6}, kFloat64, 910);
  const Tensor b = random_matrix({30, 2}, kFloat64, 911);
  const Tensor x = linalg::lstsq(tall, b).solution;
  const Matrix normal = product(transposed(matrix_of(tall)), matrix_of(sub(matmul(tall, x), b)));
  EXPECT_LE(max_entry(normal), 64 * residual_bound(30, kFloat64, 30.0L));
  const Tensor wide = random_matrix({4, 9}, kFloat64, 912);
  const Tensor c = random_matrix({4, 3}, kFloat64, 913);
  const Tensor y = linalg::lstsq(wide, c, std::nullopt, "gelsd").solution;
  EXPECT_LE(max_abs(sub(matmul(wide, y), c)), 64 * residual_bound(9, kFloat64, 9.0L));
  // In the row space: the projection onto it (A^T pinv(A^T)) leaves it unchanged.
  const Tensor projected = matmul(wide.t(), matmul(linalg::pinv(wide.t()), y));
  EXPECT_LE(max_abs(sub(projected, y)), 64 * residual_bound(9, kFloat64, 9.0L));
}

Tensor well_conditioned_input(const Shape& shape, std::uint64_t seed);  // below

// A loss of eigh's values alone skips the eigenvector terms (set_materialize_grads(false)), so
// it stays finite at a repeated eigenvalue: d sum(w) / dA = V V^T = I; svd's values alike.
TEST(LinalgDecompositions, ValuesAloneAreFiniteAtRepeatedValues) {
  const Tensor a = mul(eye(3, TensorOptions(kFloat64)), 2.0).requires_grad_();
  const auto [w, V] = linalg::eigh(a);
  sum(w).backward();
  EXPECT_TRUE(close_relative(a.grad(), eye(3, TensorOptions(kFloat64)), 1e-15));
  const Tensor b = eye(3, TensorOptions(kFloat64)).requires_grad_();
  const auto [U, S, Vh] = linalg::svd(b);
  sum(S).backward();
  EXPECT_TRUE(close_relative(b.grad(), eye(3, TensorOptions(kFloat64)), 1e-15));
}

// lstsq of a batch of vectors (B with one dim fewer than A) differentiates, where torch 1.13's
// backward raises.
TEST(LinalgDecompositions, LstsqOfVectorsDifferentiates) {
  const Tensor a = well_conditioned_input({2, 4, 3}, 31);
  manual_seed(32);
  const Tensor b = randn({2, 4}, TensorOptions(kFloat64)).requires_grad_();
  const GradcheckFn fn = [](const std::vector<Tensor>& x) {
    return linalg::lstsq(x[0], x[1], std::nullopt, "gelsd").solution;
  };
  EXPECT_EQ(fn({a, b}).shape(), (Shape{2, 3}));
  EXPECT_TRUE(gradcheck(fn, {a, b}));
}

// The Tensor methods are the functions (LibTorch's spellings).
TEST(LinalgDecompositions, TensorMethodsAreTheFunctions) {
  const Tensor a = well_conditioned_input({2, 3, 3}, 21).detach();
  const Tensor spd = add(matmul(a, mT(a)), eye(3, TensorOptions(kFloat64)));
  const Tensor b = random_matrix({2, 3, 2}, kFloat64, 22);
  auto same = [](const Tensor& x, const Tensor& y) { return to_vector(x) == to_vector(y); };
  EXPECT_TRUE(same(a.inverse(), linalg::inv(a)));
  EXPECT_TRUE(same(inverse(a), linalg::inv(a)));
  EXPECT_TRUE(same(a.det(), linalg::det(a)));
  EXPECT_TRUE(same(det(a), linalg::det(a)));
  EXPECT_TRUE(same(spd.logdet(), std::get<1>(linalg::slogdet(spd))));
  EXPECT_TRUE(same(std::get<1>(a.slogdet()), std::get<1>(slogdet(a))));
  EXPECT_TRUE(same(spd.cholesky(true), linalg::cholesky(spd, true)));
  const Tensor l = linalg::cholesky(spd);
  EXPECT_TRUE(same(b.cholesky_solve(l), cholesky_solve(b, l)));
  EXPECT_TRUE(same(a.pinverse(1e-3), linalg::pinv(a, std::nullopt, 1e-3)));
  EXPECT_TRUE(same(a.matrix_power(5), linalg::matrix_power(a, 5)));
  // cholesky_solve solves A X = B: A X against B, to a backward-stable solve's residual.
  EXPECT_LE(max_abs(sub(matmul(spd, b.cholesky_solve(l)), b)), 1e-12);
}

// ---- Finite differences -------------------------------------------------------------------------

Tensor well_conditioned_input(const Shape& shape, std::uint64_t seed) {
  manual_seed(seed);
  const TensorOptions f64(kFloat64);
  const std::int64_t m = shape[shape.size() - 2];
  const std::int64_t n = shape.back();
  const Tensor a = add(mul(randn(shape, f64), 0.5), mul(eye(m, n, f64), 2.0));
  return a.detach().requires_grad_();
}

Tensor symmetric_of(const Tensor& a) {
  return mul(add(a, mT(a)), 0.5);
}

TEST(LinalgDecompositions, GradcheckAndGradgradcheck) {
  const Tensor a = well_conditioned_input({2, 3, 3}, 11);
  const Tensor b = well_conditioned_input({2, 3, 2}, 12);
  const Tensor tall = well_conditioned_input({4, 3}, 13);
  const Tensor wide = well_conditioned_input({3, 4}, 14);
  const Tensor square3 = well_conditioned_input({3, 3}, 15);
  struct Check {
    const char* name;
    GradcheckFn fn;
    std::vector<Tensor> inputs;
  };
  const std::vector<Check> checks = {
      {"inv", [](const std::vector<Tensor>& x) { return linalg::inv(x[0]); }, {a}},
      {"det", [](const std::vector<Tensor>& x) { return linalg::det(x[0]); }, {a}},
      {"logabsdet",
       [](const std::vector<Tensor>& x) { return std::get<1>(linalg::slogdet(x[0])); },
       {a}},
      {"solve", [](const std::vector<Tensor>& x) { return linalg::solve(x[0], x[1]); }, {a, b}},
      {"solve_triangular",
       [](const std::vector<Tensor>& x) {
         return linalg::solve_triangular(x[0], x[1], /*upper=*/true);
       },
       {a, b}},
      {"lu_factor",
       [](const std::vector<Tensor>& x) { return std::get<0>(linalg::lu_factor(x[0])); },
       {a}},
      {"lu",
       [](const std::vector<Tensor>& x) {
         const auto [P, L, U] = linalg::lu(x[0]);
         return add(L, mul(U, 2.0));
       },
       {a}},
      // A symmetric input for the decompositions that read one triangle.
      {"cholesky",
       [](const std::vector<Tensor>& x) {
         const Tensor s = symmetric_of(x[0]);
         return linalg::cholesky(add(matmul(s, mT(s)), eye(3, TensorOptions(kFloat64))));
       },
       {a}},
      {"qr_tall",
       [](const std::vector<Tensor>& x) {
         const auto [Q, R] = linalg::qr(x[0]);
         return add(sum(Q, {0}), sum(R, {0}));
       },
       {tall}},
      {"qr_wide",
       [](const std::vector<Tensor>& x) {
         const auto [Q, R] = linalg::qr(x[0]);
         return add(sum(Q), sum(mul(R, R)));
       },
       {wide}},
      {"eigh",
       [](const std::vector<Tensor>& x) {
         const auto [w, V] = linalg::eigh(symmetric_of(x[0]));
         const Tensor c = fixed_weights(3, kFloat64);
         return add(sum(mul(w, w)),
                    sum(mul(matmul(mul(V, c), mT(V)), arange(9.0).reshape({3, 3}))));
       },
       {a}},
      {"svd_tall",
       [](const std::vector<Tensor>& x) {
         const auto [U, S, Vh] = linalg::svd(x[0], false);
         return matmul(mul(U, add(S, 1.0)), Vh);
       },
       {tall}},
      {"matrix_norms_cond",
       [](const std::vector<Tensor>& x) {
         return stack({linalg::matrix_norm(x[0], 1.0), linalg::matrix_norm(x[0], -2.0),
                       linalg::matrix_norm(x[0], "nuc"), linalg::matrix_norm(x[0], "fro"),
                       linalg::cond(x[0], std::numeric_limits<double>::infinity()),
                       linalg::cond(x[0], "fro")});
       },
       {a}},
      {"pinv_matrix_power_multi_dot",
       [](const std::vector<Tensor>& x) {
         return cat({linalg::pinv(x[0]).flatten(), linalg::matrix_power(x[1], -3).flatten(),
                     linalg::multi_dot({x[1], x[1], x[0].t(), x[0], x[1]}).flatten()});
       },
       {tall, square3}},
      {"lstsq_matrix_exp",
       [](const std::vector<Tensor>& x) {
         return cat({linalg::lstsq(x[0], add(slice(x[0], 1, 0, 2), 1.0), std::nullopt, "gelsd")
                         .solution.flatten(),
                     linalg::matrix_exp(mul(x[1], 3.0)).flatten()});
       },
       {tall, square3}},
      {"svd_wide",
       [](const std::vector<Tensor>& x) {
         const auto [U, S, Vh] = linalg::svd(x[0], true);
         return add(sum(mul(U, U)), sum(S));
       },
       {wide}},
  };
  for (const Check& c : checks) {
    SCOPED_TRACE(c.name);
    EXPECT_TRUE(gradcheck(c.fn, c.inputs));
    EXPECT_TRUE(gradgradcheck(c.fn, c.inputs));
  }
}

// det's gradient at a singular matrix is the cofactor matrix: rank n - 1 gives a nonzero one,
// which finite differences see (det is a polynomial).
TEST(LinalgDecompositions, DeterminantGradientAtSingularMatrices) {
  const Tensor rank2 = make_tensor({1, 2, 3, 2, 4, 6, 0, 1, 1}, {3, 3}, kFloat64).requires_grad_();
  EXPECT_TRUE(gradcheck([](const std::vector<Tensor>& x) { return linalg::det(x[0]); }, {rank2}));
  linalg::det(rank2).backward();
  const std::vector<double> g = to_vector(rank2.grad());
  // cof(A)[i][j] = (-1)^(i+j) minor(i, j). Rows 0 and 1 are parallel, so the minors keeping both
  // (row 2's cofactors) vanish; row 0's are [4 - 6, -(2 - 0), 2 - 0], row 1's [-(2 - 3), 1 - 0,
  // -(1 - 0)].
  const std::vector<double> want = {-2, -2, 2, 1, 1, -1, 0, 0, 0};
  for (std::size_t i = 0; i < want.size(); ++i)
    EXPECT_NEAR(g[i], want[i], 1e-12) << i;
}

}  // namespace
}  // namespace leangrad::test

namespace leangrad {
namespace {

// vecdot along the last dim of the broadcast shape, and along another dim, against PyTorch
// 1.13's values on the same exact inputs (k / 7 and (k - 3) / 5: each dot of 4 products rounds
// within 4 u of the sum of their magnitudes, at most 10 here, so 64 u is ample); the gradient is
// y and x (gradcheck); other dtypes refused.
TEST(LinalgVecdot, MatchesPyTorchAndDifferentiates) {
  const Tensor x = div(arange(12, kFloat64).reshape({3, 4}), 7.0);
  const Tensor y = div(sub(arange(8, kFloat64).reshape({2, 1, 4}), 3.0), 5.0);
  const Tensor r = linalg::vecdot(x, y);
  EXPECT_EQ(r.shape(), (Shape{2, 3}));
  const double bound = 64 * 0x1p-53 * 10;
  EXPECT_TRUE(test::all_close(r,
                              {-0.11428571428571428, -0.8, -1.4857142857142858, 0.5714285714285714,
                               1.7142857142857144, 2.857142857142857},
                              0, bound));
  EXPECT_TRUE(test::all_close(linalg::vecdot(x.t(), x.t(), 0),
                              {0.2857142857142857, 2.571428571428571, 7.469387755102041}, 0,
                              bound));
  EXPECT_TRUE(
      test::gradcheck([](const std::vector<Tensor>& in) { return linalg::vecdot(in[0], in[1], 1); },
                      {test::uniform_input({2, 5}, -1.0, 1.0, 701),
                       test::uniform_input({3, 1, 5}, -1.0, 1.0, 702)}));
  EXPECT_THROW(linalg::vecdot(x, y.to(kFloat32)), DTypeError);
  EXPECT_THROW(linalg::vecdot(x.to(kInt64), x.to(kInt64)), DTypeError);
  EXPECT_THROW(linalg::vecdot(x, ones({3, 5}, kFloat64)), ShapeError);
}

}  // namespace
}  // namespace leangrad
