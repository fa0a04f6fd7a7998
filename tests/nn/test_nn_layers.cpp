// Tests of the nn layers LayerNorm, BatchNorm1d/2d/3d, Embedding, ConvTranspose2d and Upsample /
// interpolate (autograd/nn_functions.cpp, nn/layer_norm.h, nn/batch_norm.h, nn/embedding.h,
// nn/conv.h, nn/upsample.h): float64 gradchecks (batch 1 and non-contiguous inputs included),
// PyTorch reference cases (tests/data/nn_layers.json from make_nn_layers.py), the modules'
// parameters, buffers, state dicts, options and printing. CUDA is compared with the CPU in
// tests/kernels/op_table_nn_layers.cpp; bad input in tests/misuse/test_misuse_nn_layers.cpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <leangrad/autograd/functions.h>
#include <leangrad/autograd/grad_mode.h>
#include <leangrad/autograd/nn_functions.h>
#include <leangrad/core/generator.h>
#include <leangrad/kernels/creation.h>
#include <leangrad/nn/batch_norm.h>
#include <leangrad/nn/conv.h>
#include <leangrad/nn/embedding.h>
#include <leangrad/nn/functional.h>
#include <leangrad/nn/layer_norm.h>
#include <leangrad/nn/upsample.h>
#include "testing/gradcheck.h"
#include "testing/reference_data.h"
#include "testing/tensor_testing.h"

