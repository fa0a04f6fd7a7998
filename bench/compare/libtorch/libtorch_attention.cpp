// libtorch-attention: LibTorch's side of bench/compare/attention_vs_libtorch.sh. The benchmarks of
// bench/bench_attention.cpp with the same Google Benchmark names, shapes and counters, as a
// LibTorch 1.13 user writes attention on the CPU: softmax((q * scale) k^T) v composed of
// torch::matmul and torch::softmax (1.13 has no public fused scaled_dot_product_attention; its
// nn::MultiheadAttention composes the same way). Its one path is registered under leangrad's
// names for the composed backend (fused:0), so that each row pairs by name.
// Forward runs under NoGradGuard; forward + backward is one forward with autograd and
// out.backward(grad), the gradients reset after each. peak_MiB: not measured here (LibTorch's CPU
// allocator keeps no statistics), reported as -1. Also one training step of
// torch::nn::TransformerEncoderLayer (BM_TransformerEncoderLayer_Step).
//   libtorch-attention [--threads N] [Google Benchmark options]
//   libtorch-attention --show-config     LibTorch's build flags (at::show_config())
#include <benchmark/benchmark.h>
#include <torch/torch.h>

#include <cmath>
#include <cstdint>

#include "benchmark_main.h"

namespace {

struct Inputs {
  torch::Tensor q, k, v, grad;
  double flops;
};

Inputs inputs(const benchmark::State& state, bool requires_grad) {
  const int64_t n = state.range(1), h = state.range(2), l = state.range(3), e = state.range(4);
  torch::manual_seed(0);
  Inputs in;
  in.q = torch::randn({n, h, l, e}).requires_grad_(requires_grad);
  in.k = torch::randn({n, h, l, e}).requires_grad_(requires_grad);
  in.v = torch::randn({n, h, l, e}).requires_grad_(requires_grad);
  in.grad = torch::randn({n, h, l, e});
  in.flops = 4.0 * static_cast<double>(n * h) * static_cast<double>(l * l) * static_cast<double>(e);
  return in;
}

torch::Tensor attention(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v) {
  const double scale = 1.0 / std::sqrt(static_cast<double>(q.size(-1)));
  return torch::matmul(torch::softmax(torch::matmul(q * scale, k.transpose(-2, -1)), -1), v);
}

void report(benchmark::State& state, double flops_per_iteration) {
  state.counters["GFLOP/s"] =
      benchmark::Counter(flops_per_iteration * 1e-9 * static_cast<double>(state.iterations()),
                         benchmark::Counter::kIsRate);
  state.counters["peak_MiB"] = -1;
}

void BM_Attention_Forward(benchmark::State& state) {
  const Inputs in = inputs(state, false);
  torch::NoGradGuard no_grad;
  for (auto _ : state) {
    torch::Tensor out = attention(in.q, in.k, in.v);
    benchmark::DoNotOptimize(out.data_ptr());
  }
  report(state, in.flops);
}

void BM_Attention_ForwardBackward(benchmark::State& state) {
  Inputs in = inputs(state, true);
  for (auto _ : state) {
    torch::Tensor out = attention(in.q, in.k, in.v);
    out.backward(in.grad);
    benchmark::DoNotOptimize(in.q.grad().data_ptr());
    for (torch::Tensor* t : {&in.q, &in.k, &in.v})
      t->mutable_grad().reset();
  }
  report(state, 3 * in.flops);
}

void shapes(benchmark::internal::Benchmark* b) {
  b->Args({0, 8, 8, 512, 64});
  b->Args({0, 1, 8, 2048, 64});
  b->ArgNames({"fused", "N", "H", "L", "E"})->Unit(benchmark::kMillisecond)->UseRealTime();
}
BENCHMARK(BM_Attention_Forward)->Apply(shapes);
BENCHMARK(BM_Attention_ForwardBackward)->Apply(shapes);

// torch::nn::TransformerEncoderLayer(512, 8), dropout 0, on (128, 16, 512): forward and backward
// of one step, as bench_attention's BM_TransformerEncoderLayer_Step (same name and counter).
void BM_TransformerEncoderLayer_Step(benchmark::State& state) {
  constexpr int64_t kL = 128, kN = 16, kE = 512;
  torch::manual_seed(0);
  torch::nn::TransformerEncoderLayer layer(
      torch::nn::TransformerEncoderLayerOptions(kE, 8).dropout(0.0));
  torch::Tensor x = torch::randn({kL, kN, kE}).requires_grad_();
  const torch::Tensor grad = torch::randn({kL, kN, kE});
  for (auto _ : state) {
    torch::Tensor y = layer(x);
    y.backward(grad);
    benchmark::DoNotOptimize(x.grad().data_ptr());
    layer->zero_grad();
    x.mutable_grad().reset();
  }
  const double tokens = static_cast<double>(kL * kN);
  const double flops = 3 * 2 * tokens * (4.0 * kE * kE + 2.0 * kL * kE + 4.0 * kE * 2048);
  state.counters["GFLOP/s"] = benchmark::Counter(
      flops * 1e-9 * static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_TransformerEncoderLayer_Step)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace

int main(int argc, char** argv) {
  return run_libtorch_benchmarks(argc, argv);
}
