// libtorch-normalize: LibTorch's side of bench/compare/normalize_vs_libtorch.sh. The
// normalisation benchmarks of bench/bench_layers.cpp (BM_Normalize_16M) with the same Google
// Benchmark names, shapes and byte counts, as a LibTorch 1.13 user writes them on the CPU, under
// NoGradGuard: torch::softmax and torch::log_softmax of (4096, 4096) over the last dim,
// torch::softmax of (64, 256, 32, 32) over dim 1, softmax's backward over the last dim
// (torch::_softmax_backward_data, what autograd calls), torch::layer_norm over the last 4096, also
// in training (forward and backward, the three gradients by torch::autograd::grad), and
// torch::group_norm of (16, 64, 128, 128) with 32 groups, both with weight and bias, and
// torch::batch_norm of (16, 64, 128, 128) with weight, bias and float32 running statistics in
// training (forward; forward and backward), in evaluation, and of (4096, 4096) in training
// (forward and backward); in float32,
// float16 and bfloat16. An op LibTorch 1.13 does not implement for a dtype on the CPU reports its
// error instead of a time.
//   libtorch-normalize [--threads N] [Google Benchmark options]
#include <benchmark/benchmark.h>
#include <torch/torch.h>

#include <cstdint>
#include <string>

#include "benchmark_main.h"