namespace leangrad {
namespace {

using test::gradcheck;
using test::uniform_input;
using Inputs = std::vector<Tensor>;

// A leaf view with the last two dims transposed: non-contiguous, and still a gradcheck leaf.
Tensor transposed_leaf(const Shape& shape, double low, double high, std::uint64_t seed) {
  Tensor x = uniform_input(shape, low, high, seed).detach().transpose(-1, -2);
  x.requires_grad_();
  return x;
}

template <typename M>
std::string printed(const M& m) {
  std::ostringstream out;
  out << m;
  return out.str();
}

// PyTorch's default float32 tolerances (torch.testing.assert_close): the references are float32
// results of the same formulas, a few roundings apart.
constexpr double kRtolF32 = 1.3e-6;
constexpr double kAtolF32 = 1e-5;

// ---- LayerNorm ---------------------------------------------------------------------------------

TEST(LayerNormGrad, AffineNoAffineAndTwoNormalizedDims) {
  const Tensor x = uniform_input({3, 5}, -2, 3, 1);
  const Tensor w = uniform_input({5}, 0.5, 1.5, 2);
  const Tensor b = uniform_input({5}, -1, 1, 3);
  EXPECT_TRUE(
      gradcheck([](const Inputs& in) { return layer_norm(in[0], {5}, in[1], in[2]); }, {x, w, b}));
  EXPECT_TRUE(gradcheck([](const Inputs& in) { return layer_norm(in[0], {5}); }, {x}));
  const Tensor x3 = uniform_input({2, 3, 4}, -2, 3, 4);
  const Tensor w2 = uniform_input({3, 4}, 0.5, 1.5, 5);
  const Tensor b2 = uniform_input({3, 4}, -1, 1, 6);
  EXPECT_TRUE(gradcheck(
      [](const Inputs& in) {
        return layer_norm(in[0], {3, 4}, in[1], in[2], 1e-3);
      },
      {x3, w2, b2}));
}

TEST(LayerNormGrad, OneRowAndNonContiguous) {
  const Tensor x1 = uniform_input({1, 6}, -2, 3, 7);
  const Tensor w = uniform_input({6}, 0.5, 1.5, 8);
  EXPECT_TRUE(gradcheck([](const Inputs& in) { return layer_norm(in[0], {6}, in[1]); }, {x1, w}));
  const Tensor xt = transposed_leaf({2, 6, 4}, -2, 3, 9);   // (2, 4, 6) as a transposed view
  const Tensor wt = transposed_leaf({3, 2}, 0.5, 1.5, 10);  // (2, 3) as a transposed view
  const Tensor bt = uniform_input({6}, -1, 1, 11);
  EXPECT_TRUE(
      gradcheck([](const Inputs& in) { return layer_norm(in[0], {6}, {}, in[1]); }, {xt, bt}));
  const Tensor x23 = transposed_leaf({3, 3, 2}, -2, 3, 12);  // (3, 2, 3)
  EXPECT_TRUE(gradcheck(
      [](const Inputs& in) {
        return layer_norm(in[0], {2, 3}, in[1]);
      },
      {x23, wt}));
}

// An independent float64 loop: each row of M elements normalized with its biased variance.
TEST(LayerNorm, MatchesReferenceLoopInFloat64) {
  const Tensor x = uniform_input({4, 9}, -3, 5, 13).detach();
  const std::vector<double> v = test::to_vector(x);
  std::vector<double> expected(v.size());
  for (int r = 0; r < 4; ++r) {
    double mean = 0, var = 0;
    for (int i = 0; i < 9; ++i)
      mean += v[r * 9 + i] / 9;
    for (int i = 0; i < 9; ++i)
      var += (v[r * 9 + i] - mean) * (v[r * 9 + i] - mean) / 9;
    for (int i = 0; i < 9; ++i)
      expected[r * 9 + i] = (v[r * 9 + i] - mean) / std::sqrt(var + 1e-5);
  }
  // Welford in float64 against a two-pass sum: a few ulps of values of magnitude ~2.
  EXPECT_TRUE(test::all_close(layer_norm(x, {9}), expected, 1e-13, 1e-13));
}

// Inputs with no element, as PyTorch's layer_norm takes them: no rows ((0, 5) over {5}) and no
// features ((3, 0) over {0}) give empty outputs of the input's shape and dtype, and backward
// gives zero weight and bias gradients of normalized_shape (nothing flowed into them).
TEST(LayerNorm, EmptyInputsGiveEmptyOutputsAndZeroParameterGradients) {
  for (const auto& [shape, features] : {std::pair<Shape, std::int64_t>{{0, 5}, 5}, {{3, 0}, 0}}) {
    SCOPED_TRACE(::testing::PrintToString(shape));
    for (DType dtype : {kFloat32, kBFloat16}) {
      const Tensor x = zeros(shape, TensorOptions(dtype).requires_grad(true));
      const Tensor w = ones({features}, TensorOptions(dtype).requires_grad(true));
      const Tensor b = ones({features}, TensorOptions(dtype).requires_grad(true));
      const Tensor y = layer_norm(x, {features}, w, b);
      EXPECT_EQ(y.shape(), shape);
      EXPECT_EQ(y.dtype(), dtype);
      y.sum().backward();
      EXPECT_EQ(x.grad().shape(), shape);
      EXPECT_EQ(w.grad().shape(), (Shape{features}));
      EXPECT_EQ(test::to_vector(w.grad()), std::vector<double>(features, 0.0));
      EXPECT_EQ(test::to_vector(b.grad()), std::vector<double>(features, 0.0));
    }
  }
}

TEST(LayerNormModule, ParametersOptionsAndPrinting) {
  const nn::LayerNormOptions options = nn::LayerNormOptions({4, 8}).eps(1e-3);
  EXPECT_EQ(options.normalized_shape(), (Shape{4, 8}));
  EXPECT_EQ(options.eps(), 1e-3);
  EXPECT_TRUE(options.elementwise_affine());
  nn::LayerNorm ln(options);
  const auto params = ln->named_parameters();
  ASSERT_EQ(params.size(), 2u);
  EXPECT_EQ(params[0].first, "weight");
  EXPECT_EQ(params[1].first, "bias");
  EXPECT_EQ(ln->weight.shape(), (Shape{4, 8}));
  EXPECT_TRUE(test::all_close(ln->weight, std::vector<double>(32, 1.0), 0, 0));
  EXPECT_TRUE(test::all_close(ln->bias, std::vector<double>(32, 0.0), 0, 0));
  EXPECT_EQ(printed(ln), "LayerNorm([4, 8], eps=0.001, elementwise_affine=true)");
  nn::LayerNorm plain(nn::LayerNormOptions({8}).elementwise_affine(false));
  EXPECT_TRUE(plain->parameters().empty());
  EXPECT_THROW(nn::LayerNorm(nn::LayerNormOptions({})), Error);
  EXPECT_THROW(nn::LayerNorm(nn::LayerNormOptions({0})), Error);
}

TEST(LayerNormModule, ForwardEqualsFunctionAndGradientsReachParameters) {
  nn::LayerNorm ln(nn::LayerNormOptions({6}));
  {
    NoGradGuard no_grad;
    ln->weight.copy_(test::make_tensor({0.5, 1, 1.5, 2, 2.5, 3}, {6}));
  }
  const Tensor x = uniform_input({2, 3, 6}, -2, 2, 14).detach().to(kFloat32);
  const Tensor expected = nn::functional::layer_norm(x, {6}, ln->weight, ln->bias);
  EXPECT_TRUE(test::all_close(ln(x), test::to_vector(expected), 0, 0));
  ln(x).sum().backward();
  // dbias = sum of the upstream gradient (ones) over the 6 rows.
  EXPECT_TRUE(test::all_close(ln->bias.grad(), std::vector<double>(6, 6.0), 0, 0));
  EXPECT_TRUE(ln->weight.grad().defined());
}

// ---- BatchNorm ---------------------------------------------------------------------------------

TEST(BatchNormGrad, TrainingUsesBatchStatistics) {
  const Tensor x = uniform_input({3, 2, 4, 3}, -2, 3, 21);
  const Tensor w = uniform_input({2}, 0.5, 1.5, 22);
  const Tensor b = uniform_input({2}, -1, 1, 23);
  EXPECT_TRUE(gradcheck(
      [](const Inputs& in) { return batch_norm(in[0], {}, {}, in[1], in[2], true); }, {x, w, b}));
  // (N, C) input, no affine; a transposed (non-contiguous) input.
  const Tensor x2 = uniform_input({5, 3}, -2, 3, 24);
  EXPECT_TRUE(
      gradcheck([](const Inputs& in) { return batch_norm(in[0], {}, {}, {}, {}, true); }, {x2}));
  const Tensor xt = transposed_leaf({2, 3, 4, 5}, -2, 3, 25);  // (2, 3, 5, 4)
  const Tensor w3 = uniform_input({3}, 0.5, 1.5, 26);
  EXPECT_TRUE(gradcheck([](const Inputs& in) { return batch_norm(in[0], {}, {}, in[1], {}, true); },
                        {xt, w3}));
  // Batch 1: the statistics run over the spatial dims alone.
  const Tensor x1 = uniform_input({1, 2, 3, 3}, -2, 3, 27);
  EXPECT_TRUE(gradcheck(
      [](const Inputs& in) { return batch_norm(in[0], {}, {}, in[1], in[2], true); }, {x1, w, b}));
}

TEST(BatchNormGrad, EvaluationUsesRunningStatistics) {
  const Tensor x = uniform_input({2, 3, 2, 2}, -2, 3, 31);
  const Tensor w = uniform_input({3}, 0.5, 1.5, 32);
  const Tensor b = uniform_input({3}, -1, 1, 33);
  const Tensor rm = uniform_input({3}, -1, 1, 34).detach();
  const Tensor rv = uniform_input({3}, 0.5, 2, 35).detach();
  EXPECT_TRUE(gradcheck(
      [&](const Inputs& in) { return batch_norm(in[0], rm, rv, in[1], in[2], false); }, {x, w, b}));
}

// Running statistics against a float64 loop: the batch's mean and unbiased variance.
TEST(BatchNorm, RunningStatisticsFollowPyTorchsUpdate) {
  const Tensor x = uniform_input({4, 2, 3}, -2, 3, 41).detach();
  const std::vector<double> v = test::to_vector(x);
  Tensor rm = test::make_tensor({0.5, -0.5}, {2}, kFloat64);
  Tensor rv = test::make_tensor({1.5, 0.75}, {2}, kFloat64);
  std::vector<double> expected_mean(2), expected_var(2);
  for (int c = 0; c < 2; ++c) {
    double mean = 0, ss = 0;
    for (int n = 0; n < 4; ++n)
      for (int i = 0; i < 3; ++i)
        mean += v[(n * 2 + c) * 3 + i] / 12;
    for (int n = 0; n < 4; ++n)
      for (int i = 0; i < 3; ++i)
        ss += (v[(n * 2 + c) * 3 + i] - mean) * (v[(n * 2 + c) * 3 + i] - mean);
    expected_mean[c] = 0.75 * test::to_vector(rm)[c] + 0.25 * mean;
    expected_var[c] = 0.75 * test::to_vector(rv)[c] + 0.25 * ss / 11;
  }
  batch_norm(x, rm, rv, {}, {}, true, 0.25);
  EXPECT_TRUE(test::all_close(rm, expected_mean, 1e-14, 1e-14));
  // var comes back from rstd = 1 / sqrt(var + eps): a few ulps of var + eps ~ 2.
  EXPECT_TRUE(test::all_close(rv, expected_var, 1e-13, 1e-13));
}

// A NaN in the batch makes the batch variance NaN, and so the running variance, as PyTorch's
// (the variance taken back from rstd had clamped it to 0: running_var 0.9 after momentum 0.1).
TEST(BatchNorm, ANanBatchVarianceReachesTheRunningVariance) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const Tensor x = test::make_tensor({nan, 0, 1, 1, 2, 2, 3, 3}, {4, 2}, kFloat64);
  Tensor rm = zeros({2}, kFloat64), rv = ones({2}, kFloat64);
  batch_norm(x, rm, rv, {}, {}, true, 0.1);
  EXPECT_TRUE(std::isnan(test::to_vector(rm)[0]));
  EXPECT_TRUE(std::isnan(test::to_vector(rv)[0]));
  // Channel 0 is (NaN, 1, 2, 3), channel 1 (0, 1, 2, 3): mean 1.5, unbiased variance 5/3.
  EXPECT_NEAR(test::to_vector(rm)[1], 0.15, 1e-15);
  EXPECT_NEAR(test::to_vector(rv)[1], 0.9 + 0.1 * 5.0 / 3.0, 1e-13);
}

// Training on no values per channel (an empty batch, no channels) gives an empty result, zero
// gradients for weight and bias, and leaves the running statistics as they were (PyTorch 1.13's
// answers); one value per channel is still refused.
TEST(BatchNorm, TrainingOnAnEmptyBatchLeavesTheStatistics) {
  const Tensor w = ones({3}, kFloat64).requires_grad_(), b = zeros({3}, kFloat64).requires_grad_();
  Tensor rm = full({3}, 0.25, kFloat64), rv = full({3}, 2.0, kFloat64);
  const Tensor x = zeros({0, 3}, kFloat64).requires_grad_();
  const Tensor y = batch_norm(x, rm, rv, w, b, true, 0.1);
  EXPECT_EQ(y.shape(), Shape({0, 3}));
  y.sum().backward();
  EXPECT_EQ(x.grad().shape(), Shape({0, 3}));
  EXPECT_TRUE(w.grad().equal(zeros({3}, kFloat64)));
  EXPECT_TRUE(b.grad().equal(zeros({3}, kFloat64)));
  EXPECT_TRUE(rm.equal(full({3}, 0.25, kFloat64)));
  EXPECT_TRUE(rv.equal(full({3}, 2.0, kFloat64)));
  EXPECT_EQ(batch_norm(zeros({2, 0, 3}, kFloat64), zeros({0}, kFloat64), zeros({0}, kFloat64), {},
                       {}, true)
                .shape(),
            Shape({2, 0, 3}));
  EXPECT_EQ(batch_norm(zeros({0, 3, 4}, kFloat64), {}, {}, {}, {}, true).shape(), Shape({0, 3, 4}));
  nn::BatchNorm1d module(3);
  EXPECT_EQ(module(zeros({0, 3})).shape(), Shape({0, 3}));
  EXPECT_TRUE(module->running_mean.equal(zeros({3})));
  EXPECT_THROW(batch_norm(zeros({1, 3}, kFloat64), rm, rv, {}, {}, true), ShapeError);
}

// ---- BatchNorm2d module -----------------------------------------------------------------------

TEST(BatchNorm2dModule, ParametersBuffersAndStateDict) {
  nn::BatchNorm2d bn(nn::BatchNorm2dOptions(4).momentum(0.2).eps(1e-3));
  EXPECT_EQ(bn->options().momentum(), 0.2);
  const auto params = bn->named_parameters();
  ASSERT_EQ(params.size(), 2u);
  EXPECT_EQ(params[0].first, "weight");
  EXPECT_EQ(params[1].first, "bias");
  const auto buffers = bn->named_buffers();
  ASSERT_EQ(buffers.size(), 3u);
  EXPECT_EQ(buffers[0].first, "running_mean");
  EXPECT_EQ(buffers[1].first, "running_var");
  EXPECT_EQ(buffers[2].first, "num_batches_tracked");
  EXPECT_TRUE(test::all_close(bn->running_mean, std::vector<double>(4, 0.0), 0, 0));
  EXPECT_TRUE(test::all_close(bn->running_var, std::vector<double>(4, 1.0), 0, 0));
  EXPECT_EQ(bn->num_batches_tracked.dtype(), kInt64);
  EXPECT_EQ(bn->num_batches_tracked.dim(), 0);
  EXPECT_EQ(bn->state_dict().size(), 5u);
  EXPECT_EQ(printed(bn),
            "BatchNorm2d(4, eps=0.001, momentum=0.2, affine=true, track_running_stats=true)");

  // Training updates the buffers; a second module loads them through the state dict.
  bn(uniform_input({2, 4, 3, 3}, -1, 3, 51).detach().to(kFloat32));
  nn::BatchNorm2d loaded(4);
  loaded->load_state_dict(bn->state_dict());
  EXPECT_TRUE(test::all_close(loaded->running_var, test::to_vector(bn->running_var), 0, 0));
  EXPECT_EQ(loaded->num_batches_tracked.item<std::int64_t>(), 1);
  loaded->reset_running_stats();
  EXPECT_TRUE(test::all_close(loaded->running_mean, std::vector<double>(4, 0.0), 0, 0));
  EXPECT_EQ(loaded->num_batches_tracked.item<std::int64_t>(), 0);
}

TEST(BatchNorm2dModule, NoAffineNoTrackingUsesBatchStatisticsInBothModes) {
  nn::BatchNorm2d bn(nn::BatchNorm2dOptions(2).affine(false).track_running_stats(false));
  EXPECT_TRUE(bn->parameters().empty());
  EXPECT_TRUE(bn->buffers().empty());
  const Tensor x = uniform_input({2, 2, 3, 3}, -1, 3, 52).detach().to(kFloat32);
  const Tensor train_y = bn(x);
  bn->eval();
  EXPECT_TRUE(test::all_close(bn(x), test::to_vector(train_y), 0, 0));
  EXPECT_TRUE(test::all_close(train_y, test::to_vector(batch_norm(x, {}, {}, {}, {}, true)), 0, 0));
  EXPECT_THROW(bn(ones({2, 2, 3})), ShapeError);  // BatchNorm2d takes 4-D input
}

// PyTorch's layer_norm and batch_norm (training and evaluation) on the same inputs.
TEST(NnLayersReference, NormalizationsMatchPyTorch) {
  int checked = 0;
  for (const test::ReferenceCase& rc : test::load_reference("nn_layers.json")) {
    const std::string& n = rc.name;
    if (n.rfind("layer_norm", 0) != 0 && n.rfind("batch_norm_", 0) != 0) continue;
    SCOPED_TRACE(n);
    std::map<std::string, Tensor> in;
    for (const char* key : {"x", "w", "b"}) {
      if (rc.tensors.count(key)) in[key] = rc.at(key).clone().requires_grad_();
    }
    // An absent parameter is an undefined Tensor() (without adding it to `in`).
    const auto param = [&](const char* key) { return in.count(key) ? in.at(key) : Tensor(); };
    const double eps = rc.params["eps"];
    Tensor y;
    Tensor rm, rv;
    if (n.rfind("layer_norm", 0) == 0) {
      const Shape shape = rc.params["normalized_shape"].get<Shape>();
      y = layer_norm(in["x"], shape, param("w"), param("b"), eps);
    } else {
      rm = rc.at("rm").clone();
      rv = rc.at("rv").clone();
      y = batch_norm(in["x"], rm, rv, param("w"), param("b"), rc.params["training"].get<bool>(),
                     rc.params["momentum"].get<double>(), eps);
      EXPECT_TRUE(test::all_close(rm, test::to_vector(rc.at("rm_out")), kRtolF32, kAtolF32));
      EXPECT_TRUE(test::all_close(rv, test::to_vector(rc.at("rv_out")), kRtolF32, kAtolF32));
    }
    EXPECT_TRUE(test::all_close(y, test::to_vector(rc.at("y")), kRtolF32, kAtolF32));
    y.backward(rc.at("g"));
    for (auto& [key, t] : in) {
      SCOPED_TRACE("d" + key);
      ASSERT_TRUE(t.grad().defined());
      EXPECT_TRUE(test::all_close(t.grad(), test::to_vector(rc.at("d" + key)), kRtolF32, kAtolF32));
    }
    ++checked;
  }
  EXPECT_EQ(checked, 7);
}

// nn.BatchNorm1d, BatchNorm2d and BatchNorm3d over two training steps and one evaluation
// (BatchNorm2d with momentum 0.1 and None; the others 0.1 on each input rank they take).
template <typename Module>
void expect_module_matches(const test::ReferenceCase& rc) {
  SCOPED_TRACE(rc.name);
  nn::BatchNormOptions options(3);
  if (rc.params["momentum"].is_null()) options.momentum(std::nullopt);
  Module bn(options);
  {
    NoGradGuard no_grad;
    bn->weight.copy_(rc.at("w"));
    bn->bias.copy_(rc.at("b"));
  }
  const Tensor y1 = bn(rc.at("x1"));
  const Tensor y2 = bn(rc.at("x2"));
  bn->eval();
  const Tensor y3 = bn(rc.at("x3"));
  EXPECT_TRUE(test::all_close(y1, test::to_vector(rc.at("y1")), kRtolF32, kAtolF32));
  EXPECT_TRUE(test::all_close(y2, test::to_vector(rc.at("y2")), kRtolF32, kAtolF32));
  EXPECT_TRUE(test::all_close(y3, test::to_vector(rc.at("y3")), kRtolF32, kAtolF32));
  EXPECT_EQ(y3.shape(), rc.at("y3").shape());
  EXPECT_TRUE(test::all_close(bn->running_mean, test::to_vector(rc.at("rm")), kRtolF32, kAtolF32));
  EXPECT_TRUE(test::all_close(bn->running_var, test::to_vector(rc.at("rv")), kRtolF32, kAtolF32));
  EXPECT_EQ(bn->num_batches_tracked.template item<std::int64_t>(), 2);
}

TEST(NnLayersReference, BatchNormModulesMatchPyTorch) {
  int checked = 0;
  for (const test::ReferenceCase& rc : test::load_reference("nn_layers.json")) {
    if (rc.name.rfind("batch_norm2d_module", 0) == 0) {
      expect_module_matches<nn::BatchNorm2d>(rc);
    } else if (rc.name.rfind("batch_norm1d_", 0) == 0) {
      expect_module_matches<nn::BatchNorm1d>(rc);
    } else if (rc.name.rfind("batch_norm3d_", 0) == 0) {
      expect_module_matches<nn::BatchNorm3d>(rc);
    } else {
      continue;
    }
    ++checked;
  }
  EXPECT_EQ(checked, 5);
}

TEST(BatchNormModules, EachTakesItsInputRanksAndPrintsItsName) {
  nn::BatchNorm1d one(2);
  nn::BatchNorm3d three(2);
  EXPECT_EQ(printed(one),
            "BatchNorm1d(2, eps=1e-05, momentum=0.1, affine=true, track_running_stats=true)");
  EXPECT_EQ(printed(three),
            "BatchNorm3d(2, eps=1e-05, momentum=0.1, affine=true, track_running_stats=true)");
  EXPECT_EQ(one(ones({4, 2})).shape(), Shape({4, 2}));
  EXPECT_EQ(one(ones({4, 2, 3})).shape(), Shape({4, 2, 3}));
  EXPECT_EQ(three(ones({2, 2, 1, 2, 3})).shape(), Shape({2, 2, 1, 2, 3}));
  EXPECT_THROW(one(ones({4, 2, 3, 1})), ShapeError);
  EXPECT_THROW(one(ones({4})), ShapeError);
  EXPECT_THROW(three(ones({2, 2, 2, 3})), ShapeError);
  EXPECT_EQ(one->state_dict().size(), 5u);  // PyTorch's entries
}

// ---- Embedding ---------------------------------------------------------------------------------

Tensor int64_tensor(const std::vector<double>& values, const Shape& shape) {
  return test::make_tensor(values, shape, kInt64);
}

TEST(EmbeddingGrad, RepeatedIndicesAnyShapeAndPadding) {
  const Tensor w = uniform_input({5, 3}, -1, 1, 61);
  const Tensor idx = int64_tensor({4, 0, 4, 2, 1, 4}, {2, 3});  // 4 three times: gradients add
  EXPECT_TRUE(gradcheck([&](const Inputs& in) { return embedding(idx, in[0]); }, {w}));
  // With padding_idx 4 among the indices: the padding row's zero gradient is a rule, not a
  // derivative, so the outputs it feeds are masked out; the other rows' gradients must be exact.
  const Tensor keep = ne(idx, 4.0).unsqueeze(-1).to(kFloat64);  // (2, 3, 1)
  EXPECT_TRUE(
      gradcheck([&](const Inputs& in) { return mul(embedding(idx, in[0], 4), keep); }, {w}));
  const Tensor idx3 = int64_tensor({1, 2, 3, 0, 0, 1, 2, 2}, {2, 2, 2});
  const Tensor wt = transposed_leaf({3, 5}, -1, 1, 62);  // (5, 3) as a transposed view
  EXPECT_TRUE(gradcheck([&](const Inputs& in) { return embedding(idx3, in[0], -1); }, {wt}));
}

TEST(Embedding, ForwardPicksRowsAndPaddingRowGetsNoGradient) {
  const Tensor w = uniform_input({4, 2}, -1, 1, 63).detach().to(kFloat32).requires_grad_();
  const Tensor idx = int64_tensor({3, 1, 3, 0}, {4});
  const Tensor y = embedding(idx, w, /*padding_idx=*/1);
  const std::vector<double> wv = test::to_vector(w);
  EXPECT_EQ(y.shape(), (Shape{4, 2}));
  // The padding row is looked up like any other (PyTorch's forward); only its gradient is zero.
  EXPECT_TRUE(test::all_close(y, {wv[6], wv[7], wv[2], wv[3], wv[6], wv[7], wv[0], wv[1]}, 0, 0));
  y.backward(test::make_tensor({1, 2, 3, 4, 5, 6, 7, 8}, {4, 2}));
  EXPECT_TRUE(test::all_close(w.grad(), {7, 8, 0, 0, 0, 0, 6, 8}, 0, 0));
  // Rows of one element (the kernel's scatter loop): the padding row's gradient is zero there too.
  const Tensor w1 = test::make_tensor({1, 2, 3, 4}, {4, 1}).requires_grad_();
  embedding(idx, w1, /*padding_idx=*/3).backward(test::make_tensor({1, 2, 3, 4}, {4, 1}));
  EXPECT_TRUE(test::all_close(w1.grad(), {4, 2, 0, 0}, 0, 0));
  // 0-d indices give one row; empty indices an empty result.
  EXPECT_EQ(embedding(int64_tensor({2}, {}), w).shape(), (Shape{2}));
  EXPECT_EQ(embedding(int64_tensor({}, {0, 3}), w).shape(), (Shape{0, 3, 2}));
}

TEST(EmbeddingModule, InitPaddingRowOptionsAndPrinting) {
  manual_seed(0);
  nn::Embedding emb(nn::EmbeddingOptions(400, 50).padding_idx(-2));
  EXPECT_EQ(emb->options().padding_idx(), 398);  // normalized, as PyTorch
  ASSERT_EQ(emb->named_parameters().size(), 1u);
  EXPECT_EQ(emb->named_parameters()[0].first, "weight");
  EXPECT_EQ(emb->weight.shape(), (Shape{400, 50}));
  // N(0, 1): the sample mean and variance of 19950 draws are within 5 standard errors
  // (1 / sqrt(n) for the mean, sqrt(2 / n) for the variance).
  const std::vector<double> v = test::to_vector(emb->weight);
  double mean = 0, var = 0;
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (i / 50 == 398) {
      EXPECT_EQ(v[i], 0.0);
      continue;
    }
    mean += v[i];
  }
  const double n = 399 * 50;
  mean /= n;
  for (std::size_t i = 0; i < v.size(); ++i)
    if (i / 50 != 398) var += (v[i] - mean) * (v[i] - mean) / n;
  EXPECT_LT(std::abs(mean), 5 / std::sqrt(n));
  EXPECT_LT(std::abs(var - 1), 5 * std::sqrt(2 / n));
  EXPECT_EQ(printed(emb), "Embedding(400, 50, padding_idx=398)");
  nn::Embedding plain(10, 3);
  EXPECT_EQ(plain->extra_repr(), "10, 3");
  const Tensor idx = int64_tensor({1, 9}, {2});
  EXPECT_TRUE(test::all_close(
      plain(idx), test::to_vector(nn::functional::embedding(idx, plain->weight)), 0, 0));
}

