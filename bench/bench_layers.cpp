// CPU throughput of the layer ops (autograd/nn_functions.h, run without autograd): cross_entropy
// forward and backward, max_pool2d on the Fashion-MNIST CNN shapes, avg_pool2d forward and
// backward, pixel_shuffle and linear (beside LibTorch's in
// bench/compare/libtorch/libtorch_layers.cpp: bench/compare/layers_vs_libtorch.sh);
// the normalisations (softmax, log_softmax, layer_norm, group_norm, batch_norm) on 16M elements in
// float32, float16 and bfloat16 (BM_Normalize_16M, beside LibTorch's in
// bench/compare/libtorch/libtorch_normalize.cpp: bench/compare/normalize_vs_libtorch.sh), and
// softmax's two CPU kernels, the reference loop (/0) and the vectorised one (/1)
// (BM_Launcher_Softmax). Memory-bound ops report GB/s of bytes touched (each input read once,
// each output written once); linear reports GFLOP/s (2 M N K). Each benchmark checks one result
// against a plain loop first. bench/compare/layers_torch.py prints the same shapes for PyTorch
// (CPU or CUDA).
#include <benchmark/benchmark.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include <leangrad/autograd/engine.h>
#include <leangrad/autograd/functions.h>
#include <leangrad/autograd/grad_mode.h>
#include <leangrad/autograd/nn_functions.h>
#include <leangrad/kernels/backend.h>
#include <leangrad/kernels/cpu/softmax_reference.h>
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

// Average pooling forward and backward (ops::avg_pool2d, ops::avg_pool2d_backward): /0 the usual
// 2 x 2 stride 2 over (64, 64, 56, 56); /1 3 x 3 stride 1 padding 1 without counting the padding
// over (32, 256, 14, 14) (overlapping windows, as Inception's pooling branch).
void BM_AvgPool2d(benchmark::State& state) {
  const bool overlapping = state.range(0) == 1;
  const Shape shape = overlapping ? Shape{32, 256, 14, 14} : Shape{64, 64, 56, 56};
  const leangrad::ops::Pool2dSize kernel =
      overlapping ? leangrad::ops::Pool2dSize{3, 3} : leangrad::ops::Pool2dSize{2, 2};
  const leangrad::ops::Pool2dSize stride =
      overlapping ? leangrad::ops::Pool2dSize{1, 1} : leangrad::ops::Pool2dSize{2, 2};
  const leangrad::ops::Pool2dSize padding =
      overlapping ? leangrad::ops::Pool2dSize{1, 1} : leangrad::ops::Pool2dSize{0, 0};
  const bool count_pad = !overlapping;
  const Tensor x = leangrad::randn(shape);
  const Tensor y0 = leangrad::ops::avg_pool2d(x, kernel, stride, padding, false, count_pad);
  // Output (0, 0, 1, 1): 2 x 2 from (2, 2); 3 x 3 from (0, 0), all inside.
  const float* xp = x.data_ptr<float>();
  const std::int64_t W = shape[3], h0 = overlapping ? 0 : 2;
  double ref = 0;
  for (std::int64_t i = 0; i < kernel[0]; ++i)
    for (std::int64_t j = 0; j < kernel[1]; ++j)
      ref += xp[(h0 + i) * W + h0 + j];
  ref /= static_cast<double>(kernel[0] * kernel[1]);
  if (std::fabs(y0.data_ptr<float>()[y0.size(3) + 1] - ref) > 1e-5)
    state.SkipWithError("avg_pool2d differs from the reference loop");
  const Tensor gy = leangrad::randn(y0.shape());
  for (auto _ : state) {
    Tensor y = leangrad::ops::avg_pool2d(x, kernel, stride, padding, false, count_pad);
    Tensor gx =
        leangrad::ops::avg_pool2d_backward(gy, shape, kernel, stride, padding, false, count_pad);
    benchmark::DoNotOptimize(y.data_ptr());
    benchmark::DoNotOptimize(gx.data_ptr());
  }
  // forward reads x and writes y; backward reads gy and writes gx
  state.SetBytesProcessed(state.iterations() * (x.numel() + y0.numel()) * 4 * 2);
}
BENCHMARK(BM_AvgPool2d)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond)->UseRealTime();

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

