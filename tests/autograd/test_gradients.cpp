// Finite-difference gradient checks (tests/testing/gradcheck.h) for every differentiable function
// of autograd/functions.h, in float64 on the CPU, with inputs nudged away from kinks. First the
// checker itself is shown to catch wrong backward formulas; then each op: arithmetic with
// broadcasting, scalar forms, unary functions, where, reductions, matmul, joining, views, copies,
// composites, and non-contiguous inputs.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <string>

#include <leangrad/autograd/functions.h>
#include <leangrad/autograd/grad_mode.h>
#include <leangrad/autograd/graph.h>
#include <leangrad/core/views.h>
#include <leangrad/kernels/creation.h>
#include "testing/gradcheck.h"
#include "testing/tensor_testing.h"

namespace leangrad {
namespace {

using Inputs = std::vector<Tensor>;
using test::away_from_zero_input;
using test::gradcheck;
using test::uniform_input;

// A leaf requiring grad whose storage is laid out transposed: shape (rows, cols), strides (1,
// rows).
Tensor transposed_input(std::int64_t rows, std::int64_t cols, double low = -1.0, double high = 1.0,
                        std::uint64_t seed = 0) {
  Tensor t = uniform_input({cols, rows}, low, high, seed).detach().transpose(0, 1);
  t.requires_grad_();
  return t;
}

// A leaf requiring grad that takes every second column of a wider tensor: strides (2 * cols, 2).
Tensor strided_input(std::int64_t rows, std::int64_t cols, std::uint64_t seed = 0) {
  Tensor t = uniform_input({rows, 2 * cols}, -1.0, 1.0, seed).detach().slice(1, 0, 2 * cols, 2);
  t.requires_grad_();
  return t;
}

// A constant copy of `t` (same values, no grad): the other operand when only one is checked.
Tensor constant(const Tensor& t) {
  return t.detach();
}

// ---- The checker itself ----------------------------------------------------------------------

// x * x with the backward of x * c (the factor 2 forgotten).
Tensor square_missing_factor_two(const Tensor& x) {
  Tensor out;
  {
    NoGradGuard no_grad;
    out = x * x;
  }
  return autograd::record_op("bad_square", out, {x}, {x},
                             [](const autograd::BackwardContext& c) -> std::vector<Tensor> {
                               return {c.grad * c.saved[0]};
                             });
}

// A transpose whose backward forgets to transpose back (shapes agree for square inputs).
Tensor transpose_missing_inverse(const Tensor& x) {
  return autograd::record_op("bad_transpose", views::transpose(x, 0, 1), {x}, {},
                             [](const autograd::BackwardContext& c) -> std::vector<Tensor> {
                               return {c.grad.contiguous()};
                             });
}

TEST(Gradcheck, CatchesAWrongFormulaAndNamesTheElement) {
  Tensor x = uniform_input({2, 3}, 0.5, 1.5);
  const ::testing::AssertionResult result =
      gradcheck([](const Inputs& in) { return square_missing_factor_two(in[0]); }, {x});
  ASSERT_FALSE(result);
  const std::string message = result.message();
  EXPECT_NE(message.find("input 0 (shape [2, 3]"), std::string::npos) << message;
  EXPECT_NE(message.find("element [0, 0]: analytical"), std::string::npos) << message;
  EXPECT_NE(message.find("numerical"), std::string::npos) << message;
  EXPECT_NE(message.find("6 of 6 elements differ"), std::string::npos) << message;
  EXPECT_NE(message.find("BadSquareBackward"), std::string::npos) << message;
}

TEST(Gradcheck, CatchesAGradientSentToTheWrongElement) {
  Tensor x = uniform_input({3, 3});
  EXPECT_FALSE(gradcheck([](const Inputs& in) { return transpose_missing_inverse(in[0]); }, {x}));
  EXPECT_TRUE(gradcheck([](const Inputs& in) { return in[0].transpose(0, 1); }, {x}));
}

TEST(Gradcheck, NamesTheFailingInputAmongSeveral) {
  Tensor a = uniform_input({3}, 0.5, 1.5, 1);
  Tensor b = uniform_input({3}, 0.5, 1.5, 2);
  const ::testing::AssertionResult result =
      gradcheck([](const Inputs& in) { return in[0] + square_missing_factor_two(in[1]); }, {a, b});
  ASSERT_FALSE(result);
  const std::string message = result.message();
  EXPECT_EQ(message.find("input 0"), std::string::npos) << message;
  EXPECT_NE(message.find("input 1 (shape [3]"), std::string::npos) << message;
}

TEST(Gradcheck, RestoresTheInputsGradients) {
  Tensor x = uniform_input({2, 2});
  const Tensor previous = test::make_tensor({1, 2, 3, 4}, {2, 2}, kFloat64);
  x.set_grad(previous);
  EXPECT_TRUE(gradcheck([](const Inputs& in) { return in[0] * 3.0; }, {x}));
  EXPECT_TRUE(x.grad().is_same(previous));
  Tensor y = uniform_input({2});
  EXPECT_TRUE(gradcheck([](const Inputs& in) { return in[0].exp(); }, {y}));
  EXPECT_FALSE(y.grad().defined());
}

TEST(Gradcheck, RejectsInputsItCannotCheck) {
  Tensor f32 = ones({3}, kFloat32);
  f32.requires_grad_();
  const auto identity_times_two = [](const Inputs& in) { return in[0] * 2.0; };
  const ::testing::AssertionResult single = gradcheck(identity_times_two, {f32});
  ASSERT_FALSE(single);
  EXPECT_NE(std::string(single.message()).find("float32"), std::string::npos) << single.message();

  Tensor expanded = uniform_input({3, 1}).detach().expand({3, 4});
  expanded.requires_grad_();
  const ::testing::AssertionResult shared = gradcheck(identity_times_two, {expanded});
  ASSERT_FALSE(shared);
  EXPECT_NE(std::string(shared.message()).find("stride 0"), std::string::npos) << shared.message();

  Tensor non_leaf = uniform_input({3}) * 2.0;
  const ::testing::AssertionResult not_leaf = gradcheck(identity_times_two, {non_leaf});
  ASSERT_FALSE(not_leaf);
  EXPECT_NE(std::string(not_leaf.message()).find("MulBackward"), std::string::npos);

  EXPECT_FALSE(gradcheck(identity_times_two, {uniform_input({3}).detach()}));  // nothing to check
}

TEST(Gradcheck, FailsWhenTheOutputRecordsNoGraph) {
  Tensor x = uniform_input({3});
  const ::testing::AssertionResult result =
      gradcheck([](const Inputs& in) { return in[0].detach() * 2.0; }, {x});
  ASSERT_FALSE(result);
  EXPECT_NE(std::string(result.message()).find("does not require grad"), std::string::npos);
}

TEST(Gradcheck, ReportsExceptionsFromFn) {
  Tensor a = uniform_input({2, 3});
  const ::testing::AssertionResult result =
      gradcheck([](const Inputs& in) { return in[0].matmul(in[0]); }, {a});
  ASSERT_FALSE(result);
  EXPECT_NE(std::string(result.message()).find("matmul"), std::string::npos) << result.message();
}

// ---- Elementwise arithmetic, tensor-tensor with broadcasting ---------------------------------

using BinaryFn = std::function<Tensor(const Tensor&, const Tensor&)>;
using InputMaker = std::function<Tensor(const Shape&, std::uint64_t seed)>;

struct BroadcastCase {
  Shape a, b;
};
const std::vector<BroadcastCase> kBroadcastCases = {
    {{2, 3}, {2, 3}}, {{3, 1}, {1, 4}}, {{2, 3, 4}, {4}}, {{}, {3}}, {{3}, {}}};

// Checks op(a, b) with both inputs requiring grad, then with only a, then with only b.
void check_binary(const BinaryFn& op, const InputMaker& make_a, const InputMaker& make_b) {
  const auto fn = [&op](const Inputs& in) { return op(in[0], in[1]); };
  for (const BroadcastCase& shapes : kBroadcastCases) {
    SCOPED_TRACE("shapes " + shape_str(shapes.a) + " and " + shape_str(shapes.b));
    Tensor a = make_a(shapes.a, 1);
    Tensor b = make_b(shapes.b, 2);
    EXPECT_TRUE(gradcheck(fn, {a, b}));
    EXPECT_TRUE(gradcheck(fn, {a, constant(b)}));
    EXPECT_TRUE(gradcheck(fn, {constant(a), b}));
  }
}

Tensor any_values(const Shape& shape, std::uint64_t seed) {
  return uniform_input(shape, -1.0, 1.0, seed);
}
Tensor positive_values(const Shape& shape, std::uint64_t seed) {
  return uniform_input(shape, 0.5, 2.0, seed);
}
Tensor nonzero_values(const Shape& shape, std::uint64_t seed) {
  return away_from_zero_input(shape, 0.5, 2.0, seed);
}
// maximum and minimum are not differentiable at ties. Values are a multiple of 1/2 plus a
// fraction in [0.05, 0.2) ("low") or [0.3, 0.45) ("high"): a low and a high value always differ
// by at least 0.1, wherever broadcasting pairs them.
Tensor half_steps_plus(const Shape& shape, std::uint64_t seed, double fraction_low) {
  const std::vector<double> fractions =
      test::to_vector(uniform_input(shape, fraction_low, fraction_low + 0.15, seed).detach());
  const std::vector<double> steps = test::to_vector(uniform_input(shape, -2, 2, seed + 100));
  std::vector<double> values(fractions.size());
  for (std::size_t i = 0; i < values.size(); ++i) {
    values[i] = std::floor(steps[i]) / 2.0 + fractions[i];
  }
  Tensor t = test::make_tensor(values, shape, kFloat64);
  t.requires_grad_();
  return t;
}
Tensor low_values(const Shape& shape, std::uint64_t seed) {
  return half_steps_plus(shape, seed, 0.05);
}
Tensor high_values(const Shape& shape, std::uint64_t seed) {
  return half_steps_plus(shape, seed, 0.3);
}

const BinaryFn kAdd = [](const Tensor& a, const Tensor& b) { return add(a, b); };
const BinaryFn kSub = [](const Tensor& a, const Tensor& b) { return sub(a, b); };
const BinaryFn kMul = [](const Tensor& a, const Tensor& b) { return mul(a, b); };
const BinaryFn kDiv = [](const Tensor& a, const Tensor& b) { return div(a, b); };
const BinaryFn kPow = [](const Tensor& a, const Tensor& b) { return pow(a, b); };
const BinaryFn kMaximum = [](const Tensor& a, const Tensor& b) { return maximum(a, b); };
const BinaryFn kMinimum = [](const Tensor& a, const Tensor& b) { return minimum(a, b); };

TEST(Gradients, Add) {
  check_binary(kAdd, any_values, any_values);
}
TEST(Gradients, Sub) {
  check_binary(kSub, any_values, any_values);
}
TEST(Gradients, Mul) {
  check_binary(kMul, any_values, any_values);
}
TEST(Gradients, Div) {
  check_binary(kDiv, any_values, nonzero_values);
}
TEST(Gradients, Pow) {
  check_binary(kPow, positive_values, any_values);
}
TEST(Gradients, Maximum) {
  check_binary(kMaximum, low_values, high_values);
  check_binary(kMaximum, high_values, low_values);
}
TEST(Gradients, Minimum) {
  check_binary(kMinimum, low_values, high_values);
  check_binary(kMinimum, high_values, low_values);
}

TEST(Gradients, OperatorsOnTensors) {
  Tensor a = uniform_input({3, 4}, -1.0, 1.0, 1);
  Tensor b = away_from_zero_input({4}, 0.5, 2.0, 2);
  EXPECT_TRUE(
      gradcheck([](const Inputs& in) { return (in[0] + in[1]) * in[0] - in[0] / in[1]; }, {a, b}));
}

// ---- Scalar forms ----------------------------------------------------------------------------

TEST(Gradients, ScalarArithmetic) {
  Tensor x = uniform_input({3, 4});
  EXPECT_TRUE(gradcheck([](const Inputs& in) { return add(in[0], 2.5); }, {x}));
  EXPECT_TRUE(gradcheck([](const Inputs& in) { return sub(in[0], 2.5); }, {x}));
  EXPECT_TRUE(gradcheck([](const Inputs& in) { return mul(in[0], -1.5); }, {x}));
  EXPECT_TRUE(gradcheck([](const Inputs& in) { return div(in[0], 0.8); }, {x}));
  EXPECT_TRUE(gradcheck([](const Inputs& in) { return rsub(in[0], 2.0); }, {x}));
  EXPECT_TRUE(gradcheck([](const Inputs& in) { return in[0] + 1.0; }, {x}));
  EXPECT_TRUE(gradcheck([](const Inputs& in) { return in[0] - 1.0; }, {x}));
  EXPECT_TRUE(gradcheck([](const Inputs& in) { return in[0] * 3.0; }, {x}));
  EXPECT_TRUE(gradcheck([](const Inputs& in) { return in[0] / 3.0; }, {x}));
  EXPECT_TRUE(gradcheck([](const Inputs& in) { return 2.0 + in[0]; }, {x}));
  EXPECT_TRUE(gradcheck([](const Inputs& in) { return 2.0 - in[0]; }, {x}));
  EXPECT_TRUE(gradcheck([](const Inputs& in) { return 2.0 * in[0]; }, {x}));
  EXPECT_TRUE(gradcheck([](const Inputs& in) { return -in[0]; }, {x}));
}

TEST(Gradients, ScalarDivisionByTensor) {
  Tensor x = away_from_zero_input({3, 4}, 0.5, 2.0);
  EXPECT_TRUE(gradcheck([](const Inputs& in) { return rdiv(in[0], 2.0); }, {x}));
  EXPECT_TRUE(gradcheck([](const Inputs& in) { return 2.0 / in[0]; }, {x}));
}

TEST(Gradients, PowScalarExponent) {
  Tensor any = uniform_input({3, 4});
  Tensor positive = uniform_input({3, 4}, 0.5, 2.0);
  Tensor nonzero = away_from_zero_input({3, 4}, 0.5, 2.0);
  EXPECT_TRUE(gradcheck([](const Inputs& in) { return in[0].pow(3.0); }, {any}));
  EXPECT_TRUE(gradcheck([](const Inputs& in) { return in[0].pow(2.0); }, {any}));
  EXPECT_TRUE(gradcheck([](const Inputs& in) { return in[0].pow(1.0); }, {any}));
  EXPECT_TRUE(gradcheck([](const Inputs& in) { return in[0].pow(0.0); }, {any}));
  EXPECT_TRUE(gradcheck([](const Inputs& in) { return in[0].pow(0.5); }, {positive}));
  EXPECT_TRUE(gradcheck([](const Inputs& in) { return in[0].pow(-1.5); }, {positive}));
  EXPECT_TRUE(gradcheck([](const Inputs& in) { return in[0].pow(-2.0); }, {nonzero}));
}

// ---- Unary functions -------------------------------------------------------------------------

TEST(Gradients, UnaryFunctions) {
  Tensor any = uniform_input({3, 4}, -2.0, 2.0);
  Tensor positive = uniform_input({3, 4}, 0.2, 3.0);
  Tensor nonzero = away_from_zero_input({3, 4}, 0.1, 2.0);  // abs and relu have a kink at 0
  EXPECT_TRUE(gradcheck([](const Inputs& in) { return neg(in[0]); }, {any}));
  EXPECT_TRUE(gradcheck([](const Inputs& in) { return in[0].exp(); }, {any}));
  EXPECT_TRUE(gradcheck([](const Inputs& in) { return in[0].tanh(); }, {any}));
  EXPECT_TRUE(gradcheck([](const Inputs& in) { return in[0].sigmoid(); }, {any}));
  EXPECT_TRUE(gradcheck([](const Inputs& in) { return in[0].log(); }, {positive}));
  EXPECT_TRUE(gradcheck([](const Inputs& in) { return in[0].sqrt(); }, {positive}));
  EXPECT_TRUE(gradcheck([](const Inputs& in) { return in[0].abs(); }, {nonzero}));
  EXPECT_TRUE(gradcheck([](const Inputs& in) { return in[0].relu(); }, {nonzero}));
}

TEST(Gradients, UnaryFunctionsOfZeroDimTensors) {
  Tensor x = uniform_input({}, 0.5, 1.5);
  EXPECT_TRUE(gradcheck([](const Inputs& in) { return in[0].exp() * in[0].log(); }, {x}));
}

// ---- where -----------------------------------------------------------------------------------

TEST(Gradients, WhereBroadcastsTheCondition) {
  const Tensor cond = test::make_tensor({1, 0, 1}, {3, 1}, kBool);
  Tensor a = uniform_input({3, 4}, -1.0, 1.0, 1);
  Tensor b = uniform_input({4}, -1.0, 1.0, 2);
  const auto fn = [](const Inputs& in) { return where(in[0], in[1], in[2]); };
  EXPECT_TRUE(gradcheck(fn, {cond, a, b}));
  EXPECT_TRUE(gradcheck(fn, {cond, a, constant(b)}));
  EXPECT_TRUE(gradcheck(fn, {cond, constant(a), b}));
  // A condition computed from an input: not differentiable itself, the values are.
  EXPECT_TRUE(
      gradcheck([](const Inputs& in) { return where(gt(in[0], 0.0), in[0] * in[0], in[0] * 3.0); },
                {away_from_zero_input({2, 3})}));
}

// ---- Reductions ------------------------------------------------------------------------------

struct ReductionCase {
  std::vector<std::int64_t> dims;
  bool keepdim;
};
const std::vector<ReductionCase> kReductionCases = {
    {{1}, false}, {{1}, true},   {{0, 2}, false},  {{0, 2}, true},  {{}, false},
    {{}, true},   {{-1}, false}, {{-3, -1}, true}, {{2, 0}, false}, {{0, 1, 2}, false}};

using ReductionFn = std::function<Tensor(const Tensor&, const std::vector<std::int64_t>&, bool)>;

void check_reduction(const ReductionFn& reduce) {
  Tensor x = uniform_input({2, 3, 4});  // distinct values: max has no ties
  for (const ReductionCase& r : kReductionCases) {
    SCOPED_TRACE("dims " + shape_str(r.dims) + (r.keepdim ? ", keepdim" : ""));
    EXPECT_TRUE(gradcheck([&](const Inputs& in) { return reduce(in[0], r.dims, r.keepdim); }, {x}));
  }
}

TEST(Gradients, Sum) {
  check_reduction(
      [](const Tensor& t, const auto& dims, bool keepdim) { return sum(t, dims, keepdim); });
  EXPECT_TRUE(gradcheck([](const Inputs& in) { return in[0].sum(); }, {uniform_input({3})}));
}

TEST(Gradients, Mean) {
  check_reduction(
      [](const Tensor& t, const auto& dims, bool keepdim) { return mean(t, dims, keepdim); });
  EXPECT_TRUE(gradcheck([](const Inputs& in) { return in[0].mean(); }, {uniform_input({3})}));
}

TEST(Gradients, Max) {
  check_reduction(
      [](const Tensor& t, const auto& dims, bool keepdim) { return max(t, dims, keepdim); });
  EXPECT_TRUE(gradcheck([](const Inputs& in) { return in[0].max(); }, {uniform_input({3})}));
}

// ---- Matmul ----------------------------------------------------------------------------------

void check_matmul(const Shape& a_shape, const Shape& b_shape) {
  SCOPED_TRACE("matmul of " + shape_str(a_shape) + " and " + shape_str(b_shape));
  Tensor a = uniform_input(a_shape, -1.0, 1.0, 1);
  Tensor b = uniform_input(b_shape, -1.0, 1.0, 2);
  const auto fn = [](const Inputs& in) { return matmul(in[0], in[1]); };
  EXPECT_TRUE(gradcheck(fn, {a, b}));
  EXPECT_TRUE(gradcheck(fn, {a, constant(b)}));
  EXPECT_TRUE(gradcheck(fn, {constant(a), b}));
}

TEST(Gradients, Matmul2d) {
  check_matmul({3, 4}, {4, 5});
}
TEST(Gradients, MatmulBatched3d) {
  check_matmul({2, 3, 4}, {2, 4, 5});
}
TEST(Gradients, Matmul3dWith2dBroadcasts) {
  check_matmul({2, 3, 4}, {4, 5});
  check_matmul({3, 4}, {2, 4, 5});
  check_matmul({1, 3, 4}, {2, 4, 5});
}
TEST(Gradients, MatmulWithVectors) {
  check_matmul({4}, {4, 5});     // vector-matrix
  check_matmul({3, 4}, {4});     // matrix-vector
  check_matmul({4}, {4});        // dot
  check_matmul({2, 3, 4}, {4});  // batched matrix-vector
}

// ---- Joining ---------------------------------------------------------------------------------

TEST(Gradients, Cat) {
  Tensor a = uniform_input({2, 3}, -1.0, 1.0, 1);
  Tensor b = uniform_input({1, 3}, -1.0, 1.0, 2);
  Tensor c = uniform_input({3, 3}, -1.0, 1.0, 3);
  const auto cat0 = [](const Inputs& in) { return cat(in, 0); };
  EXPECT_TRUE(gradcheck(cat0, {a, b, c}));
  EXPECT_TRUE(gradcheck(cat0, {a, constant(b), c}));

  Tensor d = uniform_input({2, 1}, -1.0, 1.0, 4);
  Tensor e = uniform_input({2, 4}, -1.0, 1.0, 5);
  const auto cat1 = [](const Inputs& in) { return cat(in, 1); };
  const auto cat_last = [](const Inputs& in) { return cat(in, -1); };
  EXPECT_TRUE(gradcheck(cat1, {a, d, e}));
  EXPECT_TRUE(gradcheck(cat_last, {a, d, e}));
}

TEST(Gradients, Stack) {
  Tensor a = uniform_input({2, 3}, -1.0, 1.0, 1);
  Tensor b = uniform_input({2, 3}, -1.0, 1.0, 2);
  Tensor c = uniform_input({2, 3}, -1.0, 1.0, 3);
  for (std::int64_t dim : {0, 1, 2, -1}) {
    SCOPED_TRACE("dim " + std::to_string(dim));
    EXPECT_TRUE(gradcheck([dim](const Inputs& in) { return stack(in, dim); }, {a, b, c}));
  }
  EXPECT_TRUE(gradcheck([](const Inputs& in) { return stack(in, 1); }, {a, constant(b), c}));
}

// ---- Views and copies ------------------------------------------------------------------------

TEST(Gradients, ViewAndReshape) {
  Tensor x = uniform_input({3, 4});
  EXPECT_TRUE(gradcheck([](const Inputs& in) { return in[0].view({4, 3}); }, {x}));
  EXPECT_TRUE(gradcheck([](const Inputs& in) { return in[0].view({2, -1, 3}); }, {x}));
  EXPECT_TRUE(gradcheck([](const Inputs& in) { return in[0].reshape({12}); }, {x}));
}

TEST(Gradients, ReshapeOfNonContiguousCopies) {
  Tensor x = transposed_input(3, 4);
  ASSERT_FALSE(x.is_contiguous());
  const Tensor r = x.reshape({12});
  EXPECT_FALSE(r.shares_storage(x));  // no view can express it: reshape copied
  EXPECT_TRUE(gradcheck([](const Inputs& in) { return in[0].reshape({12}); }, {x}));
  EXPECT_TRUE(gradcheck([](const Inputs& in) { return in[0].reshape({2, 6}); }, {x}));
  EXPECT_TRUE(gradcheck(
      [](const Inputs& in) {
        return in[0].transpose(0, 1).reshape({6, 2});
      },
      {uniform_input({3, 4})}));
}

TEST(Gradients, PermuteAndTranspose) {
  Tensor x = uniform_input({2, 3, 4});
  EXPECT_TRUE(gradcheck([](const Inputs& in) { return in[0].permute({2, 0, 1}); }, {x}));
  EXPECT_TRUE(gradcheck([](const Inputs& in) { return in[0].permute({1, -1, 0}); }, {x}));
  EXPECT_TRUE(gradcheck([](const Inputs& in) { return in[0].transpose(0, 2); }, {x}));
  EXPECT_TRUE(gradcheck([](const Inputs& in) { return in[0].transpose(-1, 1); }, {x}));
}

TEST(Gradients, SliceAndSelect) {
  Tensor x = uniform_input({4, 6});
  EXPECT_TRUE(gradcheck([](const Inputs& in) { return in[0].slice(1, 0, 6, 2); }, {x}));
  EXPECT_TRUE(gradcheck([](const Inputs& in) { return in[0].slice(0, 1, 3); }, {x}));
  EXPECT_TRUE(gradcheck([](const Inputs& in) { return in[0].slice(-1, -4, 100, 3); }, {x}));
  EXPECT_TRUE(gradcheck([](const Inputs& in) { return in[0].select(1, 2); }, {x}));
  EXPECT_TRUE(gradcheck([](const Inputs& in) { return in[0].select(0, -1); }, {x}));
  // A slice used twice: both scatters land in the same gradient.
  EXPECT_TRUE(
      gradcheck([](const Inputs& in) { return in[0].slice(0, 0, 2) * in[0].slice(0, 2, 4); }, {x}));
}

TEST(Gradients, UnsqueezeSqueezeExpandFlatten) {
  Tensor x = uniform_input({3, 4});
  EXPECT_TRUE(gradcheck([](const Inputs& in) { return in[0].unsqueeze(1); }, {x}));
  EXPECT_TRUE(gradcheck([](const Inputs& in) { return in[0].unsqueeze(-1); }, {x}));
  Tensor ones_dims = uniform_input({3, 1, 4, 1});
  EXPECT_TRUE(gradcheck([](const Inputs& in) { return in[0].squeeze(); }, {ones_dims}));
  EXPECT_TRUE(gradcheck([](const Inputs& in) { return in[0].squeeze(1); }, {ones_dims}));
  EXPECT_TRUE(gradcheck([](const Inputs& in) { return in[0].squeeze(-1); }, {ones_dims}));
  Tensor column = uniform_input({3, 1});
  EXPECT_TRUE(gradcheck([](const Inputs& in) { return in[0].expand({2, 3, 4}); }, {column}));
  Tensor cube = uniform_input({2, 3, 4});
  EXPECT_TRUE(gradcheck([](const Inputs& in) { return in[0].flatten(); }, {cube}));
  EXPECT_TRUE(gradcheck([](const Inputs& in) { return in[0].flatten(1); }, {cube}));
  EXPECT_TRUE(gradcheck([](const Inputs& in) { return in[0].flatten(0, 1); }, {cube}));
  EXPECT_TRUE(gradcheck([](const Inputs& in) { return in[0].flatten(); }, {uniform_input({})}));
}

TEST(Gradients, CloneAndDtypeRoundTrip) {
  Tensor x = uniform_input({3, 4});
  EXPECT_TRUE(gradcheck([](const Inputs& in) { return in[0].clone(); }, {x}));
  EXPECT_TRUE(
      gradcheck([](const Inputs& in) { return in[0].contiguous(); }, {transposed_input(3, 4)}));
  // Through float32 and back: the gradient arrives as float64 (gradcheck checks the dtype).
  // float32 rounding (~6e-8 relative) needs a wider step for the finite differences.
  EXPECT_TRUE(gradcheck([](const Inputs& in) { return in[0].to(kFloat32).to(kFloat64) * 2.0; }, {x},
                        /*eps=*/1e-3, /*atol=*/1e-4, /*rtol=*/1e-3));
  EXPECT_TRUE(gradcheck(
      [](const Inputs& in) { return (in[0].to(kFloat32) * 3.0f).to(kFloat64).exp(); }, {x},
      /*eps=*/1e-3, /*atol=*/1e-3, /*rtol=*/1e-3));
  // to() of the same dtype and device is the input itself.
  EXPECT_TRUE(gradcheck([](const Inputs& in) { return in[0].to(kFloat64); }, {x}));
}

TEST(Gradients, ZeroDimAndSizeOneEdgeCases) {
  Tensor scalar = uniform_input({}, 0.5, 1.5, 1);
  Tensor vector = uniform_input({4}, -1.0, 1.0, 2);
  EXPECT_TRUE(gradcheck([](const Inputs& in) { return in[0].sum(); }, {scalar}));
  EXPECT_TRUE(gradcheck([](const Inputs& in) { return in[0].max(); }, {scalar}));
  // A 0-d tensor accepts dim 0 or -1 in a reduction (and reduces nothing).
  EXPECT_TRUE(gradcheck([](const Inputs& in) { return in[0].mean({0}); }, {scalar}));
  EXPECT_TRUE(gradcheck([](const Inputs& in) { return in[0].sum({-1}, true); }, {scalar}));
  EXPECT_TRUE(gradcheck([](const Inputs& in) { return in[0].amax({0}); }, {scalar}));
  EXPECT_TRUE(gradcheck([](const Inputs& in) { return in[0].view({1, 1}); }, {scalar}));
  EXPECT_TRUE(gradcheck([](const Inputs& in) { return in[0].expand({2, 3}); }, {scalar}));
  EXPECT_TRUE(gradcheck([](const Inputs& in) { return in[0].select(0, 1); }, {vector}));
  EXPECT_TRUE(gradcheck([](const Inputs& in) { return stack({in[0], in[0] * 2.0}); }, {scalar}));
  EXPECT_TRUE(gradcheck([](const Inputs& in) { return in[0].expand({3, -1}); }, {vector}));
  EXPECT_TRUE(gradcheck([](const Inputs& in) { return in[0].reshape({2, -1}); }, {vector}));
  EXPECT_TRUE(gradcheck([](const Inputs& in) { return in[0].flatten(-2, -1); },
                        {uniform_input({2, 3, 2})}));
  // Both operands broadcast: (2, 1, 4) with (3, 1) -> (2, 3, 4).
  EXPECT_TRUE(
      gradcheck([](const Inputs& in) { return in[0] * in[1]; },
                {uniform_input({2, 1, 4}, -1.0, 1.0, 3), uniform_input({3, 1}, -1.0, 1.0, 4)}));
  EXPECT_TRUE(gradcheck([](const Inputs& in) { return where(in[0], in[1], in[2]); },
                        {test::make_tensor({0}, {}, kBool), vector, scalar}));
  check_matmul({4}, {2, 4, 5});  // vector @ batched matrices
}

TEST(Gradients, CatSkipsALegacyEmptyTensor) {
  // A 1-D tensor of size 0 may join tensors of any rank (as torch.cat allows); it gets an
  // empty gradient.
  Tensor a = uniform_input({2, 3}, -1.0, 1.0, 1);
  Tensor empty_1d = uniform_input({0});
  Tensor b = uniform_input({2, 1}, -1.0, 1.0, 2);
  EXPECT_TRUE(gradcheck([](const Inputs& in) { return cat(in, 1); }, {a, empty_1d, b}));
}

// ---- Composites ------------------------------------------------------------------------------

TEST(Gradients, LinearTanhSum) {
  Tensor x = uniform_input({4, 3}, -1.0, 1.0, 1);  // (B, in_features)
  Tensor w = uniform_input({3, 5}, -1.0, 1.0, 2);  // (in_features, out_features)
  Tensor b = uniform_input({5}, -1.0, 1.0, 3);     // (out_features)
  const auto fn = [](const Inputs& in) { return (in[0].matmul(in[1]) + in[2]).tanh().sum(); };
  EXPECT_TRUE(gradcheck(fn, {x, w, b}));
  EXPECT_TRUE(gradcheck(fn, {constant(x), w, b}));
}

TEST(Gradients, TwoLayerPerceptronMeanSquaredError) {
  Tensor x = uniform_input({4, 3}, -1.0, 1.0, 1);
  Tensor w1 = uniform_input({3, 6}, -1.0, 1.0, 2);
  Tensor b1 = uniform_input({6}, -1.0, 1.0, 3);
  Tensor w2 = uniform_input({6, 2}, -1.0, 1.0, 4);
  Tensor b2 = uniform_input({2}, -1.0, 1.0, 5);
  const Tensor target = test::make_tensor({0, 1, 1, 0, 0.5, 0.5, 1, 1}, {4, 2}, kFloat64);
  EXPECT_TRUE(gradcheck(
      [](const Inputs& in) {
        const Tensor hidden = (in[0].matmul(in[1]) + in[2]).relu();   // (B, 6)
        const Tensor out = (hidden.matmul(in[3]) + in[4]).sigmoid();  // (B, 2)
        const Tensor diff = out - in[5];
        return (diff * diff).mean();
      },
      {x, w1, b1, w2, b2, target}));
}

TEST(Gradients, SoftmaxFromPrimitives) {
  Tensor logits = uniform_input({3, 5}, -2.0, 2.0);
  EXPECT_TRUE(gradcheck(
      [](const Inputs& in) {
        const Tensor shifted = in[0] - in[0].amax({1}, /*keepdim=*/true);
        const Tensor e = shifted.exp();
        return e / e.sum({1}, /*keepdim=*/true);
      },
      {logits}));
}

// ---- Non-contiguous inputs -------------------------------------------------------------------

TEST(Gradients, NonContiguousInputs) {
  Tensor t = transposed_input(3, 4, -1.0, 1.0, 1);  // (3, 4), strides (1, 3)
  Tensor s = strided_input(3, 4, 2);                // (3, 4), strides (8, 2)
  Tensor positive_t = transposed_input(3, 4, 0.5, 2.0, 3);
  Tensor w = transposed_input(4, 5, -1.0, 1.0, 4);  // a transposed weight, as in linear
  ASSERT_FALSE(t.is_contiguous());
  ASSERT_FALSE(s.is_contiguous());
  EXPECT_TRUE(gradcheck([](const Inputs& in) { return in[0].exp(); }, {t}));
  EXPECT_TRUE(gradcheck([](const Inputs& in) { return in[0].log(); }, {positive_t}));
  EXPECT_TRUE(gradcheck([](const Inputs& in) { return in[0] * in[1]; }, {t, s}));
  EXPECT_TRUE(gradcheck([](const Inputs& in) { return in[0] / in[1]; }, {s, positive_t}));
  EXPECT_TRUE(gradcheck([](const Inputs& in) { return in[0].matmul(in[1]); }, {t, w}));
  EXPECT_TRUE(gradcheck([](const Inputs& in) { return in[0].sum({1}); }, {t}));
  EXPECT_TRUE(gradcheck([](const Inputs& in) { return in[0].amax({0}); }, {s}));
  EXPECT_TRUE(gradcheck([](const Inputs& in) { return cat({in[0], in[1]}, 1); }, {t, s}));
  EXPECT_TRUE(gradcheck([](const Inputs& in) { return in[0].slice(1, 1, 4, 2); }, {t}));
}

}  // namespace
}  // namespace leangrad