TEST(NnLayersReference, EmbeddingMatchesPyTorch) {
  int checked = 0;
  for (const test::ReferenceCase& rc : test::load_reference("nn_layers.json")) {
    if (rc.name.rfind("embedding", 0) != 0) continue;
    SCOPED_TRACE(rc.name);
    const Tensor w = rc.at("w").clone().requires_grad_();
    std::optional<std::int64_t> padding_idx;
    if (!rc.params["padding_idx"].is_null())
      padding_idx = rc.params["padding_idx"].get<std::int64_t>();
    const Tensor y = embedding(rc.at("indices"), w, padding_idx);
    // A lookup and sums of at most 3 terms: PyTorch's float32 tolerances hold with room.
    EXPECT_TRUE(test::all_close(y, test::to_vector(rc.at("y")), kRtolF32, kAtolF32));
    y.backward(rc.at("g"));
    EXPECT_TRUE(test::all_close(w.grad(), test::to_vector(rc.at("dw")), kRtolF32, kAtolF32));
    ++checked;
  }
  EXPECT_EQ(checked, 2);
}

// ---- ConvTranspose2d ---------------------------------------------------------------------------

TEST(ConvTranspose2dGrad, StridePaddingOutputPaddingGroupsDilation) {
  const Tensor x = uniform_input({2, 4, 3, 3}, -1, 1, 71);
  const Tensor w = uniform_input({4, 3, 3, 2}, -1, 1, 72);
  const Tensor b = uniform_input({6}, -1, 1, 73);
  EXPECT_TRUE(gradcheck(
      [](const Inputs& in) {
        return conv_transpose2d(in[0], in[1], in[2], {2, 3}, {1, 0}, {1, 2}, 2, {1, 2});
      },
      {x, w, b}));
  const Tensor w1 = uniform_input({4, 2, 3, 3}, -1, 1, 74);
  EXPECT_TRUE(gradcheck([](const Inputs& in) { return conv_transpose2d(in[0], in[1]); }, {x, w1}));
}

