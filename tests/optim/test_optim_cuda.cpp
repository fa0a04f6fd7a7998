// CUDA against CPU for every optimizer and clip_grad_norm_, one table of cases: the same
// parameters and gradients on both devices, 12 steps (past RAdam's
// rectification threshold), parameters and float states compared. SKIPPED without a GPU.
#include <gtest/gtest.h>

#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "core/cuda.h"
#include "core/generator.h"
#include "kernels/creation.h"
#include "optim/optim.h"
#include "testing/tensor_testing.h"

namespace leangrad {
namespace {

using MakeOptimizer = std::function<std::unique_ptr<optim::Optimizer>(std::vector<Tensor>)>;

struct OptimCase {
  std::string name;
  MakeOptimizer make;
};

// How GoogleTest prints a case (in test listings and failures).
void PrintTo(const OptimCase& c, std::ostream* out) {
  *out << c.name;
}

std::vector<optim::ParamGroup> two_groups(const std::vector<Tensor>& p) {
  return {optim::ParamGroup({p[0], p[1]}), optim::ParamGroup({p[2], p[3]}, 0.003, 0.05)};
}

std::vector<OptimCase> optim_cases() {
  return {
      {"sgd_nesterov",
       [](std::vector<Tensor> p) {
         return std::make_unique<optim::SGD>(
             two_groups(p),
             optim::SGDOptions(0.05).momentum(0.9).nesterov(true).weight_decay(0.01));
       }},
      {"sgd_plain",
       [](std::vector<Tensor> p) {
         return std::make_unique<optim::SGD>(p, optim::SGDOptions(0.05));
       }},
      {"adam_amsgrad",
       [](std::vector<Tensor> p) {
         return std::make_unique<optim::Adam>(
             two_groups(p), optim::AdamOptions(0.01).amsgrad(true).weight_decay(0.1));
       }},
      {"adamw",
       [](std::vector<Tensor> p) {
         return std::make_unique<optim::AdamW>(p, optim::AdamWOptions(0.01));
       }},
      {"radam",
       [](std::vector<Tensor> p) {
         return std::make_unique<optim::RAdam>(
             p, optim::RAdamOptions(0.01).betas({0.9, 0.99}).weight_decay(0.1));
       }},
      {"adam8bit",
       [](std::vector<Tensor> p) {
         return std::make_unique<optim::Adam8bit>(two_groups(p),
                                                  optim::Adam8bitOptions(0.01).weight_decay(0.01));
       }},
  };
}

// Shapes: quantised (not a multiple of 256 nor 4), quantised (exact blocks), float-state, tiny.
const std::vector<Shape> kShapes = {{300, 37}, {64, 256}, {1000}, {3}};

std::vector<Tensor> make_params(Device device) {
  manual_seed(21);
  std::vector<Tensor> params;
  for (const Shape& s : kShapes)
    params.push_back(randn(s).to(device).requires_grad_(true));
  return params;
}

class OptimCuda : public ::testing::TestWithParam<OptimCase> {};

TEST_P(OptimCuda, MatchesCpu) {
  if (!cuda::is_available()) GTEST_SKIP() << "no CUDA device";
  std::vector<Tensor> cpu_params = make_params(kCPU);
  std::vector<Tensor> gpu_params = make_params(kCUDA);
  std::unique_ptr<optim::Optimizer> cpu_opt = GetParam().make(cpu_params);
  std::unique_ptr<optim::Optimizer> gpu_opt = GetParam().make(gpu_params);
  manual_seed(22);
  for (int step = 0; step < 12; ++step) {
    for (std::size_t k = 0; k < kShapes.size(); ++k) {
      const Tensor g = randn(kShapes[k]);
      cpu_params[k].set_grad(g);
      gpu_params[k].set_grad(g.to(kCUDA));
    }
    cpu_opt->step();
    gpu_opt->step();
  }
  for (std::size_t k = 0; k < kShapes.size(); ++k) {
    SCOPED_TRACE("param " + std::to_string(k));
    EXPECT_TRUE(
        test::all_close(gpu_params[k].detach(), test::to_vector(cpu_params[k]), 1e-4, 1e-5));
  }
  const NamedTensors cpu_state = cpu_opt->state_dict();
  const NamedTensors gpu_state = gpu_opt->state_dict();
  ASSERT_EQ(cpu_state.size(), gpu_state.size());
  for (std::size_t i = 0; i < cpu_state.size(); ++i) {
    SCOPED_TRACE(cpu_state[i].first);
    EXPECT_EQ(cpu_state[i].first, gpu_state[i].first);
    if (cpu_state[i].second.dtype() != kFloat32) continue;  // codes may differ by one step
    EXPECT_TRUE(
        test::all_close(gpu_state[i].second, test::to_vector(cpu_state[i].second), 1e-4, 1e-6));
  }
}

INSTANTIATE_TEST_SUITE_P(Optim, OptimCuda, ::testing::ValuesIn(optim_cases()),
                         [](const auto& info) { return info.param.name; });

TEST(OptimCudaClip, ClipGradNormMatchesCpu) {
  if (!cuda::is_available()) GTEST_SKIP() << "no CUDA device";
  for (double norm_type : {2.0, 1.0, 3.0, std::numeric_limits<double>::infinity()}) {
    SCOPED_TRACE("norm_type " + std::to_string(norm_type));
    std::vector<Tensor> cpu_params = make_params(kCPU);
    std::vector<Tensor> gpu_params = make_params(kCUDA);
    manual_seed(23);
    for (std::size_t k = 0; k < kShapes.size(); ++k) {
      const Tensor g = randn(kShapes[k]);
      cpu_params[k].set_grad(g);
      gpu_params[k].set_grad(g.to(kCUDA));
    }
    const Tensor cpu_norm = optim::clip_grad_norm_(cpu_params, 1.0, norm_type);
    const Tensor gpu_norm = optim::clip_grad_norm_(gpu_params, 1.0, norm_type);
    EXPECT_TRUE(gpu_norm.is_cuda());
    EXPECT_NEAR(gpu_norm.item<float>(), cpu_norm.item<float>(), 1e-4 * cpu_norm.item<float>());
    for (std::size_t k = 0; k < kShapes.size(); ++k)
      EXPECT_TRUE(
          test::all_close(gpu_params[k].grad(), test::to_vector(cpu_params[k].grad()), 1e-4, 1e-7));
  }
}

}  // namespace
}  // namespace leangrad
