// Device op table rows for pooling, pixel shuffle, dropout, softmax, losses and linear (see
// op_table.h). Each differentiable row returns the output and the input gradients for a fixed
// upstream gradient (computed in the row from the output's shape), so forward and backward
// kernels are both compared. Dropout rows re-seed inside the row: CPU and CUDA must then draw the
// same mask. Class targets are int64 inputs in [0, C) (integer specs truncate toward zero).
#include "kernels/op_table.h"

#include <cmath>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include <leangrad/autograd/functions.h>
#include <leangrad/autograd/losses.h>
#include <leangrad/autograd/nn_functions.h>
#include <leangrad/core/generator.h>
#include <leangrad/kernels/creation.h>

namespace leangrad::test {

Outputs with_grads(const Inputs& x, const std::function<Tensor(const Inputs&)>& fn) {
  Inputs leaves;
  for (const Tensor& t : x) {
    Tensor leaf = t;
    if (is_floating(t.dtype())) leaf = t.detach().requires_grad_();
    leaves.push_back(leaf);
  }
  const Tensor y = fn(leaves);
  // Computed on the CPU and copied, so both devices see the same bits. Magnitudes in [0.5, 1.5)
  // from the golden-ratio sequence, signs in a pattern of period 3: never 0 (a scalar loss's
  // gradient is this one value) and never constant over a row (softmax's and the norms' input
  // gradients vanish under a constant upstream gradient).
  std::vector<double> values(static_cast<std::size_t>(y.numel()));
  for (std::size_t i = 0; i < values.size(); ++i) {
    const double golden = 0.6180339887498949 * static_cast<double>(i + 1);
    values[i] = (0.5 + (golden - std::floor(golden))) * (i % 3 == 1 ? -1.0 : 1.0);
  }
  const Tensor g = make_tensor(values, y.shape(), y.dtype()).to(y.device());
  y.backward(g);
  Outputs out{y.detach()};
  for (const Tensor& leaf : leaves) {
    if (is_floating(leaf.dtype())) out.push_back(leaf.grad());
  }
  return out;
}

// The row function that returns with_grads(x, fn): the output and the input gradients.
std::function<Outputs(const Inputs&)> grads_of(std::function<Tensor(const Inputs&)> fn) {
  return [fn](const Inputs& x) { return with_grads(x, fn); };
}

namespace {

constexpr Layout kT = Layout::Transposed;

// ---- Linear (matmul path), pixel shuffle, pooling -------------------------------------------
std::vector<OpCase> linear_shuffle_pool_cases() {
  return {
      {"linear_f32",
       grads_of([](const Inputs& v) { return linear(v[0], v[1], v[2]); }),
       {input({3, 17, 40}), input({24, 40}), input({24})},
       kTolF32Gemm},
      {"pixel_shuffle_f32",
       grads_of([](const Inputs& v) { return pixel_shuffle(v[0], 3); }),
       {input({2, 18, 5, 7})},
       kTolExact},
      {"pixel_unshuffle_bf16",
       [](const Inputs& x) { return Outputs{pixel_unshuffle(x[0], 2)}; },
       {input({2, 3, 6, 10}, kBFloat16)},
       kTolExact},
      {"max_pool2d_k2_f32",
       grads_of([](const Inputs& v) {
         return max_pool2d(v[0], {2, 2});
       }),
       {input({4, 5, 29, 31})},
       kTolExact},
      {"max_pool2d_k3s1p1_f32",
       grads_of([](const Inputs& v) {
         return max_pool2d(v[0], {3, 3}, {1, 1}, {1, 1});
       }),
       {input({2, 3, 13, 11}, kFloat32, -1, 1, kT)},
       kTolF32},
      {"max_pool2d_bf16",
       [](const Inputs& x) {
         return Outputs{max_pool2d(x[0], {3, 2}, {2, 1}, {1, 1})};
       },
       {input({2, 3, 13, 11}, kBFloat16)},
       kTolExact},
      {"avg_pool2d_k3s2p1_f32",
       grads_of([](const Inputs& v) {
         return avg_pool2d(v[0], {3, 3}, {2, 2}, {1, 1});
       }),
       {input({3, 4, 17, 15})},
       kTolF32},
      {"avg_pool2d_bf16",
       [](const Inputs& x) {
         return Outputs{avg_pool2d(x[0], {2, 2})};
       },
       {input({3, 4, 16, 14}, kBFloat16)},
       kTolBF16},
      // The pooling options (Note [Pooling windows]): the CPU and CUDA share the per-window
      // math, and max pooling's sums run in the same order on both, so max rows are exact.
      {"max_pool2d_dilation_ceil_f32",
       grads_of([](const Inputs& v) {
         return max_pool2d(v[0], {3, 2}, {2, 1}, {1, 1}, {2, 2}, /*ceil_mode=*/true);
       }),
       {input({2, 3, 17, 13}, kFloat32, -1, 1, kT)},
       kTolExact},
      {"max_pool2d_dilation_non_overlapping_f64",
       grads_of([](const Inputs& v) {
         return max_pool2d(v[0], {2, 2}, {3, 4}, {0, 0}, {2, 3}, /*ceil_mode=*/true);
       }),
       {input({2, 3, 14, 19}, kFloat64)},
       kTolExact},
      {"max_pool2d_with_indices_ceil_bf16",
       [](const Inputs& x) {
         auto [y, indices] = max_pool2d_with_indices(x[0], {3, 3}, {2, 2}, {1, 1}, {1, 1}, true);
         return Outputs{y, indices};
       },
       {input({2, 3, 12, 10}, kBFloat16)},
       kTolExact},
      // Windows holding no input (dilation 3 over a height of 2): -inf, index -1, no gradient.
      {"max_pool2d_empty_windows_f32",
       grads_of([](const Inputs& v) {
         return max_pool2d(v[0], {2, 2}, {1, 1}, {1, 1}, {3, 1});
       }),
       {input({2, 3, 2, 7})},
       kTolExact},
      // Adaptive max pooling (2026-11-29, written without a GPU: docs/gpu-pass.md): windows
      // that overlap and exceed the input, the 1-d form, ties (small integers), the indices.
      {"adaptive_max_pool2d_overlapping_f32",
       grads_of([](const Inputs& v) {
         return adaptive_max_pool2d(v[0], {5, 3});
       }),
       {input({2, 3, 17, 13}, kFloat32, -1, 1, kT)},
       kTolExact},
      {"adaptive_max_pool2d_larger_than_input_f64",
       grads_of([](const Inputs& v) {
         return adaptive_max_pool2d(v[0], {11, 9});
       }),
       {input({2, 3, 4, 5}, kFloat64)},
       kTolExact},
      {"adaptive_max_pool1d_f32",
       grads_of([](const Inputs& v) { return adaptive_max_pool1d(v[0], 6); }),
       {input({4, 3, 23})},
       kTolExact},
      {"adaptive_max_pool2d_with_indices_ties_bf16",
       [](const Inputs& x) {
         auto [y, indices] = adaptive_max_pool2d_with_indices(x[0].round(), {4, 3});
         return Outputs{y, indices};
       },
       {input({2, 3, 12, 10}, kBFloat16, -2, 2)},
       kTolExact},
      {"avg_pool2d_ceil_exclude_pad_f32",
       grads_of([](const Inputs& v) {
         return avg_pool2d(v[0], {3, 2}, {2, 3}, {1, 1}, /*ceil_mode=*/true,
                           /*count_include_pad=*/false);
       }),
       {input({3, 4, 17, 15}, kFloat32, -1, 1, kT)},
       kTolF32},
      {"avg_pool2d_ceil_divisor_override_f64",
       grads_of([](const Inputs& v) {
         return avg_pool2d(v[0], {3, 3}, {2, 2}, {1, 1}, /*ceil_mode=*/true, true, 5);
       }),
       {input({2, 3, 16, 13}, kFloat64)},
       kTolF64},
      {"avg_pool2d_ceil_include_pad_bf16",
       [](const Inputs& x) {
         return Outputs{avg_pool2d(x[0], {3, 3}, {2, 2}, {1, 1}, /*ceil_mode=*/true)};
       },
       {input({3, 4, 16, 14}, kBFloat16)},
       kTolBF16},
  };
}

// ---- Dropout (the same mask on both devices), softmax ---------------------------------------
std::vector<OpCase> dropout_softmax_cases() {
  std::vector<OpCase> c = {
      {"dropout_f32",
       grads_of([](const Inputs& v) {
         manual_seed(2024);
         return dropout(v[0], 0.3, true);
       }),
       {input({37, 101}, kFloat32, -1, 1, kT)},
       kTolExact},
      {"dropout_bf16",
       [](const Inputs& x) {
         manual_seed(77);
         return Outputs{dropout(x[0], 0.5, true)};
       },
       {input({1001}, kBFloat16)},
       kTolExact},
  };
  for (std::int64_t dim : {0, 1, 2}) {
    c.push_back({"softmax_dim" + std::to_string(dim) + "_f32",
                 grads_of([dim](const Inputs& v) { return softmax(v[0], dim); }),
                 {input({7, 33, 65}, kFloat32, -4, 4)},
                 kTolF32});
    c.push_back({"log_softmax_dim" + std::to_string(dim) + "_f32",
                 grads_of([dim](const Inputs& v) { return log_softmax(v[0], dim); }),
                 {input({7, 33, 65}, kFloat32, -4, 4)},
                 kTolF32Sum});
  }
  c.push_back({"softmax_long_row_f32",
               grads_of([](const Inputs& v) { return softmax(v[0], -1); }),
               {input({5, 5000}, kFloat32, -8, 8)},
               kTolF32});
  c.push_back({"softmax_bf16",
               [](const Inputs& x) { return Outputs{softmax(x[0], -1)}; },
               {input({33, 65}, kBFloat16, -4, 4)},
               kTolBF16});
  return c;
}

// ---- Losses, with each reduction ------------------------------------------------------------

// A class weight (C,) of x's dtype on x's device: 0.5, 0.8, ..., 2.0 repeating (never all 1, which
// would hide a weight the kernels skipped). Made in the row, so it is no input and has no gradient.
Tensor class_weight_like(const Tensor& x, std::int64_t C) {
  std::vector<double> w(static_cast<std::size_t>(C));
  for (std::size_t i = 0; i < w.size(); ++i)
    w[i] = 0.5 + 0.3 * static_cast<double>(i % 6);
  return make_tensor(w, {C}, x.dtype()).to(x.device());
}

std::vector<OpCase> loss_cases() {
  const std::pair<Reduction, const char*> reductions[] = {
      {Reduction::Mean, "mean"}, {Reduction::Sum, "sum"}, {Reduction::None, "none"}};
  std::vector<OpCase> c;
  for (const auto& [reduction, name] : reductions) {
    const Reduction r = reduction;  // lambdas capture it (clang < 16 cannot capture a binding)
    // ignore_index 3: about one sample in ten is ignored.
    c.push_back({std::string("cross_entropy_ignore_") + name + "_f32",
                 grads_of([r](const Inputs& v) { return cross_entropy(v[0], v[1], r, 3); }),
                 {input({67, 10}, kFloat32, -4, 4), input({67}, kInt64, 0, 10)},
                 kTolF32Sum});
    c.push_back({std::string("nll_loss_") + name + "_f32",
                 grads_of([r](const Inputs& v) { return nll_loss(v[0], v[1], r); }),
                 {input({67, 10}, kFloat32, -4, 0), input({67}, kInt64, 0, 10)},
                 kTolF32Sum});
    // A class weight (the kernels' w[t]), with ignore_index 3.
    c.push_back({std::string("cross_entropy_weight_") + name + "_f32",
                 grads_of([r](const Inputs& v) {
                   return cross_entropy(v[0], v[1], r, 3, class_weight_like(v[0], 10));
                 }),
                 {input({67, 10}, kFloat32, -4, 4), input({67}, kInt64, 0, 10)},
                 kTolF32Sum});
    c.push_back({std::string("nll_loss_weight_") + name + "_f32",
                 grads_of([r](const Inputs& v) {
                   return nll_loss(v[0], v[1], r, 3, class_weight_like(v[0], 10));
                 }),
                 {input({67, 10}, kFloat32, -4, 0), input({67}, kInt64, 0, 10)},
                 kTolF32Sum});
    // Label smoothing and probability targets are composed of ops (log_softmax, sums,
    // masked_fill) around the weighted nll_loss kernel.
    c.push_back({std::string("cross_entropy_weight_smoothing_") + name + "_f32",
                 grads_of([r](const Inputs& v) {
                   return cross_entropy(v[0], v[1], r, 3, class_weight_like(v[0], 10), 0.1);
                 }),
                 {input({67, 10}, kFloat32, -4, 4), input({67}, kInt64, 0, 10)},
                 kTolF32Sum});
    c.push_back({std::string("cross_entropy_probabilities_") + name + "_f32",
                 grads_of([r](const Inputs& v) {
                   return cross_entropy(v[0], v[1], r, -100, class_weight_like(v[0], 10), 0.2);
                 }),
                 {input({6, 10, 5, 3}, kFloat32, -4, 4), input({6, 10, 5, 3}, kFloat32, 0, 1)},
                 kTolF32Sum});
    // Input of any rank (Note [Class-index losses of any rank]): rows of a permuted input.
    // (N, C, H, W) with class indices (N, H, W), as a segmentation's, ignore_index 3 and a class
    // weight, with and without smoothing; unbatched (C) with a 0-d index.
    c.push_back({std::string("cross_entropy_spatial_weight_") + name + "_f32",
                 grads_of([r](const Inputs& v) {
                   return cross_entropy(v[0], v[1], r, 3, class_weight_like(v[0], 10));
                 }),
                 {input({3, 10, 7, 5}, kFloat32, -4, 4), input({3, 7, 5}, kInt64, 0, 10)},
                 kTolF32Sum});
    c.push_back({std::string("nll_loss_spatial_weight_") + name + "_f32",
                 grads_of([r](const Inputs& v) {
                   return nll_loss(v[0], v[1], r, 3, class_weight_like(v[0], 10));
                 }),
                 {input({3, 10, 7, 5}, kFloat32, -4, 0), input({3, 7, 5}, kInt64, 0, 10)},
                 kTolF32Sum});
    c.push_back({std::string("cross_entropy_spatial_weight_smoothing_") + name + "_f32",
                 grads_of([r](const Inputs& v) {
                   return cross_entropy(v[0], v[1], r, 3, class_weight_like(v[0], 10), 0.1);
                 }),
                 {input({2, 10, 4, 3, 2}, kFloat32, -4, 4), input({2, 4, 3, 2}, kInt64, 0, 10)},
                 kTolF32Sum});
    c.push_back({std::string("cross_entropy_unbatched_") + name + "_f32",
                 grads_of([r](const Inputs& v) { return cross_entropy(v[0], v[1], r); }),
                 {input({10}, kFloat32, -4, 4), input({}, kInt64, 0, 10)},
                 kTolF32Sum});
    c.push_back({std::string("mse_loss_") + name + "_f32",
                 grads_of([r](const Inputs& v) { return mse_loss(v[0], v[1], r); }),
                 {input({33, 65}), input({33, 65})},
                 kTolF32Sum});
    c.push_back({std::string("l1_loss_") + name + "_f32",
                 grads_of([r](const Inputs& v) { return l1_loss(v[0], v[1], r); }),
                 {input({33, 65}), input({33, 65})},
                 kTolF32Sum});
    // Differences in (-2, 2): both sides of beta 0.5 and delta 0.7.
    c.push_back({std::string("smooth_l1_loss_") + name + "_f32",
                 grads_of([r](const Inputs& v) { return smooth_l1_loss(v[0], v[1], r, 0.5); }),
                 {input({33, 65}), input({33, 65})},
                 kTolF32Sum});
    c.push_back({std::string("huber_loss_") + name + "_f32",
                 grads_of([r](const Inputs& v) { return huber_loss(v[0], v[1], r, 0.7); }),
                 {input({33, 65}), input({33, 65})},
                 kTolF32Sum});
  }
  c.push_back({"cross_entropy_1000_classes_f32",
               grads_of([](const Inputs& v) { return cross_entropy(v[0], v[1]); }),
               {input({64, 1000}, kFloat32, -4, 4, kT), input({64}, kInt64, 0, 1000)},
               kTolF32Sum});
  c.push_back({"cross_entropy_weight_bf16",
               [](const Inputs& x) {
                 return Outputs{
                     cross_entropy(x[0], x[1], Reduction::None, -100, class_weight_like(x[0], 50))};
               },
               {input({16, 50}, kBFloat16, -4, 4), input({16}, kInt64, 0, 50)},
               kTolBF16});
  c.push_back({"cross_entropy_bf16",
               [](const Inputs& x) { return Outputs{cross_entropy(x[0], x[1], Reduction::None)}; },
               {input({16, 50}, kBFloat16, -4, 4), input({16}, kInt64, 0, 50)},
               kTolBF16});
  return c;
}

}  // namespace

std::vector<OpCase> layer_op_cases() {
  std::vector<OpCase> c;
  for (auto section : {linear_shuffle_pool_cases, dropout_softmax_cases, loss_cases}) {
    for (OpCase& row : section())
      c.push_back(std::move(row));
  }
  return c;
}

}  // namespace leangrad::test