namespace {

enum class Norm {
  Softmax,
  LogSoftmax,
  SoftmaxDim1,
  SoftmaxBackward,
  LayerNorm,
  LayerNormTrain,
  GroupNorm,
  BatchNorm,
  BatchNormTrain,
  BatchNormEval,
  BatchNorm1dTrain
};

bool is_batch_norm(Norm work) {
  return work == Norm::BatchNorm || work == Norm::BatchNormTrain || work == Norm::BatchNormEval ||
         work == Norm::BatchNorm1dTrain;
}

bool is_train(Norm work) {
  return work == Norm::LayerNormTrain || work == Norm::BatchNormTrain ||
         work == Norm::BatchNorm1dTrain;
}

struct NormInputs {
  torch::Tensor x, g, y, weight, bias, running_mean, running_var;
};

NormInputs norm_inputs(Norm work, torch::ScalarType dtype) {
  NormInputs in;
  if (work == Norm::SoftmaxDim1) {
    in.x = torch::randn({64, 256, 32, 32}).to(dtype);
  } else if (work == Norm::GroupNorm || (is_batch_norm(work) && work != Norm::BatchNorm1dTrain)) {
    in.x = torch::randn({16, 64, 128, 128}).to(dtype);
    in.weight = torch::randn({64}).to(dtype);
    in.bias = torch::randn({64}).to(dtype);
  } else {
    in.x = torch::randn({4096, 4096}).to(dtype);
    in.weight = torch::randn({4096}).to(dtype);
    in.bias = torch::randn({4096}).to(dtype);
  }
  if (is_batch_norm(work)) {  // float32 running statistics, as a BatchNorm module's
    in.running_mean = torch::zeros({in.x.size(1)});
    in.running_var = torch::ones({in.x.size(1)});
  }
  if (work == Norm::SoftmaxBackward || is_train(work)) in.g = torch::randn(in.x.sizes()).to(dtype);
  if (work == Norm::SoftmaxBackward) in.y = torch::softmax(in.x, -1);
  return in;
}

torch::Tensor run_norm(Norm work, const NormInputs& in) {
  switch (work) {
    case Norm::Softmax:
      return torch::softmax(in.x, -1);
    case Norm::LogSoftmax:
      return torch::log_softmax(in.x, -1);
    case Norm::SoftmaxDim1:
      return torch::softmax(in.x, 1);
    case Norm::SoftmaxBackward:
      return torch::_softmax_backward_data(in.g, in.y, -1, in.y.scalar_type());
    case Norm::LayerNorm:
      return torch::layer_norm(in.x, {4096}, in.weight, in.bias, 1e-5);
    case Norm::LayerNormTrain: {
      const torch::AutoGradMode enable(true);
      const torch::Tensor x = in.x.detach().requires_grad_();
      const torch::Tensor w = in.weight.detach().requires_grad_();
      const torch::Tensor b = in.bias.detach().requires_grad_();
      const torch::Tensor y = torch::layer_norm(x, {4096}, w, b, 1e-5);
      return torch::autograd::grad({y}, {x, w, b}, {in.g})[0];  // dx
    }
    case Norm::GroupNorm:
      return torch::group_norm(in.x, 32, in.weight, in.bias, 1e-5);
    case Norm::BatchNorm:
    case Norm::BatchNormEval:
      return torch::batch_norm(in.x, in.weight, in.bias, in.running_mean, in.running_var,
                               work == Norm::BatchNorm, 0.1, 1e-5, false);
    case Norm::BatchNormTrain:
    case Norm::BatchNorm1dTrain: {
      const torch::AutoGradMode enable(true);
      const torch::Tensor x = in.x.detach().requires_grad_();
      const torch::Tensor w = in.weight.detach().requires_grad_();
      const torch::Tensor b = in.bias.detach().requires_grad_();
      const torch::Tensor y =
          torch::batch_norm(x, w, b, in.running_mean, in.running_var, true, 0.1, 1e-5, false);
      return torch::autograd::grad({y}, {x, w, b}, {in.g})[0];  // dx
    }
  }
  return {};
}

void BM_Normalize_16M(benchmark::State& state, Norm work, torch::ScalarType dtype) {
  torch::NoGradGuard no_grad;
  torch::manual_seed(0);
  NormInputs in;
  try {
    in = norm_inputs(work, dtype);
    run_norm(work, in);
  } catch (const c10::Error& e) {
    const std::string message = e.what_without_backtrace();
    state.SkipWithError(message.substr(0, message.find('\n')).c_str());
    return;
  }
  const int64_t element_bytes = static_cast<int64_t>(in.x.element_size());
  const int64_t streams = work == Norm::SoftmaxBackward ? 3 : is_train(work) ? 5 : 2;
  for (auto _ : state) {
    torch::Tensor y = run_norm(work, in);
    benchmark::DoNotOptimize(y.data_ptr());
  }
  state.SetBytesProcessed(state.iterations() * in.x.numel() * streams * element_bytes);
}

#define LIBTORCH_NORMALIZE_BENCHMARK(work, suffix, dtype)                        \
  BENCHMARK_CAPTURE(BM_Normalize_16M, work##_##suffix, Norm::work, torch::dtype) \
      ->Unit(benchmark::kMillisecond)                                            \
      ->UseRealTime()
#define LIBTORCH_NORMALIZE_BENCHMARKS(work)          \
  LIBTORCH_NORMALIZE_BENCHMARK(work, F32, kFloat32); \
  LIBTORCH_NORMALIZE_BENCHMARK(work, F16, kFloat16); \
  LIBTORCH_NORMALIZE_BENCHMARK(work, BF16, kBFloat16)
LIBTORCH_NORMALIZE_BENCHMARKS(Softmax);
LIBTORCH_NORMALIZE_BENCHMARKS(LogSoftmax);
LIBTORCH_NORMALIZE_BENCHMARKS(SoftmaxDim1);
LIBTORCH_NORMALIZE_BENCHMARKS(SoftmaxBackward);
LIBTORCH_NORMALIZE_BENCHMARKS(LayerNorm);
LIBTORCH_NORMALIZE_BENCHMARKS(LayerNormTrain);
LIBTORCH_NORMALIZE_BENCHMARKS(GroupNorm);
LIBTORCH_NORMALIZE_BENCHMARKS(BatchNorm);
LIBTORCH_NORMALIZE_BENCHMARKS(BatchNormTrain);
LIBTORCH_NORMALIZE_BENCHMARKS(BatchNormEval);
LIBTORCH_NORMALIZE_BENCHMARKS(BatchNorm1dTrain);

}  // namespace

int main(int argc, char** argv) {
  return run_libtorch_benchmarks(argc, argv);
}
