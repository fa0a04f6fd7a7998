// libtorch-tanhexp-group-norm: LibTorch's side of bench/compare/tanhexp_group_norm_vs_libtorch.sh.
// The benchmarks of bench/bench_tanhexp_group_norm.cpp with the same Google Benchmark names,
// shapes and byte counts, as a LibTorch 1.13 user writes them on the CPU: TanhExp composed from
// tensor ops, where(x > 20, x, x * tanh(exp(x))) (LibTorch has no TanhExp), and
// torch::group_norm (its fused CPU kernel). Forward runs under NoGradGuard; forward+backward is
// one forward with autograd and y.backward(g), the gradients reset after each.
// Shapes (issue 19): activations (64, 64, 56, 56); GroupNorm 32 groups on (16, 64, 56, 56) with
// weight and bias.
//   libtorch-tanhexp-group-norm [--threads N] [Google Benchmark options]
//   libtorch-tanhexp-group-norm --show-config     LibTorch's build flags (at::show_config())
#include <benchmark/benchmark.h>
#include <torch/torch.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include "benchmark_main.h"

namespace {

const std::vector<int64_t> kActivationShape = {64, 64, 56, 56};
constexpr int64_t kActivationNumel = 64 * 64 * 56 * 56;
const std::vector<int64_t> kNormShape = {16, 64, 56, 56};
constexpr int64_t kNormNumel = 16 * 64 * 56 * 56;
constexpr int64_t kNormChannels = 64, kNormGroups = 32;

torch::Tensor tanhexp_composed(const torch::Tensor& x) {
  return torch::where(x > 20, x, x * torch::tanh(torch::exp(x)));
}

void BM_TanhExp_Forward(benchmark::State& state) {
  torch::NoGradGuard no_grad;
  torch::manual_seed(0);
  const torch::Tensor x = torch::randn(kActivationShape);
  const float x0 = x.view(-1)[4242].item<float>();
  const float y0 = tanhexp_composed(x).view(-1)[4242].item<float>();
  if (std::fabs(y0 - x0 * std::tanh(std::exp(x0))) > 1e-5 * (1 + std::fabs(x0))) {
    state.SkipWithError("the composed TanhExp differs from the definition");
  }
  for (auto _ : state) {
    torch::Tensor y = tanhexp_composed(x);
    benchmark::DoNotOptimize(y.data_ptr());
  }
  state.SetBytesProcessed(state.iterations() * kActivationNumel * 8);
}
BENCHMARK(BM_TanhExp_Forward)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_TanhExp_ForwardBackward(benchmark::State& state) {
  torch::manual_seed(0);
  const torch::Tensor x = torch::randn(kActivationShape).requires_grad_(true);
  const torch::Tensor g = torch::randn(kActivationShape);
  for (auto _ : state) {
    torch::Tensor y = tanhexp_composed(x);
    y.backward(g);
    benchmark::DoNotOptimize(x.grad().data_ptr());
    x.mutable_grad().reset();
  }
  state.SetBytesProcessed(state.iterations() * kActivationNumel * 20);
}
BENCHMARK(BM_TanhExp_ForwardBackward)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_GroupNorm_Forward(benchmark::State& state) {
  torch::NoGradGuard no_grad;
  torch::manual_seed(0);
  const torch::Tensor x = torch::randn(kNormShape);
  const torch::Tensor w = torch::randn({kNormChannels});
  const torch::Tensor b = torch::randn({kNormChannels});
  for (auto _ : state) {
    torch::Tensor y = torch::group_norm(x, kNormGroups, w, b, 1e-5);
    benchmark::DoNotOptimize(y.data_ptr());
  }
  state.SetBytesProcessed(state.iterations() * kNormNumel * 12);
}
BENCHMARK(BM_GroupNorm_Forward)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_GroupNorm_ForwardBackward(benchmark::State& state) {
  torch::manual_seed(0);
  const torch::Tensor x = torch::randn(kNormShape).requires_grad_(true);
  const torch::Tensor w = torch::randn({kNormChannels}).requires_grad_(true);
  const torch::Tensor b = torch::randn({kNormChannels}).requires_grad_(true);
  const torch::Tensor g = torch::randn(kNormShape);
  for (auto _ : state) {
    torch::Tensor y = torch::group_norm(x, kNormGroups, w, b, 1e-5);
    y.backward(g);
    benchmark::DoNotOptimize(x.grad().data_ptr());
    for (const torch::Tensor* t : {&x, &w, &b})
      const_cast<torch::Tensor*>(t)->mutable_grad().reset();
  }
  state.SetBytesProcessed(state.iterations() * kNormNumel * 32);
}
BENCHMARK(BM_GroupNorm_ForwardBackward)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace

int main(int argc, char** argv) {
  return run_libtorch_benchmarks(argc, argv);
}
