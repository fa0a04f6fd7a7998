// nn::utils::clip_grad_value_, parameters_to_vector and vector_to_parameters (optim/clip_grad.h,
// nn/convert_parameters.h), and clip_grad_norm_ of one parameter: against elementwise loops over
// the gradients and parameters, the round trip, and the gradient of the flat vector.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include <leangrad/autograd/functions.h>
#include <leangrad/autograd/grad_mode.h>
#include <leangrad/core/creation.h>
#include <leangrad/kernels/creation.h>
#include <leangrad/nn/convert_parameters.h>
#include <leangrad/optim/clip_grad.h>
#include "testing/gradcheck.h"
#include "testing/tensor_testing.h"

namespace leangrad {
namespace {

TEST(ClipGradValue, ClampsEachElementAndSkipsMissingGradients) {
  const Tensor a = test::uniform_input({3, 4}, -1, 1, 1);
  const Tensor b = test::uniform_input({5}, -1, 1, 2);
  const Tensor c = test::uniform_input({2}, -1, 1, 3);  // no gradient
  a.set_grad(test::uniform_input({3, 4}, -3, 3, 4).detach());
  Tensor gb = test::uniform_input({5}, -3, 3, 5).detach();
  gb.index_put_({full({1}, 2.0, kInt64)},
                full({1}, std::numeric_limits<double>::quiet_NaN(), kFloat64));
  b.set_grad(gb.clone());
  const std::vector<double> before_a = test::to_vector(a.grad());
  const std::vector<double> before_b = test::to_vector(b.grad());
  nn::utils::clip_grad_value_({a, b, c}, 1.25);
  const std::vector<double> after_a = test::to_vector(a.grad());
  const std::vector<double> after_b = test::to_vector(b.grad());
  for (std::size_t i = 0; i < before_a.size(); ++i)
    EXPECT_EQ(after_a[i], std::min(1.25, std::max(-1.25, before_a[i]))) << i;
  for (std::size_t i = 0; i < before_b.size(); ++i) {
    if (std::isnan(before_b[i])) {
      EXPECT_TRUE(std::isnan(after_b[i]));  // NaN stays NaN
    } else {
      EXPECT_EQ(after_b[i], std::min(1.25, std::max(-1.25, before_b[i]))) << i;
    }
  }
  EXPECT_FALSE(c.grad().defined());
  optim::clip_grad_value_(a, 0.5);  // one parameter
  EXPECT_LE(amax(abs(a.grad())).item<double>(), 0.5);
  EXPECT_THROW(optim::clip_grad_value_({a}, -1.0), Error);
  EXPECT_THROW(optim::clip_grad_value_({a}, std::numeric_limits<double>::quiet_NaN()), Error);
  // A clip_value the gradients' dtype cannot hold is refused in clip_grad_value_'s name, before
  // any gradient is clipped (torch refuses it too; clamp_ named itself, after the first ones).
  const Tensor f = zeros({2}).requires_grad_(true);
  f.set_grad(full({2}, 3.0));
  try {
    optim::clip_grad_value_({a, f}, 1e39);
    ADD_FAILURE() << "clip_value 1e39 for float32 gradients was taken";
  } catch (const DTypeError& e) {
    EXPECT_NE(e.message().find("clip_grad_value_: clip_value 1e+39"), std::string::npos)
        << e.message();
  }
  EXPECT_EQ(test::to_vector(f.grad()), (std::vector<double>{3.0, 3.0}));
}

TEST(ClipGradNorm, OfOneParameterIsTheListOfOne) {
  const Tensor a = test::uniform_input({6}, -1, 1, 6);
  const Tensor b = test::uniform_input({6}, -1, 1, 6);
  a.set_grad(test::uniform_input({6}, -3, 3, 7).detach());
  b.set_grad(a.grad().clone());
  const Tensor one = nn::utils::clip_grad_norm_(a, 1.0);
  const Tensor list = nn::utils::clip_grad_norm_(std::vector<Tensor>{b}, 1.0);
  EXPECT_TRUE(one.equal(list));
  EXPECT_TRUE(a.grad().equal(b.grad()));
}

TEST(ParametersToVector, FlattensInOrderAndDifferentiates) {
  const Tensor w = test::uniform_input({2, 3}, -1, 1, 8);
  const Tensor bias = test::uniform_input({3}, -1, 1, 9);
  const Tensor t = test::uniform_input({3, 2}, -1, 1, 10).t();  // not contiguous
  const Tensor flat = nn::utils::parameters_to_vector({w, bias, t});
  ASSERT_EQ(flat.shape(), (Shape{15}));
  std::vector<double> want = test::to_vector(w);
  for (const Tensor& p : {bias, t.contiguous()})
    for (double v : test::to_vector(p))
      want.push_back(v);
  EXPECT_EQ(test::to_vector(flat), want);
  EXPECT_TRUE(test::gradcheck(
      [](const std::vector<Tensor>& in) { return nn::utils::parameters_to_vector(in); },
      {w, bias}));
}

TEST(VectorToParameters, GivesEachItsSliceAndRoundTrips) {
  const Tensor w = test::uniform_input({2, 3}, -1, 1, 11);
  const Tensor bias = test::uniform_input({4}, -1, 1, 12);
  const Tensor vec = arange(10.0, TensorOptions(kFloat64));
  {
    NoGradGuard no_grad;
    nn::utils::vector_to_parameters(vec, {w, bias});
  }
  EXPECT_EQ(w.shape(), (Shape{2, 3}));
  EXPECT_EQ(test::to_vector(w), (std::vector<double>{0, 1, 2, 3, 4, 5}));
  EXPECT_EQ(test::to_vector(bias), (std::vector<double>{6, 7, 8, 9}));
  EXPECT_TRUE(w.requires_grad());  // identity and autograd state kept
  EXPECT_TRUE(w.shares_storage(vec));
  EXPECT_TRUE(nn::utils::parameters_to_vector({w, bias}).equal(vec));
  EXPECT_THROW(nn::utils::vector_to_parameters(arange(9.0, TensorOptions(kFloat64)), {w, bias}),
               ShapeError);
  EXPECT_THROW(nn::utils::vector_to_parameters(arange(10.0), {w, bias}), DTypeError);
  EXPECT_THROW(nn::utils::vector_to_parameters(vec.reshape({2, 5}), {w, bias}), ShapeError);
  EXPECT_THROW(nn::utils::parameters_to_vector({}), Error);
  EXPECT_THROW(nn::utils::parameters_to_vector({w, zeros({2})}), DTypeError);
}

}  // namespace
}  // namespace leangrad