// ---- Normalisations on 16M elements (BM_Normalize_16M) -----------------------------------------
// softmax and log_softmax of (4096, 4096) over the last dim; softmax of (64, 256, 32, 32) over
// dim 1 (the runs are strided columns); softmax's backward over the last dim; layer_norm over the
// last 4096 with weight and bias, and the same forward and backward in training (LayerNormTrain:
// the three gradients by autograd::grad, so none is accumulated into a .grad); group_norm of
// (16, 64, 128, 128), 32 groups, with weight and bias; batch_norm of (16, 64, 128, 128) with
// weight and bias: training (the batch's statistics, the running ones updated), the same forward
// and backward (BatchNormTrain), evaluation (BatchNormEval, the running statistics), and
// training forward and backward of (4096, 4096), one value per channel and sample
// (BatchNorm1dTrain). Bytes: the input read once and the output written once (softmax's backward:
// two inputs; LayerNormTrain and the BatchNorm*Train: x and y forward, dy, x and dx backward).

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
  Tensor x, g, y, weight, bias, running_mean, running_var;
};

NormInputs norm_inputs(Norm work, leangrad::DType dtype) {
  NormInputs in;
  if (work == Norm::SoftmaxDim1) {
    in.x = leangrad::randn({64, 256, 32, 32}).to(dtype);
  } else if (work == Norm::GroupNorm || (is_batch_norm(work) && work != Norm::BatchNorm1dTrain)) {
    in.x = leangrad::randn({16, 64, 128, 128}).to(dtype);
    in.weight = leangrad::randn({64}).to(dtype);
    in.bias = leangrad::randn({64}).to(dtype);
  } else {
    in.x = leangrad::randn({4096, 4096}).to(dtype);
    in.weight = leangrad::randn({4096}).to(dtype);
    in.bias = leangrad::randn({4096}).to(dtype);
  }
  if (is_batch_norm(work)) {  // float32 running statistics, as a BatchNorm module's
    in.running_mean = leangrad::zeros({in.x.size(1)});
    in.running_var = leangrad::ones({in.x.size(1)});
  }
  if (work == Norm::SoftmaxBackward || is_train(work))
    in.g = leangrad::randn(in.x.shape()).to(dtype);
  if (work == Norm::SoftmaxBackward) in.y = leangrad::ops::softmax(in.x, -1, false);
  return in;
}

Tensor run_norm(Norm work, const NormInputs& in) {
  switch (work) {
    case Norm::Softmax:
      return leangrad::ops::softmax(in.x, -1, false);
    case Norm::LogSoftmax:
      return leangrad::ops::softmax(in.x, -1, true);
    case Norm::SoftmaxDim1:
      return leangrad::ops::softmax(in.x, 1, false);
    case Norm::SoftmaxBackward:
      return leangrad::ops::softmax_backward(in.g, in.y, -1, false);
    case Norm::LayerNorm:
      return leangrad::layer_norm(in.x, {4096}, in.weight, in.bias, 1e-5);
    case Norm::LayerNormTrain: {
      const leangrad::AutoGradMode enable(true);
      const Tensor x = in.x.detach().requires_grad_();
      const Tensor w = in.weight.detach().requires_grad_();
      const Tensor b = in.bias.detach().requires_grad_();
      const Tensor y = leangrad::layer_norm(x, {4096}, w, b, 1e-5);
      return leangrad::autograd::grad({y}, {x, w, b}, {in.g})[0];  // dx
    }
    case Norm::GroupNorm:
      return leangrad::group_norm(in.x, 32, in.weight, in.bias, 1e-5);
    case Norm::BatchNorm:
      return leangrad::batch_norm(in.x, in.running_mean, in.running_var, in.weight, in.bias, true);
    case Norm::BatchNormEval:
      return leangrad::batch_norm(in.x, in.running_mean, in.running_var, in.weight, in.bias, false);
    case Norm::BatchNormTrain:
    case Norm::BatchNorm1dTrain: {
      const leangrad::AutoGradMode enable(true);
      const Tensor x = in.x.detach().requires_grad_();
      const Tensor w = in.weight.detach().requires_grad_();
      const Tensor b = in.bias.detach().requires_grad_();
      const Tensor y = leangrad::batch_norm(x, in.running_mean, in.running_var, w, b, true);
      return leangrad::autograd::grad({y}, {x, w, b}, {in.g})[0];  // dx
    }
  }
  return Tensor();
}

