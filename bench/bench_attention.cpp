// scaled_dot_product_attention on the CPU, its two backends side by side (autograd/attention.h):
// the fused kernel (SDPBackend::FlashAttention, kernels/cpu/attention.cpp) and the composed
// path (SDPBackend::Math: matmul, softmax, matmul), forward without autograd and forward +
// backward, in float32 on (N, H, L, E) query, key and value with L = S. Each reports the CPU
// allocator's peak over one iteration beyond the inputs (peak_MiB; the composed path's includes
// the (N, H, L, L) weights; the fused kernel's per-thread tiles, a few hundred KiB, are
// std::vectors outside the allocator) and GFLOP/s of the products (forward 4 N H L^2 E, backward
// twice that; the fused backward recomputes the scores, 2 N H L^2 E more, not counted). The first
// iteration checks both backends' outputs against each other. LibTorch's side, the same names and
// shapes: bench/compare/libtorch/libtorch_attention.cpp; both in one run:
// bench/compare/attention_vs_libtorch.sh. Also one training step of a Transformer encoder layer
// (BM_TransformerEncoderLayer_Step), the attention, feed-forward block and LayerNorms together.
//   bench_attention [Google Benchmark options]     (args: backend 0 = Math, 1 = fused; N, H, L, E)
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cmath>
#include <cstdint>

#include <leangrad/autograd/attention.h>
#include <leangrad/autograd/functions.h>
#include <leangrad/autograd/grad_mode.h>
#include <leangrad/core/generator.h>
#include <leangrad/core/memory.h>
#include <leangrad/kernels/creation.h>
#include <leangrad/nn/transformer.h>