TEST(ConvTranspose2dGrad, BatchOneAndNonContiguous) {
  const Tensor x = transposed_leaf({1, 2, 4, 3}, -1, 1, 75);  // (1, 2, 3, 4) as a view
  const Tensor w = transposed_leaf({2, 3, 2, 3}, -1, 1, 76);  // (2, 3, 3, 2) as a view
  const Tensor b = uniform_input({3}, -1, 1, 77);
  EXPECT_TRUE(gradcheck(
      [](const Inputs& in) {
        return conv_transpose2d(in[0], in[1], in[2], {2, 2}, {1, 1});
      },
      {x, w, b}));
}

// The definition as a scatter, in float64: input pixel (h, w) of channel ci adds
// x * weight[ci, co, i, j] to output (h s - p + i d, w s - p + j d) for co in ci's group.
TEST(ConvTranspose2d, MatchesScatterLoopInFloat64) {
  const std::int64_t N = 2, C_in = 4, H = 3, W = 4, groups = 2, C_out_g = 3, kH = 3, kW = 2;
  const std::int64_t s[2] = {2, 3}, p[2] = {1, 2}, op[2] = {1, 0}, d[2] = {2, 1};
  const Tensor x = uniform_input({N, C_in, H, W}, -1, 1, 78).detach();
  const Tensor w = uniform_input({C_in, C_out_g, kH, kW}, -1, 1, 79).detach();
  const Tensor y =
      conv_transpose2d(x, w, {}, {s[0], s[1]}, {p[0], p[1]}, {op[0], op[1]}, groups, {d[0], d[1]});
  const std::int64_t OH = (H - 1) * s[0] - 2 * p[0] + d[0] * (kH - 1) + op[0] + 1;
  const std::int64_t OW = (W - 1) * s[1] - 2 * p[1] + d[1] * (kW - 1) + op[1] + 1;
  ASSERT_EQ(y.shape(), (Shape{N, C_out_g * groups, OH, OW}));
  const std::vector<double> xv = test::to_vector(x), wv = test::to_vector(w);
  std::vector<double> expected(static_cast<std::size_t>(N * C_out_g * groups * OH * OW), 0.0);
  const std::int64_t C_in_g = C_in / groups;
  for (std::int64_t n = 0; n < N; ++n)
    for (std::int64_t ci = 0; ci < C_in; ++ci)
      for (std::int64_t h = 0; h < H; ++h)
        for (std::int64_t ww = 0; ww < W; ++ww)
          for (std::int64_t co = 0; co < C_out_g; ++co)
            for (std::int64_t i = 0; i < kH; ++i)
              for (std::int64_t j = 0; j < kW; ++j) {
                const std::int64_t oh = h * s[0] - p[0] + i * d[0];
                const std::int64_t ow = ww * s[1] - p[1] + j * d[1];
                if (oh < 0 || oh >= OH || ow < 0 || ow >= OW) continue;
                const std::int64_t c = (ci / C_in_g) * C_out_g + co;
                expected[((n * C_out_g * groups + c) * OH + oh) * OW + ow] +=
                    xv[((n * C_in + ci) * H + h) * W + ww] *
                    wv[((ci * C_out_g + co) * kH + i) * kW + j];
              }
  // Sums of at most C_in_g kH kW = 12 products of magnitude < 1, in another order: a few ulps.
  EXPECT_TRUE(test::all_close(y, expected, 1e-14, 1e-14));
}

