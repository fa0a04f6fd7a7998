// gpu_layers: the CUDA layer kernels (kernels/cuda/layers.cu, the normalizations' .cu files,
// through kernels/ops.h) and linear,
// each checked once against the CPU reference on the same inputs, then timed with the GPU bench
// harness (bench/gpu_harness.h: L2 flushed before each run, CUDA events). Work per call: the
// bytes touched, inputs read once and outputs written once. bench/compare/layers_torch.py prints
// the same rows for PyTorch.
#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include <leangrad/autograd/functions.h>
#include <leangrad/autograd/grad_mode.h>
#include <leangrad/autograd/nn_functions.h>
#include <leangrad/core/cuda.h>
#include <leangrad/core/generator.h>
#include <leangrad/kernels/creation.h>
#include <leangrad/kernels/ops.h>
#include "bench/gpu_harness.h"

namespace {

using leangrad::Tensor;
namespace bench = leangrad::bench;
namespace ops = leangrad::ops;

using Inputs = std::vector<Tensor>;

// Every layer computes in float32 in the same order on both devices but for the reductions'
// tree shape: a few ulps of the largest value.
constexpr double kTolerance = 1e-5;
// linear: a 3136-long dot product, summed in another order by cuBLAS than by Eigen; batch_norm:
// channel sums of 4096 to 100,352 values, cut into other pieces on each device.
constexpr double kLinearTolerance = 1e-4;
constexpr double kBatchNormTolerance = 1e-4;

// Checks fn on the CPU copies of inputs, then times it on the GPU inputs.
void layer_row(bench::GpuBench& bench, const std::string& name, const Inputs& inputs,
               const std::function<Tensor(const Inputs&)>& fn, double bytes,
               double tolerance = kTolerance) {
  Inputs on_cpu;
  for (const Tensor& t : inputs)
    on_cpu.push_back(t.cpu());
  bench.run(name, bench::Work::bytes(bytes), bench::check_close(fn(inputs), fn(on_cpu), tolerance),
            [&] { fn(inputs); });
}

}  // namespace

