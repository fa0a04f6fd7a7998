// libtorch-optim: LibTorch's side of bench/compare/optim_vs_libtorch.sh. The optimizer steps of
// bench/bench_optim.cpp, with the same Google Benchmark names, shapes and byte counts, run by
// torch::optim::Adam and AdamW with their default options: what a LibTorch 1.13 user gets on the
// CPU (its C++ optimizers have no fused or multi-tensor path). A step is one optimizer.step()
// over parameters N(0, 1) with fixed gradients N(0, 1e-4), timed after a first step that makes
// the state.
//   libtorch-optim [--threads N] [Google Benchmark options]
#include <benchmark/benchmark.h>
#include <torch/torch.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "benchmark_main.h"

namespace {

constexpr int64_t k10M = 10'000'000;
constexpr int64_t k100M = 100'000'000;

// leangrad-train's mlp: Linear(784, 128) and Linear(128, 10), weights (out, in).
const std::vector<std::vector<int64_t>> kMlpShapes = {{128, 784}, {128}, {10, 128}, {10}};

using MakeOptimizer =
    std::function<std::unique_ptr<torch::optim::Optimizer>(const std::vector<torch::Tensor>&)>;

void run_optimizer(benchmark::State& state, const std::vector<std::vector<int64_t>>& shapes,
                   const MakeOptimizer& make, double bytes_per_param) {
  torch::NoGradGuard no_grad;
  torch::manual_seed(0);
  std::vector<torch::Tensor> params;
  double numel = 0;
  for (const std::vector<int64_t>& shape : shapes) {
    torch::Tensor p = torch::randn(shape).requires_grad_(true);
    p.mutable_grad() = torch::randn(shape) * 0.01;
    params.push_back(p);
    numel += static_cast<double>(p.numel());
  }
  std::unique_ptr<torch::optim::Optimizer> opt = make(params);
  opt->step();  // makes the state
  for (auto _ : state)
    opt->step();
  state.SetBytesProcessed(
      static_cast<int64_t>(static_cast<double>(state.iterations()) * numel * bytes_per_param));
  state.counters["params"] = numel;
}

MakeOptimizer make_adam() {
  return [](const std::vector<torch::Tensor>& p) {
    return std::make_unique<torch::optim::Adam>(p, torch::optim::AdamOptions());
  };
}

void BM_Adam(benchmark::State& state) {
  run_optimizer(state, {{state.range(0)}}, make_adam(), 28);
}

void BM_AdamW(benchmark::State& state) {
  run_optimizer(
      state, {{state.range(0)}},
      [](const std::vector<torch::Tensor>& p) {
        return std::make_unique<torch::optim::AdamW>(p, torch::optim::AdamWOptions());
      },
      28);
}

void BM_Adam_Mlp(benchmark::State& state) {
  run_optimizer(state, kMlpShapes, make_adam(), 28);
}

BENCHMARK(BM_Adam)->Arg(k10M)->Arg(k100M)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_AdamW)->Arg(k10M)->Arg(k100M)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_Adam_Mlp)->Unit(benchmark::kMicrosecond)->UseRealTime();

}  // namespace

int main(int argc, char** argv) {
  return run_libtorch_benchmarks(argc, argv);
}
