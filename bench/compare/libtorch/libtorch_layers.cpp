// libtorch-layers: LibTorch's side of bench/compare/layers_vs_libtorch.sh. The layer benchmarks of
// bench/bench_layers.cpp that have no other comparison, with the same Google Benchmark names,
// shapes and byte counts, as a LibTorch 1.13 user's program reaches the same kernels on the CPU,
// under NoGradGuard, float32:
//   BM_CrossEntropy/N/C       cross_entropy's forward and backward without reduction, as autograd
//                             runs them: torch::log_softmax + torch::nll_loss (per-sample losses),
//                             then torch::nll_loss_backward + torch::_log_softmax_backward_data
//                             (leangrad: ops::cross_entropy, ops::cross_entropy_backward)
//   BM_MaxPool2d/C/H          torch::max_pool2d_with_indices of (64, C, H, H), 2 x 2, stride 2:
//                             the values and the int64 indices backward needs
//   BM_AvgPool2d/0, /1        torch::avg_pool2d and torch::avg_pool2d_backward: 2 x 2 stride 2 over
//                             (64, 64, 56, 56); 3 x 3 stride 1 padding 1 (not counted) over
//                             (32, 256, 14, 14)
//   BM_PixelShuffle           torch::pixel_shuffle of (16, 256, 96, 96) by 2
//   BM_Linear_3136x128_B64    torch::linear, (64, 3136) x (128, 3136)^T + bias
//   libtorch-layers [--threads N] [Google Benchmark options]
#include <benchmark/benchmark.h>
#include <torch/torch.h>

#include <cstdint>

#include "benchmark_main.h"

namespace {

void BM_CrossEntropy(benchmark::State& state) {
  torch::NoGradGuard no_grad;
  const int64_t n = state.range(0), c = state.range(1);
  const torch::Tensor logits = torch::randn({n, c});
  const torch::Tensor target = torch::randint(c, {n}, torch::kLong);
  const torch::Tensor grad = torch::ones({n});
  const torch::Tensor no_weight;
  const int64_t none = at::Reduction::None;
  for (auto _ : state) {
    const torch::Tensor log_p = torch::log_softmax(logits, 1);
    const auto [losses, total_weight] =
        torch::nll_loss_forward(log_p, target, no_weight, none, -100);
    const torch::Tensor grad_log_p =
        torch::nll_loss_backward(grad, log_p, target, no_weight, none, -100, total_weight);
    torch::Tensor g = torch::_log_softmax_backward_data(grad_log_p, log_p, 1, torch::kFloat);
    benchmark::DoNotOptimize(losses.data_ptr());
    benchmark::DoNotOptimize(g.data_ptr());
  }
  state.SetBytesProcessed(state.iterations() * n * c * 4 * 3);
}
BENCHMARK(BM_CrossEntropy)->Args({64, 10})->Args({256, 1000})->Unit(benchmark::kMillisecond);

void BM_MaxPool2d(benchmark::State& state) {
  torch::NoGradGuard no_grad;
  const torch::Tensor x = torch::randn({64, state.range(0), state.range(1), state.range(1)});
  for (auto _ : state) {
    const auto [out, indices] = torch::max_pool2d_with_indices(x, {2, 2}, {2, 2}, {0, 0});
    benchmark::DoNotOptimize(out.data_ptr());
    benchmark::DoNotOptimize(indices.data_ptr());
  }
  state.SetBytesProcessed(state.iterations() * x.numel() * (4 + 1 + 2));
}
BENCHMARK(BM_MaxPool2d)->Args({32, 28})->Args({64, 14})->Unit(benchmark::kMillisecond);

void BM_AvgPool2d(benchmark::State& state) {
  torch::NoGradGuard no_grad;
  const bool overlapping = state.range(0) == 1;
  const torch::Tensor x =
      overlapping ? torch::randn({32, 256, 14, 14}) : torch::randn({64, 64, 56, 56});
  const int64_t k = overlapping ? 3 : 2, s = overlapping ? 1 : 2, p = overlapping ? 1 : 0;
  const bool count_pad = !overlapping;
  const torch::Tensor y0 = torch::avg_pool2d(x, {k, k}, {s, s}, {p, p}, false, count_pad);
  const torch::Tensor gy = torch::randn(y0.sizes());
  for (auto _ : state) {
    torch::Tensor y = torch::avg_pool2d(x, {k, k}, {s, s}, {p, p}, false, count_pad);
    torch::Tensor gx =
        torch::avg_pool2d_backward(gy, x, {k, k}, {s, s}, {p, p}, false, count_pad, c10::nullopt);
    benchmark::DoNotOptimize(y.data_ptr());
    benchmark::DoNotOptimize(gx.data_ptr());
  }
  state.SetBytesProcessed(state.iterations() * (x.numel() + y0.numel()) * 4 * 2);
}
BENCHMARK(BM_AvgPool2d)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_PixelShuffle(benchmark::State& state) {
  torch::NoGradGuard no_grad;
  const torch::Tensor x = torch::randn({16, 256, 96, 96});
  for (auto _ : state) {
    torch::Tensor y = torch::pixel_shuffle(x, 2);
    benchmark::DoNotOptimize(y.data_ptr());
  }
  state.SetBytesProcessed(state.iterations() * x.numel() * 4 * 2);
}
BENCHMARK(BM_PixelShuffle)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_Linear_3136x128_B64(benchmark::State& state) {
  torch::NoGradGuard no_grad;
  const int64_t m = 64, k = 3136, n = 128;
  const torch::Tensor x = torch::randn({m, k});
  const torch::Tensor w = torch::randn({n, k});
  const torch::Tensor b = torch::randn({n});
  for (auto _ : state) {
    torch::Tensor y = torch::linear(x, w, b);
    benchmark::DoNotOptimize(y.data_ptr());
  }
  state.counters["GFLOP/s"] = benchmark::Counter(static_cast<double>(2 * m * n * k) * 1e-9,
                                                 benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_Linear_3136x128_B64)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace

int main(int argc, char** argv) {
  return run_libtorch_benchmarks(argc, argv);
}
