// Tests of the layer functions (autograd/nn_functions.cpp over kernels/ops_layers.cpp): float64
// gradchecks of every differentiable op (batch 1, non-contiguous inputs), PyTorch reference cases
// (tests/data/layers.json from make_layers.py), dropout's mask rules and the error messages.
// The CUDA side is compared with the CPU in op_table_layers.cpp.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <string>
#include <vector>

#include <leangrad/autograd/functions.h>
#include <leangrad/autograd/nn_functions.h>
#include <leangrad/core/error.h>
#include <leangrad/core/generator.h>
#include <leangrad/kernels/creation.h>
#include <leangrad/kernels/layers_math.h>
#include <leangrad/kernels/ops.h>
#include "testing/gradcheck.h"
#include "testing/reference_data.h"
#include "testing/tensor_testing.h"
#include "testing/thread_count.h"

namespace leangrad {
namespace {

using test::gradcheck;
using test::uniform_input;
using Inputs = std::vector<Tensor>;

// A leaf view with the last two dims transposed: non-contiguous, and still a gradcheck leaf.
Tensor transposed_leaf(const Shape& shape, double low = -1.0, double high = 1.0,
                       std::uint64_t seed = 0) {
  Tensor x = uniform_input(shape, low, high, seed).detach().transpose(-1, -2);
  x.requires_grad_();
  return x;
}

Tensor int64_tensor(const std::vector<double>& values) {
  return test::make_tensor(values, {static_cast<std::int64_t>(values.size())}, kInt64);
}

// ---- Linear ----------------------------------------------------------------------------------

TEST(LinearGrad, WithAndWithoutBias) {
  const Tensor x = uniform_input({4, 5}, -1, 1, 1);
  const Tensor w = uniform_input({3, 5}, -1, 1, 2);
  const Tensor b = uniform_input({3}, -1, 1, 3);
  EXPECT_TRUE(gradcheck([](const Inputs& in) { return linear(in[0], in[1], in[2]); }, {x, w, b}));
  EXPECT_TRUE(gradcheck([](const Inputs& in) { return linear(in[0], in[1]); }, {x, w}));
}

TEST(LinearGrad, ThreeDimInputBatchOneAndNonContiguous) {
  const Tensor x = uniform_input({2, 3, 5}, -1, 1, 4);
  const Tensor w = transposed_leaf({5, 3}, -1, 1, 5);  // (3, 5) as a transposed view
  const Tensor b = uniform_input({3}, -1, 1, 6);
  EXPECT_TRUE(gradcheck([](const Inputs& in) { return linear(in[0], in[1], in[2]); }, {x, w, b}));
  const Tensor x1 = uniform_input({1, 5}, -1, 1, 7);
  EXPECT_TRUE(gradcheck([](const Inputs& in) { return linear(in[0], in[1], in[2]); }, {x1, w, b}));
  EXPECT_EQ(linear(x, w, b).shape(), (Shape{2, 3, 3}));
}

TEST(LinearErrors, NameTheShapes) {
  const Tensor x = zeros({4, 5});
  EXPECT_THROW(linear(x, zeros({3, 6})), ShapeError);
  EXPECT_THROW(linear(x, zeros({3, 5}), zeros({4})), ShapeError);
  try {
    linear(x, zeros({3, 6}));
  } catch (const ShapeError& e) {
    EXPECT_NE(std::string(e.what()).find("linear"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("[4, 5]"), std::string::npos) << e.what();
  }
}

// ---- Pixel shuffle ---------------------------------------------------------------------------

TEST(PixelShuffleForward, MatchesTheIndexFormula) {
  // out[n, c, h r + i, w r + j] = in[n, c r^2 + i r + j, h, w]
  const std::int64_t r = 2, C = 2, H = 3, W = 2;
  const Tensor x = arange(1.0 * C * r * r * H * W).reshape({1, C * r * r, H, W});
  const std::vector<double> in = test::to_vector(x);
  const std::vector<double> out = test::to_vector(pixel_shuffle(x, r));
  for (std::int64_t c = 0; c < C; ++c)
    for (std::int64_t oh = 0; oh < H * r; ++oh)
      for (std::int64_t ow = 0; ow < W * r; ++ow) {
        const std::int64_t src_c = c * r * r + (oh % r) * r + ow % r;
        EXPECT_EQ(out[(c * H * r + oh) * W * r + ow], in[(src_c * H + oh / r) * W + ow / r]);
      }
  EXPECT_TRUE(test::all_close(pixel_unshuffle(pixel_shuffle(x, r), r), in, 0, 0));
}

TEST(PixelShuffleGrad, ShuffleAndUnshuffle) {
  EXPECT_TRUE(gradcheck([](const Inputs& in) { return pixel_shuffle(in[0], 2); },
                        {transposed_leaf({1, 8, 2, 3})}));
  EXPECT_TRUE(gradcheck([](const Inputs& in) { return pixel_unshuffle(in[0], 2); },
                        {uniform_input({2, 1, 4, 6})}));
}

TEST(PixelShuffleErrors, ChannelsNotDivisible) {
  EXPECT_THROW(pixel_shuffle(zeros({1, 6, 2, 2}), 2), ShapeError);
  EXPECT_THROW(pixel_unshuffle(zeros({1, 1, 3, 4}), 2), ShapeError);
  EXPECT_THROW(pixel_shuffle(zeros({6, 2}), 2), ShapeError);
  try {
    pixel_shuffle(zeros({1, 6, 2, 2}), 2);
  } catch (const ShapeError& e) {
    EXPECT_NE(std::string(e.what()).find("pixel_shuffle"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("[1, 6, 2, 2]"), std::string::npos) << e.what();
  }
}

// ---- Pooling ---------------------------------------------------------------------------------

TEST(PoolForward, MaxPoolPadsWithMinusInfinityAndReturnsIndices) {
  // All-negative input: a zero padding would win; -inf padding never does.
  const Tensor x = test::make_tensor({-1, -2, -3, -4, -5, -6, -7, -8, -9}, {1, 1, 3, 3});
  const ops::MaxPool2dResult r = ops::max_pool2d(x, {2, 2}, {2, 2}, {1, 1});
  EXPECT_TRUE(test::all_close(r.out, {-1, -2, -4, -5}, 0, 0));
  EXPECT_TRUE(test::all_close(r.indices, {0, 1, 3, 4}, 0, 0));
  EXPECT_EQ(max_pool2d(zeros({2, 3, 7, 6}), {2, 2}).shape(), (Shape{2, 3, 3, 3}));
}

// The window's first maximum in row-major order wins a tie, and a NaN wins over numbers and over
// the NaNs before it (so the last NaN gets the gradient), as PyTorch's `val > maxval ||
// isnan(val)`: checked against that loop here, for non-square, overlapping and strided windows
// without padding (the CPU's row-at-a-time path) and with padding (the per-window path).
TEST(PoolForward, MaxPoolTiesPickTheFirstMaximumAndNaNsTheLast) {
  const std::int64_t H = 5, W = 7;
  std::vector<double> values(static_cast<std::size_t>(H * W));
  for (std::size_t i = 0; i < values.size(); ++i)
    values[i] = static_cast<double>((i * 7) % 4);  // many ties
  values[9] = std::nan("");
  values[10] = std::nan("");  // beside 9: windows holding both
  values[23] = std::nan("");
  const Tensor x = test::make_tensor(values, {1, 1, H, W});
  struct Geometry {
    std::int64_t kh, kw, sh, sw, ph, pw;
  };
  for (const Geometry& c : {Geometry{2, 3, 2, 3, 0, 0}, Geometry{3, 3, 1, 1, 0, 0},
                            Geometry{2, 2, 1, 2, 0, 0}, Geometry{3, 3, 2, 2, 1, 1}}) {
    SCOPED_TRACE(testing::Message() << "kernel " << c.kh << "x" << c.kw << " stride " << c.sh << "x"
                                    << c.sw << " padding " << c.ph);
    const ops::MaxPool2dResult r = ops::max_pool2d(x, {c.kh, c.kw}, {c.sh, c.sw}, {c.ph, c.pw});
    const std::vector<double> out = test::to_vector(r.out), indices = test::to_vector(r.indices);
    const std::int64_t OH = (H + 2 * c.ph - c.kh) / c.sh + 1, OW = (W + 2 * c.pw - c.kw) / c.sw + 1;
    ASSERT_EQ(out.size(), static_cast<std::size_t>(OH * OW));
    for (std::int64_t oh = 0; oh < OH; ++oh) {
      for (std::int64_t ow = 0; ow < OW; ++ow) {
        std::int64_t best = -1;
        for (std::int64_t h = oh * c.sh - c.ph; h < oh * c.sh - c.ph + c.kh; ++h) {
          for (std::int64_t w = ow * c.sw - c.pw; w < ow * c.sw - c.pw + c.kw; ++w) {
            if (h < 0 || h >= H || w < 0 || w >= W) continue;
            const double v = values[static_cast<std::size_t>(h * W + w)];
            const double b = best < 0 ? 0 : values[static_cast<std::size_t>(best)];
            if (best < 0 || v > b || std::isnan(v)) best = h * W + w;
          }
        }
        const std::size_t o = static_cast<std::size_t>(oh * OW + ow);
        EXPECT_EQ(indices[o], static_cast<double>(best)) << "output " << oh << ", " << ow;
        const double expected = values[static_cast<std::size_t>(best)];
        if (std::isnan(expected)) {
          EXPECT_TRUE(std::isnan(out[o])) << "output " << oh << ", " << ow;
        } else {
          EXPECT_EQ(out[o], expected) << "output " << oh << ", " << ow;
        }
      }
    }
  }
}

TEST(PoolForward, AvgPoolCountsPadding) {
  const Tensor x = ones({1, 1, 2, 2});
  // Each 2x2 window with padding 1 covers one real element: 1 / 4.
  EXPECT_TRUE(test::all_close(avg_pool2d(x, {2, 2}, {2, 2}, {1, 1}), {0.25, 0.25, 0.25, 0.25}));
}

TEST(PoolGrad, MaxPoolStride2AndStride1Padded) {
  EXPECT_TRUE(gradcheck(
      [](const Inputs& in) {
        return max_pool2d(in[0], {2, 2});
      },
      {uniform_input({2, 3, 6, 5}, -1, 1, 11)}));
  EXPECT_TRUE(gradcheck(
      [](const Inputs& in) {
        return max_pool2d(in[0], {3, 3}, {1, 1}, {1, 1});
      },
      {transposed_leaf({1, 2, 5, 4}, -1, 1, 12)}));
  EXPECT_TRUE(gradcheck(
      [](const Inputs& in) {
        return max_pool2d(in[0], {3, 2}, {2, 1});
      },
      {uniform_input({2, 7, 5}, -1, 1, 13)}));  // 3-D (C, H, W)
}

TEST(PoolGrad, AvgPoolPadded) {
  EXPECT_TRUE(gradcheck(
      [](const Inputs& in) {
        return avg_pool2d(in[0], {3, 3}, {2, 2}, {1, 1});
      },
      {transposed_leaf({1, 2, 6, 7}, -1, 1, 14)}));
  EXPECT_TRUE(gradcheck(
      [](const Inputs& in) {
        return avg_pool2d(in[0], {2, 2});
      },
      {uniform_input({2, 2, 4, 5}, -1, 1, 15)}));
}

TEST(PoolErrors, BadGeometry) {
  EXPECT_THROW(max_pool2d(zeros({1, 1, 4, 4}), {2, 2}, {2, 2}, {2, 2}), Error);  // pad > k / 2
  EXPECT_THROW(max_pool2d(zeros({1, 1, 1, 4}), {2, 2}), ShapeError);             // too small
  EXPECT_THROW(avg_pool2d(zeros({4, 4}), {2, 2}), ShapeError);                   // 2-D input
  EXPECT_THROW(max_pool2d(zeros({1, 1, 4, 4}, TensorOptions(kInt64)), {2, 2}), DTypeError);
}

// ---- Dropout ---------------------------------------------------------------------------------

TEST(DropoutMask, ReproducibleFractionAndScale) {
  const Tensor x = ones({1000, 100});
  manual_seed(42);
  const Tensor a = dropout(x, 0.3, true);
  manual_seed(42);
  const Tensor b = dropout(x, 0.3, true);
  const std::vector<double> va = test::to_vector(a);
  EXPECT_TRUE(test::all_close(b, va, 0, 0));
  const Tensor c = dropout(x, 0.3, true);  // the stream moved on: another mask
  EXPECT_FALSE(test::all_close(c, va, 0, 0));
  std::int64_t zeros_count = 0;
  for (double v : va) {
    if (v == 0.0) {
      ++zeros_count;
    } else {
      EXPECT_FLOAT_EQ(v, 1.0 / 0.7);
    }
  }
  EXPECT_NEAR(static_cast<double>(zeros_count) / va.size(), 0.3, 0.01);
}

// Each element's keep is its definition, layers_math::dropout_keep(i, seed, offset, p): the lane
// of the Philox block of counter offset + i / 4. The CPU kernel computes one block per counter for
// four elements, so the tensor starts at an offset the first call moved on, its length is not a
// multiple of 4, and two threads split it at an element inside a block.
TEST(DropoutMask, EachKeepIsItsDefinition) {
  const ThreadCount threads(2);
  Generator gen(2024);
  (void)ops::dropout(ones({1001}), 0.5, gen);  // moves the offset on
  const Generator::State state = gen.state();
  ASSERT_NE(state.offset, 0u);
  const std::int64_t n = 100003;
  const Tensor x = arange(1, n + 1, 1, TensorOptions(kFloat32));
  for (const double p : {0.3, 0.5, 1.0 / 3.0}) {
    gen.set_state(state);
    const ops::DropoutResult r = ops::dropout(x, p, gen);
    const auto* mask = static_cast<const std::uint8_t*>(r.mask.data_ptr());
    const auto* out = static_cast<const float*>(r.out.data_ptr());
    const float scale = static_cast<float>(1.0 / (1.0 - p));
    for (std::int64_t i = 0; i < n; ++i) {
      const bool keep = layers_math::dropout_keep(i, state.seed, state.offset, p);
      ASSERT_EQ(mask[i] != 0, keep) << "element " << i << ", p " << p;
      ASSERT_EQ(out[i], keep ? static_cast<float>(i + 1) * scale : 0.0f) << "element " << i;
    }
  }
}

// The integer form of the keep test equals the float one for every word's top 24 bits (k) at
// probabilities on, between and beside multiples of 2^-24, and 0 and 1.
TEST(DropoutMask, IntegerKeepTestIsTheFloatOne) {
  for (const double p : {0.0, 0x1p-24, 0x1p-25, 1e-7, 0.1, 0.3, 1.0 / 3.0, 0.5, 0.5 + 0x1p-26,
                         5033165 * 0x1p-24, 1.0 - 0x1p-25, 1.0}) {
    const std::uint32_t threshold = layers_math::dropout_keep_threshold(p);
    for (std::uint32_t k = 0; k < (1u << 24); ++k) {
      const std::uint32_t word = k << 8 | (k & 0xff);
      const bool by_float = static_cast<double>(philox::uniform_float(word)) >= p;
      ASSERT_EQ(layers_math::dropout_keep_word(word, threshold), by_float)
          << "p " << p << ", k " << k;
    }
  }
}

TEST(DropoutMask, EvalIdentityAndEdgeCases) {
  const Tensor x = uniform_input({10, 10}).detach();
  EXPECT_TRUE(dropout(x, 0.5, false).is_same(x));
  EXPECT_TRUE(test::all_close(dropout(x, 0.0, true), test::to_vector(x), 0, 0));
  EXPECT_TRUE(test::all_close(dropout(x, 1.0, true), std::vector<double>(100, 0.0), 0, 0));
  EXPECT_THROW(dropout(x, 1.5, true), Error);
  EXPECT_THROW(dropout(x, -0.1, true), Error);
}

TEST(DropoutMask, NonContiguousInputUsesRowMajorOrder) {
  const Tensor base = uniform_input({6, 8}).detach();
  const Tensor t = base.transpose(0, 1);
  manual_seed(7);
  const Tensor a = dropout(t, 0.5, true);
  manual_seed(7);
  const Tensor b = dropout(t.contiguous(), 0.5, true);
  EXPECT_TRUE(test::all_close(a, test::to_vector(b), 0, 0));
}

TEST(DropoutGrad, GradcheckWithReseedAndGradIsMaskOverKeep) {
  // gradcheck evaluates fn many times: re-seeding inside fn keeps the mask fixed.
  EXPECT_TRUE(gradcheck(
      [](const Inputs& in) {
        manual_seed(123);
        return dropout(in[0], 0.4, true);
      },
      {transposed_leaf({3, 4, 5})}));
  const Tensor x = uniform_input({50}, 0.5, 1.0);
  manual_seed(5);
  const Tensor y = dropout(x, 0.25, true);
  sum(y).backward();
  const std::vector<double> out = test::to_vector(y), grad = test::to_vector(x.grad());
  for (std::size_t i = 0; i < out.size(); ++i)
    EXPECT_DOUBLE_EQ(grad[i], out[i] == 0.0 ? 0.0 : 1.0 / 0.75);
}

// ---- Softmax ---------------------------------------------------------------------------------

TEST(LayersSoftmax, StableForLargeLogitsAndRowsOfMinusInfinity) {
  const Tensor x = test::make_tensor({1000, 1001, 1002}, {1, 3});
  const double e = std::exp(1.0);
  const double s = 1 + e + e * e;
  EXPECT_TRUE(test::all_close(softmax(x, 1), {1 / s, e / s, e * e / s}));
  EXPECT_TRUE(
      test::all_close(log_softmax(x, -1), {-std::log(s), 1 - std::log(s), 2 - std::log(s)}));
  const double inf = INFINITY;
  const Tensor m = test::make_tensor({-inf, 0.0}, {1, 2});
  EXPECT_TRUE(test::all_close(softmax(m, 1), {0.0, 1.0}));
}

TEST(LayersSoftmax, GradOverEveryDim) {
  for (std::int64_t dim : {0, 1, -1}) {
    SCOPED_TRACE("dim " + std::to_string(dim));
    EXPECT_TRUE(gradcheck([dim](const Inputs& in) { return softmax(in[0], dim); },
                          {transposed_leaf({3, 5, 4}, -2, 2)}));
    EXPECT_TRUE(gradcheck([dim](const Inputs& in) { return log_softmax(in[0], dim); },
                          {uniform_input({3, 4, 5}, -2, 2)}));
  }
  EXPECT_TRUE(gradcheck([](const Inputs& in) { return log_softmax(in[0], 1); },
                        {uniform_input({1, 7}, -2, 2)}));
}

// ---- Losses ----------------------------------------------------------------------------------

const Reduction kReductions[] = {Reduction::Mean, Reduction::Sum, Reduction::None};

TEST(LossGrad, CrossEntropyAndNllWithIgnoreIndex) {
  const Tensor target = int64_tensor({2, -100, 0, 4, 1});
  for (Reduction r : kReductions) {
    SCOPED_TRACE(static_cast<int>(r));
    EXPECT_TRUE(gradcheck([&](const Inputs& in) { return cross_entropy(in[0], target, r); },
                          {transposed_leaf({5, 5}, -2, 2)}));
    EXPECT_TRUE(gradcheck([&](const Inputs& in) { return nll_loss(in[0], target, r); },
                          {uniform_input({5, 5}, -3, 0)}));
  }
  const Tensor t0 = int64_tensor({3});
  // Batch 1; everything ignored gives 0 / 0 = NaN under Mean, as PyTorch.
  EXPECT_TRUE(std::isnan(cross_entropy(zeros({1, 4}), t0, Reduction::Mean, 3).item<float>()));
  EXPECT_TRUE(gradcheck([&](const Inputs& in) { return cross_entropy(in[0], t0); },
                        {uniform_input({1, 4})}));
}

TEST(LossForward, CrossEntropyEqualsNllOfLogSoftmax) {
  const Tensor x = uniform_input({6, 7}, -3, 3).detach();
  const Tensor target = int64_tensor({0, 6, 3, 3, -100, 1});
  for (Reduction r : kReductions) {
    EXPECT_TRUE(test::all_close(cross_entropy(x, target, r),
                                test::to_vector(nll_loss(log_softmax(x, 1), target, r)), 1e-12,
                                1e-14));
  }
  // ignore_index elsewhere than -100, and mean dividing by the non-ignored count.
  const Tensor t2 = int64_tensor({1, 1, 2, 0, 5, 6});
  const double sum_kept = cross_entropy(x, t2, Reduction::Sum, 1).item<double>();
  EXPECT_NEAR(cross_entropy(x, t2, Reduction::Mean, 1).item<double>(), sum_kept / 4, 1e-12);
}

TEST(LossGrad, MseAndL1) {
  for (Reduction r : kReductions) {
    EXPECT_TRUE(gradcheck([r](const Inputs& in) { return mse_loss(in[0], in[1], r); },
                          {transposed_leaf({3, 4}, -1, 1, 1), uniform_input({4, 3}, -1, 1, 2)}));
    // l1 away from its kink: |input - target| >= 0.5.
    EXPECT_TRUE(gradcheck([r](const Inputs& in) { return l1_loss(in[0], in[1], r); },
                          {uniform_input({4, 3}, 1.0, 2.0, 3), uniform_input({4, 3}, -1, 0.5, 4)}));
  }
}

TEST(LossErrors, TargetDtypeShapeAndRange) {
  const Tensor x = zeros({3, 4});
  EXPECT_THROW(cross_entropy(x, zeros({3}, TensorOptions(kInt32))), DTypeError);
  EXPECT_THROW(cross_entropy(x, zeros({3}, TensorOptions(kFloat32))), DTypeError);
  EXPECT_THROW(cross_entropy(x, int64_tensor({0, 1})), ShapeError);
  EXPECT_THROW(cross_entropy(zeros({3, 4, 2}), int64_tensor({0, 1, 2})), ShapeError);
  EXPECT_THROW(nll_loss(x, int64_tensor({0, 1})), ShapeError);
  EXPECT_THROW(mse_loss(x, zeros({4, 3})), ShapeError);
  EXPECT_THROW(l1_loss(x, zeros({3})), ShapeError);
  try {
    cross_entropy(x, int64_tensor({0, 4, 1}));
    ADD_FAILURE() << "expected an out-of-range target to throw";
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("cross_entropy"), std::string::npos) << what;
    EXPECT_NE(what.find("target 4"), std::string::npos) << what;
  }
  EXPECT_THROW(nll_loss(x, int64_tensor({0, -1, 1})), Error);
  EXPECT_NO_THROW(nll_loss(x, int64_tensor({0, -1, 1}), Reduction::Mean, -1));
}

// ---- PyTorch reference (tests/data/layers.json) ----------------------------------------------

using test::reduction_named;

TEST(LayersReference, MatchesPyTorch) {
  const std::vector<test::ReferenceCase> cases = test::load_reference("layers.json");
  ASSERT_EQ(cases.size(), 20u);
  for (const test::ReferenceCase& rc : cases) {
    SCOPED_TRACE(rc.name);
    std::map<std::string, Tensor> in;
    for (const char* key : {"x", "w", "b", "t"}) {
      if (rc.tensors.count(key)) in[key] = rc.at(key).clone().requires_grad_();
    }
    const std::string& n = rc.name;
    Tensor y;
    if (n == "linear") {
      y = linear(in["x"], in["w"], in["b"]);
    } else if (n == "pixel_shuffle") {
      y = pixel_shuffle(in["x"], rc.params["r"].get<std::int64_t>());
    } else if (n == "pixel_unshuffle") {
      y = pixel_unshuffle(in["x"], rc.params["r"].get<std::int64_t>());
    } else if (n.rfind("max_pool2d", 0) == 0 || n.rfind("avg_pool2d", 0) == 0) {
      const std::int64_t k = rc.params["k"], s = rc.params["s"], p = rc.params["p"];
      y = n[0] == 'm' ? max_pool2d(in["x"], {k, k}, {s, s}, {p, p})
                      : avg_pool2d(in["x"], {k, k}, {s, s}, {p, p});
    } else if (n.rfind("softmax", 0) == 0) {
      y = softmax(in["x"], rc.params["dim"].get<std::int64_t>());
    } else if (n.rfind("log_softmax", 0) == 0) {
      y = log_softmax(in["x"], rc.params["dim"].get<std::int64_t>());
    } else {
      const Reduction r = reduction_named(rc.params["reduction"].get<std::string>());
      if (n.rfind("cross_entropy", 0) == 0) {
        y = cross_entropy(in["x"], rc.at("target"), r, rc.params["ignore_index"]);
      } else if (n.rfind("nll_loss", 0) == 0) {
        y = nll_loss(in["x"], rc.at("target"), r, rc.params["ignore_index"]);
      } else if (n.rfind("mse_loss", 0) == 0) {
        y = mse_loss(in["x"], in["t"], r);
      } else {
        y = l1_loss(in["x"], in["t"], r);
      }
    }
    // PyTorch's default float32 tolerances.
    EXPECT_TRUE(test::all_close(y, test::to_vector(rc.at("y")), 1.3e-6, 1e-5));
    y.backward(rc.at("g"));
    for (auto& [key, t] : in) {
      SCOPED_TRACE("d" + key);
      ASSERT_TRUE(t.grad().defined());
      EXPECT_TRUE(test::all_close(t.grad(), test::to_vector(rc.at("d" + key)), 1.3e-6, 1e-5));
    }
  }
}

}  // namespace
}  // namespace leangrad
