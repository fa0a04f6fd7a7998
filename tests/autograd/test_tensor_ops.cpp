// Tests of the rearranging ops of autograd/indexing_functions.h (flip, roll, repeat, tril, triu,
// pad, one_hot) and the reductions of autograd/reduction_functions.h (cumsum, logsumexp, norm):
// against PyTorch's values (tests/data/tensor_ops.json), reference loops written here, first and
// second derivatives by finite differences, and cumsum's sums the same on any number of threads.
// Their errors are the misuse suite's (tests/misuse/test_misuse_indexing.cpp).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include <leangrad/autograd/functions.h>
#include <leangrad/autograd/indexing_functions.h>
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
using test::away_from_zero_input;
using test::gradcheck;
using test::gradgradcheck;
using test::make_tensor;
using test::to_vector;
using test::uniform_input;
using Inputs = std::vector<Tensor>;

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kU32 = 0x1p-24;  // float32's unit roundoff

// ---- PyTorch's values ------------------------------------------------------------------------

std::vector<std::int64_t> ints(const nlohmann::json& j) {
  return j.get<std::vector<std::int64_t>>();
}

Tensor apply(const test::ReferenceCase& rc, const Tensor& x) {
  const nlohmann::json& p = rc.params;
  const std::string op = p["op"].get<std::string>();
  if (op == "flip") return flip(x, ints(p["dims"]));
  if (op == "roll") return roll(x, DimList(ints(p["shifts"])), DimList(ints(p["dims"])));
  if (op == "repeat") return x.repeat(ints(p["repeats"]));
  if (op == "tril") return tril(x, p["diagonal"].get<std::int64_t>());
  if (op == "triu") return triu(x, p["diagonal"].get<std::int64_t>());
  if (op == "pad") return pad(x, ints(p["pad"]), p["value"].get<double>());
  if (op == "cumsum") return cumsum(x, p["dim"].get<std::int64_t>());
  if (op == "one_hot") return one_hot(x, p["num_classes"].get<std::int64_t>());
  const bool keepdim = p["keepdim"].get<bool>();
  if (op == "logsumexp") return logsumexp(x, DimList(ints(p["dims"])), keepdim);
  // JSON has no infinity: p = inf comes as the string "inf".
  const double order =
      p["p"].is_string() ? std::stod(p["p"].get<std::string>()) : p["p"].get<double>();
  return norm(x, order, DimList(ints(p["dims"])), keepdim);
}

// The tolerances against PyTorch, from the float32 computations on each side (u = 2^-24):
// - flip, roll, tril, triu, pad, one_hot and the inf / 0 norms copy or count: exact; so does
//   repeat forward, whose gradient sums the k = product(repeats) copies' gradients in some order
//   on either side: within 2 (k - 1) u sum|g| <= 2 k^2 u max|g|.
// - cumsum adds in order in double and rounds each output once, as PyTorch's CPU kernel (Note
//   [Running reductions of float32 in float64]): the same bits, its gradient (the reversed
//   running sums) too.
// - logsumexp: log(sum_i e^(x_i - m)) + m. Each x_i - m rounds by up to u |x_i - m|, which e^
//   turns into a relative error of that much; a term's share of the sum S >= 1 is e^-d (d =
//   m - x_i), so these errors add up to at most max_d(d e^-d) n u <= n u / e of S. With the
//   exponentials within 2 ulps, n - 1 additions, the log within an ulp and the final add: log S
//   within (2 n + 3) u absolutely, plus 2 u of |y|. Its gradient g e^(x - y) rounds x - y by up
//   to u |x - y| <= 2 max|x| u on either side, which e^ makes relative: (n + 6 + 4 max|x|) u.
// - the 1, 2 and 3 norms sum in double and round once: within an ulp of the exact value, and
//   PyTorch's float sum of n terms within n u; their gradients within (n + 6) u relatively.
struct Tolerances {
  test::Tolerance y, dx;
};

Tolerances tolerances(const test::ReferenceCase& rc, std::int64_t n) {
  const std::string op = rc.params["op"].get<std::string>();
  const double dn = static_cast<double>(n);
  if (op == "cumsum") return {{0, 0}, {0, 0}};
  if (op == "repeat") {
    double k = 1;
    for (const std::int64_t r : ints(rc.params["repeats"]))
      k *= static_cast<double>(r);
    return {{0, 0}, {0, 2 * k * k * kU32 * test::max_abs(rc.at("g"))}};
  }
  if (op == "logsumexp") {
    const double most = test::max_abs(rc.at("x"));
    return {{2 * kU32, (2 * dn + 3) * kU32}, {(dn + 6 + 4 * most) * kU32, kU32}};
  }
  if (op == "norm") {
    if (rc.params["p"].is_string() || rc.params["p"] == 0.0) return {{0, 0}, {0, 0}};
    return {{(dn + 1) * kU32, 0}, {(dn + 6) * kU32, kU32}};
  }
  return {{0, 0}, {0, 0}};
}

