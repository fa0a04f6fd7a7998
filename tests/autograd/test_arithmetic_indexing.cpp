// lerp, addcmul, addcdiv and logaddexp (autograd/arithmetic_functions.h), and index_add,
// index_fill, tile, repeat_interleave, meshgrid, nonzero, masked_select and count_nonzero
// (autograd/indexing_functions.h), and bincount (reduction_functions.h): values and
// gradients against PyTorch's (tests/data/arithmetic_indexing.json, make_arithmetic_indexing.py),
// first and second derivatives by finite differences, and the errors of bad arguments.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include <leangrad/autograd/arithmetic_functions.h>
#include <leangrad/autograd/functions.h>
#include <leangrad/autograd/indexing_functions.h>
#include <leangrad/autograd/reduction_functions.h>
#include <leangrad/core/creation.h>
#include <leangrad/core/parallel.h>
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

std::vector<std::int64_t> ints(const nlohmann::json& j) {
  return j.get<std::vector<std::int64_t>>();
}

// The case's op of its inputs (the JSON's "a", "b", ... in order, those present).
Tensor apply_case(const test::ReferenceCase& rc, const Inputs& in) {
  const nlohmann::json& p = rc.params;
  const std::string op = p["op"].get<std::string>();
  if (op == "lerp") {
    return in.size() == 3 ? lerp(in[0], in[1], in[2])
                          : lerp(in[0], in[1], p["weight"].get<double>());
  }
  if (op == "addcmul") return addcmul(in[0], in[1], in[2], p["value"].get<double>());
  if (op == "addcdiv") return addcdiv(in[0], in[1], in[2], p["value"].get<double>());
  if (op == "logaddexp") return logaddexp(in[0], in[1]);
  if (op == "index_add") {
    return index_add(in[0], p["dim"].get<std::int64_t>(), rc.at("index"), in[1],
                     p["alpha"].get<double>());
  }
  if (op == "index_fill") {
    return index_fill(in[0], p["dim"].get<std::int64_t>(), rc.at("index"),
                      p["value"].get<double>());
  }
  if (op == "masked_select") return masked_select(in[0], rc.at("mask"));
  if (op == "nonzero") return nonzero(in[0]);
  if (op == "count_nonzero") return count_nonzero(in[0], DimList(ints(p["dims"])));
  if (op == "bincount") {
    const Tensor weights = rc.tensors.count("weights") ? rc.at("weights") : Tensor();
    return bincount(in[0], weights, p["minlength"].get<std::int64_t>());
  }
  if (op == "tile") return tile(in[0], ints(p["reps"]));
  if (op == "repeat_interleave") {
    const auto repeats = p["repeats"].get<std::int64_t>();
    return p.contains("dim") ? repeat_interleave(in[0], repeats, p["dim"].get<std::int64_t>())
                             : repeat_interleave(in[0], repeats);
  }
  // meshgrid: the grids, grid i times i + 1, stacked (as the script forms them).
  const std::vector<Tensor> grids = meshgrid(in, p["indexing"].get<std::string>());
  std::vector<Tensor> scaled;
  for (std::size_t i = 0; i < grids.size(); ++i)
    scaled.push_back(mul(grids[i], static_cast<double>(i + 1)));
  return stack(scaled);
}

// Against PyTorch: each side evaluates the same few float operations (lerp, addcmul, addcdiv:
// two or three roundings; logaddexp: max, a subtraction, exp and log1p within 2 ulps each, an
// add; the copies and index ops exact or a sum of at most two terms), so 16 units of roundoff of
// the larger of 1 and the value separate a right formula from a wrong one; gradients are one
// chain-rule step deeper (32).
TEST(ArithmeticIndexingReference, MatchesPyTorch) {
  for (const test::ReferenceCase& rc : test::load_reference("arithmetic_indexing.json")) {
    SCOPED_TRACE(rc.name);
    Inputs in;
    std::vector<std::string> names;
    for (const char* key : {"a", "b", "c", "w"}) {
      if (rc.tensors.count(key) == 0) continue;
      in.push_back(rc.at(key).clone().requires_grad_(rc.tensors.count(std::string("d") + key)));
      names.push_back(key);
    }
    const Tensor y = apply_case(rc, in);
    EXPECT_EQ(y.shape(), rc.at("y").shape());
    if (!is_floating(y.dtype())) {  // positions and counts: exact
      EXPECT_EQ(y.dtype(), kInt64);
      EXPECT_EQ(test::to_vector(y), test::to_vector(rc.at("y")));
      continue;
    }
    EXPECT_TRUE(matches_within_roundoff(y, rc.at("y"), {}, RoundoffMatch{.ulps = 16})) << "value";
    if (rc.tensors.count("g") == 0) continue;
    y.backward(rc.at("g"));
    for (std::size_t i = 0; i < in.size(); ++i) {
      SCOPED_TRACE("d" + names[i]);
      ASSERT_TRUE(in[i].grad().defined());
      EXPECT_TRUE(matches_within_roundoff(in[i].grad(), rc.at("d" + names[i]), {},
                                          RoundoffMatch{.ulps = 32}));
    }
  }
}

