// CPU step time of the optimizers: every optimizer on 10M float32 parameters (one tensor of about
// 2^20 x 10 elements, the shape of a large embedding), Adam also on bfloat16 and float16 ones
// (states of the parameter's dtype, 14 B/param); Adam, AdamW and Adam8bit also on 100M and
// on the parameters of leangrad-train's mlp (784x128, 128, 10x128, 10: tools/train_models.cpp);
// the reference loops (kernels/cpu/optim_reference.h) beside the vectorised kernels the library
// runs; Adam8bit's byte-permute lookups alone (BM_Adam8bit_Lookup); clip_grad_norm_. Bandwidth
// counts the bytes a step must move: each of p, g and the states read once, p and the states
// written once (SGD momentum 20, Adam/AdamW/RAdam 28, Adam amsgrad 36, Adam8bit 16 + 8/256 B/param,
// clip 12); compare with this machine's copy bandwidth (BM_Copy).
// bench/compare/optim_vs_libtorch.sh runs the Adam rows beside LibTorch's torch::optim::Adam
// (bench/compare/libtorch/libtorch_optim.cpp, the same benchmark names). Each optimizer is
// checked against a plain loop first; bench/gpu_optim.cpp times the CUDA kernels.
#include <benchmark/benchmark.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <vector>

#include <leangrad/core/generator.h>
#include <leangrad/core/shape.h>
#include <leangrad/kernels/backend.h>
#include <leangrad/kernels/cpu/optim_reference.h>
#include <leangrad/kernels/cpu/quant_permute.h>
#include <leangrad/kernels/creation.h>
#include <leangrad/optim/optim.h>

namespace {

using leangrad::Shape;
using leangrad::Tensor;
namespace kernels = leangrad::kernels;
namespace optim = leangrad::optim;

constexpr std::int64_t k10M = 10'000'000;
constexpr std::int64_t k100M = 100'000'000;
constexpr std::int64_t kInCache = 65'536;
constexpr double kAdam8bitBytes = 16 + 8.0 / kernels::kQuantBlockSize;  // per quantised param

// leangrad-train's mlp: Linear(784, 128) and Linear(128, 10), weights (out, in).
const std::vector<Shape> kMlpShapes = {{128, 784}, {128}, {10, 128}, {10}};

using MakeOptimizer = std::function<std::unique_ptr<optim::Optimizer>(const std::vector<Tensor>&)>;

// One SGD step by a plain loop on element 0: the reference for the first benchmark's check.
bool sgd_matches_loop() {
  Tensor p = leangrad::full({4}, 1.0).requires_grad_(true);
  p.set_grad(leangrad::full({4}, 0.5));
  optim::SGD opt({p}, optim::SGDOptions(0.01));
  opt.step();
  return std::fabs(p.data_ptr<float>()[0] - (1.0f - 0.01f * 0.5f)) < 1e-6f;
}

// One bfloat16 Adam step (lr 0.1, p = 1, g = 0.5) against the same step by hand: in float, the
// stored values rounded to bfloat16.
bool adam_bfloat16_matches_loop() {
  Tensor p = leangrad::full({4}, 1.0, leangrad::kBFloat16).requires_grad_(true);
  p.set_grad(leangrad::full({4}, 0.5, leangrad::kBFloat16));
  optim::Adam opt({p}, optim::AdamOptions(0.1));
  opt.step();
  const float m = 0.1f * 0.5f, v = 0.001f * 0.5f * 0.5f;  // (1 - beta) g, (1 - beta2) g^2
  const float step_size = static_cast<float>(0.1 / (1 - 0.9));
  const float denom = std::sqrt(v) / static_cast<float>(std::sqrt(1 - 0.999)) + 1e-8f;
  const leangrad::BFloat16 expected(1.0f + (-step_size) * (m / denom));
  return p.data_ptr<leangrad::BFloat16>()[0].bits == expected.bits &&
         opt.state(0).at("exp_avg").data_ptr<leangrad::BFloat16>()[0].bits ==
             leangrad::BFloat16(m).bits;
}

// Parameters N(0, 1) of the given shapes and dtype with gradients N(0, 1e-4).
std::vector<Tensor> make_params(const std::vector<Shape>& shapes,
                                leangrad::DType dtype = leangrad::kFloat32) {
  leangrad::manual_seed(0);
  std::vector<Tensor> params;
  for (const Shape& shape : shapes) {
    Tensor p = leangrad::randn(shape).to(dtype).requires_grad_(true);
    p.set_grad((leangrad::randn(shape) * 0.01).to(dtype));
    params.push_back(p);
  }
  return params;
}

void run_optimizer(benchmark::State& state, const std::vector<Shape>& shapes,
                   const MakeOptimizer& make, double bytes_per_step,
                   leangrad::DType dtype = leangrad::kFloat32) {
  std::vector<Tensor> params = make_params(shapes, dtype);
  std::unique_ptr<optim::Optimizer> opt = make(params);
  opt->step();  // allocates the state
  for (auto _ : state)
    opt->step();
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * bytes_per_step));
  double numel = 0;
  for (const Tensor& p : params)
    numel += static_cast<double>(p.numel());
  state.counters["params"] = numel;
}

