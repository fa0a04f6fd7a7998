// offload_mlp: what offload::SaveOnCpu costs and saves on the GPU. An MLP of 24 layers
// (Linear 4096 -> 4096 as matmul + bias add, then tanh), batch 256, float32 (TF32 off), one
// training step = forward, sum, backward (no optimizer). Modes:
//   plain                    every saved tensor stays on the device
//   save_on_cpu              SaveOnCpu: every saved tensor to pinned memory, the weights included
//                            (what torch.autograd.graph.save_on_cpu does)
//   save_on_cpu_keep_params  SaveOnCpu(true, parameters): only the activations cross the bus
//   checkpoint               autograd::checkpoint around each layer (recompute in backward)
// Times 20 steps with cuda::Event after 3 warm-up steps. Columns: ms/step; peak MiB (the caching
// allocator's peak_allocated over the timed steps: weights, gradients and activations);
// activations MiB resident (allocated after the forward minus before it); the largest gradient
// difference from plain (0 means bitwise equal). bench/compare/offload_mlp_torch.py prints the
// same table for PyTorch. A plain program (no Google Benchmark); without a GPU it says so, exits 0.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "autograd/checkpoint.h"
#include "autograd/functions.h"
#include "core/cuda.h"
#include "core/generator.h"
#include "core/memory.h"
#include "kernels/creation.h"
#include "offload/save_on_cpu.h"

namespace {

using leangrad::Device;
using leangrad::Tensor;

constexpr int kLayers = 24;
constexpr std::int64_t kWidth = 4096;
constexpr std::int64_t kBatch = 256;
constexpr int kWarmupSteps = 3;
constexpr int kTimedSteps = 20;
constexpr double kMiB = 1024.0 * 1024.0;

enum class Mode { Plain, SaveOnCpu, SaveOnCpuKeepParams, Checkpoint };

const char* mode_name(Mode mode) {
  switch (mode) {
    case Mode::Plain:
      return "plain";
    case Mode::SaveOnCpu:
      return "save_on_cpu";
    case Mode::SaveOnCpuKeepParams:
      return "save_on_cpu_keep_params";
    case Mode::Checkpoint:
      return "checkpoint";
  }
  return "?";
}

struct Mlp {
  std::vector<Tensor> weights;  // (width, width)
  std::vector<Tensor> biases;   // (width,)

  Mlp() {
    leangrad::manual_seed(0);
    const double scale = 1.0 / std::sqrt(static_cast<double>(kWidth));
    for (int i = 0; i < kLayers; ++i) {
      weights.push_back((leangrad::randn({kWidth, kWidth}) * scale).cuda().requires_grad_());
      biases.push_back(leangrad::zeros({kWidth}).cuda().requires_grad_());
    }
  }

  Tensor layer(int i, const Tensor& x) const {  // (B, width) -> (B, width)
    return leangrad::tanh(leangrad::matmul(x, weights[i]) + biases[i]);
  }

  std::vector<Tensor> parameters() const {
    std::vector<Tensor> params = weights;
    params.insert(params.end(), biases.begin(), biases.end());
    return params;
  }
};

Tensor forward_loss(const Mlp& mlp, Tensor x, Mode mode) {
  if (mode == Mode::Checkpoint) {
    for (int i = 0; i < kLayers; ++i) {
      x = leangrad::autograd::checkpoint(
          [&mlp, i](const std::vector<Tensor>& in) {
            return std::vector<Tensor>{mlp.layer(i, in[0])};
          },
          {x})[0];
    }
    return x.sum();
  }
  for (int i = 0; i < kLayers; ++i)
    x = mlp.layer(i, x);
  return x.sum();
}

// One step; returns the bytes allocated on the device by the forward and still held at its end.
std::int64_t step(const Mlp& mlp, const Tensor& x, Mode mode) {
  for (Tensor p : mlp.parameters())
    p.set_grad(Tensor());
  const std::int64_t before = leangrad::memory::stats(Device::cuda()).allocated;
  Tensor loss;
  if (mode == Mode::SaveOnCpu) {
    leangrad::offload::SaveOnCpu guard(/*pin_memory=*/true);
    loss = forward_loss(mlp, x, mode);
  } else if (mode == Mode::SaveOnCpuKeepParams) {
    leangrad::offload::SaveOnCpu guard(/*pin_memory=*/true, mlp.parameters());
    loss = forward_loss(mlp, x, mode);
  } else {
    loss = forward_loss(mlp, x, mode);
  }
  const std::int64_t resident = leangrad::memory::stats(Device::cuda()).allocated - before;
  loss.backward();
  return resident;
}

double max_abs_difference(const std::vector<Tensor>& a, const std::vector<Tensor>& b) {
  double worst = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    worst = std::fmax(worst, (a[i] - b[i]).abs().max().item<double>());
  }
  return worst;
}

std::vector<Tensor> gradients(const Mlp& mlp) {
  std::vector<Tensor> grads;
  for (const Tensor& p : mlp.parameters())
    grads.push_back(p.grad().clone());
  return grads;
}

}  // namespace

int main() {
  if (!leangrad::cuda::is_available()) {
    std::printf("no CUDA device: skipped\n");
    return 0;
  }
  const Device cuda = Device::cuda();
  const Mlp mlp;
  leangrad::manual_seed(1);
  const Tensor x = leangrad::randn({kBatch, kWidth}).cuda();  // (B, width)

  // Reference gradients from one plain step; every mode is checked against them.
  step(mlp, x, Mode::Plain);
  const std::vector<Tensor> reference = gradients(mlp);

  std::printf("MLP %d x %lld, batch %lld, float32; %d timed steps after %d warm-up steps\n",
              kLayers, static_cast<long long>(kWidth), static_cast<long long>(kBatch), kTimedSteps,
              kWarmupSteps);
  std::printf("%-26s %10s %10s %17s %15s\n", "mode", "ms/step", "peak MiB", "activations MiB",
              "max |dgrad|");
  for (Mode mode : {Mode::Plain, Mode::SaveOnCpu, Mode::SaveOnCpuKeepParams, Mode::Checkpoint}) {
    step(mlp, x, mode);
    const double difference = max_abs_difference(gradients(mlp), reference);
    for (int i = 1; i < kWarmupSteps; ++i)
      step(mlp, x, mode);
    leangrad::cuda::synchronize();
    leangrad::memory::reset_peak(cuda);
    leangrad::cuda::Event start;
    leangrad::cuda::Event end;
    std::int64_t resident = 0;
    start.record();
    for (int i = 0; i < kTimedSteps; ++i)
      resident = step(mlp, x, mode);
    end.record();
    end.synchronize();
    const double ms_per_step = start.elapsed_ms(end) / kTimedSteps;
    const double peak_mib =
        static_cast<double>(leangrad::memory::stats(cuda).peak_allocated) / kMiB;
    std::printf("%-26s %10.2f %10.1f %17.1f %15.3g\n", mode_name(mode), ms_per_step, peak_mib,
                static_cast<double>(resident) / kMiB, difference);
  }
  return 0;
}