namespace {

using leangrad::SDPBackend;
using leangrad::Tensor;

SDPBackend backend_of(const benchmark::State& state) {
  return state.range(0) == 0 ? SDPBackend::Math : SDPBackend::FlashAttention;
}

struct Inputs {
  Tensor q, k, v, grad;
  double flops;  // of the forward's two products
};

Inputs inputs(const benchmark::State& state, bool requires_grad) {
  const std::int64_t n = state.range(1), h = state.range(2), l = state.range(3), e = state.range(4);
  leangrad::manual_seed(0);
  Inputs in;
  in.q = leangrad::randn({n, h, l, e});
  in.k = leangrad::randn({n, h, l, e});
  in.v = leangrad::randn({n, h, l, e});
  in.grad = leangrad::randn({n, h, l, e});
  if (requires_grad) {
    in.q.requires_grad_();
    in.k.requires_grad_();
    in.v.requires_grad_();
  }
  in.flops = 4.0 * static_cast<double>(n * h) * static_cast<double>(l * l) * static_cast<double>(e);
  return in;
}

// The largest difference between the two backends' outputs, against a bound of the float32
// rounding of a sum of L products (tests/kernels/test_attention_kernel.cpp derives it).
bool backends_agree(const Inputs& in, benchmark::State& state) {
  const leangrad::NoGradGuard no_grad;
  Tensor outs[2];
  for (int b = 0; b < 2; ++b) {
    const leangrad::SdpaKernelGuard guard({b == 0 ? SDPBackend::Math : SDPBackend::FlashAttention});
    outs[b] = leangrad::scaled_dot_product_attention(in.q, in.k, in.v);
  }
  const double diff = leangrad::amax(leangrad::abs(leangrad::sub(outs[0], outs[1]))).item<double>();
  const double bound = 64.0 * static_cast<double>(state.range(3)) * std::ldexp(1.0, -24) *
                       std::max(1.0, leangrad::amax(leangrad::abs(outs[0])).item<double>());
  if (!(diff <= bound)) {
    state.SkipWithError("the fused and composed outputs differ");
    return false;
  }
  return true;
}

void report(benchmark::State& state, double flops_per_iteration, std::int64_t peak_bytes) {
  state.counters["GFLOP/s"] =
      benchmark::Counter(flops_per_iteration * 1e-9 * static_cast<double>(state.iterations()),
                         benchmark::Counter::kIsRate);
  state.counters["peak_MiB"] = static_cast<double>(peak_bytes) / (1024.0 * 1024.0);
}

// The CPU allocator's peak while `run` runs, beyond what was allocated before it.
template <typename F>
std::int64_t bytes_beyond(const F& run) {
  const leangrad::Device cpu = leangrad::Device::cpu();
  const std::int64_t before = leangrad::memory::stats(cpu).allocated;
  leangrad::memory::reset_peak(cpu);
  run();
  return leangrad::memory::stats(cpu).peak_allocated - before;
}

void BM_Attention_Forward(benchmark::State& state) {
  const Inputs in = inputs(state, false);
  if (!backends_agree(in, state)) return;
  const leangrad::NoGradGuard no_grad;
  const leangrad::SdpaKernelGuard guard({backend_of(state)});
  std::int64_t peak = 0;
  for (auto _ : state) {
    peak = std::max(peak, bytes_beyond([&] {
                      Tensor out = leangrad::scaled_dot_product_attention(in.q, in.k, in.v);
                      benchmark::DoNotOptimize(out.data_ptr());
                    }));
  }
  report(state, in.flops, peak);
}

void BM_Attention_ForwardBackward(benchmark::State& state) {
  const Inputs in = inputs(state, true);
  if (!backends_agree(in, state)) return;
  const leangrad::SdpaKernelGuard guard({backend_of(state)});
  std::int64_t peak = 0;
  for (auto _ : state) {
    peak = std::max(peak, bytes_beyond([&] {
                      Tensor out = leangrad::scaled_dot_product_attention(in.q, in.k, in.v);
                      out.backward(in.grad);
                      benchmark::DoNotOptimize(in.q.grad().data_ptr());
                    }));
    for (const Tensor& t : {in.q, in.k, in.v})
      t.set_grad(Tensor());
  }
  report(state, 3 * in.flops, peak);
}

// (backend, N, H, L, E): a Transformer layer's heads at L = 512, and one long sequence.
void shapes(benchmark::internal::Benchmark* b) {
  for (const std::int64_t backend : {0, 1}) {
    b->Args({backend, 8, 8, 512, 64});
    b->Args({backend, 1, 8, 2048, 64});
  }
  b->ArgNames({"fused", "N", "H", "L", "E"})->Unit(benchmark::kMillisecond)->UseRealTime();
}
BENCHMARK(BM_Attention_Forward)->Apply(shapes);
BENCHMARK(BM_Attention_ForwardBackward)->Apply(shapes);

// One training step's forward and backward of nn::TransformerEncoderLayer(512, 8) (feed-forward
// 2048, ReLU, post-norm as PyTorch's default, dropout 0) on (L, N, E) = (128, 16, 512): the
// projections, attention, the feed-forward block and two LayerNorms, as a model runs them. The
// first step checks the output: each row is the last LayerNorm's (weight 1, bias 0 at
// initialisation), so mean 0 and variance var / (var + eps), within float32 rounding.
void BM_TransformerEncoderLayer_Step(benchmark::State& state) {
  constexpr std::int64_t kL = 128, kN = 16, kE = 512;
  leangrad::manual_seed(0);
  leangrad::nn::TransformerEncoderLayer layer(
      leangrad::nn::TransformerEncoderLayerOptions(kE, 8).dropout(0.0));
  const Tensor x = leangrad::randn({kL, kN, kE}).requires_grad_();
  const Tensor grad = leangrad::randn({kL, kN, kE});
  {
    const leangrad::NoGradGuard no_grad;
    const Tensor y = layer(x);
    const Tensor mean = leangrad::mean(y, {2});
    const Tensor var = leangrad::mean(leangrad::mul(y, y), {2});  // E[y^2] with mean 0
    const double mean_off = leangrad::amax(leangrad::abs(mean)).item<double>();
    const double var_off = leangrad::amax(leangrad::abs(leangrad::sub(var, 1.0))).item<double>();
    // Rows of 512 float32 values: sums within 512 u of their magnitudes; var / (var + eps) is
    // within 1e-4 of 1 for var >= 0.1.
    if (!(mean_off <= 1e-4 && var_off <= 2e-4)) {
      state.SkipWithError("the layer's output rows are not normalized");
      return;
    }
  }
  for (auto _ : state) {
    Tensor y = layer(x);
    y.backward(grad);
    benchmark::DoNotOptimize(x.grad().data_ptr());
    layer->zero_grad();
    x.set_grad(Tensor());
  }
  // The layer's matrix products: 4 E^2 (projections) + 2 L E (scores and values) + 4 E F
  // (feed-forward, F = 2048) multiply-adds per token, forward; backward twice that.
  const double tokens = static_cast<double>(kL * kN);
  const double flops = 3 * 2 * tokens * (4.0 * kE * kE + 2.0 * kL * kE + 4.0 * kE * 2048);
  state.counters["GFLOP/s"] = benchmark::Counter(
      flops * 1e-9 * static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_TransformerEncoderLayer_Step)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
