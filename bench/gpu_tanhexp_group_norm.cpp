// gpu_tanhexp_group_norm: the CUDA kernels of TanhExp and GroupNorm (kernels/cuda/tanhexp.cu,
// kernels/cuda/group_norm.cu) timed through their tensor-level entries (kernels/ops.h), with the
// GPU bench harness (bench/gpu_harness.h: each row checked against the CPU first, then timed
// with CUDA events after an L2 flush). Work per call is the bytes the op must move at least:
// tanhexp fwd reads x and writes y; bwd reads dy and x and writes dx; group_norm fwd reads x
// twice (statistics, then normalize) and writes y; bwd reads dy and x twice and writes dx.
// bench/compare/tanhexp_group_norm_torch.py prints the same rows for PyTorch.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "bench/gpu_harness.h"
#include <leangrad/kernels/creation.h>
#include <leangrad/core/cuda.h>
#include <leangrad/kernels/ops.h>

namespace {

using leangrad::DType;
using leangrad::Shape;
using leangrad::Tensor;
namespace bench = leangrad::bench;
namespace ops = leangrad::ops;

// Tolerances on max |diff| / max |ref|: float32 computes the same math in the same order as the
// CPU (a few ulps from the device's exp); 16-bit outputs may round one unit apart (2^-8).
double tolerance(DType dtype) {
  return dtype == leangrad::kFloat32 ? 1e-5 : 1e-2;
}

leangrad::TensorOptions on_cuda(DType dtype) {
  return leangrad::TensorOptions(dtype).device(leangrad::kCUDA);
}

void tanhexp_rows(bench::GpuBench& bench, std::int64_t n, DType dtype) {
  const Tensor x = leangrad::randn({n}, on_cuda(dtype));
  const Tensor dy = leangrad::randn({n}, on_cuda(dtype));
  const double element_bytes = static_cast<double>(leangrad::element_size(dtype));
  const std::string tag = std::string(leangrad::dtype_name(dtype)) + " n=" + std::to_string(n);
  bench.run("tanhexp fwd " + tag, bench::Work::bytes(2.0 * n * element_bytes),
            bench::check_close(ops::tanhexp(x), ops::tanhexp(x.cpu()), tolerance(dtype)),
            [&] { ops::tanhexp(x); });
  bench.run("tanhexp bwd " + tag, bench::Work::bytes(3.0 * n * element_bytes),
            bench::check_close(ops::tanhexp_backward(dy, x),
                               ops::tanhexp_backward(dy.cpu(), x.cpu()), tolerance(dtype)),
            [&] { ops::tanhexp_backward(dy, x); });
}

void group_norm_rows(bench::GpuBench& bench, const Shape& shape, std::int64_t groups, DType dtype) {
  const Tensor x = leangrad::randn(shape, on_cuda(dtype));
  const Tensor dy = leangrad::randn(shape, on_cuda(dtype));
  const Tensor w = leangrad::rand({shape[1]}, on_cuda(dtype));
  const Tensor b = leangrad::randn({shape[1]}, on_cuda(dtype));
  const double bytes = static_cast<double>(x.nbytes());
  const std::string tag = std::string(leangrad::dtype_name(dtype)) + " " +
                          bench::shape_tuple(shape) + " G=" + std::to_string(groups);

  const ops::GroupNormOutput fwd = ops::group_norm(x, groups, w, b, 1e-5);
  const ops::GroupNormOutput ref = ops::group_norm(x.cpu(), groups, w.cpu(), b.cpu(), 1e-5);
  bench.run("group_norm fwd " + tag, bench::Work::bytes(3 * bytes),
            bench::check_close(fwd.output, ref.output, tolerance(dtype)),
            [&] { ops::group_norm(x, groups, w, b, 1e-5); });

  auto backward = [&] {
    return ops::group_norm_backward(dy, x, fwd.mean, fwd.rstd, w, groups, true, true, true);
  };
  const ops::GroupNormGrads grads = backward();
  const ops::GroupNormGrads grads_ref = ops::group_norm_backward(
      dy.cpu(), x.cpu(), ref.mean, ref.rstd, w.cpu(), groups, true, true, true);
  bench.run("group_norm bwd " + tag, bench::Work::bytes(5 * bytes),
            bench::check_close({grads.grad_input, grads.grad_weight, grads.grad_bias},
                               {grads_ref.grad_input, grads_ref.grad_weight, grads_ref.grad_bias},
                               tolerance(dtype)),
            [&] { backward(); });
}

}  // namespace

int main(int argc, char** argv) {
  return bench::gpu_main(argc, argv, "gpu_tanhexp_group_norm", [](bench::GpuBench& bench) {
    tanhexp_rows(bench, std::int64_t{1} << 24, leangrad::kFloat32);
    tanhexp_rows(bench, std::int64_t{1} << 24, leangrad::kBFloat16);
    const std::vector<std::pair<Shape, std::int64_t>> shapes = {
        {{16, 128, 64, 64}, 32},  // a UNet block: 512 groups of 16K
        {{2, 64, 256, 256}, 4},   // few big groups (8 of 1M): the split-across-blocks path
        {{256, 512, 8, 8}, 32},   // many small groups (8192 of 1K)
    };
    for (const auto& [shape, groups] : shapes)
      group_norm_rows(bench, shape, groups, leangrad::kFloat32);
    group_norm_rows(bench, {16, 128, 64, 64}, 32, leangrad::kBFloat16);
  });
}