// Element 0 of the result against a plain double computation from the (rounded) inputs.
double norm_element0(Norm work, const NormInputs& in) {
  const Tensor x = in.x.to(leangrad::kFloat64);
  const double* v = x.data_ptr<double>();
  // The run through element 0: length n, stride s.
  const Tensor w64 = in.weight.defined() ? in.weight.to(leangrad::kFloat64) : Tensor();
  if (work == Norm::BatchNormEval)  // running statistics 0 and 1
    return v[0] / std::sqrt(1 + 1e-5) * w64.data_ptr<double>()[0] +
           in.bias.to(leangrad::kFloat64).data_ptr<double>()[0];
  // The run through element 0: element i at index(i), n of them.
  const std::int64_t n = work == Norm::SoftmaxDim1        ? 256
                         : work == Norm::GroupNorm        ? 2 * 128 * 128
                         : work == Norm::BatchNorm1dTrain ? 4096
                         : is_batch_norm(work)            ? 16 * 128 * 128
                                                          : 4096;
  auto index = [&](std::int64_t i) -> std::int64_t {
    if (work == Norm::SoftmaxDim1) return i * 32 * 32;
    if (work == Norm::BatchNorm1dTrain) return i * 4096;
    if (is_batch_norm(work)) return (i / (128 * 128)) * 64 * 128 * 128 + i % (128 * 128);
    return i;
  };
  if (work == Norm::LayerNorm || work == Norm::GroupNorm || is_train(work) || is_batch_norm(work)) {
    double mean = 0, var = 0;
    for (std::int64_t i = 0; i < n; ++i)
      mean += v[index(i)];
    mean /= static_cast<double>(n);
    for (std::int64_t i = 0; i < n; ++i)
      var += (v[index(i)] - mean) * (v[index(i)] - mean);
    var /= static_cast<double>(n);
    const double rstd = 1 / std::sqrt(var + 1e-5);
    const double* w = w64.data_ptr<double>();
    // BatchNorm's run is one channel's: one weight.
    auto weight_at = [&](std::int64_t i) { return is_batch_norm(work) ? w[0] : w[i]; };
    if (is_train(work)) {
      // dx[0] = rstd (w dy - mean(w dy) - xhat mean(w dy xhat)) over the run.
      const Tensor g64 = in.g.to(leangrad::kFloat64);
      const double* g = g64.data_ptr<double>();
      double a = 0, b = 0;
      for (std::int64_t i = 0; i < n; ++i) {
        a += weight_at(i) * g[index(i)];
        b += weight_at(i) * g[index(i)] * (v[index(i)] - mean) * rstd;
      }
      const double m = static_cast<double>(n);
      return rstd * (w[0] * g[0] - a / m - (v[0] - mean) * rstd * b / m);
    }
    const double b = in.bias.to(leangrad::kFloat64).data_ptr<double>()[0];
    return (v[0] - mean) * rstd * w[0] + b;
  }
  const std::int64_t s = work == Norm::SoftmaxDim1 ? 32 * 32 : 1;
  double m = -std::numeric_limits<double>::infinity(), sum = 0;
  for (std::int64_t i = 0; i < n; ++i)
    m = std::max(m, v[i * s]);
  for (std::int64_t i = 0; i < n; ++i)
    sum += std::exp(v[i * s] - m);
  if (work == Norm::LogSoftmax) return v[0] - m - std::log(sum);
  if (work != Norm::SoftmaxBackward) return std::exp(v[0] - m) / sum;
  const Tensor g = in.g.to(leangrad::kFloat64);
  const Tensor y = in.y.to(leangrad::kFloat64);
  double dot = 0;
  for (std::int64_t i = 0; i < n; ++i)
    dot += g.data_ptr<double>()[i] * y.data_ptr<double>()[i];
  return y.data_ptr<double>()[0] * (g.data_ptr<double>()[0] - dot);
}

