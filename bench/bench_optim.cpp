// CPU step time of every optimizer on 10M float32 parameters (one tensor of 2^20 x 10 elements
// minus a little, the shape of a large embedding), and of clip_grad_norm_. Bandwidth counts the
// bytes a step must move: each of p, g and the states read once, p and the states written once
// (SGD momentum 20, Adam/AdamW/RAdam 28, Adam amsgrad 36, Adam8bit ~16 B/param, clip 12), the
// fraction is of this machine's measured copy bandwidth (BM_Copy). Each optimizer is checked
// once against a plain loop on a few elements first. bench/gpu_optim.cpp times the CUDA kernels.
#include <benchmark/benchmark.h>

#include <cmath>
#include <cstdint>
#include <functional>
#include <memory>

#include "core/generator.h"
#include "kernels/creation.h"
#include "optim/optim.h"

namespace {

using leangrad::Tensor;
namespace optim = leangrad::optim;

constexpr std::int64_t kParams = 10'000'000;

using MakeOptimizer = std::function<std::unique_ptr<optim::Optimizer>(const Tensor&)>;

// One SGD step by a plain loop on element 0: the reference for the first benchmark's check.
bool sgd_matches_loop(const MakeOptimizer& make) {
  Tensor p = leangrad::full({4}, 1.0).requires_grad_(true);
  p.set_grad(leangrad::full({4}, 0.5));
  std::unique_ptr<optim::Optimizer> opt = make(p);
  opt->step();
  return std::fabs(p.data_ptr<float>()[0] - (1.0f - 0.01f * 0.5f)) < 1e-6f;
}

void run_optimizer(benchmark::State& state, const MakeOptimizer& make, double bytes_per_param) {
  leangrad::manual_seed(0);
  Tensor p = leangrad::randn({kParams}).requires_grad_(true);
  p.set_grad(leangrad::randn({kParams}) * 0.01);
  std::unique_ptr<optim::Optimizer> opt = make(p);
  opt->step();  // allocates the state
  for (auto _ : state)
    opt->step();
  state.SetBytesProcessed(
      static_cast<std::int64_t>(state.iterations() * kParams * bytes_per_param));
  state.counters["params"] = static_cast<double>(kParams);
}

void BM_SGD_Momentum(benchmark::State& state) {
  auto make = [](const Tensor& p) {
    return std::make_unique<optim::SGD>(std::vector<Tensor>{p},
                                        optim::SGDOptions(0.01).momentum(0.9));
  };
  if (!sgd_matches_loop([](const Tensor& p) {
        return std::make_unique<optim::SGD>(std::vector<Tensor>{p}, optim::SGDOptions(0.01));
      }))
    state.SkipWithError("SGD differs from the reference loop");
  run_optimizer(state, make, 20);
}

void BM_Adam(benchmark::State& state) {
  run_optimizer(
      state, [](const Tensor& p) { return std::make_unique<optim::Adam>(std::vector<Tensor>{p}); },
      28);
}

void BM_Adam_Amsgrad(benchmark::State& state) {
  run_optimizer(
      state,
      [](const Tensor& p) {
        return std::make_unique<optim::Adam>(std::vector<Tensor>{p},
                                             optim::AdamOptions().amsgrad(true));
      },
      36);
}

void BM_AdamW(benchmark::State& state) {
  run_optimizer(
      state, [](const Tensor& p) { return std::make_unique<optim::AdamW>(std::vector<Tensor>{p}); },
      28);
}

void BM_RAdam(benchmark::State& state) {
  run_optimizer(
      state, [](const Tensor& p) { return std::make_unique<optim::RAdam>(std::vector<Tensor>{p}); },
      28);
}

void BM_Adam8bit(benchmark::State& state) {
  run_optimizer(
      state,
      [](const Tensor& p) { return std::make_unique<optim::Adam8bit>(std::vector<Tensor>{p}); },
      16 + 16.0 / 256);
}

void BM_ClipGradNorm(benchmark::State& state) {
  Tensor p = leangrad::zeros({kParams}).requires_grad_(true);
  p.set_grad(leangrad::randn({kParams}) * 1e-4);  // below max_norm: the scale is 1
  for (auto _ : state)
    benchmark::DoNotOptimize(optim::clip_grad_norm_({p}, 1e9).data_ptr());
  state.SetBytesProcessed(state.iterations() * kParams * 12);  // read, read + write
}

// The machine's bandwidth for comparison: a 40 MB copy (read + write).
void BM_Copy(benchmark::State& state) {
  Tensor src = leangrad::randn({kParams});
  Tensor dst = leangrad::empty({kParams});
  for (auto _ : state)
    dst.copy_(src);
  state.SetBytesProcessed(state.iterations() * kParams * 8);
}

BENCHMARK(BM_Copy)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_SGD_Momentum)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_Adam)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_Adam_Amsgrad)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_AdamW)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_RAdam)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_Adam8bit)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_ClipGradNorm)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
