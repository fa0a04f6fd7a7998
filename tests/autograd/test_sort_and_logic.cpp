// Tests of sort, argsort and topk, the tests and logic (isnan, isinf, isfinite, logical_*, all,
// any), nan_to_num, bmm, dot, outer (autograd/functions.h) and normalize
// (autograd/reduction_functions.h): against PyTorch's values (tests/data/sort_and_logic.json),
// a stable sort written here over every dtype, thread counts and the top-k prefix, gradients by
// finite differences, and the definitions of the logic ops.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numeric>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include <leangrad/autograd/functions.h>
#include <leangrad/autograd/reduction_functions.h>
#include <leangrad/core/creation.h>
#include <leangrad/kernels/creation.h>
#include "testing/gradcheck.h"
#include "testing/reference_data.h"
#include "testing/tensor_testing.h"
#include "testing/thread_count.h"

namespace leangrad {
namespace {

using test::all_close;
using test::gradcheck;
using test::make_tensor;
using test::to_vector;
using test::uniform_input;
using Inputs = std::vector<Tensor>;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kU32 = 0x1p-24;

// ---- A stable sort written here -----------------------------------------------------------------

// The positions along dim of x's (shape (rows, size) after moving dim last) elements, sorted
// stably by value with NaN the largest: std::stable_sort over doubles, independent of the kernel
// (a comparison on (key, position) with std::sort / partial_sort).
std::vector<double> reference_argsort(const Tensor& x, std::int64_t dim, bool descending) {
  const Tensor moved = x.transpose(dim, -1).contiguous();
  const std::vector<double> v = to_vector(moved);
  const std::int64_t size = x.size(dim);
  std::vector<double> out;
  for (std::size_t row = 0; row < v.size(); row += static_cast<std::size_t>(size)) {
    std::vector<std::int64_t> order(static_cast<std::size_t>(size));
    std::iota(order.begin(), order.end(), 0);
    // NaN above everything: the rank of a value, NaN mapped past +inf.
    const auto rank = [&](std::int64_t i) {
      const double value = v[row + static_cast<std::size_t>(i)];
      return std::isnan(value) ? std::pair<int, double>{1, 0.0} : std::pair<int, double>{0, value};
    };
    std::stable_sort(order.begin(), order.end(), [&](std::int64_t i, std::int64_t j) {
      return descending ? rank(j) < rank(i) : rank(i) < rank(j);
    });
    for (std::int64_t i : order)
      out.push_back(static_cast<double>(i));
  }
  // Back from (rows, size) with dim last to x's layout.
  Shape moved_shape = moved.shape();
  return to_vector(make_tensor(out, moved_shape, kInt64).transpose(dim, -1));
}

// Values with many ties, signed zeros, NaN and the infinities, in `dtype`.
Tensor tied_values(const Shape& shape, DType dtype, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int> pick(0, 9);
  const double menu[] = {-0.0, 0.0, 1.0, -1.0, 2.5, -2.5, kNaN, kInf, -kInf, 1.0};
  std::vector<double> v(shape_numel(shape));
  for (double& e : v)
    e = menu[pick(rng)];
  if (!is_floating(dtype)) {  // integers (uint8: non-negative ones)
    for (double& e : v)
      e = std::isfinite(e) ? (dtype == kUInt8 ? std::abs(std::trunc(e)) : std::trunc(e)) : 3;
  }
  if (dtype == kBool) {
    for (double& e : v)
      e = e > 0;
  }
  return make_tensor(v, shape, dtype);
}

TEST(Sort, EveryDTypeAndDimAsAStableSort) {
  for (DType dtype : {kFloat32, kFloat64, kFloat16, kBFloat16, kInt64, kInt32, kUInt8, kBool}) {
    const Tensor x = tied_values({5, 17, 3}, dtype, 1);
    for (std::int64_t dim : {0, 1, 2}) {
      for (bool descending : {false, true}) {
        SCOPED_TRACE(std::string(dtype_name(dtype)) + " dim " + std::to_string(dim) +
                     (descending ? " descending" : ""));
        const auto [values, indices] = x.sort(dim, descending);
        EXPECT_EQ(indices.dtype(), kInt64);
        EXPECT_EQ(values.dtype(), dtype);
        EXPECT_EQ(to_vector(indices), reference_argsort(x, dim, descending));
        EXPECT_TRUE(all_close(values, to_vector(x.gather(dim, indices)), 0, 0));
        EXPECT_TRUE(argsort(x, dim, descending).equal(indices));
      }
    }
  }
}

TEST(Sort, TopkIsTheSortsPrefixOnAnyNumberOfThreads) {
  const Tensor x = tied_values({40, 300}, kFloat32, 2);
  for (bool largest : {true, false}) {
    const Tensor sorted = argsort(x, 1, largest);
    for (std::int64_t k : {0, 1, 7, 299, 300}) {
      Tensor one, three;
      {
        ThreadCount threads(1);
        one = std::get<1>(x.topk(k, 1, largest));
      }
      {
        ThreadCount threads(3);
        three = std::get<1>(x.topk(k, 1, largest));
      }
      EXPECT_TRUE(one.equal(three)) << "k " << k;
      EXPECT_TRUE(one.equal(sorted.slice(1, 0, k).contiguous())) << "k " << k;
    }
  }
  // 0-d and empty inputs.
  const auto [v0, i0] = sort(make_tensor({3}, {}), 0);
  EXPECT_EQ(i0.dim(), 0);
  EXPECT_EQ(to_vector(v0), std::vector<double>{3});
  EXPECT_EQ(std::get<1>(sort(zeros({2, 0}), 1)).shape(), Shape({2, 0}));
}

TEST(Sort, GradientsGoToTheSortedPositions) {
  const Tensor x = uniform_input({4, 6}, -1, 1, 5);
  EXPECT_TRUE(gradcheck([](const Inputs& in) { return std::get<0>(sort(in[0], 1, true)); }, {x}));
  EXPECT_TRUE(gradcheck([](const Inputs& in) { return std::get<0>(topk(in[0], 2, 0)); }, {x}));
}

// ---- PyTorch's values ---------------------------------------------------------------------------

TEST(SortAndLogicReference, AsPyTorch) {
  int checked = 0;
  for (const test::ReferenceCase& rc : test::load_reference("sort_and_logic.json")) {
    SCOPED_TRACE(rc.name);
    const nlohmann::json& p = rc.params;
    const std::string op = p["op"].get<std::string>();
    const bool differentiable = rc.tensors.count("dx") > 0;
    const Tensor x = differentiable ? rc.at("x").clone().requires_grad_() : rc.at("x");
    Tensor y;
    if (op == "sort" || op == "topk") {
      const std::int64_t dim = p["dim"].get<std::int64_t>();
      const auto [values, indices] =
          op == "sort" ? sort(x, dim, p["descending"].get<bool>())
                       : topk(x, p["k"].get<std::int64_t>(), dim, p["largest"].get<bool>());
      EXPECT_TRUE(indices.equal(rc.at("indices")));
      EXPECT_TRUE(all_close(values, to_vector(rc.at("values")), 0, 0));
      y = values;
    } else if (op == "nan_to_num") {
      y = p.contains("nan") ? nan_to_num(x, p["nan"].get<double>(), p["posinf"].get<double>(),
                                         p["neginf"].get<double>())
                            : x.nan_to_num();
      EXPECT_EQ(y.dtype(), rc.at("y").dtype());
      EXPECT_TRUE(all_close(y, to_vector(rc.at("y")), 0, 0));
    } else if (op == "normalize") {
      y = normalize(x, p["p"].get<double>(), p["dim"].get<std::int64_t>());
      // The norm of n <= 6 terms: within (n + 2) u on either side (in double here, in float in
      // torch), and one division: (n + 4) u relatively.
      EXPECT_TRUE(all_close(y, to_vector(rc.at("y")), 10 * kU32, 0));
    } else {
      std::vector<std::int64_t> dims = p["dims"].get<std::vector<std::int64_t>>();
      const bool keepdim = p["keepdim"].get<bool>();
      y = op == "all" ? x.all(DimList(dims), keepdim) : x.any(DimList(dims), keepdim);
      EXPECT_EQ(y.dtype(), kBool);
      EXPECT_EQ(y.shape(), rc.at("y").shape());
      EXPECT_EQ(to_vector(y), to_vector(rc.at("y")));
    }
    if (differentiable) {
      y.backward(rc.at("g"));
      // sort and topk move the upstream gradient: exact. normalize's, (g - y (y . g)) / N
      // with N the norm of n terms, can cancel: y . g is within n u sum|y_j g_j| <= n u
      // sqrt(n) max|g| (sum |y_j| <= sqrt(n) for p <= 2), the rest within a few roundings
      // (relative 20 u); divided by N, at least the smallest norm of a non-zero slice. The row
      // of zeros (the norm taken at eps) is g / eps: relative.
      double atol = 0, rtol = 0;
      if (op == "normalize") {
        const Tensor norms = norm(x.detach(), p["p"].get<double>(), {p["dim"].get<std::int64_t>()});
        double smallest = kInf;
        for (double n : to_vector(norms))
          smallest = n > 0 ? std::min(smallest, n) : smallest;
        const double n = static_cast<double>(x.size(p["dim"].get<std::int64_t>()));
        rtol = 20 * kU32;
        atol = 2 * (n + 4) * std::sqrt(n) * kU32 * test::max_abs(rc.at("g")) / smallest;
      }
      EXPECT_TRUE(all_close(x.grad(), to_vector(rc.at("dx")), rtol, atol));
    }
    ++checked;
  }
  EXPECT_EQ(checked, 18);
}

// ---- Logic, products ----------------------------------------------------------------------------

// isclose compares integers as integers before any tolerance (16777217 and 16777216 are one
// float32); all and any of uint8 give uint8, as PyTorch 1.13's.
TEST(Logic, IntegersCloseOnlyWhenEqualAndUint8Truths) {
  const Tensor a = make_tensor({16777217, 5}, {2}, kInt32),
               b = make_tensor({16777216, 5}, {2}, kInt32);
  EXPECT_EQ(to_vector(isclose(a, b, 0.0, 0.0)), (std::vector<double>{0, 1}));
  EXPECT_FALSE(allclose(a, b, 0.0, 0.0));
  const Tensor big = full({1}, 9223372036854775807.0, TensorOptions(kInt64));
  EXPECT_FALSE(isclose(big, sub(big, 1.0), 0.0, 0.0).item<bool>());
  EXPECT_TRUE(isclose(a, b, 0.0, 1.0).all().item<bool>());  // within atol 1
  const Tensor u = make_tensor({1, 2, 0, 3}, {2, 2}, kUInt8);
  EXPECT_EQ(all(u).dtype(), kUInt8);
  EXPECT_EQ(to_vector(all(u, {1})), (std::vector<double>{1, 0}));
  EXPECT_EQ(any(u, {1}, true).dtype(), kUInt8);
  EXPECT_EQ(to_vector(any(u, {1}, true)), (std::vector<double>{1, 1}));
  EXPECT_EQ(all(make_tensor({1, 2}, {2}, kInt32)).dtype(), kBool);
}

TEST(Logic, AsTheirDefinitions) {
  const Tensor x = make_tensor({0, -0.0, 1.5, kNaN, kInf, -kInf}, {6});
  EXPECT_EQ(to_vector(x.isnan()), (std::vector<double>{0, 0, 0, 1, 0, 0}));
  EXPECT_EQ(to_vector(x.isinf()), (std::vector<double>{0, 0, 0, 0, 1, 1}));
  EXPECT_EQ(to_vector(x.isfinite()), (std::vector<double>{1, 1, 1, 0, 0, 0}));
  EXPECT_EQ(to_vector(x.logical_not()), (std::vector<double>{1, 1, 0, 0, 0, 0}));
  const Tensor ints = make_tensor({0, 3, -2}, {3}, kInt64);
  EXPECT_EQ(to_vector(ints.isnan()), (std::vector<double>{0, 0, 0}));
  EXPECT_EQ(to_vector(ints.isfinite()), (std::vector<double>{1, 1, 1}));
  EXPECT_EQ(ints.isinf().dtype(), kBool);
  // Broadcasting (3, 1) against (4), any dtypes: each pair against && || and !=.
  const std::vector<double> a = {0, 2, kNaN}, b = {0, 1, 0, -3};
  const Tensor ta = make_tensor(a, {3, 1}), tb = make_tensor(b, {4}, kInt32);
  std::vector<double> want_and, want_or, want_xor;
  for (double u : a) {
    for (double v : b) {
      const bool p = u != 0, q = v != 0;  // NaN != 0
      want_and.push_back(p && q);
      want_or.push_back(p || q);
      want_xor.push_back(p != q);
    }
  }
  EXPECT_EQ(to_vector(ta.logical_and(tb)), want_and);
  EXPECT_EQ(to_vector(ta.logical_or(tb)), want_or);
  EXPECT_EQ(to_vector(ta.logical_xor(tb)), want_xor);
  EXPECT_EQ(ta.logical_and(tb).shape(), Shape({3, 4}));
  // all and any of nothing.
  EXPECT_EQ(to_vector(zeros({0}).all()), std::vector<double>{1});
  EXPECT_EQ(to_vector(zeros({0}).any()), std::vector<double>{0});
}

TEST(Products, AsMatmulAndTheirDefinitions) {
  const Tensor a = uniform_input({3, 2, 4}, -1, 1, 11), b = uniform_input({3, 4, 5}, -1, 1, 12);
  EXPECT_TRUE(a.bmm(b).equal(matmul(a, b)));
  const Tensor u = make_tensor({1, 2, 3}, {3}, kFloat64),
               v = make_tensor({4, -5, 6}, {3}, kFloat64);
  EXPECT_EQ(to_vector(u.dot(v)), std::vector<double>{12});
  EXPECT_EQ(u.dot(v).dim(), 0);
  EXPECT_EQ(to_vector(u.outer(v.slice(0, 0, 2))), (std::vector<double>{4, -5, 8, -10, 12, -15}));
  EXPECT_TRUE(gradcheck([](const Inputs& in) { return dot(in[0], in[1]); },
                        {uniform_input({5}, -1, 1, 13), uniform_input({5}, -1, 1, 14)}));
  EXPECT_TRUE(gradcheck([](const Inputs& in) { return outer(in[0], in[1]); },
                        {uniform_input({3}, -1, 1, 15), uniform_input({4}, -1, 1, 16)}));
  EXPECT_TRUE(gradcheck([](const Inputs& in) { return normalize(in[0], 2.0, 0); },
                        {uniform_input({4, 3}, -1, 1, 17)}));
  // nan_to_num's gradient passes only where x was finite, the dtype's extremes included (the
  // bounds of the clamp that replaces the infinities by default), with default and given values.
  const double largest = std::numeric_limits<double>::max();
  for (const bool defaults : {true, false}) {
    const Tensor x =
        make_tensor({1, kNaN, kInf, -2, -kInf, largest, -largest}, {7}, kFloat64).requires_grad_();
    (defaults ? nan_to_num(x) : nan_to_num(x, 3.0, 1.0, -1.0)).sum().backward();
    EXPECT_EQ(to_vector(x.grad()), (std::vector<double>{1, 0, 0, 1, 0, 1, 1})) << defaults;
  }
}

// nan_to_num of every float16 and bfloat16 value, and of float32's extremes, infinities and NaNs,
// against a loop: the default replacements (the clamp and where of the fast form), the extremes
// given (the same form) and given ones inside them (the general form). (A replacement beyond the
// dtype's range is an Error, as a value given to full.)
TEST(SortAndLogic, NanToNumOfEveryValue) {
  std::vector<Tensor> inputs = {test::every_sixteen_bit_value(kFloat16),
                                test::every_sixteen_bit_value(kBFloat16)};
  const double f32_max = std::numeric_limits<float>::max();
  inputs.push_back(make_tensor({0.0, -0.0, 1.5, -7.25, f32_max, -f32_max, kInf, -kInf, kNaN,
                                std::numeric_limits<float>::denorm_min()},
                               {10}, kFloat32));
  struct Replacements {
    double nan;
    std::optional<double> posinf, neginf;
  };
  for (const Tensor& x : inputs) {
    const double largest = x.dtype() == kFloat16    ? 65504.0
                           : x.dtype() == kBFloat16 ? 3.3895313892515355e38
                                                    : f32_max;
    for (const Replacements& r :
         {Replacements{0.0, std::nullopt, std::nullopt}, Replacements{2.0, largest, -largest},
          Replacements{-1.0, 100.0, -0.5}}) {
      SCOPED_TRACE(std::string(dtype_name(x.dtype())) + " nan " + std::to_string(r.nan));
      std::vector<double> expected;
      for (double v : to_vector(x)) {
        const double hi = r.posinf.value_or(largest), lo = r.neginf.value_or(-largest);
        expected.push_back(std::isnan(v) ? r.nan : v == kInf ? hi : v == -kInf ? lo : v);
      }
      // Each replacement rounded to the dtype, as the tensor holds it.
      const Tensor want = make_tensor(expected, x.shape(), x.dtype());
      EXPECT_TRUE(test::matches_within_roundoff(nan_to_num(x, r.nan, r.posinf, r.neginf), want, {},
                                                {.bitwise = true}));
    }
  }
}

}  // namespace
}  // namespace leangrad
