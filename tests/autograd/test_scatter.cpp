// scatter, scatter_reduce, index_copy, index_reduce and index_put_ with accumulate: against
// PyTorch 1.13 (tests/data/scatter.json, written by make_scatter.py) values and gradients; against
// plain loops over random indices that name places many times (every reduction, with and without
// include_self, along each dim of strided inputs, in float64, int64 and uint8); the 16-bit dtypes
// against float32 rounded once; finite differences, twice, for every differentiable one (products
// with zero factors, the elements scatter overwrites). Misuse: the Scatter table of
// tests/misuse/test_misuse_indexing.cpp.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include <leangrad/autograd/engine.h>
#include <leangrad/autograd/functions.h>
#include <leangrad/autograd/indexing_functions.h>
#include <leangrad/autograd/shape_functions.h>
#include <leangrad/core/creation.h>
#include <leangrad/kernels/creation.h>
#include "testing/gradcheck.h"
#include "testing/reference_data.h"
#include "testing/tensor_testing.h"

namespace leangrad::test {
namespace {

const std::vector<ReferenceCase>& cases() {
  static const std::vector<ReferenceCase> all = load_reference("scatter.json");
  return all;
}

bool starts_with(const std::string& s, const char* prefix) {
  return s.rfind(prefix, 0) == 0;
}

// The function of a case (by name; the inputs in params["inputs"] order).
Tensor run_case(const std::string& name, const std::vector<Tensor>& x, const nlohmann::json& p) {
  const std::int64_t dim = p.contains("dim") ? p.at("dim").get<std::int64_t>() : 0;
  const std::string reduce = p.contains("reduce") ? p.at("reduce").get<std::string>() : "";
  const bool include_self = !p.contains("include_self") || p.at("include_self").get<bool>();
  const double value = p.contains("value") ? p.at("value").get<double>() : 0.0;
  if (starts_with(name, "scatter_reduce_"))
    return scatter_reduce(x[0], dim, x[1], x[2], reduce, include_self);
  if (starts_with(name, "scatter_with_")) return x[0].scatter(dim, x[1], x[2], reduce);
  if (starts_with(name, "scatter_value_with_")) return scatter(x[0], dim, x[1], value, reduce);
  if (starts_with(name, "scatter_value")) return x[0].scatter(dim, x[1], value);
  if (starts_with(name, "scatter_")) return scatter(x[0], dim, x[1], x[2]);
  if (starts_with(name, "index_copy")) return x[0].index_copy(dim, x[1], x[2]);
  if (starts_with(name, "index_reduce"))
    return index_reduce(x[0], dim, x[1], x[2], reduce, include_self);
  if (starts_with(name, "index_put_accumulate")) {
    Tensor y = x[0].detach().clone();
    if (name == "index_put_accumulate_pairs") return y.index_put_({x[1], x[2]}, x[3], true);
    if (name == "index_put_accumulate_mask") return y.index_put_({x[1]}, 1.5, true);
    return y.index_put_({x[1]}, x[2], true);
  }
  ADD_FAILURE() << "no function for case " << name;
  return Tensor();
}

// The roundings of each side, in ulps of max(1, |result|) (matches_within_roundoff's scale):
// writes, maxima and minima are exact. A place combines at most k = index.size(dim) + 1 terms,
// each side in its own order: a product rounds k - 1 times relative to itself, 2 k ulps for
// both sides; a sum's k - 1 roundings are each at most u times a partial sum, at most k m for m
// the largest operand, 2 k^2 m ulps for both (a mean divides once more).
double value_ulps(const std::string& reduce, const Tensor& index, std::int64_t dim, double m) {
  // index_copy's, index_reduce's and index_put_'s indices are 1-d whatever the dim.
  const double k = static_cast<double>(index.dim() > dim ? index.size(dim) : index.numel()) + 1;
  if (reduce == "prod" || reduce == "multiply") return 2 * k + 2;
  if (reduce == "sum" || reduce == "add" || reduce == "mean")
    return 2 * k * k * std::max(m, 1.0) + 2;
  return 0;
}

TEST(Scatter, MatchPyTorch) {
  int checked = 0;
  for (const ReferenceCase& c : cases()) {
    SCOPED_TRACE(c.name);
    const ReferenceInputs reference = reference_inputs(c);
    const std::vector<std::string>& order = reference.names;
    const std::vector<Tensor>& inputs = reference.tensors;
    const bool differentiable = reference.differentiable;
    const Tensor out = run_case(c.name, inputs, c.params);
    ASSERT_TRUE(out.defined());
    const Tensor& want = c.at("out0");
    ASSERT_EQ(out.dtype(), want.dtype());
    ASSERT_EQ(out.shape(), want.shape());
    if (!is_floating(want.dtype())) {
      EXPECT_TRUE(equal(out, want));
      ++checked;
      continue;
    }
    const std::string reduce =
        c.params.contains("reduce") ? c.params.at("reduce").get<std::string>() : "";
    const std::int64_t dim = c.params.contains("dim") ? c.params.at("dim").get<std::int64_t>() : 0;
    // index_put_ with accumulate sums into each place every value naming it.
    const std::string sums = starts_with(c.name, "index_put_accumulate") ? "sum" : reduce;
    double largest = 0;
    for (const Tensor& t : inputs) {
      if (is_floating(t.dtype()) && t.numel() > 0) largest = std::max(largest, max_abs(t.detach()));
    }
    const double ulps = value_ulps(sums, inputs[1], dim, largest);
    EXPECT_TRUE(matches_within_roundoff(out, want, {}, {.ulps = ulps, .bitwise = ulps == 0}));
    if (differentiable) {
      sum(mul(out, c.at("w0"))).backward();
      for (std::size_t k = 0; k < order.size(); ++k) {
        const auto grad = c.tensors.find("d_" + order[k]);
        if (grad == c.tensors.end()) continue;
        ASSERT_TRUE(inputs[k].grad().defined()) << "d_" << order[k];
        // One chain rule deeper than the values: twice their roundings, and at least 32.
        EXPECT_TRUE(matches_within_roundoff(inputs[k].grad(), grad->second, {},
                                            {.ulps = std::max(32.0, 2 * ulps)}))
            << "d_" << order[k];
      }
    }
    ++checked;
  }
  EXPECT_EQ(checked, 58);
}

// src larger than the index: only its leading block is read, and only that block gets a
// gradient (the rest 0).
TEST(Scatter, LargerSrcGetsGradientOnlyWhereRead) {
  const Tensor x = zeros({2, 5}, TensorOptions(kFloat64));
  const Tensor index = tensor(std::vector<std::int64_t>{3, 0, 4, 1}, {2, 2});
  const Tensor src = uniform_input({3, 4}, -1.0, 1.0, 3);
  const Tensor y = scatter(x, 1, index, src);
  const auto s = to_vector(src.detach());
  EXPECT_TRUE(all_close(y, {s[1], 0, 0, s[0], 0, 0, s[5], 0, 0, s[4]}, 0, 0));
  sum(mul(y, arange(1.0, 11.0, 1.0, TensorOptions(kFloat64)).reshape({2, 5}))).backward();
  EXPECT_TRUE(all_close(src.grad(), {4, 1, 0, 0, 10, 7, 0, 0, 0, 0, 0, 0}, 0, 0));
}

// ---- Against plain loops
// -------------------------------------------------------------------------

// A reduction of a place's elements as the loop computes it.
double loop_reduce(const std::string& reduce, const std::vector<double>& v) {
  double r = 0;
  if (reduce == "sum" || reduce == "mean") {
    for (double e : v)
      r += e;
    return reduce == "sum" ? r : r / static_cast<double>(v.size());
  }
  if (reduce == "prod") {
    r = 1;
    for (double e : v)
      r *= e;
    return r;
  }
  r = v.front();
  for (double e : v)
    r = reduce == "amax" ? std::max(r, e) : std::min(r, e);
  return r;
}

// scatter_reduce (or scatter, reduce "") by a loop over the index: each place collects input's
// element (include_self) and the src elements naming it in index order.
std::vector<double> loop_scatter(const std::vector<double>& x, const Shape& x_shape,
                                 const std::vector<double>& index, const Shape& index_shape,
                                 const std::vector<double>& src, std::int64_t dim,
                                 const std::string& reduce, bool include_self) {
  const auto strides_of = [](const Shape& s) {
    std::vector<std::int64_t> st(s.size(), 1);
    for (std::int64_t d = static_cast<std::int64_t>(s.size()) - 2; d >= 0; --d)
      st[d] = st[d + 1] * s[d + 1];
    return st;
  };
  const auto xs = strides_of(x_shape), is = strides_of(index_shape);
  std::vector<std::vector<double>> named(x.size());
  for (std::size_t k = 0; k < index.size(); ++k) {
    std::int64_t place = 0;
    for (std::size_t d = 0; d < index_shape.size(); ++d) {
      const std::int64_t c = (static_cast<std::int64_t>(k) / is[d]) % index_shape[d];
      place +=
          (static_cast<std::int64_t>(d) == dim ? static_cast<std::int64_t>(index[k]) : c) * xs[d];
    }
    named[static_cast<std::size_t>(place)].push_back(src[k]);
  }
  std::vector<double> out = x;
  for (std::size_t p = 0; p < x.size(); ++p) {
    std::vector<double>& v = named[p];
    if (v.empty()) continue;
    if (reduce.empty()) {  // scatter: the last one written stays
      out[p] = v.back();
      continue;
    }
    if (include_self) v.insert(v.begin(), x[p]);
    out[p] = loop_reduce(reduce, v);
  }
  return out;
}

// Random places along dim of an index of `shape` into a dim of size `size`: with 9 elements to
// 3 places, each place is named about three times.
Tensor random_index(const Shape& shape, std::int64_t size, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::int64_t n = 1;
  for (std::int64_t s : shape)
    n *= s;
  std::vector<double> v(static_cast<std::size_t>(n));
  for (double& e : v)
    e = static_cast<double>(rng() % static_cast<std::uint64_t>(size));
  return make_tensor(v, shape, kInt64);
}

// Small integers in [-3, 3] (some 0): sums, products of a handful and their means are exact in
// float64, so a loop and the kernel agree bit for bit whatever their order.
Tensor small_integers(const Shape& shape, std::uint64_t seed, DType dtype) {
  std::mt19937_64 rng(seed);
  std::int64_t n = 1;
  for (std::int64_t s : shape)
    n *= s;
  std::vector<double> v(static_cast<std::size_t>(n));
  for (double& e : v)
    e = static_cast<double>(rng() % 7) - (dtype == kUInt8 ? 0.0 : 3.0);
  return make_tensor(v, shape, dtype);
}

TEST(Scatter, ReductionsMatchALoopAlongEveryDim) {
  const Shape x_shape{3, 4, 5};
  int checked = 0;
  for (std::int64_t dim = 0; dim < 3; ++dim) {
    // 9 elements along dim naming its 3 to 5 places, each about twice or three times; the other
    // dims smaller than x's.
    Shape index_shape{2, 3, 4};
    index_shape[static_cast<std::size_t>(dim)] = 9;
    const Tensor index = random_index(index_shape, x_shape[static_cast<std::size_t>(dim)],
                                      static_cast<std::uint64_t>(dim) + 1);
    for (const DType dtype : {kFloat64, kInt64, kUInt8}) {
      // x as a transposed view: the kernel reads it through its strides.
      const Tensor x =
          transpose(small_integers({x_shape[2], x_shape[1], x_shape[0]}, 7, dtype), 0, 2);
      const Tensor src = small_integers(index_shape, 8, dtype);
      const auto xv = to_vector(x), iv = to_vector(index), sv = to_vector(src);
      for (const char* reduce : {"", "sum", "prod", "mean", "amax", "amin"}) {
        for (const bool include_self : {true, false}) {
          if (std::string(reduce).empty() && !include_self) continue;
          if (dtype == kUInt8 && std::string(reduce) == "mean") continue;  // floored: below
          SCOPED_TRACE("dim " + std::to_string(dim) + " " + dtype_name(dtype) + " reduce \"" +
                       reduce + "\" include_self " + std::to_string(include_self));
          const Tensor got = std::string(reduce).empty()
                                 ? scatter(x, dim, index, src)
                                 : scatter_reduce(x, dim, index, src, reduce, include_self);
          std::vector<double> want =
              loop_scatter(xv, x_shape, iv, index_shape, sv, dim, reduce, include_self);
          for (double& w : want) {
            if (dtype == kInt64 && std::string(reduce) == "mean") w = std::floor(w);
            // uint8 wraps modulo 256 (products of up to 4 factors of at most 6 reach 1296).
            if (dtype == kUInt8) w = std::fmod(w, 256.0);
          }
          EXPECT_TRUE(all_close(got, want, 0, 0));
          ++checked;
        }
      }
    }
  }
  EXPECT_EQ(checked, 3 * (3 * 11 - 2));
}

// uint8 means are floored too, the sum wrapping modulo 256 first (torch 1.13 gives the same).
TEST(Scatter, IntegralMeansAreFloored) {
  const Tensor x = make_tensor({250, 3, 7}, {3}, kUInt8);
  const Tensor index = make_tensor({0, 0, 2, 2, 2}, {5}, kInt64);
  const Tensor src = make_tensor({100, 9, 1, 2, 2}, {5}, kUInt8);
  // (250 + 100 + 9) mod 256 = 103, over 3: 34; (7 + 1 + 2 + 2) / 4 = 3.
  EXPECT_TRUE(all_close(scatter_reduce(x, 0, index, src, "mean"), {34, 3, 3}, 0, 0));
  // Without x: (100 + 9) / 2 = 54, (1 + 2 + 2) / 3 = 1.
  EXPECT_TRUE(all_close(scatter_reduce(x, 0, index, src, "mean", false), {54, 3, 1}, 0, 0));
}

// The 16-bit floats are reduced in float32 and rounded once: bit for bit the float32 result of
// the same (exactly widened) values, rounded.
TEST(Scatter, SixteenBitFloatsRoundOnce) {
  const Tensor index = random_index({4, 12}, 5, 11);
  for (const DType dtype : {kFloat16, kBFloat16}) {
    const Tensor x = uniform_input({4, 5}, -2.0, 2.0, 12).detach().to(dtype);
    const Tensor src = uniform_input({4, 12}, -2.0, 2.0, 13).detach().to(dtype);
    for (const char* reduce : {"sum", "prod", "mean", "amax", "amin"}) {
      for (const bool include_self : {true, false}) {
        SCOPED_TRACE(std::string(dtype_name(dtype)) + " " + reduce);
        const Tensor want =
            scatter_reduce(x.to(kFloat32), 1, index, src.to(kFloat32), reduce, include_self)
                .to(dtype);
        EXPECT_TRUE(matches_within_roundoff(scatter_reduce(x, 1, index, src, reduce, include_self),
                                            want, {}, {.bitwise = true}));
      }
    }
  }
}

// A NaN among a place's elements is the place's maximum and minimum; without include_self a NaN
// of input's own does not take part.
TEST(Scatter, ExtremaPropagateNan) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const Tensor x = make_tensor({nan, 1, 2}, {3}, kFloat64);
  const Tensor index = make_tensor({0, 1, 1, 2}, {4}, kInt64);
  const Tensor src = make_tensor({5, nan, 3, 1}, {4}, kFloat64);
  EXPECT_TRUE(matches_within_roundoff(scatter_reduce(x, 0, index, src, "amax"),
                                      make_tensor({nan, nan, 2}, {3}, kFloat64), {},
                                      {.bitwise = true}));
  EXPECT_TRUE(matches_within_roundoff(scatter_reduce(x, 0, index, src, "amin", false),
                                      make_tensor({5, nan, 1}, {3}, kFloat64), {},
                                      {.bitwise = true}));
}

// amax's gradient is split evenly among the elements equal to the result (as amax's); without
// include_self, input's element takes no share even when it ties (PyTorch 1.13 counts it).
TEST(Scatter, ExtremaSplitTheGradientAmongTies) {
  const Tensor index = make_tensor({0, 0, 0, 1}, {4}, kInt64);
  for (const bool include_self : {true, false}) {
    SCOPED_TRACE("include_self " + std::to_string(include_self));
    const Tensor x = make_tensor({2, 7}, {2}, kFloat64).requires_grad_();
    const Tensor src = make_tensor({2, 1, 2, 7}, {4}, kFloat64).requires_grad_();
    sum(mul(scatter_reduce(x, 0, index, src, "amax", include_self),
            make_tensor({6, 10}, {2}, kFloat64)))
        .backward();
    // Place 0: x's 2 and src's two 2s tie (three shares of 6, or two without x); place 1: x's
    // 7 and src's 7 (two shares of 10, or src alone).
    if (include_self) {
      EXPECT_TRUE(all_close(x.grad(), {2, 5}, 0, 0));
      EXPECT_TRUE(all_close(src.grad(), {2, 0, 2, 5}, 0, 0));
    } else {
      EXPECT_TRUE(all_close(x.grad(), {0, 0}, 0, 0));
      EXPECT_TRUE(all_close(src.grad(), {3, 0, 3, 10}, 0, 0));
    }
  }
}

// ---- Finite differences
// ---------------------------------------------------------------------------

// scatter's gradient goes to the element written at each place only (the last along dim), and
// input's element at a written place gets none.
TEST(Scatter, GradientsAreFiniteDifferences) {
  const Tensor index = random_index({3, 7}, 4, 21);
  const Tensor x = uniform_input({3, 4}, -1.0, 1.0, 22);
  const Tensor src = uniform_input({3, 7}, -1.0, 1.0, 23);
  // (The gradient is linear in the upstream one and constant in x and src: no second.)
  const auto f = [&](const std::vector<Tensor>& in) { return scatter(in[0], 1, index, in[1]); };
  EXPECT_TRUE(gradcheck(f, {x, src}));
  const auto v = [&](const std::vector<Tensor>& in) { return in[0].scatter(1, index, 0.5); };
  EXPECT_TRUE(gradcheck(v, {x}));
  const Tensor slices = make_tensor({2, 0, 2, 3, 2}, {5}, kInt64);
  const Tensor source = uniform_input({5, 3}, -1.0, 1.0, 24);
  const Tensor rows = uniform_input({4, 3}, -1.0, 1.0, 25);
  const auto c = [&](const std::vector<Tensor>& in) { return index_copy(in[0], 0, slices, in[1]); };
  EXPECT_TRUE(gradcheck(c, {rows, source}));
}

TEST(Scatter, ReductionGradientsAreFiniteDifferences) {
  const Tensor index = random_index({3, 7}, 4, 31);
  // Values apart from each other: no ties for amax and amin, no factor near 0.
  const Tensor x = away_from_zero_input({3, 4}, 0.5, 1.5, 32);
  const Tensor src = away_from_zero_input({3, 7}, 0.5, 1.5, 33);
  for (const char* reduce : {"sum", "prod", "mean", "amax", "amin"}) {
    for (const bool include_self : {true, false}) {
      SCOPED_TRACE(std::string(reduce) + " include_self " + std::to_string(include_self));
      const auto f = [&](const std::vector<Tensor>& in) {
        return scatter_reduce(in[0], 1, index, in[1], reduce, include_self);
      };
      EXPECT_TRUE(gradcheck(f, {x, src}));
      // The other gradients are constant in x and src (away from ties): only prod has a second.
      if (std::string(reduce) == "prod") {
        EXPECT_TRUE(gradgradcheck(f, {x, src}));
      }
      if (std::string(reduce) == "sum") continue;  // index_reduce takes the other four
      const Tensor slices = make_tensor({1, 3, 1, 1, 0}, {5}, kInt64);
      const Tensor rows = away_from_zero_input({4, 4}, 0.5, 1.5, 34);
      const Tensor source = away_from_zero_input({5, 4}, 0.5, 1.5, 35);
      const auto r = [&](const std::vector<Tensor>& in) {
        return in[0].index_reduce(0, slices, in[1], reduce, include_self);
      };
      EXPECT_TRUE(gradcheck(r, {rows, source}));
    }
  }
}

// Products with zero factors: places with one, two and three zeros, and a zero in input's own
// element. The second derivatives are exact there too (Note [Scatter's gradients]).
TEST(Scatter, ProductGradientsWithZeroFactors) {
  const Tensor index = make_tensor({0, 0, 0, 1, 1, 1, 2, 2, 2, 3, 3}, {11}, kInt64);
  for (const bool include_self : {true, false}) {
    SCOPED_TRACE("include_self " + std::to_string(include_self));
    // place 0: one zero; place 1: two; place 2: three; place 3: a zero only in x.
    const Tensor x = make_tensor({1.5, -0.7, 0.8, 0.0, 1.2}, {5}, kFloat64).requires_grad_();
    const Tensor src =
        make_tensor({0.9, 0.0, -1.3, 0.0, 0.6, 0.0, 0.0, 0.0, 0.0, 1.1, -0.8}, {11}, kFloat64)
            .requires_grad_();
    const auto f = [&](const std::vector<Tensor>& in) {
      return scatter_reduce(in[0], 0, index, in[1], "prod", include_self);
    };
    EXPECT_TRUE(gradcheck(f, {x, src}));
    EXPECT_TRUE(gradgradcheck(f, {x, src}));
  }
}

TEST(Scatter, AccumulatingIndexPutIsFiniteDifferences) {
  const Tensor rows = make_tensor({3, 0, 3, 3}, {4}, kInt64);
  const Tensor base = uniform_input({4, 3}, -1.0, 1.0, 41).detach();
  const Tensor value = uniform_input({4, 3}, -1.0, 1.0, 42);
  const auto f = [&](const std::vector<Tensor>& in) {
    Tensor y = base.clone();
    y.index_put_({rows}, in[0], /*accumulate=*/true);
    return y;
  };
  EXPECT_TRUE(gradcheck(f, {value}));
  // Every value naming a place is added (index_put_ without accumulate keeps the last).
  Tensor y = base.clone();
  y.index_put_({rows}, value.detach(), true);
  // The CPU adds in index order, as the loop: bit for bit.
  const auto v = to_vector(value.detach()), r = to_vector(rows);
  std::vector<double> want = to_vector(base);
  for (std::size_t i = 0; i < 4; ++i) {
    for (std::size_t j = 0; j < 3; ++j)
      want[static_cast<std::size_t>(r[i]) * 3 + j] += v[i * 3 + j];
  }
  EXPECT_TRUE(all_close(y, want, 0, 0));
}

// ---- Methods and in-place forms
// --------------------------------------------------------------------

TEST(Scatter, InPlaceFormsWriteTheFunctionsResult) {
  const Tensor index = random_index({3, 6}, 4, 51);
  const Tensor x = uniform_input({3, 4}, -1.0, 1.0, 52).detach();
  const Tensor src = uniform_input({3, 6}, -1.0, 1.0, 53).detach();
  const auto same = [](const Tensor& a, const Tensor& b) {
    return matches_within_roundoff(a, b, {}, {.bitwise = true});
  };
  Tensor a = x.clone();
  EXPECT_TRUE(same(a.scatter_(1, index, src), scatter(x, 1, index, src)));
  a = x.clone();
  EXPECT_TRUE(same(a.scatter_(1, index, -2.0), scatter(x, 1, index, -2.0)));
  a = x.clone();
  EXPECT_TRUE(
      same(a.scatter_(1, index, src, "multiply"), scatter_reduce(x, 1, index, src, "prod")));
  a = x.clone();
  EXPECT_TRUE(same(a.scatter_(1, index, 2.0, "add"), scatter(x, 1, index, 2.0, "add")));
  a = x.clone();
  EXPECT_TRUE(same(a.scatter_add_(1, index, src), scatter_add(x, 1, index, src)));
  a = x.clone();
  EXPECT_TRUE(same(a.scatter_reduce_(1, index, src, "amin", false),
                   scatter_reduce(x, 1, index, src, "amin", false)));
  const Tensor slices = make_tensor({3, 0, 3}, {3}, kInt64);
  const Tensor source = uniform_input({3, 3, 6}, -1.0, 1.0, 54).detach().select(2, 0);
  const Tensor rows = uniform_input({4, 3}, -1.0, 1.0, 55).detach();
  Tensor r = rows.clone();
  EXPECT_TRUE(same(r.index_copy_(0, slices, source), index_copy(rows, 0, slices, source)));
  r = rows.clone();
  EXPECT_TRUE(same(r.index_reduce_(0, slices, source, "mean"),
                   index_reduce(rows, 0, slices, source, "mean")));
  // index_put_ with accumulate and no tensor index adds into the view.
  r = rows.clone();
  r.index_put_({1}, 1.0, true);
  std::vector<double> want = to_vector(rows);
  for (std::size_t j = 3; j < 6; ++j)
    want[j] += 1.0;
  EXPECT_TRUE(all_close(r, want, 0, 0));
}

// A 0-d input and index, and an empty index (nothing is written).
TEST(Scatter, ZeroDimAndEmptyIndices) {
  const Tensor x = full({}, 2.0, TensorOptions(kFloat64));
  const Tensor i = zeros({}, TensorOptions(kInt64));
  EXPECT_TRUE(all_close(scatter(x, 0, i, full({}, 5.0, TensorOptions(kFloat64))), {5}, 0, 0));
  EXPECT_TRUE(all_close(scatter_reduce(x, 0, i, full({}, 5.0, TensorOptions(kFloat64)), "prod"),
                        {10}, 0, 0));
  const Tensor y = uniform_input({2, 3}, -1.0, 1.0, 61).detach();
  const Tensor none = zeros({2, 0}, TensorOptions(kInt64));
  for (const char* reduce : {"sum", "prod", "mean", "amax", "amin"}) {
    EXPECT_TRUE(matches_within_roundoff(
        scatter_reduce(y, 1, none, zeros({2, 0}, TensorOptions(kFloat64)), reduce, false), y, {},
        {.bitwise = true}))
        << reduce;
  }
}

}  // namespace
}  // namespace leangrad::test
