// LibTorch's array functions built on the others: mv, vdot, addr, chain_matmul, dist, pdist,
// renorm, vander (linalg_functions.h); cholesky_inverse, lu_unpack (linalg_decompositions.h);
// cov, corrcoef, trapezoid, cumulative_trapezoid (statistics_functions.h); hsplit, vsplit, dsplit,
// ravel, combinations, diagflat, msort, select_scatter, slice_scatter, diagonal_scatter
// (shape_functions.h); masked_scatter (indexing_functions.h); the functional RNN cells
// (nn/rnn.h); logspace, the signal windows, scalar_tensor and randint_like (kernels/creation.h);
// the aliases (functions.h) and the Tensor methods over them. Values and gradients against
// PyTorch's (tests/data/array_functions.json, make_array_functions.py), first and second
// derivatives by finite differences, and properties PyTorch's cases leave out.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include <leangrad/autograd/functions.h>
#include <leangrad/autograd/indexing_functions.h>
#include <leangrad/autograd/linalg_decompositions.h>
#include <leangrad/autograd/linalg_functions.h>
#include <leangrad/autograd/reduction_functions.h>
#include <leangrad/autograd/shape_functions.h>
#include <leangrad/autograd/statistics_functions.h>
#include <leangrad/core/generator.h>
#include <leangrad/kernels/creation.h>
#include <leangrad/nn/rnn.h>
#include "testing/gradcheck.h"
#include "testing/reference_data.h"
#include "testing/tensor_testing.h"

