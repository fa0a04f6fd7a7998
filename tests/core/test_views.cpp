// Views: shapes, strides and offsets against hand-computed expectations, aliasing through the
// shared storage and version counter, and the errors bad arguments raise.
#include <gtest/gtest.h>

#include <leangrad/autograd/functions.h>
#include <leangrad/core/creation.h>
#include "testing/tensor_testing.h"

namespace leangrad {
namespace {

// 0..n-1 as float32 in `shape`.
Tensor iota(const Shape& shape) {
  std::vector<double> values(static_cast<std::size_t>(shape_numel(shape)));
  for (std::size_t i = 0; i < values.size(); ++i)
    values[i] = static_cast<double>(i);
  return test::make_tensor(values, shape);
}

TEST(Views, ViewSharesStorageAndInfersSize) {
  Tensor a = iota({2, 3, 4});
  Tensor v = a.view({6, -1});
  EXPECT_EQ(v.shape(), (Shape{6, 4}));
  EXPECT_EQ(v.strides(), (Strides{4, 1}));
  EXPECT_TRUE(v.shares_storage(a));
  v.fill_(7);
  EXPECT_TRUE(test::all_close(a, std::vector<double>(24, 7.0)));
}

TEST(Views, VersionCounterIsSharedByViews) {
  Tensor a = iota({4, 4});
  Tensor s = a.slice(0, 1, 3);
  const auto before = a.version();
  s.zero_();
  EXPECT_GT(a.version(), before);
  EXPECT_EQ(a.version(), s.version());
  EXPECT_EQ(a.detach().version(), a.version());
}

TEST(Views, TransposeAndPermuteSwapStrides) {
  Tensor a = iota({2, 3, 4});
  Tensor t = a.transpose(0, 2);
  EXPECT_EQ(t.shape(), (Shape{4, 3, 2}));
  EXPECT_EQ(t.strides(), (Strides{1, 4, 12}));
  EXPECT_FALSE(t.is_contiguous());
  Tensor p = a.permute({1, 2, 0});
  EXPECT_EQ(p.shape(), (Shape{3, 4, 2}));
  // p[i][j][k] == a[k][i][j]
  const auto values = test::to_vector(p);
  for (std::int64_t i = 0; i < 3; ++i)
    for (std::int64_t j = 0; j < 4; ++j)
      for (std::int64_t k = 0; k < 2; ++k)
        EXPECT_EQ(values[(i * 4 + j) * 2 + k], static_cast<double>(k * 12 + i * 4 + j));
}

TEST(Views, SliceWithStepAndNegativeBounds) {
  Tensor a = iota({10});
  EXPECT_TRUE(test::all_close(a.slice(0, 1, 8, 3), {1, 4, 7}));
  EXPECT_TRUE(test::all_close(a.slice(0, -3, 100), {7, 8, 9}));
  EXPECT_EQ(a.slice(0, 5, 2).numel(), 0);
  Tensor m = iota({3, 4});
  Tensor cols = m.slice(1, 1, 4, 2);
  EXPECT_EQ(cols.strides(), (Strides{4, 2}));
  EXPECT_EQ(cols.storage_offset(), 1);
  EXPECT_TRUE(test::all_close(cols, {1, 3, 5, 7, 9, 11}));
}

TEST(Views, SelectUnsqueezeSqueeze) {
  Tensor a = iota({3, 4});
  EXPECT_TRUE(test::all_close(a.select(1, -1), {3, 7, 11}));
  EXPECT_TRUE(test::all_close(a.select(0, 2), {8, 9, 10, 11}));
  Tensor u = a.unsqueeze(1);
  EXPECT_EQ(u.shape(), (Shape{3, 1, 4}));
  EXPECT_EQ(u.unsqueeze(-1).shape(), (Shape{3, 1, 4, 1}));
  EXPECT_EQ(u.squeeze().shape(), (Shape{3, 4}));
  EXPECT_EQ(u.squeeze(0).shape(), (Shape{3, 1, 4}));  // not size 1: unchanged, as in PyTorch
  EXPECT_EQ(a.select(0, 1).select(0, 2).dim(), 0);
  EXPECT_EQ(a.select(0, 1).select(0, 2).item<float>(), 6.0f);
}

TEST(Views, ExpandUsesZeroStrides) {
  Tensor col = iota({3, 1});
  Tensor e = col.expand({2, 3, 4});
  EXPECT_EQ(e.strides(), (Strides{0, 1, 0}));
  const auto values = test::to_vector(e);
  for (std::int64_t i = 0; i < 24; ++i)
    EXPECT_EQ(values[i], static_cast<double>((i / 4) % 3));
  EXPECT_EQ(col.expand({-1, 5}).shape(), (Shape{3, 5}));
}

TEST(Views, ReshapeCopiesOnlyWhenItMust) {
  Tensor a = iota({4, 6});
  Tensor r = a.reshape({2, 12});
  EXPECT_TRUE(r.shares_storage(a));
  Tensor t = a.transpose(0, 1);  // (6, 4), not viewable as (24,)
  Tensor flat = t.reshape({-1});
  EXPECT_FALSE(flat.shares_storage(a));
  std::vector<double> expected;
  for (int j = 0; j < 6; ++j)
    for (int i = 0; i < 4; ++i)
      expected.push_back(i * 6 + j);
  EXPECT_TRUE(test::all_close(flat, expected));
  // A transposed tensor can still be viewed where its chunks allow: split the leading dim.
  EXPECT_EQ(t.view({3, 2, 4}).strides(), (Strides{2, 1, 6}));
  EXPECT_EQ(a.flatten().shape(), (Shape{24}));
  EXPECT_EQ(iota({2, 3, 4, 5}).flatten(1, 2).shape(), (Shape{2, 12, 5}));
}

TEST(Views, ContiguousOfViewMatchesLogicalOrder) {
  Tensor a = iota({3, 4});
  Tensor c = a.transpose(0, 1).contiguous();
  EXPECT_TRUE(c.is_contiguous());
  EXPECT_TRUE(test::all_close(c, {0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11}));
  EXPECT_TRUE(a.contiguous().is_same(a));  // already contiguous: no copy
}

TEST(Views, BadArgumentsThrowShapeErrorsNamingShapes) {
  Tensor a = iota({2, 3});
  try {
    a.view({4, 2});
    FAIL() << "expected ShapeError";
  } catch (const ShapeError& e) {
    EXPECT_NE(std::string(e.what()).find("[4, 2]"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("6"), std::string::npos) << e.what();
  }
  EXPECT_THROW(a.transpose(0, 1).view({6}), ShapeError);
  EXPECT_THROW(a.view({-1, -1}), ShapeError);
  EXPECT_THROW(a.permute({0, 0}), ShapeError);
  EXPECT_THROW(a.permute({0}), ShapeError);
  EXPECT_THROW(a.transpose(0, 2), ShapeError);
  EXPECT_THROW(a.select(0, 2), ShapeError);
  EXPECT_THROW(a.slice(1, 0, 2, 0), ShapeError);
  EXPECT_THROW(a.expand({2, 4}), ShapeError);
  EXPECT_THROW(a.expand({3}), ShapeError);
  EXPECT_THROW(a.unsqueeze(4), ShapeError);
  EXPECT_THROW(a.flatten(1, 0), ShapeError);
  EXPECT_THROW(a.size(2), ShapeError);
}

// A view without elements reads nothing, but its offset and strides are still numbers that
// select, is_contiguous and data_ptr compute with: each stays in int64 or is a ShapeError.
TEST(Views, ViewsWithoutElementsKeepTheirArithmeticInInt64) {
  constexpr std::int64_t k2Pow40 = std::int64_t{1} << 40;
  const Tensor t = empty({k2Pow40, 0, k2Pow40});  // strides [2^40, 2^40, 1], no bytes
  EXPECT_EQ(t.select(0, 5).storage_offset(), 5 * k2Pow40);
  EXPECT_THROW(t.select(0, (std::int64_t{1} << 24) + 1), ShapeError);  // offset past 2^63
  EXPECT_TRUE(t.permute({1, 0, 2}).is_contiguous());  // the other sizes' product overflows
  // An offset whose bytes overflow: refused when the view is made, before data_ptr computes it.
  const Tensor x = empty({8}, kFloat64);
  const Tensor v = x.slice(0, 0, 0).view({2, 0, std::int64_t{1} << 61});
  EXPECT_THROW(v.select(0, 1), ShapeError);
}

}  // namespace
}  // namespace leangrad