// One tensor of state.range(0) parameters of `dtype`, `bytes_per_param` bytes a step.
void run_on_one_tensor(benchmark::State& state, const MakeOptimizer& make, double bytes_per_param,
                       leangrad::DType dtype = leangrad::kFloat32) {
  const std::int64_t n = state.range(0);
  run_optimizer(state, {{n}}, make, static_cast<double>(n) * bytes_per_param, dtype);
}

MakeOptimizer make_adam(optim::AdamOptions options = optim::AdamOptions()) {
  return
      [options](const std::vector<Tensor>& p) { return std::make_unique<optim::Adam>(p, options); };
}
MakeOptimizer make_adamw() {
  return [](const std::vector<Tensor>& p) { return std::make_unique<optim::AdamW>(p); };
}
MakeOptimizer make_adam8bit() {
  return [](const std::vector<Tensor>& p) { return std::make_unique<optim::Adam8bit>(p); };
}

void BM_SGD_Momentum(benchmark::State& state) {
  if (!sgd_matches_loop()) state.SkipWithError("SGD differs from the reference loop");
  run_on_one_tensor(
      state,
      [](const std::vector<Tensor>& p) {
        return std::make_unique<optim::SGD>(p, optim::SGDOptions(0.01).momentum(0.9));
      },
      20);
}

void BM_Adam(benchmark::State& state) {
  run_on_one_tensor(state, make_adam(), 28);
}

// 16-bit parameters: p, g, exp_avg, exp_avg_sq of 2 bytes, the math in float (14 B/param: half
// of float32's traffic, so a memory-bound step should take about half the time).
void BM_Adam_BFloat16(benchmark::State& state) {
  if (!adam_bfloat16_matches_loop()) state.SkipWithError("bfloat16 Adam differs from the loop");
  run_on_one_tensor(state, make_adam(), 14, leangrad::kBFloat16);
}

void BM_Adam_Float16(benchmark::State& state) {
  run_on_one_tensor(state, make_adam(), 14, leangrad::kFloat16);
}

void BM_Adam_Amsgrad(benchmark::State& state) {
  run_on_one_tensor(state, make_adam(optim::AdamOptions().amsgrad(true)), 36);
}

void BM_AdamW(benchmark::State& state) {
  run_on_one_tensor(state, make_adamw(), 28);
}

void BM_RAdam(benchmark::State& state) {
  run_on_one_tensor(
      state, [](const std::vector<Tensor>& p) { return std::make_unique<optim::RAdam>(p); }, 28);
}

void BM_Adam8bit(benchmark::State& state) {
  run_on_one_tensor(state, make_adam8bit(), kAdam8bitBytes);
}

// Adam8bit as it runs on a CPU without AVX-512 VBMI (the code-table loops of
// kernels/cpu/quant_code_table.h), on any CPU: the permutes switched off for the run.
void BM_Adam8bit_CodeTable(benchmark::State& state) {
  kernels::cpu::set_quant_permute_allowed(false);
  run_on_one_tensor(state, make_adam8bit(), kAdam8bitBytes);
  kernels::cpu::set_quant_permute_allowed(true);
}

// The mlp: 101,770 parameters, 2.8 MB of Adam state traffic (it stays in the caches).
void BM_Adam_Mlp(benchmark::State& state) {
  double numel = 0;
  for (const Shape& s : kMlpShapes)
    numel += static_cast<double>(leangrad::shape_numel(s));
  run_optimizer(state, kMlpShapes, make_adam(), 28 * numel);
}

// Adam8bit on the mlp: the 784x128 weight has 8-bit states, the three small tensors (under
// min_8bit_size) float32 ones.
void BM_Adam8bit_Mlp(benchmark::State& state) {
  double bytes = 0;
  for (const Shape& s : kMlpShapes) {
    const auto n = static_cast<double>(leangrad::shape_numel(s));
    bytes += n * (n >= 4096 ? kAdam8bitBytes : 28);
  }
  run_optimizer(state, kMlpShapes, make_adam8bit(), bytes);
}