int main(int argc, char** argv) {
  return bench::gpu_main(argc, argv, "gpu_layers", [](bench::GpuBench& bench) {
    const auto f32 = leangrad::TensorOptions(leangrad::kFloat32).device(leangrad::Device::cuda());
    leangrad::NoGradGuard no_grad;

    for (auto [n, c] :
         {std::pair<std::int64_t, std::int64_t>{64, 10}, {256, 1000}, {4096, 32000}}) {
      const double nbytes = static_cast<double>(n * c * 4);
      const Tensor target =
          (leangrad::rand({n}, f32) * static_cast<double>(c) - 0.5).relu().to(leangrad::kInt64);
      const Inputs inputs = {leangrad::randn({n, c}, f32), target};
      const std::string shape = bench::shape_tuple({n, c});
      layer_row(
          bench, "cross_entropy fwd " + shape, inputs,
          [](const Inputs& x) { return ops::cross_entropy(x[0], x[1], Tensor(), -100).losses; },
          nbytes);
      layer_row(
          bench, "cross_entropy fwd+bwd " + shape, inputs,
          [](const Inputs& x) {
            ops::CrossEntropyResult r = ops::cross_entropy(x[0], x[1], Tensor(), -100);
            return ops::cross_entropy_backward(leangrad::ones_like(r.losses), x[0], r.logsumexp,
                                               x[1], Tensor(), -100);
          },
          3 * nbytes);
    }
    for (const leangrad::Shape& shape : {leangrad::Shape{64, 32, 28, 28}, {64, 64, 14, 14}}) {
      const double numel = static_cast<double>(shape[0] * shape[1] * shape[2] * shape[3]);
      const Inputs inputs = {leangrad::randn(shape, f32)};
      const std::string s = bench::shape_tuple(shape);
      layer_row(
          bench, "max_pool2d k2 " + s, inputs,
          [](const Inputs& x) {
            return ops::max_pool2d(x[0], {2, 2}, {2, 2}, {0, 0}).out;
          },
          numel * (4 + 1 + 2));
      layer_row(
          bench, "avg_pool2d k2 " + s, inputs,
          [](const Inputs& x) {
            return ops::avg_pool2d(x[0], {2, 2}, {2, 2}, {0, 0});
          },
          numel * 5);
    }
    const leangrad::Shape big = {16, 256, 96, 96};
    const double big_numel = 16.0 * 256 * 96 * 96;
    const Inputs big_input = {leangrad::randn(big, f32)};
    layer_row(
        bench, "pixel_shuffle r2 " + bench::shape_tuple(big), big_input,
        [](const Inputs& x) { return leangrad::pixel_shuffle(x[0], 2); }, big_numel * 8);
    layer_row(
        bench, "dropout p0.5 " + bench::shape_tuple(big), big_input,
        [](const Inputs& x) {
          // The same seed on both devices: the masks (and outputs) must be identical.
          leangrad::manual_seed(1);
          return ops::dropout(x[0], 0.5, leangrad::default_generator(x[0].device())).out;
        },
        big_numel * 9);
    layer_row(
        bench, "softmax (4096, 32000) dim -1", {leangrad::randn({4096, 32000}, f32)},
        [](const Inputs& x) { return ops::softmax(x[0], -1, false); }, 4096.0 * 32000 * 8);
    for (const leangrad::Shape& shape : {leangrad::Shape{8192, 1024}, {4096, 4096}}) {
      const double nbytes = static_cast<double>(shape[0] * shape[1] * 4);
      const Inputs inputs = {leangrad::randn(shape, f32), leangrad::randn({shape[1]}, f32),
                             leangrad::randn({shape[1]}, f32), leangrad::randn(shape, f32)};
      const std::string s = bench::shape_tuple(shape);
      layer_row(
          bench, "layer_norm fwd " + s, inputs,
          [](const Inputs& x) {
            return ops::layer_norm(x[0], x[0].size(1), x[1], x[2], 1e-5).output;
          },
          2 * nbytes);
      // The backward's three gradients; x, dy read and dx written (the parameters' are small).
      layer_row(
          bench, "layer_norm fwd+bwd " + s, inputs,
          [](const Inputs& x) {
            const std::int64_t m = x[0].size(1);
            const ops::GroupNormOutput f = ops::layer_norm(x[0], m, x[1], x[2], 1e-5);
            return ops::layer_norm_backward(x[3], x[0], f.mean, f.rstd, x[1], m, true, true, true)
                .grad_input;
          },
          5 * nbytes);
    }
    // BatchNorm in training: the batch's statistics (x read), then y (x read, y written);
    // backward: the channel sums (dy, x read), then dx (dy, x read, dx written).
    for (const leangrad::Shape& shape : {leangrad::Shape{32, 256, 56, 56}, {4096, 4096}}) {
      const double nbytes = static_cast<double>(leangrad::shape_numel(shape) * 4);
      const Inputs inputs = {leangrad::randn(shape, f32), leangrad::randn({shape[1]}, f32),
                             leangrad::randn({shape[1]}, f32), leangrad::randn(shape, f32)};
      const std::string s = bench::shape_tuple(shape);
      layer_row(
          bench, "batch_norm fwd " + s, inputs,
          [](const Inputs& x) {
            return ops::batch_norm(x[0], x[1], x[2], Tensor(), Tensor(), true, 1e-5).output;
          },
          3 * nbytes, kBatchNormTolerance);
      layer_row(
          bench, "batch_norm fwd+bwd " + s, inputs,
          [](const Inputs& x) {
            const ops::GroupNormOutput f =
                ops::batch_norm(x[0], x[1], x[2], Tensor(), Tensor(), true, 1e-5);
            return ops::batch_norm_backward(x[3], x[0], f.mean, f.rstd, x[1], true, true, true,
                                            true)
                .grad_input;
          },
          8 * nbytes, kBatchNormTolerance);
    }
    layer_row(
        bench, "linear 3136->128 batch 64",
        {leangrad::randn({64, 3136}, f32), leangrad::randn({128, 3136}, f32),
         leangrad::randn({128}, f32)},
        [](const Inputs& x) { return leangrad::linear(x[0], x[1], x[2]); },
        (64.0 * 3136 + 128 * 3136 + 64 * 128) * 4, kLinearTolerance);
  });
}