TEST(ArithmeticIndexing, GradientsMatchFiniteDifferences) {
  const Tensor a = uniform_input({3, 4}, -1.0, 1.0, 1);
  const Tensor b = uniform_input({4}, -1.0, 1.0, 2);
  const Tensor w = uniform_input({3, 1}, -0.4, 1.4, 3);
  const Tensor c = uniform_input({3, 4}, 0.5, 2.0, 4);
  struct Case {
    const char* name;
    std::function<Tensor(const Inputs&)> fn;
    Inputs inputs;
  };
  const Case cases[] = {
      {"lerp scalar", [](const Inputs& x) { return lerp(x[0], x[1], 0.8).pow(3.0); }, {a, b}},
      {"lerp tensor", [](const Inputs& x) { return lerp(x[0], x[1], x[2]).pow(3.0); }, {a, b, w}},
      {"addcmul",
       [](const Inputs& x) { return addcmul(x[0], x[1], x[2], 0.5).pow(3.0); },
       {a, b, w}},
      {"addcdiv", [](const Inputs& x) { return addcdiv(x[0], x[1], x[2], -1.5); }, {a, b, c}},
      {"logaddexp", [](const Inputs& x) { return logaddexp(x[0], x[1]); }, {a, b}},
  };
  for (const Case& k : cases) {
    SCOPED_TRACE(k.name);
    EXPECT_TRUE(gradcheck(k.fn, k.inputs));
    EXPECT_TRUE(gradgradcheck(k.fn, k.inputs));
  }
  const Tensor index = tensor<std::int64_t>({2, 0, 2});
  const Tensor source = uniform_input({3, 3}, -1.0, 1.0, 5);
  const auto added = [index](const Inputs& x) {
    return index_add(x[0], 1, index, x[1], 0.5).pow(3.0);
  };
  EXPECT_TRUE(gradcheck(added, {a, source}));
  EXPECT_TRUE(gradgradcheck(added, {a, source}));
  const auto filled = [index](const Inputs& x) { return index_fill(x[0], 1, index, 3.0).pow(3.0); };
  EXPECT_TRUE(gradcheck(filled, {a}));
  const auto interleaved = [](const Inputs& x) { return repeat_interleave(x[0], 2, 0).pow(3.0); };
  EXPECT_TRUE(gradcheck(interleaved, {a}));
  const Tensor mask = test::make_tensor({1, 0, 0, 1}, {4}, kBool);
  const auto selected = [mask](const Inputs& x) { return masked_select(x[0], mask).pow(3.0); };
  EXPECT_TRUE(gradcheck(selected, {a}));
  EXPECT_TRUE(gradgradcheck(selected, {a}));
  const auto grid = [](const Inputs& x) {
    const std::vector<Tensor> g = meshgrid({x[0], x[1]}, "xy");
    return mul(g[0], g[1]).pow(2.0);
  };
  EXPECT_TRUE(gradcheck(grid, {uniform_input({3}, -1.0, 1.0, 6), b}));
}

// nonzero of a larger tensor against a loop over its elements.
TEST(ArithmeticIndexing, NonzeroMatchesALoop) {
  const Tensor x = uniform_input({20, 30, 40}, -1.0, 1.0, 9).detach();
  const Tensor sparse = where(gt(x, 0.4), x, zeros_like(x));
  const std::vector<double> values = test::to_vector(sparse);
  std::vector<double> expected;
  for (std::int64_t i = 0; i < 20; ++i)
    for (std::int64_t j = 0; j < 30; ++j)
      for (std::int64_t k = 0; k < 40; ++k)
        if (values[static_cast<std::size_t>((i * 30 + j) * 40 + k)] != 0)
          expected.insert(expected.end(),
                          {static_cast<double>(i), static_cast<double>(j), static_cast<double>(k)});
  const Tensor got = nonzero(sparse);
  EXPECT_EQ(got.shape(), Shape({static_cast<std::int64_t>(expected.size() / 3), 3}));
  EXPECT_EQ(test::to_vector(got), expected);
  EXPECT_EQ(count_nonzero(sparse).item<std::int64_t>(),
            static_cast<std::int64_t>(expected.size() / 3));
}

