// gpu_layers: times each CUDA layer kernel (kernels/cuda/layers.cu, through kernels/ops.h) with
// cuda::Event over rotating input buffers that together exceed L2 (each launch reads from HBM),
// after warm-up; each op is checked once against the CPU reference first. Columns: ms per call,
// GB/s of bytes touched (inputs read once, outputs written once) and the fraction of H100 HBM3
// (3.35 TB/s). bench/compare/layers_torch.py prints the same table for PyTorch. A plain program;
// without a GPU it prints "no CUDA device: skipped" and exits 0.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "autograd/functions.h"
#include "autograd/grad_mode.h"
#include "autograd/nn_functions.h"
#include "core/cuda.h"
#include "core/generator.h"
#include "kernels/creation.h"
#include "kernels/ops.h"

namespace {

using leangrad::Device;
using leangrad::Tensor;

constexpr double kHbmGBps = 3350.0;
constexpr double kL2Bytes = 50.0 * 1024 * 1024;
constexpr int kWarmup = 5;
constexpr int kIters = 50;

// Largest |cuda - cpu| of two tensors (any device, same shape).
double max_abs_diff(const Tensor& a, const Tensor& b) {
  return (a.cpu().to(leangrad::kFloat64) - b.cpu().to(leangrad::kFloat64))
      .abs()
      .max()
      .item<double>();
}

// Times fn(inputs[i % copies]) with enough copies to exceed 2x L2.
void time_op(const std::string& name, const std::function<std::vector<Tensor>()>& make,
             const std::function<Tensor(const std::vector<Tensor>&)>& fn, double bytes) {
  // Correctness once: the same inputs on the CPU.
  const std::vector<Tensor> first = make();
  std::vector<Tensor> on_cpu;
  for (const Tensor& t : first)
    on_cpu.push_back(t.cpu());
  const double diff = max_abs_diff(fn(first), fn(on_cpu));
  const int copies = static_cast<int>(std::max(2.0, 2 * kL2Bytes / bytes + 1));
  std::vector<std::vector<Tensor>> inputs{first};
  for (int i = 1; i < copies; ++i)
    inputs.push_back(make());
  for (int i = 0; i < kWarmup; ++i)
    fn(inputs[i % copies]);
  leangrad::cuda::Event start, stop;
  start.record();
  for (int i = 0; i < kIters; ++i)
    fn(inputs[i % copies]);
  stop.record();
  stop.synchronize();
  const double ms = start.elapsed_ms(stop) / kIters;
  const double gbps = bytes / ms * 1e-6;
  std::printf("%-44s %9.4f ms %9.1f GB/s %6.1f%%   max|cuda-cpu| %.2e\n", name.c_str(), ms, gbps,
              100.0 * gbps / kHbmGBps, diff);
}

}  // namespace

int main() {
  if (!leangrad::cuda::is_available()) {
    std::printf("no CUDA device: skipped\n");
    return 0;
  }
  namespace ops = leangrad::ops;
  const Device dev = Device::cuda();
  const auto f32 = leangrad::TensorOptions(leangrad::kFloat32).device(dev);
  leangrad::NoGradGuard no_grad;
  std::printf("%-44s %12s %14s %7s\n", "kernel", "time", "bandwidth", "of HBM");

  for (auto [n, c] : {std::pair<std::int64_t, std::int64_t>{64, 10}, {256, 1000}, {4096, 32000}}) {
    const double nbytes = static_cast<double>(n * c * 4);
    auto make = [n, c, f32] {
      Tensor t = (leangrad::rand({n}, f32) * static_cast<double>(c) - 0.5).relu();
      return std::vector<Tensor>{leangrad::randn({n, c}, f32), t.to(leangrad::kInt64)};
    };
    const std::string shape = leangrad::shape_str({n, c});
    time_op(
        "cross_entropy fwd " + shape, make,
        [](const std::vector<Tensor>& x) { return ops::cross_entropy(x[0], x[1], -100).losses; },
        nbytes);
    time_op(
        "cross_entropy fwd+bwd " + shape, make,
        [](const std::vector<Tensor>& x) {
          ops::CrossEntropyResult r = ops::cross_entropy(x[0], x[1], -100);
          return ops::cross_entropy_backward(leangrad::ones_like(r.losses), x[0], r.logsumexp, x[1],
                                             -100);
        },
        3 * nbytes);
  }
  for (const leangrad::Shape& shape : {leangrad::Shape{64, 32, 28, 28}, {64, 64, 14, 14}}) {
    const double numel = static_cast<double>(shape[0] * shape[1] * shape[2] * shape[3]);
    auto make = [shape, f32] { return std::vector<Tensor>{leangrad::randn(shape, f32)}; };
    const std::string s = leangrad::shape_str(shape);
    time_op(
        "max_pool2d k2 " + s, make,
        [](const std::vector<Tensor>& x) {
          return ops::max_pool2d(x[0], {2, 2}, {2, 2}, {0, 0}).out;
        },
        numel * (4 + 1 + 2));
    time_op(
        "avg_pool2d k2 " + s, make,
        [](const std::vector<Tensor>& x) {
          return ops::avg_pool2d(x[0], {2, 2}, {2, 2}, {0, 0});
        },
        numel * 5);
  }
  const leangrad::Shape big = {16, 256, 96, 96};
  const double big_numel = 16.0 * 256 * 96 * 96;
  auto make_big = [big, f32] { return std::vector<Tensor>{leangrad::randn(big, f32)}; };
  time_op(
      "pixel_shuffle r2 (16, 256, 96, 96)", make_big,
      [](const std::vector<Tensor>& x) { return leangrad::pixel_shuffle(x[0], 2); }, big_numel * 8);
  time_op(
      "dropout p0.5 (16, 256, 96, 96)", make_big,
      [](const std::vector<Tensor>& x) {
        // The same seed on both devices: the masks (and outputs) must be identical.
        leangrad::manual_seed(1);
        return ops::dropout(x[0], 0.5, leangrad::default_generator(x[0].device())).out;
      },
      big_numel * 9);
  time_op(
      "softmax (4096, 32000) dim -1",
      [f32] {
        return std::vector<Tensor>{leangrad::randn({4096, 32000}, f32)};
      },
      [](const std::vector<Tensor>& x) { return ops::softmax(x[0], -1, false); },
      4096.0 * 32000 * 8);
  time_op(
      "linear 3136->128 batch 64",
      [f32] {
        return std::vector<Tensor>{leangrad::randn({64, 3136}, f32),
                                   leangrad::randn({128, 3136}, f32), leangrad::randn({128}, f32)};
      },
      [](const std::vector<Tensor>& x) { return leangrad::linear(x[0], x[1], x[2]); },
      (64.0 * 3136 + 128 * 3136 + 64 * 128) * 4);
  return 0;
}
