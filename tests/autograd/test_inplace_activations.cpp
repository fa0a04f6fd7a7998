// The in-place ops autograd records truly in place (Note [In-place ops in the graph] in
// autograd/tensor_methods.cpp): relu_, sigmoid_, tanh_, leaky_relu_, elu_, selu_, hardtanh_ and
// relu6_ write self's memory and save only self; add_, sub_, mul_ and div_ save nothing or the
// other operand. Each against its out-of-place twin (same kernels: the same values, and the same
// gradients bit for bit where the formula is the same), gradchecks of first and second order in
// float64, the version counter catching a later write, the memory the graph holds counted from
// the shapes, the modules' inplace option, and the misuse that stays refused.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <leangrad/autograd/activations.h>
#include <leangrad/autograd/engine.h>
#include <leangrad/autograd/functions.h>
#include <leangrad/autograd/grad_mode.h>
#include <leangrad/autograd/graph.h>
#include <leangrad/autograd/nn_functions.h>
#include <leangrad/core/creation.h>
#include <leangrad/core/memory.h>
#include <leangrad/kernels/creation.h>
#include <leangrad/nn/activation.h>
#include "testing/gradcheck.h"
#include "testing/tensor_testing.h"

namespace leangrad {
namespace {

using autograd::grad;

constexpr double kSeluAlpha = 1.6732632423543772848170429916717;
constexpr double kSeluScale = 1.0507009873554804934193349852946;

// One in-place activation beside its out-of-place twin.
struct InPlaceCase {
  std::string name;
  std::function<void(Tensor&)> in_place;
  std::function<Tensor(const Tensor&)> out_of_place;
  std::string node;  // the name of the node that becomes self's history
  // 0: the gradient is the out-of-place one bit for bit (the same formula). Otherwise the
  // formulas differ (elu's out + alpha against alpha exp(x) through expm1's backward) and
  // agree to a few roundings of a term of size `gradient_scale` (scale alpha): the bound is
  // 16 eps * gradient_scale * |v|.
  double gradient_scale = 0.0;
  bool smooth = false;  // differentiable everywhere: second order checked
};

std::vector<InPlaceCase> in_place_cases() {
  return {
      {"relu_", [](Tensor& x) { x.relu_(); }, [](const Tensor& x) { return relu(x); },
       "ReluBackward"},
      {"sigmoid_", [](Tensor& x) { x.sigmoid_(); }, [](const Tensor& x) { return sigmoid(x); },
       "SigmoidBackward", 0.0, true},
      {"tanh_", [](Tensor& x) { x.tanh_(); }, [](const Tensor& x) { return tanh(x); },
       "TanhBackward", 0.0, true},
      {"leaky_relu_(0.2)", [](Tensor& x) { leaky_relu_(x, 0.2); },
       [](const Tensor& x) { return leaky_relu(x, 0.2); }, "LeakyReluBackward"},
      {"leaky_relu_(0)", [](Tensor& x) { leaky_relu_(x, 0.0); },
       [](const Tensor& x) { return leaky_relu(x, 0.0); }, "LeakyReluBackward"},
      {"elu_(1)", [](Tensor& x) { elu_(x, 1.0); }, [](const Tensor& x) { return elu(x, 1.0); },
       "EluBackward", 1.0},
      {"elu_(0.5)", [](Tensor& x) { elu_(x, 0.5); }, [](const Tensor& x) { return elu(x, 0.5); },
       "EluBackward", 0.5},
      {"elu_(0)", [](Tensor& x) { elu_(x, 0.0); }, [](const Tensor& x) { return elu(x, 0.0); },
       "EluBackward", 0.0},
      {"selu_", [](Tensor& x) { selu_(x); }, [](const Tensor& x) { return selu(x); },
       "SeluBackward", kSeluAlpha * kSeluScale},
      {"hardtanh_", [](Tensor& x) { hardtanh_(x); }, [](const Tensor& x) { return hardtanh(x); },
       "HardtanhBackward"},
      {"hardtanh_(-0.5, 2)", [](Tensor& x) { hardtanh_(x, -0.5, 2.0); },
       [](const Tensor& x) { return hardtanh(x, -0.5, 2.0); }, "HardtanhBackward"},
      {"relu6_", [](Tensor& x) { relu6_(x); }, [](const Tensor& x) { return relu6(x); },
       "Relu6Backward"},
  };
}

// Values over [-8, 8] with every kink and bound of the cases exactly (0, +-1, -0.5, 2, 6).
Tensor kink_input(DType dtype) {
  std::vector<double> values = {0.0, -0.0, 1.0, -1.0, -0.5, 2.0, 6.0, -6.0, 7.5, -8.0, 0.25};
  const Tensor random = test::uniform_input({53}, -8.0, 8.0, 71);
  for (double v : test::to_vector(random))
    values.push_back(v);
  return test::make_tensor(values, {static_cast<std::int64_t>(values.size())}, dtype)
      .requires_grad_();
}

TEST(InPlaceActivations, ValuesAndGradientsMatchTheOutOfPlaceTwin) {
  for (const DType dtype : {kFloat32, kFloat64}) {
    for (const InPlaceCase& c : in_place_cases()) {
      SCOPED_TRACE(c.name + " " + std::string(dtype_name(dtype)));
      const Tensor x = kink_input(dtype);
      const Tensor v = test::uniform_input(x.shape(), -2.0, 2.0, 72).detach().to(dtype);
      Tensor h = x * 1.0;  // a non-leaf: the same values as x
      const void* memory = h.data_ptr();
      const std::uint32_t version = h.version();
      c.in_place(h);
      EXPECT_EQ(h.data_ptr(), memory);  // written in place
      EXPECT_GT(h.version(), version);
      ASSERT_NE(h.grad_fn(), nullptr);
      EXPECT_EQ(h.grad_fn()->name(), c.node);
      const Tensor twin = c.out_of_place(x * 1.0);
      EXPECT_TRUE(h.equal(twin)) << "values differ from the out-of-place op";
      const Tensor g_in_place = grad({(h * v).sum()}, {x})[0];
      const Tensor g_twin = grad({(twin * v).sum()}, {x})[0];
      if (c.gradient_scale == 0.0) {
        EXPECT_TRUE(g_in_place.equal(g_twin)) << "gradients differ from the out-of-place op";
      } else {
        const double eps = dtype == kFloat32 ? std::numeric_limits<float>::epsilon()
                                             : std::numeric_limits<double>::epsilon();
        EXPECT_TRUE(test::all_close(g_in_place, test::to_vector(g_twin), 0.0,
                                    16.0 * eps * c.gradient_scale * 2.0));  // |v| <= 2
      }
    }
  }
}

// The side each kink's gradient takes, as PyTorch 1.13 computes it in place (torch 1.13.0,
// x = torch.tensor([...], requires_grad=True); y = x * 1; F.hardtanh_(y); y.sum().backward()):
//   hardtanh_ on [-1, 1, 0.5, -2, 2, 0]        -> [0, 0, 1, 0, 0, 1]
//   relu6_ on [-1, 0, 6, 7, 3]                   -> [0, 0, 0, 0, 1]
//   leaky_relu_(0.2), elu_(1), selu_ at 0        -> 0.2, 1, 1.7580993408473766
//   leaky_relu_(0), elu_(0) on [-1, 1, 0.5, 0]   -> [0, 1, 1, 0]
TEST(InPlaceActivations, KinksTakePyTorchsSide) {
  auto gradient_of = [](const std::vector<double>& values, const std::function<void(Tensor&)>& op) {
    const Tensor x = test::make_tensor(values, {static_cast<std::int64_t>(values.size())}, kFloat64)
                         .requires_grad_();
    Tensor y = x * 1.0;
    op(y);
    return grad({y.sum()}, {x})[0];
  };
  EXPECT_TRUE(test::all_close(gradient_of({-1, 1, 0.5, -2, 2, 0}, [](Tensor& y) { hardtanh_(y); }),
                              {0, 0, 1, 0, 0, 1}, 0.0, 0.0));
  EXPECT_TRUE(test::all_close(gradient_of({-1, 0, 6, 7, 3}, [](Tensor& y) { relu6_(y); }),
                              {0, 0, 0, 0, 1}, 0.0, 0.0));
  EXPECT_TRUE(
      test::all_close(gradient_of({0}, [](Tensor& y) { leaky_relu_(y, 0.2); }), {0.2}, 0.0, 0.0));
  EXPECT_TRUE(test::all_close(gradient_of({0}, [](Tensor& y) { elu_(y, 1.0); }), {1.0}, 0.0, 0.0));
  EXPECT_TRUE(test::all_close(gradient_of({0}, [](Tensor& y) { selu_(y); }), {1.7580993408473766},
                              1e-15, 0.0));
  EXPECT_TRUE(test::all_close(gradient_of({-1, 1, 0.5, 0}, [](Tensor& y) { leaky_relu_(y, 0.0); }),
                              {0, 1, 1, 0}, 0.0, 0.0));
  EXPECT_TRUE(test::all_close(gradient_of({-1, 1, 0.5, 0}, [](Tensor& y) { elu_(y, 0.0); }),
                              {0, 1, 1, 0}, 0.0, 0.0));
}

// elu and selu, in place (their gradient from the output) and out of place, at NaN, the zeros and
// the infinities, as PyTorch 1.13 computes them in float64 (python3-torch 1.13.1, Debian 12):
//   vals = [nan, 0.0, -0.0, -1.0, 2.0, -inf, inf]
//   x = torch.tensor(vals, dtype=torch.float64, requires_grad=True)
//   y = x * 1; F.elu_(y) (torch.selu_(y), F.elu_(y, 0.5)); y.sum().backward(); x.grad
//   and F.elu(x) (F.selu(x), F.elu(x, 0.5)).sum().backward()
//   elu  -> [1, 1, 1, 0.36787944117144233, 1, 0, 1]
//   selu -> [1.0507009873554805, 1.7580993408473766, 1.7580993408473766, 0.6467686030348141,
//            1.0507009873554805, 0, 1.0507009873554805] (out of place: ...48140 at -1)
//   elu(0.5) -> [1, 0.5, 0.5, 0.18393972058572117, 1, 0, 1]
// NaN takes the positive side's scale (PyTorch's elu_backward tests x <= 0, or y <= 0).
TEST(InPlaceActivations, EluGradientsAtNaNZerosAndInfinitiesArePyTorchs) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  const std::vector<double> values = {nan, 0.0, -0.0, -1.0, 2.0, -inf, inf};
  auto gradient_of = [&](const std::function<Tensor(const Tensor&)>& f) {
    const Tensor x = test::make_tensor(values, {7}, kFloat64).requires_grad_();
    return grad({f(x).sum()}, {x})[0];
  };
  const double s = kSeluScale;
  const std::vector<double> elu_expected = {1, 1, 1, 0.36787944117144233, 1, 0, 1};
  const std::vector<double> selu_expected = {
      s, 1.7580993408473766, 1.7580993408473766, 0.6467686030348141, s, 0, s};
  const std::vector<double> half_expected = {1, 0.5, 0.5, 0.18393972058572117, 1, 0, 1};
  struct Pair {
    std::function<void(Tensor&)> in_place;
    std::function<Tensor(const Tensor&)> out_of_place;
    const std::vector<double>* expected;
  };
  const std::vector<Pair> pairs = {
      {[](Tensor& y) { elu_(y, 1.0); }, [](const Tensor& x) { return elu(x, 1.0); }, &elu_expected},
      {[](Tensor& y) { selu_(y); }, [](const Tensor& x) { return selu(x); }, &selu_expected},
      {[](Tensor& y) { elu_(y, 0.5); }, [](const Tensor& x) { return elu(x, 0.5); },
       &half_expected}};
  for (const Pair& p : pairs) {
    const Tensor in_place = gradient_of([&](const Tensor& x) {
      Tensor y = x * 1.0;
      p.in_place(y);
      return y;
    });
    // Within a few roundings of the value at -1 (the two formulas differ there), exact elsewhere.
    EXPECT_TRUE(test::all_close(in_place, *p.expected, 0.0, 1e-15));
    EXPECT_TRUE(test::all_close(gradient_of(p.out_of_place), *p.expected, 0.0, 1e-15));
  }
}

// First order for every case, second order (the gradient's own gradient, create_graph) too: the
// node's formula is written with differentiable functions, and the saved output unpacks as an
// alias whose history is the node. Inputs are kept away from the kinks.
TEST(InPlaceActivations, GradcheckFirstAndSecondOrder) {
  for (const InPlaceCase& c : in_place_cases()) {
    SCOPED_TRACE(c.name);
    const Tensor x = test::away_from_zero_input({3, 5}, 0.1, 0.9, 73) * 3.0;  // |x| in (0.3, 2.7)
    Tensor leaf = x.detach().requires_grad_();
    // Away from hardtanh's bounds (+-1, -0.5, 2) too: nudge any within 0.05 of one.
    {
      NoGradGuard no_grad;
      for (double bound : {1.0, -1.0, -0.5, 2.0}) {
        const Tensor near = lt(abs(leaf - bound), 0.05);
        leaf.copy_(where(near, leaf + 0.1, leaf));
      }
    }
    const auto f = [&c](const std::vector<Tensor>& in) {
      Tensor h = in[0] * 1.0;
      c.in_place(h);
      return h * h;  // nonlinear after the op: its gradient depends on x everywhere
    };
    EXPECT_TRUE(test::gradcheck(f, {leaf}));
    // gradcheck runs its function under NoGradGuard for the finite differences; the first
    // derivative needs f's graph, so grad mode is on inside (LibTorch's AutoGradMode).
    const auto first_derivative = [&f](const std::vector<Tensor>& in) {
      AutoGradMode enable(true);
      return grad({f(in).sum()}, {in[0]}, {}, std::nullopt, /*create_graph=*/true)[0];
    };
    EXPECT_TRUE(test::gradcheck(first_derivative, {leaf}));
  }
}

// The graph keeps self's memory alone: the node saves self, no second copy.
TEST(InPlaceActivations, TheNodeSavesSelfAfterTheWrite) {
  const Tensor x = test::uniform_input({4}, -1.0, 1.0, 74);
  Tensor y = x.sigmoid();  // SigmoidBackward saves y
  y.relu_();               // ... which relu_ then writes
  std::string m = test::error_message([&] { y.sum().backward(); });
  EXPECT_NE(m.find("SigmoidBackward"), std::string::npos) << m;
  EXPECT_NE(m.find("in-place"), std::string::npos) << m;

  // What an in-place op saved (self after its write) written again afterwards.
  for (const InPlaceCase& c : in_place_cases()) {
    SCOPED_TRACE(c.name);
    Tensor h = x * 1.0;
    c.in_place(h);
    h.add_(1.0);  // recorded, but the earlier node's saved self is now stale
    m = test::error_message([&] { h.sum().backward(); });
    EXPECT_NE(m.find(c.node), std::string::npos) << m;
    EXPECT_NE(m.find("modified by an in-place operation"), std::string::npos) << m;
  }

  // A chain of in-place ops that save nothing (add_, mul_ by a number) after relu_ still
  // invalidates relu_'s saved self: PyTorch reports that too.
  Tensor h = x * 1.0;
  h.relu_();
  h.mul_(2.0);
  m = test::error_message([&] { h.sum().backward(); });
  EXPECT_NE(m.find("ReluBackward"), std::string::npos) << m;
}

// add_ / sub_ / mul_ / div_: truly in place, the same values and gradients as out of place.
TEST(InPlaceArithmetic, MatchesTheOutOfPlaceOpsBitForBit) {
  const Tensor x =
      test::uniform_input({3, 4}, -1.0, 1.0, 75).to(kFloat32).detach().requires_grad_();
  const Tensor w = test::uniform_input({4}, 0.5, 1.5, 76).to(kFloat32).detach().requires_grad_();
  const Tensor c = test::uniform_input({1, 4}, 0.5, 1.5, 77).to(kFloat32).detach();  // no grad
  const Tensor v = test::uniform_input({3, 4}, -1.0, 1.0, 78).to(kFloat32).detach();
  struct Row {
    const char* name;
    std::function<void(Tensor&)> in_place;
    std::function<Tensor(const Tensor&)> out_of_place;
  };
  const std::vector<Row> rows = {
      {"add_(w)", [&](Tensor& h) { h.add_(w); }, [&](const Tensor& h) { return h + w; }},
      {"add_(w, 0.5)", [&](Tensor& h) { h.add_(w, 0.5); },
       [&](const Tensor& h) { return h + w * 0.5; }},
      {"sub_(w)", [&](Tensor& h) { h.sub_(w); }, [&](const Tensor& h) { return h - w; }},
      {"sub_(w, 2)", [&](Tensor& h) { h.sub_(w, 2.0); },
       [&](const Tensor& h) { return h - w * 2.0; }},
      {"add_(0.75)", [](Tensor& h) { h.add_(0.75); }, [](const Tensor& h) { return h + 0.75; }},
      {"sub_(0.75)", [](Tensor& h) { h.sub_(0.75); }, [](const Tensor& h) { return h - 0.75; }},
      {"mul_(3)", [](Tensor& h) { h.mul_(3.0); }, [](const Tensor& h) { return h * 3.0; }},
      {"div_(3)", [](Tensor& h) { h.div_(3.0); }, [](const Tensor& h) { return h / 3.0; }},
      {"mul_(c)", [&](Tensor& h) { h.mul_(c); }, [&](const Tensor& h) { return h * c; }},
      {"div_(c)", [&](Tensor& h) { h.div_(c); }, [&](const Tensor& h) { return h / c; }},
      {"mul_(w)", [&](Tensor& h) { h.mul_(w); }, [&](const Tensor& h) { return h * w; }},
      {"div_(w)", [&](Tensor& h) { h.div_(w); }, [&](const Tensor& h) { return h / w; }},
  };
  for (const Row& row : rows) {
    SCOPED_TRACE(row.name);
    Tensor h = x * 1.0;
    const void* memory = h.data_ptr();
    row.in_place(h);
    EXPECT_EQ(h.data_ptr(), memory);
    const Tensor twin = row.out_of_place(x * 1.0);
    EXPECT_TRUE(h.equal(twin));
    const std::vector<Tensor> g = grad({(h * v).sum()}, {x, w}, {}, std::nullopt, false, true);
    const std::vector<Tensor> g_twin =
        grad({(twin * v).sum()}, {x, w}, {}, std::nullopt, false, true);
    EXPECT_TRUE(g[0].equal(g_twin[0])) << "x's gradient";
    ASSERT_EQ(g[1].defined(), g_twin[1].defined());
    if (g[1].defined()) {
      // w was broadcast over the rows: its gradient is reduced to its shape, (4).
      EXPECT_EQ(g[1].shape(), w.shape());
      EXPECT_TRUE(g[1].equal(g_twin[1])) << "w's gradient";
    }
  }
}

TEST(InPlaceArithmetic, GradcheckWithBroadcastOperands) {
  const Tensor x = test::uniform_input({2, 3}, -1.0, 1.0, 79);
  const Tensor w = test::uniform_input({3}, 0.5, 1.5, 80);
  const Tensor c = test::uniform_input({2, 1}, 0.5, 1.5, 81).detach();  // needs no gradient
  EXPECT_TRUE(test::gradcheck(
      [&c](const std::vector<Tensor>& in) {
        Tensor h = in[0] * 1.0;
        h.add_(in[1], -0.5);
        h.sub_(in[1]);
        h.mul_(c);  // saves c only
        h.div_(c + 1.0);
        h.add_(2.0);
        h *= h;  // saves self: the copy path
        return h;
      },
      {x, w}));
  const auto first_derivative = [&c](const std::vector<Tensor>& in) {
    AutoGradMode enable(true);  // gradcheck's finite differences run under NoGradGuard
    Tensor h = in[0] * 1.0;
    h.add_(in[1], 2.0);
    h.mul_(c);
    h.sigmoid_();
    return grad({(h * h).sum()}, {in[0], in[1]}, {}, std::nullopt, /*create_graph=*/true)[1];
  };
  EXPECT_TRUE(test::gradcheck(first_derivative, {x, w}));
}

// mul_ and div_ by a tensor that needs no gradient save it before the write: a write through an
// alias of it (here self's own detached alias) is caught, as in PyTorch.
TEST(InPlaceArithmetic, AnOperandSavedBeforeTheWriteIsChecked) {
  const Tensor x = test::uniform_input({4}, 0.5, 1.0, 82);
  Tensor h = x * 1.0;
  h.mul_(h.detach());
  const std::string m = test::error_message([&] { h.sum().backward(); });
  EXPECT_NE(m.find("MulBackward"), std::string::npos) << m;
  EXPECT_NE(m.find("modified by an in-place operation"), std::string::npos) << m;
}

// The memory the graph keeps, counted from the shapes. Four layers x -> linear -> relu, with
// (256, 256) float32 activations (256 KiB each, a whole number of allocator blocks).
TEST(InPlaceMemory, InPlaceReluHoldsOneActivationFewerPerRelu) {
  constexpr std::int64_t kBatch = 256, kWidth = 256, kLayers = 4;
  const std::int64_t activation_bytes = memory::allocated_size(kBatch * kWidth * 4);
  const Tensor x = randn({kBatch, kWidth});
  std::vector<Tensor> weights;
  for (std::int64_t i = 0; i < kLayers; ++i)
    weights.push_back((randn({kWidth, kWidth}) * 0.05).requires_grad_());

  // The forward as C++ writes it, each layer's tensors in locals that live until the loss
  // is taken: out of place each layer keeps its pre-activation z and its output relu(z); in
  // place the one tensor is both. Returns the bytes held with the locals alive, then with
  // only the graph (and the output) alive, and the weights' gradients.
  struct Held {
    std::int64_t with_locals = 0;
    std::int64_t graph_only = 0;
    std::vector<Tensor> grads;
  };
  auto run = [&](bool in_place) {
    Held held;
    const std::int64_t before = memory::stats(kCPU).allocated;
    Tensor out;
    {
      std::vector<Tensor> locals;
      Tensor h = x;
      for (const Tensor& w : weights) {
        Tensor z = linear(h, w);
        locals.push_back(z);
        if (in_place) {
          z.relu_();
          h = z;
        } else {
          h = relu(z);
          locals.push_back(h);
        }
      }
      out = h;
      held.with_locals = memory::stats(kCPU).allocated - before;
    }
    held.graph_only = memory::stats(kCPU).allocated - before;
    held.grads = grad({out.sum()}, weights);
    return held;
  };
  const Held out_of_place = run(false);
  const Held in_place = run(true);
  // In place: each layer's one activation, which relu_ saved and the next linear saved too.
  EXPECT_EQ(in_place.with_locals, kLayers * activation_bytes);
  EXPECT_EQ(in_place.graph_only, kLayers * activation_bytes);
  // Out of place with the pre-activations alive: one more per ReLU.
  EXPECT_EQ(out_of_place.with_locals, 2 * kLayers * activation_bytes);
  EXPECT_EQ(out_of_place.with_locals - in_place.with_locals, kLayers * activation_bytes);
  // Once only the graph holds them, relu's saved output is the activation the next layer needs:
  // the same bytes as in place (where a twin copied into self held two per ReLU).
  EXPECT_EQ(out_of_place.graph_only, kLayers * activation_bytes);
  for (std::int64_t i = 0; i < kLayers; ++i)
    EXPECT_TRUE(in_place.grads[i].equal(out_of_place.grads[i])) << "weight " << i;
}

// The op's own peak: an in-place activation writes self with no temporary (ops::unary_,
// ops::activation_), so it raises peak_allocated by nothing, recorded or not, where its
// out-of-place twin raises it by its output at least (exactly that for relu, sigmoid and tanh;
// the compositions' masks and partial results come on top). (512, 512) float32: 1 MiB, a whole
// number of allocator blocks.
TEST(InPlaceMemory, InPlaceActivationsRaiseThePeakByNothing) {
  constexpr std::int64_t kRows = 512, kCols = 512;
  const std::int64_t tensor_bytes = memory::allocated_size(kRows * kCols * 4);
  const Tensor values = test::uniform_input({kRows, kCols}, -3.0, 3.0, 85).detach().to(kFloat32);
  for (const InPlaceCase& c : in_place_cases()) {
    for (const bool recorded : {false, true}) {
      SCOPED_TRACE(c.name + (recorded ? " recorded" : " unrecorded"));
      const Tensor x = values.clone().requires_grad_(recorded);
      Tensor h = recorded ? x * 1.0 : x;  // recorded: a non-leaf
      std::int64_t before = memory::stats(kCPU).allocated;
      memory::reset_peak(kCPU);
      c.in_place(h);
      EXPECT_EQ(memory::stats(kCPU).peak_allocated - before, 0);
      EXPECT_EQ(memory::stats(kCPU).allocated - before, 0);
      EXPECT_EQ(h.grad_fn() != nullptr, recorded);

      const Tensor input = recorded ? x * 1.0 : values.clone();
      before = memory::stats(kCPU).allocated;
      memory::reset_peak(kCPU);
      { const Tensor out = c.out_of_place(input); }
      const std::int64_t raised = memory::stats(kCPU).peak_allocated - before;
      const bool single_kernel = c.name == "relu_" || c.name == "sigmoid_" || c.name == "tanh_";
      if (single_kernel) {
        EXPECT_EQ(raised, tensor_bytes);
      } else {
        EXPECT_GE(raised, tensor_bytes);
      }
    }
  }
}

// float16 and bfloat16: the same bits as the out-of-place twin too (the fused kernels round where
// the compositions round), recorded and not.
TEST(InPlaceActivations, SixteenBitValuesMatchTheOutOfPlaceTwin) {
  for (const DType dtype : {kFloat16, kBFloat16}) {
    for (const InPlaceCase& c : in_place_cases()) {
      for (const bool recorded : {false, true}) {
        SCOPED_TRACE(c.name + " " + std::string(dtype_name(dtype)) + (recorded ? " recorded" : ""));
        const Tensor x = kink_input(kFloat64).detach().to(dtype).requires_grad_(recorded);
        Tensor h = x * 1.0;
        c.in_place(h);
        EXPECT_EQ(h.grad_fn() != nullptr, recorded);
        EXPECT_TRUE(h.equal(c.out_of_place(x * 1.0)));
      }
    }
  }
}

// The modules' inplace option: the forward writes its input and returns that same tensor.
TEST(InPlaceModules, InplaceOptionWritesTheInput) {
  struct Row {
    const char* name;
    std::function<Tensor(const Tensor&)> in_place_module;
    std::function<Tensor(const Tensor&)> module;
  };
  const std::vector<Row> rows = {
      {"ReLU", [](const Tensor& t) { return nn::ReLU(nn::ReLUOptions().inplace(true))(t); },
       [](const Tensor& t) { return nn::ReLU()(t); }},
      {"LeakyReLU",
       [](const Tensor& t) {
         return nn::LeakyReLU(nn::LeakyReLUOptions().negative_slope(0.2).inplace(true))(t);
       },
       [](const Tensor& t) {
         return nn::LeakyReLU(nn::LeakyReLUOptions().negative_slope(0.2))(t);
       }},
      {"ELU", [](const Tensor& t) { return nn::ELU(nn::ELUOptions().alpha(0.5).inplace(true))(t); },
       [](const Tensor& t) { return nn::ELU(nn::ELUOptions().alpha(0.5))(t); }},
      {"SELU", [](const Tensor& t) { return nn::SELU(true)(t); },
       [](const Tensor& t) { return nn::SELU()(t); }},
      {"Hardtanh",
       [](const Tensor& t) {
         return nn::Hardtanh(nn::HardtanhOptions().min_val(-0.5).max_val(0.5).inplace(true))(t);
       },
       [](const Tensor& t) {
         return nn::Hardtanh(nn::HardtanhOptions().min_val(-0.5).max_val(0.5))(t);
       }},
      {"ReLU6", [](const Tensor& t) { return nn::ReLU6(nn::ReLU6Options(true))(t); },
       [](const Tensor& t) { return nn::ReLU6()(t); }},
  };
  const Tensor x = test::uniform_input({2, 3}, -2.0, 8.0, 83);
  for (const Row& row : rows) {
    SCOPED_TRACE(row.name);
    Tensor h = x * 1.0;
    const Tensor y = row.in_place_module(h);

    EXPECT_TRUE(y.is_same(h));  // the input itself, written
    const Tensor expected = row.module(x * 1.0);
    EXPECT_FALSE(expected.is_same(x));
    EXPECT_TRUE(h.equal(expected));
    const Tensor g = grad({y.sum()}, {x})[0];
    const Tensor g_expected = grad({row.module(x).sum()}, {x})[0];
    EXPECT_TRUE(test::all_close(g, test::to_vector(g_expected), 1e-14, 1e-14));
  }
  // Printed as LibTorch prints them; the default prints as before.
  std::ostringstream printed;
  printed << nn::ReLU(true) << "\n"
          << nn::LeakyReLU(nn::LeakyReLUOptions().negative_slope(0.2).inplace(true)) << "\n"
          << nn::ELU(nn::ELUOptions().alpha(0.5).inplace(true)) << "\n"
          << nn::SELU(true) << "\n"
          << nn::Hardtanh(nn::HardtanhOptions().inplace(true)) << "\n"
          << nn::ReLU6(true) << "\n"
          << nn::ReLU() << "\n"
          << nn::LeakyReLU();
  EXPECT_EQ(printed.str(),
            "ReLU(inplace=true)\nLeakyReLU(negative_slope=0.2, inplace=true)\n"
            "ELU(alpha=0.5, inplace=true)\nSELU(inplace=true)\n"
            "Hardtanh(min_val=-1, max_val=1, inplace=true)\nReLU6(inplace=true)\nReLU()\n"
            "LeakyReLU(negative_slope=0.01)");
}

TEST(InPlaceMisuse, RefusedWithTheOpNamed) {
  const Tensor leaf = test::uniform_input({3}, -1.0, 1.0, 84);
  for (const InPlaceCase& c : in_place_cases()) {
    SCOPED_TRACE(c.name);
    Tensor l = leaf;
    std::string m = test::error_message([&] { c.in_place(l); });
    EXPECT_NE(m.find("leaf"), std::string::npos) << m;
    Tensor view_of_leaf = leaf.view({1, 3});
    m = test::error_message([&] { c.in_place(view_of_leaf); });
    EXPECT_NE(m.find("view"), std::string::npos) << m;
    EXPECT_NE(m.find("leaf"), std::string::npos) << m;
    // Through a view of a non-leaf the base takes the write (Note [In-place writes through
    // views] in autograd/graph.cpp): its history is CopySlices, and its gradient the out-of-place
    // op's, within the bound the case states (bit for bit when it states none).
    Tensor h = leaf * 1.0;
    Tensor through_view = h.view({1, 3});
    c.in_place(through_view);
    ASSERT_NE(h.grad_fn(), nullptr);
    EXPECT_EQ(h.grad_fn()->name(), "CopySlices");
    const Tensor expected = c.out_of_place(leaf * 1.0);
    EXPECT_TRUE(h.equal(expected));
    const Tensor g_in_place = grad({h.sum()}, {leaf})[0];
    const Tensor g_out_of_place = grad({expected.sum()}, {leaf})[0];
    if (c.gradient_scale == 0.0) {
      EXPECT_TRUE(g_in_place.equal(g_out_of_place));
    } else {
      EXPECT_TRUE(
          test::all_close(g_in_place, test::to_vector(g_out_of_place), 0.0,
                          16.0 * std::numeric_limits<double>::epsilon() * c.gradient_scale));
    }
  }
  // Integer tensors: relu_ keeps working outside autograd (its kernel keeps the dtype); the
  // others are defined on floating tensors only.
  Tensor ints = test::make_tensor({-2, 3}, {2}, DType::Int64);
  ints.relu_();
  EXPECT_TRUE(test::all_close(ints, {0, 3}, 0.0, 0.0));
  struct Op {
    std::string name;
    std::function<void(Tensor&)> run;
  };
  for (const Op& op : std::vector<Op>{{"sigmoid_", [](Tensor& t) { t.sigmoid_(); }},
                                      {"tanh_", [](Tensor& t) { t.tanh_(); }},
                                      {"leaky_relu_", [](Tensor& t) { leaky_relu_(t); }},
                                      {"elu_", [](Tensor& t) { elu_(t); }},
                                      {"selu_", [](Tensor& t) { selu_(t); }},
                                      {"hardtanh_", [](Tensor& t) { hardtanh_(t); }},
                                      {"relu6_", [](Tensor& t) { relu6_(t); }}}) {
    Tensor t = test::make_tensor({-2, 3}, {2}, DType::Int64);
    const std::string m = test::error_message([&] { op.run(t); });
    EXPECT_NE(m.find(op.name), std::string::npos) << m;
    EXPECT_NE(m.find("int64"), std::string::npos) << m;
    EXPECT_TRUE(test::all_close(t, {-2, 3}, 0.0, 0.0)) << op.name;
  }
  // A negative slope is refused where autograd records the op (the output no longer tells the
  // input's sign), and allowed where it does not.
  Tensor h = leaf * 1.0;
  std::string m = test::error_message([&] { leaky_relu_(h, -0.5); });
  EXPECT_NE(m.find("leaky_relu_"), std::string::npos) << m;
  EXPECT_NE(m.find("negative_slope"), std::string::npos) << m;
  m = test::error_message([&] { elu_(h, -0.5); });
  EXPECT_NE(m.find("elu_"), std::string::npos) << m;
  EXPECT_TRUE(h.equal(leaf * 1.0));
  Tensor plain = leaf.detach().clone();
  leaky_relu_(plain, -0.5);
  EXPECT_TRUE(plain.equal(leaky_relu(leaf.detach(), -0.5)));
  m = test::error_message([&] { hardtanh_(h, 1.0, -1.0); });
  EXPECT_NE(m.find("min_val"), std::string::npos) << m;
}

}  // namespace
}  // namespace leangrad
