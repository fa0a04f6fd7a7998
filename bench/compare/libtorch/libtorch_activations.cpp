// libtorch-activations: LibTorch's side of bench/compare/activations_vs_libtorch.sh. The benchmarks
// of bench/bench_activations.cpp (BM_Activation_16M, BM_ActivationBackward_16M) with the same
// Google Benchmark names, shapes and byte counts, as a LibTorch 1.13 user writes them on the CPU:
// tanh, erf, log, expm1, log1p, gelu (both forms), silu, mish, elu, softplus, selu, leaky_relu,
// hardtanh, clamp and relu of a (4096, 4096) float32 tensor, forward under NoGradGuard, and
// forward plus y.backward(g) into x.grad.
//   libtorch-activations [--threads N] [Google Benchmark options]
#include <benchmark/benchmark.h>
#include <torch/torch.h>

#include <cstdint>

#include "benchmark_main.h"

namespace {

constexpr int64_t kRows = 4096, kCols = 4096, k16M = kRows * kCols;

enum class Work {
  Tanh,
  Erf,
  Log,
  Expm1,
  Log1p,
  Gelu,
  GeluTanh,
  Silu,
  Mish,
  Elu,
  Softplus,
  Selu,
  LeakyRelu,
  Hardtanh,
  Clamp,
  Relu
};

torch::Tensor run_work(Work work, const torch::Tensor& x) {
  switch (work) {
    case Work::Tanh:
      return torch::tanh(x);
    case Work::Erf:
      return torch::erf(x);
    case Work::Log:
      return torch::log(x);
    case Work::Expm1:
      return torch::expm1(x);
    case Work::Log1p:
      return torch::log1p(x);
    case Work::Gelu:
      return torch::gelu(x);
    case Work::GeluTanh:
      return torch::gelu(x, "tanh");
    case Work::Silu:
      return torch::silu(x);
    case Work::Mish:
      return torch::mish(x);
    case Work::Elu:
      return torch::elu(x, 1.0);
    case Work::Softplus:
      return torch::softplus(x, 1.0, 20.0);
    case Work::Selu:
      return torch::selu(x);
    case Work::LeakyRelu:
      return torch::leaky_relu(x, 0.01);
    case Work::Hardtanh:
      return torch::hardtanh(x, -1.0, 1.0);
    case Work::Clamp:
      return torch::clamp(x, -0.5, 0.5);
    case Work::Relu:
      return torch::relu(x);
  }
  return {};
}

torch::Tensor input_for(Work work) {
  torch::manual_seed(0);
  const torch::Tensor x = torch::randn({kRows, kCols});
  return work == Work::Log || work == Work::Log1p ? x.abs() : x;
}

void BM_Activation_16M(benchmark::State& state, Work work) {
  torch::NoGradGuard no_grad;
  const torch::Tensor x = input_for(work);
  for (auto _ : state) {
    torch::Tensor y = run_work(work, x);
    benchmark::DoNotOptimize(y.data_ptr());
  }
  state.SetBytesProcessed(state.iterations() * k16M * 8);
}

void BM_ActivationBackward_16M(benchmark::State& state, Work work) {
  torch::Tensor x = input_for(work).requires_grad_(true);
  const torch::Tensor g = torch::randn({kRows, kCols});
  for (auto _ : state) {
    torch::Tensor y = run_work(work, x);
    y.backward(g);
    torch::Tensor grad = x.grad();
    x.mutable_grad() = torch::Tensor();
    benchmark::DoNotOptimize(grad.data_ptr());
  }
  state.SetBytesProcessed(state.iterations() * k16M * 16);
}

#define LIBTORCH_ACTIVATION_BENCHMARKS(work)                     \
  BENCHMARK_CAPTURE(BM_Activation_16M, work, Work::work)         \
      ->Unit(benchmark::kMillisecond)                            \
      ->UseRealTime();                                           \
  BENCHMARK_CAPTURE(BM_ActivationBackward_16M, work, Work::work) \
      ->Unit(benchmark::kMillisecond)                            \
      ->UseRealTime()
LIBTORCH_ACTIVATION_BENCHMARKS(Tanh);
LIBTORCH_ACTIVATION_BENCHMARKS(Erf);
LIBTORCH_ACTIVATION_BENCHMARKS(Log);
LIBTORCH_ACTIVATION_BENCHMARKS(Expm1);
LIBTORCH_ACTIVATION_BENCHMARKS(Log1p);
LIBTORCH_ACTIVATION_BENCHMARKS(Gelu);
LIBTORCH_ACTIVATION_BENCHMARKS(GeluTanh);
LIBTORCH_ACTIVATION_BENCHMARKS(Silu);
LIBTORCH_ACTIVATION_BENCHMARKS(Mish);
LIBTORCH_ACTIVATION_BENCHMARKS(Elu);
LIBTORCH_ACTIVATION_BENCHMARKS(Softplus);
LIBTORCH_ACTIVATION_BENCHMARKS(Selu);
LIBTORCH_ACTIVATION_BENCHMARKS(LeakyRelu);
LIBTORCH_ACTIVATION_BENCHMARKS(Hardtanh);
LIBTORCH_ACTIVATION_BENCHMARKS(Clamp);
LIBTORCH_ACTIVATION_BENCHMARKS(Relu);

}  // namespace

int main(int argc, char** argv) {
  return run_libtorch_benchmarks(argc, argv);
}
