// geqrf, householder_product (orgqr) and the _ex variants of linalg (cholesky_ex, inv_ex,
// solve_ex, lu_factor_ex) in autograd/linalg_decompositions.h: values, infos and gradients
// against PyTorch's (tests/data/householder_and_ex.json, make_householder_and_ex.py), gradients by
// finite differences, and properties (Q R = A, Q orthonormal, check_errors).
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include <leangrad/autograd/functions.h>
#include <leangrad/autograd/indexing_functions.h>
#include <leangrad/autograd/linalg_decompositions.h>
#include <leangrad/autograd/linalg_functions.h>
#include <leangrad/kernels/creation.h>
#include "testing/gradcheck.h"
#include "testing/reference_data.h"
#include "testing/tensor_testing.h"

namespace leangrad {
namespace {

using test::gradcheck;
using test::gradgradcheck;
using test::matches_within_roundoff;
using test::RoundoffMatch;
using test::uniform_input;
using Inputs = std::vector<Tensor>;

// Each case's matrices have condition numbers below 10 and at most 5 rows: a reflection's vector
// or a factor computed in another order (LAPACK's blocked kernels against Eigen's and ours) is
// within a few tens of units of roundoff of max(1, |value|) times the condition number; 200 units
// separate that from a wrong sign or formula. Gradients compose a few more products: 400. The
// infos are exact, and so are the factors of the matrices that did not fail.
TEST(HouseholderAndExReference, MatchesPyTorch) {
  const std::vector<test::ReferenceCase> cases = test::load_reference("householder_and_ex.json");
  ASSERT_EQ(cases.size(), 12u);  // make_householder_and_ex.py's count
  const RoundoffMatch values{.ulps = 200};
  for (const test::ReferenceCase& rc : cases) {
    SCOPED_TRACE(rc.name);
    const std::string op = rc.params.at("op").get<std::string>();
    const Tensor& a = rc.at("a");
    if (op == "geqrf") {
      const auto [packed, tau] = geqrf(a);
      EXPECT_TRUE(matches_within_roundoff(packed, rc.at("y"), {}, values)) << "a";
      EXPECT_TRUE(matches_within_roundoff(tau, rc.at("tau"), {}, values)) << "tau";
    } else if (op == "householder_product") {
      const test::ReferenceInputs in = test::reference_inputs(rc);
      const Tensor q = linalg::householder_product(in.tensors[0], in.tensors[1]);
      EXPECT_TRUE(matches_within_roundoff(q, rc.at("y"), {}, values)) << "y";
      ASSERT_TRUE(in.differentiable);  // d_a and d_tau
      test::expect_reference_gradients(rc, in, q, 400);
      if (HasFatalFailure()) return;
    } else {
      // The _ex variants: the info of each matrix, and the result of the ones that did not fail.
      Tensor y;
      Tensor info;
      if (op == "cholesky_ex") {
        std::tie(y, info) = linalg::cholesky_ex(a, rc.params.at("upper").get<bool>());
      } else if (op == "inv_ex") {
        std::tie(y, info) = linalg::inv_ex(a);
      } else if (op == "solve_ex") {
        std::tie(y, info) = linalg::solve_ex(a, rc.at("b"));
      } else {
        ASSERT_EQ(op, "lu_factor_ex");
        Tensor pivots;
        std::tie(y, pivots, info) = linalg::lu_factor_ex(a);
        EXPECT_TRUE(pivots.equal(rc.at("pivots"))) << "pivots";
      }
      ASSERT_EQ(info.dtype(), kInt32);
      EXPECT_TRUE(info.equal(rc.at("info"))) << "info";
      for (std::int64_t b = 0; b < info.numel(); ++b) {
        const bool failed = info.reshape({-1})[b].item<std::int32_t>() != 0;
        if (failed && op != "lu_factor_ex") continue;  // unspecified, but for the LU factors
        SCOPED_TRACE("matrix " + std::to_string(b));
        EXPECT_TRUE(matches_within_roundoff(y[b], rc.at("y")[b], {}, values));
      }
    }
  }
}

TEST(Householder, ProductOfGeqrfIsQr) {
  for (const Shape& shape : {Shape{6, 4}, Shape{4, 4}, Shape{3, 5, 2}}) {
    SCOPED_TRACE(::testing::PrintToString(shape));
    const Tensor a = uniform_input(shape, -1.0, 1.0, 7).detach();
    const auto [packed, tau] = geqrf(a);
    const Tensor q = orgqr(packed, tau);
    const auto [q_ref, r_ref] = linalg::qr(a);
    // Both are Q of the same reflections: a few roundings of each entry apart.
    EXPECT_TRUE(q.allclose(q_ref, 0.0, 1e-13));
    EXPECT_TRUE(triu(packed.narrow(-2, 0, r_ref.size(-2))).allclose(r_ref, 0.0, 1e-13));
    EXPECT_TRUE(matmul(q, r_ref).allclose(a, 0.0, 1e-13));
  }
  // A wide matrix's geqrf has min(m, n) reflections.
  EXPECT_EQ(std::get<1>(geqrf(ones({2, 5}, kFloat64))).size(-1), 2);
}

TEST(Householder, GradientsMatchFiniteDifferences) {
  const Tensor a = uniform_input({4, 3}, -1.0, 1.0, 8);
  const Tensor tau = uniform_input({2}, 0.5, 1.5, 9);
  const auto fn = [](const Inputs& x) { return linalg::householder_product(x[0], x[1]); };
  EXPECT_TRUE(gradcheck(fn, {a, tau}));
  EXPECT_TRUE(gradgradcheck(fn, {a, tau}));
  // cholesky_ex's gradient is cholesky's.
  const Tensor m = uniform_input({3, 3}, -1.0, 1.0, 10);
  const auto chol = [](const Inputs& x) {
    const Tensor spd = add(matmul(x[0], x[0].mT()), eye(3, kFloat64));
    return std::get<0>(linalg::cholesky_ex(spd));
  };
  EXPECT_TRUE(gradcheck(chol, {m}));
}

TEST(Householder, ChecksItsArguments) {
  const Tensor a = ones({4, 3}, kFloat64);
  EXPECT_THROW(linalg::householder_product(ones({3, 4}, kFloat64), ones({3}, kFloat64)),
               ShapeError);                                                       // m < n
  EXPECT_THROW(linalg::householder_product(a, ones({4}, kFloat64)), ShapeError);  // k > n
  EXPECT_THROW(linalg::householder_product(a, ones({2, 3}, kFloat64)), ShapeError);
  EXPECT_THROW(linalg::householder_product(a, ones({3}, kFloat32)), DTypeError);
  EXPECT_THROW(linalg::householder_product(a, Tensor()), Error);
  EXPECT_THROW(geqrf(ones({3}, kFloat64)), ShapeError);
  EXPECT_THROW(geqrf(ones({3, 3}, kInt64)), DTypeError);
}

TEST(LinalgEx, CheckErrorsRaises) {
  const Tensor singular = zeros({2, 2}, kFloat64);
  EXPECT_EQ(std::get<1>(linalg::inv_ex(singular)).item<std::int32_t>(), 1);
  EXPECT_THROW(linalg::inv_ex(singular, /*check_errors=*/true), Error);
  EXPECT_THROW(linalg::solve_ex(singular, ones({2}, kFloat64), true, true), Error);
  EXPECT_THROW(linalg::lu_factor_ex(singular, true, true), Error);
  EXPECT_THROW(linalg::cholesky_ex(neg(eye(2, kFloat64)), false, true), Error);
  // Without a failure check_errors changes nothing; info is 0 of the batch's shape.
  const Tensor batch = expand(eye(2, kFloat64), {3, 2, 2});
  const auto [inverse, info] = linalg::inv_ex(batch, true);
  EXPECT_TRUE(inverse.equal(batch));
  EXPECT_TRUE(info.equal(zeros({3}, kInt32)));
  // solve_ex's info has the broadcast batch's shape.
  EXPECT_EQ(std::get<1>(linalg::solve_ex(eye(2, kFloat64), ones({4, 2, 1}, kFloat64))).shape(),
            (Shape{4}));
}

}  // namespace
}  // namespace leangrad
