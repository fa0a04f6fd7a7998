// CPU cost of the autograd machinery itself (autograd/graph.cpp, autograd/engine.cpp): a chain of
// 10k one-element ops, so the kernels are negligible and what is timed is recording nodes,
// counting dependencies, running the ready queue and freeing the graph. Reported as
// us_per_node (microseconds per recorded op, wall clock). Plus a small MLP training step on the
// CPU, plain and under offload::SaveOnCpu (where CPU tensors pass through: the cost of the hooks
// alone). Checked before timing: the chain's gradient against its closed form; the MLP step's
// gradients against a first plain step, after timing.
#include <benchmark/benchmark.h>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <vector>

#include <leangrad/autograd/functions.h>
#include <leangrad/core/generator.h>
#include <leangrad/kernels/creation.h>
#include <leangrad/offload/save_on_cpu.h>

namespace {

using leangrad::Tensor;

constexpr int kChainNodes = 10000;
constexpr double kMulFactor = 1.0001;  // keeps the chain's value near 1 over 10k steps
constexpr double kAddTerm = 0.5;

// y = (((x * m) + a) * m + a) ...: kChainNodes ops alternating mul and add, each with a
// one-element constant tensor (no grad), so every op records a node.
Tensor chain(const Tensor& x, const Tensor& m, const Tensor& a) {
  Tensor y = x;
  for (int i = 0; i < kChainNodes; ++i)
    y = (i % 2 == 0) ? y * m : y + a;
  return y;
}

// dy/dx = m^(number of muls).
double expected_chain_grad() {
  return std::pow(kMulFactor, kChainNodes / 2);
}

// Wall-clock time of the timed loop, for the us_per_node counter (a plain number, in us).
class LoopTimer {
 public:
  LoopTimer() : start_(std::chrono::steady_clock::now()) {}
  double us_per(const benchmark::State& state, int nodes_per_iteration) const {
    const double us =
        std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start_)
            .count();
    return us / (static_cast<double>(state.iterations()) * nodes_per_iteration);
  }

 private:
  std::chrono::steady_clock::time_point start_;
};

void BM_ChainForward_10k(benchmark::State& state) {
  Tensor x = leangrad::ones({1}).requires_grad_();
  const Tensor m = leangrad::full({1}, kMulFactor);
  const Tensor a = leangrad::full({1}, kAddTerm);
  const LoopTimer timer;
  for (auto _ : state) {
    Tensor y = chain(x, m, a);
    benchmark::DoNotOptimize(y.data_ptr());
  }
  state.counters["us_per_node"] = timer.us_per(state, kChainNodes);
}
BENCHMARK(BM_ChainForward_10k)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_ChainForwardBackward_10k(benchmark::State& state) {
  Tensor x = leangrad::ones({1}).requires_grad_();
  const Tensor m = leangrad::full({1}, kMulFactor);
  const Tensor a = leangrad::full({1}, kAddTerm);
  chain(x, m, a).backward();
  const double got = x.grad().item<double>();
  if (std::fabs(got - expected_chain_grad()) > 1e-3 * expected_chain_grad()) {
    state.SkipWithError("chain gradient differs from the closed form");
    return;
  }
  const LoopTimer timer;
  for (auto _ : state) {
    x.set_grad(Tensor());
    chain(x, m, a).backward();
    benchmark::DoNotOptimize(x.grad().data_ptr());
  }
  state.counters["us_per_node"] = timer.us_per(state, kChainNodes);
}
BENCHMARK(BM_ChainForwardBackward_10k)->Unit(benchmark::kMillisecond)->UseRealTime();

// ---- A small MLP step: 4 x (Linear 256 -> 256 + tanh), batch 64, float32 ----------------------

constexpr int kMlpLayers = 4;
constexpr std::int64_t kMlpWidth = 256;
constexpr std::int64_t kMlpBatch = 64;

struct SmallMlp {
  std::vector<Tensor> weights;  // (width, width)
  std::vector<Tensor> biases;   // (width,)
  SmallMlp() {
    leangrad::manual_seed(0);
    const double scale = 1.0 / std::sqrt(static_cast<double>(kMlpWidth));
    for (int i = 0; i < kMlpLayers; ++i) {
      weights.push_back((leangrad::randn({kMlpWidth, kMlpWidth}) * scale).requires_grad_());
      biases.push_back(leangrad::zeros({kMlpWidth}).requires_grad_());
    }
  }
  Tensor loss(Tensor x) const {  // (B, width) -> scalar
    for (int i = 0; i < kMlpLayers; ++i)
      x = leangrad::tanh(leangrad::matmul(x, weights[i]) + biases[i]);
    return x.sum();
  }
  void clear_grads() const {
    for (Tensor w : weights)
      w.set_grad(Tensor());
    for (Tensor b : biases)
      b.set_grad(Tensor());
  }
};

void BM_MlpStep_Cpu(benchmark::State& state) {
  const bool save_on_cpu = state.range(0) != 0;
  const SmallMlp mlp;
  const Tensor x = leangrad::randn({kMlpBatch, kMlpWidth});
  // A plain step first: every timed step (plain or not) must give the same gradients.
  mlp.clear_grads();
  mlp.loss(x).backward();
  const double expected_grad_sum = mlp.weights.front().grad().sum().item<double>();
  for (auto _ : state) {
    mlp.clear_grads();
    Tensor loss;
    if (save_on_cpu) {
      leangrad::offload::SaveOnCpu guard;
      loss = mlp.loss(x);
    } else {
      loss = mlp.loss(x);
    }
    loss.backward();
    benchmark::DoNotOptimize(mlp.weights[0].grad().data_ptr());
  }
  if (mlp.weights.front().grad().sum().item<double>() != expected_grad_sum) {
    state.SkipWithError("gradients differ between iterations");
  }
  state.SetLabel(save_on_cpu ? "SaveOnCpu (pass-through on CPU)" : "plain");
}
BENCHMARK(BM_MlpStep_Cpu)->Arg(0)->Arg(1)->Unit(benchmark::kMicrosecond)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
