// offload_mlp: what offload::SaveOnCpu costs and saves on the GPU. An MLP of 24 layers
// (Linear 4096 -> 4096 as matmul + bias add, then tanh), batch 256, float32 (TF32 off), one
// training step = forward, sum, backward (no optimizer). Modes:
//   plain                    every saved tensor stays on the device
//   save_on_cpu              SaveOnCpu: every saved tensor to pinned memory, the weights included
//                            (what torch.autograd.graph.save_on_cpu does)
//   save_on_cpu_keep_params  SaveOnCpu(true, parameters): only the activations cross the bus
//   checkpoint               autograd::checkpoint around each layer (recompute in backward)
// Each mode's gradients are checked against one plain step's (0 means bitwise equal), then its
// steps are timed with the GPU bench harness (bench/gpu_harness.h; no L2 flush: a step moves
// gigabytes). The note column: peak MiB (the caching allocator's peak_allocated over the steps:
// weights, gradients and activations) and activations MiB resident (allocated after the forward
// minus before it). bench/compare/offload_mlp_torch.py prints the same rows for PyTorch.
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include <leangrad/autograd/checkpoint.h>
#include <leangrad/autograd/functions.h>
#include "bench/gpu_harness.h"
#include <leangrad/kernels/creation.h>
#include <leangrad/core/cuda.h>
#include <leangrad/core/generator.h>
#include <leangrad/core/memory.h>
#include <leangrad/offload/save_on_cpu.h>

namespace {

using leangrad::Device;
using leangrad::Tensor;
namespace bench = leangrad::bench;

constexpr int kLayers = 24;
constexpr std::int64_t kWidth = 4096;
constexpr std::int64_t kBatch = 256;
// On max |dgrad| / max |grad|: every mode runs the same kernels on the same values.
constexpr double kTolerance = 1e-6;
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

std::vector<Tensor> gradients(const Mlp& mlp) {
  std::vector<Tensor> grads;
  for (const Tensor& p : mlp.parameters())
    grads.push_back(p.grad().clone());
  return grads;
}

}  // namespace

int main(int argc, char** argv) {
  return bench::gpu_main(argc, argv, "offload_mlp", [](bench::GpuBench& bench) {
    const Device cuda = Device::cuda();
    const Mlp mlp;
    leangrad::manual_seed(1);
    const Tensor x = leangrad::randn({kBatch, kWidth}).cuda();  // (B, width)

    // Reference gradients from one plain step; every mode is checked against them.
    step(mlp, x, Mode::Plain);
    const std::vector<Tensor> reference = gradients(mlp);

    bench.note(
        bench::format("MLP %d x %lld, batch %lld, float32 (TF32 off); one row = one training "
                      "step (forward, sum, backward), L2 not flushed",
                      kLayers, static_cast<long long>(kWidth), static_cast<long long>(kBatch)));
    bench::TimingOptions steps = bench.options().timing;
    steps.flush_l2 = false;
    for (Mode mode : {Mode::Plain, Mode::SaveOnCpu, Mode::SaveOnCpuKeepParams, Mode::Checkpoint}) {
      step(mlp, x, mode);
      const bench::Check check = bench::check_close(gradients(mlp), reference, kTolerance);
      // Peak over the warm-up and timed steps: every step allocates the same.
      leangrad::cuda::synchronize();
      leangrad::memory::reset_peak(cuda);
      std::int64_t resident = 0;
      bench::Row row = bench.measure(
          mode_name(mode), bench::Work::none(), check, [&] { resident = step(mlp, x, mode); },
          steps);
      row.note =
          bench::format("peak %.1f MiB, activations %.1f MiB",
                        static_cast<double>(leangrad::memory::stats(cuda).peak_allocated) / kMiB,
                        static_cast<double>(resident) / kMiB);
      bench.add_row(row);
    }
  });
}
