// prod, the running reductions (cumprod, logcumsumexp, cummax, cummin), the order statistics
// (median, nanmedian, kthvalue, quantile, nanquantile), nansum, nanmean, aminmax, var_mean,
// std_mean, histc, unique_consecutive, searchsorted and bucketize: against PyTorch 1.13
// (tests/data/statistics.json, written by make_statistics.py) values and gradients; against plain
// loops over random data with ties (the index rules), long and strided layouts, 16-bit dtypes;
// finite differences, twice, for every differentiable one (products with zeros included). Misuse:
// the Statistics table of tests/misuse/test_misuse_indexing.cpp.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include <leangrad/autograd/engine.h>
#include <leangrad/autograd/functions.h>
#include <leangrad/autograd/indexing_functions.h>
#include <leangrad/autograd/reduction_functions.h>
#include <leangrad/autograd/statistics_functions.h>
#include <leangrad/core/creation.h>
#include <leangrad/kernels/creation.h>
#include <leangrad/kernels/ops.h>
#include <leangrad/kernels/reduce_math.h>
#include "testing/gradcheck.h"
#include "testing/reference_data.h"
#include "testing/tensor_testing.h"

namespace leangrad::test {
namespace {

const std::vector<ReferenceCase>& cases() {
  static const std::vector<ReferenceCase> all = load_reference("statistics.json");
  return all;
}

bool starts_with(const std::string& s, const char* prefix) {
  return s.rfind(prefix, 0) == 0;
}

std::int64_t int_param(const nlohmann::json& p, const char* key, std::int64_t fallback) {
  return p.contains(key) ? p.at(key).get<std::int64_t>() : fallback;
}
bool bool_param(const nlohmann::json& p, const char* key) {
  return p.contains(key) && p.at(key).get<bool>();
}
DimList dims_param(const nlohmann::json& p) {
  return DimList(p.at("dims").get<std::vector<std::int64_t>>());
}

std::vector<Tensor> pair(const std::tuple<Tensor, Tensor>& t) {
  return {std::get<0>(t), std::get<1>(t)};
}

using Fn = std::function<std::vector<Tensor>(const std::vector<Tensor>&, const nlohmann::json&)>;

// The function of each case, by name prefix (the longest prefix that matches).
Fn function_for(const std::string& name) {
  const auto dim = [](const nlohmann::json& p) { return int_param(p, "dim", 0); };
  const auto keep = [](const nlohmann::json& p) { return bool_param(p, "keepdim"); };
  const std::vector<std::pair<std::string, Fn>> table = {
      {"prod_all", [](const auto& x, const auto&) { return std::vector<Tensor>{prod(x[0])}; }},
      {"prod_int32_all",
       [](const auto& x, const auto&) { return std::vector<Tensor>{x[0].prod()}; }},
      {"prod_", [=](const auto& x,
                    const auto& p) { return std::vector<Tensor>{prod(x[0], dim(p), keep(p))}; }},
      {"cumprod",
       [=](const auto& x, const auto& p) { return std::vector<Tensor>{cumprod(x[0], dim(p))}; }},
      {"logcumsumexp",
       [=](const auto& x, const auto& p) {
         return std::vector<Tensor>{x[0].logcumsumexp(dim(p))};
       }},
      {"cummax", [=](const auto& x, const auto& p) { return pair(cummax(x[0], dim(p))); }},
      {"cummin", [=](const auto& x, const auto& p) { return pair(x[0].cummin(dim(p))); }},
      {"median_all", [](const auto& x, const auto&) { return std::vector<Tensor>{median(x[0])}; }},
      {"median_",
       [=](const auto& x, const auto& p) { return pair(median(x[0], dim(p), keep(p))); }},
      {"nanmedian_all",
       [](const auto& x, const auto&) { return std::vector<Tensor>{x[0].nanmedian()}; }},
      {"nanmedian_",
       [=](const auto& x, const auto& p) { return pair(nanmedian(x[0], dim(p), keep(p))); }},
      {"kthvalue",
       [=](const auto& x, const auto& p) {
         return pair(kthvalue(x[0], p.at("k").template get<std::int64_t>(), dim(p), keep(p)));
       }},
      {"quantile_scalar_all",
       [](const auto& x, const auto& p) {
         return std::vector<Tensor>{quantile(x[0], p.at("q").template get<double>())};
       }},
      {"quantile_scalar_",
       [=](const auto& x, const auto& p) {
         return std::vector<Tensor>{
             x[0].quantile(p.at("q").template get<double>(), dim(p), keep(p))};
       }},
      {"quantile_",
       [=](const auto& x, const auto& p) {
         const std::string mode = p.contains("interpolation")
                                      ? p.at("interpolation").template get<std::string>()
                                      : "linear";
         return std::vector<Tensor>{quantile(x[0], x[1], dim(p), keep(p), mode)};
       }},
      {"nanquantile_scalar_all",
       [](const auto& x, const auto& p) {
         return std::vector<Tensor>{nanquantile(x[0], p.at("q").template get<double>())};
       }},
      {"nanquantile",
       [=](const auto& x, const auto& p) {
         return std::vector<Tensor>{x[0].nanquantile(x[1], dim(p), keep(p))};
       }},
      {"nansum_int64",
       [](const auto& x, const auto& p) {
         return std::vector<Tensor>{nansum(x[0], dims_param(p))};
       }},
      {"nansum",
       [=](const auto& x, const auto& p) {
         return std::vector<Tensor>{x[0].nansum(dims_param(p), keep(p))};
       }},
      {"nanmean",
       [=](const auto& x, const auto& p) {
         return std::vector<Tensor>{nanmean(x[0], dims_param(p), keep(p))};
       }},
      {"aminmax_all", [](const auto& x, const auto&) { return pair(aminmax(x[0])); }},
      {"aminmax_",
       [=](const auto& x, const auto& p) { return pair(x[0].aminmax(dim(p), keep(p))); }},
      {"var_mean",
       [=](const auto& x, const auto& p) {
         const bool unbiased = !p.contains("unbiased") || p.at("unbiased").template get<bool>();
         return pair(var_mean(x[0], dims_param(p), unbiased, keep(p)));
       }},
      {"std_mean",
       [=](const auto& x, const auto& p) {
         return pair(std_mean(x[0], dims_param(p), true, keep(p)));
       }},
      {"searchsorted_sorter",
       [](const auto& x, const auto&) {
         return std::vector<Tensor>{searchsorted(x[0], x[1], false, false, std::nullopt, x[2]),
                                    searchsorted(x[0], x[1], false, true, std::nullopt, x[2])};
       }},
      {"searchsorted_rows",
       [](const auto& x, const auto&) {
         return std::vector<Tensor>{searchsorted(x[0], x[1]),
                                    searchsorted(x[0], x[1], false, false, "right")};
       }},
      {"searchsorted_int_float",
       [](const auto& x, const auto&) {
         return std::vector<Tensor>{searchsorted(x[0], x[1]), searchsorted(x[0], x[1], true, true)};
       }},
      {"searchsorted_",
       [](const auto& x, const auto&) {
         return std::vector<Tensor>{searchsorted(x[0], x[1]),
                                    searchsorted(x[0], x[1], false, true)};
       }},
      {"unique_consecutive",
       [](const auto& x, const auto& p) {
         const std::optional<std::int64_t> dim =
             p.contains("dim")
                 ? std::optional<std::int64_t>(p.at("dim").template get<std::int64_t>())
                 : std::nullopt;
         const auto [output, inverse, counts] = unique_consecutive(x[0], true, true, dim);
         // Not asked for: empty, as LibTorch's.
         const auto [bare, no_inverse, no_counts] = x[0].unique_consecutive(false, false, dim);
         EXPECT_TRUE(matches_within_roundoff(bare, output, {}, {.bitwise = true}));
         EXPECT_EQ(no_inverse.numel(), 0);
         EXPECT_EQ(no_counts.numel(), 0);
         return std::vector<Tensor>{output, inverse, counts};
       }},
      {"histc",
       [](const auto& x, const auto& p) {
         const double lo = p.contains("min") ? p.at("min").template get<double>() : 0.0;
         const double hi = p.contains("max") ? p.at("max").template get<double>() : 0.0;
         const std::int64_t bins = p.at("bins").template get<std::int64_t>();
         const Tensor counts = histc(x[0], bins, lo, hi);
         EXPECT_TRUE(equal(x[0].histc(bins, lo, hi), counts));  // the method is the function
         return std::vector<Tensor>{counts};
       }},
      {"bucketize",
       [](const auto& x, const auto&) {
         return std::vector<Tensor>{bucketize(x[0], x[1]), bucketize(x[0], x[1], true, true)};
       }},
  };
  const Fn* best = nullptr;
  std::size_t best_length = 0;
  for (const auto& [prefix, fn] : table) {
    if (starts_with(name, prefix.c_str()) && prefix.size() > best_length) {
      best = &fn;
      best_length = prefix.size();
    }
  }
  return best != nullptr ? *best : Fn();
}

// The roundings on each side's longest path, as ulps of the result's magnitude (at least 1):
// selections and searches are exact; a product or running product of n factors makes n roundings
// on each side (PyTorch's float32 ones in its own order); logcumsumexp about five per step (the
// earlier steps' errors shrink by exp(acc - out) <= 1); sums of n terms n each; quantile's rank,
// floor and lerp the same correctly rounded steps as torch's.
double value_ulps(const std::string& name, const Tensor& input) {
  const double n = static_cast<double>(std::max<std::int64_t>(input.numel(), 1));
  if (starts_with(name, "prod") || starts_with(name, "cumprod")) return 2 * n;
  if (starts_with(name, "logcumsumexp")) return 5 * n;
  if (starts_with(name, "nansum") || starts_with(name, "nanmean")) return 2 * n;
  if (starts_with(name, "var_mean") || starts_with(name, "std_mean")) return 4 * n;
  if (starts_with(name, "quantile") || starts_with(name, "nanquantile")) {
    // The same correctly rounded steps as torch's: float32 bit for bit; torch's float64 lerp
    // fuses a multiply-add (one rounding fewer).
    return input.dtype() == kFloat32 ? 0 : 4;
  }
  return 0;  // selections: bit for bit
}

TEST(Statistics, MatchPyTorch) {
  int checked = 0;
  for (const ReferenceCase& c : cases()) {
    const Fn fn = function_for(c.name);
    ASSERT_TRUE(fn) << "no function for case " << c.name;
    SCOPED_TRACE(c.name);
    const ReferenceInputs reference = reference_inputs(c);
    const std::vector<std::string>& order = reference.names;
    const std::vector<Tensor>& inputs = reference.tensors;
    const bool differentiable = reference.differentiable;
    const std::vector<Tensor> outs = fn(inputs, c.params);
    ASSERT_EQ(static_cast<std::int64_t>(outs.size()), c.params.at("outputs").get<std::int64_t>());
    const double ulps = value_ulps(c.name, inputs[0]);
    Tensor loss;
    for (std::size_t i = 0; i < outs.size(); ++i) {
      const std::string index = std::to_string(i);
      const Tensor& want = c.at("out" + index);
      ASSERT_EQ(outs[i].dtype(), want.dtype()) << "out" << index;
      ASSERT_EQ(outs[i].shape(), want.shape()) << "out" << index;
      if (!is_floating(want.dtype())) {
        if (i == 1 && bool_param(c.params, "index_ties")) {
          // torch's index is one of several equal elements: each index must hold its value.
          const std::int64_t d = int_param(c.params, "dim", 0);
          const Tensor held = squeeze(gather(inputs[0], d, unsqueeze(outs[1], d)), d);
          EXPECT_TRUE(matches_within_roundoff(held, outs[0], {}, {.bitwise = true}));
        } else {
          EXPECT_TRUE(equal(outs[i], want)) << "out" << index;
        }
        continue;
      }
      EXPECT_TRUE(matches_within_roundoff(outs[i], want, {}, {.ulps = ulps, .bitwise = ulps == 0}))
          << "out" << index;
      if (c.tensors.count("w" + index) > 0) {
        const Tensor term = sum(mul(outs[i], c.at("w" + index)));
        loss = loss.defined() ? add(loss, term) : term;
      }
    }
    if (differentiable) {
      ASSERT_TRUE(loss.defined());
      loss.backward();
      for (std::size_t k = 0; k < order.size(); ++k) {
        const auto want = c.tensors.find("d_" + order[k]);
        if (want == c.tensors.end()) continue;
        ASSERT_TRUE(inputs[k].grad().defined()) << "d_" << order[k];
        // One chain rule deeper than the values: twice their roundings, and at least 32.
        EXPECT_TRUE(matches_within_roundoff(inputs[k].grad(), want->second, {},
                                            {.ulps = std::max(32.0, 2 * ulps)}))
            << "d_" << order[k];
      }
    }
    ++checked;
  }
  EXPECT_EQ(checked, 87);
}

// ---- Index rules against plain loops ------------------------------------------------------------

// Small integers as float64: many ties, and NaN at a few places when asked.
Tensor tied_values(const Shape& shape, std::uint64_t seed, bool with_nan) {
  std::mt19937_64 rng(seed);
  std::int64_t n = 1;
  for (std::int64_t s : shape)
    n *= s;
  std::vector<double> v(static_cast<std::size_t>(n));
  for (double& e : v) {
    e = static_cast<double>(rng() % 5);
    if (with_nan && rng() % 7 == 0) e = std::numeric_limits<double>::quiet_NaN();
  }
  return make_tensor(v, shape, kFloat64);
}

// Slice `s` (the elements along dim 1 of an (a, n, b) tensor, s = i * b + j) as a vector.
std::vector<double> slice_of(const std::vector<double>& flat, std::int64_t n, std::int64_t b,
                             std::int64_t s) {
  std::vector<double> out;
  for (std::int64_t k = 0; k < n; ++k)
    out.push_back(flat[static_cast<std::size_t>((s / b) * n * b + k * b + s % b)]);
  return out;
}

// The element of rank r (NaN the largest) and the first position holding it.
std::pair<double, std::int64_t> rank_reference(const std::vector<double>& row, std::int64_t r) {
  std::vector<double> sorted = row;
  std::stable_sort(sorted.begin(), sorted.end(), [](double a, double b) {
    if (std::isnan(a)) return false;
    return std::isnan(b) || a < b;
  });
  const double v = sorted[static_cast<std::size_t>(r)];
  for (std::size_t i = 0; i < row.size(); ++i)
    if (row[i] == v || (std::isnan(row[i]) && std::isnan(v)))
      return {v, static_cast<std::int64_t>(i)};
  return {v, -1};
}

// median, nanmedian and kthvalue along the middle dim of (3, n, 4) tensors full of ties and
// NaN: each value is the rank's element of a plain sort, each index the first position holding
// it (Note [Order statistics]).
TEST(Statistics, OrderStatisticsTakeTheFirstPositionOfTheirValue) {
  for (std::int64_t n : {1, 2, 7, 40}) {
    SCOPED_TRACE("n = " + std::to_string(n));
    const Tensor x = tied_values({3, n, 4}, static_cast<std::uint64_t>(n), /*with_nan=*/true);
    const auto flat = to_vector(x);
    const auto [med, med_i] = median(x, 1);
    const auto [nanmed, nanmed_i] = nanmedian(x, 1);
    const std::int64_t k = (n + 1) / 2;
    const auto [kth, kth_i] = kthvalue(x, k, 1);
    const auto med_v = to_vector(med), nanmed_v = to_vector(nanmed), kth_v = to_vector(kth);
    const auto med_iv = to_vector(med_i), nanmed_iv = to_vector(nanmed_i),
               kth_iv = to_vector(kth_i);
    for (std::int64_t s = 0; s < 12; ++s) {
      const std::vector<double> row = slice_of(flat, n, 4, s);
      const auto nans =
          std::count_if(row.begin(), row.end(), [](double v) { return std::isnan(v); });
      const auto [mv, mi] = rank_reference(row, nans > 0 ? n - 1 : (n - 1) / 2);
      const std::int64_t m = n - nans;
      const auto [nv, ni] = rank_reference(row, m > 0 ? (m - 1) / 2 : 0);
      const auto [kv, ki] = rank_reference(row, k - 1);
      const auto same = [](double a, double b) {
        return a == b || (std::isnan(a) && std::isnan(b));
      };
      EXPECT_TRUE(same(med_v[s], mv)) << "median of slice " << s;
      EXPECT_EQ(med_iv[s], mi) << "median index of slice " << s;
      EXPECT_TRUE(same(nanmed_v[s], nv)) << "nanmedian of slice " << s;
      EXPECT_EQ(nanmed_iv[s], ni) << "nanmedian index of slice " << s;
      EXPECT_TRUE(same(kth_v[s], kv)) << "kthvalue of slice " << s;
      EXPECT_EQ(kth_iv[s], ki) << "kthvalue index of slice " << s;
    }
  }
}

// The positions of a row's elements in a stable ascending sort, NaN the largest, -0 and +0 one
// value: std::stable_sort of the positions.
std::vector<std::int64_t> stable_order_reference(const std::vector<double>& row) {
  std::vector<std::int64_t> order(row.size());
  std::iota(order.begin(), order.end(), std::int64_t{0});
  std::stable_sort(order.begin(), order.end(), [&row](std::int64_t i, std::int64_t j) {
    const double a = row[static_cast<std::size_t>(i)], b = row[static_cast<std::size_t>(j)];
    if (std::isnan(a)) return false;
    return std::isnan(b) || a < b;
  });
  return order;
}

// ops::argsort_at along the middle dim of (3, n, 4) tensors full of ties (NaN and both zeros
// among them), each slice asking for 1 to 9 ranks, repeated and adjacent ones among them: every
// position is the stable sort's at its rank. Rows of 2000 and 5000 select, rows of 1 and 2 sort,
// and rows of 7 and 40 do either by their ranks' count (Note [Stable positions by selection]).
TEST(Statistics, ArgsortAtIsTheStableSortsPositionOfEachRank) {
  std::mt19937_64 rng(29);
  for (const DType dtype : {kFloat64, kFloat32, kFloat16, kInt64}) {
    for (std::int64_t n : {1, 2, 7, 40, 2000, 5000}) {
      for (std::int64_t count : {1, 2, 3, 9}) {
        SCOPED_TRACE(std::string(dtype_name(dtype)) + ", n = " + std::to_string(n) + ", ranks " +
                     std::to_string(count));
        std::vector<double> values(static_cast<std::size_t>(12 * n));
        for (double& v : values) {
          v = static_cast<double>(rng() % 5) - 2.0;
          if (v == 0 && rng() % 2 == 0) v = -0.0;
          if (is_floating(dtype) && rng() % 9 == 0) v = std::numeric_limits<double>::quiet_NaN();
        }
        std::vector<double> ranks;
        for (std::int64_t k = 0; k < 12 * count; ++k) {
          // Adjacent and repeated ranks, as a quantile's floor and ceil ask.
          const std::int64_t previous = ranks.empty() ? 0 : static_cast<std::int64_t>(ranks.back());
          const std::int64_t r =
              k % count != 0 && rng() % 2 == 0
                  ? std::min(previous + static_cast<std::int64_t>(rng() % 2), n - 1)
                  : static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(n));
          ranks.push_back(static_cast<double>(r));
        }
        // Ranks laid out (3, count, 4) as the slices are.
        const Tensor x = make_tensor(values, {3, n, 4}, kFloat64);
        const Tensor rank_tensor =
            make_tensor(ranks, {3, 4, count}, kInt64).permute({0, 2, 1}).contiguous();
        const Tensor positions = ops::argsort_at(x.to(dtype), 1, rank_tensor);
        ASSERT_EQ(positions.shape(), Shape({3, count, 4}));
        const auto got = to_vector(positions);
        const auto flat = to_vector(x);
        for (std::int64_t s = 0; s < 12; ++s) {
          const auto order = stable_order_reference(slice_of(flat, n, 4, s));
          for (std::int64_t k = 0; k < count; ++k) {
            const auto r = static_cast<std::size_t>(ranks[static_cast<std::size_t>(s * count + k)]);
            const auto at = static_cast<std::size_t>((s / 4) * count * 4 + k * 4 + s % 4);
            EXPECT_EQ(got[at], static_cast<double>(order[r])) << "slice " << s << ", rank " << r;
          }
        }
      }
    }
  }
}

// The most frequent value of a row (NaNs one value, the largest; the smallest of values that
// tie) and the last position holding it: counted with a map, not sorted in runs as mode is.
std::pair<double, std::int64_t> mode_reference(const std::vector<double>& row) {
  std::map<double, std::int64_t> counts;  // NaNs are counted apart
  std::int64_t nans = 0;
  for (const double v : row) {
    if (std::isnan(v)) {
      ++nans;
    } else {
      ++counts[v == 0 ? 0.0 : v];  // -0 and +0 are one value
    }
  }
  double best = 0;
  std::int64_t best_count = 0;
  for (const auto& [v, c] : counts) {  // ascending: the first of equal counts is the smallest
    if (c > best_count) {
      best = v;
      best_count = c;
    }
  }
  const bool nan_mode = nans > best_count;
  std::int64_t last = -1;
  for (std::size_t i = 0; i < row.size(); ++i)
    if (nan_mode ? std::isnan(row[i]) : row[i] == best) last = static_cast<std::int64_t>(i);
  return {nan_mode ? row[static_cast<std::size_t>(last)] : best, last};
}

// mode along the middle dim of (3, n, 4) tensors full of ties and NaN, in float64, float32 and
// int64 (without NaN), with keepdim, against mode_reference; the values a gather of the input
// (the gradient one at each index); and PyTorch 1.13's answers to three probes (torch.mode's
// output for these inputs: ties give the smallest value, the index its last position).
TEST(Statistics, ModeIsTheMostFrequentValueAtItsLastPosition) {
  for (std::int64_t n : {1, 2, 7, 40}) {
    for (const DType dtype : {kFloat64, kFloat32, kInt64}) {
      SCOPED_TRACE("n = " + std::to_string(n) + ", " + dtype_name(dtype));
      const bool with_nan = dtype != kInt64;
      const Tensor x =
          tied_values({3, n, 4}, static_cast<std::uint64_t>(n) + 11, with_nan).to(dtype);
      const auto [values, indices] = mode(x, 1);
      const auto [kept_values, kept_indices] = mode(x, -2, /*keepdim=*/true);
      EXPECT_EQ(values.shape(), Shape({3, 4}));
      EXPECT_EQ(kept_indices.shape(), Shape({3, 1, 4}));
      EXPECT_TRUE(equal(kept_indices.squeeze(1), indices));
      const auto flat = to_vector(x), v = to_vector(values), i = to_vector(indices);
      for (std::int64_t s = 0; s < 12; ++s) {
        const auto [want_value, want_index] = mode_reference(slice_of(flat, n, 4, s));
        const std::size_t k = static_cast<std::size_t>(s);
        EXPECT_TRUE(v[k] == want_value || (std::isnan(v[k]) && std::isnan(want_value)))
            << "slice " << s << ": " << v[k] << " against " << want_value;
        EXPECT_EQ(i[k], want_index) << "slice " << s;
      }
    }
  }
  const Tensor probe = make_tensor({3, 1, 2, 2, 3, 1}, {6}, kFloat64);
  EXPECT_EQ(std::get<0>(mode(probe)).item<double>(), 1.0);
  EXPECT_EQ(std::get<1>(mode(probe)).item<std::int64_t>(), 5);
  const Tensor rows = make_tensor({3, 1, 2, 2, 3, 1, 5, 5, 4, 4, 4, 5}, {2, 6}, kInt64);
  EXPECT_EQ(to_vector(std::get<0>(mode(rows, 1))), (std::vector<double>{1, 4}));
  EXPECT_EQ(to_vector(std::get<1>(mode(rows, 1))), (std::vector<double>{5, 4}));
  const Tensor x = make_tensor({1.0, 2.0, 2.0, 3.0}, {4}, kFloat64).requires_grad_();
  sum(std::get<0>(mode(x))).backward();
  EXPECT_EQ(to_vector(x.grad()), (std::vector<double>{0, 0, 1, 0}));
  // NaNs are one value, the largest: the mode where they are the most frequent (at the last
  // NaN; PyTorch 1.13 names index 0 here), not where a number ties with them.
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const auto [nan_mode, nan_index] = mode(make_tensor({nan, 1.0, nan, 2.0}, {4}, kFloat64));
  EXPECT_TRUE(std::isnan(nan_mode.item<double>()));
  EXPECT_EQ(nan_index.item<std::int64_t>(), 2);
  const auto [tie_mode, tie_index] = mode(make_tensor({nan, 5.0, nan, 5.0}, {4}, kFloat64));
  EXPECT_EQ(tie_mode.item<double>(), 5.0);
  EXPECT_EQ(tie_index.item<std::int64_t>(), 3);
  // A 0-d input is its own mode, at index 0; a transposed input is its contiguous copy's.
  const auto [scalar, scalar_index] = mode(full({}, 5.0, kFloat64));
  EXPECT_EQ(scalar.item<double>(), 5.0);
  EXPECT_EQ(scalar_index.item<std::int64_t>(), 0);
  const Tensor t = tied_values({6, 9}, 4, /*with_nan=*/true).transpose(0, 1);
  EXPECT_TRUE(equal(std::get<1>(mode(t, 0)), std::get<1>(mode(t.contiguous(), 0))));
  EXPECT_TRUE(equal(std::get<1>(t.mode(1, true)), std::get<1>(mode(t, 1, true))));  // the method
}

// -0 and +0 are one value: the first zero of either sign is the index, its element the value;
// and a transposed input (slices strided in memory) selects the same as its contiguous copy.
TEST(Statistics, OrderStatisticsTakeSignedZerosAsOneValue) {
  const Tensor x = make_tensor({1.0, -0.0, 0.0, -1.0, 0.0}, {5}, kFloat64);
  const auto [value, index] = median(x, 0);
  EXPECT_EQ(index.item<std::int64_t>(), 1);
  EXPECT_TRUE(std::signbit(value.item<double>()));
  const auto [kth, kth_index] = kthvalue(x, 5, 0);
  EXPECT_EQ(kth.item<double>(), 1.0);
  EXPECT_EQ(kth_index.item<std::int64_t>(), 0);
  const Tensor t = tied_values({6, 9}, 4, /*with_nan=*/true).transpose(0, 1);
  for (std::int64_t d : {0, 1}) {
    const auto [v, i] = median(t, d);
    const auto [vc, ic] = median(t.contiguous(), d);
    EXPECT_TRUE(equal(i, ic)) << "dim " << d;
    EXPECT_TRUE(matches_within_roundoff(v, vc, {}, {.bitwise = true})) << "dim " << d;
  }
  // Slices of nothing along the other dims: empty results of the kept shape.
  EXPECT_EQ(std::get<1>(median(zeros({0, 4}), 1)).shape(), Shape({0}));
}

// cummax and cummin against a loop with torch's rule (ties: the later index; NaN: the latest NaN),
// along each dim of a (5, 6, 7) tensor (inner == 1 and the column blocks), plain and transposed.
TEST(Statistics, CumulativeExtremaFollowTheLaterIndexRule) {
  const Tensor x = tied_values({5, 6, 7}, 3, /*with_nan=*/true);
  for (const bool is_max : {true, false}) {
    for (std::int64_t d = 0; d < 3; ++d) {
      for (const bool transposed : {false, true}) {
        SCOPED_TRACE(std::string(is_max ? "cummax" : "cummin") + " dim " + std::to_string(d) +
                     (transposed ? " transposed" : ""));
        const Tensor in = transposed ? x.transpose(0, 2) : x;
        const auto [values, indices] = is_max ? cummax(in, d) : cummin(in, d);
        // The reference walks the moved-last contiguous copy.
        const Tensor moved = in.movedim(d, -1).contiguous();
        const auto flat = to_vector(moved);
        const auto got_v = to_vector(values.movedim(d, -1).contiguous());
        const auto got_i = to_vector(indices.movedim(d, -1).contiguous());
        const std::int64_t n = in.size(d);
        for (std::size_t r = 0; r < flat.size() / static_cast<std::size_t>(n); ++r) {
          double best = 0;
          std::int64_t best_i = -1;
          for (std::int64_t j = 0; j < n; ++j) {
            const double v = flat[r * n + j];
            const bool takes = best_i < 0 || std::isnan(v) ||
                               (!std::isnan(best) && (is_max ? v >= best : v <= best));
            if (takes) {
              best = v;
              best_i = j;
            }
            const double g = got_v[r * n + j];
            ASSERT_TRUE(g == best || (std::isnan(g) && std::isnan(best)))
                << "row " << r << " step " << j;
            ASSERT_EQ(got_i[r * n + j], best_i) << "row " << r << " step " << j;
          }
        }
      }
    }
  }
}

// ---- Products: layouts, long rows, 16-bit dtypes ------------------------------------------------

// prod over each dim, over separated dims (reduced in stages) and over everything, of a (4, 5, 6)
// float64 tensor of factors near 1, against a plain loop: n roundings each side.
TEST(Statistics, ProdOverEveryLayoutIsTheLoopsProduct) {
  const Tensor x = uniform_input({4, 5, 6}, 0.6, 1.4, 21).detach();
  const auto flat = to_vector(x);
  const auto loop = [&](const std::vector<bool>& reduced) {
    const std::int64_t sizes[3] = {4, 5, 6};
    std::vector<double> out;
    for (std::int64_t a = 0; a < (reduced[0] ? 1 : 4); ++a)
      for (std::int64_t b = 0; b < (reduced[1] ? 1 : 5); ++b)
        for (std::int64_t c = 0; c < (reduced[2] ? 1 : 6); ++c) {
          double p = 1;
          for (std::int64_t i = 0; i < (reduced[0] ? sizes[0] : 1); ++i)
            for (std::int64_t j = 0; j < (reduced[1] ? sizes[1] : 1); ++j)
              for (std::int64_t k = 0; k < (reduced[2] ? sizes[2] : 1); ++k)
                p *= flat[static_cast<std::size_t>(
                    ((reduced[0] ? i : a) * 5 + (reduced[1] ? j : b)) * 6 + (reduced[2] ? k : c))];
          out.push_back(p);
        }
    return out;
  };
  const auto expect = [&](const Tensor& got, const std::vector<double>& want, double n) {
    EXPECT_TRUE(matches_within_roundoff(got, make_tensor(want, got.shape(), kFloat64), {},
                                        {.ulps = 2 * n}));
  };
  expect(prod(x, 0), loop({true, false, false}), 4);
  expect(prod(x, 1), loop({false, true, false}), 5);
  expect(prod(x, 2), loop({false, false, true}), 6);
  expect(prod(x), loop({true, true, true}), 120);
  // A transposed (non-contiguous) input, and separated dims through a permuted view.
  expect(prod(x.transpose(0, 2), 2).transpose(0, 1), loop({true, false, false}), 4);
  // 100000 factors: the run is split into chunks reduced on several threads, then merged.
  const Tensor many = uniform_input({100000}, 0.99999, 1.00001, 5).detach();
  double p = 1;
  for (double v : to_vector(many))
    p *= v;
  expect(prod(many), {p}, 100000);
  // Integers wrap around in int64, as PyTorch's: 3^41 overflows.
  const Tensor threes = full({41}, 3.0, TensorOptions(kInt64));
  std::uint64_t wrapped = 1;
  for (int i = 0; i < 41; ++i)
    wrapped *= 3;
  EXPECT_EQ(prod(threes).item<std::int64_t>(), static_cast<std::int64_t>(wrapped));
  EXPECT_EQ(prod(zeros({0})).item<double>(), 1.0);
}

// The running op of a (6, 300) float tensor along d, each step `step` in float, in order.
template <typename Step>
Tensor running_in_float(const Tensor& x, std::int64_t d, float identity, const Step& step) {
  std::vector<double> values = to_vector(x);
  const std::int64_t rows = 6, cols = 300;
  const std::int64_t lines = d == 0 ? cols : rows, length = d == 0 ? rows : cols;
  for (std::int64_t line = 0; line < lines; ++line) {
    float acc = identity;
    for (std::int64_t j = 0; j < length; ++j) {
      double& v = values[static_cast<std::size_t>(d == 0 ? j * cols + line : line * cols + j)];
      acc = step(acc, static_cast<float>(v));
      v = acc;
    }
  }
  return make_tensor(values, {rows, cols}, kFloat32);
}

// float16 and bfloat16 multiply in float32 and round once: the float32 computation on the widened
// values, rounded, bit for bit (rows and columns, the product and the running product; float32's
// own running products carry a float64, Note [Running reductions of float32 in float64], so the
// running ones are checked against float steps taken here).
TEST(Statistics, SixteenBitProductsRoundTheFloatProductOnce) {
  for (const DType dtype : {kFloat16, kBFloat16}) {
    SCOPED_TRACE(dtype_name(dtype));
    const Tensor x = uniform_input({6, 300}, 0.9, 1.1, 8).detach().to(dtype);
    const Tensor wide = x.to(kFloat32);
    for (std::int64_t d : {0, 1}) {
      EXPECT_TRUE(equal(prod(x, d), prod(wide, d).to(dtype))) << "prod dim " << d;
      const Tensor products =
          running_in_float(wide, d, 1.0f, [](float a, float b) { return a * b; });
      EXPECT_TRUE(equal(cumprod(x, d), products.to(dtype))) << "cumprod dim " << d;
      const Tensor log_sums =
          running_in_float(wide, d, -std::numeric_limits<float>::infinity(),
                           [](float a, float b) { return reduce_math::log_add_exp(a, b); });
      EXPECT_TRUE(equal(logcumsumexp(x, d), log_sums.to(dtype))) << "logcumsumexp dim " << d;
    }
  }
}

// ---- Gradients by finite differences, twice -----------------------------------------------------

// Factors with zeros: one in a row, two in another, one first and one last.
Tensor with_zeros() {
  Tensor x = away_from_zero_input({4, 5}, 0.5, 1.5, 12).detach();
  auto v = to_vector(x);
  for (std::size_t i : {2u, 6u, 8u, 10u, 19u})
    v[i] = 0.0;
  return make_tensor(v, {4, 5}, kFloat64).requires_grad_();
}

TEST(Statistics, ProductsDifferentiateTwiceWithZeros) {
  for (const bool zeros_in : {false, true}) {
    SCOPED_TRACE(zeros_in ? "with zeros" : "no zeros");
    const Tensor x = zeros_in ? with_zeros() : away_from_zero_input({4, 5}, 0.5, 1.5, 13);
    for (std::int64_t d : {0, 1}) {
      const auto p = [d](const std::vector<Tensor>& in) { return prod(in[0], d); };
      const auto c = [d](const std::vector<Tensor>& in) { return cumprod(in[0], d); };
      EXPECT_TRUE(gradcheck(p, {x})) << "prod dim " << d;
      EXPECT_TRUE(gradgradcheck(p, {x})) << "prod dim " << d;
      EXPECT_TRUE(gradcheck(c, {x})) << "cumprod dim " << d;
      EXPECT_TRUE(gradgradcheck(c, {x})) << "cumprod dim " << d;
    }
    const auto all = [](const std::vector<Tensor>& in) { return prod(in[0]); };
    EXPECT_TRUE(gradcheck(all, {x}));
    EXPECT_TRUE(gradgradcheck(all, {x}));
  }
}

TEST(Statistics, RunningReductionsDifferentiateTwice) {
  const Tensor x = uniform_input({3, 6}, -3.0, 3.0, 31);
  for (std::int64_t d : {0, 1}) {
    const auto lcse = [d](const std::vector<Tensor>& in) { return logcumsumexp(in[0], d); };
    EXPECT_TRUE(gradcheck(lcse, {x})) << "logcumsumexp dim " << d;
    EXPECT_TRUE(gradgradcheck(lcse, {x})) << "logcumsumexp dim " << d;
    // cummax and cummin select elements: their gradients do not depend on x (second
    // derivatives are 0, which leaves no graph for gradgradcheck to differentiate).
    const auto cmax = [d](const std::vector<Tensor>& in) { return std::get<0>(cummax(in[0], d)); };
    const auto cmin = [d](const std::vector<Tensor>& in) { return std::get<0>(cummin(in[0], d)); };
    EXPECT_TRUE(gradcheck(cmax, {x})) << "cummax dim " << d;
    EXPECT_TRUE(gradcheck(cmin, {x})) << "cummin dim " << d;
  }
  // logcumsumexp of large magnitudes: the log-domain gradient stays finite where exp overflows.
  Tensor big = mul(uniform_input({2, 5}, -1.0, 1.0, 32).detach(), 800.0).requires_grad_();
  sum(logcumsumexp(big, 1)).backward();
  EXPECT_TRUE(all(isfinite(big.grad())).item<bool>());
}

// The selections, quantiles (lerps of selections), nansum and nanmean are piecewise linear in x:
// their first derivatives by finite differences. var and std differentiate twice.
TEST(Statistics, OrderStatisticsDifferentiate) {
  const Tensor x = uniform_input({4, 5}, -1.0, 1.0, 41);
  const std::vector<std::function<Tensor(const std::vector<Tensor>&)>> fns = {
      [](const auto& in) { return std::get<0>(median(in[0], 1)); },
      [](const auto& in) { return std::get<0>(nanmedian(in[0], 0, true)); },
      [](const auto& in) { return std::get<0>(kthvalue(in[0], 2, 1)); },
      [](const auto& in) { return median(in[0]); },
      [](const auto& in) { return quantile(in[0], 0.37, 1); },
      [](const auto& in) { return nanquantile(in[0], 0.8, 0, false, "midpoint"); },
      [](const auto& in) { return nanmean(in[0], {1}); },
      [](const auto& in) { return nansum(in[0]); },
      [](const auto& in) { return std::get<1>(aminmax(in[0], 1)); },
  };
  for (std::size_t i = 0; i < fns.size(); ++i)
    EXPECT_TRUE(gradcheck(fns[i], {x})) << "function " << i;
  // The gradient reaches q through the lerp weight (ranks 1.2 and 2.2 of 5: away from the kinks
  // at whole ranks).
  const Tensor q = make_tensor({0.3, 0.55}, {2}, kFloat64).requires_grad_();
  EXPECT_TRUE(gradcheck([](const auto& in) { return quantile(in[0], in[1], 1); }, {x, q}));
  const auto var_of = [](const auto& in) { return std::get<0>(var_mean(in[0], {0})); };
  const auto std_of = [](const auto& in) { return std::get<0>(std_mean(in[0], {1})); };
  for (const auto& fn : {GradcheckFn(var_of), GradcheckFn(std_of)}) {
    EXPECT_TRUE(gradcheck(fn, {x}));
    EXPECT_TRUE(gradgradcheck(fn, {x}));
  }
}

// ---- Searching against std::lower_bound / std::upper_bound --------------------------------------

TEST(Statistics, SearchsortedIsTheStandardBisection) {
  std::mt19937_64 rng(17);
  for (const DType dtype : {kFloat32, kFloat64, kInt64, kInt32, kUInt8, kFloat16}) {
    SCOPED_TRACE(dtype_name(dtype));
    // 5 rows of 33 sorted small integers (many repeats), 9 probes per row.
    std::vector<double> rows, probes;
    for (int r = 0; r < 5; ++r) {
      std::vector<double> row;
      for (int i = 0; i < 33; ++i)
        row.push_back(static_cast<double>(rng() % 20));
      std::sort(row.begin(), row.end());
      rows.insert(rows.end(), row.begin(), row.end());
      for (int i = 0; i < 9; ++i)
        probes.push_back(static_cast<double>(rng() % 23));
    }
    const Tensor sorted = make_tensor(rows, {5, 33}, dtype);
    const Tensor values = make_tensor(probes, {5, 9}, dtype);
    for (const bool right : {false, true}) {
      const auto got = to_vector(searchsorted(sorted, values, false, right));
      for (std::size_t i = 0; i < probes.size(); ++i) {
        const auto begin = rows.begin() + static_cast<std::ptrdiff_t>(i / 9 * 33);
        const auto it = right ? std::upper_bound(begin, begin + 33, probes[i])
                              : std::lower_bound(begin, begin + 33, probes[i]);
        ASSERT_EQ(got[i], static_cast<double>(it - begin)) << "probe " << i << " right " << right;
      }
    }
    // One shared row for all values, a number, bucketize, int32 output.
    const Tensor row0 = sorted.select(0, 0);
    const Tensor shared = searchsorted(row0, values, /*out_int32=*/true);
    EXPECT_EQ(shared.dtype(), kInt32);
    const auto shared_v = to_vector(shared);
    for (std::size_t i = 0; i < probes.size(); ++i)
      ASSERT_EQ(shared_v[i],
                static_cast<double>(std::lower_bound(rows.begin(), rows.begin() + 33, probes[i]) -
                                    rows.begin()));
    EXPECT_TRUE(
        equal(bucketize(values, row0, false, true), searchsorted(row0, values, false, true)));
    EXPECT_EQ(searchsorted(row0, 7.0).item<std::int64_t>(),
              std::lower_bound(rows.begin(), rows.begin() + 33, 7.0) - rows.begin());
  }
  // A number between two float32 elements is compared exactly, not after rounding to float32.
  const Tensor tenths = make_tensor({0.1, 0.2, 0.3}, {3}, kFloat32);
  const double just_above = static_cast<double>(static_cast<float>(0.2)) * (1 + 1e-12);
  EXPECT_EQ(searchsorted(tenths, just_above).item<std::int64_t>(), 2);
  EXPECT_EQ(bucketize(just_above, tenths, false, true).item<std::int64_t>(), 2);
  // An empty sequence: everything goes first.
  EXPECT_TRUE(equal(searchsorted(zeros({0}), ones({3})), zeros({3}, TensorOptions(kInt64))));
}

// std of a constant slice: no gradient (0), as PyTorch's std_backward, where sqrt's infinite
// derivative times the variance's zero gradient was NaN; the other rows' gradients are
// (x - mean) / ((n - 1) std) (PyTorch 1.13: [[0, 0, 0], [-0.5, 0, 0.5]]). std_mean the same.
TEST(Statistics, StdOfAConstantSliceHasAZeroGradient) {
  const Tensor x = make_tensor({2, 2, 2, 1, 2, 3}, {2, 3}, kFloat64).requires_grad_();
  std(x, {1}).sum().backward();
  EXPECT_EQ(to_vector(x.grad()), (std::vector<double>{0, 0, 0, -0.5, 0, 0.5}));
  const Tensor z = make_tensor({5, 5}, {2}, kFloat64).requires_grad_();
  std::get<0>(std_mean(z)).backward();
  EXPECT_EQ(to_vector(z.grad()), (std::vector<double>{0, 0}));
  EXPECT_EQ(std(make_tensor({5, 5}, {2})).item<double>(), 0.0);
  EXPECT_TRUE(std::isnan(
      std(make_tensor({std::numeric_limits<double>::quiet_NaN(), 1}, {2})).item<double>()));
}

// nanmean of float16 divides in float32, as mean does: a count past 65504 was inf and the mean 0.
TEST(Statistics, NanmeanOfManyFloat16ValuesIsTheirMean) {
  std::vector<double> values;
  for (int i = 0; i < 100000; ++i)
    values.push_back(0.1 + (i % 1000) * 0.001);
  const Tensor h = make_tensor(values, {100000}).to(kFloat16);
  EXPECT_EQ(nanmean(h).item<double>(), mean(h).item<double>());
  EXPECT_NEAR(nanmean(h).item<double>(), 0.5995, 1e-3);
  EXPECT_EQ(nanmean(h.reshape({1, 100000}), {1}).item<double>(), mean(h).item<double>());
}

}  // namespace
}  // namespace leangrad::test
