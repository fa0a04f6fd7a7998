// ZeroRedundancyOptimizer in one process (a group of one, no launcher): the partition, steps and
// state dicts bitwise the wrapped optimizer's, and the errors. Several ranks:
// test_zero_multiprocess.cpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <random>
#include <utility>

#include <leangrad/autograd/nn_functions.h>
#include <leangrad/core/generator.h>
#include <leangrad/distributed/distributed.h>
#include <leangrad/distributed/zero_redundancy_optimizer.h>
#include <leangrad/kernels/creation.h>
#include <leangrad/nn/nn.h>
#include <leangrad/optim/optim.h>
#include "distributed/launch.h"
#include "testing/tensor_testing.h"

namespace leangrad::distributed {
namespace {

// Sizes 10, 40, 30, 20, 5 over two ranks, largest first to the least loaded (rank 0 on a tie):
// 40 -> 0; 30 -> 1; 20 -> 1 (30 < 40); 10 -> 0 (40 < 50); 5 -> 0 (50 = 50).
TEST(ZeroPartition, LargestFirstToTheLeastLoadedRank) {
  EXPECT_EQ(partition_parameters({10, 40, 30, 20, 5}, 2), (std::vector<int>{0, 0, 1, 1, 0}));
  EXPECT_EQ(partition_parameters({10, 40, 30}, 1), (std::vector<int>{0, 0, 0}));
  EXPECT_EQ(partition_parameters({}, 3), std::vector<int>{});
  // More ranks than parameters: one each, the rest own none.
  EXPECT_EQ(partition_parameters({7, 9}, 4), (std::vector<int>{1, 0}));
}

// Greedy assignment to the least loaded rank keeps every rank within one parameter of the others:
// max load - min load <= the largest size.
TEST(ZeroPartition, LoadsDifferByAtMostTheLargestParameter) {
  std::mt19937_64 rng(11);
  for (int trial = 0; trial < 200; ++trial) {
    const int world = 1 + static_cast<int>(rng() % 6);
    std::vector<std::int64_t> sizes(1 + rng() % 40);
    for (std::int64_t& s : sizes)
      s = 1 + static_cast<std::int64_t>(rng() % 100000);
    const std::vector<int> owner = partition_parameters(sizes, world);
    std::vector<std::int64_t> load(world, 0);
    for (std::size_t i = 0; i < sizes.size(); ++i) {
      ASSERT_GE(owner[i], 0);
      ASSERT_LT(owner[i], world);
      load[owner[i]] += sizes[i];
    }
    EXPECT_LE(
        *std::max_element(load.begin(), load.end()) - *std::min_element(load.begin(), load.end()),
        *std::max_element(sizes.begin(), sizes.end()));
  }
  EXPECT_THROW_MSG(partition_parameters({1}, 0), "world_size must be positive, got 0");
}

class ZeroOneProcess : public test::GroupOfOneTest {};

std::shared_ptr<nn::Module> mlp() {  // (N, 6) -> (N, 3)
  manual_seed(3);
  return nn::Sequential(nn::Linear(6, 8), nn::Tanh(), nn::Linear(8, 3));
}

void train_step(nn::Module& model, optim::Optimizer& opt, int step) {
  manual_seed(40 + static_cast<std::uint64_t>(step));
  const Tensor x = randn({5, 6});
  opt.zero_grad();
  cross_entropy(model.forward(x), test::make_tensor({0, 1, 2, 1, 0}, {5}, kInt64)).backward();
  opt.step();
}

// In a group of one every parameter is this rank's: the steps, the states and the state dict are
// the wrapped optimizer's, bitwise, and that dict loads back.
TEST_F(ZeroOneProcess, AGroupOfOneIsTheWrappedOptimizer) {
  auto plain_model = mlp();
  auto zero_model = mlp();
  const OptimizerFactory make = optimizer_class<optim::AdamW>(optim::AdamWOptions(1e-2));
  std::unique_ptr<optim::Optimizer> plain = make({optim::ParamGroup(plain_model->parameters())});
  ZeroRedundancyOptimizer zero(zero_model->parameters(), make);
  for (std::size_t i = 0; i < zero.num_params(); ++i)
    EXPECT_EQ(zero.owner(i), 0);
  for (int step = 0; step < 3; ++step) {
    train_step(*plain_model, *plain, step);
    train_step(*zero_model, zero, step);
  }
  const auto ours = zero_model->parameters(), theirs = plain_model->parameters();
  for (std::size_t i = 0; i < ours.size(); ++i)
    EXPECT_EQ(test::to_vector(ours[i]), test::to_vector(theirs[i])) << "parameter " << i;
  const NamedTensors a = zero.state_dict(), b = plain->state_dict();
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t k = 0; k < a.size(); ++k) {
    EXPECT_EQ(a[k].first, b[k].first);
    EXPECT_EQ(test::to_vector(a[k].second), test::to_vector(b[k].second)) << a[k].first;
  }
  ZeroRedundancyOptimizer loaded(mlp()->parameters(), make);
  loaded.load_state_dict(b);
  EXPECT_EQ(loaded.state(0).step, 3);
  EXPECT_EQ(test::to_vector(loaded.state(0).at("exp_avg")),
            test::to_vector(plain->state(0).at("exp_avg")));
  EXPECT_EQ(zero.repr(),
            "ZeroRedundancyOptimizer(world_size=1, rank=0, owns 4 of 4 parameters, 83 of 83 "
            "elements)");  // 6 x 8 + 8 + 8 x 3 + 3
}

// A bfloat16 model (docs/optimizers.md "float16 and bfloat16 parameters"): in a group of one the
// steps and states are the wrapped optimizer's, bitwise, and the states bfloat16.
TEST_F(ZeroOneProcess, BFloat16ParametersStepAsTheWrappedOptimizer) {
  auto plain_model = mlp();
  auto zero_model = mlp();
  plain_model->to(kBFloat16);
  zero_model->to(kBFloat16);
  const OptimizerFactory make = optimizer_class<optim::Adam>(optim::AdamOptions(1e-2));
  std::unique_ptr<optim::Optimizer> plain = make({optim::ParamGroup(plain_model->parameters())});
  ZeroRedundancyOptimizer zero(zero_model->parameters(), make);
  for (int step = 0; step < 3; ++step) {
    for (auto [model, opt] :
         {std::pair<nn::Module*, optim::Optimizer*>{plain_model.get(), plain.get()},
          {zero_model.get(), &zero}}) {
      manual_seed(60 + static_cast<std::uint64_t>(step));
      const Tensor x = randn({5, 6}).to(kBFloat16);
      opt->zero_grad();
      model->forward(x).to(kFloat32).square().sum().backward();
      opt->step();
    }
  }
  const auto ours = zero_model->parameters(), theirs = plain_model->parameters();
  for (std::size_t i = 0; i < ours.size(); ++i) {
    EXPECT_EQ(ours[i].dtype(), kBFloat16);
    EXPECT_EQ(test::to_vector(ours[i]), test::to_vector(theirs[i])) << "parameter " << i;
    EXPECT_EQ(zero.state(i).at("exp_avg").dtype(), kBFloat16);
    EXPECT_EQ(test::to_vector(zero.state(i).at("exp_avg_sq")),
              test::to_vector(plain->state(i).at("exp_avg_sq")));
  }
}

// The groups take the wrapped optimizer's defaults, and a scheduler's learning rate reaches the
// step (the wrapped optimizer's own groups are not used).
TEST_F(ZeroOneProcess, GroupsTakeTheWrappedDefaultsAndSchedulersDriveThem) {
  auto model = mlp();
  auto params = model->parameters();
  ZeroRedundancyOptimizer zero(
      std::vector<optim::ParamGroup>{optim::ParamGroup({params[0], params[1]}),
                                     optim::ParamGroup({params[2], params[3]}, 0.5)},
      optimizer_class<optim::SGD>(optim::SGDOptions(0.1).weight_decay(0.01)));
  ASSERT_EQ(zero.param_groups().size(), 2u);
  EXPECT_EQ(*zero.param_groups()[0].lr, 0.1);
  EXPECT_EQ(*zero.param_groups()[1].lr, 0.5);
  EXPECT_EQ(*zero.param_groups()[1].weight_decay, 0.01);
  zero.param_groups()[0].options().lr(0.0);
  zero.param_groups()[1].options().lr(0.0).weight_decay(0.0);
  const std::vector<double> before = test::to_vector(params[0]);
  train_step(*model, zero, 0);
  EXPECT_EQ(test::to_vector(params[0]), before) << "a learning rate of 0 moved the parameter";
}

TEST_F(ZeroOneProcess, MisuseIsAnError) {
  auto params = mlp()->parameters();
  EXPECT_THROW_MSG(ZeroRedundancyOptimizer(params, OptimizerFactory()),
                   "ZeroRedundancyOptimizer: the optimizer factory is empty");
  EXPECT_THROW_MSG(ZeroRedundancyOptimizer(params,
                                           [](std::vector<optim::ParamGroup>) {
                                             return std::unique_ptr<optim::Optimizer>();
                                           }),
                   "ZeroRedundancyOptimizer: the optimizer factory returned null");
  EXPECT_THROW_MSG(
      ZeroRedundancyOptimizer(params, optimizer_class<optim::Adam>(optim::AdamOptions()),
                              ZeroOptions().bucket_cap_mb(0)),
      "ZeroRedundancyOptimizer: bucket_cap_mb must be positive, got 0");
  // The wrapped optimizer's own checks.
  EXPECT_THROW_MSG(
      ZeroRedundancyOptimizer({zeros({4}, TensorOptions(kFloat64).requires_grad(true))},
                              optimizer_class<optim::Adam8bit>(optim::Adam8bitOptions())),
      "Adam8bit: parameter 0 must be float32, got float64");
  EXPECT_THROW_MSG(ZeroRedundancyOptimizer(params, optimizer_class<optim::Adam>(
                                                       optim::AdamOptions().betas({1.5, 0.9}))),
                   "Adam: invalid betas (1.5, 0.9)");

  ZeroRedundancyOptimizer zero(params, optimizer_class<optim::Adam>(optim::AdamOptions()));
  EXPECT_THROW_MSG(
      zero.add_param_group(optim::ParamGroup({zeros({2}, TensorOptions().requires_grad(true))})),
      "ZeroRedundancyOptimizer: add_param_group is not supported");
  EXPECT_EQ(zero.num_params(), params.size()) << "the refused group was added";
  EXPECT_THROW_MSG(zero.consolidate_state_dict(1),
                   "consolidate_state_dict: rank 1 is not in the group of 1");
  EXPECT_THROW_MSG(zero.owner(4), "owner: parameter 4 out of range (4 parameters)");
  // A state of another shape than its parameter's.
  NamedTensors bad = {{"state.0.step", full({}, 1.0, kInt64)},
                      {"state.0.exp_avg", zeros({3})},
                      {"state.0.exp_avg_sq", zeros({3})}};
  EXPECT_THROW_MSG(zero.load_state_dict(bad),
                   "load_state_dict: 'state.0.exp_avg' (shape [3]) is "
                   "not a state of parameter 0 (shape [8, 6])");
}

TEST(ZeroWithoutGroup, NeedsAProcessGroup) {
  ASSERT_FALSE(is_initialized());
  EXPECT_THROW(ZeroRedundancyOptimizer(mlp()->parameters(),
                                       optimizer_class<optim::Adam>(optim::AdamOptions())),
               Error);
}

}  // namespace
}  // namespace leangrad::distributed
