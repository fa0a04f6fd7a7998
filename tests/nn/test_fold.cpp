// unfold and fold (autograd/fold_functions.h, Note [Blocks by index]) and nn::Unfold / nn::Fold:
// against PyTorch 1.13 (tests/data/fold.json, written by make_fold.py: values and input
// gradients, float64), against unfold written here as a loop over blocks, fold as unfold's
// adjoint (<unfold(x), y> = <x, fold(y)>), by finite differences to the second order, and the
// modules as the functions. Bad arguments: the Fold table of
// tests/misuse/test_misuse_nn_layers.cpp.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include <leangrad/autograd/fold_functions.h>
#include <leangrad/autograd/functions.h>
#include <leangrad/nn/fold.h>
#include "testing/gradcheck.h"
#include "testing/reference_data.h"
#include "testing/tensor_testing.h"

namespace leangrad {
namespace {

Size2 size2_of(const nlohmann::json& v) {
  return {v.at(0).get<std::int64_t>(), v.at(1).get<std::int64_t>()};
}

// Unfold moves elements: exact. Fold (and unfold's gradient, a fold) adds the overlapping blocks'
// elements, at most m = kH kW = 9 terms of |x| < 5 (standard normal draws) here, in another order
// than PyTorch's: within (m - 1) u m 5 < 512 u.
TEST(FoldReference, MatchPyTorch) {
  int checked = 0;
  for (const test::ReferenceCase& c : test::load_reference("fold.json")) {
    SCOPED_TRACE(c.name);
    const auto& p = c.params;
    const Tensor x = c.at("x").clone().requires_grad_();
    const Size2 k = size2_of(p.at("kernel_size")), d = size2_of(p.at("dilation"));
    const Size2 pad = size2_of(p.at("padding")), s = size2_of(p.at("stride"));
    const bool folds = !p.at("output_size").is_null();
    const Tensor y =
        folds ? fold(x, size2_of(p.at("output_size")), k, d, pad, s) : unfold(x, k, d, pad, s);
    ASSERT_EQ(y.shape(), c.at("y").shape());
    const double tolerance = 512 * std::ldexp(1.0, -53);
    EXPECT_TRUE(test::all_close(y, test::to_vector(c.at("y")), 0, folds ? tolerance : 0));
    y.backward(c.at("g"));
    EXPECT_TRUE(test::all_close(x.grad(), test::to_vector(c.at("dx")), 0, tolerance));
    ++checked;
  }
  EXPECT_EQ(checked, 8);
}

// Row c kH kW + i kW + j, column oh W_b + ow of unfold is x[c, oh s_h - p_h + i d_h, ow s_w - p_w +
// j d_w], 0 outside the image; and fold is its adjoint: <unfold(x), y> = <x, fold(y)> for any x,
// y (float64 sums of ~200 products, both within 1e-13 of the exact value).
TEST(Fold, UnfoldIsItsLoopAndFoldItsAdjoint) {
  struct Case {
    std::int64_t c, h, w;
    Size2 k, d, p, s;
  };
  const std::vector<Case> cases = {{2, 5, 4, {2, 2}, {1, 1}, {0, 0}, {1, 1}},
                                   {3, 6, 7, {3, 2}, {2, 1}, {2, 1}, {1, 3}},
                                   {1, 4, 9, {1, 4}, {1, 2}, {0, 3}, {2, 2}}};
  std::uint64_t seed = 700;
  for (const Case& k : cases) {
    SCOPED_TRACE(::testing::Message() << "C " << k.c << ", H " << k.h << ", W " << k.w);
    const Tensor x = test::uniform_input({k.c, k.h, k.w}, -1, 1, seed++).detach();
    const Tensor columns = unfold(x, k.k, k.d, k.p, k.s);
    const std::int64_t bh = (k.h + 2 * k.p[0] - k.d[0] * (k.k[0] - 1) - 1) / k.s[0] + 1;
    const std::int64_t bw = (k.w + 2 * k.p[1] - k.d[1] * (k.k[1] - 1) - 1) / k.s[1] + 1;
    ASSERT_EQ(columns.shape(), (Shape{k.c * k.k[0] * k.k[1], bh * bw}));
    const std::vector<double> xv = test::to_vector(x);
    std::vector<double> expected;
    for (std::int64_t ch = 0; ch < k.c; ++ch)
      for (std::int64_t i = 0; i < k.k[0]; ++i)
        for (std::int64_t j = 0; j < k.k[1]; ++j)
          for (std::int64_t oh = 0; oh < bh; ++oh)
            for (std::int64_t ow = 0; ow < bw; ++ow) {
              const std::int64_t r = oh * k.s[0] - k.p[0] + i * k.d[0];
              const std::int64_t q = ow * k.s[1] - k.p[1] + j * k.d[1];
              const bool inside = r >= 0 && r < k.h && q >= 0 && q < k.w;
              expected.push_back(inside ? xv[static_cast<std::size_t>((ch * k.h + r) * k.w + q)]
                                        : 0.0);
            }
    EXPECT_TRUE(test::all_close(columns, expected, 0, 0));
    const Tensor y = test::uniform_input(columns.shape(), -1, 1, seed++).detach();
    const Tensor image = fold(y, {k.h, k.w}, k.k, k.d, k.p, k.s);
    ASSERT_EQ(image.shape(), x.shape());
    const double left = test::to_vector(sum(mul(columns, y)))[0];
    const double right = test::to_vector(sum(mul(x, image)))[0];
    EXPECT_NEAR(left, right, 1e-13);
  }
}

TEST(FoldGrad, FirstAndSecondOrder) {
  const Tensor x = test::uniform_input({2, 2, 5, 4}, -1, 1, 710);
  const auto unfolded = [](const std::vector<Tensor>& in) {
    return unfold(in[0], {2, 3}, {2, 1}, {1, 1}, {1, 2}).pow(2.0);
  };
  EXPECT_TRUE(test::gradcheck(unfolded, {x}));
  EXPECT_TRUE(test::gradgradcheck(unfolded, {x}));
  const Tensor columns = test::uniform_input({2, 2 * 4, 12}, -1, 1, 711);
  const auto folded = [](const std::vector<Tensor>& in) {
    return fold(in[0], {4, 5}, {2, 2}, {1, 1}, {0, 0}, {1, 1}).pow(2.0);
  };
  EXPECT_TRUE(test::gradcheck(folded, {columns}));
  EXPECT_TRUE(test::gradgradcheck(folded, {columns}));
}

TEST(FoldModules, AreTheFunctionsAndPrintAsPyTorch) {
  nn::Unfold unfold_module(nn::UnfoldOptions(3).padding(1).stride({1, 2}));
  nn::Fold fold_module(nn::FoldOptions({4, 6}, 3).padding(1).stride({1, 2}));
  EXPECT_EQ(unfold_module->extra_repr(),
            "kernel_size=(3, 3), dilation=(1, 1), padding=(1, 1), stride=(1, 2)");
  EXPECT_EQ(fold_module->extra_repr(),
            "output_size=(4, 6), kernel_size=(3, 3), dilation=(1, 1), padding=(1, 1), "
            "stride=(1, 2)");
  const Tensor x = test::uniform_input({2, 3, 4, 6}, -1, 1, 720).detach();
  const Tensor columns = unfold_module(x);
  EXPECT_TRUE(
      test::all_close(columns, test::to_vector(unfold(x, {3, 3}, {1, 1}, {1, 1}, {1, 2})), 0, 0));
  EXPECT_TRUE(test::all_close(
      fold_module(columns), test::to_vector(fold(columns, {4, 6}, {3, 3}, {1, 1}, {1, 1}, {1, 2})),
      0, 0));
}

}  // namespace
}  // namespace leangrad
