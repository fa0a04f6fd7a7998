// addmm, addmv, baddbmm, addbmm, tensordot, kron, diagonal, diag, trace, cross and diff
// (autograd/linalg_functions.h): values and gradients against PyTorch's
// (tests/data/linalg_functions.json, make_linalg_functions.py), first and second derivatives by
// finite differences, and the errors of bad arguments.
#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include <leangrad/autograd/functions.h>
#include <leangrad/autograd/linalg_functions.h>
#include <leangrad/kernels/creation.h>
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

std::int64_t integer(const nlohmann::json& p, const char* key) {
  return p[key].get<std::int64_t>();
}

// The case's op of its inputs (the JSON's "a", "b", "c", those present, in order).
Tensor apply_case(const test::ReferenceCase& rc, const Inputs& in) {
  const nlohmann::json& p = rc.params;
  const std::string op = p["op"].get<std::string>();
  const auto scale = [&](const char* key) { return p[key].get<double>(); };
  if (op == "addmm") return addmm(in[0], in[1], in[2], scale("beta"), scale("alpha"));
  if (op == "addmv") return addmv(in[0], in[1], in[2], scale("beta"), scale("alpha"));
  if (op == "baddbmm") return baddbmm(in[0], in[1], in[2], scale("beta"), scale("alpha"));
  if (op == "addbmm") return addbmm(in[0], in[1], in[2], scale("beta"), scale("alpha"));
  if (op == "tensordot") {
    if (p.contains("n")) return tensordot(in[0], in[1], integer(p, "n"));
    return tensordot(in[0], in[1], p["dims_a"].get<std::vector<std::int64_t>>(),
                     p["dims_b"].get<std::vector<std::int64_t>>());
  }
  if (op == "kron") return kron(in[0], in[1]);
  if (op == "diagonal") {
    return diagonal(in[0], integer(p, "offset"), integer(p, "dim1"), integer(p, "dim2"));
  }
  if (op == "diag") return diag(in[0], integer(p, "k"));
  if (op == "trace") return trace(in[0]);
  if (op == "cross") return cross(in[0], in[1], integer(p, "dim"));
  return diff(in[0], integer(p, "n"), integer(p, "dim"));
}

// Against PyTorch: the products are sums of at most 10 float products (PyTorch's in its own
// order), the copies exact, the differences and cross products one or two roundings: 16 units of
// roundoff of max(1, |value|) times the inner size separate a right result from a wrong one, and
// the gradients, one chain-rule step deeper, 32.
TEST(LinalgFunctionsReference, MatchesPyTorch) {
  for (const test::ReferenceCase& rc : test::load_reference("linalg_functions.json")) {
    SCOPED_TRACE(rc.name);
    Inputs in;
    std::vector<std::string> names;
    for (const char* key : {"a", "b", "c"}) {
      if (rc.tensors.count(key) == 0) continue;
      in.push_back(rc.at(key).clone().requires_grad_(true));
      names.push_back(key);
    }
    const Tensor y = apply_case(rc, in);
    ASSERT_EQ(y.shape(), rc.at("y").shape());
    EXPECT_TRUE(matches_within_roundoff(y, rc.at("y"), {}, RoundoffMatch{.ulps = 160})) << "value";
    y.backward(rc.at("g"));
    for (std::size_t i = 0; i < in.size(); ++i) {
      SCOPED_TRACE("d" + names[i]);
      ASSERT_TRUE(in[i].grad().defined());
      EXPECT_TRUE(matches_within_roundoff(in[i].grad(), rc.at("d" + names[i]), {},
                                          RoundoffMatch{.ulps = 320}));
    }
  }
}