namespace leangrad {
namespace {

using test::gradcheck;
using test::gradgradcheck;
using test::matches_within_roundoff;
using test::RoundoffMatch;
using test::uniform_input;
using Inputs = std::vector<Tensor>;

// The case's op of its operands, by the names params["inputs"] gives them.
Tensor apply_case(const test::ReferenceCase& rc, const test::ReferenceInputs& in) {
  const nlohmann::json& p = rc.params;
  const std::string op = p.at("op").get<std::string>();
  std::map<std::string, Tensor> arg;
  for (std::size_t i = 0; i < in.names.size(); ++i)
    arg[in.names[i]] = in.tensors[i];
  const auto has = [&](const char* name) { return arg.count(name) > 0; };
  const auto number = [&](const char* key) {
    // JSON has no infinity: p = inf comes as the string "inf".
    return p.at(key).is_string() ? std::stod(p.at(key).get<std::string>())
                                 : p.at(key).get<double>();
  };
  const auto integer = [&](const char* key) { return p.at(key).get<std::int64_t>(); };
  const auto flag = [&](const char* key) { return p.at(key).get<bool>(); };
  const auto options = [&] {
    return TensorOptions(p.at("dtype").get<std::string>() == "f64" ? kFloat64 : kFloat32);
  };
  if (op == "mv") return mv(arg["a"], arg["b"]);
  if (op == "vdot") return vdot(arg["a"], arg["b"]);
  if (op == "addr") return addr(arg["a"], arg["b"], arg["c"], number("beta"), number("alpha"));
  if (op == "chain_matmul") return chain_matmul({arg["a"], arg["b"], arg["c"]});
  if (op == "dist") return dist(arg["a"], arg["b"], number("p"));
  if (op == "pdist") return pdist(arg["a"], number("p"));
  if (op == "renorm") return renorm(arg["a"], number("p"), integer("dim"), number("maxnorm"));
  if (op == "vander") {
    return vander(arg["a"], p.contains("N") ? std::optional(integer("N")) : std::nullopt,
                  flag("increasing"));
  }
  if (op == "cholesky_inverse") return cholesky_inverse(arg["a"], flag("upper"));
  if (op == "lu_unpack") {
    const auto [P, L, U] = lu_unpack(arg["a"], arg["pivots"]);
    return cat({flatten(P), flatten(L), flatten(U)});
  }
  if (op == "cov") {
    return cov(arg["a"], integer("correction"),
               has("fweights") ? std::optional(arg["fweights"]) : std::nullopt,
               has("aweights") ? std::optional(arg["aweights"]) : std::nullopt);
  }
  if (op == "corrcoef") return corrcoef(arg["a"]);
  if (op == "trapezoid") {
    return has("x") ? trapezoid(arg["a"], arg["x"], integer("dim"))
                    : trapezoid(arg["a"], number("dx"), integer("dim"));
  }
  if (op == "cumulative_trapezoid") {
    return has("x") ? cumulative_trapezoid(arg["a"], arg["x"], integer("dim"))
                    : cumulative_trapezoid(arg["a"], number("dx"), integer("dim"));
  }
  if (op == "combinations") {
    return combinations(arg["a"], integer("r"), flag("with_replacement"));
  }
  if (op == "diagflat") return diagflat(arg["a"], integer("offset"));
  if (op == "msort") return msort(arg["a"]);
  if (op == "select_scatter") {
    return select_scatter(arg["a"], arg["b"], integer("dim"), integer("index"));
  }
  if (op == "slice_scatter") {
    const auto bound = [&](const char* key) {
      return p.contains(key) ? std::optional(integer(key)) : std::nullopt;
    };
    return slice_scatter(arg["a"], arg["b"], integer("dim"), bound("start"), bound("end"),
                         integer("step"));
  }
  if (op == "diagonal_scatter") {
    return diagonal_scatter(arg["a"], arg["b"], integer("offset"), integer("dim1"),
                            integer("dim2"));
  }
  if (op == "masked_scatter") return masked_scatter(arg["a"], arg["mask"], arg["b"]);
  const auto bias = [&](const char* name) {
    return has(name) ? std::optional(arg[name]) : std::nullopt;
  };
  if (op == "lstm_cell") {
    const auto [h, c] = lstm_cell(arg["x"], {arg["h"], arg["c"]}, arg["w_ih"], arg["w_hh"],
                                  bias("b_ih"), bias("b_hh"));
    return cat({flatten(h), flatten(c)});
  }
  if (op == "gru_cell") {
    return gru_cell(arg["x"], arg["h"], arg["w_ih"], arg["w_hh"], bias("b_ih"), bias("b_hh"));
  }
  if (op == "rnn_tanh_cell") {
    return rnn_tanh_cell(arg["x"], arg["h"], arg["w_ih"], arg["w_hh"], bias("b_ih"), bias("b_hh"));
  }
  if (op == "rnn_relu_cell") {
    return rnn_relu_cell(arg["x"], arg["h"], arg["w_ih"], arg["w_hh"], bias("b_ih"), bias("b_hh"));
  }
  if (op == "nuclear_norm") {
    return p.contains("dim") ? nuclear_norm(arg["a"], p.at("dim").get<std::vector<std::int64_t>>(),
                                            flag("keepdim"))
                             : nuclear_norm(arg["a"]);
  }
  if (op == "frobenius_norm") {
    return p.contains("dim")
               ? frobenius_norm(arg["a"], p.at("dim").get<std::vector<std::int64_t>>(),
                                flag("keepdim"))
               : frobenius_norm(arg["a"]);
  }
  if (op == "logspace") {
    return logspace(number("start"), number("end"), integer("steps"), number("base"), options());
  }
  const std::int64_t length = integer("length");
  const bool periodic = flag("periodic");
  if (op == "hann_window") return hann_window(length, periodic, options());
  if (op == "hamming_window") {
    return p.contains("alpha")
               ? hamming_window(length, periodic, number("alpha"), number("beta"), options())
               : hamming_window(length, periodic, options());
  }
  if (op == "blackman_window") return blackman_window(length, periodic, options());
  if (op == "bartlett_window") return bartlett_window(length, periodic, options());
  if (op == "kaiser_window") {
    return p.contains("beta") ? kaiser_window(length, periodic, number("beta"), options())
                              : kaiser_window(length, periodic, options());
  }
  ADD_FAILURE() << "unknown op " << op;
  return Tensor();
}

// unique, unique_dim, histogram, histogramdd and fill_diagonal_: their outputs are compared one
// by one.
bool several_outputs(const test::ReferenceCase& rc) {
  const std::string op = rc.params.at("op").get<std::string>();
  return op == "unique" || op == "unique_dim" || op == "histogram" || op == "histogramdd" ||
         op == "fill_diagonal_";
}

// Against PyTorch: each value is a short closed form or a product of a few float32 factors (the
// factorizations of 3 to 5 well-conditioned rows: condition numbers below 10), summed over at
// most 6 terms, in each side's own order: 160 units of roundoff of max(1, |value|) separate a
// right result from a wrong formula, and the gradients, one chain-rule step deeper, 320. The
// windows and logspace: PyTorch's float32 evaluates cos and pow in float32 (a few ulps each),
// ours in double rounded once; 16 units.
TEST(ArrayFunctionsReference, MatchesPyTorch) {
  const std::vector<test::ReferenceCase> cases = test::load_reference("array_functions.json");
  ASSERT_EQ(cases.size(), 183u);  // make_array_functions.py's count: none dropped on the way
  for (const test::ReferenceCase& rc : cases) {
    SCOPED_TRACE(rc.name);
    if (several_outputs(rc)) continue;  // MatchPyTorchSeveralOutputs
    const test::ReferenceInputs in = test::reference_inputs(rc);
    const Tensor y = apply_case(rc, in);
    ASSERT_TRUE(y.defined());
    ASSERT_EQ(y.shape(), rc.at("y").shape());
    ASSERT_EQ(y.dtype(), rc.at("y").dtype());
    const bool creation = in.names.empty();
    EXPECT_TRUE(
        matches_within_roundoff(y, rc.at("y"), {}, RoundoffMatch{.ulps = creation ? 16.0 : 160.0}))
        << "value";
    test::expect_reference_gradients(rc, in, y, 320);
    if (HasFatalFailure()) return;
  }
}

// The sorted distinct elements or slices, each element's position among them and their counts
// are exact; the histogram's counts are exact and its weighted sums and densities a few roundings
// (16 units of roundoff); fill_diagonal_ writes exactly.
TEST(ArrayFunctionsReference, MatchPyTorchSeveralOutputs) {
  std::int64_t checked = 0;
  for (const test::ReferenceCase& rc : test::load_reference("array_functions.json")) {
    if (!several_outputs(rc)) continue;
    SCOPED_TRACE(rc.name);
    ++checked;
    const nlohmann::json& p = rc.params;
    const std::string op = p.at("op").get<std::string>();
    const Tensor& a = rc.at("a");
    if (op == "unique" || op == "unique_dim") {
      const auto [output, inverse, counts] =
          op == "unique" ? unique(a, true, true, true)
                         : unique_dim(a, p.at("dim").get<std::int64_t>(), true, true, true);
      EXPECT_TRUE(output.equal(rc.at("y"))) << "output";
      EXPECT_TRUE(inverse.equal(rc.at("inverse"))) << "inverse";
      EXPECT_TRUE(counts.equal(rc.at("counts"))) << "counts";
    } else if (op == "histogram") {
      const std::optional<Tensor> weight =
          rc.tensors.count("weight") ? std::optional(rc.at("weight")) : std::nullopt;
      const bool density = p.at("density").get<bool>();
      const auto [hist, edges] =
          rc.tensors.count("bin_edges")
              ? histogram(a, rc.at("bin_edges"), weight, density)
              : histogram(a, p.at("bins").get<std::int64_t>(),
                          p.contains("range")
                              ? std::optional(p.at("range").get<std::vector<double>>())
                              : std::nullopt,
                          weight, density);
      EXPECT_TRUE(matches_within_roundoff(hist, rc.at("y"), {}, RoundoffMatch{.ulps = 16}))
          << "hist";
      EXPECT_TRUE(matches_within_roundoff(edges, rc.at("edges"), {}, RoundoffMatch{.ulps = 4}))
          << "edges";
    } else if (op == "histogramdd") {
      const std::optional<Tensor> weight =
          rc.tensors.count("weight") ? std::optional(rc.at("weight")) : std::nullopt;
      const bool density = p.at("density").get<bool>();
      const auto dims = p.at("dims").get<std::int64_t>();
      const std::optional<std::vector<double>> range =
          p.contains("range") ? std::optional(p.at("range").get<std::vector<double>>())
                              : std::nullopt;
      std::vector<Tensor> given;
      for (std::int64_t d = 0; d < dims && p.at("edges_given").get<bool>(); ++d)
        given.push_back(rc.at("bins" + std::to_string(d)));
      const auto [hist, edges] =
          !given.empty() ? histogramdd(a, given, weight, density)
          : p.at("bins").is_array()
              ? histogramdd(a, p.at("bins").get<std::vector<std::int64_t>>(), range, weight,
                            density)
              : histogramdd(a, p.at("bins").get<std::int64_t>(), range, weight, density);
      EXPECT_TRUE(matches_within_roundoff(hist, rc.at("y"), {}, RoundoffMatch{.ulps = 16}))
          << "hist";
      ASSERT_EQ(static_cast<std::int64_t>(edges.size()), dims);
      for (std::int64_t d = 0; d < dims; ++d) {
        EXPECT_TRUE(matches_within_roundoff(edges[static_cast<std::size_t>(d)],
                                            rc.at("edges" + std::to_string(d)), {},
                                            RoundoffMatch{.ulps = 4}))
            << "edges " << d;
      }
    } else {
      Tensor t = a.clone();
      t.fill_diagonal_(p.at("value").get<double>(), p.at("wrap").get<bool>());
      EXPECT_TRUE(t.equal(rc.at("y")));
    }
  }
  EXPECT_EQ(checked, 18);
}

TEST(ArrayFunctions, UniqueKeepsEachNaN) {
  // NaN equals nothing: each is its own element, after the numbers (PyTorch 1.13's CPU unique
  // gives [1, 2, nan, nan, 3] with counts 0 for both NaN here).
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const Tensor x = tensor({3.0, 1.0, nan, 2.0, 1.0, nan, 3.0});
  const auto [output, inverse, counts] = unique(x, true, true, true);
  EXPECT_TRUE(output.allclose(tensor({1.0, 2.0, 3.0, nan, nan}), 0.0, 0.0, /*equal_nan=*/true));
  EXPECT_TRUE(inverse.equal(tensor({2, 0, 3, 1, 0, 4, 2}).to(kInt64)));
  EXPECT_TRUE(counts.equal(tensor({2, 1, 2, 1, 1}).to(kInt64)));
  // Only what is asked for; an empty input has no elements.
  EXPECT_EQ(std::get<1>(unique(x)).numel(), 0);
  EXPECT_EQ(std::get<0>(unique(zeros({0}))).numel(), 0);
  // The gradient of a fill_diagonal_ of a non-leaf is 0 on the diagonal.
  const Tensor leaf = ones({3, 3}).requires_grad_(true);
  Tensor y = mul(leaf, 2.0);
  y.fill_diagonal_(0.0);
  sum(y).backward();
  EXPECT_TRUE(leaf.grad().equal(sub(full({3, 3}, 2.0), mul(eye(3), 2.0))));
}

TEST(ArrayFunctions, GradientsMatchFiniteDifferences) {
  struct Case {
    const char* name;
    std::function<Tensor(const Inputs&)> fn;
    Inputs inputs;
  };
  std::uint64_t seed = 1;
  const auto in = [&seed](const Shape& shape, double low = -1.0, double high = 1.0) {
    return uniform_input(shape, low, high, seed++);
  };
  // A lower triangular factor with a diagonal in [1, 2]: well conditioned.
  const Tensor factor = [&] {
    NoGradGuard no_grad;
    return add(tril(mul(in({3, 3}), 0.3), -1), diag(add(in({3}, 1.0, 2.0), 0.0)))
        .requires_grad_(true);
  }();
  // (lu and pivots are plain variables: a lambda cannot capture structured bindings in C++20.)
  Tensor lu;
  Tensor pivots;
  {
    NoGradGuard no_grad;
    std::tie(lu, pivots) = linalg::lu_factor(in({4, 4}));
  }
  const Case cases[] = {
      {"mv", [](const Inputs& x) { return mv(x[0], x[1]).pow(3.0); }, {in({2, 3}), in({3})}},
      {"vdot", [](const Inputs& x) { return vdot(x[0], x[1]).pow(3.0); }, {in({4}), in({4})}},
      {"addr",
       [](const Inputs& x) { return addr(x[0], x[1], x[2], 0.5, -2.0).pow(3.0); },
       {in({3, 2}), in({3}), in({2})}},
      {"chain_matmul",
       [](const Inputs& x) {
         return chain_matmul({x[0], x[1], x[2]}).pow(3.0);
       },
       {in({2, 3}), in({3, 2}), in({2, 2})}},
      {"dist p=3", [](const Inputs& x) { return dist(x[0], x[1], 3.0); }, {in({2, 3}), in({3})}},
      {"pdist", [](const Inputs& x) { return pdist(x[0]); }, {in({4, 3})}},
      {"renorm",
       [](const Inputs& x) { return renorm(x[0], 2.0, 1, 0.8); },
       {in({3, 2, 2}, -1.0, 1.0)}},
      {"vander", [](const Inputs& x) { return vander(x[0], 4); }, {in({3})}},
      {"cholesky_inverse", [](const Inputs& x) { return cholesky_inverse(x[0]); }, {factor}},
      {"lu_unpack",
       [&pivots](const Inputs& x) {
         const auto [P, L, U] = lu_unpack(x[0], pivots);
         return matmul(L, U).pow(3.0);
       },
       {lu.detach().requires_grad_(true)}},
      {"cov aweights",
       [](const Inputs& x) { return cov(x[0], 1, std::nullopt, x[1]); },
       {in({2, 5}), in({5}, 0.5, 2.0)}},
      {"corrcoef", [](const Inputs& x) { return corrcoef(x[0]); }, {in({3, 5})}},
      {"trapezoid x",
       [](const Inputs& x) { return trapezoid(x[0], x[1]).pow(3.0); },
       {in({2, 4}), in({4})}},
      {"cumulative_trapezoid",
       [](const Inputs& x) { return cumulative_trapezoid(x[0], x[1], 0).pow(3.0); },
       {in({4, 2}), in({4, 1})}},
      {"combinations",
       [](const Inputs& x) { return combinations(x[0], 2, true).pow(3.0); },
       {in({3})}},
      {"diagflat", [](const Inputs& x) { return diagflat(x[0], -1).pow(3.0); }, {in({2, 2})}},
      {"msort", [](const Inputs& x) { return msort(x[0]).pow(3.0); }, {in({4, 2})}},
      {"select_scatter",
       [](const Inputs& x) { return select_scatter(x[0], x[1], 0, 1).pow(3.0); },
       {in({3, 2}), in({2})}},
      {"slice_scatter",
       [](const Inputs& x) { return slice_scatter(x[0], x[1], 1, 1, std::nullopt, 2).pow(3.0); },
       {in({2, 5}), in({2, 2})}},
      {"diagonal_scatter",
       [](const Inputs& x) { return diagonal_scatter(x[0], x[1], 1, 2, 0).pow(3.0); },
       {in({3, 2, 3}), in({2, 2})}},
      {"masked_scatter",
       [](const Inputs& x) {
         return masked_scatter(x[0], tensor({true, false, true}), x[1]).pow(3.0);
       },
       {in({2, 3}), in({5})}},
      {"lstm_cell",
       [](const Inputs& x) {
         const auto [h, c] = lstm_cell(x[0], {x[1], x[2]}, x[3], x[4], x[5], x[6]);
         return cat({flatten(h), flatten(c)});
       },
       {in({2, 3}), in({2, 2}), in({2, 2}), in({8, 3}), in({8, 2}), in({8}), in({8})}},
      {"gru_cell",
       [](const Inputs& x) { return gru_cell(x[0], x[1], x[2], x[3], x[4], x[5]); },
       {in({2, 3}), in({2, 2}), in({6, 3}), in({6, 2}), in({6}), in({6})}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_TRUE(gradcheck(c.fn, c.inputs));
    EXPECT_TRUE(gradgradcheck(c.fn, c.inputs));
  }
}

// ---- Properties --------------------------------------------------------------------------------
TEST(ArrayFunctions, SplitsAreTensorSplitAlongTheirDims) {
  const Tensor x = arange(48.0).reshape({2, 4, 6});
  const auto expect_pieces = [](const std::vector<Tensor>& got, const std::vector<Tensor>& want) {
    ASSERT_EQ(got.size(), want.size());
    for (std::size_t i = 0; i < got.size(); ++i)
      EXPECT_TRUE(got[i].equal(want[i])) << "piece " << i;
  };
  expect_pieces(hsplit(x, 2), tensor_split(x, 2, 1));
  expect_pieces(hsplit(x, {1, 3}), tensor_split(x, {1, 3}, 1));
  expect_pieces(vsplit(x, 2), tensor_split(x, 2, 0));
  expect_pieces(dsplit(x, 3), tensor_split(x, 3, 2));
  expect_pieces(dsplit(x, std::vector<std::int64_t>{5}),
                tensor_split(x, std::vector<std::int64_t>{5}, 2));
  expect_pieces(x.hsplit(4), tensor_split(x, 4, 1));
  // A 1-d input splits along dim 0.
  expect_pieces(hsplit(arange(6.0), 3), tensor_split(arange(6.0), 3, 0));
  // Sections that do not divide the size are refused (tensor_split would take them).
  EXPECT_THROW(hsplit(x, 3), ShapeError);
  EXPECT_THROW(vsplit(arange(4.0), 2), ShapeError);
  EXPECT_THROW(dsplit(zeros({2, 2}), 1), ShapeError);
}

TEST(ArrayFunctions, RavelAndMTOfATransposedTensor) {
  const Tensor x = arange(6.0).reshape({2, 3});
  EXPECT_TRUE(ravel(x.t()).equal(tensor({0.0, 3.0, 1.0, 4.0, 2.0, 5.0})));
  EXPECT_TRUE(x.t().ravel().equal(ravel(x.t())));
  const Tensor batch = arange(12.0).reshape({2, 2, 3});
  EXPECT_TRUE(batch.mT().equal(transpose(batch, 1, 2)));
  EXPECT_TRUE(batch.mH().equal(batch.mT()));
  EXPECT_TRUE(batch.adjoint().equal(batch.mT()));
  EXPECT_THROW(arange(3.0).mT(), ShapeError);
}

TEST(ArrayFunctions, CovWithFrequencyWeightsRepeatsObservations) {
  // fweights (2, 1, 0, 3) equal the plain estimate over the observations repeated that often.
  const Tensor x = tensor({0.5, -1.0, 2.0, 0.25, 1.0, 3.0, -2.0, 0.0}).reshape({2, 4});
  const Tensor repeated = index_select(x, 1, tensor({0, 0, 1, 3, 3, 3}).to(kInt64));
  EXPECT_TRUE(cov(x, 1, tensor({2, 1, 0, 3}).to(kInt64)).allclose(cov(repeated), 1e-6, 1e-6));
  EXPECT_TRUE(cov(x, 0, tensor({2, 1, 0, 3}).to(kInt64)).allclose(cov(repeated, 0), 1e-6, 1e-6));
  // Integral input computes in float32; one observation leaves no degrees of freedom: NaN.
  EXPECT_EQ(cov(tensor({1, 2, 4})).dtype(), kFloat32);
  EXPECT_TRUE(std::isnan(cov(zeros({2, 1})).flatten()[0].item<float>()));
  EXPECT_TRUE(std::isnan(corrcoef(ones({2, 3})).flatten()[0].item<float>()));
}

TEST(ArrayFunctions, LuUnpackRebuildsTheMatrix) {
  for (const Shape& shape : {Shape{3, 4, 4}, Shape{2, 3, 5}, Shape{5, 3}}) {
    SCOPED_TRACE(::testing::PrintToString(shape));
    const Tensor a = uniform_input(shape, -1.0, 1.0, 7).detach();
    Tensor P, L, U;
    if (shape[shape.size() - 1] == shape[shape.size() - 2]) {
      const auto [lu, pivots] = linalg::lu_factor(a);
      std::tie(P, L, U) = lu_unpack(lu, pivots);
    } else {
      // lu_factor takes square matrices only: unpack a as LU data with pivots that swap
      // nothing, so P is the identity, L a's strict lower part with a unit diagonal and U a's
      // upper part.
      const std::int64_t m = shape[shape.size() - 2];
      const std::int64_t n = shape[shape.size() - 1];
      const std::int64_t k = std::min(m, n);
      Shape pivot_shape(shape.begin(), shape.end() - 2);
      pivot_shape.push_back(k);
      // No swaps: pivots i + 1.
      const Tensor pivots = add(arange(static_cast<double>(k), TensorOptions(kInt32)), 1.0)
                                .to(kInt32)
                                .expand(pivot_shape)
                                .contiguous();
      std::tie(P, L, U) = lu_unpack(a, pivots);
      EXPECT_TRUE(P.equal(eye(m, TensorOptions(kFloat64)).expand(P.shape())));
      EXPECT_TRUE(L.equal(add(tril(narrow(a, -1, 0, k), -1), eye(m, k, TensorOptions(kFloat64)))));
      EXPECT_TRUE(U.equal(triu(narrow(a, -2, 0, k))));
      continue;
    }
    EXPECT_TRUE(matmul(P, matmul(L, U)).allclose(a, 1e-12, 1e-12));
    EXPECT_TRUE(L.equal(tril(L)));
    EXPECT_TRUE(U.equal(triu(U)));
    // P is a permutation matrix: one 1 in each row and column.
    EXPECT_TRUE(sum(P, {-1}).equal(ones_like(sum(P, {-1}))));
    EXPECT_TRUE(sum(P, {-2}).equal(ones_like(sum(P, {-2}))));
  }
  // Only what is asked for is unpacked.
  const auto [lu, pivots] = linalg::lu_factor(uniform_input({3, 3}, -1.0, 1.0, 8).detach());
  const auto [P, L, U] = lu_unpack(lu, pivots, /*unpack_data=*/false);
  EXPECT_EQ(L.shape(), Shape{0});
  EXPECT_EQ(U.shape(), Shape{0});
  EXPECT_EQ(P.shape(), (Shape{3, 3}));
  EXPECT_EQ(std::get<0>(lu_unpack(lu, pivots, true, /*unpack_pivots=*/false)).shape(), Shape{0});
}

TEST(ArrayFunctions, CholeskyInverseIsTheInverse) {
  const Tensor m = uniform_input({2, 4, 4}, -1.0, 1.0, 9).detach();
  const Tensor a = add(matmul(m, m.mT()), eye(4, TensorOptions(kFloat64)));
  const Tensor L = linalg::cholesky(a);
  EXPECT_TRUE(cholesky_inverse(L).allclose(linalg::inv(a), 1e-12, 1e-12));
  EXPECT_TRUE(L.mT().cholesky_inverse(/*upper=*/true).allclose(linalg::inv(a), 1e-12, 1e-12));
}

TEST(ArrayFunctions, CombinationsInItertoolsOrder) {
  const Tensor x = tensor({10, 20, 30, 40}).to(kInt64);
  EXPECT_TRUE(combinations(x, 3).equal(
      tensor({10, 20, 30, 10, 20, 40, 10, 30, 40, 20, 30, 40}).to(kInt64).reshape({4, 3})));
  EXPECT_TRUE(combinations(x.narrow(0, 0, 2), 2, true)
                  .equal(tensor({10, 10, 10, 20, 20, 20}).to(kInt64).reshape({3, 2})));
  EXPECT_EQ(combinations(x, 5).shape(), (Shape{0, 5}));
  EXPECT_EQ(combinations(x, 0).shape(), Shape{0});
  EXPECT_EQ(combinations(zeros({0}), 2).shape(), (Shape{0, 2}));
  // C(200, 100) rows are refused before anything is built.
  EXPECT_THROW(combinations(zeros({200}), 100), ShapeError);
}

TEST(ArrayFunctions, ScattersIntoACopy) {
  const Tensor x = zeros({3, 4});
  // A negative start counts from the end, as Python's slices (PyTorch 1.13's slice_scatter
  // refuses it).
  const Tensor y = slice_scatter(x, ones({3, 2}), 1, -3, -1);
  EXPECT_TRUE(y.equal(tensor({0.0f, 1.0f, 1.0f, 0.0f}).expand({3, 4})));
  EXPECT_TRUE(x.equal(zeros({3, 4})));  // input untouched
  EXPECT_THROW(select_scatter(x, ones({3}), 0, 1), ShapeError);
  EXPECT_THROW(diagonal_scatter(x, ones({4}), 0), ShapeError);
  // src takes the input's dtype; masked_scatter broadcasts the input with the mask.
  EXPECT_EQ(select_scatter(x.to(kInt64), ones({4}), 0, 2).dtype(), kInt64);
  const Tensor masked =
      masked_scatter(zeros({3}), tensor({true, false, true, false, true, true}).reshape({2, 3}),
                     arange(10.0f, TensorOptions(kFloat32)));
  EXPECT_TRUE(masked.equal(tensor({0.0f, 0.0f, 1.0f, 0.0f, 2.0f, 3.0f}).reshape({2, 3})));
}

TEST(ArrayFunctions, IntegrationEdges) {
  // Fewer than two samples integrate to 0; integral y computes in float32.
  EXPECT_TRUE(trapezoid(ones({2, 1})).equal(zeros({2})));
  EXPECT_TRUE(trapezoid(ones({2, 0})).equal(zeros({2})));
  EXPECT_EQ(cumulative_trapezoid(ones({2, 1})).shape(), (Shape{2, 0}));
  EXPECT_EQ(trapezoid(tensor({1, 2, 3})).dtype(), kFloat32);
  EXPECT_FLOAT_EQ(trapezoid(tensor({1, 2, 3})).item<float>(), 4.0f);
  // The trapezoidal rule is exact for a line: the integral of 2 t + 1 over [0, 3] is 12.
  const Tensor t = tensor({0.0, 0.5, 2.0, 3.0});
  EXPECT_DOUBLE_EQ(trapezoid(add(mul(t, 2.0), 1.0), t).item<double>(), 12.0);
  EXPECT_DOUBLE_EQ(cumulative_trapezoid(add(mul(t, 2.0), 1.0), t)[2].item<double>(), 12.0);
  EXPECT_THROW(trapezoid(ones({2, 3}), ones({2})), ShapeError);
}

TEST(ArrayFunctions, VanderAndDiagflatDtypes) {
  const Tensor v = vander(tensor({2, 3}));
  EXPECT_EQ(v.dtype(), kInt64);
  EXPECT_TRUE(v.equal(tensor({2, 1, 3, 1}).to(kInt64).reshape({2, 2})));
  EXPECT_EQ(vander(tensor({1.0, 2.0}), 0).shape(), (Shape{2, 0}));
  EXPECT_TRUE(diagflat(tensor({1, 2})).equal(tensor({1, 0, 0, 2}).reshape({2, 2})));
}

TEST(ArrayFunctions, CellModulesAreTheFunctionalCells) {
  manual_seed(3);
  nn::LSTMCell lstm(3, 2);
  nn::GRUCell gru(3, 2);
  nn::RNNCell rnn(nn::RNNCellOptions(3, 2).nonlinearity(kReLU));
  const Tensor x = randn({4, 3});
  const Tensor h = randn({4, 2});
  const Tensor c = randn({4, 2});
  const auto [h1, c1] = lstm(x, std::make_tuple(h, c));
  const auto [h2, c2] =
      lstm_cell(x, {h, c}, lstm->weight_ih, lstm->weight_hh, lstm->bias_ih, lstm->bias_hh);
  EXPECT_TRUE(h1.equal(h2));
  EXPECT_TRUE(c1.equal(c2));
  EXPECT_TRUE(
      gru(x, h).equal(gru_cell(x, h, gru->weight_ih, gru->weight_hh, gru->bias_ih, gru->bias_hh)));
  EXPECT_TRUE(rnn(x, h).equal(
      rnn_relu_cell(x, h, rnn->weight_ih, rnn->weight_hh, rnn->bias_ih, rnn->bias_hh)));
}

TEST(ArrayFunctions, WindowsAndCreation) {
  // The periodic window of L is the symmetric window of L + 1 without its last value.
  for (const std::int64_t length : {2, 5, 8}) {
    SCOPED_TRACE(length);
    const TensorOptions f64(kFloat64);
    EXPECT_TRUE(
        hann_window(length, f64).equal(hann_window(length + 1, false, f64).narrow(0, 0, length)));
    EXPECT_TRUE(kaiser_window(length, true, 3.0, f64)
                    .equal(kaiser_window(length + 1, false, 3.0, f64).narrow(0, 0, length)));
  }
  // Symmetric windows are symmetric and peak at 1 in the middle of an odd length.
  const Tensor w = blackman_window(9, false, TensorOptions(kFloat64));
  EXPECT_TRUE(w.allclose(flip(w, {0}), 0.0, 1e-15));
  EXPECT_NEAR(w[4].item<double>(), 1.0, 1e-15);
  // A large beta does not overflow: I0(beta) is taken out as a ratio.
  const Tensor wide = kaiser_window(5, false, 800.0, TensorOptions(kFloat64));
  EXPECT_DOUBLE_EQ(wide[2].item<double>(), 1.0);
  EXPECT_TRUE(isfinite(wide).all().item<bool>());
  EXPECT_THROW(hann_window(4, TensorOptions(kInt64)), DTypeError);
  EXPECT_THROW(hann_window(-1), ShapeError);
  // logspace's ends are exact powers.
  const Tensor l = logspace(-3.0, 2.0, 6, 10.0, TensorOptions(kFloat64));
  EXPECT_EQ(l[0].item<double>(), 1e-3);
  EXPECT_EQ(l[5].item<double>(), 100.0);
  EXPECT_EQ(scalar_tensor(2.5).dim(), 0);
  EXPECT_EQ(scalar_tensor(2.5, kFloat64).item<double>(), 2.5);
  const Tensor like = zeros({3, 4}, TensorOptions(kInt32));
  const Tensor r = randint_like(like, 3, 7);
  EXPECT_EQ(r.shape(), like.shape());
  EXPECT_EQ(r.dtype(), kInt32);
  EXPECT_TRUE(ge(r, 3.0).all().item<bool>() && lt(r, 7.0).all().item<bool>());
  EXPECT_TRUE(lt(randint_like(like, 2), 2.0).all().item<bool>());
}

TEST(ArrayFunctions, MethodsAndAliases) {
  const Tensor a = uniform_input({2, 3}, -1.0, 1.0, 11).detach();
  const Tensor b = uniform_input({3}, 0.5, 1.0, 12).detach();
  EXPECT_TRUE(a.add(b, 2.0).equal(add(a, mul(b, 2.0))));
  EXPECT_TRUE(a.sub(b, -0.5).equal(sub(a, mul(b, -0.5))));
  EXPECT_TRUE(a.add(b).equal(add(a, b)));
  EXPECT_TRUE(a.add(1.5).equal(add(a, 1.5)));
  EXPECT_TRUE(a.mul(b).equal(mul(a, b)));
  EXPECT_TRUE(a.div(b).equal(div(a, b)));
  EXPECT_TRUE(a.div(4.0).equal(div(a, 4.0)));
  EXPECT_TRUE(a.subtract(b).equal(sub(a, b)));
  EXPECT_TRUE(a.multiply(2.0).equal(mul(a, 2.0)));
  EXPECT_TRUE(a.true_divide(b).equal(a.divide(b)));
  EXPECT_TRUE(add(a, b, 3.0).equal(a.add(b, 3.0)));
  EXPECT_TRUE(subtract(a, b, 2.0).equal(a.sub(b, 2.0)));
  const Tensor unit = mul(a, 0.9);
  EXPECT_TRUE(arccos(unit).equal(acos(unit)) && unit.arcsin().equal(asin(unit)));
  EXPECT_TRUE(arctanh(unit).equal(atanh(unit)) && unit.arctan2(b).equal(atan2(unit, b)));
  EXPECT_TRUE(clip(a, -0.5, 0.5).equal(clamp(a, -0.5, 0.5)) && a.clip(0.0).equal(clamp(a, 0.0)));
  EXPECT_TRUE(absolute(a).equal(abs(a)) && a.negative().equal(neg(a)));
  EXPECT_TRUE(greater(a, b).equal(gt(a, b)) && a.less_equal(0.0).equal(le(a, 0.0)));
  EXPECT_TRUE(a.not_equal(a).equal(ne(a, a)) && greater_equal(a, 0.1).equal(ge(a, 0.1)));
  EXPECT_TRUE(concat({a, a}, 1).equal(cat({a, a}, 1)));
  EXPECT_TRUE(ger(b, b).equal(outer(b, b)) && b.ger(b).equal(outer(b, b)));
  // new_* take self's dtype and device unless told otherwise; type_as converts.
  const Tensor i = zeros({2}, TensorOptions(kInt32));
  EXPECT_EQ(i.new_zeros({3, 1}).dtype(), kInt32);
  EXPECT_EQ(i.new_ones({2}).dtype(), kInt32);
  EXPECT_EQ(i.new_full({2}, 7.0).sum().item<std::int32_t>(), 14);
  EXPECT_EQ(i.new_empty({4}).shape(), Shape{4});
  EXPECT_EQ(i.new_zeros({1}, kFloat64).dtype(), kFloat64);
  EXPECT_EQ(i.type_as(a).dtype(), kFloat64);
  EXPECT_TRUE(a.view_as(zeros({3, 2})).equal(a.view({3, 2})));
  EXPECT_TRUE(a.t().reshape_as(zeros({6})).equal(reshape(a.t(), {6})));
  EXPECT_TRUE(a.mv(b).equal(mv(a, b)) && b.vdot(b).equal(vdot(b, b)));
  EXPECT_TRUE(a.dist(b, 1.0).equal(dist(a, b, 1.0)));
  EXPECT_TRUE(a.renorm(2.0, 0, 0.5).equal(renorm(a, 2.0, 0, 0.5)));
  EXPECT_TRUE(a.cov().equal(cov(a)) && a.corrcoef().equal(corrcoef(a)));
  EXPECT_TRUE(a.msort().equal(msort(a)) && a.diagflat(1).equal(diagflat(a, 1)));
  EXPECT_TRUE(zeros({3, 3}, kFloat64).addr(b, b, 0.0, 2.0).equal(mul(outer(b, b), 2.0)));
}

}  // namespace
}  // namespace leangrad
