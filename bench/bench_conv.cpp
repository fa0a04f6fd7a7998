// CPU throughput of conv2d (im2col + GEMM, kernels/cpu/conv.cpp; the GEMM library as
// LEANGRAD_CPU_GEMM / ops::cpu_gemm_backend says, named in the context) in GFLOP/s
// (2 N C_out H_out W_out C_in/g kH kW per operation):
//   - BM_Conv2d/{Forward,InputGrad,WeightGrad}: the kernel entries of kernels/ops.h on the
//     Fashion-MNIST CNN (batch 64: 1 -> 32 on 28 x 28, 32 -> 64 on 14 x 14, 3 x 3 pad 1), a
//     64 -> 64 3 x 3 on (4, 64, 48, 48) and issue 19's (16, 64, 56, 56) 64 -> 64. The forward is
//     checked once against a direct loop at one output point before timing.
//   - BM_Conv2dAlgorithm/{Forward,InputGrad,WeightGrad}/<shape>/<algorithm>: the same entries and
//     shapes, plus a 16 -> 32 on (64, 16, 28, 28), under ops::CpuConv2dAlgorithm Gemm (0) and
//     Direct (1): the A/B of Note [Which CPU convolution] (kernels/cpu/conv.cpp). Run with
//     --benchmark_enable_random_interleaving=true so that the two alternate in one process;
//     each is checked against the other before timing.
//   - BM_Conv2dAutograd_{Forward,ForwardBackward}: the public conv2d (autograd/nn_functions.h,
//     3 x 3 pad 1, no bias) on issue 19's (16, 64, 56, 56) 64 -> 64 and the CNN's two shapes;
//     forward+backward is one forward and y.backward(g) (the x and weight gradients).
//     bench/compare/libtorch/libtorch_conv.cpp has the same names and shapes for LibTorch
//     (bench/compare/conv_vs_libtorch.sh).
//   - BM_Conv3dAutograd_ForwardBackward/<shape>: conv3d (0: (4, 16, 16, 32, 32), 16 -> 32, 3^3,
//     padding 1) and conv_transpose3d (1: the same input, 16 -> 32, 3^3, stride 2, padding 1),
//     forward and backward (input and weight gradients) through autograd, float32, with the
//     step's peak of CPU memory allocated above what was there before it ("peak MiB": the
//     output, what autograd saved and the gradients); oneDNN's 3-D kernel or the composition over
//     conv2d, whichever ops::use_conv3d_kernel chooses (Note [Direct 3-D convolution]).
#include <benchmark/benchmark.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <iterator>

#include <leangrad/autograd/nn_functions.h>
#include <leangrad/autograd/volumetric_functions.h>
#include <leangrad/core/memory.h>
#include <leangrad/kernels/creation.h>
#include <leangrad/kernels/ops.h>

namespace {

using leangrad::Shape;
using leangrad::Tensor;
namespace ops = leangrad::ops;

struct ConvShape {
  std::int64_t n, c_in, h, w, c_out;
};
constexpr ConvShape kShapes[] = {
    {64, 1, 28, 28, 32},   // Fashion-MNIST conv1
    {64, 32, 14, 14, 64},  // Fashion-MNIST conv2
    {4, 64, 48, 48, 64},   // super-resolution block, small batch
    {16, 64, 56, 56, 64},  // issue 19's shape
};

ops::Conv2dParams pad1() {
  ops::Conv2dParams p;
  p.pad_h = p.pad_w = 1;
  return p;
}

double conv_flops(const ConvShape& s) {
  return 2.0 * s.n * s.c_out * s.h * s.w * s.c_in * 9;  // pad 1, stride 1: H_out = H
}

// y[0, 0, 1, 1] by the definition: the forward sees real data before it is timed.
bool forward_checks(const Tensor& x, const Tensor& w, const Tensor& y, const ConvShape& s) {
  const auto* xp = static_cast<const float*>(x.data_ptr());
  const auto* wp = static_cast<const float*>(w.data_ptr());
  double acc = 0;
  for (std::int64_t c = 0; c < s.c_in; ++c)
    for (int r = 0; r < 3; ++r)
      for (int q = 0; q < 3; ++q)
        acc += xp[(c * s.h + r) * s.w + q] * wp[(c * 3 + r) * 3 + q];
  return std::fabs(static_cast<const float*>(y.data_ptr())[s.w + 1] - acc) < 1e-3;
}

enum class Which { Forward, InputGrad, WeightGrad };

void BM_Conv2d(benchmark::State& state, Which which) {
  const ConvShape s = kShapes[state.range(0)];
  const Tensor x = leangrad::rand({s.n, s.c_in, s.h, s.w});
  const Tensor w = leangrad::rand({s.c_out, s.c_in, 3, 3});
  const Tensor dy = leangrad::rand({s.n, s.c_out, s.h, s.w});
  const Tensor y = ops::conv2d(x, w, Tensor(), pad1());
  if (!forward_checks(x, w, y, s)) state.SkipWithError("conv2d differs from the direct loop");
  for (auto _ : state) {
    Tensor out;
    switch (which) {
      case Which::Forward:
        out = ops::conv2d(x, w, Tensor(), pad1());
        break;
      case Which::InputGrad:
        out = ops::conv2d_input_grad(dy, w, x.shape(), pad1());
        break;
      case Which::WeightGrad:
        out = ops::conv2d_weight_grad(dy, x, w.shape(), pad1());
        break;
    }
    benchmark::DoNotOptimize(out.data_ptr());
  }
  state.counters["GFLOP/s"] =
      benchmark::Counter(conv_flops(s) * 1e-9 * state.iterations(), benchmark::Counter::kIsRate);
  char label[96];
  std::snprintf(label, sizeof(label), "(%lld, %lld, %lld, %lld) -> %lld",
                static_cast<long long>(s.n), static_cast<long long>(s.c_in),
                static_cast<long long>(s.h), static_cast<long long>(s.w),
                static_cast<long long>(s.c_out));
  state.SetLabel(label);
}

BENCHMARK_CAPTURE(BM_Conv2d, Forward, Which::Forward)
    ->DenseRange(0, 3)
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Conv2d, InputGrad, Which::InputGrad)
    ->DenseRange(0, 3)
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Conv2d, WeightGrad, Which::WeightGrad)
    ->DenseRange(0, 3)
    ->Unit(benchmark::kMillisecond);

