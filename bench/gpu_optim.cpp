// gpu_optim: step time of the fused CUDA optimizers (kernels/cuda/optim.cu) on GPT-2 small's
// parameter list (124M parameters in their real shapes), each first checked against the CPU
// after 3 steps on a few of the tensors, then timed with the GPU bench harness
// (bench/gpu_harness.h). Work per step: the bytes it must move (Adam and AdamW 28 B/param, SGD
// momentum 20, Adam8bit 16 + absmax for its quantised tensors and 28 for the small ones). The
// 2 GB a step moves dwarf L2 anyway; the harness flushes it all the same, outside the timing.
// bench/compare/optim_torch.py prints the same rows for PyTorch's optimizers.
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "bench/gpu_harness.h"
#include <leangrad/kernels/creation.h>
#include <leangrad/core/cuda.h>
#include <leangrad/core/generator.h>
#include <leangrad/optim/optim.h>

namespace {

using leangrad::Shape;
using leangrad::Tensor;
namespace bench = leangrad::bench;
namespace optim = leangrad::optim;

// On max |diff| / max |param| after 3 steps: the float32 optimizers run the CPU's math
// (kernels/optim_math.h) in the same order; Adam8bit may round a state to the neighbouring code
// when the two devices' float results differ by an ulp at a boundary.
constexpr double kTolerance = 1e-5;
constexpr double kAdam8bitTolerance = 1e-3;

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

// The parameters after 3 steps on the given shapes, CUDA against the CPU.
bench::Check check_against_cpu(const MakeOptimizer& make, const std::vector<Shape>& shapes,
                               double tolerance) {
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
  return bench::check_close(gpu, cpu, tolerance);
}

void optimizer_row(bench::GpuBench& bench, const std::string& name, const MakeOptimizer& make,
                   const std::function<double(std::int64_t)>& bytes_per_param, double tolerance) {
  // The check: two quantised weights (one not a multiple of 256 elements) and two small
  // tensors with float32 states.
  const bench::Check check =
      check_against_cpu(make, {{768, 2304}, {768}, {3072}, {1000, 37}}, tolerance);
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
  bench.run(
      name, bench::Work::bytes(bytes), check, [&] { opt->step(); },
      bench::format("%.1fM params", static_cast<double>(total) * 1e-6));
}

}  // namespace

int main(int argc, char** argv) {
  return bench::gpu_main(argc, argv, "gpu_optim", [](bench::GpuBench& bench) {
    bench.note(
        "GPT-2 small parameter list (124M parameters in their real shapes), one step per run");
    optimizer_row(
        bench, "Adam (fused)",
        [](std::vector<Tensor> p) { return std::make_unique<optim::Adam>(std::move(p)); },
        [](std::int64_t) { return 28.0; }, kTolerance);
    optimizer_row(
        bench, "AdamW (fused)",
        [](std::vector<Tensor> p) { return std::make_unique<optim::AdamW>(std::move(p)); },
        [](std::int64_t) { return 28.0; }, kTolerance);
    optimizer_row(
        bench, "SGD momentum (fused)",
        [](std::vector<Tensor> p) {
          return std::make_unique<optim::SGD>(std::move(p), optim::SGDOptions(0.01).momentum(0.9));
        },
        [](std::int64_t) { return 20.0; }, kTolerance);
    optimizer_row(
        bench, "Adam8bit (fused)",
        [](std::vector<Tensor> p) { return std::make_unique<optim::Adam8bit>(std::move(p)); },
        [](std::int64_t n) { return n >= 4096 ? 16.0 + 16.0 / 256 : 28.0; }, kAdam8bitTolerance);
  });
}