// ---- The reference loops, timed through the raw launchers -----------------------------------

// Raw Adam streams of n elements: p, g, m, v (the states of a few steps in).
struct AdamStreams {
  Tensor p, g, m, v;
  explicit AdamStreams(std::int64_t n)
      : p(leangrad::randn({n})),
        g(leangrad::randn({n}) * 0.01),
        m(leangrad::randn({n}) * 1e-3),
        v(leangrad::randn({n}).abs() * 1e-5) {}
  std::vector<kernels::OptimTensor<kernels::AdamUpdate>> list(const kernels::AdamUpdate& u) {
    kernels::OptimTensor<kernels::AdamUpdate> t{};
    t.data[0] = p.data_ptr<float>();
    t.data[1] = g.data_ptr<float>();
    t.data[2] = m.data_ptr<float>();
    t.data[3] = v.data_ptr<float>();
    t.numel = p.numel();
    t.scalars = u.scalars_at(1e-3, 0.0, 10);
    return {t};
  }
};

bool same_bytes(const Tensor& a, const Tensor& b) {
  return std::memcmp(a.data_ptr(), b.data_ptr(), a.nbytes()) == 0;
}

// The vectorised Adam launcher gives the reference's bits on 100k elements.
bool adam_launcher_matches_reference(const kernels::AdamUpdate& update) {
  leangrad::manual_seed(1);
  AdamStreams a(100'003);
  leangrad::manual_seed(1);
  AdamStreams b(100'003);
  kernels::cpu::adam_step(update, a.list(update), nullptr, nullptr);
  kernels::cpu::reference::adam_step(update, b.list(update), nullptr, nullptr);
  return same_bytes(a.p, b.p) && same_bytes(a.m, b.m) && same_bytes(a.v, b.v);
}

void BM_Adam_ReferenceLoop(benchmark::State& state) {
  const kernels::AdamUpdate update =
      kernels::AdamUpdate::make(0.9, 0.999, 1e-8, false, false, false);
  if (!adam_launcher_matches_reference(update))
    state.SkipWithError("the vectorised Adam differs from the reference loop");
  leangrad::manual_seed(0);
  AdamStreams s(state.range(0));
  const auto list = s.list(update);
  for (auto _ : state)
    kernels::cpu::reference::adam_step(update, list, nullptr, nullptr);
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * state.range(0) * 28));
}

// Raw Adam8bit state of n elements, after one step from zero moments.
struct Adam8bitStreams {
  Tensor p, g, state1, state2, absmax1, absmax2;
  explicit Adam8bitStreams(std::int64_t n)
      : p(leangrad::randn({n})),
        g(leangrad::randn({n}) * 0.01),
        state1(leangrad::full({n}, 127, leangrad::TensorOptions(leangrad::kUInt8))),
        state2(leangrad::zeros({n}, leangrad::TensorOptions(leangrad::kUInt8))),
        absmax1(leangrad::zeros({(n + kernels::kQuantBlockSize - 1) / kernels::kQuantBlockSize})),
        absmax2(leangrad::zeros({(n + kernels::kQuantBlockSize - 1) / kernels::kQuantBlockSize})) {}
  std::vector<kernels::Adam8bitTensor> list(const kernels::AdamUpdate& u) {
    return {{p.data_ptr<float>(), g.data_ptr<float>(), state1.data_ptr<std::uint8_t>(),
             state2.data_ptr<std::uint8_t>(), absmax1.data_ptr<float>(), absmax2.data_ptr<float>(),
             p.numel(), u.scalars_at(1e-3, 0.0, 1), kernels::StepArgs{0.0, 0.0, 0, nullptr}}};
  }
};

