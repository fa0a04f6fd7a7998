// CPU throughput of the core kernels through their tensor-level entries (kernels/ops.h):
// reductions, elementwise ops in float32, float16 and bfloat16 and the casts between float32 and
// 16-bit dtypes in GB/s of memory touched, matmul in GFLOP/s (2 M N K per product). Each
// benchmark checks its result against a plain loop (in double; the 16-bit ones: the element in
// float, rounded by core/half.h) once before timing.
// Threads: the default (OMP_NUM_THREADS or all cores); set OMP_NUM_THREADS to compare.
// Reading the numbers: sums and adds are memory-bound (compare with the machine's copy bandwidth,
// e.g. `bench_ops --benchmark_filter=Add` against STREAM); matmul is compute-bound (Eigen's GEMM).
#include <benchmark/benchmark.h>

#include <cmath>
#include <cstdint>
#include <cstring>

#include <leangrad/core/generator.h>
#include <leangrad/core/half.h>
#include <leangrad/core/memory.h>
#include <leangrad/kernels/creation.h>
#include <leangrad/kernels/ops.h>
#include <leangrad/kernels/random_math.h>

namespace {

using leangrad::kFloat32;
using leangrad::ReduceOp;
using leangrad::Tensor;

constexpr std::int64_t k16M = 16 * 1024 * 1024;

// Sum of a contiguous float32 tensor in double, the reference the timed kernels are checked with.
double reference_sum(const Tensor& t) {
  const auto* x = static_cast<const float*>(t.data_ptr());
  double sum = 0;
  for (std::int64_t i = 0; i < t.numel(); ++i)
    sum += x[i];
  return sum;
}

bool close(double actual, double expected, double rtol) {
  return std::fabs(actual - expected) <= rtol * std::fabs(expected) + 1e-3;
}

void BM_SumAll_F32_16M(benchmark::State& state) {
  const Tensor x = leangrad::rand({k16M}, kFloat32);
  const double got = leangrad::ops::reduce(ReduceOp::Sum, x, {}, false).item<double>();
  if (!close(got, reference_sum(x), 1e-5)) state.SkipWithError("sum differs from the reference");
  for (auto _ : state) {
    Tensor y = leangrad::ops::reduce(ReduceOp::Sum, x, {}, false);
    benchmark::DoNotOptimize(y.data_ptr());
  }
  state.SetBytesProcessed(state.iterations() * k16M * 4);
}
BENCHMARK(BM_SumAll_F32_16M)->Unit(benchmark::kMillisecond)->UseRealTime();

// Sum over one dim of a (4096, 4096) float32 matrix: dim 1 reduces contiguous rows, dim 0 sums
// columns (rows of 4096 added elementwise); neither copies (see kernels/ops_reduce.cpp).
void BM_SumDim_F32_4096x4096(benchmark::State& state) {
  const std::int64_t dim = state.range(0);
  const Tensor x = leangrad::rand({4096, 4096}, kFloat32);
  const Tensor check = leangrad::ops::reduce(ReduceOp::Sum, x, {dim}, false);
  const Tensor total = leangrad::ops::reduce(ReduceOp::Sum, check, {}, false);
  if (!close(total.item<double>(), reference_sum(x), 1e-5)) {
    state.SkipWithError("sum differs from the reference");
  }
  for (auto _ : state) {
    Tensor y = leangrad::ops::reduce(ReduceOp::Sum, x, {dim}, false);
    benchmark::DoNotOptimize(y.data_ptr());
  }
  state.SetBytesProcessed(state.iterations() * 4096 * 4096 * 4);
}
BENCHMARK(BM_SumDim_F32_4096x4096)
    ->ArgName("dim")
    ->Arg(0)
    ->Arg(1)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

// A conv2d bias gradient: a (32, 256, 28, 28) gradient summed over {0, 2, 3}, in float32 and (as
// under autocast) bfloat16 and float16. The reduced dims are split by C: reduced in two stages
// without copying the input (Note [Reducing separated dims in stages] in kernels/ops_reduce.cpp).
// The counter temporary_KiB is how far one call raises the CPU allocator's peak above what was
// allocated before it: the stages' partials and the result, or a copy of the input where one is
// made.
void BM_SumBiasGrad_32x256x28x28(benchmark::State& state, leangrad::DType dtype) {
  const Tensor x = leangrad::rand({32, 256, 28, 28}, kFloat32).to(dtype);
  // Each of the 256 sums of 25088 values in [0, 1) is rounded once to dtype (2^-9 relative for
  // bfloat16, 2^-11 for float16); the total of those positive values keeps that relative error.
  const double rtol = dtype == kFloat32 ? 1e-5 : 4e-3;
  const Tensor check = leangrad::ops::reduce(ReduceOp::Sum, x, {0, 2, 3}, false);
  const Tensor total =
      leangrad::ops::reduce(ReduceOp::Sum, leangrad::ops::cast(check, kFloat32), {}, false);
  if (!close(total.item<double>(), reference_sum(leangrad::ops::cast(x, kFloat32)), rtol)) {
    state.SkipWithError("sum differs from the reference");
  }
  const leangrad::Device cpu = leangrad::Device::cpu();
  const std::int64_t before_bytes = leangrad::memory::stats(cpu).allocated;
  leangrad::memory::reset_peak(cpu);
  for (auto _ : state) {
    Tensor y = leangrad::ops::reduce(ReduceOp::Sum, x, {0, 2, 3}, false);
    benchmark::DoNotOptimize(y.data_ptr());
  }
  const std::int64_t temporary_bytes = leangrad::memory::stats(cpu).peak_allocated - before_bytes;
  state.counters["temporary_KiB"] = static_cast<double>(temporary_bytes) / 1024.0;
  state.SetBytesProcessed(state.iterations() * x.nbytes());
}
BENCHMARK_CAPTURE(BM_SumBiasGrad_32x256x28x28, F32, kFloat32)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK_CAPTURE(BM_SumBiasGrad_32x256x28x28, BF16, leangrad::kBFloat16)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK_CAPTURE(BM_SumBiasGrad_32x256x28x28, F16, leangrad::kFloat16)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

// (n, n) @ (n, n) in float32.
void BM_Matmul_F32(benchmark::State& state) {
  const std::int64_t n = state.range(0);
  const Tensor a = leangrad::rand({n, n}, kFloat32);
  const Tensor b = leangrad::rand({n, n}, kFloat32);
  {
    // One row of the product against a double loop.
    const Tensor c = leangrad::ops::matmul(a, b);
    const auto* pa = static_cast<const float*>(a.data_ptr());
    const auto* pb = static_cast<const float*>(b.data_ptr());
    const auto* pc = static_cast<const float*>(c.data_ptr());
    for (std::int64_t j = 0; j < n; ++j) {
      double acc = 0;
      for (std::int64_t k = 0; k < n; ++k)
        acc += static_cast<double>(pa[k]) * pb[k * n + j];
      if (!close(pc[j], acc, 1e-4)) {
        state.SkipWithError("matmul differs from the reference");
        break;
      }
    }
  }
  for (auto _ : state) {
    Tensor c = leangrad::ops::matmul(a, b);
    benchmark::DoNotOptimize(c.data_ptr());
  }
  const double gflop_per_product = 2.0 * static_cast<double>(n * n * n) * 1e-9;
  state.counters["GFLOP/s"] = benchmark::Counter(
      gflop_per_product * static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_Matmul_F32)->Arg(512)->Arg(1024)->Unit(benchmark::kMillisecond)->UseRealTime();

// a + b of two 16M-element float32 tensors: reads 2 x 4 bytes and writes 4 bytes per element.
void BM_Add_F32_16M(benchmark::State& state) {
  const Tensor a = leangrad::rand({k16M}, kFloat32);
  const Tensor b = leangrad::rand({k16M}, kFloat32);
  {
    const Tensor c = leangrad::ops::binary(leangrad::BinaryOp::Add, a, b);
    const auto* pa = static_cast<const float*>(a.data_ptr());
    const auto* pb = static_cast<const float*>(b.data_ptr());
    const auto* pc = static_cast<const float*>(c.data_ptr());
    for (std::int64_t i = 0; i < k16M; i += 4099) {
      if (pc[i] != pa[i] + pb[i]) {
        state.SkipWithError("add differs from the reference");
        break;
      }
    }
  }
  for (auto _ : state) {
    Tensor c = leangrad::ops::binary(leangrad::BinaryOp::Add, a, b);
    benchmark::DoNotOptimize(c.data_ptr());
  }
  state.SetBytesProcessed(state.iterations() * k16M * 3 * 4);
}
BENCHMARK(BM_Add_F32_16M)->Unit(benchmark::kMillisecond)->UseRealTime();

// Elementwise ops on 16M elements in float32, float16 and bfloat16, the ops a mixed-precision
// model runs: a + b, a + a row of 4,096 (a bias, broadcast over 4,096 rows), a * 0.5, exp(a),
// sigmoid(a), relu(a), a > b, where(m, a, b) and where(m, s, a) (m a random bool mask, s a 0-d
// tensor: as clamp and relu's backward compose it). Bytes: the operands read and the result
// written (the row counts once). Checked once before timing, at every 4099th element, against the
// op computed in float on the widened elements and rounded to the dtype with core/half.h (the
// element's definition); exp and sigmoid, whose e^x is a polynomial on the CPU (Note [Polynomial
// exp on the CPU]), within a few float roundings of the library's and one rounding to the dtype.
// The same names, shapes and bytes as bench/compare/libtorch/libtorch_elementwise.cpp.
enum class Work { Add, AddRow, MulScalar, Exp, Sigmoid, Relu, Gt, Where, WhereScalar };
constexpr std::int64_t kRows = 4096, kCols = k16M / kRows;

Tensor run_work(Work work, const Tensor& a, const Tensor& b, const Tensor& row, const Tensor& mask,
                const Tensor& scalar) {
  using leangrad::BinaryOp;
  using leangrad::UnaryOp;
  switch (work) {
    case Work::Add:
      return leangrad::ops::binary(BinaryOp::Add, a, b);
    case Work::AddRow:
      return leangrad::ops::binary(BinaryOp::Add, a, row);
    case Work::MulScalar:
      return leangrad::ops::binary(BinaryOp::Mul, a, 0.5);
    case Work::Exp:
      return leangrad::ops::unary(UnaryOp::Exp, a);
    case Work::Sigmoid:
      return leangrad::ops::unary(UnaryOp::Sigmoid, a);
    case Work::Relu:
      return leangrad::ops::unary(UnaryOp::Relu, a);
    case Work::Gt:
      return leangrad::ops::compare(leangrad::CompareOp::Gt, a, b);
    case Work::Where:
      return leangrad::ops::where(mask, a, b);
    case Work::WhereScalar:
      return leangrad::ops::where(mask, scalar, a);
  }
  return {};
}

// Element i of a contiguous tensor of a floating dtype (or bool), widened to float.
float element(const Tensor& t, std::int64_t i) {
  switch (t.dtype()) {
    case kFloat32:
      return static_cast<const float*>(t.data_ptr())[i];
    case leangrad::kFloat16:
      return static_cast<float>(static_cast<const leangrad::Half*>(t.data_ptr())[i]);
    case leangrad::kBFloat16:
      return static_cast<float>(static_cast<const leangrad::BFloat16*>(t.data_ptr())[i]);
    default:
      return static_cast<const bool*>(t.data_ptr())[i] ? 1.0f : 0.0f;
  }
}

// f rounded to dtype (bool results pass as 0 or 1).
float rounded(float f, leangrad::DType dtype) {
  if (dtype == leangrad::kFloat16) return static_cast<float>(leangrad::Half(f));
  if (dtype == leangrad::kBFloat16) return static_cast<float>(leangrad::BFloat16(f));
  return f;
}

bool work_matches(Work work, const Tensor& a, const Tensor& b, const Tensor& row,
                  const Tensor& mask, const Tensor& scalar, const Tensor& out) {
  for (std::int64_t i = 0; i < k16M; i += 4099) {
    const float x = element(a, i), y = element(b, i), r = element(row, i % kCols);
    const bool m = element(mask, i) != 0;
    float want = 0;
    switch (work) {
      case Work::Add:
        want = x + y;
        break;
      case Work::AddRow:
        want = x + r;
        break;
      case Work::MulScalar:
        want = x * 0.5f;
        break;
      case Work::Exp:
        want = std::exp(x);
        break;
      case Work::Sigmoid:
        want = 1.0f / (1.0f + std::exp(-x));
        break;
      case Work::Relu:
        want = x < 0 ? 0.0f : x;
        break;
      case Work::Gt:
        want = x > y ? 1.0f : 0.0f;
        break;
      case Work::Where:
        want = m ? x : y;
        break;
      case Work::WhereScalar:
        want = m ? element(scalar, 0) : x;
        break;
    }
    if (work == Work::Exp || work == Work::Sigmoid) {
      const float spacing = a.dtype() == leangrad::kFloat16    ? 0x1p-11f
                            : a.dtype() == leangrad::kBFloat16 ? 0x1p-8f
                                                               : 0.0f;
      if (!(std::fabs(element(out, i) - want) <= (0x1p-21f + spacing) * std::fabs(want) + 0x1p-24f))
        return false;
    } else if (element(out, i) != rounded(want, a.dtype())) {
      return false;
    }
  }
  return true;
}

void BM_Elementwise_16M(benchmark::State& state, Work work, leangrad::DType dtype) {
  const Tensor a = leangrad::randn({kRows, kCols}, kFloat32).to(dtype);
  const Tensor b = leangrad::randn({kRows, kCols}, kFloat32).to(dtype);
  const Tensor row = leangrad::randn({kCols}, kFloat32).to(dtype);
  const Tensor mask = leangrad::ops::compare(leangrad::CompareOp::Gt,
                                             leangrad::randn({kRows, kCols}, kFloat32), 0.0);
  const Tensor scalar = leangrad::randn({}, kFloat32).to(dtype);
  if (!work_matches(work, a, b, row, mask, scalar, run_work(work, a, b, row, mask, scalar)))
    state.SkipWithError("the op differs from the element computed in float");
  const std::int64_t element_bytes = static_cast<std::int64_t>(leangrad::element_size(dtype));
  const bool two_inputs = work == Work::Add || work == Work::Gt || work == Work::Where;
  const bool has_mask = work == Work::Where || work == Work::WhereScalar;
  const std::int64_t input_bytes = (two_inputs ? 2 : 1) * element_bytes + (has_mask ? 1 : 0);
  const std::int64_t result_bytes = work == Work::Gt ? 1 : element_bytes;
  for (auto _ : state) {
    Tensor y = run_work(work, a, b, row, mask, scalar);
    benchmark::DoNotOptimize(y.data_ptr());
  }
  state.SetBytesProcessed(state.iterations() * k16M * (input_bytes + result_bytes));
}

#define LEANGRAD_ELEMENTWISE_BENCHMARK(work, suffix, dtype)                           \
  BENCHMARK_CAPTURE(BM_Elementwise_16M, work##_##suffix, Work::work, leangrad::dtype) \
      ->Unit(benchmark::kMillisecond)                                                 \
      ->UseRealTime()
#define LEANGRAD_ELEMENTWISE_BENCHMARKS(work)          \
  LEANGRAD_ELEMENTWISE_BENCHMARK(work, F32, kFloat32); \
  LEANGRAD_ELEMENTWISE_BENCHMARK(work, F16, kFloat16); \
  LEANGRAD_ELEMENTWISE_BENCHMARK(work, BF16, kBFloat16)
LEANGRAD_ELEMENTWISE_BENCHMARKS(Add);
LEANGRAD_ELEMENTWISE_BENCHMARKS(AddRow);
LEANGRAD_ELEMENTWISE_BENCHMARKS(MulScalar);
LEANGRAD_ELEMENTWISE_BENCHMARKS(Exp);
LEANGRAD_ELEMENTWISE_BENCHMARKS(Sigmoid);
LEANGRAD_ELEMENTWISE_BENCHMARKS(Relu);
LEANGRAD_ELEMENTWISE_BENCHMARKS(Gt);
LEANGRAD_ELEMENTWISE_BENCHMARKS(Where);
LEANGRAD_ELEMENTWISE_BENCHMARKS(WhereScalar);

// x.to(dtype) of 16M elements between float32 and float16 or bfloat16: reads and writes 4 + 2
// bytes per element. Checked against core/half.h's one-value conversions at every 4099th element.
template <typename Half16>
bool cast_matches_as(const Tensor& from, const Tensor& to) {
  for (std::int64_t i = 0; i < k16M; i += 4099) {
    if (from.dtype() == kFloat32) {
      const float x = static_cast<const float*>(from.data_ptr())[i];
      if (static_cast<const Half16*>(to.data_ptr())[i].bits != Half16(x).bits) return false;
    } else {
      const float y = static_cast<const float*>(to.data_ptr())[i];
      if (y != static_cast<float>(static_cast<const Half16*>(from.data_ptr())[i])) return false;
    }
  }
  return true;
}

bool cast_matches(const Tensor& from, const Tensor& to) {
  const leangrad::DType half = from.dtype() == kFloat32 ? to.dtype() : from.dtype();
  return half == leangrad::kFloat16 ? cast_matches_as<leangrad::Half>(from, to)
                                    : cast_matches_as<leangrad::BFloat16>(from, to);
}

// A copy between layouts whose contiguous dims differ (Note [Tiled transposed copy]), on 16M
// elements of float32, float16 and bfloat16: x.t().contiguous() of (4096, 4096), and NCHW <->
// NHWC of (16, 256, 64, 64), permute(0, 2, 3, 1) and permute(0, 3, 1, 2) then contiguous(). Bytes:
// the input read and the result written. Checked once before timing, at every 4099th element of
// the result, against the element of the source its index names. The same names, shapes and bytes
// as bench/compare/libtorch/libtorch_elementwise.cpp.
enum class Layout { Transpose, ChannelsLast, ChannelsFirst };

Tensor layout_source(Layout layout, const Tensor& x) {
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

// Every 4099th element of out (contiguous) equals the element of the view `source` at its index.
bool layout_matches(const Tensor& source, const Tensor& out) {
  const std::size_t size = leangrad::element_size(out.dtype());
  const auto* from = static_cast<const unsigned char*>(source.data_ptr());
  const auto* to = static_cast<const unsigned char*>(out.data_ptr());
  for (std::int64_t i = 0; i < k16M; i += 4099) {
    std::int64_t offset = 0;
    std::int64_t rest = i;
    for (std::int64_t d = source.dim() - 1; d >= 0; --d) {
      offset += rest % source.shape()[d] * source.strides()[d];
      rest /= source.shape()[d];
    }
    if (std::memcmp(to + i * size, from + offset * size, size) != 0) return false;
  }
  return true;
}

void BM_Transpose_16M(benchmark::State& state, Layout layout, leangrad::DType dtype) {
  const Tensor x = leangrad::randn({k16M}, kFloat32).to(dtype);
  const Tensor source = layout_source(layout, x);
  if (!layout_matches(source, source.contiguous()))
    state.SkipWithError("the copy differs from the source's elements");
  for (auto _ : state) {
    Tensor y = source.contiguous();
    benchmark::DoNotOptimize(y.data_ptr());
  }
  state.SetBytesProcessed(state.iterations() * k16M * 2 *
                          static_cast<std::int64_t>(leangrad::element_size(dtype)));
}

#define LEANGRAD_TRANSPOSE_BENCHMARK(layout, suffix, dtype)                               \
  BENCHMARK_CAPTURE(BM_Transpose_16M, layout##_##suffix, Layout::layout, leangrad::dtype) \
      ->Unit(benchmark::kMillisecond)                                                     \
      ->UseRealTime()
#define LEANGRAD_TRANSPOSE_BENCHMARKS(layout)          \
  LEANGRAD_TRANSPOSE_BENCHMARK(layout, F32, kFloat32); \
  LEANGRAD_TRANSPOSE_BENCHMARK(layout, F16, kFloat16); \
  LEANGRAD_TRANSPOSE_BENCHMARK(layout, BF16, kBFloat16)
LEANGRAD_TRANSPOSE_BENCHMARKS(Transpose);
LEANGRAD_TRANSPOSE_BENCHMARKS(ChannelsLast);
LEANGRAD_TRANSPOSE_BENCHMARKS(ChannelsFirst);

void BM_Cast_16M(benchmark::State& state, leangrad::DType from, leangrad::DType to) {
  const Tensor x = leangrad::randn({k16M}, kFloat32).to(from);
  if (!cast_matches(x, x.to(to))) state.SkipWithError("cast differs from core/half.h");
  for (auto _ : state) {
    Tensor y = x.to(to);
    benchmark::DoNotOptimize(y.data_ptr());
  }
  state.SetBytesProcessed(state.iterations() * k16M * 6);
}
BENCHMARK_CAPTURE(BM_Cast_16M, F32_to_F16, kFloat32, leangrad::kFloat16)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK_CAPTURE(BM_Cast_16M, F16_to_F32, leangrad::kFloat16, kFloat32)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK_CAPTURE(BM_Cast_16M, F32_to_BF16, kFloat32, leangrad::kBFloat16)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK_CAPTURE(BM_Cast_16M, BF16_to_F32, leangrad::kBFloat16, kFloat32)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

// Random fills of 16M elements in place, as torch::Tensor::uniform_() and normal_() (rand and randn
// fill a new tensor the same way): U[0, 1) and N(0, 1) in float32, float64 and bfloat16. The first
// fill is checked against kernels/random_math.h's definition of element i at every 4099th element:
// bit for bit, except normals within 8 ulps of double and then one spacing of the dtype (the CPU's
// log, sin and cos are its own polynomials, the definition's the C library's; the test
// Random.FillsAreTheirDefinitionAtEveryElement derives the bound). Bytes: the result written.
enum class Distribution { Uniform, Normal };

template <typename T>
double defined_element(Distribution distribution, std::int64_t i,
                       const leangrad::Generator::State& s) {
  return distribution == Distribution::Uniform
             ? leangrad::random_math::uniform_at<T>(i, s.seed, s.offset, 0.0, 1.0)
             : leangrad::random_math::normal_at<T>(i, s.seed, s.offset, 0.0, 1.0);
}

bool fill_matches(Distribution distribution, const Tensor& t, const leangrad::Generator::State& s) {
  const Tensor values = t.to(leangrad::kFloat64);
  const auto* got = static_cast<const double*>(values.data_ptr());
  for (std::int64_t i = 0; i < k16M; i += 4099) {
    double want = 0;
    if (t.dtype() == leangrad::kFloat64) {
      want = defined_element<double>(distribution, i, s);
    } else {
      want = rounded(static_cast<float>(defined_element<float>(distribution, i, s)), t.dtype());
    }
    double tolerance = 0.0;
    if (distribution == Distribution::Normal) {
      tolerance = 8 * 0x1p-52 * std::fabs(want);
      if (t.dtype() != leangrad::kFloat64) {
        const int mantissa_bits = t.dtype() == leangrad::kFloat32 ? 23 : 7;  // bfloat16's
        tolerance += std::ldexp(std::fabs(want), 1 - mantissa_bits);
      }
    }
    if (!(std::fabs(got[i] - want) <= tolerance)) return false;
  }
  return true;
}

void BM_Random_16M(benchmark::State& state, Distribution distribution, leangrad::DType dtype) {
  leangrad::Generator generator(0);
  const Tensor t = leangrad::empty({k16M}, leangrad::TensorOptions(dtype));
  const auto fill = [&] {
    if (distribution == Distribution::Uniform) {
      leangrad::ops::uniform_(t, 0.0, 1.0, generator);
    } else {
      leangrad::ops::normal_(t, 0.0, 1.0, generator);
    }
  };
  const leangrad::Generator::State before = generator.state();
  fill();
  if (!fill_matches(distribution, t, before))
    state.SkipWithError("the fill differs from random_math.h's definition of its elements");
  for (auto _ : state) {
    fill();
    benchmark::DoNotOptimize(t.data_ptr());
  }
  state.SetBytesProcessed(state.iterations() * k16M *
                          static_cast<std::int64_t>(leangrad::element_size(dtype)));
}

#define LEANGRAD_RANDOM_BENCHMARK(distribution, suffix, dtype)                          \
  BENCHMARK_CAPTURE(BM_Random_16M, distribution##_##suffix, Distribution::distribution, \
                    leangrad::dtype)                                                    \
      ->Unit(benchmark::kMillisecond)                                                   \
      ->UseRealTime()
#define LEANGRAD_RANDOM_BENCHMARKS(distribution)          \
  LEANGRAD_RANDOM_BENCHMARK(distribution, F32, kFloat32); \
  LEANGRAD_RANDOM_BENCHMARK(distribution, F64, kFloat64); \
  LEANGRAD_RANDOM_BENCHMARK(distribution, BF16, kBFloat16)
LEANGRAD_RANDOM_BENCHMARKS(Uniform);
LEANGRAD_RANDOM_BENCHMARKS(Normal);

}  // namespace

BENCHMARK_MAIN();