// kShapes, then the smallest channel counts Note [Which CPU convolution]'s rule sends to oneDNN,
// then channel counts below its 16 on one side or the other (an RGB stem, 8 -> 16, 16 -> 8).
constexpr ConvShape kAlgorithmShapes[] = {
    kShapes[0],           kShapes[1],          kShapes[2],          kShapes[3],
    {64, 16, 28, 28, 32}, {64, 3, 28, 28, 32}, {64, 8, 28, 28, 16}, {64, 16, 28, 28, 8},
};

Tensor run_entry(Which which, const Tensor& x, const Tensor& w, const Tensor& dy) {
  switch (which) {
    case Which::Forward:
      return ops::conv2d(x, w, Tensor(), pad1());
    case Which::InputGrad:
      return ops::conv2d_input_grad(dy, w, x.shape(), pad1());
    case Which::WeightGrad:
      return ops::conv2d_weight_grad(dy, x, w.shape(), pad1());
  }
  return Tensor();
}

// The largest |a - b| over the largest |b|: the two algorithms agree to float32 rounding.
double relative_difference(const Tensor& a, const Tensor& b) {
  const auto* pa = static_cast<const float*>(a.data_ptr());
  const auto* pb = static_cast<const float*>(b.data_ptr());
  double diff = 0, scale = 0;
  for (std::int64_t i = 0; i < a.numel(); ++i) {
    diff = std::fmax(diff, std::fabs(double(pa[i]) - pb[i]));
    scale = std::fmax(scale, std::fabs(double(pb[i])));
  }
  return diff / scale;
}

void BM_Conv2dAlgorithm(benchmark::State& state, Which which) {
  const ConvShape s = kAlgorithmShapes[state.range(0)];
  const auto algorithm =
      state.range(1) == 0 ? ops::CpuConv2dAlgorithm::Gemm : ops::CpuConv2dAlgorithm::Direct;
  const Tensor x = leangrad::randn({s.n, s.c_in, s.h, s.w});
  const Tensor w = leangrad::randn({s.c_out, s.c_in, 3, 3});
  const Tensor dy = leangrad::randn({s.n, s.c_out, s.h, s.w});
  Tensor gemm_result;
  {
    const ops::CpuConv2dAlgorithmGuard guard(ops::CpuConv2dAlgorithm::Gemm);
    gemm_result = run_entry(which, x, w, dy);
  }
  const ops::CpuConv2dAlgorithmGuard guard(algorithm);
  // A check that both ran the same convolution, not a rounding bound (tests/kernels/test_conv.cpp
  // holds those): two summation orders of float32 products differ by ~1e-6 of the largest value.
  if (relative_difference(run_entry(which, x, w, dy), gemm_result) > 1e-4)
    state.SkipWithError("direct and GEMM convolutions differ");
  for (auto _ : state) {
    Tensor out = run_entry(which, x, w, dy);
    benchmark::DoNotOptimize(out.data_ptr());
  }
  state.counters["GFLOP/s"] =
      benchmark::Counter(conv_flops(s) * 1e-9 * state.iterations(), benchmark::Counter::kIsRate);
}

