// addmm, addmv, baddbmm, addbmm, tensordot, kron, diagonal, diag, trace, cross, cdist and diff
// (autograd/linalg_functions.h): values and gradients against PyTorch's
// (tests/data/linalg_functions.json, make_linalg_functions.py), first and second derivatives by
// finite differences, and the errors of bad arguments.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include <leangrad/autograd/functions.h>
#include <leangrad/autograd/indexing_functions.h>
#include <leangrad/autograd/linalg_functions.h>
#include <leangrad/autograd/reduction_functions.h>
#include <leangrad/core/memory.h>
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
  if (op == "cdist") {
    // JSON has no infinity: p = inf comes as the string "inf".
    const double order = p["p"].is_string() ? std::stod(p["p"].get<std::string>()) : scale("p");
    return cdist(in[0], in[1], order);
  }
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
      {"cdist p=3",
       [](const Inputs& x) { return cdist(x[0], x[1], 3.0); },
       {in({2, 3, 2}), in({4, 2})}},
      // More than 25 rows: the product form and its own gradient.
      {"cdist products",
       [](const Inputs& x) { return cdist(x[0], x[1]); },
       {in({27, 3}), in({2, 3})}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_TRUE(gradcheck(c.fn, c.inputs));
    EXPECT_TRUE(gradgradcheck(c.fn, c.inputs));
  }
}

// addmm with beta 0 does not read input: a NaN there does not reach the result, as PyTorch's.
// Offsets past the matrix give an empty diagonal, as torch's, however far: INT64_MIN too
// (whose magnitude int64 cannot hold; it was negated before the cut).
TEST(LinalgFunctions, DiagonalOfAFarOffsetIsEmpty) {
  const Tensor x = reshape(arange(12.0), {3, 4});
  for (const std::int64_t offset : {std::numeric_limits<std::int64_t>::min(), std::int64_t{-3},
                                    std::int64_t{4}, std::numeric_limits<std::int64_t>::max()}) {
    EXPECT_EQ(diagonal(x, offset).shape(), (Shape{0})) << offset;
    EXPECT_EQ(diag(x, offset).shape(), (Shape{0})) << offset;
  }
  EXPECT_EQ(test::to_vector(diagonal(x, -2)), (std::vector<double>{8.0}));
  EXPECT_EQ(test::to_vector(diagonal(x, 3)), (std::vector<double>{3.0}));
}

TEST(LinalgFunctions, AddmmWithBetaZeroIgnoresInput) {
  const Tensor nan = full({2, 2}, std::numeric_limits<double>::quiet_NaN());
  const Tensor eye = test::make_tensor({1, 0, 0, 1}, {2, 2});
  const Tensor m = test::make_tensor({1, 2, 3, 4}, {2, 2});
  EXPECT_TRUE(test::all_close(addmm(nan, eye, m, 0.0, 2.0), {2, 4, 6, 8}));
}