TEST(TensorOpsReference, AsPyTorch) {
  int checked = 0;
  for (const test::ReferenceCase& rc : test::load_reference("tensor_ops.json")) {
    SCOPED_TRACE(rc.name);
    const std::string op = rc.params["op"].get<std::string>();
    const bool differentiable = rc.tensors.count("dx") > 0;
    const Tensor x = differentiable ? rc.at("x").clone().requires_grad_() : rc.at("x");
    const Tensor y = apply(rc, x);
    // The terms of one output: the reduced or accumulated dims' sizes.
    std::int64_t n = x.numel() / std::max<std::int64_t>(y.numel(), 1);
    if (op == "cumsum") n = x.size(rc.params["dim"].get<std::int64_t>());
    const Tolerances tol = tolerances(rc, n);
    EXPECT_EQ(y.dtype(), rc.at("y").dtype());
    EXPECT_EQ(y.shape(), rc.at("y").shape());
    EXPECT_TRUE(all_close(y, to_vector(rc.at("y")), tol.y.rtol, tol.y.atol));
    if (differentiable) {
      y.backward(rc.at("g"));
      EXPECT_TRUE(all_close(x.grad(), to_vector(rc.at("dx")), tol.dx.rtol, tol.dx.atol));
    }
    ++checked;
  }
  EXPECT_EQ(checked, 24);
}

// ---- Gradients -------------------------------------------------------------------------------

TEST(TensorOpsGrad, RearrangingOps) {
  const Tensor x = uniform_input({3, 4, 5}, -1, 1, 201);
  EXPECT_TRUE(gradcheck([](const Inputs& in) { return flip(in[0], {0, -1}); }, {x}));
  EXPECT_TRUE(gradcheck([](const Inputs& in) { return roll(in[0], {1, -7}, {1, 2}); }, {x}));
  EXPECT_TRUE(gradcheck([](const Inputs& in) { return roll(in[0], 13); }, {x}));
  EXPECT_TRUE(gradcheck([](const Inputs& in) { return in[0].repeat({2, 1, 3, 1}); }, {x}));
  EXPECT_TRUE(gradcheck([](const Inputs& in) { return tril(in[0], 1); }, {x}));
  EXPECT_TRUE(gradcheck([](const Inputs& in) { return triu(in[0], -2); }, {x}));
  EXPECT_TRUE(gradcheck([](const Inputs& in) { return pad(in[0], {2, -1, 0, 3}, 1.5); }, {x}));
  // Cubed: these ops are linear (test_indexing.cpp's IndexSelect.GradientsTwice says why).
  EXPECT_TRUE(gradgradcheck(
      [](const Inputs& in) {
        return in[0].repeat({1, 2, 1}).pow(3.0);
      },
      {x}));
}

TEST(TensorOpsGrad, Reductions) {
  const Tensor x = uniform_input({3, 4, 5}, -1, 1, 202);
  const Tensor away = away_from_zero_input({3, 4, 5}, 0.2, 1.0, 203);
  for (std::int64_t dim : {0, 1, 2}) {
    const auto fn = [dim](const Inputs& in) { return cumsum(in[0], dim); };
    EXPECT_TRUE(gradcheck(fn, {x})) << "cumsum dim " << dim;
    const auto cubed = [fn](const Inputs& in) { return fn(in).pow(3.0); };  // linear: cubed
    EXPECT_TRUE(gradgradcheck(cubed, {x})) << "cumsum dim " << dim;
  }
  const auto lse = [](const Inputs& in) { return logsumexp(in[0], {0, 2}); };
  EXPECT_TRUE(gradcheck(lse, {x}));
  EXPECT_TRUE(gradgradcheck(lse, {x}));
  for (double p : {2.0, 3.0, 1.5}) {
    const auto fn = [p](const Inputs& in) { return norm(in[0], p, {1}, true); };
    EXPECT_TRUE(gradcheck(fn, {away})) << "p " << p;
    EXPECT_TRUE(gradgradcheck(fn, {away})) << "p " << p;
  }
  // Without keepdim, over a negative dim and over all dims: the backward reshapes the saved
  // norm and the gradient back to the kept shape.
  const auto last_dim = [](const Inputs& in) { return norm(in[0], 2.0, {-1}); };
  EXPECT_TRUE(gradcheck(last_dim, {away}));
  EXPECT_TRUE(gradgradcheck(last_dim, {away}));
  const auto all_dims = [](const Inputs& in) { return norm(in[0], 3.0); };
  EXPECT_TRUE(gradcheck(all_dims, {away}));
  EXPECT_TRUE(gradgradcheck(all_dims, {away}));
  EXPECT_TRUE(gradcheck([](const Inputs& in) { return norm(in[0], 1.0); }, {away}));
  EXPECT_TRUE(gradcheck([](const Inputs& in) { return norm(in[0], kInf, {2}); }, {x}));
  EXPECT_TRUE(gradcheck([](const Inputs& in) { return norm(in[0], -kInf, {0}); }, {away}));
}

