// CPU throughput of the layer ops (autograd/nn_functions.h, run without autograd): cross_entropy
// forward and backward, max_pool2d on the Fashion-MNIST CNN shapes, pixel_shuffle and linear.
// Memory-bound ops report GB/s of bytes touched (each input read once, each output written once);
// linear reports GFLOP/s (2 M N K). Each benchmark checks one result against a plain loop first.
// bench/compare/layers_torch.py prints the same shapes for PyTorch (CPU or CUDA).
#include <benchmark/benchmark.h>

#include <cmath>
#include <cstdint>
#include <limits>

#include <leangrad/autograd/functions.h>
#include <leangrad/autograd/grad_mode.h>
#include <leangrad/autograd/nn_functions.h>
#include <leangrad/kernels/creation.h>
#include <leangrad/kernels/ops.h>

namespace {

using leangrad::Reduction;
using leangrad::Shape;
using leangrad::Tensor;

// Targets (N,) in [0, C) from a seeded uniform tensor.
Tensor class_targets(std::int64_t n, std::int64_t c) {
  return (leangrad::rand({n}) * static_cast<double>(c) - 0.5).relu().to(leangrad::kInt64);
}

// Loss of row 0 by a plain loop, the reference for cross_entropy.
double row0_loss(const Tensor& logits, const Tensor& target) {
  const float* x = logits.data_ptr<float>();
  const std::int64_t c = logits.size(1);
  double m = -std::numeric_limits<double>::infinity(), s = 0;
  for (std::int64_t j = 0; j < c; ++j)
    m = std::max(m, static_cast<double>(x[j]));
  for (std::int64_t j = 0; j < c; ++j)
    s += std::exp(x[j] - m);
  return m + std::log(s) - x[target.data_ptr<std::int64_t>()[0]];
}

void BM_CrossEntropy(benchmark::State& state) {
  const std::int64_t n = state.range(0), c = state.range(1);
  const Tensor logits = leangrad::randn({n, c});
  const Tensor target = class_targets(n, c);
  const leangrad::ops::CrossEntropyResult check =
      leangrad::ops::cross_entropy(logits, target, Tensor(), -100);
  if (std::fabs(check.losses.data_ptr<float>()[0] - row0_loss(logits, target)) > 1e-4)
    state.SkipWithError("cross_entropy differs from the reference loop");
  const Tensor grad = leangrad::ones({n});
  for (auto _ : state) {
    leangrad::ops::CrossEntropyResult r =
        leangrad::ops::cross_entropy(logits, target, Tensor(), -100);
    Tensor g =
        leangrad::ops::cross_entropy_backward(grad, logits, r.logsumexp, target, Tensor(), -100);
    benchmark::DoNotOptimize(g.data_ptr());
  }
  // forward reads the logits, backward reads them and writes their gradient
  state.SetBytesProcessed(state.iterations() * n * c * 4 * 3);
}
BENCHMARK(BM_CrossEntropy)->Args({64, 10})->Args({256, 1000})->Unit(benchmark::kMillisecond);

void BM_MaxPool2d(benchmark::State& state) {
  const Shape shape = {64, state.range(0), state.range(1), state.range(1)};
  const Tensor x = leangrad::randn(shape);
  const leangrad::ops::MaxPool2dResult check = leangrad::ops::max_pool2d(x, {2, 2}, {2, 2}, {0, 0});
  const float* xp = x.data_ptr<float>();
  const float expected = std::max(std::max(xp[0], xp[1]), std::max(xp[shape[3]], xp[shape[3] + 1]));
  if (check.out.data_ptr<float>()[0] != expected) state.SkipWithError("max_pool2d differs");
  for (auto _ : state) {
    leangrad::ops::MaxPool2dResult r = leangrad::ops::max_pool2d(x, {2, 2}, {2, 2}, {0, 0});
    benchmark::DoNotOptimize(r.out.data_ptr());
  }
  // reads x, writes out (a quarter) and int64 indices (a quarter, 8 bytes each)
  state.SetBytesProcessed(state.iterations() * x.numel() * (4 + 1 + 2));
}
BENCHMARK(BM_MaxPool2d)->Args({32, 28})->Args({64, 14})->Unit(benchmark::kMillisecond);

void BM_PixelShuffle(benchmark::State& state) {
  const Tensor x = leangrad::randn({16, 256, 96, 96});
  leangrad::NoGradGuard no_grad;
  const Tensor y0 = leangrad::pixel_shuffle(x, 2);
  // out[0, 0, 0, 1] = in[0, 1, 0, 0]
  if (y0.data_ptr<float>()[1] != x.data_ptr<float>()[96 * 96]) state.SkipWithError("differs");
  for (auto _ : state) {
    Tensor y = leangrad::pixel_shuffle(x, 2);
    benchmark::DoNotOptimize(y.data_ptr());
  }
  state.SetBytesProcessed(state.iterations() * x.numel() * 4 * 2);
}
BENCHMARK(BM_PixelShuffle)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_Linear_3136x128_B64(benchmark::State& state) {
  const std::int64_t m = 64, k = 3136, n = 128;
  const Tensor x = leangrad::randn({m, k});
  const Tensor w = leangrad::randn({n, k});
  const Tensor b = leangrad::randn({n});
  leangrad::NoGradGuard no_grad;
  const Tensor y0 = leangrad::linear(x, w, b);
  double ref = b.data_ptr<float>()[0];
  for (std::int64_t i = 0; i < k; ++i)
    ref += static_cast<double>(x.data_ptr<float>()[i]) * w.data_ptr<float>()[i];
  if (std::fabs(y0.data_ptr<float>()[0] - ref) > 1e-2) state.SkipWithError("linear differs");
  for (auto _ : state) {
    Tensor y = leangrad::linear(x, w, b);
    benchmark::DoNotOptimize(y.data_ptr());
  }
  state.counters["GFLOP/s"] = benchmark::Counter(static_cast<double>(2 * m * n * k) * 1e-9,
                                                 benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_Linear_3136x128_B64)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
