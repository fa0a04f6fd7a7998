// LibTorch's torch::special namespace (autograd/special.h): each function is the leangrad function
// it names (the same bits), and a value of each known in closed form.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <numbers>
#include <string>
#include <vector>

#include <leangrad/autograd/special.h>
#include <leangrad/core/creation.h>
#include <leangrad/kernels/creation.h>
#include "testing/gradcheck.h"
#include "testing/tensor_testing.h"

namespace leangrad {
namespace {

using Unary = std::function<Tensor(const Tensor&)>;

TEST(SpecialNamespace, IsTheFunctionsItNames) {
  const Tensor x = test::uniform_input({16}, 0.1, 0.9, 1).detach();
  const Tensor y = test::uniform_input({16}, 0.5, 3.0, 2).detach();
  const std::vector<std::tuple<std::string, Unary, Unary>> pairs = {
      {"gammaln", special::gammaln, lgamma},
      {"digamma", special::digamma, digamma},
      {"psi", special::psi, digamma},
      {"erf", special::erf, erf},
      {"erfc", special::erfc, erfc},
      {"erfcx", special::erfcx, special_erfcx},
      {"erfinv", special::erfinv, erfinv},
      {"ndtr", special::ndtr, special_ndtr},
      {"log_ndtr", special::log_ndtr, special_log_ndtr},
      {"ndtri", special::ndtri, special_ndtri},
      {"i0", special::i0, i0},
      {"i0e", special::i0e, special_i0e},
      {"i1", special::i1, special_i1},
      {"i1e", special::i1e, special_i1e},
      {"bessel_j0", special::bessel_j0, special_bessel_j0},
      {"bessel_j1", special::bessel_j1, special_bessel_j1},
      {"bessel_y0", special::bessel_y0, special_bessel_y0},
      {"bessel_y1", special::bessel_y1, special_bessel_y1},
      {"modified_bessel_i0", special::modified_bessel_i0, special_modified_bessel_i0},
      {"modified_bessel_i1", special::modified_bessel_i1, special_modified_bessel_i1},
      {"modified_bessel_k0", special::modified_bessel_k0, special_modified_bessel_k0},
      {"modified_bessel_k1", special::modified_bessel_k1, special_modified_bessel_k1},
      {"scaled_modified_bessel_k0", special::scaled_modified_bessel_k0,
       special_scaled_modified_bessel_k0},
      {"scaled_modified_bessel_k1", special::scaled_modified_bessel_k1,
       special_scaled_modified_bessel_k1},
      {"spherical_bessel_j0", special::spherical_bessel_j0, special_spherical_bessel_j0},
      {"exp2", special::exp2, exp2},
      {"expm1", special::expm1, expm1},
      {"log1p", special::log1p, log1p},
      {"expit", special::expit, sigmoid},
      {"entr", special::entr, special_entr},
      {"sinc", special::sinc, sinc},
  };
  for (const auto& [name, ours, target] : pairs) {
    SCOPED_TRACE(name);
    EXPECT_TRUE(ours(x).equal(target(x)));
  }
  EXPECT_TRUE(special::polygamma(2, y).equal(polygamma(2, y)));
  EXPECT_TRUE(special::multigammaln(y, 1).equal(mvlgamma(y, 1)));
  EXPECT_TRUE(special::gammainc(y, x).equal(special_gammainc(y, x)));
  EXPECT_TRUE(special::gammaincc(y, x).equal(special_gammaincc(y, x)));
  EXPECT_TRUE(special::zeta(add(y, 1.0), x).equal(special_zeta(add(y, 1.0), x)));
  EXPECT_TRUE(special::zeta(add(y, 1.0), 2.0).equal(special_zeta(add(y, 1.0), 2.0)));
  EXPECT_TRUE(special::zeta(3.0, y).equal(special_zeta(3.0, y)));
  EXPECT_TRUE(special::logit(x).equal(logit(x)));
  EXPECT_TRUE(special::logit(x, 0.2).equal(logit(x, 0.2)));
  EXPECT_TRUE(special::xlogy(x, y).equal(xlogy(x, y)));
  EXPECT_TRUE(special::xlogy(x, 2.0).equal(xlogy(x, 2.0)));
  EXPECT_TRUE(special::xlogy(2.0, y).equal(xlogy(2.0, y)));
  EXPECT_TRUE(special::xlog1py(x, y).equal(special_xlog1py(x, y)));
  EXPECT_TRUE(special::round(mul(y, 10.0)).equal(round(mul(y, 10.0))));
  EXPECT_TRUE(special::round(y, 2).equal(round(y, 2)));
  const Tensor m = y.reshape({4, 4});
  EXPECT_TRUE(special::logsumexp(m, 1).equal(logsumexp(m, 1)));
  EXPECT_TRUE(special::softmax(m, 0).equal(softmax(m, 0)));
  EXPECT_TRUE(special::log_softmax(m, 1).equal(log_softmax(m, 1)));
  const Tensor f32 = m.to(kFloat32);
  EXPECT_EQ(special::softmax(f32, 1, kFloat64).dtype(), kFloat64);
  EXPECT_TRUE(special::log_softmax(f32, 1, kFloat64).equal(log_softmax(f32.to(kFloat64), 1)));
}

// Values known in closed form, within a few units of float64's roundoff.
TEST(SpecialNamespace, ClosedFormValues) {
  const auto at = [](const Tensor& t) { return t.item<double>(); };
  const auto scalar = [](double v) { return full({1}, v, kFloat64); };
  constexpr double eps = 1e-14;
  EXPECT_NEAR(at(special::gammaln(scalar(5.0))), std::log(24.0), eps);
  EXPECT_NEAR(at(special::psi(scalar(1.0))), -0.57721566490153286061, eps);
  EXPECT_NEAR(at(special::expit(scalar(0.0))), 0.5, eps);
  EXPECT_NEAR(at(special::ndtr(scalar(0.0))), 0.5, eps);
  EXPECT_NEAR(at(special::ndtri(scalar(0.5))), 0.0, eps);
  EXPECT_NEAR(at(special::erfcx(scalar(0.0))), 1.0, eps);
  EXPECT_NEAR(at(special::bessel_j0(scalar(0.0))), 1.0, eps);
  EXPECT_NEAR(at(special::i0(scalar(0.0))), 1.0, eps);
  EXPECT_NEAR(at(special::zeta(scalar(2.0), 1.0)), std::numbers::pi * std::numbers::pi / 6, eps);
  EXPECT_NEAR(at(special::multigammaln(scalar(2.5), 2)),
              0.5 * std::log(std::numbers::pi) + std::lgamma(2.5) + std::lgamma(2.0), eps);
  EXPECT_NEAR(at(special::xlogy(scalar(2.0), scalar(std::exp(1.5)))), 3.0, eps);
  EXPECT_NEAR(at(special::logsumexp(full({2}, 1.0, kFloat64), 0)), 1.0 + std::log(2.0), eps);
}

}  // namespace
}  // namespace leangrad
