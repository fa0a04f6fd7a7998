// The autograd engine and graph semantics (autograd/engine.cpp, graph.cpp, saved_tensor.cpp),
// each against values worked out by hand in the test: gradient summation and accumulation,
// retain_graph, grad mode, detach, node names, the errors backward raises, version-counter
// checks, very deep graphs, hooks, anomaly mode and dtype restoration.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include <leangrad/autograd/checkpoint.h>
#include <leangrad/autograd/engine.h>
#include <leangrad/autograd/functions.h>
#include <leangrad/autograd/grad_mode.h>
#include <leangrad/autograd/graph.h>
#include <leangrad/kernels/creation.h>
#include "testing/tensor_testing.h"

namespace leangrad {
namespace {

// A float64 leaf requiring grad holding `values` in `shape`.
Tensor leaf(const std::vector<double>& values, const Shape& shape) {
  Tensor t = test::make_tensor(values, shape, kFloat64);
  t.requires_grad_();
  return t;
}
// The same, 1-D.
Tensor leaf(const std::vector<double>& values) {
  return leaf(values, {static_cast<std::int64_t>(values.size())});
}

// Runs `f` and returns the message of the leangrad::Error it throws of type E ("" if none).
template <typename E = Error, typename F>
std::string error_message(F&& f) {
  try {
    f();
  } catch (const E& e) {
    return e.what();
  }
  return "";
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// ---- Gradient flow ---------------------------------------------------------------------------

TEST(Engine, TensorUsedSeveralTimesGetsTheSumOfItsGradients) {
  Tensor x = leaf({1, 2, 3});
  (x * x + x).sum().backward();  // d/dx (x^2 + x) = 2x + 1
  EXPECT_TRUE(test::all_close(x.grad(), {3, 5, 7}));
}

TEST(Engine, DiamondWaitsForEveryPathBeforeRunningANode) {
  // a = 2x feeds b = 3a and c = a * b; y = sum(b + c) = sum(6x + 12x^2): dy/dx = 6 + 24x.
  // a's node must run once, after both b and c delivered.
  Tensor x = leaf({1, -2});
  const Tensor a = x * 2.0;
  const Tensor b = a * 3.0;
  const Tensor c = a * b;
  (b + c).sum().backward();
  EXPECT_TRUE(test::all_close(x.grad(), {30, -42}));
}

TEST(Engine, OnlyInputsThatRequireGradGetAGradient) {
  Tensor a = leaf({1, 2});
  const Tensor b = test::make_tensor({3, 4}, {2}, kFloat64);
  const Tensor y = a * b;
  EXPECT_TRUE(y.requires_grad());
  EXPECT_FALSE(y.is_leaf());
  EXPECT_FALSE((b * 2.0).requires_grad());
  EXPECT_EQ((b * 2.0).grad_fn(), nullptr);
  y.sum().backward();
  EXPECT_TRUE(test::all_close(a.grad(), {3, 4}));
  EXPECT_FALSE(b.grad().defined());
}

TEST(Engine, BackwardWithAnExplicitGradient) {
  Tensor x = leaf({1, 2, 3});
  (x * x).backward(test::make_tensor({1, 0, -1}, {3}, kFloat64));  // 2x * g
  EXPECT_TRUE(test::all_close(x.grad(), {2, 0, -6}));
}

TEST(Engine, SeveralRootsInOneBackward) {
  Tensor x = leaf({1, 2});
  const Tensor y1 = (x * 3.0).sum();
  const Tensor y2 = (x * x).sum();
  autograd::backward({y1, y2});  // 3 + 2x
  EXPECT_TRUE(test::all_close(x.grad(), {5, 7}));
}

TEST(Engine, LeafGradAccumulatesAcrossBackwardsUntilReset) {
  Tensor x = leaf({1, 2});
  (x * 3.0).sum().backward();
  (x * 3.0).sum().backward();
  EXPECT_TRUE(test::all_close(x.grad(), {6, 6}));
  x.set_grad(Tensor());
  EXPECT_FALSE(x.grad().defined());
  (x * 3.0).sum().backward();
  EXPECT_TRUE(test::all_close(x.grad(), {3, 3}));
  x.mutable_grad().zero_();
  EXPECT_TRUE(test::all_close(x.grad(), {0, 0}));
  (x * x).sum().backward();
  EXPECT_TRUE(test::all_close(x.grad(), {2, 4}));
}

TEST(Engine, GradientIsNotAnAliasOfTheUpstreamGradient) {
  // The same gradient reaches a and b (AddBackward passes it through); each .grad is its own.
  Tensor a = leaf({1, 2});
  Tensor b = leaf({3, 4});
  const Tensor g = test::make_tensor({1, 1}, {2}, kFloat64);
  (a + b).backward(g);
  EXPECT_FALSE(a.grad().shares_storage(b.grad()));
  EXPECT_FALSE(a.grad().shares_storage(g));
  (a + b).backward(g);  // in-place accumulation into a.grad must not touch b.grad or g
  EXPECT_TRUE(test::all_close(a.grad(), {2, 2}));
  EXPECT_TRUE(test::all_close(b.grad(), {2, 2}));
  EXPECT_TRUE(test::all_close(g, {1, 1}));
}

// One gradient reaches two node inputs (AddBackward passes its gradient on to both) and one of
// them then gets a second gradient: a sum made in place in the shared tensor would change the
// other input's gradient too (the engine sums out of place; this guards any in-place summing).
// w is made before z, so z's AddBackward runs first and the shared gradient is what p's input
// holds when w's gradient arrives. (The weights k make the gradients contiguous tensors of their
// own: a sum's gradient alone is an expanded view.)
TEST(Engine, AGradientSharedByTwoSlotsIsNotSummedIntoInPlace) {
  Tensor x = leaf({1, -2, 3});
  const Tensor k = test::make_tensor({1, 2, 3}, {3}, kFloat64);
  const Tensor p = x * 5.0;  // dp/dx = 5
  const Tensor q = x * x;    // dq/dx = 2x
  const Tensor w = p * 2.0;
  const Tensor z = p + q;
  ((z * k).sum() + (w * k).sum()).backward();  // d/dx = k (5 (1 + 2) + 2x)
  EXPECT_TRUE(test::all_close(x.grad(), {17, 22, 63}));
}

// Many arrivals at one node input (a tensor used at every step, as an RNN's weight): the sum is
// exact.
TEST(Engine, ManyArrivalsSumIntoOneSlot) {
  Tensor x = leaf({0.5, -1.5});
  const Tensor h = x * 1.0;  // one node input that every term below reaches
  Tensor y = h * 1.0;
  for (int i = 2; i <= 20; ++i)
    y = y + h * static_cast<double>(i);
  y.sum().backward();  // 1 + 2 + ... + 20 = 210
  EXPECT_TRUE(test::all_close(x.grad(), {210, 210}));
}

// A root's gradient is the caller's tensor: it is never summed into, even when another gradient
// reaches the root's node input (y is a root and also feeds the second root z).
TEST(Engine, ARootsGradientIsNotSummedIntoInPlace) {
  Tensor x = leaf({1, 2});
  const Tensor y = x * 3.0;
  const Tensor z = (y * 2.0).sum();
  autograd::backward({y, z}, {test::make_tensor({1, 1}, {2}, kFloat64), Tensor()});
  EXPECT_TRUE(test::all_close(x.grad(), {9, 9}));  // 3 (1 + 2)
  const Tensor g = test::make_tensor({1, 10}, {2}, kFloat64);
  x.set_grad(Tensor());
  const Tensor y2 = x * 3.0;
  autograd::backward({y2, (y2 * 2.0).sum()}, {g, Tensor()});
  EXPECT_TRUE(test::all_close(g, {1, 10}));
  EXPECT_TRUE(test::all_close(x.grad(), {9, 36}));  // 3 (g + 2)
}

// ---- retain_graph and freed graphs -----------------------------------------------------------

TEST(Engine, RetainGraphAllowsASecondBackward) {
  Tensor x = leaf({1, 2});
  const Tensor y = (x * x).sum();
  y.backward(Tensor(), /*retain_graph=*/true);
  EXPECT_TRUE(test::all_close(x.grad(), {2, 4}));
  y.backward();
  EXPECT_TRUE(test::all_close(x.grad(), {4, 8}));
}

TEST(Engine, SecondBackwardWithoutRetainGraphNamesTheNode) {
  Tensor x = leaf({1, 2});
  const Tensor y = (x * x).sum();
  y.backward();
  const std::string message = error_message([&] { y.backward(); });
  EXPECT_TRUE(contains(message, "MulBackward")) << message;
  EXPECT_TRUE(contains(message, "retain_graph")) << message;
}

// ---- Grad mode and detach --------------------------------------------------------------------

TEST(Engine, NoGradGuardRecordsNothing) {
  Tensor x = leaf({1, 2});
  {
    NoGradGuard no_grad;
    EXPECT_FALSE(autograd::grad_mode_enabled());
    const Tensor y = (x * 2.0).exp() + x;
    EXPECT_FALSE(y.requires_grad());
    EXPECT_EQ(y.grad_fn(), nullptr);
    EXPECT_TRUE(y.is_leaf());
    {
      autograd::GradModeGuard enable(true);  // nested guards restore in order
      EXPECT_TRUE((x * 2.0).requires_grad());
    }
    EXPECT_FALSE((x * 2.0).requires_grad());
  }
  EXPECT_TRUE(autograd::grad_mode_enabled());
  EXPECT_TRUE((x * 2.0).requires_grad());
}

TEST(Engine, DetachStopsTheGradientAndSharesDataAndVersion) {
  Tensor x = leaf({1, 2});
  Tensor d = x.detach();
  EXPECT_FALSE(d.requires_grad());
  EXPECT_EQ(d.grad_fn(), nullptr);
  EXPECT_TRUE(d.shares_storage(x));
  EXPECT_EQ(d.data_ptr(), x.data_ptr());
  const auto before = x.version();
  d.mul_(2.0);  // allowed: d does not require grad
  EXPECT_EQ(x.version(), before + 1);
  EXPECT_EQ(d.version(), x.version());
  EXPECT_TRUE(test::all_close(x, {2, 4}));

  // y = x * detach(x): the detached factor is a constant, dy/dx = detach(x).
  (x * x.detach()).sum().backward();
  EXPECT_TRUE(test::all_close(x.grad(), {2, 4}));
}

TEST(Engine, NodeNames) {
  Tensor a = leaf({1, 2, 3, 4}, {2, 2});
  Tensor b = leaf({1, 0, 0, 1}, {2, 2});
  EXPECT_EQ((a * b).grad_fn()->name(), "MulBackward");
  EXPECT_EQ((a + b).grad_fn()->name(), "AddBackward");
  EXPECT_EQ((a / b).grad_fn()->name(), "DivBackward");
  EXPECT_EQ((2.0 - a).grad_fn()->name(), "RsubBackward");
  EXPECT_EQ(a.matmul(b).grad_fn()->name(), "MatmulBackward");
  EXPECT_EQ(a.sum().grad_fn()->name(), "SumBackward");
  EXPECT_EQ(a.mean({0}).grad_fn()->name(), "MeanBackward");
  EXPECT_EQ(a.exp().grad_fn()->name(), "ExpBackward");
  EXPECT_EQ(a.transpose(0, 1).grad_fn()->name(), "TransposeBackward");
  EXPECT_EQ(a.to(kFloat32).grad_fn()->name(), "ToBackward");
  EXPECT_EQ(autograd::backward_name("max_pool2d"), "MaxPool2dBackward");
  EXPECT_EQ(autograd::backward_name("group_norm"), "GroupNormBackward");
  // The node's inputs: MulBackward -> the two leaves' accumulators.
  const auto node = (a * b).grad_fn();
  ASSERT_EQ(node->next_edges.size(), 2u);
  EXPECT_EQ(node->next_edges[0].function->name(), "AccumulateGrad");
}

TEST(Engine, IntegerAndBoolResultsDoNotRequireGrad) {
  Tensor x = leaf({1, 3, 2});
  for (const Tensor& t : {x.argmax(), x.argmax(0), x.gt(1.5), x.eq(x), lt(x, x * 2.0)}) {
    EXPECT_FALSE(t.requires_grad());
    EXPECT_EQ(t.grad_fn(), nullptr);
  }
  EXPECT_EQ(x.argmax().item<std::int64_t>(), 1);
}

// ---- Errors backward raises ------------------------------------------------------------------

TEST(Engine, BackwardOfANonScalarNeedsAGradient) {
  Tensor x = leaf({1, 2});
  EXPECT_THROW((x * 2.0).backward(), ShapeError);
}

TEST(Engine, BackwardRejectsAGradientOfTheWrongShape) {
  Tensor x = leaf({1, 2});
  EXPECT_THROW((x * 2.0).backward(zeros({3}, kFloat64)), ShapeError);
  EXPECT_THROW((x * 2.0).backward(zeros({2, 1}, kFloat64)), ShapeError);
}

TEST(Engine, BackwardOfATensorThatDoesNotRequireGradThrows) {
  const Tensor plain = test::make_tensor({1, 2}, {2}, kFloat64);
  EXPECT_THROW(plain.sum().backward(), Error);
  Tensor x = leaf({1, 2});
  Tensor y;
  {
    NoGradGuard no_grad;
    y = (x * 2.0).sum();
  }
  const std::string message = error_message([&] { y.backward(); });
  EXPECT_TRUE(contains(message, "does not require grad")) << message;
}

TEST(Engine, InPlaceChangeOfASavedTensorIsReportedAtBackward) {
  Tensor x = leaf({1, 2});
  Tensor y = x.exp();  // ExpBackward saves its output y
  {
    NoGradGuard no_grad;
    y.mul_(2.0);
  }
  const std::string message = error_message([&] { y.sum().backward(); });
  EXPECT_TRUE(contains(message, "ExpBackward")) << message;
  EXPECT_TRUE(contains(message, "in-place")) << message;
}

TEST(Engine, InPlaceChangeThroughAViewIsSeenToo) {
  Tensor x = leaf({1, 2, 3, 4});
  Tensor base = test::make_tensor({1, 2, 3, 4}, {4}, kFloat64);
  const Tensor y = (x * base).sum();  // MulBackward saves base
  base.slice(0, 0, 2).fill_(0.0);     // a write through a view bumps the shared counter
  const std::string message = error_message([&] { y.backward(); });
  EXPECT_TRUE(contains(message, "MulBackward")) << message;
  EXPECT_TRUE(contains(message, "in-place")) << message;
}

TEST(Engine, InPlaceOpOnALeafRequiringGradThrowsInGradMode) {
  Tensor x = leaf({1, 2});
  EXPECT_THROW(x.add_(1.0), Error);
  EXPECT_THROW(x.mul_(2.0), Error);
  EXPECT_THROW(x.zero_(), Error);
  // (On a non-leaf it is recorded: tests/autograd/test_inplace.cpp.)
  {
    NoGradGuard no_grad;  // an optimizer step
    x.add_(1.0);
  }
  EXPECT_TRUE(test::all_close(x, {2, 3}));
}

// ---- Deep graphs -----------------------------------------------------------------------------

TEST(Engine, HundredThousandNodeChainNeitherRecursesInBackwardNorInDestruction) {
  constexpr int kDepth = 100000;
  Tensor x = leaf({1.0}, {});
  {
    Tensor y = x;
    for (int i = 0; i < kDepth; ++i)
      y = y * 1.0;
    y.backward();
  }  // y and its 100k-node graph are destroyed here
  EXPECT_TRUE(test::all_close(x.grad(), {1.0}));

  {  // A graph that never ran backward (its saved tensors still held) is destroyed too.
    Tensor y = x;
    for (int i = 0; i < kDepth; ++i)
      y = y.exp().log();
  }
  {  // Each node uses its input twice (two edges to one node): destroyed without recursion too.
    Tensor y = x;
    for (int i = 0; i < kDepth; ++i)
      y = y + y;
    Tensor z = x;
    for (int i = 0; i < kDepth; ++i)
      z = z * z;
  }
  SUCCEED();  // a recursion 100 000 deep overflows the stack: the test would crash
}

// ---- Anomaly mode ----------------------------------------------------------------------------

TEST(Engine, AnomalyModeNamesTheNodeThatProducedNaNOrInf) {
  {
    Tensor x = leaf({0, 1});
    const Tensor y = x.log().sum();  // LogBackward: grad / x = Inf at x = 0
    autograd::AnomalyMode anomaly;
    EXPECT_TRUE(autograd::anomaly_mode_enabled());
    const std::string message = error_message([&] { y.backward(); });
    EXPECT_TRUE(contains(message, "LogBackward")) << message;
    EXPECT_TRUE(contains(message, "'log'")) << message;
  }
  EXPECT_FALSE(autograd::anomaly_mode_enabled());
  {
    Tensor a = leaf({1, 1});
    const Tensor b = test::make_tensor({0, 2}, {2}, kFloat64);
    const Tensor y = (a / b).sum();  // DivBackward: grad / b = Inf at b = 0
    autograd::AnomalyMode anomaly;
    const std::string message = error_message([&] { y.backward(); });
    EXPECT_TRUE(contains(message, "DivBackward")) << message;
    EXPECT_TRUE(contains(message, "'div'")) << message;
  }
}

TEST(Engine, WithoutAnomalyModeNonFiniteGradientsPassSilently) {
  Tensor x = leaf({0, 1});
  EXPECT_NO_THROW(x.log().sum().backward());
  const std::vector<double> g = test::to_vector(x.grad());
  EXPECT_TRUE(std::isinf(g[0]));
  EXPECT_EQ(g[1], 1.0);
}

// ---- Dtype restoration -----------------------------------------------------------------------

TEST(Engine, GradientComesBackInTheLeafsDtype) {
  Tensor x = test::make_tensor({1, 2, 3}, {3}, kFloat32);
  x.requires_grad_();
  (x.to(kFloat64) * 2.0).sum().backward();
  ASSERT_TRUE(x.grad().defined());
  EXPECT_EQ(x.grad().dtype(), kFloat32);
  EXPECT_TRUE(test::all_close(x.grad(), {2, 2, 2}));
  // Mixed dtypes promote forward (float32 * float64 -> float64); each gradient comes back in
  // its own input's dtype.
  Tensor w = test::make_tensor({0.5, 0.25, 2}, {3}, kFloat64);
  w.requires_grad_();
  x.set_grad(Tensor());
  (x * w).sum().backward();
  EXPECT_EQ(x.grad().dtype(), kFloat32);
  EXPECT_EQ(w.grad().dtype(), kFloat64);
  EXPECT_TRUE(test::all_close(x.grad(), {0.5, 0.25, 2}));
  EXPECT_TRUE(test::all_close(w.grad(), {1, 2, 3}));
}

TEST(Engine, GradientOfALeafRootIsCastToTheLeafsDtype) {
  // backward(grad) with a float32 grad for a float64 tensor: as in PyTorch, the gradient is
  // converted to the tensor's dtype before it is accumulated.
  Tensor x = leaf({1, 2});
  x.backward(ones({2}, kFloat32));
  EXPECT_EQ(x.grad().dtype(), kFloat64);
  Tensor y = leaf({1, 2});
  (y * 2.0).backward(ones({2}, kFloat32));
  EXPECT_EQ(y.grad().dtype(), kFloat64);
  EXPECT_TRUE(test::all_close(y.grad(), {2, 2}));
}

// ---- Non-differentiable points: the conventions PyTorch uses ---------------------------------

TEST(Engine, TiesSplitTheGradientEvenly) {
  Tensor x = leaf({1, 3, 3, 2});
  x.max().backward();
  EXPECT_TRUE(test::all_close(x.grad(), {0, 0.5, 0.5, 0}));
  Tensor m = leaf({1, 3, 3, 2}, {2, 2});
  m.amax({1}).sum().backward();  // rows [1, 3] and [3, 2]: no ties within a row
  EXPECT_TRUE(test::all_close(m.grad(), {0, 1, 1, 0}));
  Tensor a = leaf({1, 2});
  Tensor b = leaf({1, 3});
  maximum(a, b).sum().backward();
  EXPECT_TRUE(test::all_close(a.grad(), {0.5, 0}));
  EXPECT_TRUE(test::all_close(b.grad(), {0.5, 1}));
}

TEST(Engine, KinksTakeTheSubgradientPyTorchUses) {
  Tensor x = leaf({0, 0});
  (x.abs() + x.relu()).sum().backward();  // sign(0) = 0, relu'(0) = 0
  EXPECT_TRUE(test::all_close(x.grad(), {0, 0}));
}

TEST(Engine, PowAtAZeroBase) {
  // x^e at x = 0: d/dx is e * 0^(e-1) (0 for e = 0, where x^0 = 1 is constant), and d/de is
  // taken as 0 (x^e log x -> 0).
  Tensor x = leaf({0, 0, 0, 2});
  Tensor e = leaf({0, 1, 2, 0});
  x.pow(e).sum().backward();
  EXPECT_TRUE(test::all_close(x.grad(), {0, 1, 0, 0}));
  EXPECT_TRUE(test::all_close(e.grad(), {0, 0, 0, std::log(2.0)}));
  Tensor s = leaf({0, 2});
  s.pow(0.0).sum().backward();
  EXPECT_TRUE(test::all_close(s.grad(), {0, 0}));
}

// ---- Hooks -----------------------------------------------------------------------------------

TEST(Hooks, LeafHookEditsTheGradientBeforeAccumulation) {
  Tensor x = leaf({1, 2});
  x.register_hook([](const Tensor& g) { return g * 2.0; });
  (x * 3.0).sum().backward();
  EXPECT_TRUE(test::all_close(x.grad(), {6, 6}));
}

TEST(Hooks, NonLeafHookReplacesTheGradientFlowingOn) {
  Tensor x = leaf({1, 2});
  Tensor y = x * 2.0;
  y.register_hook([](const Tensor& g) { return full(g.shape(), 10.0, g.options()); });
  (y * 3.0).sum().backward();  // y's gradient 3 is replaced by 10; dx = 10 * 2
  EXPECT_TRUE(test::all_close(x.grad(), {20, 20}));
}

TEST(Hooks, HookOnTheRootSeesTheGradientPassedToBackward) {
  Tensor x = leaf({1, 2});
  Tensor y = x * 3.0;
  y.register_hook([](const Tensor& g) { return g * 2.0; });
  y.backward(test::make_tensor({1, -1}, {2}, kFloat64));  // (g * 2) * 3
  EXPECT_TRUE(test::all_close(x.grad(), {6, -6}));
}

TEST(Hooks, HookSeesTheSummedGradientOfATensorUsedTwice) {
  Tensor x = leaf({1, 2});
  Tensor y = x * 1.0;
  std::vector<std::vector<double>> seen;
  y.register_hook([&seen](const Tensor& g) { seen.push_back(test::to_vector(g)); });
  (y * y + y).sum().backward();  // dL/dy = 2y + 1, delivered once
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0], (std::vector<double>{3, 5}));
}

TEST(Hooks, VoidHookOnlyObserves) {
  Tensor x = leaf({1, 2});
  std::vector<double> seen;
  x.register_hook([&seen](const Tensor& g) { seen = test::to_vector(g); });
  (x * x).sum().backward();
  EXPECT_EQ(seen, (std::vector<double>{2, 4}));
  EXPECT_TRUE(test::all_close(x.grad(), {2, 4}));
}

TEST(Hooks, HooksRunInRegistrationOrder) {
  Tensor x = leaf({1});
  x.register_hook([](const Tensor& g) { return g + 1.0; });
  x.register_hook([](const Tensor& g) { return g * 10.0; });
  (x * 1.0).sum().backward();  // (1 + 1) * 10
  EXPECT_TRUE(test::all_close(x.grad(), {20}));
}

TEST(Hooks, RegisterHookNeedsATensorThatRequiresGrad) {
  Tensor plain = test::make_tensor({1}, {1}, kFloat64);
  EXPECT_THROW(plain.register_hook([](const Tensor& g) { return g; }), Error);
  Tensor y = leaf({1}) * 2.0;
  EXPECT_THROW(y.register_post_accumulate_grad_hook([](const Tensor&) {}), Error);
}

TEST(Hooks, PostAccumulateGradHookRunsOnceAfterAllContributions) {
  Tensor x = leaf({1, 2});
  int calls = 0;
  std::vector<double> grad_at_call;
  x.register_post_accumulate_grad_hook([&](const Tensor& t) {
    ++calls;
    grad_at_call = test::to_vector(t.grad());
  });
  (x * x + x).sum().backward();  // two contributions: 2x and 1
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(grad_at_call, (std::vector<double>{3, 5}));
  (x * x + x).sum().backward();  // accumulated: 2 * (2x + 1)
  EXPECT_EQ(calls, 2);
  EXPECT_EQ(grad_at_call, (std::vector<double>{6, 10}));
}

// ---- Removing hooks (Note [Removing hooks]) ---------------------------------------------------

// f() throws an Error whose message contains `words`.
template <typename F>
void expect_error(F&& f, const std::string& words) {
  try {
    f();
    ADD_FAILURE() << "no error; expected one saying '" << words << "'";
  } catch (const Error& e) {
    EXPECT_CONTAINS(e.what(), words);
  }
}

// register_hook returns a position per tensor; a removed hook no longer runs, on a leaf or a
// non-leaf, and the others keep their order.
TEST(Hooks, ARemovedHookNoLongerRuns) {
  Tensor x = leaf({1, 2});
  const unsigned times_ten = x.register_hook([](const Tensor& g) { return g * 10.0; });
  const unsigned plus_one = x.register_hook([](const Tensor& g) { return g + 1.0; });
  EXPECT_EQ(times_ten, 0u);
  EXPECT_EQ(plus_one, 1u);
  x.remove_hook(times_ten);
  (x * 3.0).sum().backward();  // 3 + 1
  EXPECT_TRUE(test::all_close(x.grad(), {4, 4}));

  Tensor a = leaf({1, 2});
  Tensor y = a * 2.0;
  const unsigned replace = y.register_hook([](const Tensor& g) { return g * 100.0; });
  y.register_hook([](const Tensor& g) { return g - 1.0; });
  y.remove_hook(replace);
  (y * 3.0).sum().backward();  // (3 - 1) * 2
  EXPECT_TRUE(test::all_close(a.grad(), {4, 4}));
}

// A hook may remove itself (or another) while it runs: it does not run again, in this backward
// or a later one, and the one it removed does not run in this backward either.
TEST(Hooks, AHookMayRemoveItselfOrAnotherWhileItRuns) {
  Tensor x = leaf({1});
  Tensor y = x * 1.0;
  int calls = 0;
  unsigned self = 0;
  unsigned later = 0;
  self = y.register_hook([&](const Tensor& g) {
    ++calls;
    y.remove_hook(self);
    y.remove_hook(later);
    return g * 2.0;
  });
  later = y.register_hook([](const Tensor& g) { return g * 1000.0; });
  (y * 3.0).sum().backward(Tensor(), /*retain_graph=*/true);
  EXPECT_TRUE(test::all_close(x.grad(), {6}));
  (y * 3.0).sum().backward();
  EXPECT_EQ(calls, 1);
  EXPECT_TRUE(test::all_close(x.grad(), {9}));  // 6 + 3
}

TEST(Hooks, RemovingANonexistentHookIsAnError) {
  Tensor x = leaf({1});
  expect_error([&] { x.remove_hook(0); }, "remove_hook: no hook at position 0");
  const unsigned h = x.register_hook([](const Tensor& g) { return g; });
  x.remove_hook(h);
  expect_error([&] { x.remove_hook(h); }, "a removed hook cannot be removed again");
  expect_error([&] { x.remove_hook(7); }, "has had 1 hook(s) registered");
}

// ---- Retained gradients (Note [Retained gradients]) ---------------------------------------------

// y = 2x, L = sum(y^2): dL/dy = 2y = 4x, retained in y.grad; accumulated over two backwards as a
// leaf's .grad is; a leaf's retain_grad changes nothing (PyTorch: retains_grad stays false).
TEST(RetainGrad, ANonLeafKeepsItsGradientAndAccumulates) {
  Tensor x = leaf({1, -2, 3});
  Tensor y = x * 2.0;
  EXPECT_FALSE(y.grad().defined());
  y.retain_grad();
  y.retain_grad();  // twice: still one hook
  EXPECT_TRUE(y.retains_grad());
  const Tensor loss = (y * y).sum();
  loss.backward(Tensor(), /*retain_graph=*/true);
  EXPECT_TRUE(test::all_close(y.grad(), {4, -8, 12}, 0, 0));
  EXPECT_TRUE(test::all_close(x.grad(), {8, -16, 24}, 0, 0));
  loss.backward();
  EXPECT_TRUE(test::all_close(y.grad(), {8, -16, 24}, 0, 0));
  x.retain_grad();
  EXPECT_FALSE(x.retains_grad());
  expect_error([&] { test::make_tensor({1}, {1}, kFloat64).retain_grad(); },
               "does not require grad");
}

// The values PyTorch 1.13 gives (y = 2x, x = 1): with a hook g * 100 registered before
// retain_grad the retained gradient is 100, registered after it is 1 (hooks run in registration
// order); after y.mul_(3), L = sum(5 y): y.grad is 5, the gradient of y's new value, while a
// hook registered before the in-place op sees 15, the gradient of its old value.
TEST(RetainGrad, OrderWithHooksAndInPlaceOpsFollowPyTorch) {
  Tensor x = leaf({1, 1});
  Tensor y = x * 2.0;
  y.register_hook([](const Tensor& g) { return g * 100.0; });
  y.retain_grad();
  y.sum().backward();
  EXPECT_TRUE(test::all_close(y.grad(), {100, 100}, 0, 0));
  EXPECT_TRUE(test::all_close(x.grad(), {200, 200}, 0, 0));

  Tensor x2 = leaf({1, 1});
  Tensor y2 = x2 * 2.0;
  y2.retain_grad();
  y2.register_hook([](const Tensor& g) { return g * 100.0; });
  y2.sum().backward();
  EXPECT_TRUE(test::all_close(y2.grad(), {1, 1}, 0, 0));
  EXPECT_TRUE(test::all_close(x2.grad(), {200, 200}, 0, 0));

  Tensor x3 = leaf({1, 1, 1});
  Tensor y3 = x3 * 2.0;
  std::vector<double> seen_before;
  y3.register_hook([&](const Tensor& g) { seen_before = test::to_vector(g); });
  y3.retain_grad();
  y3.mul_(3.0);
  (y3 * 5.0).sum().backward();
  EXPECT_TRUE(test::all_close(y3.grad(), {5, 5, 5}, 0, 0));
  EXPECT_EQ(seen_before, (std::vector<double>{15, 15, 15}));
  EXPECT_TRUE(test::all_close(x3.grad(), {30, 30, 30}, 0, 0));
}

// Under create_graph the retained gradient keeps its graph: y = x^2, L = sum(y^2), dL/dy = 2y =
// 2x^2, whose derivative in x is 4x.
TEST(RetainGrad, UnderCreateGraphTheRetainedGradientCanBeDifferentiated) {
  Tensor x = leaf({1.5, -2});
  Tensor y = x * x;
  y.retain_grad();
  (y * y).sum().backward(Tensor(), std::nullopt, /*create_graph=*/true);
  ASSERT_TRUE(y.grad().requires_grad());
  EXPECT_TRUE(test::all_close(y.grad(), {4.5, 8}, 0, 0));
  const std::vector<Tensor> d = autograd::grad({y.grad().sum()}, {x});
  EXPECT_TRUE(test::all_close(d[0], {6, -8}, 0, 0));
  // As for a leaf under create_graph (and in PyTorch), the gradient's graph holds the tensor
  // that holds the gradient: a reference cycle, broken by dropping the gradients.
  y.set_grad(Tensor());
  x.set_grad(Tensor());
}

// ---- End-of-backward callbacks (Note [End-of-backward callbacks]) -----------------------------

// A hook may register another hook on the same tensor while it runs: the list it is read from
// must not be reallocated under the loop (AddressSanitizer saw a freed std::function run). The new
// hook applies from the next backward on.
TEST(Hooks, AHookRegisteringAHookDuringBackward) {
  Tensor x = leaf({1.0, 2.0});
  int leaf_calls = 0;
  x.register_hook([&x, &leaf_calls](const Tensor& g) {
    ++leaf_calls;
    for (int i = 0; i < 8; ++i)  // enough to reallocate the list
      x.register_hook([](const Tensor& h) { return h; });
    return g * 2.0;
  });
  int post_calls = 0;
  x.register_post_accumulate_grad_hook([&x, &post_calls](const Tensor&) {
    ++post_calls;
    for (int i = 0; i < 8; ++i)
      x.register_post_accumulate_grad_hook([](const Tensor&) {});
  });
  (x * 3.0).sum().backward();
  EXPECT_TRUE(test::all_close(x.grad(), {6.0, 6.0}));
  EXPECT_EQ(leaf_calls, 1);
  EXPECT_EQ(post_calls, 1);

  Tensor a = leaf({1.0});
  Tensor y = a * 2.0;
  int inner_calls = 0;
  y.register_hook([&y, &inner_calls](const Tensor& g) {
    for (int i = 0; i < 8; ++i)
      y.register_hook([&inner_calls](const Tensor& h) {
        ++inner_calls;
        return h;
      });
    return g * 5.0;
  });
  y.sum().backward();
  EXPECT_TRUE(test::all_close(a.grad(), {10.0}));
  EXPECT_EQ(inner_calls, 0);  // registered during this backward: from the next one on
}

TEST(EndOfBackwardCallbacks, RunOnceAfterEveryNodeInOrder) {
  Tensor x = leaf({1, 2});
  Tensor w = leaf({3});
  std::vector<std::string> events;
  x.register_post_accumulate_grad_hook([&](const Tensor&) {
    events.push_back("x ready");
    autograd::queue_callback([&] {
      events.push_back("first callback, x.grad " + std::to_string(x.grad().sum().item<double>()));
      autograd::queue_callback([&] { events.push_back("queued by a callback"); });
    });
  });
  w.register_post_accumulate_grad_hook([&](const Tensor&) {
    events.push_back("w ready");
    autograd::queue_callback([&] { events.push_back("second callback"); });
  });
  (x * w).sum().backward();
  // Both leaves were final before any callback ran; callbacks ran in the order queued.
  ASSERT_EQ(events.size(), 5u);
  EXPECT_EQ(events[3], "second callback");
  EXPECT_EQ(events[4], "queued by a callback");
  EXPECT_EQ(events[2], "first callback, x.grad 6.000000");
  events.clear();
  (x * w).sum().backward();  // a new backward starts with an empty list
  EXPECT_EQ(events.size(), 5u);
}

TEST(EndOfBackwardCallbacks, OutsideABackwardIsAnError) {
  EXPECT_NE(error_message([] { autograd::queue_callback([] {}); }).find("no backward is running"),
            std::string::npos);
}

TEST(EndOfBackwardCallbacks, ANestedBackwardHandsThemToTheOutermost) {
  // checkpoint's recompute runs a backward of its own inside the outer one: a callback queued
  // from inside the segment runs once, after the outer backward's last node (x's accumulator).
  Tensor x = leaf({1, 2});
  Tensor w = leaf({3});
  std::vector<std::string> events;
  w.register_post_accumulate_grad_hook([&](const Tensor&) {
    events.push_back("w ready");
    autograd::queue_callback([&] { events.push_back("callback"); });
  });
  x.register_post_accumulate_grad_hook([&](const Tensor&) { events.push_back("x ready"); });
  Tensor y = autograd::checkpoint(
      [&](const std::vector<Tensor>& in) { return std::vector<Tensor>{in[0] * w}; }, {x * 2.0})[0];
  y.sum().backward();
  EXPECT_EQ(events, (std::vector<std::string>{"w ready", "x ready", "callback"}));
}

// A nested backward that throws (caught by the hook that started it) keeps what it queued: the
// callbacks run with the outer backward's, in order. Their owners (DistributedDataParallel,
// ParameterOffload) queue one per outer backward and would not queue it again.
TEST(EndOfBackwardCallbacks, ANestedBackwardThatThrowsKeepsWhatItQueued) {
  Tensor x = leaf({1, 2});
  Tensor z = leaf({3});
  std::vector<std::string> events;
  z.register_hook([&](const Tensor& g) -> Tensor {
    autograd::queue_callback([&] { events.push_back("the failed nested backward's"); });
    throw Error("z's hook fails", __FILE__, __LINE__);
    return g;
  });
  x.register_hook([&](const Tensor& g) {
    autograd::queue_callback([&] { events.push_back("the outer backward's"); });
    autograd::GradModeGuard enable(true);
    try {
      (z * 2.0).sum().backward();
    } catch (const Error&) {
      events.push_back("nested backward failed");
    }
    return g;
  });
  (x * 3.0).sum().backward();
  EXPECT_EQ(events, (std::vector<std::string>{"nested backward failed", "the outer backward's",
                                              "the failed nested backward's"}));
}

TEST(EndOfBackwardCallbacks, ABackwardThatThrowsDropsThem) {
  Tensor x = leaf({1, 2});
  Tensor w = leaf({3, 4});
  int calls = 0;
  w.register_post_accumulate_grad_hook(
      [&](const Tensor&) { autograd::queue_callback([&] { ++calls; }); });
  Tensor y = x.exp();
  Tensor z = (y * w).sum();
  {
    NoGradGuard no_grad;
    y.mul_(2.0);  // modifies what ExpBackward saved: it throws, after w's hook queued its callback
  }
  EXPECT_THROW(z.backward(), Error);
  EXPECT_EQ(calls, 0);
  (w * 2.0).sum().backward();  // the next backward has a list of its own
  EXPECT_EQ(calls, 1);
}

TEST(EndOfBackwardCallbacks, ACallbackThatThrowsEndsBackwardWithItsError) {
  Tensor x = leaf({1, 2});
  x.register_post_accumulate_grad_hook([&](const Tensor&) {
    autograd::queue_callback([] { LG_THROW(Error, "the callback failed"); });
  });
  EXPECT_NE(error_message([&] { x.sum().backward(); }).find("the callback failed"),
            std::string::npos);
}

}  // namespace
}  // namespace leangrad
