// Tests of what runs around a module call (nn/module.h, Note [Module call]): forward pre-hooks and
// hooks in order through nested containers, their removal, and the forward wrapper, checked with
// autograd::checkpoint against the same model without a wrapper.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include <leangrad/autograd/checkpoint.h>
#include <leangrad/autograd/functions.h>
#include <leangrad/core/error.h>
#include <leangrad/core/generator.h>
#include <leangrad/kernels/creation.h>
#include <leangrad/nn/activation.h>
#include <leangrad/nn/container.h>
#include <leangrad/nn/linear.h>
#include "testing/tensor_testing.h"

namespace leangrad {
namespace {

nn::Sequential small_mlp() {
  manual_seed(3);
  return nn::Sequential(nn::Linear(6, 5), nn::TanhExp(), nn::Linear(5, 2));
}

TEST(ModuleHooks, RunInCallOrderThroughContainers) {
  auto mlp = small_mlp();
  std::vector<std::string> events;
  for (std::size_t i = 0; i < mlp->size(); ++i) {
    const std::string name = std::to_string(i);
    (*mlp)[i]->register_forward_pre_hook(
        [&events, name](nn::Module&, const Tensor&) { events.push_back("pre " + name); });
    (*mlp)[i]->register_forward_hook(
        [&events, name](nn::Module&, const Tensor& in, const Tensor& out) {
          events.push_back("post " + name + " " + std::to_string(in.shape()[1]) + "->" +
                           std::to_string(out.shape()[1]));
        });
  }
  mlp->register_forward_pre_hook(
      [&](nn::Module& m, const Tensor&) { events.push_back("pre " + m.name()); });
  (*mlp)(randn({3, 6}));
  const std::vector<std::string> expected = {"pre Sequential", "pre 0", "post 0 6->5", "pre 1",
                                             "post 1 5->5",    "pre 2", "post 2 5->2"};
  EXPECT_EQ(events, expected);

  // forward() is the computation alone: no hooks, as in PyTorch.
  events.clear();
  (*mlp)[0]->forward(randn({3, 6}));
  EXPECT_TRUE(events.empty());
}

TEST(ModuleHooks, RemoveTakesTheHookOffAndIsSafeTwiceOrAfterTheModule) {
  nn::Linear linear(4, 4);
  int calls = 0;
  nn::HookHandle handle =
      linear->register_forward_hook([&](nn::Module&, const Tensor&, const Tensor&) { ++calls; });
  (*linear)(randn({2, 4}));
  EXPECT_EQ(calls, 1);
  handle.remove();
  (*linear)(randn({2, 4}));
  EXPECT_EQ(calls, 1);
  handle.remove();

  // A hook that removes itself runs this once, not again.
  nn::HookHandle self_removing;
  self_removing = linear->register_forward_pre_hook([&](nn::Module&, const Tensor&) {
    ++calls;
    self_removing.remove();
  });
  (*linear)(randn({2, 4}));
  (*linear)(randn({2, 4}));
  EXPECT_EQ(calls, 2);

  nn::HookHandle orphan = linear->register_forward_pre_hook([](nn::Module&, const Tensor&) {});
  linear = nullptr;
  orphan.remove();  // the module is gone: nothing to do, no crash
}

TEST(ModuleHooks, EmptyHookIsAnError) {
  nn::Linear linear(2, 2);
  try {
    linear->register_forward_hook(nullptr);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("Linear: register_forward_hook got an empty function"),
              std::string::npos)
        << e.what();
  }
}

// A checkpoint wrapper on the middle of the model: the same outputs and bitwise the same
// gradients as without it, the wrapped module's hooks run again during the recompute, and
// removing the wrapper restores the plain call.
TEST(ModuleForwardWrapper, CheckpointWrapperRecomputesWithHooksAndSameGradients) {
  const Tensor x = (manual_seed(5), randn({4, 6}));
  auto plain = small_mlp();
  const Tensor plain_loss = (*plain)(x).pow(2.0).sum();
  plain_loss.backward();

  auto wrapped = small_mlp();  // same seed: same parameters
  int forward_calls = 0;
  auto middle = (*wrapped)[1];
  middle->register_forward_pre_hook([&](nn::Module&, const Tensor&) { ++forward_calls; });
  middle->set_forward_wrapper([](const Tensor& input, const nn::ForwardCall& call) {
    return autograd::checkpoint(
        [call](const std::vector<Tensor>& in) { return std::vector<Tensor>{call(in[0])}; },
        {input})[0];
  });
  EXPECT_TRUE(middle->has_forward_wrapper());
  const Tensor wrapped_loss = (*wrapped)(x).pow(2.0).sum();
  EXPECT_EQ(forward_calls, 1);
  wrapped_loss.backward();
  EXPECT_EQ(forward_calls, 2);  // the recompute ran the hook again

  EXPECT_EQ(test::to_vector(wrapped_loss), test::to_vector(plain_loss));  // bitwise
  const auto p = plain->named_parameters();
  const auto w = wrapped->named_parameters();
  ASSERT_EQ(p.size(), w.size());
  for (std::size_t i = 0; i < p.size(); ++i)
    EXPECT_EQ(test::to_vector(w[i].second.grad()), test::to_vector(p[i].second.grad()))
        << p[i].first;

  middle->set_forward_wrapper(nullptr);
  EXPECT_FALSE(middle->has_forward_wrapper());
  (*wrapped)(x);
  EXPECT_EQ(forward_calls, 3);
}

}  // namespace
}  // namespace leangrad
