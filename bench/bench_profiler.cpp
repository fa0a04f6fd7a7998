// What the profiler (core/profiler.h) costs. Off: one op's span (LG_PROFILE_OP over two tensors)
// when no Profile records, timed against the same function without it, and multiplied by the spans
// one MLP training step opens (counted under a Profile) against that step's time: the overhead a
// build with the hooks pays over one without them. On: the same MLP step (784 -> 128 -> 10, batch
// 64, SGD, leangrad-train's mlp) with and without a Profile recording, on the CPU and on CUDA
// (cuda:1; skipped without a GPU), where a recorded span also records a pair of CUDA events for
// its kernels' device time. docs/profiling.md quotes the results; tools/gpu-check.sh bench runs the
// CUDA arms on the GPU machine.
//   bench_profiler --benchmark_min_time=1 --benchmark_repetitions=5
//                  --benchmark_report_aggregates_only=true
#include <benchmark/benchmark.h>

#include <cstdint>
#include <memory>
#include <optional>

#include <leangrad/autograd/functions.h>
#include <leangrad/autograd/nn_functions.h>
#include <leangrad/core/cuda.h>
#include <leangrad/core/generator.h>
#include <leangrad/core/parallel.h>
#include <leangrad/core/profiler.h>
#include <leangrad/kernels/creation.h>
#include <leangrad/nn/nn.h>
#include <leangrad/optim/optim.h>

namespace {

using namespace leangrad;

// A function that opens a span exactly as the public functions do.
[[gnu::noinline]] std::int64_t profiled_op(const Tensor& a, const Tensor& b) {
  LG_PROFILE_OP(a, b);
  return a.numel() + b.numel();
}

// The same function without its span: the baseline BM_SpanOff is compared with.
[[gnu::noinline]] std::int64_t unprofiled_op(const Tensor& a, const Tensor& b) {
  return a.numel() + b.numel();
}

void BM_NoSpan(benchmark::State& state) {
  const Tensor a = ones({64, 784}), b = ones({128, 784});
  for (auto _ : state)
    benchmark::DoNotOptimize(unprofiled_op(a, b));
}
BENCHMARK(BM_NoSpan)->UseRealTime();

void BM_SpanOff(benchmark::State& state) {
  const Tensor a = ones({64, 784}), b = ones({128, 784});
  for (auto _ : state)
    benchmark::DoNotOptimize(profiled_op(a, b));
}
BENCHMARK(BM_SpanOff)->UseRealTime();

void BM_SpanOn(benchmark::State& state) {
  const Tensor a = ones({64, 784}), b = ones({128, 784});
  std::optional<profiler::Profile> profile;
  std::int64_t spans = 0;
  for (auto _ : state) {
    if (spans++ % 100000 == 0) {  // a fresh Profile now and then: memory stays bounded
      profile.reset();
      profile.emplace();
    }
    benchmark::DoNotOptimize(profiled_op(a, b));
  }
}
BENCHMARK(BM_SpanOn)->UseRealTime();

nn::Sequential mlp_on(Device device) {
  nn::Sequential model(nn::Linear(784, 128), nn::ReLU(), nn::Linear(128, 10));
  model->to(device);
  return model;
}

struct MlpStep {
  explicit MlpStep(Device device)
      : model(mlp_on(device)), sgd(model->parameters(), optim::SGDOptions(0.1)) {
    manual_seed(0);
    x = rand({64, 784}).to(device);
    target = randint(0, 10, {64}, TensorOptions(kInt64)).to(device);
  }
  // The loss read back every step (as leangrad-train does): on CUDA the step's time includes its
  // kernels, not only their launches.
  float run() {
    sgd.zero_grad();
    const Tensor loss = cross_entropy(model->forward(x), target);
    loss.backward();
    sgd.step();
    return loss.item<float>();
  }
  nn::Sequential model;
  optim::SGD sgd;
  Tensor x, target;
};

// Spans one step opens (ops, backward nodes, the optimizer step).
std::int64_t spans_per_step(MlpStep& step) {
  profiler::Profile profile;
  step.run();
  return static_cast<std::int64_t>(profile.spans().size());
}

void BM_MlpStep(benchmark::State& state) {
  const bool profiling = state.range(0) != 0;
  const bool on_cuda = state.range(1) != 0;
  if (on_cuda && !cuda::is_available()) {
    state.SkipWithError("no CUDA device");
    return;
  }
  // One thread: on a shared machine OpenMP's barriers make multi-threaded step times too noisy to
  // compare (the spans' cost does not depend on the thread count).
  const int threads = get_num_threads();
  set_num_threads(1);
  MlpStep step(on_cuda ? Device::cuda(0) : Device::cpu());
  step.run();  // warm-up: the allocator's cache
  const std::int64_t spans = spans_per_step(step);
  std::optional<profiler::Profile> profile;
  if (profiling) profile.emplace();
  for (auto _ : state)
    benchmark::DoNotOptimize(step.run());
  set_num_threads(threads);
  state.counters["spans_per_step"] = static_cast<double>(spans);
}
BENCHMARK(BM_MlpStep)
    ->ArgsProduct({{0, 1}, {0, 1}})
    ->ArgNames({"profiling", "cuda"})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