// The product form of cdist (more than 25 rows) against the differences' form, in float64: the
// same distances to within the form's cancellation (|a|^2 - 2 a.b + |b|^2 rounds by a few units
// of roundoff of |a|^2 + |b|^2 < 12, so a distance near 0 comes out near sqrt(12 u), 1e-7), and
// the same gradient. Row 5 of a is also a row of b, in values whose squares and products are
// exact, so that distance is exactly 0 in either form and its gradient term is 0, as PyTorch's.
TEST(LinalgFunctions, CdistProductFormMatchesTheDifferences) {
  std::vector<double> values = test::to_vector(uniform_input({40, 6}, -1.0, 1.0, 11));
  const std::vector<double> exact_row = {0.5, -1.0, 0.25, 0.75, -0.5, 1.0};
  std::copy(exact_row.begin(), exact_row.end(), values.begin() + 5 * 6);
  const Tensor a = test::make_tensor(values, {40, 6}, kFloat64).requires_grad_(true);
  std::vector<double> b_values = test::to_vector(uniform_input({3, 6}, -1.0, 1.0, 12));
  b_values.insert(b_values.end(), exact_row.begin(), exact_row.end());
  const Tensor b = test::make_tensor(b_values, {4, 6}, kFloat64).requires_grad_(true);
  const Tensor products = cdist(a, b);
  EXPECT_EQ(products[5][3].item<double>(), 0.0);
  const Tensor a2 = a.detach().requires_grad_(true);
  const Tensor b2 = b.detach().requires_grad_(true);
  const Tensor differences = norm(sub(unsqueeze(a2, -2), unsqueeze(b2, -3)), 2.0, {-1});
  EXPECT_TRUE(test::all_close(products, test::to_vector(differences), 1e-12, 1e-7));
  // The gradients of a weighted sum: each distance's gradient is (a_i - b_j) / d_ij; the random
  // rows here are far apart (but for the zero pair), so the forms agree to about 1e-14.
  const Tensor g = uniform_input({40, 4}, -1.0, 1.0, 13).detach();
  (products * g).sum().backward();
  (differences * g).sum().backward();
  EXPECT_TRUE(test::all_close(a.grad(), test::to_vector(a2.grad()), 1e-10, 1e-12));
  EXPECT_TRUE(test::all_close(b.grad(), test::to_vector(b2.grad()), 1e-10, 1e-12));
}

// More than 25 rows a side takes the product form, which never forms the (P, R, M) differences:
// here those would be 600 * 500 * 64 floats (77 MB); the product form's largest blocks are the
// (600, 500) result and the two (rows, 66) operands, about 1.5 MB together.
TEST(LinalgFunctions, CdistOfManyRowsDoesNotFormTheDifferences) {
  const Tensor a = uniform_input({600, 64}, -1.0, 1.0, 14).detach().to(kFloat32);
  const Tensor b = uniform_input({500, 64}, -1.0, 1.0, 15).detach().to(kFloat32);
  const std::int64_t before = memory::stats(kCPU).allocated;
  memory::reset_peak(kCPU);
  const Tensor d = cdist(a, b);
  EXPECT_LT(memory::stats(kCPU).peak_allocated - before, std::int64_t{8} << 20);
  EXPECT_EQ(d.shape(), Shape({600, 500}));
}

// diff of bool is the xor of neighbours, as PyTorch's (it was refused by sub, in sub's name).
TEST(LinalgFunctions, DiffOfBoolIsTheXorOfNeighbours) {
  const std::vector<bool> v = {true, false, false, true, true, false};
  const Tensor b = tensor(v, Shape{2, 3});
  const Tensor d = diff(b, 1, 1);
  EXPECT_EQ(d.dtype(), kBool);
  EXPECT_EQ(d.shape(), Shape({2, 2}));
  std::vector<double> want;
  for (int r = 0; r < 2; ++r)
    for (int c = 0; c < 2; ++c)
      want.push_back(v[r * 3 + c + 1] != v[r * 3 + c] ? 1.0 : 0.0);
  EXPECT_EQ(test::to_vector(d), want);
  // Twice: the xor of the xors.
  EXPECT_EQ(test::to_vector(diff(b, 2, 1)),
            std::vector<double>({want[1] != want[0] ? 1.0 : 0.0, want[3] != want[2] ? 1.0 : 0.0}));
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
  EXPECT_THROW_MSG(cdist(a, b), "cdist: expected (*, P, M) and (*, R, M), got shapes [3, 4]");
  EXPECT_THROW_MSG(cdist(a, a, -1.0), "cdist: expected p >= 0");
  EXPECT_THROW_MSG(cdist(uniform_input({2, 3, 4}, -1, 1, 8), uniform_input({3, 3, 4}, -1, 1, 9)),
                   "cdist: shapes [2] and [3] cannot be broadcast");
}

}  // namespace
}  // namespace leangrad
