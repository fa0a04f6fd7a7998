// Indexing by tensors (Tensor::index and Tensor::index_put_ with integer index tensors and bool
// masks, autograd/advanced_indexing.cpp) against PyTorch 1.13 (tests/data/advanced_indexing.json,
// written by make_advanced_indexing.py): the values moved bit for bit and the gradients (sums of
// the weights at repeated positions) within a few roundings; index_put_'s result and its value's
// gradient; a position named twice takes its last value; against a plain loop for a mask; bad
// indices refused (the AdvancedIndexing misuse table of tests/misuse/test_misuse_tensors.cpp).
#include <cstdint>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include <leangrad/autograd/engine.h>
#include <leangrad/autograd/functions.h>
#include <leangrad/autograd/indexing_functions.h>
#include <leangrad/core/creation.h>
#include <leangrad/core/indexing.h>
#include <leangrad/kernels/creation.h>
#include "testing/gradcheck.h"
#include "testing/reference_data.h"
#include "testing/tensor_testing.h"

namespace leangrad::test {
namespace {

using namespace leangrad::indexing;

const std::vector<ReferenceCase>& cases() {
  static const std::vector<ReferenceCase> all = load_reference("advanced_indexing.json");
  return all;
}

// The index list params["index"] spells (make_advanced_indexing.py).
std::vector<TensorIndex> index_list(const ReferenceCase& c) {
  std::vector<TensorIndex> list;
  for (const nlohmann::json& entry : c.params.at("index")) {
    if (entry.contains("int")) {
      list.emplace_back(entry.at("int").get<std::int64_t>());
    } else if (entry.contains("slice")) {
      const auto bound = [&](int k) -> std::optional<std::int64_t> {
        const nlohmann::json& b = entry.at("slice").at(k);
        if (b.is_null()) return None;
        return b.get<std::int64_t>();
      };
      list.emplace_back(Slice(bound(0), bound(1), bound(2)));
    } else if (entry.contains("none")) {
      list.emplace_back(None);
    } else if (entry.contains("ellipsis")) {
      list.emplace_back(Ellipsis);
    } else {
      list.emplace_back(c.at(entry.at("tensor").get<std::string>()));
    }
  }
  return list;
}

TEST(AdvancedIndexing, ReadsAsPyTorch) {
  int checked = 0;
  for (const ReferenceCase& c : cases()) {
    if (c.tensors.count("out") == 0) continue;
    SCOPED_TRACE(c.name);
    Tensor x = c.at("x").clone().requires_grad_();
    const Tensor out = x.index(index_list(c));
    ASSERT_EQ(out.shape(), c.at("out").shape());
    EXPECT_TRUE(matches_within_roundoff(out, c.at("out"), {}, {.bitwise = true}));
    sum(mul(out, c.at("w"))).backward();
    // Each element's gradient sums the weights of the places it went to (a few at most).
    EXPECT_TRUE(matches_within_roundoff(x.grad(), c.at("d_x"), {}, {.ulps = 8}));
    ++checked;
  }
  EXPECT_EQ(checked, 14);
}

TEST(AdvancedIndexing, WritesAsPyTorch) {
  int checked = 0;
  for (const ReferenceCase& c : cases()) {
    if (c.tensors.count("put") == 0) continue;
    SCOPED_TRACE(c.name);
    Tensor y = c.at("x").clone();
    const nlohmann::json& value = c.params.at("value");
    const std::vector<TensorIndex> list = index_list(c);
    // index_put_ takes an initializer list, as LibTorch's: the cases have at most three entries.
    const auto put = [&](const auto& v) {
      switch (list.size()) {
        case 1:
          y.index_put_({list[0]}, v);
          break;
        case 2:
          y.index_put_({list[0], list[1]}, v);
          break;
        default:
          ASSERT_EQ(list.size(), 3u);
          y.index_put_({list[0], list[1], list[2]}, v);
      }
    };
    if (value.is_number()) {
      put(value.get<double>());
      EXPECT_TRUE(matches_within_roundoff(y, c.at("put"), {}, {.bitwise = true}));
    } else {
      Tensor v = c.at("v").clone().requires_grad_();
      put(v);
      EXPECT_TRUE(matches_within_roundoff(y, c.at("put"), {}, {.bitwise = true}));
      sum(mul(y, c.at("w"))).backward();
      EXPECT_TRUE(matches_within_roundoff(v.grad(), c.at("d_v"), {}, {.ulps = 8}));
    }
    ++checked;
  }
  EXPECT_EQ(checked, 6);
}

// A mask against a loop: x[m] lists the elements where m holds, in row-major order, and
// x[m] = -x[m] negates exactly those.
TEST(AdvancedIndexing, MaskMatchesALoop) {
  const Tensor x = arange(0.0, 24.0).reshape({2, 3, 4});
  const Tensor m = gt(remainder(x, 5.0), 2.0);
  std::vector<double> want;
  for (double v : to_vector(x))
    if (std::fmod(v, 5.0) > 2.0) want.push_back(v);
  EXPECT_TRUE(all_close(x.index({m}), want, 0.0, 0.0));
  Tensor y = x.clone();
  y.index_put_({m}, neg(x.index({m})));
  const auto got = to_vector(y);
  const auto xs = to_vector(x);
  for (std::size_t i = 0; i < xs.size(); ++i)
    EXPECT_EQ(got[i], std::fmod(xs[i], 5.0) > 2.0 ? -xs[i] : xs[i]) << "element " << i;
  // A mask over the last two dims after an integer, and the same through a broadcast scalar.
  Tensor z = x.clone();
  z.index_put_({1, gt(x.select(0, 1), 18.0)}, 0.0);
  EXPECT_EQ(sum(eq(z, 0.0)).item<std::int64_t>(), 1 + 5);  // x's own 0, and 19..23
}

// Every dtype takes values by a mask (uint8 and bool through int64 sums of distinct rows).
TEST(AdvancedIndexing, WritesEveryDtype) {
  for (const DType dtype :
       {kFloat32, kFloat64, kFloat16, kBFloat16, kInt64, kInt32, kUInt8, kBool}) {
    SCOPED_TRACE(dtype_name(dtype));
    Tensor x = zeros({2, 3}, TensorOptions(dtype));
    const Tensor m = make_tensor({1, 0, 1, 0, 0, 1}, {2, 3}, kBool);
    x.index_put_({m}, 1.0);
    EXPECT_TRUE(all_close(x.to(kFloat64), {1, 0, 1, 0, 0, 1}, 0.0, 0.0));
    EXPECT_TRUE(all_close(x.index({m}).to(kFloat64), {1, 1, 1}, 0.0, 0.0));
  }
}

// A position named twice keeps the last value given for it, and only that occurrence gets the
// gradient (PyTorch leaves the winner open; leangrad's rule is the last).
TEST(AdvancedIndexing, APositionNamedTwiceTakesItsLastValue) {
  Tensor y = zeros({4});
  Tensor v = make_tensor({1.0, 2.0, 3.0, 4.0, 5.0}, {5}, kFloat32).requires_grad_();
  const Tensor idx = make_tensor({2, 0, 2, 3, 0}, {5}, kInt64);
  y.index_put_({idx}, v);
  EXPECT_TRUE(all_close(y, {5.0, 0.0, 3.0, 4.0}, 0.0, 0.0));
  sum(mul(y, make_tensor({10.0, 20.0, 30.0, 40.0}, {4}, kFloat32))).backward();
  EXPECT_TRUE(all_close(v.grad(), {0.0, 0.0, 30.0, 40.0, 10.0}, 0.0, 0.0));
}

// torch::index_put, out of place: the in-place form on a copy, self untouched, and gradients by
// finite differences (self's written positions get none; values' repeated positions, with
// accumulate, get each their share).
// A value with extra leading size-1 dims fits, as PyTorch's setitem drops them (t[0] =
// ones(1, 3, 4)): on the basic, the advanced and the mask paths; the others still do not.
TEST(AdvancedIndexing, AValuesLeadingOnesAreDropped) {
  Tensor t = zeros({2, 3, 4}, kFloat64);
  const Tensor v = arange(0, 12, 1, kFloat64).reshape({1, 3, 4});
  t.index_put_({0}, v);
  EXPECT_TRUE(equal(t.select(0, 0), v.reshape({3, 4})));
  t.index_put_({1}, v, /*accumulate=*/true);
  EXPECT_TRUE(equal(t.select(0, 1), v.reshape({3, 4})));
  Tensor u = zeros({2, 3, 4}, kFloat64);
  u.index_put_({Slice(), tensor(std::vector<std::int64_t>{0, 1}, {2})},
               ones({1, 1, 2, 2, 4}, kFloat64));
  EXPECT_EQ(test::max_abs(sub(u.narrow(1, 0, 2), 1.0)), 0.0);
  EXPECT_EQ(test::max_abs(u.select(1, 2)), 0.0);
  u.index_put_({gt(u, 5.0)}, ones({1, 0}, kFloat64));  // no place, no value
  EXPECT_THROW(t.index_put_({0}, ones({2, 3, 4}, kFloat64)), ShapeError);
  const std::string m = error_message([&] { t.index_put_({0}, ones({2, 4}, kFloat64)); });
  EXPECT_NE(
      m.find("index_put_: a value of shape [2, 4] cannot be broadcast to the indexed shape [3, 4]"),
      std::string::npos)
      << m;
}

TEST(AdvancedIndexing, IndexPutOutOfPlaceIsTheInPlaceFormOnACopy) {
  const Tensor self = arange(0.0, 12.0, 1.0, TensorOptions(kFloat64)).reshape({3, 4});
  const Tensor rows = make_tensor({2, 0, 2}, {3}, kInt64);
  const Tensor cols = make_tensor({1, 3, 1}, {3}, kInt64);
  const Tensor values = make_tensor({-1.0, -2.0, -3.0}, {3}, kFloat64);
  for (const bool accumulate : {false, true}) {
    SCOPED_TRACE(accumulate ? "accumulate" : "assign");
    Tensor want = self.clone();
    want.index_put_({rows, cols}, values, accumulate);
    const Tensor got = index_put(self, {rows, cols}, values, accumulate);
    EXPECT_TRUE(equal(got, want));
    // A whole dim (std::nullopt) before a mask.
    Tensor masked = self.clone();
    const Tensor mask = make_tensor({1, 0, 0, 1}, {4}, kBool);
    masked.index_put_({Slice(), mask}, values.reshape({3, 1}), accumulate);
    EXPECT_TRUE(
        equal(index_put(self, {std::nullopt, mask}, values.reshape({3, 1}), accumulate), masked));
  }
  EXPECT_EQ(self.index({1, 2}).item<double>(), 6.0);  // self is not changed
  // Without any tensor index: a slice of dim 0 written whole.
  const Tensor row = index_put(self, {std::nullopt}, zeros({4}, kFloat64));
  EXPECT_TRUE(equal(row, zeros({3, 4}, kFloat64)));
  for (const bool accumulate : {false, true}) {
    const Tensor x = uniform_input({3, 4}, -1.0, 1.0, 7);
    const Tensor v = uniform_input({3}, -1.0, 1.0, 8);
    EXPECT_TRUE(gradcheck(
        [&](const auto& in) {
          return index_put(in[0], {rows, cols}, in[1], accumulate);
        },
        {x, v}));
  }
  EXPECT_THROW(index_put(Tensor(), {rows}, values), Error);
  // The method (LibTorch's Tensor::index_put) is the function.
  EXPECT_TRUE(equal(self.index_put({rows, cols}, values, true),
                    index_put(self, {rows, cols}, values, true)));
}

}  // namespace
}  // namespace leangrad::test
