// The unary in-place methods (x.exp_(), x.sin_(), x.floor_(), ...; Note [In-place ops in the
// graph] in autograd/tensor_methods.cpp): each against its out-of-place function, with values and
// gradients bit for bit (the same kernel, the same formula), gradchecks of first and second
// order in float64, what each node saves (self after the write, or a copy of self before it where
// the gradient needs the input, as PyTorch), and the memory that costs.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
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

// One method beside its out-of-place function.
struct UnaryMethod {
  std::string name;
  std::function<void(Tensor&)> in_place;
  std::function<Tensor(const Tensor&)> out_of_place;
  std::string node;
  bool saves_input = false;  // a copy of self before the write (the gradient needs x)
  bool positive = false;     // defined for x > 0 only: inputs in (0.3, 2.7)
  bool smooth = true;        // second order checked (not the piecewise-constant ones' jumps)
};

std::vector<UnaryMethod> unary_methods() {
  return {
      {"neg_", [](Tensor& x) { x.neg_(); }, [](const Tensor& x) { return neg(x); }, "NegBackward"},
      {"abs_", [](Tensor& x) { x.abs_(); }, [](const Tensor& x) { return abs(x); }, "AbsBackward",
       true},
      {"exp_", [](Tensor& x) { x.exp_(); }, [](const Tensor& x) { return exp(x); }, "ExpBackward"},
      {"log_", [](Tensor& x) { x.log_(); }, [](const Tensor& x) { return log(x); }, "LogBackward",
       true, true},
      {"sqrt_", [](Tensor& x) { x.sqrt_(); }, [](const Tensor& x) { return sqrt(x); },
       "SqrtBackward", false, true},
      {"erf_", [](Tensor& x) { x.erf_(); }, [](const Tensor& x) { return erf(x); }, "ErfBackward",
       true},
      {"expm1_", [](Tensor& x) { x.expm1_(); }, [](const Tensor& x) { return expm1(x); },
       "Expm1Backward"},
      {"log1p_", [](Tensor& x) { x.log1p_(); }, [](const Tensor& x) { return log1p(x); },
       "Log1pBackward", true, true},
      {"log2_", [](Tensor& x) { x.log2_(); }, [](const Tensor& x) { return log2(x); },
       "Log2Backward", true, true},
      {"log10_", [](Tensor& x) { x.log10_(); }, [](const Tensor& x) { return log10(x); },
       "Log10Backward", true, true},
      {"sin_", [](Tensor& x) { x.sin_(); }, [](const Tensor& x) { return sin(x); }, "SinBackward",
       true},
      {"cos_", [](Tensor& x) { x.cos_(); }, [](const Tensor& x) { return cos(x); }, "CosBackward",
       true},
      {"rsqrt_", [](Tensor& x) { x.rsqrt_(); }, [](const Tensor& x) { return rsqrt(x); },
       "RsqrtBackward", false, true},
      {"reciprocal_", [](Tensor& x) { x.reciprocal_(); },
       [](const Tensor& x) { return reciprocal(x); }, "ReciprocalBackward"},
      {"sign_", [](Tensor& x) { x.sign_(); }, [](const Tensor& x) { return sign(x); },
       "SignBackward", false, false, false},
      {"floor_", [](Tensor& x) { x.floor_(); }, [](const Tensor& x) { return floor(x); },
       "FloorBackward", false, false, false},
      {"ceil_", [](Tensor& x) { x.ceil_(); }, [](const Tensor& x) { return ceil(x); },
       "CeilBackward", false, false, false},
      {"round_", [](Tensor& x) { x.round_(); }, [](const Tensor& x) { return round(x); },
       "RoundBackward", false, false, false},
      {"trunc_", [](Tensor& x) { x.trunc_(); }, [](const Tensor& x) { return trunc(x); },
       "TruncBackward", false, false, false},
  };
}

// |x| in (0.3, 2.7) with random signs (positive for the ops defined on x > 0), nudged 0.1 away
// from where the piecewise-constant ops jump (the integers and the halves) so that the finite
// differences do not straddle a jump.
Tensor method_input(const UnaryMethod& m, const Shape& shape, std::uint64_t seed) {
  Tensor x = test::away_from_zero_input(shape, 0.1, 0.9, seed) * 3.0;
  NoGradGuard no_grad;
  if (m.positive) x = abs(x);
  const Tensor twice = x * 2.0;
  const Tensor near_jump = lt(abs(twice - round(twice)), 0.1);  // within 0.05 of k / 2
  x = where(near_jump, x + 0.1, x);
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

}  // namespace
}  // namespace leangrad