TEST(ConvTranspose2dModule, ShapesInitBoundsAndPrinting) {
  manual_seed(0);
  nn::ConvTranspose2d up(nn::ConvTranspose2dOptions(8, 6, 4).stride(2).padding(1).groups(2));
  EXPECT_EQ(up->weight.shape(), (Shape{8, 3, 4, 4}));
  EXPECT_EQ(up->bias.shape(), (Shape{6}));
  // PyTorch's bound 1 / sqrt(fan_in), fan_in = weight.size(1) * kH * kW = 3 * 16.
  const double bound = 1.0 / std::sqrt(48.0);
  double max_abs = 0;
  for (double v : test::to_vector(up->weight))
    max_abs = std::max(max_abs, std::abs(v));
  EXPECT_LE(max_abs, bound);
  EXPECT_GT(max_abs, 0.9 * bound);
  EXPECT_EQ(printed(up),
            "ConvTranspose2d(8, 6, kernel_size=(4, 4), stride=(2, 2), padding=(1, 1), groups=2)");
  const Tensor x = uniform_input({1, 8, 5, 7}, -1, 1, 80).detach().to(kFloat32);
  const Tensor y = up(x);
  EXPECT_EQ(y.shape(), (Shape{1, 6, 10, 14}));  // (H - 1) 2 - 2 + 3 + 1 = 2 H
  EXPECT_TRUE(test::all_close(y,
                              test::to_vector(nn::functional::conv_transpose2d(
                                  x, up->weight, up->bias, {2, 2}, {1, 1}, {0, 0}, 2)),
                              0, 0));
  nn::ConvTranspose2d no_bias(
      nn::ConvTranspose2dOptions(2, 3, {1, 2}).bias(false).output_padding(0));
  EXPECT_FALSE(no_bias->bias.defined());
  EXPECT_EQ(no_bias->named_parameters().size(), 1u);
}