TEST(LinalgFunctions, GradientsMatchFiniteDifferences) {
  struct Case {
    const char* name;
    std::function<Tensor(const Inputs&)> fn;
    Inputs inputs;
  };
  std::uint64_t seed = 1;
  const auto in = [&seed](const Shape& shape) { return uniform_input(shape, -1.0, 1.0, seed++); };
  const Case cases[] = {
      {"addmm",
       [](const Inputs& x) { return addmm(x[0], x[1], x[2], 0.5, 2.0).pow(3.0); },
       {in({3}), in({2, 4}), in({4, 3})}},
      {"baddbmm",
       [](const Inputs& x) { return baddbmm(x[0], x[1], x[2], -1.0, 0.5).pow(3.0); },
       {in({2, 1, 3}), in({2, 2, 4}), in({2, 4, 3})}},
      {"addbmm",
       [](const Inputs& x) { return addbmm(x[0], x[1], x[2]).pow(3.0); },
       {in({2, 3}), in({2, 2, 4}), in({2, 4, 3})}},
      {"tensordot",
       [](const Inputs& x) { return tensordot(x[0], x[1], {1}, {0}).pow(3.0); },
       {in({2, 3}), in({3, 2})}},
      {"kron", [](const Inputs& x) { return kron(x[0], x[1]).pow(3.0); }, {in({2, 2}), in({3})}},
      {"diagonal",
       [](const Inputs& x) { return diagonal(x[0], -1, 1, 2).pow(3.0); },
       {in({2, 4, 3})}},
      {"diag", [](const Inputs& x) { return diag(x[0], 2).pow(3.0); }, {in({3})}},
      {"trace", [](const Inputs& x) { return trace(x[0]).pow(3.0); }, {in({3, 3})}},
      {"cross",
       [](const Inputs& x) { return cross(x[0], x[1]).pow(3.0); },
       {in({2, 3}), in({2, 3})}},
      {"diff", [](const Inputs& x) { return diff(x[0], 2, 0).pow(3.0); }, {in({5, 2})}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_TRUE(gradcheck(c.fn, c.inputs));
    EXPECT_TRUE(gradgradcheck(c.fn, c.inputs));
  }
}

// addmm with beta 0 does not read input: a NaN there does not reach the result, as PyTorch's.
TEST(LinalgFunctions, AddmmWithBetaZeroIgnoresInput) {
  const Tensor nan = full({2, 2}, std::numeric_limits<double>::quiet_NaN());
  const Tensor eye = test::make_tensor({1, 0, 0, 1}, {2, 2});
  const Tensor m = test::make_tensor({1, 2, 3, 4}, {2, 2});
  EXPECT_TRUE(test::all_close(addmm(nan, eye, m, 0.0, 2.0), {2, 4, 6, 8}));
}

TEST(LinalgFunctions, BadArgumentsAreClearErrors) {
  const Tensor a = uniform_input({3, 4}, -1.0, 1.0, 1);
  const Tensor b = uniform_input({5, 2}, -1.0, 1.0, 2);
  EXPECT_THROW_MSG(addmm(a, a, b), "addmm: expected matrices (n, m) and (m, p), got [3, 4]");
  EXPECT_THROW_MSG(addmm(a, a, uniform_input({4, 2}, -1, 1, 3)),
                   "addmm: shapes [3, 4] and [3, 2] cannot be broadcast");
  EXPECT_THROW_MSG(addmm(uniform_input({2, 3, 2}, -1, 1, 7), a, uniform_input({4, 2}, -1, 1, 3)),
                   "addmm: input of shape [2, 3, 2] does not broadcast to the product's [3, 2]");
  EXPECT_THROW_MSG(addmv(a, a, a), "addmv: expected a matrix (n, m) and a vector (m)");
  EXPECT_THROW_MSG(baddbmm(a, a, a), "baddbmm: expected batches");
  EXPECT_THROW_MSG(tensordot(a, b, {1}, {0}), "tensordot: dim 1 of a (size 4) and dim 0 of b");
  EXPECT_THROW_MSG(tensordot(a, b, {0, 1}, {0}), "tensordot: 2 dims of a against 1 of b");
  EXPECT_THROW_MSG(tensordot(a, b, 3), "tensordot: cannot contract 3 dims");
  EXPECT_THROW_MSG(kron(a, a.to(kFloat32)), "kron: expected operands of one dtype");
  EXPECT_THROW_MSG(diagonal(a, 0, 1, -1), "diagonal: dim1 and dim2 are both dim 1");
  EXPECT_THROW_MSG(diagonal(uniform_input({3}, -1, 1, 4)), "diagonal: expected at least 2 dims");
  EXPECT_THROW_MSG(diag(uniform_input({2, 2, 2}, -1, 1, 5)), "diag: expected a 1-d or 2-d input");
  EXPECT_THROW_MSG(trace(uniform_input({3}, -1, 1, 6)), "trace: expected a 2-d input");
  EXPECT_THROW_MSG(cross(a, a), "cross: dim 1 must have size 3 in both");
  EXPECT_THROW_MSG(diff(a, -1), "diff: expected n >= 0");
}

}  // namespace
}  // namespace leangrad
