// gpu_conv: our implicit-GEMM conv2d kernels (kernels/cuda/conv.cu) against cuDNN on one GPU, for
// the forward, input gradient (dgrad) and weight gradient (wgrad), in float32, TF32 and
// bfloat16. Shapes: the super-resolution 3 x 3 64 -> 64 convolutions on (16, 64, 96, 96) and
// (16, 64, 192, 192), and the Fashion-MNIST CNN's (batch 64: 1 -> 32 on 28 x 28, 32 -> 64 on
// 14 x 14), all pad 1. Both implementations are checked against the CPU (float32 im2col + GEMM on
// the same, possibly bfloat16-rounded, inputs), then timed with the GPU bench harness
// (bench/gpu_harness.h). Work: 2 N C_out H W C_in 9 FLOPs per operation, quoted against the
// device's dense rate for the precision; the note gives ours / cuDNN throughput.
// bench/compare/conv_torch.py prints the same rows for PyTorch.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <string>

#include "bench/gpu_harness.h"
#include <leangrad/kernels/creation.h>
#include <leangrad/core/cuda.h>
#include <leangrad/kernels/ops.h>

namespace {

using leangrad::DType;
using leangrad::Tensor;
namespace bench = leangrad::bench;
namespace ops = leangrad::ops;
namespace cuda = leangrad::cuda;

struct ConvShape {
  const char* name;
  std::int64_t n, c_in, h, w, c_out;
};
constexpr ConvShape kShapes[] = {
    {"sr_96", 16, 64, 96, 96, 64},
    {"sr_192", 16, 64, 192, 192, 64},
    {"fmnist_conv1", 64, 1, 28, 28, 32},
    {"fmnist_conv2", 64, 32, 14, 14, 64},
};

struct Precision {
  const char* name;
  DType dtype;
  bool tf32;
  bench::Limit limit;
  double tolerance;  // on max |diff| / max |ref| against the float32 CPU result
};
// TF32 rounds both operands to 10 mantissa bits; bfloat16 rounds the output to 8.
constexpr Precision kPrecisions[] = {
    {"f32", leangrad::kFloat32, false, bench::Limit::F32, 1e-4},
    {"tf32", leangrad::kFloat32, true, bench::Limit::TF32, 5e-3},
    {"bf16", leangrad::kBFloat16, false, bench::Limit::BF16, 1e-2},
};

constexpr const char* kOpNames[] = {"fwd", "dgrad", "wgrad"};

ops::Conv2dParams pad1() {
  ops::Conv2dParams p;
  p.pad_h = p.pad_w = 1;
  return p;
}

// The three operations of one shape on the given operands (any device).
struct ConvOperands {
  Tensor x, w, dy;
  Tensor run(int op) const {
    switch (op) {
      case 0:
        return ops::conv2d(x, w, Tensor(), pad1());
      case 1:
        return ops::conv2d_input_grad(dy, w, x.shape(), pad1());
      default:
        return ops::conv2d_weight_grad(dy, x, w.shape(), pad1());
    }
  }
  ConvOperands cpu_float32() const {
    return {x.cpu().to(leangrad::kFloat32), w.cpu().to(leangrad::kFloat32),
            dy.cpu().to(leangrad::kFloat32)};
  }
};

// cuDNN may choose FFT and Winograd algorithms in float32 (as PyTorch's default heuristics do),
// whose error is bounded norm-wise: |error| <= eps log2(K) |a| |b| for K products a_k b_k. With
// unit normal operands |a| |b| ~= K while the largest output is a few sqrt(K): relative to it,
// eps log2(K) sqrt(K). (sr_192's wgrad, K = 589824, is off by 1.2e-4 on an H100; see
// tests/kernels/op_table_conv.cpp for the same bound in the tests.)
double cudnn_tolerance(const Precision& prec, const ConvShape& s, int op) {
  if (prec.dtype != leangrad::kFloat32 || prec.tf32) return prec.tolerance;
  const double k = op == 0 ? s.c_in * 9.0 : op == 1 ? s.c_out * 9.0 : double(s.n) * s.h * s.w;
  return std::max(prec.tolerance, 0x1p-23 * std::log2(k) * std::sqrt(k));
}

void shape_rows(bench::GpuBench& bench, const ConvShape& s) {
  const double flops = 2.0 * s.n * s.c_out * s.h * s.w * s.c_in * 9;
  for (const Precision& prec : kPrecisions) {
    cuda::set_allow_tf32(prec.tf32);
    const auto options = leangrad::TensorOptions(prec.dtype).device(leangrad::Device::cuda());
    const ConvOperands gpu{leangrad::randn({s.n, s.c_in, s.h, s.w}, options),
                           leangrad::randn({s.c_out, s.c_in, 3, 3}, options) * 0.1,
                           leangrad::randn({s.n, s.c_out, s.h, s.w}, options)};
    const ConvOperands cpu = gpu.cpu_float32();
    for (int op = 0; op < 3; ++op) {
      const Tensor reference = cpu.run(op);
      const std::string name = std::string(s.name) + " " + prec.name + " " + kOpNames[op];
      const bench::Work work = bench::Work::flops(flops, prec.limit);
      auto measure = [&](ops::Conv2dBackend backend, const char* impl) {
        const ops::Conv2dBackendGuard guard(backend);
        const double tolerance =
            backend == ops::Conv2dBackend::Cudnn ? cudnn_tolerance(prec, s, op) : prec.tolerance;
        return bench.measure(name + " " + impl, work,
                             bench::check_close(gpu.run(op), reference, tolerance),
                             [&] { gpu.run(op); });
      };
      bench::Row ours = measure(ops::Conv2dBackend::ImplicitGemm, "ours");
      const bench::Row cudnn = measure(ops::Conv2dBackend::Cudnn, "cudnn");
      if (ours.timing.runs > 0 && cudnn.timing.runs > 0) {
        ours.note =
            bench::format("ours/cudnn %.2f", cudnn.timing.median_us / ours.timing.median_us);
      }
      bench.add_row(ours);
      bench.add_row(cudnn);
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  return bench::gpu_main(argc, argv, "gpu_conv", [](bench::GpuBench& bench) {
    bench.note("3x3 pad-1 conv2d; ours = implicit GEMM (kernels/cuda/conv.cu), cudnn = cuDNN");
    for (const ConvShape& s : kShapes)
      shape_rows(bench, s);
    cuda::set_allow_tf32(false);
  });
}