TEST(NnLayersReference, ConvTranspose2dMatchesPyTorch) {
  int checked = 0;
  for (const test::ReferenceCase& rc : test::load_reference("nn_layers.json")) {
    if (rc.name.rfind("conv_transpose2d", 0) != 0) continue;
    SCOPED_TRACE(rc.name);
    std::map<std::string, Tensor> in;
    for (const char* key : {"x", "w", "b"}) {
      if (rc.tensors.count(key)) in[key] = rc.at(key).clone().requires_grad_();
    }
    const auto size2 = [&](const char* key) { return rc.params[key].get<Size2>(); };
    const Tensor y = conv_transpose2d(in["x"], in["w"], in.count("b") ? in["b"] : Tensor(),
                                      size2("stride"), size2("padding"), size2("output_padding"),
                                      rc.params["groups"], size2("dilation"));
    // Sums of at most 40 products of values in [-1, 1]: PyTorch's float32 tolerances.
    EXPECT_TRUE(test::all_close(y, test::to_vector(rc.at("y")), kRtolF32, kAtolF32));
    y.backward(rc.at("g"));
    for (auto& [key, t] : in) {
      SCOPED_TRACE("d" + key);
      ASSERT_TRUE(t.grad().defined());
      EXPECT_TRUE(test::all_close(t.grad(), test::to_vector(rc.at("d" + key)), kRtolF32, kAtolF32));
    }
    ++checked;
  }
  EXPECT_EQ(checked, 4);
}

