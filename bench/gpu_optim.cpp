// gpu_optim: step time of the fused CUDA optimizers (kernels/cuda/optim.cu) on GPT-2 small's
// parameter list (124M parameters in their real shapes), after a check of each against the CPU
// on a few of the tensors. Columns: ms per step, GB/s of the bytes a step must move (Adam and
// AdamW 28 B/param, SGD momentum 20, Adam8bit 16 + absmax for its quantised tensors and 28 for
// the small ones) and the fraction of H100 HBM3 (3.35 TB/s). The parameter list (2 GB of
// traffic per step) is far beyond L2, so no flushing is needed. bench/compare/optim_torch.py
// prints the same table for PyTorch's fused Adam. Without a GPU: "no CUDA device: skipped".
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/cuda.h"
#include "core/generator.h"
#include "kernels/creation.h"
#include "optim/optim.h"

namespace {

using leangrad::Shape;
using leangrad::Tensor;
namespace optim = leangrad::optim;

constexpr double kHbmGBps = 3350.0;
constexpr int kWarmup = 3;
constexpr int kIters = 20;

// GPT-2 small: wte, wpe, 12 blocks, ln_f.
std::vector<Shape> gpt2_small_shapes() {
  std::vector<Shape> shapes = {{50257, 768}, {1024, 768}};
  for (int layer = 0; layer < 12; ++layer) {
    const std::vector<Shape> block = {{768}, {768}, {768, 2304}, {2304}, {768, 768},  {768},
                                      {768}, {768}, {768, 3072}, {3072}, {3072, 768}, {768}};
    shapes.insert(shapes.end(), block.begin(), block.end());
  }
  shapes.push_back({768});
  shapes.push_back({768});
  return shapes;
}

std::int64_t numel_of(const Shape& s) {
  std::int64_t n = 1;
  for (std::int64_t d : s)
    n *= d;
  return n;
}

using MakeOptimizer = std::function<std::unique_ptr<optim::Optimizer>(std::vector<Tensor>)>;

// Largest |cuda - cpu| of the parameters after 3 steps on the given shapes.
double check_against_cpu(const MakeOptimizer& make, const std::vector<Shape>& shapes) {
  std::vector<Tensor> cpu, gpu;
  leangrad::manual_seed(1);
  for (const Shape& s : shapes) {
    cpu.push_back(leangrad::randn(s) * 0.02);
    gpu.push_back(cpu.back().cuda());
  }
  std::unique_ptr<optim::Optimizer> cpu_opt = make(cpu);
  std::unique_ptr<optim::Optimizer> gpu_opt = make(gpu);
  for (int step = 0; step < 3; ++step) {
    for (std::size_t k = 0; k < shapes.size(); ++k) {
      const Tensor g = leangrad::randn(shapes[k]) * 0.01;
      cpu[k].set_grad(g);
      gpu[k].set_grad(g.cuda());
    }
    cpu_opt->step();
    gpu_opt->step();
  }
  double diff = 0;
  for (std::size_t k = 0; k < shapes.size(); ++k)
    diff = std::max(diff, (gpu[k].cpu() - cpu[k]).abs().max().item<double>());
  return diff;
}

void time_optimizer(const std::string& name, const MakeOptimizer& make,
                    const std::function<double(std::int64_t)>& bytes_per_param) {
  // The check: two quantised weights (one not a multiple of 256 elements) and two small
  // tensors with float32 states.
  const double diff = check_against_cpu(make, {{768, 2304}, {768}, {3072}, {1000, 37}});
  const auto dev = leangrad::TensorOptions(leangrad::kFloat32).device(leangrad::Device::cuda());
  std::vector<Tensor> params;
  double bytes = 0;
  std::int64_t total = 0;
  for (const Shape& s : gpt2_small_shapes()) {
    Tensor p = leangrad::randn(s, dev) * 0.02;
    p.set_grad(leangrad::randn(s, dev) * 0.01);
    params.push_back(p);
    bytes += bytes_per_param(numel_of(s)) * static_cast<double>(numel_of(s));
    total += numel_of(s);
  }
  std::unique_ptr<optim::Optimizer> opt = make(params);
  for (int i = 0; i < kWarmup; ++i)
    opt->step();
  leangrad::cuda::Event start, stop;
  start.record();
  for (int i = 0; i < kIters; ++i)
    opt->step();
  stop.record();
  stop.synchronize();
  const double ms = start.elapsed_ms(stop) / kIters;
  const double gbps = bytes / ms * 1e-6;
  std::printf("%-22s %6.1fM params %9.3f ms %9.1f GB/s %6.1f%%   max|cuda-cpu| %.2e\n",
              name.c_str(), static_cast<double>(total) * 1e-6, ms, gbps, 100.0 * gbps / kHbmGBps,
              diff);
}

}  // namespace

int main() {
  if (!leangrad::cuda::is_available()) {
    std::printf("no CUDA device: skipped\n");
    return 0;
  }
  std::printf("GPT-2 small parameter list, %d steps after %d warm-up\n", kIters, kWarmup);
  std::printf("%-22s %13s %12s %14s %7s\n", "optimizer", "params", "time/step", "bandwidth",
              "of HBM");
  time_optimizer(
      "Adam (fused)",
      [](std::vector<Tensor> p) { return std::make_unique<optim::Adam>(std::move(p)); },
      [](std::int64_t) { return 28.0; });
  time_optimizer(
      "AdamW (fused)",
      [](std::vector<Tensor> p) { return std::make_unique<optim::AdamW>(std::move(p)); },
      [](std::int64_t) { return 28.0; });
  time_optimizer(
      "SGD momentum (fused)",
      [](std::vector<Tensor> p) {
        return std::make_unique<optim::SGD>(std::move(p), optim::SGDOptions(0.01).momentum(0.9));
      },
      [](std::int64_t) { return 20.0; });
  time_optimizer(
      "Adam8bit (fused)",
      [](std::vector<Tensor> p) { return std::make_unique<optim::Adam8bit>(std::move(p)); },
      [](std::int64_t n) { return n >= 4096 ? 16.0 + 16.0 / 256 : 28.0; });
  return 0;
}
