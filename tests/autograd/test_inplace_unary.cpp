// The unary in-place methods (x.exp_(), x.sin_(), x.floor_(), ...; Note [In-place ops in the
// graph] in autograd/tensor_methods.cpp): each against its out-of-place function, with values and
// gradients bit for bit (the same kernel, the same formula), gradchecks of first and second
// order in float64, what each node saves (self after the write, or a copy of self before it where
// the gradient needs the input, as PyTorch), and the memory that costs.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include <leangrad/autograd/engine.h>
#include <leangrad/autograd/functions.h>
#include <leangrad/autograd/grad_mode.h>
#include <leangrad/autograd/graph.h>
#include <leangrad/core/creation.h>
#include <leangrad/core/memory.h>
#include <leangrad/kernels/creation.h>
#include "testing/gradcheck.h"
#include "testing/tensor_testing.h"

namespace leangrad {
namespace {

using autograd::grad;

// Where a method's inputs are drawn (method_input).
enum class Domain {
  Real,      // |x| in (0.3, 2.8), either sign
  Positive,  // defined for x > 0 only: x in (0.3, 2.8)
  Unit,      // asin, acos, atanh: |x| in (0.1, 0.94)
  AboveOne,  // acosh: x in (1.3, 3.8)
};

// One method beside its out-of-place function.
struct UnaryMethod {
  std::string name;
  std::function<void(Tensor&)> in_place;
  std::function<Tensor(const Tensor&)> out_of_place;
  std::string node;
  bool saves_input = false;  // a copy of self before the write (the gradient needs x)
  Domain domain = Domain::Real;
  bool smooth = true;  // second order checked (not the piecewise-constant ones' jumps)
};

std::vector<UnaryMethod> unary_methods() {
  return {
      {"neg_", [](Tensor& x) { x.neg_(); }, [](const Tensor& x) { return neg(x); }, "NegBackward"},
      {"abs_", [](Tensor& x) { x.abs_(); }, [](const Tensor& x) { return abs(x); }, "AbsBackward",
       true},
      {"exp_", [](Tensor& x) { x.exp_(); }, [](const Tensor& x) { return exp(x); }, "ExpBackward"},
      {"log_", [](Tensor& x) { x.log_(); }, [](const Tensor& x) { return log(x); }, "LogBackward",
       true, Domain::Positive},
      {"sqrt_", [](Tensor& x) { x.sqrt_(); }, [](const Tensor& x) { return sqrt(x); },
       "SqrtBackward", false, Domain::Positive},
      {"erf_", [](Tensor& x) { x.erf_(); }, [](const Tensor& x) { return erf(x); }, "ErfBackward",
       true},
      {"expm1_", [](Tensor& x) { x.expm1_(); }, [](const Tensor& x) { return expm1(x); },
       "Expm1Backward"},
      {"log1p_", [](Tensor& x) { x.log1p_(); }, [](const Tensor& x) { return log1p(x); },
       "Log1pBackward", true, Domain::Positive},
      {"log2_", [](Tensor& x) { x.log2_(); }, [](const Tensor& x) { return log2(x); },
       "Log2Backward", true, Domain::Positive},
      {"log10_", [](Tensor& x) { x.log10_(); }, [](const Tensor& x) { return log10(x); },
       "Log10Backward", true, Domain::Positive},
      {"sin_", [](Tensor& x) { x.sin_(); }, [](const Tensor& x) { return sin(x); }, "SinBackward",
       true},
      {"cos_", [](Tensor& x) { x.cos_(); }, [](const Tensor& x) { return cos(x); }, "CosBackward",
       true},
      {"rsqrt_", [](Tensor& x) { x.rsqrt_(); }, [](const Tensor& x) { return rsqrt(x); },
       "RsqrtBackward", false, Domain::Positive},
      {"reciprocal_", [](Tensor& x) { x.reciprocal_(); },
       [](const Tensor& x) { return reciprocal(x); }, "ReciprocalBackward"},
      {"sign_", [](Tensor& x) { x.sign_(); }, [](const Tensor& x) { return sign(x); },
       "SignBackward", false, Domain::Real, false},
      {"floor_", [](Tensor& x) { x.floor_(); }, [](const Tensor& x) { return floor(x); },
       "FloorBackward", false, Domain::Real, false},
      {"ceil_", [](Tensor& x) { x.ceil_(); }, [](const Tensor& x) { return ceil(x); },
       "CeilBackward", false, Domain::Real, false},
      {"round_", [](Tensor& x) { x.round_(); }, [](const Tensor& x) { return round(x); },
       "RoundBackward", false, Domain::Real, false},
      {"trunc_", [](Tensor& x) { x.trunc_(); }, [](const Tensor& x) { return trunc(x); },
       "TruncBackward", false, Domain::Real, false},
      {"tan_", [](Tensor& x) { x.tan_(); }, [](const Tensor& x) { return tan(x); }, "TanBackward",
       false, Domain::Unit},  // |x| < 0.94, well inside (-pi/2, pi/2)
      {"asin_", [](Tensor& x) { x.asin_(); }, [](const Tensor& x) { return asin(x); },
       "AsinBackward", true, Domain::Unit},
      {"acos_", [](Tensor& x) { x.acos_(); }, [](const Tensor& x) { return acos(x); },
       "AcosBackward", true, Domain::Unit},
      {"atan_", [](Tensor& x) { x.atan_(); }, [](const Tensor& x) { return atan(x); },
       "AtanBackward", true},
      {"sinh_", [](Tensor& x) { x.sinh_(); }, [](const Tensor& x) { return sinh(x); },
       "SinhBackward", true},
      {"cosh_", [](Tensor& x) { x.cosh_(); }, [](const Tensor& x) { return cosh(x); },
       "CoshBackward", true},
      {"asinh_", [](Tensor& x) { x.asinh_(); }, [](const Tensor& x) { return asinh(x); },
       "AsinhBackward", true},
      {"acosh_", [](Tensor& x) { x.acosh_(); }, [](const Tensor& x) { return acosh(x); },
       "AcoshBackward", true, Domain::AboveOne},
      {"atanh_", [](Tensor& x) { x.atanh_(); }, [](const Tensor& x) { return atanh(x); },
       "AtanhBackward", true, Domain::Unit},
      {"exp2_", [](Tensor& x) { x.exp2_(); }, [](const Tensor& x) { return exp2(x); },
       "Exp2Backward"},
      // clamp_ beside clamp(): the bounds +-1 are among the values method_input keeps 0.05 away
      // from, so no finite difference straddles a kink. Its gradient is a mask of the input.
      {"clamp_", [](Tensor& x) { x.clamp_(-1.0, 1.0); },
       [](const Tensor& x) { return clamp(x, -1.0, 1.0); }, "ClampBackward", true},
      {"clamp_min_", [](Tensor& x) { x.clamp_min_(0.5); },
       [](const Tensor& x) { return clamp_min(x, 0.5); }, "ClampBackward", true},
      {"clamp_max_", [](Tensor& x) { x.clamp_max_(-1.5); },
       [](const Tensor& x) { return clamp_max(x, -1.5); }, "ClampBackward", true},
      // round(x, 1) jumps at x = k / 10 + 0.05 and round(x, -1) at 5, 15, ..., which the nudge
      // below does not avoid; the seeded inputs are not within gradcheck's step (1e-6) of one
      // (a chance of about 2e-5 per element).
      {"round_(1)", [](Tensor& x) { x.round_(1); }, [](const Tensor& x) { return round(x, 1); },
       "RoundBackward", false, Domain::Real, false},
      {"round_(-1)", [](Tensor& x) { x.round_(-1); }, [](const Tensor& x) { return round(x, -1); },
       "RoundBackward", false, Domain::Real, false},
  };
}

// |x| in (0.3, 2.7) with random signs, nudged 0.1 away from where the piecewise-constant ops and
// clamp_ jump (the integers and the halves) so that the finite differences do not straddle a
// jump; then moved into the method's domain (Domain).
Tensor method_input(const UnaryMethod& m, const Shape& shape, std::uint64_t seed) {
  Tensor x = test::away_from_zero_input(shape, 0.1, 0.9, seed) * 3.0;
  NoGradGuard no_grad;
  const Tensor twice = x * 2.0;
  const Tensor near_jump = lt(abs(twice - round(twice)), 0.1);  // within 0.05 of k / 2
  x = where(near_jump, x + 0.1, x);
  switch (m.domain) {
    case Domain::Real:
      break;
    case Domain::Positive:
      x = abs(x);
      break;
    case Domain::Unit:
      x = x / 3.0;
      break;
    case Domain::AboveOne:
      x = abs(x) + 1.0;
      break;
  }
  return x.detach().requires_grad_();
}

TEST(InPlaceUnary, ValuesAndGradientsMatchTheOutOfPlaceOpBitForBit) {
  for (const DType dtype : {kFloat32, kFloat64}) {
    for (const UnaryMethod& m : unary_methods()) {
      SCOPED_TRACE(m.name + " " + dtype_name(dtype));
      const Tensor x = method_input(m, {4, 5}, 91).detach().to(dtype).requires_grad_();
      const Tensor v = test::uniform_input(x.shape(), -2.0, 2.0, 92).detach().to(dtype);
      Tensor h = x * 1.0;  // a non-leaf with x's values
      const void* memory = h.data_ptr();
      const std::uint32_t version = h.version();
      m.in_place(h);
      EXPECT_EQ(h.data_ptr(), memory);  // written in place
      EXPECT_GT(h.version(), version);
      ASSERT_NE(h.grad_fn(), nullptr);
      EXPECT_EQ(h.grad_fn()->name(), m.node);
      const Tensor twin = m.out_of_place(x * 1.0);
      EXPECT_TRUE(h.equal(twin)) << "values differ from the out-of-place op";
      const Tensor g = grad({(h * v).sum()}, {x})[0];
      const Tensor g_twin = grad({(twin * v).sum()}, {x})[0];
      EXPECT_TRUE(g.equal(g_twin)) << "gradients differ from the out-of-place op";
    }
  }
}

// Grad mode off (and on a tensor nothing requires grad of): the kernel alone, on a transposed
// view of a leaf that requires grad (allowed under NoGradGuard, as an optimizer step writes).
TEST(InPlaceUnary, UnrecordedOnAViewUnderNoGrad) {
  for (const UnaryMethod& m : unary_methods()) {
    SCOPED_TRACE(m.name);
    const Tensor leaf = method_input(m, {3, 4}, 93);
    const Tensor want = m.out_of_place(leaf.detach()).t();
    {
      NoGradGuard no_grad;
      Tensor view = leaf.t();
      m.in_place(view);
      EXPECT_TRUE(view.equal(want));
    }
    EXPECT_EQ(leaf.grad_fn(), nullptr);
  }
}

TEST(InPlaceUnary, GradcheckFirstAndSecondOrder) {
  for (const UnaryMethod& m : unary_methods()) {
    SCOPED_TRACE(m.name);
    const Tensor leaf = method_input(m, {3, 4}, 94);
    const auto f = [&m](const std::vector<Tensor>& in) {
      Tensor h = in[0] * 1.0;
      m.in_place(h);
      return h * in[0];  // x enters after the op too: the piecewise-constant ops check a slope
    };
    EXPECT_TRUE(test::gradcheck(f, {leaf}));
    if (!m.smooth) continue;
    const auto first_derivative = [&m](const std::vector<Tensor>& in) {
      AutoGradMode enable(true);  // gradcheck's finite differences run under NoGradGuard
      Tensor h = in[0] * 1.0;
      m.in_place(h);
      return grad({(h * h).sum()}, {in[0]}, {}, std::nullopt, /*create_graph=*/true)[0];
    };
    EXPECT_TRUE(test::gradcheck(first_derivative, {leaf}));
  }
}

// What each node saves. From the output (exp_): a later write to self is caught at backward, as
// relu_'s. From the input (sin_): a copy of self before the write, which a later write to self
// does not touch, so the gradient is still cos(x) (PyTorch's original_self).
TEST(InPlaceUnary, TheNodeSavesTheOutputOrACopyOfTheInput) {
  for (const UnaryMethod& m : unary_methods()) {
    SCOPED_TRACE(m.name);
    const Tensor x = method_input(m, {4}, 95);
    Tensor h = x * 1.0;
    m.in_place(h);
    h.mul_(3.0);  // saves nothing, but writes what an output-saving node saved
    const Tensor twin = m.out_of_place(x * 1.0) * 3.0;
    const std::string message = test::error_message([&] {
      const Tensor g = grad({h.sum()}, {x})[0];
      EXPECT_TRUE(g.equal(grad({twin.sum()}, {x})[0]));
    });
    const bool saves_output = !m.saves_input && m.node != "NegBackward" && m.smooth;
    if (saves_output) {
      EXPECT_NE(message.find(m.node), std::string::npos) << message;
      EXPECT_NE(message.find("modified by an in-place operation"), std::string::npos) << message;
    } else {
      EXPECT_EQ(message, "(no error)");
    }
  }
}

// The graph's memory, counted from the sizes: a node that saves the output holds nothing beyond
// self; one that saves the input holds exactly one copy of self (the clone); neither op
// allocates anything else while it runs.
TEST(InPlaceUnary, TheInputCopyIsTheOnlyAllocation) {
  constexpr std::int64_t kRows = 256, kCols = 512;  // 512 KiB of float32
  const std::int64_t tensor_bytes = memory::allocated_size(kRows * kCols * 4);
  for (const UnaryMethod& m : unary_methods()) {
    SCOPED_TRACE(m.name);
    const Tensor x = method_input(m, {kRows, kCols}, 96).detach().to(kFloat32).requires_grad_();
    Tensor h = x * 1.0;
    const std::int64_t before = memory::stats(kCPU).allocated;
    memory::reset_peak(kCPU);
    m.in_place(h);
    const MemoryStats after = memory::stats(kCPU);
    const std::int64_t copy_bytes = m.saves_input ? tensor_bytes : 0;
    EXPECT_EQ(after.allocated - before, copy_bytes);
    EXPECT_EQ(after.peak_allocated - before, copy_bytes);
  }
}

// clamp's definition as elementwise ops, written here: where(x < min, min, x), then
// where(that > max, max, that), each bound a 0-d tensor of x's dtype (rounded to it).
Tensor composed_clamp(const Tensor& x, std::optional<double> min, std::optional<double> max) {
  Tensor out = x;
  if (min) out = where(lt(out, *min), full({}, *min, TensorOptions(x.dtype())), out);
  if (max) out = where(gt(out, *max), full({}, *max, TensorOptions(x.dtype())), out);
  return out;
}

// clamp_ and clamp() are one pass each (ops::activation_ and ops::activation): both bit for bit
// the composition, in every floating dtype, at the points where a clamp can go wrong: signed zeros
// against a bound of 0 (clamp keeps -0.0, as torch.clamp), the bounds themselves, NaN (stays NaN),
// the infinities, min > max (every value becomes max), a NaN bound (compares false: no bound), a
// bound that rounds in float16 and bfloat16; on a transposed view too.
TEST(InPlaceUnary, ClampMatchesClampBitForBitInEveryFloatingDtype) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  const std::vector<double> values = {-0.0, 0.0, -2.5, -1.0, -0.5, 0.1,  0.5, 1.0,
                                      2.5,  3.0, 200., nan,  inf,  -inf, 0.3, -0.1};
  struct Bounds {
    std::optional<double> min, max;
  };
  const std::vector<Bounds> bounds = {{-1.0, 1.0}, {0.0, std::nullopt}, {std::nullopt, -0.0},
                                      {2.0, 1.0},  {-0.5, 0.5},         {0.1, 0.3},
                                      {nan, 1.0},  {-inf, inf},         {std::nullopt, 0.1}};
  for (const DType dtype : {kFloat32, kFloat64, kFloat16, kBFloat16}) {
    const Tensor x = test::make_tensor(values, {4, 4}, dtype);
    for (const Bounds& b : bounds) {
      SCOPED_TRACE(std::string(dtype_name(dtype)) + " min " +
                   (b.min ? std::to_string(*b.min) : "none") + " max " +
                   (b.max ? std::to_string(*b.max) : "none"));
      const Tensor want = composed_clamp(x, b.min, b.max);
      EXPECT_TRUE(test::matches_within_roundoff(clamp(x, b.min, b.max), want, {{"x", x}},
                                                {.bitwise = true}));
      Tensor y = x.clone();
      const std::uint32_t version = y.version();
      y.clamp_(b.min, b.max);
      EXPECT_GT(y.version(), version);
      EXPECT_EQ(y.dtype(), dtype);
      EXPECT_TRUE(test::matches_within_roundoff(y, want, {{"x", x}}, {.bitwise = true}));
      Tensor t = x.clone().t();  // written where it lies
      t.clamp_(b.min, b.max);
      EXPECT_TRUE(test::matches_within_roundoff(t, want.t(), {{"x", x.t()}}, {.bitwise = true}));
    }
  }
  // By hand, so the comparison above is not only clamp against itself: float32 -0.0 stays -0.0
  // below a bound of 0, NaN stays NaN, min > max gives max.
  Tensor y = test::make_tensor({-0.0, -3.0, nan, 0.5}, {4}, kFloat32);
  y.clamp_(0.0, std::nullopt);
  EXPECT_TRUE(test::matches_within_roundoff(y, test::make_tensor({-0.0, 0.0, nan, 0.5}, {4}),
                                            {{"x", y}}, {.bitwise = true}));
  Tensor z = test::make_tensor({-5.0, 0.0, 5.0}, {3}, kFloat64);
  z.clamp_(2.0, 1.0);
  test::expect_close(z, {1.0, 1.0, 1.0}, 0.0, 0.0);
}

// Integral self: integral bounds, compared with the values exactly (a bound of -1 is below every
// uint8, and what it would write is -1 converted, 255), as clamp(); bit for bit against clamp()
// and, for the cases PyTorch agrees with (docs/api-notes.md: PyTorch first converts -1 to 255),
// against values by hand.
TEST(InPlaceUnary, ClampOfIntegersMatchesClamp) {
  struct Case {
    DType dtype;
    std::vector<double> values;
    std::optional<double> min, max;
    std::vector<double> want;
  };
  const std::vector<Case> cases = {
      {kInt64, {-3, 0, 5, 100, 9e15}, -1.0, 50.0, {-1, 0, 5, 50, 50}},
      {kInt64, {-3, 0, 5, 100, 9e15}, std::nullopt, -2.0, {-3, -2, -2, -2, -2}},
      {kInt64, {-3, 0, 5, 100, 9e15}, 10.0, 3.0, {3, 3, 3, 3, 3}},
      {kInt32, {-7, 0, 7, 2147483647}, 0.0, std::nullopt, {0, 0, 7, 2147483647}},
      {kUInt8, {0, 1, 200, 255}, -1.0, 100.0, {0, 1, 100, 100}},
      {kUInt8, {0, 1, 200, 255}, 3.0, 254.0, {3, 3, 200, 254}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(dtype_name(c.dtype));
    const Tensor x =
        test::make_tensor(c.values, {static_cast<std::int64_t>(c.values.size())}, c.dtype);
    Tensor y = x.clone();
    y.clamp_(c.min, c.max);
    EXPECT_EQ(y.dtype(), c.dtype);
    test::expect_close(y, c.want, 0.0, 0.0);
    EXPECT_TRUE(y.equal(clamp(x, c.min, c.max)));
  }
}

}  // namespace
}  // namespace leangrad