void algorithm_args(benchmark::internal::Benchmark* b) {
  for (std::int64_t shape = 0; shape < std::ssize(kAlgorithmShapes); ++shape)
    for (std::int64_t algorithm = 0; algorithm < 2; ++algorithm)
      b->Args({shape, algorithm});
}

BENCHMARK_CAPTURE(BM_Conv2dAlgorithm, Forward, Which::Forward)
    ->Apply(algorithm_args)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK_CAPTURE(BM_Conv2dAlgorithm, InputGrad, Which::InputGrad)
    ->Apply(algorithm_args)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK_CAPTURE(BM_Conv2dAlgorithm, WeightGrad, Which::WeightGrad)
    ->Apply(algorithm_args)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

constexpr ConvShape kAutogradShapes[] = {
    {16, 64, 56, 56, 64},  // issue 19's shape
    {64, 1, 28, 28, 32},   // Fashion-MNIST conv1
    {64, 32, 14, 14, 64},  // Fashion-MNIST conv2
};

void BM_Conv2dAutograd_Forward(benchmark::State& state) {
  const ConvShape s = kAutogradShapes[state.range(0)];
  const Tensor x = leangrad::randn({s.n, s.c_in, s.h, s.w});
  const Tensor w = leangrad::randn({s.c_out, s.c_in, 3, 3});
  for (auto _ : state) {
    Tensor y = leangrad::conv2d(x, w, Tensor(), {1, 1}, {1, 1});
    benchmark::DoNotOptimize(y.data_ptr());
  }
  state.counters["GFLOP/s"] =
      benchmark::Counter(conv_flops(s) * 1e-9 * state.iterations(), benchmark::Counter::kIsRate);
}

void BM_Conv2dAutograd_ForwardBackward(benchmark::State& state) {
  const ConvShape s = kAutogradShapes[state.range(0)];
  Tensor x = leangrad::randn({s.n, s.c_in, s.h, s.w});
  Tensor w = leangrad::randn({s.c_out, s.c_in, 3, 3});
  x.requires_grad_();
  w.requires_grad_();
  const Tensor g = leangrad::randn({s.n, s.c_out, s.h, s.w});
  for (auto _ : state) {
    Tensor y = leangrad::conv2d(x, w, Tensor(), {1, 1}, {1, 1});
    y.backward(g);
    benchmark::DoNotOptimize(w.grad().data_ptr());
    x.set_grad(Tensor());
    w.set_grad(Tensor());
  }
  state.counters["GFLOP/s"] = benchmark::Counter(3 * conv_flops(s) * 1e-9 * state.iterations(),
                                                 benchmark::Counter::kIsRate);
}

BENCHMARK(BM_Conv2dAutograd_Forward)
    ->DenseRange(0, 2)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK(BM_Conv2dAutograd_ForwardBackward)
    ->DenseRange(0, 2)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

void BM_Conv3dAutograd_ForwardBackward(benchmark::State& state) {
  const bool transpose = state.range(0) == 1;
  Tensor x = leangrad::randn({4, 16, 16, 32, 32});
  Tensor w = transpose ? leangrad::randn({16, 32, 3, 3, 3}) : leangrad::randn({32, 16, 3, 3, 3});
  x.requires_grad_();
  w.requires_grad_();
  auto step = [&] {
    const Tensor y = transpose ? leangrad::conv_transpose3d(x, w, Tensor(), {2, 2, 2}, {1, 1, 1})
                               : leangrad::conv3d(x, w, Tensor(), {1, 1, 1}, {1, 1, 1});
    y.backward(leangrad::ones_like(y));
    benchmark::DoNotOptimize(w.grad().data_ptr());
    x.set_grad(Tensor());
    w.set_grad(Tensor());
  };
  step();  // the primitives built, the allocator's cache warm
  const leangrad::Device cpu = leangrad::Device::cpu();
  leangrad::memory::reset_peak(cpu);
  const std::int64_t before = leangrad::memory::stats(cpu).allocated;
  step();
  const std::int64_t peak = leangrad::memory::stats(cpu).peak_allocated - before;
  for (auto _ : state)
    step();
  state.counters["peak MiB"] = static_cast<double>(peak) / (1 << 20);
}

BENCHMARK(BM_Conv3dAutograd_ForwardBackward)
    ->DenseRange(0, 1)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

}  // namespace

int main(int argc, char** argv) {
  benchmark::AddCustomContext("cpu_gemm", ops::cpu_gemm_library());
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