// Note [Norm's gradient at 0]: 0 on a slice of zeros, for every p > 1, and finite.
TEST(TensorOpsGrad, NormOfZerosHasAZeroGradient) {
  for (double p : {2.0, 3.0}) {
    const Tensor x = zeros({2, 3}, TensorOptions(kFloat64)).requires_grad_();
    norm(x, p, {1}).sum().backward();
    EXPECT_EQ(to_vector(x.grad()), std::vector<double>(6, 0.0)) << "p " << p;
  }
}

// ---- Values against loops here ---------------------------------------------------------------

TEST(Cumsum, DTypesAndBothPathsAsTheReferenceSum) {
  // inner == 1 (the last dim) and the column blocks of 256 (a middle dim, 300 columns: a full
  // block and a partial one), in float32: the running sums in double, each output rounded once
  // (Note [Running reductions of float32 in float64]), so exactly the reference loop's bits.
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> dist(-1, 1);
  std::vector<double> values(2 * 50 * 300);
  for (double& v : values)
    v = dist(rng);
  const Tensor x = make_tensor(values, {2, 50, 300});
  for (std::int64_t dim : {1, 2}) {
    const Tensor y = cumsum(x, dim);
    std::vector<double> want(values.size());
    const std::int64_t size = x.size(dim), inner = dim == 1 ? 300 : 1;
    const std::int64_t outer = x.numel() / (size * inner);
    for (std::int64_t o = 0; o < outer; ++o) {
      for (std::int64_t c = 0; c < inner; ++c) {
        double acc = 0;
        for (std::int64_t j = 0; j < size; ++j) {
          const std::int64_t k = (o * size + j) * inner + c;
          acc += static_cast<double>(static_cast<float>(values[k]));
          want[k] = static_cast<float>(acc);
        }
      }
    }
    EXPECT_TRUE(all_close(y, want, 0, 0)) << "dim " << dim;
    // The same additions in the same order on any number of threads.
    Tensor one, three;
    {
      ThreadCount threads(1);
      one = cumsum(x, dim);
    }
    {
      ThreadCount threads(3);
      three = cumsum(x, dim);
    }
    EXPECT_TRUE(one.equal(three)) << "dim " << dim;
    EXPECT_TRUE(one.equal(y)) << "dim " << dim;
  }
  // 1 and then 100 terms of 2^-25, each below half an ulp of 1: a float32 chain would stay at
  // 1; in double the sum reaches 1 + 25 2^-23, torch 1.13's 1.0000029802322388.
  std::vector<double> small(101, std::ldexp(1.0, -25));
  small[0] = 1;
  EXPECT_EQ(to_vector(cumsum(make_tensor(small, {101}, kFloat32), 0)).back(),
            1 + 25 * std::ldexp(1.0, -23));
  // Integral and bool inputs give int64 (wrapping); float16 sums in float, rounded once.
  const Tensor ints = make_tensor({2147483647.0, 1, -5}, {3}, kInt32);
  EXPECT_EQ(cumsum(ints, 0).dtype(), kInt64);
  EXPECT_EQ(to_vector(cumsum(ints, 0)),
            (std::vector<double>{2147483647.0, 2147483648.0, 2147483643.0}));
  EXPECT_EQ(to_vector(cumsum(make_tensor({1, 0, 1, 1}, {4}, kBool), 0)),
            (std::vector<double>{1, 1, 2, 3}));
  // 2048 + 1 + 1 in float16: 2049 is not a float16, so adding in float16 would stay at 2048;
  // in float the sum reaches 2050, which is.
  const Tensor half = make_tensor({2048, 1, 1}, {3}, kFloat16);
  EXPECT_EQ(to_vector(cumsum(half, 0)), (std::vector<double>{2048, 2048, 2050}));
  EXPECT_EQ(cumsum(zeros({0, 3}), 0).shape(), Shape({0, 3}));
  EXPECT_EQ(to_vector(cumsum(make_tensor({4}, {}), 0)), std::vector<double>{4});
}