// ---- conv1d / Conv1d ---------------------------------------------------------------------------

TEST(Conv1dGrad, StridePaddingDilationGroups) {
  const Tensor x = uniform_input({2, 4, 9}, -1, 1, 91);
  const Tensor w = uniform_input({6, 2, 3}, -1, 1, 92);
  const Tensor b = uniform_input({6}, -1, 1, 93);
  EXPECT_TRUE(gradcheck([](const Inputs& in) { return conv1d(in[0], in[1], in[2], 2, 1, 2, 2); },
                        {x, w, b}));
  EXPECT_TRUE(gradcheck([](const Inputs& in) { return conv1d(in[0], in[1]); },
                        {x, uniform_input({3, 4, 4}, -1, 1, 94)}));
}

// PyTorch's F.conv1d: outputs and the gradients of input, weight and bias.
TEST(NnLayersReference, Conv1dMatchesPyTorch) {
  int checked = 0;
  for (const test::ReferenceCase& rc : test::load_reference("nn_layers.json")) {
    if (rc.name.rfind("conv1d_", 0) != 0) continue;
    SCOPED_TRACE(rc.name);
    std::map<std::string, Tensor> in;
    for (const char* key : {"x", "w", "b"}) {
      if (rc.tensors.count(key)) in[key] = rc.at(key).clone().requires_grad_();
    }
    const Tensor y =
        conv1d(in["x"], in["w"], in.count("b") ? in["b"] : Tensor(),
               rc.params["stride"].get<std::int64_t>(), rc.params["padding"].get<std::int64_t>(),
               rc.params["dilation"].get<std::int64_t>(), rc.params["groups"].get<std::int64_t>());
    // Sums of at most 12 products of values in [-1, 1]: PyTorch's float32 tolerances.
    EXPECT_EQ(y.shape(), rc.at("y").shape());
    EXPECT_TRUE(test::all_close(y, test::to_vector(rc.at("y")), kRtolF32, kAtolF32));
    y.backward(rc.at("g"));
    for (auto& [key, t] : in) {
      SCOPED_TRACE("d" + key);
      ASSERT_TRUE(t.grad().defined());
      EXPECT_EQ(t.grad().shape(), t.shape());
      EXPECT_TRUE(test::all_close(t.grad(), test::to_vector(rc.at("d" + key)), kRtolF32, kAtolF32));
    }
    ++checked;
  }
  EXPECT_EQ(checked, 4);
}

TEST(Conv1dModule, ParametersInitialisationAndPrinting) {
  nn::Conv1d conv(nn::Conv1dOptions(4, 6, 3).stride(2).padding(1).groups(2));
  EXPECT_EQ(conv->weight.shape(), Shape({6, 2, 3}));
  EXPECT_EQ(conv->bias.shape(), Shape({6}));
  // PyTorch's bound 1 / sqrt(fan_in), fan_in = 2 * 3: every value inside, and not all near 0.
  const double bound = 1.0 / std::sqrt(6.0);
  const std::vector<double> w = test::to_vector(conv->weight);
  double largest = 0;
  for (const double v : w)
    largest = std::max(largest, std::abs(v));
  EXPECT_LE(largest, bound);
  EXPECT_GT(largest, bound / 2);
  EXPECT_EQ(printed(conv), "Conv1d(4, 6, kernel_size=(3,), stride=(2,), padding=(1,), groups=2)");
  EXPECT_EQ(printed(nn::Conv1d(nn::Conv1dOptions(1, 2, 5).bias(false))),
            "Conv1d(1, 2, kernel_size=(5,), stride=(1,), bias=False)");
  // forward is conv1d with the module's parameters: (2, 4, 9) -> (2, 6, 5).
  const Tensor x = uniform_input({2, 4, 9}, -1, 1, 95).detach().to(kFloat32);
  const Tensor y = conv(x);
  EXPECT_EQ(y.shape(), Shape({2, 6, 5}));
  EXPECT_TRUE(
      test::all_close(y, test::to_vector(conv1d(x, conv->weight, conv->bias, 2, 1, 1, 2)), 0, 0));
}

// ---- interpolate / Upsample --------------------------------------------------------------------

