// autograd::checkpoint: gradients bitwise equal to plain backward (with random masks replayed),
// lower peak memory, nesting, parameters-only segments, and composition with saved-tensor hooks.
#include <gtest/gtest.h>

#include <cmath>

#include <leangrad/autograd/checkpoint.h>
#include <leangrad/autograd/functions.h>
#include <leangrad/autograd/grad_mode.h>
#include <leangrad/autograd/saved_tensor.h>
#include <leangrad/core/generator.h>
#include <leangrad/core/memory.h>
#include <leangrad/kernels/creation.h>
#include "testing/tensor_testing.h"

namespace leangrad {
namespace {

struct Mlp {
  std::vector<Tensor> weights, biases;
  Mlp(int layers, std::int64_t width, std::uint64_t seed) {
    manual_seed(seed);
    for (int i = 0; i < layers; ++i) {
      weights.push_back(
          (randn({width, width}) * (1.0 / std::sqrt(double(width)))).requires_grad_());
      biases.push_back((randn({width}) * 0.1).requires_grad_());
    }
  }
  // One layer: dropout-like random mask, then tanh(x W + b).
  Tensor layer(const Tensor& x, int i, bool random_mask) const {
    Tensor h = x;
    if (random_mask) h = h * gt(rand(x.shape()), 0.1) * (1.0 / 0.9);
    return tanh(matmul(h, weights[i]) + biases[i]);
  }
  Tensor forward(Tensor x, bool random_mask, int segment) const {
    const int layers = static_cast<int>(weights.size());
    for (int start = 0; start < layers; start += segment) {
      auto run = [this, start, segment, layers, random_mask](const std::vector<Tensor>& in) {
        Tensor h = in[0];
        for (int i = start; i < std::min(start + segment, layers); ++i)
          h = layer(h, i, random_mask);
        return std::vector<Tensor>{h};
      };
      x = autograd::checkpoint(run, {x})[0];
    }
    return x;
  }
  Tensor forward_plain(Tensor x, bool random_mask) const {
    for (int i = 0; i < static_cast<int>(weights.size()); ++i)
      x = layer(x, i, random_mask);
    return x;
  }
  void zero_grad() {
    for (auto& w : weights)
      w.set_grad(Tensor());
    for (auto& b : biases)
      b.set_grad(Tensor());
  }
};

std::vector<std::vector<double>> grads_of(const Mlp& mlp, const Tensor& x) {
  std::vector<std::vector<double>> out;
  for (const auto& w : mlp.weights)
    out.push_back(test::to_vector(w.grad()));
  for (const auto& b : mlp.biases)
    out.push_back(test::to_vector(b.grad()));
  out.push_back(test::to_vector(x.grad()));
  return out;
}

TEST(Checkpoint, GradientsBitwiseEqualToPlainBackwardWithRandomMasks) {
  Mlp mlp(8, 16, 3);
  Tensor x = randn({5, 16}).requires_grad_();

  manual_seed(11);
  mlp.forward_plain(x, /*random_mask=*/true).sum().backward();
  const auto plain = grads_of(mlp, x);
  const auto rng_after_plain = default_generator(Device::cpu()).state();

  mlp.zero_grad();
  x.set_grad(Tensor());
  manual_seed(11);
  mlp.forward(x, /*random_mask=*/true, /*segment=*/3).sum().backward();
  EXPECT_EQ(grads_of(mlp, x), plain);  // bitwise
  // The recompute replays the random numbers and then restores the generator.
  EXPECT_EQ(default_generator(Device::cpu()).state().offset, rng_after_plain.offset);
}

TEST(Checkpoint, SegmentsCutPeakMemoryAtLeastInHalf) {
  Mlp mlp(32, 32, 5);
  const Tensor x = randn({1024, 32});  // activations (1024 x 32) dominate the parameters
  auto peak_increase = [&](int segment) {
    mlp.zero_grad();
    const std::int64_t before = memory::stats(kCPU).allocated;
    memory::reset_peak(kCPU);
    {
      Tensor loss =
          segment > 0 ? mlp.forward(x, false, segment).sum() : mlp.forward_plain(x, false).sum();
      loss.backward();
    }
    return memory::stats(kCPU).peak_allocated - before;
  };
  const std::int64_t plain = peak_increase(0);
  const std::int64_t checkpointed = peak_increase(4);
  EXPECT_GE(plain, 2 * checkpointed)
      << "plain " << plain << " B, checkpointed " << checkpointed << " B";
}

TEST(Checkpoint, NestedCheckpointsGiveTheSameGradients) {
  Tensor x = test::make_tensor({0.5, -1, 2}, {3}, kFloat64).requires_grad_();
  Tensor w = test::make_tensor({1.5, 0.25, -0.5}, {3}, kFloat64).requires_grad_();
  auto inner = [&](const std::vector<Tensor>& in) { return std::vector<Tensor>{tanh(in[0] * w)}; };
  auto outer = [&](const std::vector<Tensor>& in) {
    Tensor h = autograd::checkpoint(inner, {in[0]})[0];
    return std::vector<Tensor>{exp(h) * in[0]};
  };
  autograd::checkpoint(outer, {x})[0].sum().backward();
  const auto gx = test::to_vector(x.grad());
  const auto gw = test::to_vector(w.grad());
  x.set_grad(Tensor());
  w.set_grad(Tensor());
  (exp(tanh(x * w)) * x).sum().backward();
  EXPECT_EQ(gx, test::to_vector(x.grad()));
  EXPECT_EQ(gw, test::to_vector(w.grad()));
}

TEST(Checkpoint, ParametersGetGradientsWhenInputsDoNot) {
  Tensor w = test::make_tensor({2, 3}, {2}, kFloat64).requires_grad_();
  Tensor x = test::make_tensor({5, 7}, {2}, kFloat64);  // no grad
  Tensor y = autograd::checkpoint(
      [&](const std::vector<Tensor>& in) { return std::vector<Tensor>{in[0] * w}; }, {x})[0];
  ASSERT_TRUE(y.requires_grad());
  y.sum().backward();
  EXPECT_TRUE(test::all_close(w.grad(), {5, 7}));
  EXPECT_FALSE(x.grad().defined());
}

// A segment may return a tensor it did not make (a captured parameter): the caller's tensor
// stays as it was (a leaf), and backward ends (it recursed into the checkpoint without end).
TEST(Checkpoint, ASegmentReturningACapturedParameter) {
  Tensor w = test::make_tensor({2, 3}, {2}, kFloat64).requires_grad_();
  Tensor x = test::make_tensor({5, 7}, {2}, kFloat64).requires_grad_();
  const std::vector<Tensor> out = autograd::checkpoint(
      [&](const std::vector<Tensor>& in) {
        return std::vector<Tensor>{in[0] * w, w};
      },
      {x});
  EXPECT_TRUE(w.is_leaf());
  (out[0].sum() + out[1].sum()).backward();
  EXPECT_TRUE(test::all_close(w.grad(), {6, 8}));  // x + 1
  EXPECT_TRUE(test::all_close(x.grad(), {2, 3}));
}

// A recompute that computes something else than the forward did is an Error naming the output,
// and the generators are back where they were after it, even though it threw.
TEST(Checkpoint, ARecomputeThatDiffersOrThrowsIsAnErrorAndKeepsTheGenerators) {
  Tensor x = test::make_tensor({1, 2, 3}, {3}, kFloat64).requires_grad_();
  int calls = 0;
  Tensor y = autograd::checkpoint(
      [&](const std::vector<Tensor>& in) {
        return std::vector<Tensor>{++calls == 1 ? in[0].slice(0, 0, 1) * 2.0 : in[0] * 2.0};
      },
      {x})[0];
  try {
    y.sum().backward();
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("output 0 of the recomputed segment has shape [3]"),
              std::string::npos)
        << e.what();
  }
  manual_seed(3);
  Tensor z = autograd::checkpoint(
      [&](const std::vector<Tensor>& in) -> std::vector<Tensor> {
        // The recompute fails before it draws: the generator would stay at the forward's
        // snapshot, and the next draw repeat the forward's mask.
        if (autograd::grad_mode_enabled()) throw Error("the recompute fails", __FILE__, __LINE__);
        return {in[0].sum() * rand({4})};
      },
      {x})[0];
  rand({2});  // the caller draws on after the forward
  Generator& gen = default_generator(Device::cpu());
  const Generator::State after_forward = gen.state();
  const std::vector<double> next = test::to_vector(rand({4}));  // the draw after the forward
  gen.set_state(after_forward);
  EXPECT_THROW(z.sum().backward(), Error);  // the recompute rewinds the generator, then throws
  EXPECT_EQ(test::to_vector(rand({4})), next);
}

TEST(Checkpoint, OnlyTheInputsGoThroughPackHooks) {
  int packs = 0;
  Tensor x = test::make_tensor({1, 2, 3}, {3}, kFloat64).requires_grad_();
  Tensor y;
  {
    autograd::SavedTensorHooksGuard guard(
        [&](const Tensor& t) -> std::any {
          ++packs;
          return t;
        },
        [](const std::any& a) { return std::any_cast<Tensor>(a); });
    y = autograd::checkpoint(
        [](const std::vector<Tensor>& in) {
          return std::vector<Tensor>{exp(in[0]) * in[0]};  // would save 3 tensors unchecked
        },
        {x})[0];
  }
  EXPECT_EQ(packs, 1);  // the segment's one input
  y.sum().backward();
  EXPECT_TRUE(test::all_close(x.grad(), {std::exp(1.0) * 2, std::exp(2.0) * 3, std::exp(3.0) * 4},
                              1e-12, 0));
}

TEST(Checkpoint, WithoutGradModeItIsAPlainCall) {
  NoGradGuard no_grad;
  Tensor x = test::make_tensor({1, 2}, {2}, kFloat64).requires_grad_();
  Tensor y = autograd::checkpoint(
      [](const std::vector<Tensor>& in) { return std::vector<Tensor>{in[0] * 2.0}; }, {x})[0];
  EXPECT_FALSE(y.requires_grad());
}

}  // namespace
}  // namespace leangrad
