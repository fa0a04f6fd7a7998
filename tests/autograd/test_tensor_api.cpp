// The LibTorch-shaped tensor API (issue 18): reductions over one dim, max/min pairs, amin, argmin,
// var and std, clamp, square, masked_fill, t, mm, compound assignment, basic indexing, the
// comparison operators, allclose
// and equal, linspace, eye, randint, tensor({...}) and the TensorOptions shorthands. Values are
// checked against reference loops written here over plain vectors; every differentiable one
// also has its float64 gradcheck.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include <leangrad/autograd/autocast.h>
#include <leangrad/autograd/functions.h>
#include <leangrad/autograd/grad_mode.h>
#include <leangrad/autograd/nn_functions.h>
#include <leangrad/core/creation.h>
#include <leangrad/core/generator.h>
#include <leangrad/core/indexing.h>
#include <leangrad/kernels/creation.h>
#include "testing/gradcheck.h"
#include "testing/reference_data.h"
#include "testing/tensor_testing.h"

// Outside namespace leangrad and without a using-directive: the shape printer must be found by
// argument-dependent lookup, as `std::cout << t.sizes()` in a user's main() needs.
static std::string print_sizes_from_outside(const leangrad::Tensor& t) {
  std::ostringstream out;
  out << t.sizes();
  return out.str();
}

