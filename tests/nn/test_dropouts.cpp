// The channel dropouts (dropout1d/2d/3d) and alpha dropouts (alpha_dropout,
// feature_alpha_dropout) of autograd/dropout_functions.h and their modules (nn/dropout.h):
// every element is one of the definition's two values (kept and scaled, or dropped), whole
// channels share their fate, the fraction dropped and alpha dropout's mean and variance are
// within 5 standard deviations of the definition's, the gradient is the kept mask's, and the
// identity in eval mode. The masks are random, so no reference values: each property follows from
// the definition. Bad arguments: the Dropouts table of tests/misuse/test_misuse_nn_layers.cpp.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <leangrad/autograd/dropout_functions.h>
#include <leangrad/autograd/functions.h>
#include <leangrad/core/generator.h>
#include <leangrad/kernels/creation.h>
#include <leangrad/nn/dropout.h>
#include "testing/gradcheck.h"
#include "testing/tensor_testing.h"

namespace leangrad {
namespace {

using DropoutFn = std::function<Tensor(const Tensor&, double, bool)>;

constexpr double kAlpha = 1.7580993408473766;  // SELU's scale * alpha

struct ChannelCase {
  const char* name;
  DropoutFn fn;
  Shape shape;
  std::int64_t channels;  // the number of (n, c) slices: N C, or C unbatched
};

std::vector<ChannelCase> channel_cases() {
  return {{"dropout1d", dropout1d, {4, 6, 5}, 24},
          {"dropout1d_unbatched", dropout1d, {6, 5}, 6},
          {"dropout2d", dropout2d, {3, 5, 4, 3}, 15},
          {"dropout2d_unbatched", dropout2d, {5, 4, 3}, 5},
          {"dropout3d", dropout3d, {2, 4, 2, 3, 2}, 8},
          {"dropout3d_unbatched", dropout3d, {4, 2, 3, 2}, 4}};
}

// Each channel is all zeros or all x / (1 - p) (float64: x times the rounded 1 / (1 - p), as the
// definition writes it), and the gradient of sum(y g) is g where the channel was kept, times
// 1 / (1 - p), and 0 elsewhere.
TEST(ChannelDropout, WholeChannelsKeptAndScaledOrZeroed) {
  const double p = 0.4, scale = 1.0 / (1.0 - p);
  std::uint64_t seed = 600;
  for (const ChannelCase& k : channel_cases()) {
    SCOPED_TRACE(k.name);
    const Tensor x = test::uniform_input(k.shape, 0.5, 1.5, seed++);  // never 0
    manual_seed(seed++);
    const Tensor y = k.fn(x, p, true);
    const std::vector<double> xv = test::to_vector(x), yv = test::to_vector(y);
    const std::size_t per_channel = xv.size() / static_cast<std::size_t>(k.channels);
    std::vector<double> expected_y, expected_grad;
    const Tensor g = test::uniform_input(k.shape, -1, 1, seed++).detach();
    const std::vector<double> gv = test::to_vector(g);
    int kept = 0;
    for (std::size_t channel = 0; channel < static_cast<std::size_t>(k.channels); ++channel) {
      const bool keeps = yv[channel * per_channel] != 0.0;
      kept += keeps ? 1 : 0;
      for (std::size_t e = channel * per_channel; e < (channel + 1) * per_channel; ++e) {
        expected_y.push_back(keeps ? xv[e] * scale : 0.0);
        expected_grad.push_back(keeps ? gv[e] * scale : 0.0);
      }
    }
    EXPECT_TRUE(test::all_close(y, expected_y, 0, 0));
    sum(mul(y, g)).backward();
    EXPECT_TRUE(test::all_close(x.grad(), expected_grad, 0, 0));
    EXPECT_GT(kept, 0);
    EXPECT_LT(kept, k.channels);
  }
}

// The fraction of channels dropped is within 5 standard deviations sqrt(p (1 - p) / n) of p.
TEST(ChannelDropout, DropsAboutAFractionPOfTheChannels) {
  manual_seed(610);
  const double p = 0.3;
  const Tensor y = dropout2d(ones({64, 256, 2, 2}), p, true);
  const std::vector<double> yv = test::to_vector(y);
  const double n = 64 * 256;
  double dropped = 0;
  for (std::size_t channel = 0; channel < 64 * 256; ++channel)
    dropped += yv[channel * 4] == 0.0 ? 1 : 0;
  EXPECT_NEAR(dropped / n, p, 5 * std::sqrt(p * (1 - p) / n));
}

TEST(Dropouts, IdentityInEvalAndAtPZeroAndZerosAtPOne) {
  const Tensor x = test::uniform_input({2, 3, 4, 5}, -1, 1, 620);
  for (const DropoutFn& fn :
       std::vector<DropoutFn>{dropout2d, alpha_dropout, feature_alpha_dropout}) {
    EXPECT_TRUE(test::all_close(fn(x, 0.5, false), test::to_vector(x), 0, 0));
    EXPECT_TRUE(test::all_close(fn(x, 0.0, true), test::to_vector(x), 0, 0));
    EXPECT_TRUE(test::all_close(fn(x, 1.0, true), std::vector<double>(120, 0.0), 0, 0));
  }
}

// Alpha dropout: a kept element is a x + alpha a p, a dropped one alpha a (p - 1), a =
// 1 / sqrt((alpha^2 p + 1) (1 - p)); float64, a few roundings apart from the code's form
// (x (keep a) + ((keep - 1) alpha a + alpha a p)): within 8 u of the largest term. With
// feature_alpha_dropout, whole (n, c) channels share their fate.
TEST(AlphaDropout, EachElementIsKeptOrDroppedByTheDefinition) {
  const double p = 0.25;
  const double a = 1.0 / std::sqrt((kAlpha * kAlpha * p + 1.0) * (1.0 - p));
  const double kept_shift = kAlpha * a * p, dropped_value = kAlpha * a * (p - 1.0);
  const double tolerance = 8 * std::ldexp(1.0, -53) * (a * 2.0 + kAlpha * a);
  for (const bool feature : {false, true}) {
    SCOPED_TRACE(feature ? "feature_alpha_dropout" : "alpha_dropout");
    const Tensor x = test::uniform_input({3, 4, 5}, -2, 2, feature ? 630 : 631);
    manual_seed(632);
    const Tensor y = feature ? feature_alpha_dropout(x, p, true) : alpha_dropout(x, p, true);
    const std::vector<double> xv = test::to_vector(x), yv = test::to_vector(y);
    std::vector<double> expected;
    int kept = 0;
    for (std::size_t e = 0; e < xv.size(); ++e) {
      // The element's fate: kept when y is nearer a x + alpha a p than the dropped value (the
      // two differ by a (x + alpha) >= a (alpha - 2) > 0 here).
      const std::size_t decides = feature ? e / 5 * 5 : e;
      const bool keeps = std::fabs(yv[decides] - (a * xv[decides] + kept_shift)) <
                         std::fabs(yv[decides] - dropped_value);
      kept += keeps ? 1 : 0;
      expected.push_back(keeps ? a * xv[e] + kept_shift : dropped_value);
    }
    EXPECT_TRUE(test::all_close(y, expected, 0, tolerance));
    EXPECT_GT(kept, 0);
    EXPECT_LT(kept, static_cast<int>(xv.size()));
    // The gradient is a where kept, 0 where dropped.
    sum(y).backward();
    std::vector<double> grad;
    for (std::size_t e = 0; e < xv.size(); ++e)
      grad.push_back(expected[e] == dropped_value ? 0.0 : a);
    EXPECT_TRUE(test::all_close(x.grad(), grad, 0, 0));
  }
}

// Alpha dropout's purpose: standard normal input keeps mean 0 and variance 1. Over n = 2^20
// elements the sample mean's standard deviation is 1 / sqrt(n) ~ 0.001 and the sample variance's
// sqrt((m4 - 1) / n) with the output's fourth moment m4 below 10 (a normal scaled by a < 1.3 and
// a point mass), ~ 0.003: 5 of each.
TEST(AlphaDropout, KeepsZeroMeanAndUnitVariance) {
  manual_seed(640);
  const Tensor x = randn({1 << 20}, kFloat64);
  for (const double p : {0.1, 0.5}) {
    SCOPED_TRACE(::testing::Message() << "p = " << p);
    const std::vector<double> y = test::to_vector(alpha_dropout(x, p, true));
    double mean = 0;
    for (const double v : y)
      mean += v;
    mean /= static_cast<double>(y.size());
    double variance = 0;
    for (const double v : y)
      variance += (v - mean) * (v - mean);
    variance /= static_cast<double>(y.size());
    EXPECT_NEAR(mean, 0.0, 5 * 0.001);
    EXPECT_NEAR(variance, 1.0, 5 * 0.003);
  }
}

// Finite differences with the mask fixed: the seed is set again before each evaluation.
TEST(DropoutsGrad, FiniteDifferencesUnderAFixedMask) {
  const Tensor x = test::uniform_input({2, 3, 4}, -1, 1, 650);
  for (const DropoutFn& fn :
       std::vector<DropoutFn>{dropout1d, alpha_dropout, feature_alpha_dropout}) {
    EXPECT_TRUE(test::gradcheck(
        [&](const std::vector<Tensor>& in) {
          manual_seed(651);
          return fn(in[0], 0.4, true).pow(2.0);
        },
        {x}));
  }
}

TEST(DropoutModules, TrainEvalAndPrinting) {
  manual_seed(660);
  nn::Dropout2d channel(0.3);
  nn::AlphaDropout alpha(nn::AlphaDropoutOptions().p(0.2));
  nn::FeatureAlphaDropout feature(0.1);
  nn::Dropout1d one(0.5);
  nn::Dropout3d three(nn::Dropout3dOptions(0.6));
  EXPECT_EQ(channel->extra_repr(), "p=0.3");
  EXPECT_EQ(three->extra_repr(), "p=0.6");
  const Tensor x = test::uniform_input({2, 3, 4, 5}, 0.5, 1.5, 661).detach();
  manual_seed(662);
  const Tensor y = channel(x);
  manual_seed(662);
  EXPECT_TRUE(test::all_close(y, test::to_vector(dropout2d(x, 0.3, true)), 0, 0));
  manual_seed(663);
  const Tensor z = alpha(x);
  manual_seed(663);
  EXPECT_TRUE(test::all_close(z, test::to_vector(alpha_dropout(x, 0.2, true)), 0, 0));
  for (nn::Module* m : std::vector<nn::Module*>{channel.get(), alpha.get(), feature.get()}) {
    m->eval();
    EXPECT_TRUE(test::all_close(m->forward(x), test::to_vector(x), 0, 0)) << m->name();
  }
  EXPECT_EQ(one->forward(ones({2, 3})).shape(), (Shape{2, 3}));  // (C, L) unbatched
}

}  // namespace
}  // namespace leangrad
