// Custom autograd functions (autograd::Function<T>): TanhExp written the way a PyTorch user
// writes it, checked against finite differences and against the same formula built from ops.
#include <gtest/gtest.h>

#include <any>
#include <cmath>
#include <string>
#include <vector>

#include <leangrad/autograd/custom_function.h>
#include <leangrad/autograd/functions.h>
#include <leangrad/autograd/nn_functions.h>
#include <leangrad/autograd/saved_tensor.h>
#include <leangrad/core/creation.h>
#include "testing/gradcheck.h"
#include "testing/tensor_testing.h"

namespace leangrad {
namespace {

// f(x) = x * tanh(exp(x)); f'(x) = tanh(e^x) - x e^x (tanh^2(e^x) - 1).
struct TanhExpFunction : autograd::Function<TanhExpFunction> {
  static Tensor forward(autograd::Context* ctx, const Tensor& x) {
    ctx->save_for_backward({x});
    return x * tanh(exp(x));
  }
  static std::vector<Tensor> backward(autograd::Context* ctx, std::vector<Tensor> grads) {
    const Tensor x = ctx->saved()[0];
    const Tensor ex = exp(x);
    const Tensor t = tanh(ex);
    return {grads[0] * (t - x * ex * (t * t - 1.0))};
  }
};

// Two tensor inputs, a scalar in between, two outputs.
struct ScaledSumAndProduct : autograd::Function<ScaledSumAndProduct> {
  static std::vector<Tensor> forward(autograd::Context* ctx, const Tensor& a, double scale,
                                     const Tensor& b) {
    ctx->save_for_backward({a, b});
    ctx->saved_data["scale"] = scale;
    return {(a + b) * scale, a * b};
  }
  static std::vector<Tensor> backward(autograd::Context* ctx, std::vector<Tensor> grads) {
    const auto saved = ctx->saved();
    const double scale = std::any_cast<double>(ctx->saved_data["scale"]);
    // One gradient per argument of forward, undefined for the double.
    return {grads[0] * scale + grads[1] * saved[1], Tensor(),
            grads[0] * scale + grads[1] * saved[0]};
  }
};

TEST(CustomFunction, TanhExpMatchesTheComposedOps) {
  Tensor x = test::make_tensor({-3, -0.5, 0.1, 1, 2.5}, {5}, kFloat64).requires_grad_();
  Tensor y = TanhExpFunction::apply(x);
  EXPECT_NE(y.grad_fn()->name().find("TanhExpFunctionBackward"), std::string::npos)
      << y.grad_fn()->name();
  y.sum().backward();
  const Tensor custom = x.grad();

  Tensor x2 = test::make_tensor({-3, -0.5, 0.1, 1, 2.5}, {5}, kFloat64).requires_grad_();
  (x2 * tanh(exp(x2))).sum().backward();
  EXPECT_TRUE(test::all_close(custom, test::to_vector(x2.grad()), 1e-12, 1e-12));
}

TEST(CustomFunction, TanhExpGradientMatchesFiniteDifferences) {
  const std::vector<double> points = {-3, -0.5, 0.1, 1, 2.5};
  Tensor x = test::make_tensor(points, {5}, kFloat64).requires_grad_();
  TanhExpFunction::apply(x).sum().backward();
  std::vector<double> numeric;
  const double eps = 1e-6;
  for (double p : points) {
    auto f = [](double v) { return v * std::tanh(std::exp(v)); };
    numeric.push_back((f(p + eps) - f(p - eps)) / (2 * eps));
  }
  EXPECT_TRUE(test::all_close(x.grad(), numeric, 1e-6, 1e-8));
}

TEST(CustomFunction, MultipleInputsOutputsAndNonTensorArguments) {
  Tensor a = test::make_tensor({1, 2}, {2}, kFloat64).requires_grad_();
  Tensor b = test::make_tensor({3, 4}, {2}, kFloat64).requires_grad_();
  auto outs = ScaledSumAndProduct::apply(a, 0.5, b);
  ASSERT_EQ(outs.size(), 2u);
  (outs[0].sum() + outs[1].sum()).backward();
  // d/da = 0.5 + b, d/db = 0.5 + a
  EXPECT_TRUE(test::all_close(a.grad(), {3.5, 4.5}));
  EXPECT_TRUE(test::all_close(b.grad(), {1.5, 2.5}));
}

TEST(CustomFunction, OnlyOneOutputUsedGetsZerosForTheOther) {
  Tensor a = test::make_tensor({1, 2}, {2}, kFloat64).requires_grad_();
  Tensor b = test::make_tensor({3, 4}, {2}, kFloat64);
  auto outs = ScaledSumAndProduct::apply(a, 2.0, b);
  outs[1].sum().backward();  // outs[0] receives no gradient: materialized as zeros
  EXPECT_TRUE(test::all_close(a.grad(), {3, 4}));
  EXPECT_FALSE(b.grad().defined());
}

// With set_materialize_grads(false) the output no gradient reached arrives undefined (LibTorch's
// ctx->set_materialize_grads(false)); backward records what it saw.
struct SumAndProductUnmaterialized : autograd::Function<SumAndProductUnmaterialized> {
  static std::vector<Tensor> forward(autograd::Context* ctx, const Tensor& a, const Tensor& b) {
    ctx->set_materialize_grads(false);
    ctx->save_for_backward({a, b});
    return {a + b, a * b};
  }
  static std::vector<Tensor> backward(autograd::Context* ctx, std::vector<Tensor> grads) {
    defined_grads = {grads[0].defined(), grads[1].defined()};
    const auto saved = ctx->saved();
    Tensor ga = grads[1].defined() ? grads[1] * saved[1] : Tensor();
    if (grads[0].defined()) ga = ga.defined() ? ga + grads[0] : grads[0];
    return {ga, Tensor()};
  }
  static inline std::vector<bool> defined_grads;
};

TEST(CustomFunction, UnmaterializedGradientsArriveUndefined) {
  Tensor a = test::make_tensor({1, 2}, {2}, kFloat64).requires_grad_();
  Tensor b = test::make_tensor({3, 4}, {2}, kFloat64);
  SumAndProductUnmaterialized::apply(a, b)[1].sum().backward();
  EXPECT_EQ(SumAndProductUnmaterialized::defined_grads, (std::vector<bool>{false, true}));
  EXPECT_TRUE(test::all_close(a.grad(), {3, 4}));
  // The default still gives zeros.
  Tensor c = test::make_tensor({1, 2}, {2}, kFloat64).requires_grad_();
  ScaledSumAndProduct::apply(c, 2.0, b)[1].sum().backward();
  EXPECT_TRUE(test::all_close(c.grad(), {3, 4}));
}

TEST(CustomFunction, NoGraphWhenNothingRequiresGrad) {
  Tensor y = TanhExpFunction::apply(test::make_tensor({1, 2}, {2}, kFloat64));
  EXPECT_FALSE(y.requires_grad());
  EXPECT_EQ(y.grad_fn(), nullptr);
}

TEST(CustomFunction, SavedTensorModifiedInPlaceIsReported) {
  Tensor x = test::make_tensor({1, 2}, {2}, kFloat64).requires_grad_();
  Tensor h = x * 1.0;
  Tensor y = TanhExpFunction::apply(h);
  {
    NoGradGuard no_grad;
    h.add_(1.0);
  }
  try {
    y.sum().backward();
    FAIL() << "expected an Error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("TanhExpFunction"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("in-place"), std::string::npos) << e.what();
  }
}

// LibTorch's tutorial function, in its spelling (AutogradContext, tensor_list, by-value tensors,
// a defaulted bias): backward returns three gradients also when apply was given two tensors.
struct LinearFunction : autograd::Function<LinearFunction> {
  static Tensor forward(autograd::AutogradContext* ctx, Tensor input, Tensor weight,
                        Tensor bias = Tensor()) {
    ctx->save_for_backward({input, weight, bias});
    Tensor output = input.mm(weight.t());
    if (bias.defined()) output += bias;
    return output;
  }
  static autograd::tensor_list backward(autograd::AutogradContext* ctx,
                                        autograd::tensor_list grad_outputs) {
    const auto saved = ctx->get_saved_variables();
    const Tensor& grad_output = grad_outputs[0];
    Tensor grad_bias;
    if (saved[2].defined()) grad_bias = grad_output.sum(0);
    return {grad_output.mm(saved[1]), grad_output.t().mm(saved[0]), grad_bias};
  }
};

TEST(CustomFunction, ExtraUndefinedGradientsAreDroppedAsInLibTorch) {
  const Tensor x = test::make_tensor({1, 2, 3, 4, 5, 6}, {2, 3}).requires_grad_();
  const Tensor w = test::make_tensor({0.5, -1, 2, 1, 0, -0.5}, {2, 3}).requires_grad_();
  LinearFunction::apply(x, w).sum().backward();  // no bias: the third gradient is dropped
  const Tensor x_ref = x.detach().requires_grad_();
  const Tensor w_ref = w.detach().requires_grad_();
  linear(x_ref, w_ref).sum().backward();
  EXPECT_TRUE(test::all_close(x.grad(), test::to_vector(x_ref.grad()), 0, 0));
  EXPECT_TRUE(test::all_close(w.grad(), test::to_vector(w_ref.grad()), 0, 0));
  // With the bias given, its gradient is the third.
  const Tensor b = test::make_tensor({1, 1}, {2}).requires_grad_();
  LinearFunction::apply(x, w, b).sum().backward();
  EXPECT_TRUE(test::all_close(b.grad(), {2.0, 2.0}, 0, 0));
}

// As in LibTorch, what forward passes to save_for_backward is saved (through the saved-tensor
// hooks) only when the call records a graph: under NoGradGuard, or when no input requires grad,
// the hooks see nothing.
TEST(CustomFunction, NothingIsSavedWithoutAGraph) {
  int packed = 0;
  autograd::SavedTensorHooksGuard guard(
      [&](const Tensor& t) -> std::any {
        ++packed;
        return t;
      },
      [](const std::any& stored) { return std::any_cast<Tensor>(stored); });
  const Tensor x = test::make_tensor({1, 2}, {2}, kFloat64).requires_grad_();
  {
    NoGradGuard no_grad;
    TanhExpFunction::apply(x);
  }
  TanhExpFunction::apply(x.detach());
  EXPECT_EQ(packed, 0);
  TanhExpFunction::apply(x).sum().backward();
  EXPECT_EQ(packed, 1);
}

// Fails unless f throws a leangrad::Error whose message holds every one of `parts`.
template <typename F>
void expect_error_containing(const F& f, const std::vector<std::string>& parts) {
  try {
    f();
    ADD_FAILURE() << "expected a leangrad::Error";
  } catch (const Error& e) {
    for (const std::string& part : parts)
      EXPECT_NE(e.message().find(part), std::string::npos) << part << " in: " << e.message();
  }
}

// In place, as a LibTorch user writes one: x <- x * x * 3 (the input's old values kept for
// backward), the input marked dirty and returned.
struct CubeTimesThreeInPlace : autograd::Function<CubeTimesThreeInPlace> {
  static Tensor forward(autograd::Context* ctx, Tensor x) {
    ctx->saved_data["before"] = x.clone();
    x.mul_(x * 3.0);
    ctx->mark_dirty({x});
    return x;
  }
  static std::vector<Tensor> backward(autograd::Context* ctx, std::vector<Tensor> grads) {
    const Tensor before = std::any_cast<Tensor>(ctx->saved_data["before"]);
    return {grads[0] * before * 6.0};
  }
};

// Modifies its input in place and marks it dirty, but returns a new tensor instead.
struct DirtyButNotReturned : autograd::Function<DirtyButNotReturned> {
  static Tensor forward(autograd::Context* ctx, Tensor x) {
    x.add_(1.0);
    ctx->mark_dirty({x});
    return x * 2.0;
  }
  static std::vector<Tensor> backward(autograd::Context*, std::vector<Tensor> grads) {
    return {grads[0] * 2.0};
  }
};

// The row maxima and where they are, the positions (as float) marked non-differentiable.
struct MaxAndWhere : autograd::Function<MaxAndWhere> {
  static std::vector<Tensor> forward(autograd::Context* ctx, const Tensor& x) {
    auto [values, indices] = x.max(1);
    Tensor where = indices.to(x.dtype());
    ctx->save_for_backward({indices});
    ctx->saved_data["shape"] = x.shape();
    ctx->mark_non_differentiable({where});
    return {values, where};
  }
  static std::vector<Tensor> backward(autograd::Context* ctx, std::vector<Tensor> grads) {
    // grads[1], for the non-differentiable output, is zeros; the gradient goes to the maxima.
    EXPECT_EQ(grads[1].abs().sum().item<double>(), 0.0);
    const Tensor indices = ctx->saved()[0];
    const Shape shape = std::any_cast<Shape>(ctx->saved_data["shape"]);
    const Tensor columns = arange(shape[1], TensorOptions(kInt64)).unsqueeze(0);
    return {where(columns.eq(indices.unsqueeze(1)), grads[0].unsqueeze(1),
                  zeros(shape, TensorOptions(grads[0].dtype())))};
  }
};

// mark_dirty: the caller's tensor keeps its identity and takes the function as its history, so
// the gradient chains through it to what computed the input: d/dx sum(3 (2x)^2) = 24x, checked
// against central differences.
TEST(CustomFunction, DirtyInputIsRebasedOntoTheFunction) {
  const Tensor x = test::make_tensor({-1.5, 0.25, 2.0}, {3}, kFloat64).requires_grad_();
  Tensor y = x * 2.0;
  const Tensor result = CubeTimesThreeInPlace::apply(y);
  EXPECT_TRUE(result.is_same(y));
  ASSERT_NE(y.grad_fn(), nullptr);
  EXPECT_NE(y.grad_fn()->name().find("CubeTimesThreeInPlaceBackward"), std::string::npos)
      << y.grad_fn()->name();
  EXPECT_TRUE(test::all_close(y, {3 * 9.0, 3 * 0.25, 3 * 16.0}, 1e-15, 0));
  EXPECT_TRUE(test::gradcheck(
      [](const std::vector<Tensor>& in) {
        Tensor t = in[0] * 2.0;
        return CubeTimesThreeInPlace::apply(t);
      },
      {x}));
  y.sum().backward();
  EXPECT_TRUE(test::all_close(x.grad(), {24 * -1.5, 24 * 0.25, 24 * 2.0}, 1e-14, 0));
}

// dst <- dst + src, dst (the second input) marked dirty and returned.
struct AddInto : autograd::Function<AddInto> {
  static Tensor forward(autograd::Context* ctx, const Tensor& src, Tensor dst) {
    dst.add_(src);
    ctx->mark_dirty({dst});
    return dst;
  }
  static std::vector<Tensor> backward(autograd::Context*, std::vector<Tensor> grads) {
    return {grads[0], grads[0]};
  }
};

// x <- exp(x), the result saved (an output of the function) for a backward made of differentiable
// ops, so that it differentiates twice.
struct ExpInPlace : autograd::Function<ExpInPlace> {
  static Tensor forward(autograd::Context* ctx, Tensor x) {
    x.exp_();
    ctx->mark_dirty({x});
    ctx->save_for_backward({x});
    return x;
  }
  static std::vector<Tensor> backward(autograd::Context* ctx, std::vector<Tensor> grads) {
    return {grads[0] * ctx->saved()[0]};
  }
};

// Doubles x in place and marks it dirty, and returns a second tensor as well.
struct DoubleInPlaceAndCopy : autograd::Function<DoubleInPlaceAndCopy> {
  static std::vector<Tensor> forward(autograd::Context* ctx, Tensor x) {
    x.mul_(2.0);
    ctx->mark_dirty({x});
    return {x, x.clone()};
  }
  static std::vector<Tensor> backward(autograd::Context*, std::vector<Tensor> grads) {
    return {grads[0] * 2.0 + grads[1]};
  }
};

// A dirty view: the function goes into a CopySlices node that becomes the base's history, as a
// built-in in-place op through a view (Note [In-place writes through views]). The base, and a
// view of it made before the write that overlaps the written columns, are checked against
// central differences, and second derivatives through such a write too; the values are the
// plain in-place program's, bitwise.
TEST(CustomFunction, DirtyViewIsRecordedThroughItsBase) {
  leangrad::manual_seed(3);
  const Tensor x = randn({3, 4}, TensorOptions(kFloat64)).requires_grad_();
  const auto whole = [](const std::vector<Tensor>& in) {
    Tensor y = in[0] * 2.0;
    Tensor columns = y.slice(1, 1, 3);
    const Tensor result = CubeTimesThreeInPlace::apply(columns);
    EXPECT_TRUE(result.is_same(columns));
    return y;
  };
  const auto made_before = [](const std::vector<Tensor>& in) {
    Tensor y = in[0] * 2.0;
    const Tensor left = y.slice(1, 0, 2);  // column 1 is written below
    CubeTimesThreeInPlace::apply(y.slice(1, 1, 3));
    return left * 1.0;
  };
  EXPECT_TRUE(test::gradcheck(whole, {x}));
  EXPECT_TRUE(test::gradcheck(made_before, {x}));
  // Twice: CopySlices' backward is made of differentiable ops, and the saved output unpacks with
  // the function as its history.
  EXPECT_TRUE(test::gradgradcheck(
      [](const std::vector<Tensor>& in) {
        Tensor y = in[0] * in[0];
        ExpInPlace::apply(y.slice(1, 1, 3));
        return y * in[0];
      },
      {x}));

  Tensor y = x * 2.0;
  CubeTimesThreeInPlace::apply(y.slice(1, 1, 3));
  ASSERT_NE(y.grad_fn(), nullptr);
  EXPECT_EQ(y.grad_fn()->name(), "CopySlices");
  Tensor plain = x.detach() * 2.0;
  Tensor plain_columns = plain.slice(1, 1, 3);
  plain_columns.mul_(plain_columns * 3.0);
  EXPECT_TRUE(y.equal(plain));
}

// The dirty view is the function's second input, a buffer that did not require grad: it comes to
// require it, and the gradients of both sources follow (central differences).
TEST(CustomFunction, DirtyViewThatIsNotTheFirstInput) {
  leangrad::manual_seed(4);
  const Tensor a = randn({2, 3}, TensorOptions(kFloat64)).requires_grad_();
  const Tensor b = randn({2, 5}, TensorOptions(kFloat64)).requires_grad_();
  const auto program = [](const std::vector<Tensor>& in) {
    Tensor buffer = in[1] * 1.0;
    AddInto::apply(in[0].exp(), buffer.slice(1, 1, 4));
    return buffer * buffer;
  };
  EXPECT_TRUE(test::gradcheck(program, {a, b}));
  Tensor buffer = zeros({2, 5}, TensorOptions(kFloat64));
  AddInto::apply(a, buffer.slice(1, 2, 5));
  EXPECT_TRUE(buffer.requires_grad());
  (buffer * buffer).sum().backward();
  EXPECT_TRUE(a.grad().equal(a.detach() * 2.0));
}

// A tensor whose memory live views share, marked dirty: the views' histories are made anew from
// its new one when next read, as after a built-in in-place op on it.
TEST(CustomFunction, DirtyBaseWithLiveViews) {
  leangrad::manual_seed(5);
  const Tensor x = randn({4, 3}, TensorOptions(kFloat64)).requires_grad_();
  EXPECT_TRUE(test::gradcheck(
      [](const std::vector<Tensor>& in) {
        Tensor y = in[0] * 2.0;
        const Tensor rows = y.slice(0, 1, 3);
        CubeTimesThreeInPlace::apply(y);
        return rows * 1.0;
      },
      {x}));
}

TEST(CustomFunction, MarkDirtyRefusesLeavesViewsItCannotFollowAndTensorsNotReturned) {
  const Tensor leaf = test::make_tensor({1, 2}, {2}, kFloat64).requires_grad_();
  expect_error_containing([&] { CubeTimesThreeInPlace::apply(leaf); },
                          {"CubeTimesThreeInPlaceBackward", "mark_dirty on a leaf tensor"});
  expect_error_containing([&] { CubeTimesThreeInPlace::apply(leaf.slice(0, 0, 1)); },
                          {"CubeTimesThreeInPlaceBackward", "on a view", "of a leaf tensor"});
  const Tensor base = test::make_tensor({1, 2, 3, 4}, {4}, kFloat64).requires_grad_() * 1.0;
  expect_error_containing([&] { DoubleInPlaceAndCopy::apply(base.slice(0, 0, 2)); },
                          {"DoubleInPlaceAndCopyBackward", "mark_dirty on a view",
                           "returns 2 tensors", "that view alone"});
  Tensor y = leaf * 1.0;
  expect_error_containing([&] { DirtyButNotReturned::apply(y); },
                          {"DirtyButNotReturnedBackward", "must also be returned"});
  // Without a graph the function is a plain in-place call.
  Tensor plain = test::make_tensor({1, 2}, {2}, kFloat64);
  CubeTimesThreeInPlace::apply(plain);
  EXPECT_TRUE(test::all_close(plain, {3.0, 12.0}, 0, 0));
  EXPECT_FALSE(plain.requires_grad());
}

// mark_non_differentiable: that output has no history; the other's gradient is checked against
// central differences (the maxima are distinct, so max is differentiable at these points).
TEST(CustomFunction, NonDifferentiableOutputHasNoHistory) {
  const Tensor x =
      test::make_tensor({0.5, -1.0, 2.0, 3.0, 0.25, -2.0}, {2, 3}, kFloat64).requires_grad_();
  const std::vector<Tensor> out = MaxAndWhere::apply(x);
  EXPECT_TRUE(out[0].requires_grad());
  EXPECT_FALSE(out[1].requires_grad());
  EXPECT_TRUE(test::all_close(out[1], {2.0, 0.0}, 0, 0));
  EXPECT_TRUE(test::gradcheck(
      [](const std::vector<Tensor>& in) { return MaxAndWhere::apply(in[0])[0] * 1.0; }, {x}));
}

}  // namespace
}  // namespace leangrad