namespace leangrad {
namespace {

using Inputs = std::vector<Tensor>;
using test::all_close;
using test::gradcheck;
using test::make_tensor;
using test::to_vector;
using test::uniform_input;
using namespace indexing;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

TEST(TensorApi, ShapePrintsByArgumentDependentLookup) {
  EXPECT_EQ(print_sizes_from_outside(zeros({2, 3, 4})), "[2, 3, 4]");
}

TEST(TensorApi, ReductionsTakeOneIntegerDim) {
  const Tensor x = make_tensor({1, 2, 3, 4, 5, 6}, {2, 3}, kFloat64);
  EXPECT_TRUE(all_close(x.sum(1), {6, 15}));
  EXPECT_TRUE(all_close(x.sum(0, /*keepdim=*/true), {5, 7, 9}));
  EXPECT_EQ(x.sum(0, true).shape(), Shape({1, 3}));
  EXPECT_TRUE(all_close(x.mean(-1), {2, 5}));
}

// (values, indices) of one dim against a loop; ties give the first index, a NaN wins.
TEST(TensorApi, MaxAndMinOfOneDimGiveValuesAndFirstIndices) {
  const std::vector<double> v = {3, 1, 3, -2, 7, -2, 0, kNaN, 5};
  const Tensor x = make_tensor(v, {3, 3}, kFloat32);
  const auto [max_values, max_indices] = x.max(1);
  const auto [min_values, min_indices] = x.min(1);
  EXPECT_TRUE(all_close(max_values, {3, 7, kNaN}));
  EXPECT_TRUE(all_close(max_indices, {0, 1, 1}));
  EXPECT_TRUE(all_close(min_values, {1, -2, kNaN}));
  EXPECT_TRUE(all_close(min_indices, {1, 0, 1}));
  EXPECT_EQ(max_indices.dtype(), kInt64);
  const auto [kept, kept_indices] = x.max(0, /*keepdim=*/true);
  EXPECT_EQ(kept.shape(), Shape({1, 3}));
  EXPECT_TRUE(all_close(kept_indices, {0, 2, 2}));
  EXPECT_TRUE(all_close(x.slice(0, 0, 2).min(), {-2}));
  EXPECT_TRUE(all_close(x.slice(0, 0, 2).argmin(), {3}));
  EXPECT_TRUE(all_close(x.amin({0}), {-2, kNaN, -2}));
}

// min of integers reverses the order by the bitwise complement: the extremes of int64 survive.
TEST(TensorApi, MinOfIntegersIsExactAtTheExtremes) {
  const std::int64_t lo = std::numeric_limits<std::int64_t>::min();
  const std::int64_t hi = std::numeric_limits<std::int64_t>::max();
  const Tensor a = tensor(std::vector<std::int64_t>{hi, 5, lo, -1, lo});
  EXPECT_EQ(a.min().item<std::int64_t>(), lo);
  EXPECT_EQ(a.argmin().item<std::int64_t>(), 2);
  EXPECT_EQ(a.max().item<std::int64_t>(), hi);
  const Tensor b = tensor(std::vector<std::uint8_t>{200, 255, 3, 0, 9});
  EXPECT_EQ(b.min().item<std::int64_t>(), 0);
  EXPECT_EQ(b.min().dtype(), kUInt8);
  EXPECT_EQ(b.argmin().item<std::int64_t>(), 3);
  const Tensor c = tensor(std::vector<std::int32_t>{4, -7, 2});
  EXPECT_EQ(c.min().item<std::int64_t>(), -7);
  const Tensor d = make_tensor({1, 0, 1}, {3}, kBool);
  EXPECT_EQ(d.min().dtype(), kBool);
  EXPECT_FALSE(d.min().item<bool>());
  EXPECT_EQ(d.argmin().item<std::int64_t>(), 1);
  // Along a dim: a row holding a false has false as its min, at the first false.
  const Tensor e = make_tensor({1, 0, 0, 1, 1, 1}, {2, 3}, kBool);
  const auto [values, indices] = e.min(1);
  EXPECT_EQ(values.dtype(), kBool);
  EXPECT_EQ(to_vector(values), (std::vector<double>{0, 1}));
  EXPECT_EQ(to_vector(indices), (std::vector<double>{1, 0}));
  EXPECT_EQ(to_vector(e.argmin(1)), (std::vector<double>{1, 0}));
  const Tensor lowest = amin(e, {1});
  EXPECT_EQ(lowest.dtype(), kBool);
  EXPECT_EQ(to_vector(lowest), (std::vector<double>{0, 1}));
}

// Two-pass variance in double over the rows of a (rows, cols) matrix.
std::vector<double> row_variances(const std::vector<double>& x, int rows, int cols, bool unbiased) {
  std::vector<double> out;
  for (int r = 0; r < rows; ++r) {
    double mean = 0;
    for (int c = 0; c < cols; ++c)
      mean += x[r * cols + c];
    mean /= cols;
    double squares = 0;
    for (int c = 0; c < cols; ++c)
      squares += (x[r * cols + c] - mean) * (x[r * cols + c] - mean);
    out.push_back(squares / (cols - (unbiased ? 1 : 0)));
  }
  return out;
}

TEST(TensorApi, VarAndStdMatchATwoPassLoop) {
  const Tensor x = uniform_input({4, 7}, -3.0, 5.0, 11).detach();
  const std::vector<double> v = to_vector(x);
  // float64: the composed passes round each of about 2 * 7 operations once.
  const double rtol = 64 * std::numeric_limits<double>::epsilon();
  for (bool unbiased : {true, false}) {
    SCOPED_TRACE(unbiased ? "unbiased" : "biased");
    const std::vector<double> var = row_variances(v, 4, 7, unbiased);
    std::vector<double> sd;
    for (double s : var)
      sd.push_back(std::sqrt(s));
    EXPECT_TRUE(all_close(x.var(1, unbiased), var, rtol, 0));
    EXPECT_TRUE(all_close(x.std(1, unbiased), sd, rtol, 0));
    EXPECT_TRUE(all_close(x.t().var({0}, unbiased, /*keepdim=*/true), var, rtol, 0));
    EXPECT_TRUE(all_close(x.var({0, 1}, unbiased), row_variances(v, 1, 28, unbiased), rtol, 0));
  }
  // LibTorch's spellings: var() and var(true) unbiased over everything, var(false) biased.
  EXPECT_TRUE(all_close(x.var(), row_variances(v, 1, 28, true), rtol, 0));
  EXPECT_TRUE(all_close(x.var(false), row_variances(v, 1, 28, false), rtol, 0));
  EXPECT_TRUE(all_close(x.std(true), {std::sqrt(row_variances(v, 1, 28, true)[0])}, rtol, 0));
  // One element, unbiased: 0 / 0.
  EXPECT_TRUE(std::isnan(make_tensor({2.5}, {1}, kFloat64).var().item<double>()));
  EXPECT_THROW(tensor(std::vector<std::int64_t>{1, 2}).var(), DTypeError);
}

// One unit in the last place of a float16 or bfloat16 value of r's magnitude (r normal).
double sixteen_bit_ulp(double r, DType dtype) {
  return std::ldexp(1.0, std::ilogb(r) - (dtype == kBFloat16 ? 7 : 10));
}

// float16 and bfloat16 var and std against PyTorch's (tests/data/make_amp.py): both compute in
// float (the exact value within a few float32 roundings, far below a 16-bit ulp) and round once
// to 16 bits, so the results are equal or neighbours: within one 16-bit ulp. Rounding each step
// of the two passes to 16 bits instead misses by many ulps on these inputs (a spread small
// beside the mean). Under autocast the result keeps the input's dtype, as PyTorch's (var and std
// are in none of its lists).
TEST(TensorApi, VarAndStdOfSixteenBitFloatsMatchPyTorch) {
  int checked = 0;
  for (const test::ReferenceCase& c : test::load_reference("amp.json")) {
    const bool is_var = c.name.rfind("var_", 0) == 0;
    if (!is_var && c.name.rfind("std_", 0) != 0) continue;
    SCOPED_TRACE(c.name);
    const Tensor& x = c.at("x");
    const Tensor& expected = c.at("y");
    const DimList dims = c.params["dims"].get<std::vector<std::int64_t>>();
    const bool unbiased = c.params["unbiased"].get<bool>();
    const bool keepdim = c.params["keepdim"].get<bool>();
    for (bool autocast : {false, true}) {
      SCOPED_TRACE(autocast ? "under autocast" : "no autocast");
      std::optional<amp::AutocastGuard> guard;
      if (autocast) guard.emplace(x.dtype());
      const Tensor y = is_var ? x.var(dims, unbiased, keepdim) : x.std(dims, unbiased, keepdim);
      ASSERT_EQ(y.dtype(), x.dtype());
      ASSERT_EQ(y.shape(), expected.shape());
      const std::vector<double> got = test::to_vector(y), want = test::to_vector(expected);
      for (std::size_t i = 0; i < got.size(); ++i)
        EXPECT_LE(std::fabs(got[i] - want[i]), sixteen_bit_ulp(want[i], x.dtype()))
            << "at " << i << ": " << got[i] << " vs PyTorch's " << want[i];
    }
    ++checked;
  }
  EXPECT_EQ(checked, 12);
}

TEST(TensorApi, ClampLimitsAndKeepsNaN) {
  const Tensor x = make_tensor({-3, -1, 0, 1, 3, kNaN}, {6}, kFloat32);
  EXPECT_TRUE(all_close(x.clamp(-1, 1), {-1, -1, 0, 1, 1, kNaN}));
  EXPECT_TRUE(all_close(x.clamp_min(0), {0, 0, 0, 1, 3, kNaN}));
  EXPECT_TRUE(all_close(x.clamp_max(0), {-3, -1, 0, 0, 0, kNaN}));
  EXPECT_TRUE(all_close(x.clamp(std::nullopt, 2), {-3, -1, 0, 1, 2, kNaN}));
  // min > max: every element is max, as PyTorch.
  EXPECT_TRUE(all_close(x.clamp(2, 1).slice(0, 0, 5), {1, 1, 1, 1, 1}));
  EXPECT_EQ(tensor(std::vector<std::int64_t>{-5, 5}).clamp(0, 3).dtype(), kInt64);
  EXPECT_THROW(x.clamp(std::nullopt, std::nullopt), Error);
}

TEST(TensorApi, MaskedFillBroadcastsTheMask) {
  const Tensor x = make_tensor({1, 2, 3, 4, 5, 6}, {2, 3}, kFloat32);
  const Tensor mask = make_tensor({1, 0, 1}, {3}, kBool);
  EXPECT_TRUE(all_close(x.masked_fill(mask, -1), {-1, 2, -1, -1, 5, -1}));
  EXPECT_TRUE(all_close(x.masked_fill(mask, full({}, 9.0, kFloat64)), {9, 2, 9, 9, 5, 9}));
  EXPECT_EQ(x.masked_fill(mask, full({}, 9.0, kFloat64)).dtype(), kFloat32);
  EXPECT_THROW(x.masked_fill(ones({3}), 0.0), DTypeError);
  EXPECT_THROW(x.masked_fill(make_tensor({1, 0}, {2}, kBool), 0.0), ShapeError);
  // A mask with more dims broadcasts the result, as PyTorch's out-of-place masked_fill.
  const Tensor wide = x.masked_fill(make_tensor({0, 1}, {2, 1, 1}, kBool), -1);
  EXPECT_EQ(wide.shape(), Shape({2, 2, 3}));
  EXPECT_TRUE(all_close(wide, {1, 2, 3, 4, 5, 6, -1, -1, -1, -1, -1, -1}));
}

TEST(TensorApi, SquareTransposeAndMm) {
  const Tensor a = make_tensor({1, -2, 3, 4, 5, -6}, {2, 3}, kFloat64);
  EXPECT_TRUE(all_close(a.square(), {1, 4, 9, 16, 25, 36}));
  EXPECT_EQ(a.t().shape(), Shape({3, 2}));
  EXPECT_TRUE(all_close(a.t(), {1, 4, -2, 5, 3, -6}));
  EXPECT_EQ(a.select(0, 0).t().shape(), Shape({3}));
  EXPECT_THROW(zeros({2, 2, 2}).t(), ShapeError);
  // (2, 3) x (3, 2) by hand.
  EXPECT_TRUE(all_close(a.mm(a.t()), {14, -24, -24, 77}));
  EXPECT_THROW(a.mm(ones({3}, kFloat64)), ShapeError);
}

// log_softmax of a row-major (rows, cols) matrix along `dim`, in double: x - max - log(sum exp).
std::vector<double> log_softmax_loop(const std::vector<double>& v, int rows, int cols, int dim) {
  const int lines = dim == 1 ? rows : cols, length = dim == 1 ? cols : rows;
  auto at = [&](int line, int k) { return dim == 1 ? cols * line + k : cols * k + line; };
  std::vector<double> out(v.size());
  for (int line = 0; line < lines; ++line) {
    double max = -1e300, sum = 0;
    for (int k = 0; k < length; ++k)
      max = std::max(max, v[at(line, k)]);
    for (int k = 0; k < length; ++k)
      sum += std::exp(v[at(line, k)] - max);
    for (int k = 0; k < length; ++k)
      out[at(line, k)] = v[at(line, k)] - max - std::log(sum);
  }
  return out;
}

TEST(TensorApi, SoftmaxMethodsMatchALoop) {
  // softmax over dim 1 and log_softmax over dim 0 of a (3, 5) float64 tensor against loops
  // written here: within a few roundings of values below 1 (softmax) and 8 (log_softmax).
  const Tensor x = uniform_input({3, 5}, -2.0, 2.0, 3).detach();
  const std::vector<double> v = to_vector(x);
  std::vector<double> soft = log_softmax_loop(v, 3, 5, 1);
  for (double& e : soft)
    e = std::exp(e);
  const std::vector<double> log_soft = log_softmax_loop(v, 3, 5, 0);
  EXPECT_TRUE(all_close(x.softmax(1), soft, 1e-12, 1e-14));
  EXPECT_TRUE(all_close(x.log_softmax(0), log_soft, 1e-12, 1e-13));
}

TEST(TensorApi, CompoundAssignmentIsInPlace) {
  Tensor a = make_tensor({1, 2, 3}, {3}, kFloat32);
  const Tensor b = make_tensor({4, 8, 16}, {3}, kFloat32);
  const Tensor alias = a;
  a += b;
  EXPECT_TRUE(all_close(alias, {5, 10, 19}));
  a -= 1.0;
  EXPECT_TRUE(all_close(alias, {4, 9, 18}));
  a *= b;
  EXPECT_TRUE(all_close(alias, {16, 72, 288}));
  a /= b;
  EXPECT_TRUE(all_close(alias, {4, 9, 18}));
  a /= 2.0;
  a -= b;
  EXPECT_TRUE(all_close(alias, {-2, -3.5, -7}));
  a.sub_(b, 0.5);
  EXPECT_TRUE(all_close(alias, {-4, -7.5, -15}));
  Tensor leaf = ones({2}, requires_grad());
  EXPECT_THROW(leaf += 1.0, Error);
  {
    NoGradGuard no_grad;
    leaf += 1.0;
  }
  EXPECT_TRUE(all_close(leaf, {2, 2}));
}

TEST(TensorApi, BasicIndexingFollowsPython) {
  const Tensor x = arange(24, kFloat64).view({2, 3, 4});  // x[i, j, k] = 12 i + 4 j + k
  EXPECT_TRUE(all_close(x.index({1, 2}), {20, 21, 22, 23}));
  EXPECT_TRUE(all_close(x.index({Slice(0, 2), 1, -1}), {7, 19}));
  EXPECT_TRUE(
      all_close(x.index({Ellipsis, Slice(None, None, 2)}).select(0, 1).select(0, 0), {12, 14}));
  EXPECT_EQ(x.index({"...", 0}).shape(), Shape({2, 3}));
  EXPECT_EQ(x.index({None, 0, None}).shape(), Shape({1, 1, 3, 4}));
  EXPECT_EQ(x.index({0, Ellipsis, None}).shape(), Shape({3, 4, 1}));
  // Slice bounds: negative from the end, clamped, empty when stop <= start.
  EXPECT_TRUE(all_close(x.index({0, 0, Slice(-3)}), {1, 2, 3}));
  EXPECT_TRUE(all_close(x.index({0, 0, Slice(1, 100)}), {1, 2, 3}));
  EXPECT_EQ(x.index({0, 0, Slice(3, 1)}).numel(), 0);
  EXPECT_TRUE(all_close(x[1][0], {12, 13, 14, 15}));
  EXPECT_TRUE(x.index({Slice(), 1}).shares_storage(x));
  EXPECT_THROW(x.index({2}), ShapeError);
  EXPECT_THROW(x.index({0, 0, -5}), ShapeError);
  EXPECT_THROW(x.index({0, 0, 0, 0}), ShapeError);
  EXPECT_THROW(x.index({Ellipsis, 0, "..."}), Error);
  EXPECT_THROW(x.index({"..x"}), Error);
  EXPECT_THROW(Slice(0, 4, 0), Error);
}

TEST(TensorApi, IndexPutWritesThroughTheView) {
  Tensor x = zeros({3, 4}, kFloat32);
  const std::uint32_t version = x.version();
  x.index_put_({Slice(), 0}, 7.0);
  x.index_put_({1, Slice(1, None)}, make_tensor({1, 2, 3}, {3}, kFloat32));
  EXPECT_TRUE(all_close(x, {7, 0, 0, 0, 7, 1, 2, 3, 7, 0, 0, 0}));
  EXPECT_EQ(x.version(), version + 2);
}

// The comparison operators against C++'s own comparisons of the same doubles, element by element:
// tensor with tensor (broadcast (2, 1) against (4)), with a number on either side, NaN compared
// unordered; an int64 tensor against a fraction; and the README's mask, t.index_put_({t < 0}, 0).
TEST(TensorApi, ComparisonOperatorsAreElementwiseAndMirrorANumberOnTheLeft) {
  const std::vector<double> left = {-1.0, 2.0}, right = {-1.0, 0.5, 2.0, kNaN};
  const Tensor a = make_tensor(left, {2, 1}, kFloat32), b = make_tensor(right, {4}, kFloat32);
  using Compare = bool (*)(double, double);
  const std::vector<
      std::tuple<const char*, Tensor (*)(const Tensor&, const Tensor&),
                 Tensor (*)(const Tensor&, double), Tensor (*)(double, const Tensor&), Compare>>
      ops = {
          {"==", [](const Tensor& x, const Tensor& y) { return x == y; },
           [](const Tensor& x, double y) { return x == y; },
           [](double x, const Tensor& y) { return x == y; },
           [](double x, double y) { return x == y; }},
          {"!=", [](const Tensor& x, const Tensor& y) { return x != y; },
           [](const Tensor& x, double y) { return x != y; },
           [](double x, const Tensor& y) { return x != y; },
           [](double x, double y) { return x != y; }},
          {"<", [](const Tensor& x, const Tensor& y) { return x < y; },
           [](const Tensor& x, double y) { return x < y; },
           [](double x, const Tensor& y) { return x < y; },
           [](double x, double y) { return x < y; }},
          {"<=", [](const Tensor& x, const Tensor& y) { return x <= y; },
           [](const Tensor& x, double y) { return x <= y; },
           [](double x, const Tensor& y) { return x <= y; },
           [](double x, double y) { return x <= y; }},
          {">", [](const Tensor& x, const Tensor& y) { return x > y; },
           [](const Tensor& x, double y) { return x > y; },
           [](double x, const Tensor& y) { return x > y; },
           [](double x, double y) { return x > y; }},
          {">=", [](const Tensor& x, const Tensor& y) { return x >= y; },
           [](const Tensor& x, double y) { return x >= y; },
           [](double x, const Tensor& y) { return x >= y; },
           [](double x, double y) { return x >= y; }},
      };
  // The values as doubles, from a Bool tensor.
  const auto values = [](const Tensor& t) { return to_vector(t.to(kFloat64)); };
  for (const auto& [name, tensors, number_right, number_left, compare] : ops) {
    const Tensor both = tensors(a, b);
    ASSERT_EQ(both.dtype(), kBool) << name;
    ASSERT_EQ(both.shape(), Shape({2, 4})) << name;
    std::vector<double> want;
    for (double l : left)
      for (double r : right)
        want.push_back(compare(l, r) ? 1.0 : 0.0);
    EXPECT_EQ(values(both), want) << name;
    for (double number : {0.5, kNaN}) {
      std::vector<double> want_right, want_left;
      for (double r : right) {
        want_right.push_back(compare(r, number) ? 1.0 : 0.0);
        want_left.push_back(compare(number, r) ? 1.0 : 0.0);
      }
      EXPECT_EQ(values(number_right(b, number)), want_right) << name << " " << number;
      EXPECT_EQ(values(number_left(number, b)), want_left) << name << " " << number;
    }
    const Tensor integers = make_tensor({-1, 0, 1}, {3}, kInt64);
    std::vector<double> want_integers;
    for (double i : {-1.0, 0.0, 1.0})
      want_integers.push_back(compare(i, 0.5) ? 1.0 : 0.0);
    EXPECT_EQ(values(number_right(integers, 0.5)), want_integers) << name << " int64";
  }
  Tensor t = make_tensor({-2.0, 3.0, -0.5, kNaN, 0.0}, {5}, kFloat32);
  t.index_put_({t < 0}, 0.0);
  const std::vector<double> got = to_vector(t.to(kFloat64));
  EXPECT_EQ(std::vector<double>(got.begin(), got.begin() + 3), std::vector<double>({0, 3, 0}));
  EXPECT_TRUE(std::isnan(got[3]));
  EXPECT_EQ(got[4], 0.0);
}

TEST(TensorApi, AllcloseAndEqual) {
  const double inf = std::numeric_limits<double>::infinity();
  const Tensor a = make_tensor({1.0, inf, -inf, 100.0}, {4}, kFloat64);
  EXPECT_TRUE(a.allclose(make_tensor({1.0 + 5e-6, inf, -inf, 100.0009}, {4}, kFloat64)));
  EXPECT_FALSE(a.allclose(make_tensor({1.0 + 2e-5, inf, -inf, 100.0}, {4}, kFloat64)));
  EXPECT_FALSE(a.allclose(make_tensor({1.0, -inf, -inf, 100.0}, {4}, kFloat64)));
  EXPECT_TRUE(a.allclose(make_tensor({1.5, inf, -inf, 100.0}, {4}, kFloat64), 0, 0.5));
  const Tensor n = make_tensor({kNaN, 2}, {2}, kFloat32);
  EXPECT_FALSE(n.allclose(n));
  EXPECT_TRUE(n.allclose(n, 1e-5, 1e-8, /*equal_nan=*/true));
  EXPECT_TRUE(allclose(ones({2, 3}), ones({3})));  // broadcasting, as torch.allclose
  EXPECT_TRUE(a.equal(a.clone()));
  EXPECT_FALSE(n.equal(n));
  EXPECT_FALSE(ones({2}).equal(ones({1, 2})));
  EXPECT_TRUE(zeros({0, 3}).equal(zeros({0, 3})));
}

TEST(TensorApi, LinspaceHasExactEndsAndRoundsOnce) {
  EXPECT_TRUE(all_close(linspace(0, 1, 5, kFloat64), {0, 0.25, 0.5, 0.75, 1}, 0, 0));
  EXPECT_TRUE(all_close(linspace(3, -3, 3), {3, 0, -3}, 0, 0));
  EXPECT_TRUE(all_close(linspace(2, 9, 1), {2}, 0, 0));
  EXPECT_EQ(linspace(0, 1, 0).numel(), 0);
  EXPECT_THROW(linspace(0, 1, -1), ShapeError);
  // float32: each value is the double formula rounded once.
  const Tensor t = linspace(-1.3, 7.9, 11);
  std::vector<double> expected;
  for (int i = 0; i < 11; ++i) {
    const double step = (7.9 - -1.3) / 10;
    expected.push_back(static_cast<float>(i < 5 ? -1.3 + step * i : 7.9 - step * (10 - i)));
  }
  EXPECT_TRUE(all_close(t, expected, 0, 0));
  EXPECT_EQ(t.to(kFloat64).select(0, 10).item<double>(), static_cast<double>(7.9f));
}

TEST(TensorApi, EyeIsTheIdentity) {
  EXPECT_TRUE(all_close(eye(3), {1, 0, 0, 0, 1, 0, 0, 0, 1}));
  EXPECT_TRUE(all_close(eye(2, 4, kInt64), {1, 0, 0, 0, 0, 1, 0, 0}));
  EXPECT_TRUE(all_close(eye(3, 2), {1, 0, 0, 1, 0, 0}));
  EXPECT_EQ(eye(0).shape(), Shape({0, 0}));
  EXPECT_THROW(eye(-1), ShapeError);
}

// Uniform integers: every value in range, each end reached, the mean within 6 standard errors.
TEST(TensorApi, RandintIsUniformInItsRange) {
  manual_seed(5);
  const std::int64_t low = -3, high = 4, n = 70000;
  const Tensor r = randint(low, high, {n}, kInt64);
  EXPECT_EQ(r.dtype(), kInt64);
  const std::vector<double> v = to_vector(r);
  std::vector<int> counts(high - low, 0);
  double sum = 0;
  for (double x : v) {
    ASSERT_GE(x, low);
    ASSERT_LT(x, high);
    ASSERT_EQ(x, std::floor(x));
    ++counts[static_cast<std::size_t>(x - low)];
    sum += x;
  }
  for (int c : counts)
    EXPECT_GT(c, 0);
  const double k = high - low;
  const double sd = std::sqrt((k * k - 1) / 12);  // discrete uniform over k values
  EXPECT_NEAR(sum / n, (low + high - 1) / 2.0, 6 * sd / std::sqrt(static_cast<double>(n)));
  EXPECT_EQ(randint(10, {2, 2}).dtype(), kFloat32);  // LibTorch's C++ default dtype
  EXPECT_THROW(randint(3, 3, {1}), Error);
}

TEST(TensorApi, CreationShorthands) {
  const Tensor f = tensor({1.f, 2.f, 3.f});
  EXPECT_EQ(f.dtype(), kFloat32);
  EXPECT_EQ(f.shape(), Shape({3}));
  EXPECT_EQ(tensor({1.0, 2.0}).dtype(), kFloat64);
  EXPECT_EQ(tensor({1, 2}).dtype(), kInt32);
  EXPECT_TRUE(zeros({2}, requires_grad()).requires_grad());
  EXPECT_EQ(ones({2}, dtype(kFloat64)).dtype(), kFloat64);
  EXPECT_EQ(full_like(f, 4.0).dtype(), kFloat32);
  EXPECT_TRUE(all_close(full_like(f, 4.0), {4, 4, 4}));
  EXPECT_EQ(randn_like(f).shape(), f.shape());
  EXPECT_EQ(rand_like(ones({2}, kFloat64)).dtype(), kFloat64);
}

// ---- Gradients -------------------------------------------------------------------------------

TEST(TensorApiGradients, ReductionsAndStatistics) {
  const Tensor x = uniform_input({3, 4}, -1.0, 1.0, 21);
  EXPECT_TRUE(gradcheck([](const Inputs& in) { return in[0].sum(1); }, {x}));
  EXPECT_TRUE(gradcheck([](const Inputs& in) { return in[0].mean(0, true); }, {x}));
  EXPECT_TRUE(gradcheck([](const Inputs& in) { return std::get<0>(in[0].max(1)); }, {x}));
  EXPECT_TRUE(gradcheck([](const Inputs& in) { return std::get<0>(in[0].min(0)); }, {x}));
  EXPECT_TRUE(gradcheck([](const Inputs& in) { return in[0].amin({0, 1}); }, {x}));
  EXPECT_TRUE(gradcheck([](const Inputs& in) { return in[0].var(1); }, {x}));
  EXPECT_TRUE(gradcheck([](const Inputs& in) { return in[0].var({0}, false, true); }, {x}));
  EXPECT_TRUE(gradcheck([](const Inputs& in) { return in[0].std(); }, {x}));
  EXPECT_TRUE(gradcheck([](const Inputs& in) { return in[0].std(0, false); }, {x}));
}

TEST(TensorApiGradients, ElementwiseAndMatrices) {
  // Values kept 0.05 or more from the clamp bounds -0.5 and 0.5 (no kink within eps).
  Tensor x = uniform_input({3, 4}, -1.0, 1.0, 22).detach();
  {
    NoGradGuard no_grad;
    x = where(lt(abs(sub(abs(x), 0.5)), 0.05), mul(x, 0.5), x);
  }
  x.requires_grad_();
  const Tensor w = uniform_input({4, 2}, -1.0, 1.0, 23);
  const Tensor value = uniform_input({}, -1.0, 1.0, 24);
  const Tensor mask = gt(uniform_input({4}, -1.0, 1.0, 25).detach(), 0.0);
  EXPECT_TRUE(gradcheck([](const Inputs& in) { return in[0].clamp(-0.5, 0.5); }, {x}));
  EXPECT_TRUE(gradcheck([](const Inputs& in) { return in[0].clamp_min(-0.5); }, {x}));
  EXPECT_TRUE(gradcheck([](const Inputs& in) { return in[0].clamp_max(0.5); }, {x}));
  EXPECT_TRUE(gradcheck([](const Inputs& in) { return in[0].square(); }, {x}));
  EXPECT_TRUE(
      gradcheck([&](const Inputs& in) { return in[0].masked_fill(mask, in[1]); }, {x, value}));
  EXPECT_TRUE(gradcheck([](const Inputs& in) { return in[0].t(); }, {x}));
  EXPECT_TRUE(gradcheck([](const Inputs& in) { return in[0].mm(in[1]); }, {x, w}));
  EXPECT_TRUE(gradcheck([](const Inputs& in) { return in[0].softmax(1); }, {x}));
  EXPECT_TRUE(gradcheck([](const Inputs& in) { return in[0].log_softmax(0); }, {x}));
}

TEST(TensorApiGradients, Indexing) {
  const Tensor x = uniform_input({3, 4, 5}, -1.0, 1.0, 26);
  EXPECT_TRUE(gradcheck(
      [](const Inputs& in) {
        return in[0].index({Slice(1, None), None, -1, Slice(0, 5, 2)});
      },
      {x}));
  EXPECT_TRUE(gradcheck([](const Inputs& in) { return in[0][2]; }, {x}));
  EXPECT_TRUE(gradcheck([](const Inputs& in) { return in[0].index({"...", 3}); }, {x}));
}

}  // namespace
}  // namespace leangrad
