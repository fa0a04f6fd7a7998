// gpu_conv: our implicit-GEMM conv2d kernels (kernels/cuda/conv.cu) against cuDNN on one GPU, for
// the forward, input gradient (dgrad) and weight gradient (wgrad), in float32, TF32 and
// bfloat16. Shapes: the super-resolution 3 x 3 64 -> 64 convolutions on (16, 64, 96, 96) and
// (16, 64, 192, 192), and the Fashion-MNIST CNN's (batch 64: 1 -> 32 on 28 x 28, 32 -> 64 on
// 14 x 14), all pad 1. Each variant is first compared with cuDNN's result (max |diff| / max |ref|
// printed), then timed with cuda::Event over 20 runs after 3 warm-up runs. Columns: ms per run,
// TFLOP/s (2 N C_out H W C_in 9 per operation), the fraction of the H100's dense limit (bf16
// 989 TFLOP/s, TF32 495, f32 67) and ours / cuDNN throughput. bench/compare/conv_torch.py prints
// the same table for PyTorch. A plain program; without a GPU it says so and exits 0.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <vector>

#include "autograd/functions.h"
#include "core/cuda.h"
#include "kernels/creation.h"
#include "kernels/ops.h"

namespace {

using leangrad::DType;
using leangrad::Tensor;
namespace ops = leangrad::ops;
namespace cuda = leangrad::cuda;

constexpr int kWarmupRuns = 3;
constexpr int kTimedRuns = 20;

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
  double h100_limit_tflops;
};
constexpr Precision kPrecisions[] = {
    {"f32", leangrad::kFloat32, false, 67.0},
    {"tf32", leangrad::kFloat32, true, 495.0},
    {"bf16", leangrad::kBFloat16, false, 989.0},
};

ops::Conv2dParams pad1() {
  ops::Conv2dParams p;
  p.pad_h = p.pad_w = 1;
  return p;
}

float time_ms(const std::function<Tensor()>& fn) {
  for (int i = 0; i < kWarmupRuns; ++i)
    fn();
  cuda::Event start, stop;
  start.record();
  for (int i = 0; i < kTimedRuns; ++i)
    fn();
  stop.record();
  stop.synchronize();
  return start.elapsed_ms(stop) / kTimedRuns;
}

// max |a - b| / max |b|, on the CPU in float32.
double relative_difference(const Tensor& a, const Tensor& b) {
  const Tensor fa = a.to(leangrad::kFloat32).cpu().contiguous();
  const Tensor fb = b.to(leangrad::kFloat32).cpu().contiguous();
  const auto* pa = static_cast<const float*>(fa.data_ptr());
  const auto* pb = static_cast<const float*>(fb.data_ptr());
  double diff = 0, scale = 1e-30;
  for (std::int64_t i = 0; i < fa.numel(); ++i) {
    diff = std::max(diff, static_cast<double>(std::fabs(pa[i] - pb[i])));
    scale = std::max(scale, static_cast<double>(std::fabs(pb[i])));
  }
  return diff / scale;
}

}  // namespace

int main() {
  if (!cuda::is_available()) {
    std::printf("gpu_conv: no CUDA device: skipped\n");
    return 0;
  }
  const ops::Conv2dBackend initial_backend = ops::conv2d_backend();
  std::printf("%-13s %-5s %-6s %-7s %9s %9s %8s %11s %10s\n", "shape", "prec", "op", "impl", "ms",
              "TFLOP/s", "of_H100", "ours/cudnn", "rel_diff");
  for (const ConvShape& s : kShapes) {
    for (const Precision& prec : kPrecisions) {
      cuda::set_allow_tf32(prec.tf32);
      const auto options = leangrad::TensorOptions(prec.dtype).device(leangrad::Device::cuda());
      const Tensor x = leangrad::randn({s.n, s.c_in, s.h, s.w}, options);
      const Tensor w = leangrad::randn({s.c_out, s.c_in, 3, 3}, options) * 0.1;
      const Tensor dy = leangrad::randn({s.n, s.c_out, s.h, s.w}, options);
      const double flops = 2.0 * s.n * s.c_out * s.h * s.w * s.c_in * 9;
      const char* op_names[] = {"fwd", "dgrad", "wgrad"};
      const std::function<Tensor()> ops_fn[] = {
          [&] { return ops::conv2d(x, w, Tensor(), pad1()); },
          [&] { return ops::conv2d_input_grad(dy, w, x.shape(), pad1()); },
          [&] { return ops::conv2d_weight_grad(dy, x, w.shape(), pad1()); },
      };
      for (int op = 0; op < 3; ++op) {
        ops::set_conv2d_backend(ops::Conv2dBackend::Cudnn);
        const Tensor reference = ops_fn[op]();
        const float cudnn_ms = time_ms(ops_fn[op]);
        ops::set_conv2d_backend(ops::Conv2dBackend::ImplicitGemm);
        const double diff = relative_difference(ops_fn[op](), reference);
        const float ours_ms = time_ms(ops_fn[op]);
        for (int impl = 0; impl < 2; ++impl) {
          const float ms = impl == 0 ? ours_ms : cudnn_ms;
          const double tflops = flops / (ms * 1e-3) * 1e-12;
          std::printf("%-13s %-5s %-6s %-7s %9.3f %9.1f %7.1f%% %11.2f %10.1e\n", s.name, prec.name,
                      op_names[op], impl == 0 ? "ours" : "cudnn", ms, tflops,
                      100.0 * tflops / prec.h100_limit_tflops, cudnn_ms / ms,
                      impl == 0 ? diff : 0.0);
        }
      }
    }
  }
  ops::set_conv2d_backend(initial_backend);
  cuda::set_allow_tf32(false);
  return 0;
}