void BM_Adam8bit_ReferenceLoop(benchmark::State& state) {
  const kernels::AdamUpdate update =
      kernels::AdamUpdate::make(0.9, 0.999, 1e-8, false, false, true);
  {  // the vectorised launcher gives the reference's bits, over two steps
    leangrad::manual_seed(1);
    Adam8bitStreams a(100'003);
    leangrad::manual_seed(1);
    Adam8bitStreams b(100'003);
    for (int step = 0; step < 2; ++step) {
      kernels::cpu::adam8bit_step(update, a.list(update), nullptr, nullptr);
      kernels::cpu::reference::adam8bit_step(update, b.list(update), nullptr, nullptr);
    }
    if (!same_bytes(a.p, b.p) || !same_bytes(a.state1, b.state1) ||
        !same_bytes(a.state2, b.state2) || !same_bytes(a.absmax1, b.absmax1))
      state.SkipWithError("the vectorised Adam8bit differs from the reference loop");
  }
  leangrad::manual_seed(0);
  Adam8bitStreams s(state.range(0));
  const auto list = s.list(update);
  kernels::cpu::reference::adam8bit_step(update, list, nullptr, nullptr);  // moments now nonzero
  for (auto _ : state)
    kernels::cpu::reference::adam8bit_step(update, list, nullptr, nullptr);
  state.SetBytesProcessed(static_cast<std::int64_t>(
      static_cast<double>(state.iterations() * state.range(0)) * kAdam8bitBytes));
}

void BM_ClipGradNorm(benchmark::State& state) {
  Tensor p = leangrad::zeros({k10M}).requires_grad_(true);
  p.set_grad(leangrad::randn({k10M}) * 1e-4);  // below max_norm: the scale is 1
  for (auto _ : state)
    benchmark::DoNotOptimize(optim::clip_grad_norm_({p}, 1e9).data_ptr());
  state.SetBytesProcessed(state.iterations() * k10M * 12);  // read, read + write
}

// One of Adam8bit's four lookups alone, block by block through the byte permutes of
// kernels/cpu/quant_permute.h (CPUs with AVX-512 VBMI; skipped elsewhere), on 65,536 values that
// stay in L2: 0 dequantise (signed map), 1 dequantise (unsigned), 2 quantise (signed), 3 quantise
// (unsigned). Items are values: compare ns per value with the whole step's.
void BM_Adam8bit_Lookup(benchmark::State& state) {
  if (!kernels::cpu::quant_permute_supported()) {
    state.SkipWithError("this CPU has no AVX-512 VBMI");
    return;
  }
  constexpr int kValues = 65536;
  const int which = static_cast<int>(state.range(0));
  const bool is_signed = which % 2 == 0;
  std::vector<std::uint8_t> codes(kValues);
  std::vector<float> values(kValues);
  leangrad::manual_seed(0);
  Tensor x = leangrad::randn({kValues}) * 0.3;
  for (int i = 0; i < kValues; ++i) {
    codes[static_cast<std::size_t>(i)] = static_cast<std::uint8_t>(i * 101 % 256);
    const float r = std::fmin(std::fabs(x.data_ptr<float>()[i]), 1.0f);
    values[static_cast<std::size_t>(i)] = is_signed ? x.data_ptr<float>()[i] : r * r;
  }
  for (auto _ : state) {
    for (int b = 0; b < kValues; b += kernels::kQuantBlockSize) {
      if (which < 2) {
        kernels::cpu::dequantize_block_permute(is_signed, codes.data() + b, 0.5f,
                                               values.data() + b);
      } else {
        benchmark::DoNotOptimize(kernels::cpu::quantize_block_permute(is_signed, values.data() + b,
                                                                      1.0f, codes.data() + b));
      }
    }
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(state.iterations() * kValues);
}

// The machine's bandwidth for comparison: a 40 MB copy (read + write).
void BM_Copy(benchmark::State& state) {
  Tensor src = leangrad::randn({k10M});
  Tensor dst = leangrad::empty({k10M});
  for (auto _ : state)
    dst.copy_(src);
  state.SetBytesProcessed(state.iterations() * k10M * 8);
}

BENCHMARK(BM_Copy)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_SGD_Momentum)->Arg(k10M)->Unit(benchmark::kMillisecond)->UseRealTime();
// 65,536 parameters: the step's streams in cache (1.8 MB float32, 0.9 MB 16-bit), what the
// arithmetic and the conversions cost without memory's limit.
BENCHMARK(BM_Adam)
    ->Arg(kInCache)
    ->Arg(k10M)
    ->Arg(k100M)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK(BM_Adam_BFloat16)->Arg(kInCache)->Arg(k10M)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_Adam_Float16)->Arg(kInCache)->Arg(k10M)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_Adam_Amsgrad)->Arg(k10M)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_AdamW)->Arg(k10M)->Arg(k100M)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_RAdam)->Arg(k10M)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_Adam8bit)
    ->Arg(kInCache)
    ->Arg(k10M)
    ->Arg(k100M)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK(BM_Adam8bit_CodeTable)
    ->Arg(k10M)
    ->Arg(k100M)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK(BM_Adam_Mlp)->Unit(benchmark::kMicrosecond)->UseRealTime();
BENCHMARK(BM_Adam8bit_Mlp)->Unit(benchmark::kMicrosecond)->UseRealTime();
BENCHMARK(BM_Adam_ReferenceLoop)->Arg(k10M)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_Adam8bit_ReferenceLoop)->Arg(k10M)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_Adam8bit_Lookup)->DenseRange(0, 3)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_ClipGradNorm)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
