// gpu_tanhexp_group_norm: the CUDA kernels of TanhExp and GroupNorm (kernels/cuda/tanhexp.cu,
// kernels/cuda/group_norm.cu) timed through their tensor-level entries (kernels/ops.h).
// Each row is first checked against the CPU reference (largest difference printed), then timed
// with cuda::Event over kTimedIters calls after kWarmupIters, rotating through kBuffers input
// sets of 32+ MiB each (so no call finds its inputs in the 50 MB L2 of an H100).
// Columns: time per call (us); GB/s of the bytes the op must move at least (tanhexp fwd: read x,
// write y; bwd: read dy, x, write dx; group_norm fwd: read x twice (statistics, then normalize),
// write y; bwd: read dy, x twice, write dx), and that as a fraction of H100 HBM3's 3.35 TB/s.
// bench/compare/tanhexp_group_norm_torch.py prints the same table for PyTorch. A plain program
// (no Google Benchmark); without a GPU it says so and exits 0.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "core/creation.h"
#include "core/cuda.h"
#include "kernels/ops.h"

namespace {

using leangrad::DType;
using leangrad::Shape;
using leangrad::Tensor;

constexpr int kWarmupIters = 3;
constexpr int kTimedIters = 20;
constexpr int kBuffers = 4;
constexpr double kHbmBytesPerSecond = 3.35e12;  // H100 SXM HBM3

double max_abs_diff(const Tensor& a, const Tensor& b) {
  const Tensor d = leangrad::ops::binary(leangrad::BinaryOp::Sub, a.cpu().to(leangrad::kFloat64),
                                         b.cpu().to(leangrad::kFloat64));
  const Tensor m = leangrad::ops::reduce(
      leangrad::ReduceOp::Max, leangrad::ops::unary(leangrad::UnaryOp::Abs, d), {}, false);
  return m.item<double>();
}

// Times fn(i % kBuffers) and prints one row.
void time_row(const std::string& name, double bytes, double check,
              const std::function<void(int)>& fn) {
  for (int i = 0; i < kWarmupIters; ++i)
    fn(i % kBuffers);
  leangrad::cuda::synchronize();
  leangrad::cuda::Event start;
  leangrad::cuda::Event end;
  start.record();
  for (int i = 0; i < kTimedIters; ++i)
    fn(i % kBuffers);
  end.record();
  end.synchronize();
  const double us = start.elapsed_ms(end) * 1e3 / kTimedIters;
  const double gbps = bytes / (us * 1e-6) / 1e9;
  std::printf("%-44s %10.1f %10.1f %9.3f %12.2e\n", name.c_str(), us, gbps,
              gbps * 1e9 / kHbmBytesPerSecond, check);
}

std::vector<Tensor> randn_buffers(const Shape& shape, DType dtype) {
  std::vector<Tensor> out;
  for (int i = 0; i < kBuffers; ++i)
    out.push_back(leangrad::randn(shape, leangrad::TensorOptions(dtype).device(leangrad::kCUDA)));
  return out;
}

void tanhexp_rows(std::int64_t n, DType dtype) {
  const std::vector<Tensor> x = randn_buffers({n}, dtype);
  const std::vector<Tensor> dy = randn_buffers({n}, dtype);
  std::vector<Tensor> keep(kBuffers);
  const double bytes_per_element = static_cast<double>(leangrad::element_size(dtype));
  const std::string tag = std::string(leangrad::dtype_name(dtype)) + " n=" + std::to_string(n);
  const double fwd_check =
      max_abs_diff(leangrad::ops::tanhexp(x[0]), leangrad::ops::tanhexp(x[0].cpu()));
  time_row("tanhexp fwd " + tag, 2 * n * bytes_per_element, fwd_check,
           [&](int i) { keep[i] = leangrad::ops::tanhexp(x[i]); });
  const double bwd_check = max_abs_diff(leangrad::ops::tanhexp_backward(dy[0], x[0]),
                                        leangrad::ops::tanhexp_backward(dy[0].cpu(), x[0].cpu()));
  time_row("tanhexp bwd " + tag, 3 * n * bytes_per_element, bwd_check,
           [&](int i) { keep[i] = leangrad::ops::tanhexp_backward(dy[i], x[i]); });
}

void group_norm_rows(const Shape& shape, std::int64_t groups, DType dtype) {
  const std::vector<Tensor> x = randn_buffers(shape, dtype);
  const std::vector<Tensor> dy = randn_buffers(shape, dtype);
  const auto options = leangrad::TensorOptions(dtype).device(leangrad::kCUDA);
  const Tensor w = leangrad::rand({shape[1]}, options);
  const Tensor b = leangrad::randn({shape[1]}, options);
  std::int64_t numel = 1;
  for (std::int64_t s : shape)
    numel *= s;
  const double elem = static_cast<double>(leangrad::element_size(dtype));
  std::string tag = std::string(leangrad::dtype_name(dtype)) + " (";
  for (std::size_t d = 0; d < shape.size(); ++d)
    tag += std::to_string(shape[d]) + (d + 1 < shape.size() ? "," : ")");
  tag += " G=" + std::to_string(groups);

  std::vector<leangrad::ops::GroupNormOutput> fwd(kBuffers);
  for (int i = 0; i < kBuffers; ++i)
    fwd[i] = leangrad::ops::group_norm(x[i], groups, w, b, 1e-5);
  const leangrad::ops::GroupNormOutput ref =
      leangrad::ops::group_norm(x[0].cpu(), groups, w.cpu(), b.cpu(), 1e-5);
  time_row("group_norm fwd " + tag, 3 * numel * elem, max_abs_diff(fwd[0].output, ref.output),
           [&](int i) { fwd[i] = leangrad::ops::group_norm(x[i], groups, w, b, 1e-5); });

  std::vector<leangrad::ops::GroupNormGrads> bwd(kBuffers);
  auto backward = [&](int i) {
    bwd[i] = leangrad::ops::group_norm_backward(dy[i], x[i], fwd[i].mean, fwd[i].rstd, w, groups,
                                                true, true, true);
  };
  backward(0);
  const leangrad::ops::GroupNormGrads bref = leangrad::ops::group_norm_backward(
      dy[0].cpu(), x[0].cpu(), ref.mean, ref.rstd, w.cpu(), groups, true, true, true);
  const double check = std::max(
      {max_abs_diff(bwd[0].grad_input, bref.grad_input),
       max_abs_diff(bwd[0].grad_weight, bref.grad_weight) / static_cast<double>(numel / shape[1])});
  time_row("group_norm bwd " + tag, 5 * numel * elem, check, backward);
}

}  // namespace

int main() {
  if (!leangrad::cuda::is_available()) {
    std::printf("no CUDA device: skipped\n");
    return 0;
  }
  std::printf("%-44s %10s %10s %9s %12s\n", "kernel", "us", "GB/s", "of HBM", "max |diff|");
  tanhexp_rows(std::int64_t{1} << 24, leangrad::kFloat32);
  tanhexp_rows(std::int64_t{1} << 24, leangrad::kBFloat16);
  const std::vector<std::pair<Shape, std::int64_t>> shapes = {
      {{16, 128, 64, 64}, 32},  // a UNet block: 512 groups of 16K
      {{2, 64, 256, 256}, 4},   // few big groups (8 of 1M): the split-across-blocks path
      {{256, 512, 8, 8}, 32},   // many small groups (8192 of 1K)
  };
  for (const auto& [shape, groups] : shapes)
    group_norm_rows(shape, groups, leangrad::kFloat32);
  group_norm_rows({16, 128, 64, 64}, 32, leangrad::kBFloat16);
  return 0;
}