TEST(InterpolateGrad, NearestAndBilinear) {
  const Tensor x = uniform_input({2, 2, 3, 4}, -1, 1, 81);
  EXPECT_TRUE(gradcheck(
      [](const Inputs& in) {
        return interpolate(in[0], std::nullopt, Scale2{2.0, 1.5});
      },
      {x}));
  EXPECT_TRUE(gradcheck([](const Inputs& in) { return interpolate(in[0], Size2{2, 7}); }, {x}));
  EXPECT_TRUE(gradcheck(
      [](const Inputs& in) {
        return interpolate(in[0], Size2{5, 3}, std::nullopt, kBilinear);
      },
      {x}));
  EXPECT_TRUE(gradcheck(
      [](const Inputs& in) {
        return interpolate(in[0], std::nullopt, Scale2{1.7, 2.0}, kBilinear, true);
      },
      {x}));
  const Tensor xt = transposed_leaf({1, 3, 4, 3}, -1, 1, 82);  // (1, 3, 3, 4) as a view
  EXPECT_TRUE(gradcheck(
      [](const Inputs& in) {
        return interpolate(in[0], Size2{6, 6}, std::nullopt, kBilinear);
      },
      {xt}));
}

// Properties that follow from the definitions, checked exactly in float64.
TEST(Interpolate, NearestRepeatsPixelsAndBilinearKeepsCornersAndSizes) {
  const Tensor x = uniform_input({1, 2, 3, 4}, -1, 1, 83).detach();
  const std::vector<double> v = test::to_vector(x);
  // Nearest by 2: output (h, w) is input (h / 2, w / 2).
  std::vector<double> repeated;
  for (int c = 0; c < 2; ++c)
    for (int h = 0; h < 6; ++h)
      for (int w = 0; w < 8; ++w)
        repeated.push_back(v[(c * 3 + h / 2) * 4 + w / 2]);
  EXPECT_TRUE(test::all_close(interpolate(x, std::nullopt, Scale2{2.0, 2.0}), repeated, 0, 0));
  // Bilinear to the same size is the identity, with and without align_corners.
  EXPECT_TRUE(test::all_close(interpolate(x, Size2{3, 4}, std::nullopt, kBilinear), v, 0, 0));
  EXPECT_TRUE(test::all_close(interpolate(x, Size2{3, 4}, std::nullopt, kBilinear, true), v, 0, 0));
  // align_corners: the four corner outputs are the corner inputs; the centre of a 3-wide axis
  // resized to 5 lands on input 1.
  const std::vector<double> y =
      test::to_vector(interpolate(x, Size2{5, 7}, std::nullopt, kBilinear, true));
  EXPECT_DOUBLE_EQ(y[0], v[0]);
  EXPECT_DOUBLE_EQ(y[6], v[3]);
  EXPECT_DOUBLE_EQ(y[28], v[8]);
  EXPECT_DOUBLE_EQ(y[34], v[11]);
  EXPECT_NEAR(y[2 * 7 + 0], v[4], 1e-15);
}

// docs/api-notes.md: nearest follows its step rule also where a factor other than 1 leaves the size
// unchanged (PyTorch 1.13's 2-D CPU kernel copies there; its 1-D one follows the rule), and
// bilinear copies such an axis, as PyTorch.
TEST(Interpolate, UnchangedSizeFromAFactorOtherThanOne) {
  const Tensor x = arange(5, kFloat64).reshape({1, 1, 5, 1});
  // Step 1 / 1.1: output o reads floor(o / 1.1), which is o - 1 from o = 1 on.
  EXPECT_TRUE(
      test::all_close(interpolate(x, std::nullopt, Scale2{1.1, 1.0}), {0, 0, 1, 2, 3}, 0, 0));
  EXPECT_TRUE(test::all_close(interpolate(x, std::nullopt, Scale2{1.1, 1.0}, kBilinear),
                              {0, 1, 2, 3, 4}, 0, 0));
}

TEST(UpsampleModule, OptionsForwardAndPrinting) {
  nn::Upsample up(nn::UpsampleOptions().scale_factor(std::vector<double>{2}).mode(kNearest));
  EXPECT_TRUE(up->parameters().empty());
  EXPECT_EQ(printed(up), "Upsample(scale_factor=[2], mode=nearest)");
  const Tensor x = uniform_input({2, 3, 4, 5}, -1, 1, 84).detach().to(kFloat32);
  EXPECT_EQ(up(x).shape(), (Shape{2, 3, 8, 10}));
  EXPECT_TRUE(test::all_close(
      up(x), test::to_vector(nn::functional::interpolate(x, std::nullopt, Scale2{2.0, 2.0})), 0,
      0));
  nn::Upsample resize(nn::UpsampleOptions()
                          .size(std::vector<std::int64_t>{6, 7})
                          .mode(kBilinear)
                          .align_corners(true));
  EXPECT_EQ(resize->extra_repr(), "size=[6, 7], mode=bilinear, align_corners=true");
  EXPECT_TRUE(test::all_close(
      resize(x), test::to_vector(interpolate(x, Size2{6, 7}, std::nullopt, kBilinear, true)), 0,
      0));
}

TEST(NnLayersReference, InterpolateMatchesPyTorch) {
  int checked = 0;
  for (const test::ReferenceCase& rc : test::load_reference("nn_layers.json")) {
    if (rc.name.rfind("interpolate", 0) != 0) continue;
    SCOPED_TRACE(rc.name);
    const Tensor x = rc.at("x").clone().requires_grad_();
    std::optional<Size2> size;
    std::optional<Scale2> scale;
    std::optional<bool> corners;
    if (!rc.params["size"].is_null()) size = rc.params["size"].get<Size2>();
    if (!rc.params["scale_factor"].is_null()) scale = rc.params["scale_factor"].get<Scale2>();
    if (!rc.params["align_corners"].is_null()) corners = rc.params["align_corners"].get<bool>();
    const InterpolateMode mode = rc.params["mode"] == "bilinear" ? kBilinear : kNearest;
    const Tensor y = interpolate(x, size, scale, mode, corners);
    // Nearest copies (exact once the source indices agree); bilinear mixes 4 values with float32
    // weights, and the gradient of an input sums at most a few dozen such terms.
    EXPECT_TRUE(test::all_close(y, test::to_vector(rc.at("y")), kRtolF32, kAtolF32));
    y.backward(rc.at("g"));
    EXPECT_TRUE(test::all_close(x.grad(), test::to_vector(rc.at("dx")), kRtolF32, kAtolF32));
    ++checked;
  }
  EXPECT_EQ(checked, 8);
}

}  // namespace
}  // namespace leangrad
