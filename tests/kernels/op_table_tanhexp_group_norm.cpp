// Device op table rows for TanhExp, the one-pass activations (gelu, its tanh form, silu, mish,
// softplus, elu, selu, leaky_relu, hardtanh, clamp, hardswish, hardsigmoid, log_sigmoid,
// softsign, tanhshrink, celu, softshrink, hardshrink, threshold, and relu's backward:
// ops::activation and ops::activation_backward through the public functions) and GroupNorm (see
// op_table.h): forward in every floating dtype, backward through autograd (inputs are created
// without requires_grad, so each row clones them into leaves), and GroupNorm shapes that reach
// every CUDA path: vector and scalar loads (HxW a multiple of the vector width or not), C not a
// multiple of anything, (N, C) input, and groups long enough to be split across several blocks
// (kernels/cuda/group_norm.cu, Note [GroupNorm strategies]).
#include "kernels/op_table.h"

#include <utility>

#include <leangrad/autograd/activations.h>
#include <leangrad/autograd/functions.h>
#include <leangrad/autograd/nn_functions.h>

namespace leangrad::test {
namespace {

constexpr Layout kTransposed = Layout::Transposed;
constexpr Layout kOffset = Layout::Offset;

// A leaf copy of an input, so a row can ask for its gradient.
Tensor leaf(const Tensor& t) {
  return t.clone().requires_grad_();
}

// tanhexp(x) -> y.  Inputs: x.
Outputs tanhexp_forward(const Inputs& in) {
  return {tanhexp(in[0])};
}

// tanhexp(x).backward(dy) -> dx.  Inputs: x, dy.
Outputs tanhexp_grad(const Inputs& in) {
  Tensor x = leaf(in[0]);
  tanhexp(x).backward(in[1]);
  return {x.grad()};
}

// group_norm(x, groups, w, b).backward(dy) -> y, dx, dw, db.  Inputs: x, w, b, dy.
Outputs group_norm_grads(const Inputs& in, std::int64_t groups) {
  Tensor x = leaf(in[0]);
  Tensor w = leaf(in[1]);
  Tensor b = leaf(in[2]);
  Tensor y = group_norm(x, groups, w, b);
  y.backward(in[3]);
  return {y.detach(), x.grad(), w.grad(), b.grad()};
}

void add_group_norm_rows(std::vector<OpCase>& c, const std::string& name, const Shape& shape,
                         std::int64_t groups, DType dtype, Tolerance tol,
                         Layout layout = Layout::Contiguous) {
  const Shape channels = {shape[1]};
  c.push_back({"group_norm_" + name,
               [groups](const Inputs& x) { return Outputs{group_norm(x[0], groups, x[1], x[2])}; },
               {input(shape, dtype, -2.0, 3.0, layout), input(channels, dtype, 0.5, 1.5),
                input(channels, dtype)},
               tol});
  c.push_back({"group_norm_backward_" + name,
               [groups](const Inputs& x) { return group_norm_grads(x, groups); },
               {input(shape, dtype, -2.0, 3.0, layout), input(channels, dtype, 0.5, 1.5),
                input(channels, dtype), input(shape, dtype)},
               tol});
}

// ---- TanhExp --------------------------------------------------------------------------------
std::vector<OpCase> tanhexp_cases() {
  const Shape kOdd = {33, 65};  // not a multiple of any vector width
  std::vector<OpCase> c;
  // Forward and backward in every floating dtype.
  for (DType dtype : kFloatingDTypes) {
    const std::string suffix = dtype_suffix(dtype);
    const Tolerance tolerance = elementwise_tolerance(dtype);
    c.push_back({"tanhexp_" + suffix, tanhexp_forward, {input(kOdd, dtype, -6.0, 6.0)}, tolerance});
    c.push_back({"tanhexp_backward_" + suffix,
                 tanhexp_grad,
                 {input(kOdd, dtype, -6.0, 6.0), input(kOdd, dtype)},
                 tolerance});
  }
  // Range [-100, 100] reaches both the saturated (x > 20) and the vanishing (x << 0) regime.
  c.push_back({"tanhexp_wide_range_f32",
               tanhexp_forward,
               {input({4096}, kFloat32, -100.0, 100.0)},
               kTolF32});
  c.push_back({"tanhexp_backward_wide_range_f32",
               tanhexp_grad,
               {input({4096}, kFloat32, -100.0, 100.0), input({4096}, kFloat32)},
               kTolF32});
  c.push_back({"tanhexp_offset_f32",
               tanhexp_forward,
               {input({1001}, kFloat32, -6.0, 6.0, kOffset)},
               kTolF32});
  c.push_back({"tanhexp_transposed_f16",
               tanhexp_forward,
               {input(kOdd, kFloat16, -6.0, 6.0, kTransposed)},
               kTolF16});
  return c;
}

// ---- gelu, silu, mish, softplus, elu, selu, leaky_relu, hardtanh, clamp, elu_, selu_, and -----
// ---- hardswish, hardsigmoid, log_sigmoid, softsign, tanhshrink, celu, the shrinks, threshold --
using ActivationFn = Tensor (*)(const Tensor&);

Tensor gelu_exact(const Tensor& x) {
  return gelu(x);
}
Tensor gelu_tanh(const Tensor& x) {
  return gelu(x, "tanh");
}
Tensor silu_of(const Tensor& x) {
  return silu(x);
}
Tensor mish_of(const Tensor& x) {
  return mish(x);
}
Tensor softplus_of(const Tensor& x) {  // the threshold inside the range
  return softplus(x, 2.0, 3.0);
}
Tensor elu_of(const Tensor& x) {
  return elu(x, 0.7);
}
Tensor selu_of(const Tensor& x) {
  return selu(x);
}
Tensor leaky_relu_of(const Tensor& x) {
  return leaky_relu(x, 0.2);
}
Tensor hardtanh_of(const Tensor& x) {
  return hardtanh(x, -0.5, 0.7);
}
Tensor clamp_of(const Tensor& x) {
  return clamp(x, -0.5, 0.7);
}
Tensor clamp_max_of(const Tensor& x) {  // one bound: the other NaN in the kernel
  return clamp_max(x, 0.7);
}
Tensor relu_of(const Tensor& x) {  // its backward: hardtanh's gradient at the output
  return relu(x);
}
Tensor elu_from_output_of(const Tensor& x) {  // in place: the gradient from the output
  Tensor y = x * 1.0;
  elu_(y, 0.7);
  return y;
}
Tensor selu_from_output_of(const Tensor& x) {
  Tensor y = x * 1.0;
  selu_(y);
  return y;
}
Tensor hardswish_of(const Tensor& x) {
  return hardswish(x);
}
Tensor hardsigmoid_of(const Tensor& x) {
  return hardsigmoid(x);
}
Tensor log_sigmoid_of(const Tensor& x) {
  return log_sigmoid(x);
}
Tensor softsign_of(const Tensor& x) {
  return softsign(x);
}
Tensor tanhshrink_of(const Tensor& x) {
  return tanhshrink(x);
}
Tensor celu_of(const Tensor& x) {
  return celu(x, 0.6);
}
Tensor softshrink_of(const Tensor& x) {
  return softshrink(x, 0.5);
}
Tensor hardshrink_of(const Tensor& x) {
  return hardshrink(x, 0.5);
}
Tensor threshold_of(const Tensor& x) {
  return threshold(x, 0.25, -2.0);
}

std::vector<OpCase> fused_activation_cases() {
  const Shape kOdd = {33, 65};
  const std::pair<const char*, ActivationFn> functions[] = {
      {"gelu", gelu_exact},
      {"gelu_tanh", gelu_tanh},
      {"silu", silu_of},
      {"mish", mish_of},
      {"softplus", softplus_of},
      {"elu", elu_of},
      {"selu", selu_of},
      {"leaky_relu", leaky_relu_of},
      {"hardtanh", hardtanh_of},
      {"clamp", clamp_of},
      {"clamp_max", clamp_max_of},
      {"relu_one_pass", relu_of},
      {"elu_from_output", elu_from_output_of},
      {"selu_from_output", selu_from_output_of},
      {"hardswish", hardswish_of},
      {"hardsigmoid", hardsigmoid_of},
      {"log_sigmoid", log_sigmoid_of},
      {"softsign", softsign_of},
      {"tanhshrink", tanhshrink_of},
      {"celu", celu_of},
      {"softshrink", softshrink_of},
      {"hardshrink", hardshrink_of},
      {"threshold", threshold_of}};
  std::vector<OpCase> c;
  for (const auto& [name, f] : functions) {
    const auto forward = [f = f](const Inputs& in) { return Outputs{f(in[0])}; };
    const auto grad = [f = f](const Inputs& in) {  // f(x).backward(dy) -> dx.  Inputs: x, dy.
      Tensor x = leaf(in[0]);
      f(x).backward(in[1]);
      return Outputs{x.grad()};
    };
    const std::string base = name;
    for (DType dtype : kFloatingDTypes) {
      const std::string suffix = dtype_suffix(dtype);
      const Tolerance tolerance = elementwise_tolerance(dtype);
      c.push_back({base + "_" + suffix, forward, {input(kOdd, dtype, -6.0, 6.0)}, tolerance});
      c.push_back({base + "_backward_" + suffix,
                   grad,
                   {input(kOdd, dtype, -6.0, 6.0), input(kOdd, dtype)},
                   tolerance});
    }
    // Far out: erf, tanh and sigmoid saturate, e^x overflows inside mish and softplus.
    c.push_back(
        {base + "_wide_range_f32", forward, {input({4096}, kFloat32, -100.0, 100.0)}, kTolF32});
    c.push_back({base + "_backward_wide_range_f32",
                 grad,
                 {input({4096}, kFloat32, -100.0, 100.0), input({4096}, kFloat32)},
                 kTolF32});
    c.push_back({base + "_transposed_f16",
                 grad,
                 {input(kOdd, kFloat16, -6.0, 6.0, kTransposed), input(kOdd, kFloat16)},
                 kTolF16});
  }
  return c;
}

}  // namespace

std::vector<OpCase> tanhexp_group_norm_op_cases() {
  std::vector<OpCase> c = tanhexp_cases();
  for (OpCase& row : fused_activation_cases())
    c.push_back(std::move(row));

  // ---- GroupNorm ------------------------------------------------------------------------------
  // Sums over whole groups differ in order between devices: the reduction tolerance.
  add_group_norm_rows(c, "f32", {2, 6, 8, 8}, 3, kFloat32, kTolF32Sum);       // vector loads
  add_group_norm_rows(c, "odd_f32", {3, 10, 7, 7}, 5, kFloat32, kTolF32Sum);  // scalar loads
  add_group_norm_rows(c, "nc_f32", {5, 12}, 4, kFloat32, kTolF32Sum);         // no spatial dims
  add_group_norm_rows(c, "1d_f64", {2, 6, 17}, 2, kFloat64, kTolF64);
  add_group_norm_rows(c, "f16", {2, 4, 8, 8}, 2, kFloat16, kTolF16);
  add_group_norm_rows(c, "bf16", {2, 4, 8, 8}, 2, kBFloat16, kTolBF16);
  add_group_norm_rows(c, "transposed_f32", {2, 4, 6, 5}, 2, kFloat32, kTolF32Sum, kTransposed);
  // Few long rows: groups of 27648 elements (forward, 6 segments per group) and channels of
  // 9216 (backward, 2 segments per channel) go through the split-across-blocks path.
  add_group_norm_rows(c, "split_one_group_f32", {1, 3, 96, 96}, 1, kFloat32, kTolF32Sum);
  add_group_norm_rows(c, "split_f16", {2, 3, 96, 96}, 3, kFloat16, kTolF16);
  // 256 groups of 64 values: more groups than an H100 has SMs, so the one-pass (shared memory)
  // kernels, forward and backward.
  add_group_norm_rows(c, "one_pass_f32", {64, 16, 4, 4}, 4, kFloat32, kTolF32Sum);
  return c;
}

}  // namespace leangrad::test
