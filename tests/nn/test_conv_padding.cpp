// Convolutions with padding by rule, kValid and kSame (autograd/conv_padding.cpp, Note [Same
// padding]): conv1d/2d/3d and the Conv modules, padding_mode included, against PyTorch 1.13's
// padding="valid" and "same" (tests/data/conv_padding.json, written by make_conv_padding.py:
// output and the gradients of the input, weight and bias), the output's size against the input's
// for every kernel and dilation, kSame with an even total against the numbers it stands for, and
// the options' setters, printing and F:: overloads. Bad arguments: the ConvPadding rows of
// tests/misuse/test_misuse_nn_functions.cpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include <leangrad/autograd/functions.h>
#include <leangrad/autograd/volumetric_functions.h>
#include <leangrad/nn/nn.h>
#include "testing/gradcheck.h"
#include "testing/reference_data.h"
#include "testing/tensor_testing.h"
#include "testing/within_bound.h"

namespace leangrad {
namespace {

namespace F = nn::functional;

template <std::size_t D>
std::array<std::int64_t, D> sizes_of(const nlohmann::json& v) {
  std::array<std::int64_t, D> s{};
  for (std::size_t i = 0; i < D; ++i)
    s[i] = v.at(i).get<std::int64_t>();
  return s;
}

PadMode pad_mode_named(const std::string& name) {
  if (name == "reflect") return kReflect;
  if (name == "replicate") return kReplicate;
  if (name == "circular") return kCircular;
  return kZeros;
}

ConvPadding rule_named(const std::string& name) {
  return name == "same" ? kSame : kValid;
}

// Each output and gradient is a sum of at most m products (m the largest of C_in / groups times
// the kernel's taps, C_out / groups times the taps, and N times the output's positions), added in
// another order than PyTorch's: within m u times the sum of their magnitudes, at most m max|a|
// max|b|. 4 m^2 u max|x| max|w| max|g| leaves room and still catches any wrong tap or shift.
double sum_bound(const Tensor& x, const Tensor& weight, const Tensor& y, const Tensor& g) {
  double taps = 1;
  for (int d = 2; d < weight.dim(); ++d)
    taps *= static_cast<double>(weight.size(d));
  const double positions = static_cast<double>(y.numel() / y.size(1));
  const double m = std::max({static_cast<double>(weight.size(1)) * taps,
                             static_cast<double>(weight.size(0)) * taps, positions});
  return 4 * m * m * test::math_unit_roundoff(kFloat64) * std::max(1.0, test::max_abs(x)) *
         std::max(1.0, test::max_abs(weight)) * std::max(1.0, test::max_abs(g));
}

// The case's convolution: the function with kSame / kValid, or the module with its padding_mode,
// holding the case's weight and bias. Returns {y, weight, bias} (the leaves that get gradients).
std::array<Tensor, 3> run_case(const test::ReferenceCase& c, const Tensor& x) {
  const auto& p = c.params;
  const std::int64_t dims = p.at("dims").get<std::int64_t>();
  const std::int64_t groups = p.at("groups").get<std::int64_t>();
  const ConvPadding rule = rule_named(p.at("padding").get<std::string>());
  const std::string mode = p.at("mode").get<std::string>();
  const std::int64_t c_in = x.size(1), c_out = c.at("w").size(0);
  if (mode == "functional") {
    Tensor w = c.at("w").clone().requires_grad_();
    Tensor b = c.at("b").clone().requires_grad_();
    Tensor y;
    if (dims == 1) {
      y = conv1d(x, w, b, 1, rule, p.at("dilation").at(0).get<std::int64_t>(), groups);
    } else if (dims == 2) {
      y = conv2d(x, w, b, {1, 1}, rule, sizes_of<2>(p.at("dilation")), groups);
    } else {
      y = conv3d(x, w, b, {1, 1, 1}, rule, sizes_of<3>(p.at("dilation")), groups);
    }
    return {y, w, b};
  }
  std::shared_ptr<nn::Module> module;
  Tensor w, b;
  if (dims == 1) {
    nn::Conv1d m(nn::Conv1dOptions(c_in, c_out, p.at("kernel").at(0).get<std::int64_t>())
                     .padding(rule)
                     .dilation(p.at("dilation").at(0).get<std::int64_t>())
                     .groups(groups)
                     .padding_mode(pad_mode_named(mode)));
    module = m.ptr(), w = m->weight, b = m->bias;
  } else if (dims == 2) {
    nn::Conv2d m(nn::Conv2dOptions(c_in, c_out, sizes_of<2>(p.at("kernel")))
                     .padding(rule)
                     .dilation(sizes_of<2>(p.at("dilation")))
                     .groups(groups)
                     .padding_mode(pad_mode_named(mode)));
    module = m.ptr(), w = m->weight, b = m->bias;
  } else {
    nn::Conv3d m(nn::Conv3dOptions(c_in, c_out, sizes_of<3>(p.at("kernel")))
                     .padding(rule)
                     .dilation(sizes_of<3>(p.at("dilation")))
                     .groups(groups)
                     .padding_mode(pad_mode_named(mode)));
    module = m.ptr(), w = m->weight, b = m->bias;
  }
  module->to(kFloat64);
  for (auto& [name, t] : module->named_parameters()) {
    const NoGradGuard no_grad;
    t.copy_(name == "weight" ? c.at("w") : c.at("b"));
    (name == "weight" ? w : b) = t;
  }
  return {(*module)(x), w, b};
}

TEST(ConvPadding, MatchesPyTorch) {
  int checked = 0;
  for (const test::ReferenceCase& c : test::load_reference("conv_padding.json")) {
    SCOPED_TRACE(c.name);
    ++checked;
    Tensor x = c.at("x").clone().requires_grad_();
    const auto [y, w, b] = run_case(c, x);
    ASSERT_EQ(y.shape(), c.at("y").shape());
    const double bound = sum_bound(x, w, y, c.at("g"));
    EXPECT_TRUE(test::within_bound(y, c.at("y"), bound)) << "output";
    sum(mul(y, c.at("g"))).backward();
    EXPECT_TRUE(test::within_bound(x.grad(), c.at("dx"), bound)) << "input gradient";
    EXPECT_TRUE(test::within_bound(w.grad(), c.at("dw"), bound)) << "weight gradient";
    EXPECT_TRUE(test::within_bound(b.grad(), c.at("db"), bound)) << "bias gradient";
  }
  EXPECT_EQ(checked, 16);
}

// kSame keeps every size for every kernel and dilation, odd totals (one more zero after) too, in
// every rank and for unbatched conv3d input.
TEST(ConvPadding, SameKeepsTheSize) {
  for (std::int64_t k = 1; k <= 5; ++k)
    for (std::int64_t d = 1; d <= 3; ++d) {
      SCOPED_TRACE(testing::Message() << "kernel " << k << ", dilation " << d);
      const Tensor line = test::uniform_input({2, 3, 7}, -1, 1, 90);
      EXPECT_EQ(conv1d(line, ones({4, 3, k}, kFloat64), Tensor(), 1, kSame, d).shape(),
                Shape({2, 4, 7}));
      const Tensor image = test::uniform_input({1, 2, 6, 5}, -1, 1, 91);
      EXPECT_EQ(
          conv2d(image, ones({3, 2, k, 6 - k}, kFloat64), Tensor(), {1, 1}, kSame, {d, 1}).shape(),
          Shape({1, 3, 6, 5}));
      const Tensor volume = test::uniform_input({2, 4, 3, 5}, -1, 1, 92);
      EXPECT_EQ(
          conv3d(volume, ones({1, 2, 2, k, 3}, kFloat64), Tensor(), {1, 1, 1}, kSame, {1, d, 2}, 1)
              .shape(),
          Shape({1, 4, 3, 5}));
    }
}

// Where the total is even kSame is the padding it stands for, and kValid is none: bit for bit.
TEST(ConvPadding, RulesAreTheirNumbers) {
  const Tensor x = test::uniform_input({2, 4, 6, 7}, -2, 2, 93);
  const Tensor w = test::uniform_input({6, 2, 3, 5}, -1, 1, 94);
  const Tensor b = test::uniform_input({6}, -1, 1, 95);
  EXPECT_TRUE(
      equal(conv2d(x, w, b, {1, 1}, kSame, {2, 1}, 2), conv2d(x, w, b, {1, 1}, {2, 2}, {2, 1}, 2)));
  EXPECT_TRUE(equal(conv2d(x, w, b, {2, 3}, kValid, {1, 1}, 2),
                    conv2d(x, w, b, {2, 3}, {0, 0}, {1, 1}, 2)));
  EXPECT_TRUE(equal(conv1d(x.select(2, 0), w.select(2, 0), b, 2, kValid, 1, 2),
                    conv1d(x.select(2, 0), w.select(2, 0), b, 2, 0, 1, 2)));
}

TEST(ConvPadding, OptionsAndModules) {
  nn::Conv2dOptions o(3, 2, {4, 1});
  EXPECT_FALSE(o.padding_rule().has_value());
  o.padding(kSame);
  EXPECT_EQ(o.padding_rule(), kSame);
  EXPECT_EQ(o.padding(), Size2({0, 0}));
  o.padding(1);  // numbers replace the rule
  EXPECT_FALSE(o.padding_rule().has_value());
  EXPECT_EQ(o.padding(), Size2({1, 1}));
  // PyTorch prints a string padding as it is: Conv2d(3, 2, kernel_size=(4, 1), stride=(1, 1),
  // padding=same).
  EXPECT_EQ(nn::Conv2d(nn::Conv2dOptions(3, 2, {4, 1}).padding(kSame))->extra_repr(),
            "3, 2, kernel_size=(4, 1), stride=(1, 1), padding=same");
  EXPECT_EQ(nn::Conv1d(nn::Conv1dOptions(3, 2, 3).padding(kValid))->extra_repr(),
            "3, 2, kernel_size=(3,), stride=(1,), padding=valid");
  EXPECT_EQ(
      nn::Conv3d(nn::Conv3dOptions(1, 1, 2).padding(kSame).padding_mode(kReflect))->extra_repr(),
      "1, 1, kernel_size=(2, 2, 2), stride=(1, 1, 1), padding=same, padding_mode=reflect");
  // The module is the function with its parameters.
  nn::Conv2d conv(nn::Conv2dOptions(2, 4, {2, 3}).padding(kSame).dilation({1, 2}));
  const Tensor x = test::uniform_input({1, 2, 5, 6}, -1, 1, 96).to(kFloat32);
  EXPECT_TRUE(equal(conv(x), conv2d(x, conv->weight, conv->bias, {1, 1}, kSame, {1, 2})));
}

TEST(ConvPadding, FunctionalOptions) {
  const Tensor x = test::uniform_input({2, 2, 5, 4, 6}, -1, 1, 97);
  const Tensor w = test::uniform_input({4, 1, 2, 3, 4}, -1, 1, 98);
  const Tensor b = test::uniform_input({4}, -1, 1, 99);
  EXPECT_TRUE(equal(F::conv3d(x, w, F::Conv3dFuncOptions().bias(b).padding(kSame).groups(2)),
                    conv3d(x, w, b, {1, 1, 1}, kSame, {1, 1, 1}, 2)));
  const Tensor image = x.select(2, 0), kernel = w.select(2, 0);
  EXPECT_TRUE(
      equal(F::conv2d(image, kernel, F::Conv2dFuncOptions().padding(kSame).dilation(2).groups(2)),
            conv2d(image, kernel, Tensor(), {1, 1}, kSame, {2, 2}, 2)));
  const Tensor line = image.select(2, 0), taps = kernel.select(2, 0);
  EXPECT_TRUE(equal(F::conv1d(line, taps, F::Conv1dFuncOptions().padding(kSame).groups(2)),
                    conv1d(line, taps, Tensor(), 1, kSame, 1, 2)));
  EXPECT_TRUE(equal(F::conv1d(line, taps, F::Conv1dFuncOptions().padding(kValid).groups(2)),
                    conv1d(line, taps, Tensor(), 1, 0, 1, 2)));
  EXPECT_TRUE(
      equal(F::conv1d(line, taps, F::Conv1dFuncOptions().padding(kSame).padding(1).groups(2)),
            conv1d(line, taps, Tensor(), 1, 1, 1, 2)));
}

}  // namespace
}  // namespace leangrad