// Note [True positions in two passes] (kernels/cpu/nonzero.cpp): nonzero, argwhere and
// masked_select of CPU masks against a loop over the logical elements, over masks longer than a
// chunk (65536 bytes) and across chunk boundaries, of rank 0 to 4 with size-1 and size-0 dims, a
// transposed and a stepped view, none, few, half and all of them true; and the same bytes at one
// thread and two.
TEST(ArithmeticIndexing, NonzeroOfEveryLayoutAndDensityMatchesALoop) {
  const Tensor wide = uniform_input({300, 1400}, 0.0, 1.0, 3).detach();
  const std::vector<Tensor> values = {
      uniform_input({}, 0.0, 1.0, 1).detach(),
      uniform_input({0}, 0.0, 1.0, 1).detach(),
      uniform_input({7}, 0.0, 1.0, 1).detach(),
      uniform_input({3 * 65536 + 5}, 0.0, 1.0, 2).detach(),
      uniform_input({3, 0, 4}, 0.0, 1.0, 1).detach(),
      uniform_input({2, 65537}, 0.0, 1.0, 4).detach(),
      uniform_input({5, 1, 3, 4001}, 0.0, 1.0, 5).detach(),
      wide.slice(1, 0, 700).t(),  // (700, 300), transposed
      wide.slice(1, 0, 1400, 3),  // every third column
  };
  const int saved_threads = get_num_threads();
  for (const Tensor& v : values) {
    for (double density : {0.0, 0.001, 0.5, 1.0}) {
      SCOPED_TRACE(shape_str(v.shape()) + " density " + std::to_string(density));
      const Tensor mask = lt(v, density);
      const std::vector<double> flags = test::to_vector(mask);
      const std::vector<double> picked_from = test::to_vector(v);
      std::vector<double> expected, picked;
      for (std::size_t p = 0; p < flags.size(); ++p) {
        if (flags[p] == 0) continue;
        std::vector<double> index(static_cast<std::size_t>(v.dim()));
        std::size_t rest = p;
        for (std::int64_t d = v.dim() - 1; d >= 0; --d) {
          const auto size = static_cast<std::size_t>(v.size(d));
          index[static_cast<std::size_t>(d)] = static_cast<double>(rest % size);
          rest /= size;
        }
        expected.insert(expected.end(), index.begin(), index.end());
        picked.push_back(picked_from[p]);
      }
      const auto count = static_cast<std::int64_t>(picked.size());
      set_num_threads(1);
      const Tensor one = nonzero(mask);
      set_num_threads(2);
      const Tensor two = nonzero(mask);
      set_num_threads(saved_threads);
      EXPECT_EQ(one.shape(), Shape({count, v.dim()}));
      EXPECT_EQ(one.dtype(), kInt64);
      EXPECT_EQ(test::to_vector(one), expected);
      EXPECT_TRUE(two.equal(one));
      EXPECT_TRUE(argwhere(mask).equal(one));
      EXPECT_EQ(test::to_vector(masked_select(v, mask)), picked);
    }
  }
}

// logaddexp of two large numbers does not overflow (e^100 does in float32), and the same
// infinity twice is that infinity.
TEST(ArithmeticIndexing, LogaddexpDoesNotOverflow) {
  const Tensor a = test::make_tensor({100.0, -100.0, 88.0}, {3});
  const Tensor b = test::make_tensor({100.0, -100.0, 89.0}, {3});
  EXPECT_TRUE(test::all_close(logaddexp(a, b), {100.0 + std::log(2.0), -100.0 + std::log(2.0),
                                                89.0 + std::log1p(std::exp(-1.0))}));
}

// A 0-d input is a row of one element to index_add, index_copy, index_fill and index_reduce, as
// PyTorch's (its answers: 1 + 5 = 6, 5, 7, 5; with index [0, 0] and source [5, 2], 1 + 7 = 8), and
// the gradient reaches it and the source.
TEST(ArithmeticIndexing, ZeroDimensionalInputIsARowOfOne) {
  const TensorOptions f64(kFloat64);
  const Tensor s = full({}, 1.0, f64), v = full({}, 5.0, f64);
  const Tensor i0 = full({}, 0.0, TensorOptions(kInt64));
  EXPECT_EQ(index_add(s, 0, i0, v).shape(), Shape{});
  EXPECT_EQ(index_add(s, 0, i0, v).item<double>(), 6.0);
  EXPECT_EQ(index_add(s, -1, i0, v, 2.0).item<double>(), 11.0);
  EXPECT_EQ(index_add(s, 0, test::make_tensor({0, 0}, {2}, kInt64),
                      test::make_tensor({5, 2}, {2}, kFloat64))
                .item<double>(),
            8.0);
  EXPECT_EQ(index_copy(s, 0, i0, v).item<double>(), 5.0);
  EXPECT_EQ(index_fill(s, 0, i0, 7.0).item<double>(), 7.0);
  EXPECT_EQ(index_fill(s, 0, full({}, -1.0, TensorOptions(kInt64)), 7.0).item<double>(), 7.0);
  EXPECT_EQ(index_reduce(s, 0, i0, v, "prod").item<double>(), 5.0);
  EXPECT_EQ(index_reduce(s, 0, i0, v, "amax", /*include_self=*/false).item<double>(), 5.0);
  EXPECT_THROW(index_add(s, 1, i0, v), ShapeError);
  EXPECT_THROW(index_add(s, 0, full({}, 1.0, TensorOptions(kInt64)), v), Error);
  const Tensor x = full({}, 1.5, f64).requires_grad_(), y = full({}, 2.0, f64).requires_grad_();
  index_add(x * 1.0, 0, i0, y, 3.0).backward();
  EXPECT_EQ(x.grad().item<double>(), 1.0);
  EXPECT_EQ(y.grad().item<double>(), 3.0);
}

