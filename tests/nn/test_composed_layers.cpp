// lp_pool1d/2d, local_response_norm, bilinear, channel_shuffle (autograd/composed_layers.h) and
// their modules, with nn::Softmax2d: against PyTorch 1.13 (tests/data/composed_layers.json,
// written by make_composed_layers.py: values and gradients, float64), against their definitions
// as loops (bilinear's double sum, the channel permutation, the LP norm of each window), and by
// finite differences. Bad arguments: the ComposedLayers table of
// tests/misuse/test_misuse_nn_layers.cpp.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <leangrad/autograd/activations.h>
#include <leangrad/autograd/composed_layers.h>
#include <leangrad/autograd/functions.h>
#include <leangrad/core/generator.h>
#include <leangrad/nn/composed_layers.h>
#include "testing/gradcheck.h"
#include "testing/reference_data.h"
#include "testing/tensor_testing.h"

namespace leangrad {
namespace {

// float64 on both sides, sums of at most ~30 terms of magnitude below ~30 in another order, then
// a power: 2^-38 covers the values and gradients.
constexpr double kAtol = 0x1p-38;

Tensor run_case(const test::ReferenceCase& c, std::vector<Tensor>& leaves,
                std::vector<std::string>& names) {
  const auto& p = c.params;
  const std::string op = p.at("op").get<std::string>();
  const auto leaf = [&](const std::string& name) {
    Tensor t = c.at(name).clone();
    if (c.tensors.count("d" + name)) t.requires_grad_();
    leaves.push_back(t);
    names.push_back(name);
    return t;
  };
  if (op == "lp_pool1d") {
    return lp_pool1d(leaf("x"), p.at("norm_type").get<double>(),
                     p.at("kernel").at(0).get<std::int64_t>(),
                     p.at("stride").at(0).get<std::int64_t>(), p.at("ceil_mode").get<bool>());
  }
  if (op == "lp_pool2d") {
    const auto k = p.at("kernel").get<std::vector<std::int64_t>>();
    const auto s = p.at("stride").get<std::vector<std::int64_t>>();
    return lp_pool2d(leaf("x"), p.at("norm_type").get<double>(), {k[0], k[1]}, {s[0], s[1]},
                     p.at("ceil_mode").get<bool>());
  }
  if (op == "local_response_norm") {
    return local_response_norm(leaf("x"), p.at("size").get<std::int64_t>(),
                               p.at("alpha").get<double>(), p.at("beta").get<double>(),
                               p.at("k").get<double>());
  }
  if (op == "bilinear") {
    const Tensor a = leaf("a"), b = leaf("b"), w = leaf("w");
    const Tensor bias = c.tensors.count("bias") ? leaf("bias") : Tensor();
    return bilinear(a, b, w, bias);
  }
  if (op == "channel_shuffle")
    return channel_shuffle(leaf("x"), p.at("groups").get<std::int64_t>());
  nn::Softmax2d softmax2d;
  return softmax2d(leaf("x"));
}

TEST(ComposedLayers, MatchPyTorch) {
  int checked = 0;
  for (const test::ReferenceCase& c : test::load_reference("composed_layers.json")) {
    SCOPED_TRACE(c.name);
    std::vector<Tensor> leaves;
    std::vector<std::string> names;
    const Tensor y = run_case(c, leaves, names);
    ASSERT_EQ(y.shape(), c.at("y").shape());
    EXPECT_TRUE(test::all_close(y, test::to_vector(c.at("y")), 0, kAtol));
    if (c.tensors.count("g")) {
      y.backward(c.at("g"));
      for (std::size_t i = 0; i < leaves.size(); ++i)
        EXPECT_TRUE(
            test::all_close(leaves[i].grad(), test::to_vector(c.at("d" + names[i])), 0, kAtol))
            << "gradient of " << names[i];
    }
    ++checked;
  }
  EXPECT_EQ(checked, 12);
}

// y[b, o] = sum_i sum_j x1[b, i] w[o, i, j] x2[b, j] + bias[o]; the LP pool of a window is
// (sum x^p)^(1/p); channel_shuffle moves channel j C / g + i to i g + j. Loops in float64.
TEST(ComposedLayers, AreTheirDefinitions) {
  const Tensor a = test::uniform_input({3, 4}, -1, 1, 900).detach();
  const Tensor b = test::uniform_input({3, 2}, -1, 1, 901).detach();
  const Tensor w = test::uniform_input({5, 4, 2}, -1, 1, 902).detach();
  const Tensor bias = test::uniform_input({5}, -1, 1, 903).detach();
  const std::vector<double> av = test::to_vector(a), bv = test::to_vector(b),
                            wv = test::to_vector(w), biasv = test::to_vector(bias);
  std::vector<double> expected;
  for (int r = 0; r < 3; ++r)
    for (int o = 0; o < 5; ++o) {
      double y = biasv[o];
      for (int i = 0; i < 4; ++i)
        for (int j = 0; j < 2; ++j)
          y += av[r * 4 + i] * wv[(o * 4 + i) * 2 + j] * bv[r * 2 + j];
      expected.push_back(y);
    }
  EXPECT_TRUE(test::all_close(bilinear(a, b, w, bias), expected, 0, 1e-14));

  const Tensor x = test::uniform_input({2, 6, 5}, 0.1, 1, 904).detach();
  const std::vector<double> xv = test::to_vector(x);
  std::vector<double> lp;
  for (int s = 0; s < 12; ++s)                         // (n, c) rows of 5
    for (int start = 0; start + 2 <= 5; start += 2) {  // kernel 2, stride 2: windows 0-1, 2-3
      double total = 0;
      for (int e = start; e < start + 2; ++e)
        total += std::pow(xv[s * 5 + e], 3.0);
      lp.push_back(std::cbrt(total));
    }
  EXPECT_TRUE(test::all_close(lp_pool1d(x, 3.0, 2), lp, 0, 1e-14));

  std::vector<double> shuffled;
  for (int n = 0; n < 2; ++n)
    for (int out = 0; out < 6; ++out) {
      const int i = out / 3, j = out % 3;  // output channel i g + j, g = 3, C / g = 2
      for (int e = 0; e < 5; ++e)
        shuffled.push_back(xv[(n * 6 + j * 2 + i) * 5 + e]);
    }
  EXPECT_TRUE(test::all_close(channel_shuffle(x, 3), shuffled, 0, 0));
}

TEST(ComposedLayersGrad, FiniteDifferences) {
  const Tensor x = test::uniform_input({2, 4, 3, 3}, 0.2, 1, 910);
  EXPECT_TRUE(test::gradcheck(
      [](const std::vector<Tensor>& in) {
        return lp_pool2d(in[0], 2.0, {2, 2}, {1, 1});
      },
      {x}));
  EXPECT_TRUE(test::gradcheck(
      [](const std::vector<Tensor>& in) { return local_response_norm(in[0], 3, 0.5, 0.7, 2.0); },
      {x}));
  EXPECT_TRUE(test::gradcheck(
      [](const std::vector<Tensor>& in) { return channel_shuffle(in[0], 2).pow(2.0); }, {x}));
  const Tensor a = test::uniform_input({2, 3}, -1, 1, 911);
  const Tensor b = test::uniform_input({2, 2}, -1, 1, 912);
  const Tensor w = test::uniform_input({2, 3, 2}, -1, 1, 913);
  EXPECT_TRUE(test::gradcheck(
      [](const std::vector<Tensor>& in) { return bilinear(in[0], in[1], in[2]); }, {a, b, w}));
  EXPECT_TRUE(test::gradgradcheck(
      [](const std::vector<Tensor>& in) { return bilinear(in[0], in[1], in[2]); }, {a, b, w}));
}

TEST(ComposedLayers, ModulesAreTheFunctions) {
  manual_seed(11);
  nn::Bilinear bl(nn::BilinearOptions(4, 3, 2));
  EXPECT_EQ(bl->weight.shape(), (Shape{2, 4, 3}));
  EXPECT_LE(test::max_abs(bl->weight), 0.5);  // U(-1/sqrt(4), 1/sqrt(4))
  EXPECT_GT(test::max_abs(bl->weight), 0.25);
  EXPECT_EQ(bl->extra_repr(), "in1_features=4, in2_features=3, out_features=2, bias=true");
  const Tensor a = test::uniform_input({5, 4}, -1, 1, 920).detach().to(kFloat32);
  const Tensor b = test::uniform_input({5, 3}, -1, 1, 921).detach().to(kFloat32);
  EXPECT_TRUE(
      test::all_close(bl(a, b), test::to_vector(bilinear(a, b, bl->weight, bl->bias)), 0, 0));
  nn::LPPool2d pool(nn::LPPool2dOptions(2.0, 2).stride(1));
  EXPECT_EQ(pool->extra_repr(), "norm_type=2, kernel_size=(2, 2), stride=(1, 1), ceil_mode=false");
  nn::LPPool1d pool1(nn::LPPool1dOptions(3.0, 3));
  EXPECT_EQ(pool1->extra_repr(), "norm_type=3, kernel_size=3, stride=3, ceil_mode=false");
  nn::LocalResponseNorm lrn(nn::LocalResponseNormOptions(5).alpha(0.001));
  EXPECT_EQ(lrn->extra_repr(), "5, alpha=0.001, beta=0.75, k=1");
  nn::ChannelShuffle shuffle(3);
  EXPECT_EQ(shuffle->extra_repr(), "groups=3");
  const Tensor x = test::uniform_input({2, 6, 4, 4}, 0.1, 1, 922).detach().to(kFloat32);
  EXPECT_TRUE(test::all_close(pool(x), test::to_vector(lp_pool2d(x, 2.0, {2, 2}, {1, 1})), 0, 0));
  EXPECT_TRUE(test::all_close(lrn(x), test::to_vector(local_response_norm(x, 5, 0.001)), 0, 0));
  EXPECT_TRUE(test::all_close(shuffle(x), test::to_vector(channel_shuffle(x, 3)), 0, 0));
  nn::Softmax2d softmax2d;
  EXPECT_TRUE(test::all_close(softmax2d(x), test::to_vector(softmax(x, 1)), 0, 0));
}

// An input with no elements (no batch, no channels, no positions) normalizes to an empty result
// of its shape, as PyTorch's: an empty batch had divided by zero (SIGFPE), the others failed in the
// average pooling inside.
TEST(LocalResponseNorm, EmptyInputsGiveEmptyResults) {
  for (const Shape& shape : {Shape{0, 3, 2}, Shape{2, 0, 3}, Shape{2, 3, 0}, Shape{0, 3, 2, 2}}) {
    SCOPED_TRACE(shape_str(shape));
    const Tensor x = zeros(shape, kFloat64).requires_grad_();
    const Tensor y = local_response_norm(x, 3);
    EXPECT_EQ(y.shape(), shape);
    y.sum().backward();
    EXPECT_EQ(x.grad().shape(), shape);
  }
  nn::LocalResponseNorm lrn(nn::LocalResponseNormOptions(2));
  EXPECT_EQ(lrn(zeros({0, 3, 4})).shape(), Shape({0, 3, 4}));
}

// rrelu: in eval, leaky_relu with the mean slope; in training, each negative element scaled by
// its own slope in [lower, upper], positive ones kept, the gradient that factor, and the slopes'
// mean within 5 standard deviations ((upper - lower) / sqrt(12 n)) of (lower + upper) / 2.
TEST(RReLU, SlopesInTheirRangeAndTheirMeanInEval) {
  const double lower = 0.1, upper = 0.4;
  const Tensor x = test::uniform_input({64, 64}, -1, 1, 930);
  EXPECT_TRUE(
      test::all_close(rrelu(x, lower, upper, false), test::to_vector(leaky_relu(x, 0.25)), 0, 0));
  manual_seed(931);
  const Tensor y = rrelu(x, lower, upper, true);
  sum(y).backward();
  const std::vector<double> xv = test::to_vector(x), yv = test::to_vector(y),
                            gv = test::to_vector(x.grad());
  double slope_sum = 0;
  int negatives = 0;
  for (std::size_t e = 0; e < xv.size(); ++e) {
    if (xv[e] > 0) {
      ASSERT_EQ(yv[e], xv[e]);
      ASSERT_EQ(gv[e], 1.0);
    } else {
      ASSERT_GE(gv[e], lower);
      ASSERT_LE(gv[e], upper);
      ASSERT_EQ(yv[e], xv[e] * gv[e]);
      slope_sum += gv[e];
      ++negatives;
    }
  }
  const double n = negatives;
  EXPECT_NEAR(slope_sum / n, (lower + upper) / 2, 5 * (upper - lower) / std::sqrt(12 * n));
  nn::RReLU module(nn::RReLUOptions().lower(lower).upper(upper));
  EXPECT_EQ(module->extra_repr(), "lower=0.1, upper=0.4");
  module->eval();
  EXPECT_TRUE(test::all_close(module(x), test::to_vector(leaky_relu(x, 0.25)), 0, 0));
}

// max_unpool*d against PyTorch (values and gradients exact: copies and gathers), and a round
// trip through max_pool2d_with_indices: every maximum back at its place, zeros elsewhere.
TEST(MaxUnpool, MatchesPyTorchAndUndoesThePool) {
  int checked = 0;
  for (const test::ReferenceCase& c : test::load_reference("max_unpool.json")) {
    SCOPED_TRACE(c.name);
    const auto& p = c.params;
    const Tensor x = c.at("x").clone().requires_grad_();
    const auto k = p.at("kernel").get<std::vector<std::int64_t>>();
    const auto s = p.at("stride").get<std::vector<std::int64_t>>();
    const auto pad = p.at("padding").get<std::vector<std::int64_t>>();
    const bool sized = !p.at("output_size").is_null();
    const auto out =
        sized ? p.at("output_size").get<std::vector<std::int64_t>>() : std::vector<std::int64_t>{};
    Tensor y;
    switch (p.at("dims").get<int>()) {
      case 1:
        y = max_unpool1d(x, c.at("indices"), k[0], s[0], pad[0],
                         sized ? std::optional<std::int64_t>(out[0]) : std::nullopt);
        break;
      case 2:
        y = max_unpool2d(x, c.at("indices"), {k[0], k[1]}, {s[0], s[1]}, {pad[0], pad[1]},
                         sized ? std::optional<Size2>(Size2{out[0], out[1]}) : std::nullopt);
        break;
      default:
        y = max_unpool3d(x, c.at("indices"), {k[0], k[1], k[2]}, {s[0], s[1], s[2]},
                         {pad[0], pad[1], pad[2]});
    }
    ASSERT_EQ(y.shape(), c.at("y").shape());
    EXPECT_TRUE(test::all_close(y, test::to_vector(c.at("y")), 0, 0));
    y.backward(c.at("g"));
    EXPECT_TRUE(test::all_close(x.grad(), test::to_vector(c.at("dx")), 0, 0));
    ++checked;
  }
  EXPECT_EQ(checked, 5);

  const Tensor image = test::uniform_input({2, 3, 6, 4}, -1, 1, 940).detach();
  auto [pooled, indices] = max_pool2d_with_indices(image, {2, 2});
  const std::vector<double> iv = test::to_vector(image),
                            back = test::to_vector(max_unpool2d(pooled, indices, {2, 2}));
  for (std::size_t plane = 0; plane < 6; ++plane)
    for (std::size_t r = 0; r < 6; r += 2)
      for (std::size_t q = 0; q < 4; q += 2) {
        double best = -2;
        std::size_t at = 0;
        for (std::size_t a = r; a < r + 2; ++a)
          for (std::size_t b = q; b < q + 2; ++b)
            if (iv[plane * 24 + a * 4 + b] > best) {
              best = iv[plane * 24 + a * 4 + b];
              at = a * 4 + b;
            }
        for (std::size_t a = r; a < r + 2; ++a)
          for (std::size_t b = q; b < q + 2; ++b)
            EXPECT_EQ(back[plane * 24 + a * 4 + b], a * 4 + b == at ? best : 0.0);
      }
  nn::MaxUnpool2d unpool(nn::MaxUnpool2dOptions(2));
  EXPECT_EQ(unpool->extra_repr(), "kernel_size=(2, 2), stride=(2, 2), padding=(0, 0)");
  EXPECT_TRUE(test::all_close(unpool(pooled, indices), back, 0, 0));
  nn::MaxUnpool1d unpool1(nn::MaxUnpool1dOptions(3).stride(2));
  EXPECT_EQ(unpool1->extra_repr(), "kernel_size=3, stride=2, padding=0");
}

TEST(MaxUnpoolGrad, FiniteDifferences) {
  const Tensor x = test::uniform_input({1, 2, 2, 2}, -1, 1, 950);
  const Tensor indices = tensor(std::vector<std::int64_t>{0, 3, 9, 14, 1, 6, 8, 15}, {1, 2, 2, 2});
  EXPECT_TRUE(test::gradcheck(
      [&](const std::vector<Tensor>& in) {
        return max_unpool2d(in[0], indices, {2, 2}).pow(2.0);
      },
      {x}));
}

}  // namespace
}  // namespace leangrad
