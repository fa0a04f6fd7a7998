// libtorch-elementwise: LibTorch's side of bench/compare/elementwise_vs_libtorch.sh. The
// elementwise benchmarks of bench/bench_ops.cpp (BM_Elementwise_16M) with the same Google
// Benchmark names, shapes and byte counts, as a LibTorch 1.13 user writes them on the CPU, under
// NoGradGuard: a + b, a + row (a row of 4,096 broadcast over 4,096 rows), a * 0.5, a.exp(),
// a.sigmoid(), a.relu(), a > b, torch::where(m, a, b) and torch::where(m, s, a) (m a random bool
// mask, s a 0-d tensor) on (4096, 4096) tensors of float32, float16 and bfloat16. An op LibTorch
// 1.13 does not implement for a dtype on the CPU reports its error instead of a time. And the
// transposed copies of BM_Transpose_16M (the same three layouts, dtypes, names and bytes).
//   libtorch-elementwise [--threads N] [Google Benchmark options]
#include <benchmark/benchmark.h>
#include <torch/torch.h>

#include <cstdint>
#include <string>

#include "benchmark_main.h"

namespace {

constexpr int64_t kRows = 4096, kCols = 4096, k16M = kRows * kCols;

enum class Work { Add, AddRow, MulScalar, Exp, Sigmoid, Relu, Gt, Where, WhereScalar };

torch::Tensor run_work(Work work, const torch::Tensor& a, const torch::Tensor& b,
                       const torch::Tensor& row, const torch::Tensor& mask,
                       const torch::Tensor& scalar) {
  switch (work) {
    case Work::Add:
      return a + b;
    case Work::AddRow:
      return a + row;
    case Work::MulScalar:
      return a * 0.5;
    case Work::Exp:
      return a.exp();
    case Work::Sigmoid:
      return a.sigmoid();
    case Work::Relu:
      return a.relu();
    case Work::Gt:
      return a > b;
    case Work::Where:
      return torch::where(mask, a, b);
    case Work::WhereScalar:
      return torch::where(mask, scalar, a);
  }
  return {};
}

void BM_Elementwise_16M(benchmark::State& state, Work work, torch::ScalarType dtype) {
  torch::NoGradGuard no_grad;
  torch::manual_seed(0);
  const torch::Tensor a = torch::randn({kRows, kCols}).to(dtype);
  const torch::Tensor b = torch::randn({kRows, kCols}).to(dtype);
  const torch::Tensor row = torch::randn({kCols}).to(dtype);
  const torch::Tensor mask = torch::randn({kRows, kCols}) > 0;
  const torch::Tensor scalar = torch::randn({}).to(dtype);
  try {
    run_work(work, a, b, row, mask, scalar);
  } catch (const c10::Error& e) {
    const std::string message = e.what_without_backtrace();
    state.SkipWithError(message.substr(0, message.find('\n')).c_str());
    return;
  }
  const int64_t element_bytes = static_cast<int64_t>(a.element_size());
  const bool two_inputs = work == Work::Add || work == Work::Gt || work == Work::Where;
  const bool has_mask = work == Work::Where || work == Work::WhereScalar;
  const int64_t input_bytes = (two_inputs ? 2 : 1) * element_bytes + (has_mask ? 1 : 0);
  const int64_t result_bytes = work == Work::Gt ? 1 : element_bytes;
  for (auto _ : state) {
    torch::Tensor y = run_work(work, a, b, row, mask, scalar);
    benchmark::DoNotOptimize(y.data_ptr());
  }
  state.SetBytesProcessed(state.iterations() * k16M * (input_bytes + result_bytes));
}

// A copy between layouts whose contiguous dims differ: x.t().contiguous() of (4096, 4096), and
// NCHW <-> NHWC of (16, 256, 64, 64), permute(0, 2, 3, 1) and permute(0, 3, 1, 2) then
// contiguous(). Bytes: the input read and the result written.
enum class Layout { Transpose, ChannelsLast, ChannelsFirst };

torch::Tensor layout_source(Layout layout, const torch::Tensor& x) {
  switch (layout) {
    case Layout::Transpose:
      return x.reshape({4096, 4096}).t();
    case Layout::ChannelsLast:
      return x.reshape({16, 256, 64, 64}).permute({0, 2, 3, 1});
    case Layout::ChannelsFirst:
      return x.reshape({16, 64, 64, 256}).permute({0, 3, 1, 2});
  }
  return {};
}

void BM_Transpose_16M(benchmark::State& state, Layout layout, torch::ScalarType dtype) {
  torch::NoGradGuard no_grad;
  torch::manual_seed(0);
  const torch::Tensor source = layout_source(layout, torch::randn({k16M}).to(dtype));
  for (auto _ : state) {
    torch::Tensor y = source.contiguous();
    benchmark::DoNotOptimize(y.data_ptr());
  }
  state.SetBytesProcessed(state.iterations() * k16M * 2 *
                          static_cast<int64_t>(source.element_size()));
}

#define LIBTORCH_ELEMENTWISE_BENCHMARK(work, suffix, dtype)                        \
  BENCHMARK_CAPTURE(BM_Elementwise_16M, work##_##suffix, Work::work, torch::dtype) \
      ->Unit(benchmark::kMillisecond)                                              \
      ->UseRealTime()
#define LIBTORCH_ELEMENTWISE_BENCHMARKS(work)          \
  LIBTORCH_ELEMENTWISE_BENCHMARK(work, F32, kFloat32); \
  LIBTORCH_ELEMENTWISE_BENCHMARK(work, F16, kFloat16); \
  LIBTORCH_ELEMENTWISE_BENCHMARK(work, BF16, kBFloat16)
LIBTORCH_ELEMENTWISE_BENCHMARKS(Add);
LIBTORCH_ELEMENTWISE_BENCHMARKS(AddRow);
LIBTORCH_ELEMENTWISE_BENCHMARKS(MulScalar);
LIBTORCH_ELEMENTWISE_BENCHMARKS(Exp);
LIBTORCH_ELEMENTWISE_BENCHMARKS(Sigmoid);
LIBTORCH_ELEMENTWISE_BENCHMARKS(Relu);
LIBTORCH_ELEMENTWISE_BENCHMARKS(Gt);
LIBTORCH_ELEMENTWISE_BENCHMARKS(Where);
LIBTORCH_ELEMENTWISE_BENCHMARKS(WhereScalar);

#define LIBTORCH_TRANSPOSE_BENCHMARK(layout, suffix, dtype)                            \
  BENCHMARK_CAPTURE(BM_Transpose_16M, layout##_##suffix, Layout::layout, torch::dtype) \
      ->Unit(benchmark::kMillisecond)                                                  \
      ->UseRealTime()
#define LIBTORCH_TRANSPOSE_BENCHMARKS(layout)          \
  LIBTORCH_TRANSPOSE_BENCHMARK(layout, F32, kFloat32); \
  LIBTORCH_TRANSPOSE_BENCHMARK(layout, F16, kFloat16); \
  LIBTORCH_TRANSPOSE_BENCHMARK(layout, BF16, kBFloat16)
LIBTORCH_TRANSPOSE_BENCHMARKS(Transpose);
LIBTORCH_TRANSPOSE_BENCHMARKS(ChannelsLast);
LIBTORCH_TRANSPOSE_BENCHMARKS(ChannelsFirst);

// Random fills of 16M elements in place: x.uniform_() and x.normal_() (U[0, 1) and N(0, 1)) in
// float32, float64 and bfloat16, as BM_Random_16M of bench/bench_ops.cpp. Bytes: the result.
enum class Distribution { Uniform, Normal };

void BM_Random_16M(benchmark::State& state, Distribution distribution, torch::ScalarType dtype) {
  torch::NoGradGuard no_grad;
  torch::manual_seed(0);
  torch::Tensor t = torch::empty({k16M}, torch::TensorOptions().dtype(dtype));
  for (auto _ : state) {
    if (distribution == Distribution::Uniform) {
      t.uniform_();
    } else {
      t.normal_();
    }
    benchmark::DoNotOptimize(t.data_ptr());
  }
  state.SetBytesProcessed(state.iterations() * k16M * static_cast<int64_t>(t.element_size()));
}

#define LIBTORCH_RANDOM_BENCHMARK(distribution, suffix, dtype)                          \
  BENCHMARK_CAPTURE(BM_Random_16M, distribution##_##suffix, Distribution::distribution, \
                    torch::dtype)                                                       \
      ->Unit(benchmark::kMillisecond)                                                   \
      ->UseRealTime()
#define LIBTORCH_RANDOM_BENCHMARKS(distribution)          \
  LIBTORCH_RANDOM_BENCHMARK(distribution, F32, kFloat32); \
  LIBTORCH_RANDOM_BENCHMARK(distribution, F64, kFloat64); \
  LIBTORCH_RANDOM_BENCHMARK(distribution, BF16, kBFloat16)
LIBTORCH_RANDOM_BENCHMARKS(Uniform);
LIBTORCH_RANDOM_BENCHMARKS(Normal);

}  // namespace

int main(int argc, char** argv) {
  return run_libtorch_benchmarks(argc, argv);
}
