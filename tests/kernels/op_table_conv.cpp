// Device op table rows for conv2d (see op_table.h): the forward and both gradients (through the
// kernel entries of kernels/ops.h, with a random upstream gradient as the last input) over the
// odd cases of tests/kernels/test_conv.cpp, in float32; float16/bfloat16 forwards; and the same
// problems through cuDNN (ops::set_conv2d_backend), which the CPU ignores.
#include "kernels/op_table.h"

#include <algorithm>
#include <cmath>

#include <leangrad/kernels/conv_geometry.h>
#include <leangrad/kernels/ops.h>

namespace leangrad::test {
namespace {

struct ConvRow {
  std::string name;
  Shape x, w;
  ops::Conv2dParams p;
  bool bias = true;
  Layout x_layout = Layout::Contiguous;
};

ops::Conv2dParams params(std::int64_t stride, std::int64_t pad, std::int64_t dilation = 1,
                         std::int64_t groups = 1) {
  ops::Conv2dParams p;
  p.stride_h = p.stride_w = stride;
  p.pad_h = p.pad_w = pad;
  p.dilation_h = p.dilation_w = dilation;
  p.groups = groups;
  return p;
}

Shape output_shape(const ConvRow& r) {
  return {r.x[0], r.w[0], conv_output_size(r.x[2], r.w[2], r.p.stride_h, r.p.pad_h, r.p.dilation_h),
          conv_output_size(r.x[3], r.w[3], r.p.stride_w, r.p.pad_w, r.p.dilation_w)};
}

std::vector<ConvRow> rows() {
  return {
      {"basic_3x3", {2, 3, 9, 7}, {4, 3, 3, 3}, params(1, 1)},
      // Several block tiles, each dim partly filled: M = 429, C_out = 70, K = 180.
      {"tiles_partial", {3, 20, 13, 11}, {70, 20, 3, 3}, params(1, 1)},
      {"stride2", {2, 5, 11, 10}, {6, 5, 3, 3}, params(2, 1)},
      {"dilation2", {1, 6, 12, 9}, {5, 6, 3, 3}, params(1, 2, 2)},
      {"groups2", {2, 8, 7, 7}, {6, 4, 3, 3}, params(1, 1, 1, 2)},
      {"depthwise", {2, 12, 9, 8}, {12, 1, 3, 3}, params(1, 1, 1, 12)},
      {"pointwise", {2, 17, 6, 5}, {9, 17, 1, 1}, params(1, 0)},
      {"kernel_7x7_stride2", {1, 3, 20, 17}, {8, 3, 7, 7}, params(2, 3)},
      {"batch1_no_bias", {1, 7, 10, 12}, {5, 7, 3, 3}, params(1, 2), false},
      {"transposed_input", {2, 4, 9, 11}, {3, 4, 3, 3}, params(1, 1), true, Layout::Transposed},
      {"fashion_mnist_conv2", {4, 32, 14, 14}, {64, 32, 3, 3}, params(1, 1)},
  };
}

// The implicit GEMM sums each output's K products one by one in float (kTolF32Gemm). cuDNN may
// choose FFT and Winograd algorithms for float32, as PyTorch's default heuristics do, whose error
// is bounded norm-wise rather than term by term: |error| <= c * eps * log2(K) * |a| * |b| for a
// reduction of K products a_k b_k, and with a and b uniform in [-1, 1], |a| |b| ~= K / 3. The
// fashion_mnist_conv2 weight gradient (K = 784) differs from the CPU's by up to 1.1e-4 on an H100
// (bench/results/2026-11-24-h100-80gb-hbm3.md), within this bound (3.0e-4) and outside 1e-4.
Tolerance conv_tolerance(ops::Conv2dBackend backend, std::int64_t k) {
  if (backend != ops::Conv2dBackend::Cudnn) return kTolF32Gemm;
  const double eps = 0x1p-23;
  const double norm_bound = eps * std::log2(static_cast<double>(k)) * static_cast<double>(k) / 3.0;
  return {kTolF32Gemm.rtol, std::max(kTolF32Gemm.atol, norm_bound)};
}

void add_rows(std::vector<OpCase>& c, const ConvRow& r, ops::Conv2dBackend backend,
              const std::string& suffix) {
  const ops::Conv2dParams p = r.p;
  const bool bias = r.bias;
  const Shape out = output_shape(r);
  // The reduction length of one output of each direction.
  const std::int64_t kernel_area = r.w[2] * r.w[3];
  const std::int64_t k_forward = r.w[1] * kernel_area;
  const std::int64_t k_input_grad = r.w[0] / p.groups * kernel_area;
  const std::int64_t k_weight_grad = out[0] * out[2] * out[3];
  // Inputs: x, w, bias (when used), then grad_out.
  std::vector<InputSpec> specs = {input(r.x, kFloat32, -1.0, 1.0, r.x_layout), input(r.w)};
  if (bias) specs.push_back(input({r.w[0]}));
  specs.push_back(input(out));
  c.push_back({"conv2d_fwd_" + r.name + suffix,
               [p, bias, backend](const Inputs& x) {
                 ops::Conv2dBackendGuard guard(backend);
                 return Outputs{ops::conv2d(x[0], x[1], bias ? x[2] : Tensor(), p)};
               },
               specs, conv_tolerance(backend, k_forward)});
  c.push_back({"conv2d_dgrad_" + r.name + suffix,
               [p, backend](const Inputs& x) {
                 ops::Conv2dBackendGuard guard(backend);
                 return Outputs{ops::conv2d_input_grad(x.back(), x[1], x[0].shape(), p)};
               },
               specs, conv_tolerance(backend, k_input_grad)});
  c.push_back({"conv2d_wgrad_" + r.name + suffix,
               [p, backend](const Inputs& x) {
                 ops::Conv2dBackendGuard guard(backend);
                 return Outputs{ops::conv2d_weight_grad(x.back(), x[0], x[1].shape(), p)};
               },
               specs, conv_tolerance(backend, k_weight_grad)});
}

void add_reduced_precision_rows(std::vector<OpCase>& c, const ConvRow& r, DType dtype,
                                Tolerance tolerance, const std::string& suffix) {
  const ops::Conv2dParams p = r.p;
  c.push_back({"conv2d_fwd_" + r.name + suffix,
               [p](const Inputs& x) { return Outputs{ops::conv2d(x[0], x[1], x[2], p)}; },
               {input(r.x, dtype), input(r.w, dtype), input({r.w[0]}, dtype)},
               tolerance});
}

std::vector<OpCase> make_conv_cases() {
  std::vector<OpCase> c;
  for (const ConvRow& r : rows())
    add_rows(c, r, ops::Conv2dBackend::ImplicitGemm, "_f32");
  for (const ConvRow& r : rows())
    add_rows(c, r, ops::Conv2dBackend::Cudnn, "_f32_cudnn");
  const std::vector<ConvRow> reduced = {
      {"basic_3x3", {2, 3, 9, 7}, {4, 3, 3, 3}, params(1, 1)},
      {"tiles_partial", {3, 20, 13, 11}, {70, 20, 3, 3}, params(1, 1)},
      {"stride2_groups2", {2, 8, 11, 10}, {6, 4, 3, 3}, params(2, 1, 1, 2)},
      {"superres_64", {2, 64, 12, 12}, {64, 64, 3, 3}, params(1, 1)},
  };
  for (const ConvRow& r : reduced) {
    add_reduced_precision_rows(c, r, kBFloat16, kTolBF16, "_bf16");
    add_reduced_precision_rows(c, r, kFloat16, kTolF16, "_f16");
  }
  return c;
}

}  // namespace

std::vector<OpCase> conv_op_cases() {
  return make_conv_cases();
}

}  // namespace leangrad::test