TEST(ArithmeticIndexing, BadArgumentsAreClearErrors) {
  const Tensor a = uniform_input({3, 4}, -1.0, 1.0, 1);
  const Tensor i = tensor<std::int64_t>({0, 2});
  EXPECT_THROW_MSG(lerp(a, a.to(kFloat32), 0.5), "lerp: expected operands of one dtype");
  EXPECT_THROW_MSG(lerp(a.to(kInt64), a.to(kInt64), 0.5), "lerp: expected floating operands");
  EXPECT_THROW_MSG(addcdiv(a.to(kInt64), a.to(kInt64), a.to(kInt64)),
                   "addcdiv: expected floating operands");
  EXPECT_THROW_MSG(addcmul(a, a, Tensor()), "addcmul: operand 2 is an undefined Tensor()");
  EXPECT_THROW_MSG(index_add(a, 1, i, uniform_input({3, 3}, -1, 1, 2)),
                   "index_add: expected a source of shape [3, 2]");
  EXPECT_THROW_MSG(index_add(a, 1, tensor<std::int64_t>({0, 4}), uniform_input({3, 2}, -1, 1, 2)),
                   "index_add: index 4 at position 1 is out of range for dim 1 of size 4");
  EXPECT_THROW_MSG(index_add(a, 1, i.to(kFloat32), uniform_input({3, 2}, -1, 1, 2)),
                   "index_add: expected an int64 or int32 index");
  EXPECT_THROW_MSG(index_add(a, 2, i, a), "index_add");
  // index_fill wraps -3 .. -1 (as PyTorch's; the reference case index_fill__negative_indices),
  // index_add does not (as PyTorch's).
  EXPECT_THROW_MSG(index_fill(a, 0, tensor<std::int64_t>({-4}), 1.0),
                   "index_fill: index -4 at position 0 is out of range for dim 0 of size 3 "
                   "(expected [-3, 2]");
  EXPECT_THROW_MSG(index_fill(a, 0, tensor<std::int64_t>({0, 3}), 1.0),
                   "index_fill: index 3 at position 1 is out of range");
  EXPECT_THROW_MSG(index_add(a, 1, tensor<std::int64_t>({-1, 0}), uniform_input({3, 2}, -1, 1, 2)),
                   "index_add: index -1 at position 0 is out of range for dim 1 of size 4 "
                   "(expected [0, 3]");
  EXPECT_THROW_MSG(index_fill(a.to(kUInt8), 0, i, 300.0),
                   "index_fill: value 300 cannot be converted to dtype uint8");
  EXPECT_THROW_MSG(repeat_interleave(a, -1), "repeat_interleave: expected a non-negative");
  EXPECT_THROW_MSG(meshgrid({a}), "meshgrid: expected 0-d or 1-d tensors, got shape [3, 4]");
  EXPECT_THROW_MSG(meshgrid({}), "meshgrid: expected at least one tensor");
  EXPECT_THROW_MSG(meshgrid({i, i}, "yx"), "meshgrid: indexing must be \"ij\" or \"xy\"");
  EXPECT_THROW_MSG(tile(Tensor(), {2}), "tile: expected a defined input");
  EXPECT_THROW_MSG(masked_select(a, gt(a, 0.0).to(kFloat32)),
                   "masked_select: expected a bool mask");
  EXPECT_THROW_MSG(masked_select(a, test::make_tensor({1, 0, 1}, {3}, kBool)), "masked_select");
  EXPECT_THROW_MSG(nonzero(Tensor()), "nonzero: expected a defined input");
  EXPECT_THROW_MSG(bincount(tensor<std::int64_t>({1, -2})), "bincount: expected no negative value");
  EXPECT_THROW_MSG(bincount(a), "bincount: expected a 1-d input");
  EXPECT_THROW_MSG(bincount(i, tensor<double>({1.0})), "bincount: expected weights of the input");
}

}  // namespace
}  // namespace leangrad
