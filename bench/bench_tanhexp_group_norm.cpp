// CPU throughput of TanhExp and GroupNorm through their tensor-level entries (kernels/ops.h), in
// GB/s of memory touched: TanhExp forward reads x and writes y (8 bytes per float32 element),
// backward reads dy and x and writes dx (12); GroupNorm forward reads x twice (statistics, then
// normalize) and writes y (12), backward reads dy and x twice and writes dx (20). Each benchmark
// checks one value against a plain double computation before timing.
// Shapes: TanhExp on 16M elements; GroupNorm on (8, 64, 64, 64), 32 groups (a UNet block).
// Threads: OMP_NUM_THREADS or all cores. These loops are memory-bound: compare with STREAM.
#include <benchmark/benchmark.h>

#include <cmath>
#include <cstdint>

#include "kernels/creation.h"
#include "kernels/ops.h"

namespace {

using leangrad::kFloat32;
using leangrad::Tensor;

constexpr std::int64_t k16M = 16 * 1024 * 1024;
constexpr std::int64_t kBatch = 8, kChannels = 64, kSide = 64, kGroups = 32;
constexpr std::int64_t kGroupNormNumel = kBatch * kChannels * kSide * kSide;

float element(const Tensor& t, std::int64_t i) {
  return static_cast<const float*>(t.data_ptr())[i];
}

void BM_TanhExpForward_F32_16M(benchmark::State& state) {
  const Tensor x = leangrad::randn({k16M}, kFloat32);
  const Tensor y = leangrad::ops::tanhexp(x);
  const double x0 = element(x, 12345);
  if (std::fabs(element(y, 12345) - x0 * std::tanh(std::exp(x0))) > 1e-5) {
    state.SkipWithError("tanhexp differs from the reference");
  }
  for (auto _ : state) {
    Tensor out = leangrad::ops::tanhexp(x);
    benchmark::DoNotOptimize(out.data_ptr());
  }
  state.SetBytesProcessed(state.iterations() * k16M * 8);
}
BENCHMARK(BM_TanhExpForward_F32_16M)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_TanhExpBackward_F32_16M(benchmark::State& state) {
  const Tensor x = leangrad::randn({k16M}, kFloat32);
  const Tensor dy = leangrad::ones({k16M}, kFloat32);
  const Tensor dx = leangrad::ops::tanhexp_backward(dy, x);
  const double x0 = element(x, 777);
  const double u = std::exp(x0);
  const double t = std::tanh(u);
  if (std::fabs(element(dx, 777) - (t - x0 * u * (t * t - 1))) > 1e-5) {
    state.SkipWithError("tanhexp_backward differs from the reference");
  }
  for (auto _ : state) {
    Tensor out = leangrad::ops::tanhexp_backward(dy, x);
    benchmark::DoNotOptimize(out.data_ptr());
  }
  state.SetBytesProcessed(state.iterations() * k16M * 12);
}
BENCHMARK(BM_TanhExpBackward_F32_16M)->Unit(benchmark::kMillisecond)->UseRealTime();

// Check: group 0 of sample 0 of the output has mean ~0 and variance ~1.
bool normalized(const Tensor& y) {
  const std::int64_t group_size = kChannels / kGroups * kSide * kSide;
  double sum = 0, sum_sq = 0;
  for (std::int64_t i = 0; i < group_size; ++i) {
    sum += element(y, i);
    sum_sq += element(y, i) * static_cast<double>(element(y, i));
  }
  const double mean = sum / group_size;
  return std::fabs(mean) < 1e-4 && std::fabs(sum_sq / group_size - mean * mean - 1) < 1e-3;
}

void BM_GroupNormForward_F32(benchmark::State& state) {
  const Tensor x = leangrad::randn({kBatch, kChannels, kSide, kSide}, kFloat32);
  const Tensor w = leangrad::ones({kChannels}, kFloat32);
  const Tensor b = leangrad::zeros({kChannels}, kFloat32);
  if (!normalized(leangrad::ops::group_norm(x, kGroups, w, b, 1e-5).output)) {
    state.SkipWithError("group_norm output is not normalized");
  }
  for (auto _ : state) {
    leangrad::ops::GroupNormOutput r = leangrad::ops::group_norm(x, kGroups, w, b, 1e-5);
    benchmark::DoNotOptimize(r.output.data_ptr());
  }
  state.SetBytesProcessed(state.iterations() * kGroupNormNumel * 12);
}
BENCHMARK(BM_GroupNormForward_F32)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_GroupNormBackward_F32(benchmark::State& state) {
  const Tensor x = leangrad::randn({kBatch, kChannels, kSide, kSide}, kFloat32);
  const Tensor dy = leangrad::randn({kBatch, kChannels, kSide, kSide}, kFloat32);
  const Tensor w = leangrad::ones({kChannels}, kFloat32);
  const leangrad::ops::GroupNormOutput f = leangrad::ops::group_norm(x, kGroups, w, Tensor(), 1e-5);
  for (auto _ : state) {
    leangrad::ops::GroupNormGrads g =
        leangrad::ops::group_norm_backward(dy, x, f.mean, f.rstd, w, kGroups, true, true, true);
    benchmark::DoNotOptimize(g.grad_input.data_ptr());
  }
  state.SetBytesProcessed(state.iterations() * kGroupNormNumel * 20);
}
BENCHMARK(BM_GroupNormBackward_F32)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
BENCHMARK_MAIN();
