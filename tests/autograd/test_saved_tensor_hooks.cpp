// Saved-tensor hooks: every saved tensor passes through pack exactly once and through unpack at
// backward; the innermost guard applies; a guard closed out of order or on another thread takes off
// its own hooks only; an identity round trip changes nothing, bit for bit; an unpacked tensor may
// have other strides than the saved one.
#include <gtest/gtest.h>

#include <any>
#include <cmath>
#include <memory>
#include <thread>
#include <vector>

#include <leangrad/autograd/functions.h>
#include <leangrad/autograd/grad_mode.h>
#include <leangrad/autograd/saved_tensor.h>
#include <leangrad/core/generator.h>
#include <leangrad/kernels/creation.h>
#include "testing/tensor_testing.h"

namespace leangrad {
namespace {

struct Counting {
  int packs = 0;
  int unpacks = 0;
  autograd::PackHook pack() {
    return [this](const Tensor& t) -> std::any {
      ++packs;
      return t.clone();  // the hook owns a copy, as an offloading hook would
    };
  }
  autograd::UnpackHook unpack() {
    return [this](const std::any& packed) {
      ++unpacks;
      return std::any_cast<Tensor>(packed);
    };
  }
};

// y = sum(exp(x * w)): mul saves x and w, exp saves its output, sum saves nothing.
Tensor small_graph(const Tensor& x, const Tensor& w) {
  return exp(x * w).sum();
}

TEST(SavedTensorHooks, EverySavedTensorIsPackedOnceAndUnpackedAtBackward) {
  Tensor x = test::make_tensor({0.1, 0.2, 0.3}, {3}, kFloat64).requires_grad_();
  Tensor w = test::make_tensor({1, -2, 3}, {3}, kFloat64).requires_grad_();
  Counting counting;
  Tensor y;
  {
    autograd::SavedTensorHooksGuard guard(counting.pack(), counting.unpack());
    EXPECT_EQ(autograd::saved_tensor_hooks_depth(), 1);
    y = small_graph(x, w);
  }
  EXPECT_EQ(autograd::saved_tensor_hooks_depth(), 0);
  EXPECT_EQ(counting.packs, 3);
  EXPECT_EQ(counting.unpacks, 0);
  y.backward(Tensor(), /*retain_graph=*/true);
  EXPECT_EQ(counting.unpacks, 3);
  y.backward();  // a retained graph unpacks again
  EXPECT_EQ(counting.unpacks, 6);
  EXPECT_EQ(counting.packs, 3);
}

TEST(SavedTensorHooks, IdentityRoundTripGivesBitwiseEqualGradients) {
  manual_seed(4);
  Tensor x = randn({16, 8}, kFloat32).requires_grad_();
  Tensor w = randn({8, 4}, kFloat32).requires_grad_();
  auto loss = [&] { return sigmoid(matmul(tanh(x), w)).mean(); };
  loss().backward();
  const auto gx = test::to_vector(x.grad());
  const auto gw = test::to_vector(w.grad());
  x.set_grad(Tensor());
  w.set_grad(Tensor());
  Counting counting;
  Tensor y;
  {
    autograd::SavedTensorHooksGuard guard(counting.pack(), counting.unpack());
    y = loss();
  }
  y.backward();
  EXPECT_GT(counting.packs, 0);
  EXPECT_EQ(counting.packs, counting.unpacks);
  EXPECT_EQ(test::to_vector(x.grad()), gx);
  EXPECT_EQ(test::to_vector(w.grad()), gw);
}

TEST(SavedTensorHooks, InnermostGuardApplies) {
  Tensor x = test::make_tensor({1, 2}, {2}, kFloat64).requires_grad_();
  Counting outer, inner;
  Tensor a, b;
  {
    autograd::SavedTensorHooksGuard outer_guard(outer.pack(), outer.unpack());
    a = x * x;  // saves x twice through the outer hooks
    {
      autograd::SavedTensorHooksGuard inner_guard(inner.pack(), inner.unpack());
      EXPECT_EQ(autograd::saved_tensor_hooks_depth(), 2);
      b = exp(x);  // saves its output through the inner hooks only
    }
  }
  EXPECT_EQ(outer.packs, 2);
  EXPECT_EQ(inner.packs, 1);
  (a + b).sum().backward();
  EXPECT_EQ(outer.unpacks, 2);
  EXPECT_EQ(inner.unpacks, 1);
  EXPECT_TRUE(test::all_close(x.grad(), {2 + std::exp(1.0), 4 + std::exp(2.0)}, 1e-12, 0));
}

TEST(SavedTensorHooks, VersionCheckStillAppliesToPackedTensors) {
  Tensor x = test::make_tensor({1, 2}, {2}, kFloat64).requires_grad_();
  Counting counting;
  Tensor h = x * 1.0;
  Tensor y;
  {
    autograd::SavedTensorHooksGuard guard(counting.pack(), counting.unpack());
    y = (h * h).sum();
  }
  {
    NoGradGuard no_grad;
    h.mul_(3.0);  // h was saved (packed as a copy), then changed: backward must refuse
  }
  EXPECT_THROW(y.backward(), Error);
}

// The unpacked tensor must have the saved shape, dtype and device (the misuse suite checks the
// refusals), not its strides: SaveOnCpu gives back a contiguous copy of a strided tensor.
TEST(SavedTensorHooks, UnpackMayReturnOtherStrides) {
  const std::vector<double> xs{1, 2, 3, 4, 5, 6}, ws{0.5, -1, 2, 0.25, 1, 3, -2, 0.5};
  Tensor x = test::make_tensor(xs, {3, 2}, kFloat64).requires_grad_();
  Tensor w = test::make_tensor(ws, {2, 4}, kFloat64).requires_grad_();
  Tensor y;
  {
    // Keeps the transpose, contiguous; gives back its transpose: the saved shape, other strides.
    autograd::SavedTensorHooksGuard guard(
        [](const Tensor& t) -> std::any { return t.transpose(0, 1).contiguous(); },
        [](const std::any& packed) { return std::any_cast<Tensor>(packed).transpose(0, 1); });
    y = matmul(x, w).sum();  // saves x and w
  }
  y.backward();
  // d sum(x w) / dx[i][k] = sum_j w[k][j], d / dw[k][j] = sum_i x[i][k].
  std::vector<double> gx(6), gw(8);
  for (int i = 0; i < 3; ++i)
    for (int k = 0; k < 2; ++k)
      for (int j = 0; j < 4; ++j) {
        gx[i * 2 + k] += ws[k * 4 + j];
        gw[k * 4 + j] += xs[i * 2 + k];
      }
  EXPECT_TRUE(test::all_close(x.grad(), gx, 1e-12, 0));
  EXPECT_TRUE(test::all_close(w.grad(), gw, 1e-12, 0));
}

// Note [Closing a guard]: a guard that dies before one made after it takes off its own hooks, not
// the later guard's (which would leave the dead guard's pack applied).
TEST(SavedTensorHooks, AGuardClosedOutOfOrderTakesOffItsOwnHooks) {
  Counting outer, inner;
  auto first = std::make_unique<autograd::SavedTensorHooksGuard>(outer.pack(), outer.unpack());
  auto second = std::make_unique<autograd::SavedTensorHooksGuard>(inner.pack(), inner.unpack());
  first.reset();
  EXPECT_EQ(autograd::saved_tensor_hooks_depth(), 1);
  const Tensor x = randn({3}).requires_grad_(true);
  const Tensor y = exp(x).sum();  // exp saves its output
  EXPECT_EQ(inner.packs, 1);
  EXPECT_EQ(outer.packs, 0);
  second.reset();
  EXPECT_EQ(autograd::saved_tensor_hooks_depth(), 0);
  exp(x).sum().backward();
  EXPECT_EQ(inner.packs, 1);
  y.backward();
  EXPECT_EQ(inner.unpacks, 1);
}

// A guard handed to another thread and closed there: it crashed (pop_back of that thread's empty
// stack); now its hooks stop applying on the thread that made it, and that thread's other guards
// stay.
TEST(SavedTensorHooks, AGuardClosedOnAnotherThreadStopsApplying) {
  Counting outer, moved;
  autograd::SavedTensorHooksGuard stays(outer.pack(), outer.unpack());
  auto guard = std::make_unique<autograd::SavedTensorHooksGuard>(moved.pack(), moved.unpack());
  std::thread([&guard] {
    guard.reset();
    EXPECT_EQ(autograd::saved_tensor_hooks_depth(), 0);
  }).join();
  EXPECT_EQ(autograd::saved_tensor_hooks_depth(), 1);
  const Tensor x = randn({3}).requires_grad_(true);
  exp(x).sum().backward();
  EXPECT_EQ(moved.packs, 0);
  EXPECT_EQ(outer.packs, 1);
  EXPECT_EQ(outer.unpacks, 1);
}

TEST(SavedTensorHooks, GuardRequiresBothHooks) {
  EXPECT_THROW(autograd::SavedTensorHooksGuard(nullptr, nullptr), Error);
}

}  // namespace
}  // namespace leangrad
