// libtorch-conv: LibTorch's side of bench/compare/conv_vs_libtorch.sh. The benchmarks of
// bench/bench_conv.cpp's BM_Conv2dAutograd_* with the same Google Benchmark names and shapes, as a
// LibTorch 1.13 user writes them on the CPU: torch::conv2d (3 x 3, padding 1, no bias) forward
// under NoGradGuard, and forward + backward with autograd (y.backward(g), the gradients of x and
// w reset after each).
// Shapes (argument 0-2): issue 19's (16, 64, 56, 56) 64 -> 64, and the Fashion-MNIST CNN's two
// convolutions at batch 64, (64, 1, 28, 28) -> 32 and (64, 32, 14, 14) -> 64. And
// BM_Conv3dAutograd_ForwardBackward, bench_conv.cpp's conv3d and conv_transpose3d (not in
// conv_vs_libtorch.sh's table: run both programs with --benchmark_filter=Conv3d).
//   libtorch-conv [--threads N] [Google Benchmark options]
#include <benchmark/benchmark.h>
#include <torch/torch.h>

#include <cstdint>

#include "benchmark_main.h"

namespace {

struct ConvShape {
  int64_t n, c_in, h, w, c_out;
};
constexpr ConvShape kShapes[] = {{16, 64, 56, 56, 64}, {64, 1, 28, 28, 32}, {64, 32, 14, 14, 64}};

double flops(const ConvShape& s) {
  return 2.0 * s.n * s.c_out * s.h * s.w * s.c_in * 9;
}

void BM_Conv2dAutograd_Forward(benchmark::State& state) {
  const ConvShape s = kShapes[state.range(0)];
  torch::NoGradGuard no_grad;
  torch::manual_seed(0);
  const torch::Tensor x = torch::randn({s.n, s.c_in, s.h, s.w});
  const torch::Tensor w = torch::randn({s.c_out, s.c_in, 3, 3});
  for (auto _ : state) {
    torch::Tensor y = torch::conv2d(x, w, {}, 1, 1);
    benchmark::DoNotOptimize(y.data_ptr());
  }
  state.counters["GFLOP/s"] =
      benchmark::Counter(flops(s) * 1e-9 * state.iterations(), benchmark::Counter::kIsRate);
}

void BM_Conv2dAutograd_ForwardBackward(benchmark::State& state) {
  const ConvShape s = kShapes[state.range(0)];
  torch::manual_seed(0);
  const torch::Tensor x = torch::randn({s.n, s.c_in, s.h, s.w}).requires_grad_(true);
  const torch::Tensor w = torch::randn({s.c_out, s.c_in, 3, 3}).requires_grad_(true);
  const torch::Tensor g = torch::randn({s.n, s.c_out, s.h, s.w});
  for (auto _ : state) {
    torch::Tensor y = torch::conv2d(x, w, {}, 1, 1);
    y.backward(g);
    benchmark::DoNotOptimize(w.grad().data_ptr());
    for (const torch::Tensor* t : {&x, &w})
      const_cast<torch::Tensor*>(t)->mutable_grad().reset();
  }
  state.counters["GFLOP/s"] =
      benchmark::Counter(3 * flops(s) * 1e-9 * state.iterations(), benchmark::Counter::kIsRate);
}

// bench_conv.cpp's BM_Conv3dAutograd_ForwardBackward: conv3d (0) and conv_transpose3d (1) on
// (4, 16, 16, 32, 32), 16 -> 32, 3^3, padding 1 (the transpose at stride 2), forward and backward
// with x and w requiring grad, the gradient ones.
void BM_Conv3dAutograd_ForwardBackward(benchmark::State& state) {
  const bool transpose = state.range(0) == 1;
  torch::manual_seed(0);
  const torch::Tensor x = torch::randn({4, 16, 16, 32, 32}).requires_grad_(true);
  const torch::Tensor w =
      (transpose ? torch::randn({16, 32, 3, 3, 3}) : torch::randn({32, 16, 3, 3, 3}))
          .requires_grad_(true);
  for (auto _ : state) {
    torch::Tensor y =
        transpose ? torch::conv_transpose3d(x, w, {}, 2, 1) : torch::conv3d(x, w, {}, 1, 1);
    y.backward(torch::ones_like(y));
    benchmark::DoNotOptimize(w.grad().data_ptr());
    for (const torch::Tensor* t : {&x, &w})
      const_cast<torch::Tensor*>(t)->mutable_grad().reset();
  }
}

BENCHMARK(BM_Conv3dAutograd_ForwardBackward)
    ->DenseRange(0, 1)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK(BM_Conv2dAutograd_Forward)
    ->DenseRange(0, 2)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK(BM_Conv2dAutograd_ForwardBackward)
    ->DenseRange(0, 2)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

}  // namespace

int main(int argc, char** argv) {
  return run_libtorch_benchmarks(argc, argv);
}
