// conv_transpose1d and nn::ConvTranspose1d against PyTorch 1.13
// (tests/data/conv_transpose1d.json, written by make_conv_transpose1d.py): the output and the
// gradients of the input, the weight and the bias, for a plain case, stride with padding and
// output_padding, and groups with dilation and no bias; the module is the function, initialised
// as PyTorch's. Bad arguments: the Conv misuse table (tests/misuse/test_misuse_nn_functions.cpp).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include <leangrad/autograd/engine.h>
#include <leangrad/autograd/functions.h>
#include <leangrad/autograd/grad_mode.h>
#include <leangrad/autograd/nn_functions.h>
#include <leangrad/core/generator.h>
#include <leangrad/nn/conv.h>
#include "testing/gradcheck.h"
#include "testing/reference_data.h"
#include "testing/tensor_testing.h"
#include "testing/within_bound.h"

namespace leangrad {
namespace {

// Each output and each gradient is a sum of at most m products (m the largest of C_in k,
// C_out / groups k and N L_out), summed in another order than PyTorch's: within m u times the
// sum of their magnitudes, at most m max|a| max|b|; the bound 4 m^2 u max|x| max|w| (the
// upstream weights are at most 1) leaves room and still catches any wrong tap.
void expect_within(const Tensor& got, const Tensor& want, double bound, const char* what) {
  EXPECT_TRUE(test::within_bound(got, want, bound)) << what;
}

TEST(ConvTranspose1d, MatchesPyTorch) {
  int checked = 0;
  for (const test::ReferenceCase& c : test::load_reference("conv_transpose1d.json")) {
    SCOPED_TRACE(c.name);
    ++checked;
    const auto& p = c.params;
    Tensor x = c.at("x").clone().requires_grad_();
    Tensor weight = c.at("weight").clone().requires_grad_();
    Tensor bias = c.tensors.count("bias") ? c.at("bias").clone().requires_grad_() : Tensor();
    const std::int64_t groups = p.at("groups").get<std::int64_t>();
    const Tensor y = conv_transpose1d(
        x, weight, bias, p.at("stride").get<std::int64_t>(), p.at("padding").get<std::int64_t>(),
        p.at("output_padding").get<std::int64_t>(), groups, p.at("dilation").get<std::int64_t>());
    const double k = static_cast<double>(weight.size(2));
    const double m =
        std::max({static_cast<double>(weight.size(0)) * k, static_cast<double>(weight.size(1)) * k,
                  static_cast<double>(y.size(0) * y.size(2))});
    const double bound = 4 * m * m * test::math_unit_roundoff(kFloat64) *
                         std::max(1.0, test::max_abs(x)) * std::max(1.0, test::max_abs(weight));
    expect_within(y, c.at("y"), bound, "output");
    sum(mul(y, c.at("w"))).backward();
    expect_within(x.grad(), c.at("dx"), bound, "input gradient");
    expect_within(weight.grad(), c.at("dweight"), bound, "weight gradient");
    if (bias.defined()) expect_within(bias.grad(), c.at("dbias"), bound, "bias gradient");
  }
  EXPECT_EQ(checked, 3);
}

TEST(ConvTranspose1d, ModuleIsTheFunction) {
  manual_seed(6);
  nn::ConvTranspose1d deconv(
      nn::ConvTranspose1dOptions(4, 6, 3).stride(2).padding(1).output_padding(1).groups(2));
  EXPECT_EQ(deconv->weight.shape(), (Shape{4, 3, 3}));
  EXPECT_EQ(deconv->bias.shape(), (Shape{6}));
  // PyTorch's init: U(-1/sqrt(fan_in), 1/sqrt(fan_in)), fan_in = C_out / groups * k = 9.
  EXPECT_LE(test::max_abs(deconv->weight), 1.0 / 3.0);
  EXPECT_LE(test::max_abs(deconv->bias), 1.0 / 3.0);
  const Tensor x = test::uniform_input({2, 4, 5}, -1.0, 1.0, 3).to(kFloat32);
  const Tensor y = deconv(x);
  EXPECT_EQ(y.shape(), (Shape{2, 6, 10}));  // (5 - 1) 2 - 2 + 2 + 1 + 1
  EXPECT_TRUE(equal(y, conv_transpose1d(x, deconv->weight, deconv->bias, 2, 1, 1, 2)));
  EXPECT_EQ(deconv->extra_repr(),
            "4, 6, kernel_size=(3,), stride=(2,), padding=(1,), output_padding=(1,), groups=2");
}

}  // namespace
}  // namespace leangrad