TEST(Norm, LargeAndSmallFloat32ValuesNeitherOverflowNorVanish) {
  // Squares of 1e30 overflow float32 and squares of 1e-30 vanish: the sums run in double.
  const Tensor big = make_tensor({3e30, 4e30}, {2});
  EXPECT_TRUE(all_close(norm(big), {5e30}, kU32, 0));
  const Tensor small = make_tensor({3e-30, 4e-30}, {2});
  EXPECT_TRUE(all_close(norm(small), {5e-30}, kU32, 0));
  // float16: 300^2 overflows float16; the sum runs in float.
  const Tensor half = make_tensor({300, 400}, {2}, kFloat16);
  EXPECT_EQ(to_vector(norm(half)), std::vector<double>{500});
}

// The 0 "norm" counts the nonzero elements: in the graph when its input requires grad, as
// torch's, so a loss that adds it still runs backward, which gives the input no gradient (torch:
// None). It threw "does not require grad" before.
TEST(Norm, ZeroNormIsInTheGraphWithoutAGradient) {
  const Tensor x = make_tensor({1, 0, 3}, {3}).requires_grad_();
  const Tensor count = norm(x, 0.0);
  EXPECT_EQ(count.item<double>(), 2.0);
  EXPECT_TRUE(count.requires_grad());
  count.backward();
  EXPECT_FALSE(x.grad().defined());
  const Tensor both = add(count, sum(mul(x, x)));
  both.backward();
  EXPECT_EQ(to_vector(x.grad()), (std::vector<double>{2, 0, 6}));
  EXPECT_FALSE(norm(make_tensor({1, 0}, {2}), 0.0).requires_grad());
}

TEST(Rearranging, AsTheirDefinitions) {
  const Tensor x = make_tensor({0, 1, 2, 3, 4, 5}, {2, 3});
  EXPECT_EQ(to_vector(x.flip({0, 1})), (std::vector<double>{5, 4, 3, 2, 1, 0}));
  EXPECT_EQ(to_vector(x.roll(1, 1)), (std::vector<double>{2, 0, 1, 5, 3, 4}));
  EXPECT_EQ(to_vector(x.roll(-1)), (std::vector<double>{1, 2, 3, 4, 5, 0}));
  EXPECT_EQ(to_vector(x.repeat({1, 2})), (std::vector<double>{0, 1, 2, 0, 1, 2, 3, 4, 5, 3, 4, 5}));
  EXPECT_EQ(x.repeat({0, 2}).shape(), Shape({0, 6}));
  EXPECT_EQ(to_vector(x.tril()), (std::vector<double>{0, 0, 0, 3, 4, 0}));
  EXPECT_EQ(to_vector(x.triu(1)), (std::vector<double>{0, 1, 2, 0, 0, 5}));
  EXPECT_EQ(to_vector(pad(x, {1, -2})), (std::vector<double>{0, 0, 0, 3}));
  // Copies, never views of the input (as torch's), even when nothing moves.
  for (const Tensor& y : {x.flip({}), x.roll(0, 0), x.repeat({1, 1}), pad(x, {0, 0})}) {
    EXPECT_NE(y.data_ptr(), x.data_ptr());
    EXPECT_EQ(to_vector(y), to_vector(x));
  }
  // Integral and bool inputs.
  const Tensor b = make_tensor({1, 1, 1, 1}, {2, 2}, kBool);
  EXPECT_EQ(to_vector(b.triu()), (std::vector<double>{1, 1, 0, 1}));
  EXPECT_EQ(b.triu().dtype(), kBool);
  // NaN below the diagonal is replaced, not multiplied: tril gives 0 there.
  const Tensor nan = make_tensor({1, std::nan(""), 2, 3}, {2, 2});
  EXPECT_EQ(to_vector(nan.tril()), (std::vector<double>{1, 0, 2, 3}));
}

}  // namespace
}  // namespace leangrad
