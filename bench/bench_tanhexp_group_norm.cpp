// CPU throughput of TanhExp and GroupNorm, in GB/s of memory touched: TanhExp forward reads x
// and writes y (8 bytes per float32 element), backward reads dy and x and writes dx (12);
// GroupNorm forward reads x twice (statistics, then normalize) and writes y (12), backward reads
// dy and x twice and writes dx (20). Each benchmark checks one value against a plain double
// computation (or the reference loop) before timing. Three groups:
//   - BM_TanhExpForward_F32_16M ...: the tensor-level entries (kernels/ops.h) on 16M elements and
//     GroupNorm on (8, 64, 64, 64), 32 groups (a UNet block);
//   - BM_TanhExp_Forward, _ForwardBackward, BM_GroupNorm_...: issue 19's shapes through the
//     public differentiable functions (autograd/nn_functions.h): activations (64, 64, 56, 56),
//     GroupNorm 32 groups on (16, 64, 56, 56) with weight and bias; forward+backward is one
//     forward and y.backward(g). bench/compare/libtorch/libtorch_tanhexp_group_norm.cpp has the
//     same names and shapes for LibTorch (bench/compare/tanhexp_group_norm_vs_libtorch.sh);
//   - BM_Launcher_...: the raw launchers on those shapes, /0 the reference loop
//     (kernels/cpu/*_reference.h), /1 the vectorised kernel the library runs; TanhExp's also /2,
//     the vectorised kernel with its AVX-512 copy switched off (the x86-64-v3 loop, what a CPU
//     without AVX-512 runs: Note [AVX-512 at run time] in kernels/cpu/avx512.h).
// Threads: OMP_NUM_THREADS or all cores.
#include <benchmark/benchmark.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include <leangrad/autograd/nn_functions.h>
#include <leangrad/kernels/backend.h>
#include <leangrad/kernels/cpu/avx512.h>
#include <leangrad/kernels/cpu/group_norm_reference.h>
#include <leangrad/kernels/cpu/tanhexp_reference.h>
#include <leangrad/kernels/creation.h>
#include <leangrad/kernels/ops.h>

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
bool normalized(const Tensor& y, std::int64_t group_size = kChannels / kGroups * kSide * kSide) {
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

// ---- Issue 19's shapes, through the public functions ----------------------------------------

const leangrad::Shape kActivationShape = {64, 64, 56, 56};
constexpr std::int64_t kActivationNumel = 64 * 64 * 56 * 56;
const leangrad::Shape kNormShape = {16, 64, 56, 56};
constexpr std::int64_t kNormNumel = 16 * 64 * 56 * 56;
constexpr std::int64_t kNormChannels = 64, kNormGroups = 32;

// f(x) at element i against the definition in double.
bool tanhexp_matches_double(const Tensor& x, const Tensor& y, std::int64_t i) {
  const double xi = element(x, i);
  return std::fabs(element(y, i) - xi * std::tanh(std::exp(xi))) <= 1e-5 * (1 + std::fabs(xi));
}

void BM_TanhExp_Forward(benchmark::State& state) {
  const Tensor x = leangrad::randn(kActivationShape, kFloat32);
  if (!tanhexp_matches_double(x, leangrad::tanhexp(x), 4242)) {
    state.SkipWithError("tanhexp differs from the definition");
  }
  for (auto _ : state) {
    Tensor y = leangrad::tanhexp(x);
    benchmark::DoNotOptimize(y.data_ptr());
  }
  state.SetBytesProcessed(state.iterations() * kActivationNumel * 8);
}
BENCHMARK(BM_TanhExp_Forward)->Unit(benchmark::kMillisecond)->UseRealTime();

// The machine's bandwidth on TanhExp's bytes: the activations copied into a preallocated tensor
// (read 4 and write 4 bytes per element, as TanhExp's forward launcher), for issue 19's "60% of
// the memory bandwidth".
void BM_Copy_Activations(benchmark::State& state) {
  const Tensor x = leangrad::randn(kActivationShape, kFloat32);
  Tensor y = leangrad::empty(kActivationShape, kFloat32);
  for (auto _ : state) {
    y.copy_(x);
    benchmark::DoNotOptimize(y.data_ptr());
  }
  state.SetBytesProcessed(state.iterations() * kActivationNumel * 8);
}
BENCHMARK(BM_Copy_Activations)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_TanhExp_ForwardBackward(benchmark::State& state) {
  Tensor x = leangrad::randn(kActivationShape, kFloat32);
  x.requires_grad_();
  const Tensor g = leangrad::randn(kActivationShape, kFloat32);
  for (auto _ : state) {
    Tensor y = leangrad::tanhexp(x);
    y.backward(g);
    benchmark::DoNotOptimize(x.grad().data_ptr());
    x.set_grad(Tensor());
  }
  state.SetBytesProcessed(state.iterations() * kActivationNumel * 20);
}
BENCHMARK(BM_TanhExp_ForwardBackward)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_GroupNorm_Forward(benchmark::State& state) {
  const Tensor x = leangrad::randn(kNormShape, kFloat32);
  const Tensor w = leangrad::randn({kNormChannels}, kFloat32);
  const Tensor b = leangrad::randn({kNormChannels}, kFloat32);
  const Tensor ones = leangrad::ones({kNormChannels}, kFloat32);
  const Tensor zeros = leangrad::zeros({kNormChannels}, kFloat32);
  if (!normalized(leangrad::group_norm(x, kNormGroups, ones, zeros, 1e-5), 2 * 56 * 56)) {
    state.SkipWithError("group_norm output is not normalized");
  }
  for (auto _ : state) {
    Tensor y = leangrad::group_norm(x, kNormGroups, w, b, 1e-5);
    benchmark::DoNotOptimize(y.data_ptr());
  }
  state.SetBytesProcessed(state.iterations() * kNormNumel * 12);
}
BENCHMARK(BM_GroupNorm_Forward)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_GroupNorm_ForwardBackward(benchmark::State& state) {
  Tensor x = leangrad::randn(kNormShape, kFloat32);
  Tensor w = leangrad::randn({kNormChannels}, kFloat32);
  Tensor b = leangrad::randn({kNormChannels}, kFloat32);
  const Tensor g = leangrad::randn(kNormShape, kFloat32);
  for (Tensor* t : {&x, &w, &b})
    t->requires_grad_();
  for (auto _ : state) {
    Tensor y = leangrad::group_norm(x, kNormGroups, w, b, 1e-5);
    y.backward(g);
    benchmark::DoNotOptimize(x.grad().data_ptr());
    for (Tensor* t : {&x, &w, &b})
      t->set_grad(Tensor());
  }
  state.SetBytesProcessed(state.iterations() * kNormNumel * 32);
}
BENCHMARK(BM_GroupNorm_ForwardBackward)->Unit(benchmark::kMillisecond)->UseRealTime();

// ---- The raw launchers: the reference loops (/0) and the vectorised kernels (/1) ---------------

namespace cpu = leangrad::kernels::cpu;

// The two launchers give values within 1e-5 (relative to 1 + |value|) of each other on `out`.
bool launchers_agree(const std::vector<float>& a, const std::vector<float>& b) {
  for (std::size_t i = 0; i < a.size(); i += 997)
    if (!(std::fabs(a[i] - b[i]) <= 1e-5f * (1 + std::fabs(b[i])))) return false;
  return true;
}

// set_avx512_copies_allowed for one benchmark, then back to the CPU's answer.
struct AllowAvx512 {
  explicit AllowAvx512(bool allowed) { cpu::set_avx512_copies_allowed(allowed); }
  ~AllowAvx512() { cpu::set_avx512_copies_allowed(true); }
  AllowAvx512(const AllowAvx512&) = delete;
  AllowAvx512& operator=(const AllowAvx512&) = delete;
};

void BM_Launcher_TanhExp_Forward(benchmark::State& state) {
  const bool vectorized = state.range(0) >= 1;
  const AllowAvx512 avx512(state.range(0) != 2);
  const Tensor x = leangrad::randn(kActivationShape, kFloat32);
  std::vector<float> y(kActivationNumel), y_ref(kActivationNumel);
  cpu::reference::tanhexp_forward(kFloat32, kActivationNumel, y_ref.data(), x.data_ptr());
  cpu::tanhexp_forward(kFloat32, kActivationNumel, y.data(), x.data_ptr());
  if (!launchers_agree(y, y_ref)) state.SkipWithError("the launchers disagree");
  for (auto _ : state) {
    if (vectorized) {
      cpu::tanhexp_forward(kFloat32, kActivationNumel, y.data(), x.data_ptr());
    } else {
      cpu::reference::tanhexp_forward(kFloat32, kActivationNumel, y.data(), x.data_ptr());
    }
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(state.iterations() * kActivationNumel * 8);
}
BENCHMARK(BM_Launcher_TanhExp_Forward)
    ->Arg(0)
    ->Arg(1)
    ->Arg(2)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

void BM_Launcher_TanhExp_Backward(benchmark::State& state) {
  const bool vectorized = state.range(0) >= 1;
  const AllowAvx512 avx512(state.range(0) != 2);
  const Tensor x = leangrad::randn(kActivationShape, kFloat32);
  const Tensor dy = leangrad::randn(kActivationShape, kFloat32);
  std::vector<float> dx(kActivationNumel), dx_ref(kActivationNumel);
  cpu::reference::tanhexp_backward(kFloat32, kActivationNumel, dx_ref.data(), dy.data_ptr(),
                                   x.data_ptr());
  cpu::tanhexp_backward(kFloat32, kActivationNumel, dx.data(), dy.data_ptr(), x.data_ptr());
  if (!launchers_agree(dx, dx_ref)) state.SkipWithError("the launchers disagree");
  for (auto _ : state) {
    if (vectorized) {
      cpu::tanhexp_backward(kFloat32, kActivationNumel, dx.data(), dy.data_ptr(), x.data_ptr());
    } else {
      cpu::reference::tanhexp_backward(kFloat32, kActivationNumel, dx.data(), dy.data_ptr(),
                                       x.data_ptr());
    }
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(state.iterations() * kActivationNumel * 12);
}
BENCHMARK(BM_Launcher_TanhExp_Backward)
    ->Arg(0)
    ->Arg(1)
    ->Arg(2)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

const leangrad::kernels::GroupNormSizes kNormSizes{16, kNormChannels, 56 * 56, kNormGroups};

void BM_Launcher_GroupNorm_Forward(benchmark::State& state) {
  const bool vectorized = state.range(0) == 1;
  const Tensor x = leangrad::randn(kNormShape, kFloat32);
  const Tensor w = leangrad::randn({kNormChannels}, kFloat32);
  const Tensor b = leangrad::randn({kNormChannels}, kFloat32);
  std::vector<float> y(kNormNumel), y_ref(kNormNumel), stats(4 * 16 * kNormGroups);
  float* mean = stats.data();
  float* rstd = mean + 16 * kNormGroups;
  cpu::reference::group_norm_forward(kFloat32, kNormSizes, y_ref.data(), mean, rstd, x.data_ptr(),
                                     w.data_ptr(), b.data_ptr(), 1e-5);
  cpu::group_norm_forward(kFloat32, kNormSizes, y.data(), mean, rstd, x.data_ptr(), w.data_ptr(),
                          b.data_ptr(), 1e-5);
  if (!launchers_agree(y, y_ref)) state.SkipWithError("the launchers disagree");
  for (auto _ : state) {
    if (vectorized) {
      cpu::group_norm_forward(kFloat32, kNormSizes, y.data(), mean, rstd, x.data_ptr(),
                              w.data_ptr(), b.data_ptr(), 1e-5);
    } else {
      cpu::reference::group_norm_forward(kFloat32, kNormSizes, y.data(), mean, rstd, x.data_ptr(),
                                         w.data_ptr(), b.data_ptr(), 1e-5);
    }
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(state.iterations() * kNormNumel * 12);
}
BENCHMARK(BM_Launcher_GroupNorm_Forward)
    ->Arg(0)
    ->Arg(1)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

void BM_Launcher_GroupNorm_Backward(benchmark::State& state) {
  const bool vectorized = state.range(0) == 1;
  const Tensor x = leangrad::randn(kNormShape, kFloat32);
  const Tensor dy = leangrad::randn(kNormShape, kFloat32);
  const Tensor w = leangrad::randn({kNormChannels}, kFloat32);
  std::vector<float> y(kNormNumel), dx(kNormNumel), dx_ref(kNormNumel), stats(2 * 16 * kNormGroups);
  std::vector<float> dw(kNormChannels), db(kNormChannels);
  float* mean = stats.data();
  float* rstd = mean + 16 * kNormGroups;
  cpu::reference::group_norm_forward(kFloat32, kNormSizes, y.data(), mean, rstd, x.data_ptr(),
                                     w.data_ptr(), nullptr, 1e-5);
  cpu::reference::group_norm_backward(kFloat32, kNormSizes, dx_ref.data(), dw.data(), db.data(),
                                      dy.data_ptr(), x.data_ptr(), mean, rstd, w.data_ptr());
  cpu::group_norm_backward(kFloat32, kNormSizes, dx.data(), dw.data(), db.data(), dy.data_ptr(),
                           x.data_ptr(), mean, rstd, w.data_ptr());
  if (!launchers_agree(dx, dx_ref)) state.SkipWithError("the launchers disagree");
  for (auto _ : state) {
    if (vectorized) {
      cpu::group_norm_backward(kFloat32, kNormSizes, dx.data(), dw.data(), db.data(), dy.data_ptr(),
                               x.data_ptr(), mean, rstd, w.data_ptr());
    } else {
      cpu::reference::group_norm_backward(kFloat32, kNormSizes, dx.data(), dw.data(), db.data(),
                                          dy.data_ptr(), x.data_ptr(), mean, rstd, w.data_ptr());
    }
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(state.iterations() * kNormNumel * 20);
}
BENCHMARK(BM_Launcher_GroupNorm_Backward)
    ->Arg(0)
    ->Arg(1)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

}  // namespace
BENCHMARK_MAIN();