void BM_Normalize_16M(benchmark::State& state, Norm work, leangrad::DType dtype) {
  leangrad::NoGradGuard no_grad;
  const NormInputs in = norm_inputs(work, dtype);
  const double got = run_norm(work, in).to(leangrad::kFloat64).data_ptr<double>()[0];
  const double want = norm_element0(work, in);
  // A few roundings of the dtype (2^-8 for bfloat16, 2^-11 for float16), or float32's sums.
  const double tol = dtype == leangrad::kBFloat16  ? 0x1p-6
                     : dtype == leangrad::kFloat16 ? 0x1p-9
                                                   : 1e-5;
  if (!(std::fabs(got - want) <= tol * (1 + std::fabs(want))))
    state.SkipWithError("element 0 differs from the computation in double");
  const std::int64_t element_bytes = static_cast<std::int64_t>(leangrad::element_size(dtype));
  const std::int64_t streams = work == Norm::SoftmaxBackward ? 3 : is_train(work) ? 5 : 2;
  for (auto _ : state) {
    Tensor y = run_norm(work, in);
    benchmark::DoNotOptimize(y.data_ptr());
  }
  state.SetBytesProcessed(state.iterations() * in.x.numel() * streams * element_bytes);
}

#define LEANGRAD_NORMALIZE_BENCHMARK(work, suffix, dtype)                           \
  BENCHMARK_CAPTURE(BM_Normalize_16M, work##_##suffix, Norm::work, leangrad::dtype) \
      ->Unit(benchmark::kMillisecond)                                               \
      ->UseRealTime()
#define LEANGRAD_NORMALIZE_BENCHMARKS(work)          \
  LEANGRAD_NORMALIZE_BENCHMARK(work, F32, kFloat32); \
  LEANGRAD_NORMALIZE_BENCHMARK(work, F16, kFloat16); \
  LEANGRAD_NORMALIZE_BENCHMARK(work, BF16, kBFloat16)
LEANGRAD_NORMALIZE_BENCHMARKS(Softmax);
LEANGRAD_NORMALIZE_BENCHMARKS(LogSoftmax);
LEANGRAD_NORMALIZE_BENCHMARKS(SoftmaxDim1);
LEANGRAD_NORMALIZE_BENCHMARKS(SoftmaxBackward);
LEANGRAD_NORMALIZE_BENCHMARKS(LayerNorm);
LEANGRAD_NORMALIZE_BENCHMARKS(LayerNormTrain);
LEANGRAD_NORMALIZE_BENCHMARKS(GroupNorm);
LEANGRAD_NORMALIZE_BENCHMARKS(BatchNorm);
LEANGRAD_NORMALIZE_BENCHMARKS(BatchNormTrain);
LEANGRAD_NORMALIZE_BENCHMARKS(BatchNormEval);
LEANGRAD_NORMALIZE_BENCHMARKS(BatchNorm1dTrain);

// ---- Softmax's two CPU kernels: the reference loop (/0) and the vectorised one (/1) -------------
// float32 into a preallocated output: rows (4096, 4096) over the last dim (/.../1) and columns
// (64, 256, 1024) over the middle dim (/.../1024), forward.
void BM_Launcher_Softmax(benchmark::State& state) {
  const bool vectorized = state.range(0) == 1;
  const std::int64_t inner = state.range(1);
  const std::int64_t R = inner == 1 ? 4096 : 256;
  const std::int64_t outer = inner == 1 ? 4096 : 64;
  const Tensor x = leangrad::randn({outer, R, inner});
  std::vector<float> y(static_cast<std::size_t>(x.numel())), y_ref(y.size());
  namespace cpu = leangrad::kernels::cpu;
  cpu::reference::softmax(leangrad::kFloat32, y_ref.data(), x.data_ptr(), outer, R, inner, false);
  cpu::softmax(leangrad::kFloat32, y.data(), x.data_ptr(), outer, R, inner, false);
  for (std::size_t i = 0; i < y.size(); i += 997)
    if (!(std::fabs(y[i] - y_ref[i]) <= 1e-5f * y_ref[i])) {
      state.SkipWithError("the launchers disagree");
      break;
    }
  for (auto _ : state) {
    if (vectorized) {
      cpu::softmax(leangrad::kFloat32, y.data(), x.data_ptr(), outer, R, inner, false);
    } else {
      cpu::reference::softmax(leangrad::kFloat32, y.data(), x.data_ptr(), outer, R, inner, false);
    }
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(state.iterations() * x.numel() * 8);
}
BENCHMARK(BM_Launcher_Softmax)
    ->Args({0, 1})
    ->Args({1, 1})
    ->Args({0, 1024})
    ->Args({1, 1024})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
