// Device op table rows for the nn layers (see op_table.h): LayerNorm, BatchNorm, Embedding,
// index_select, gather, the scatters, cumsum, sort and the ops composed of them (flip, roll,
// repeat, tril, triu, pad, one_hot, norm, logsumexp, topk), ConvTranspose2d and interpolate,
// forward and input/parameter gradients (with_grads) in float32, float64 and the 16-bit dtypes,
// non-contiguous inputs, and BatchNorm's running statistics.
// LayerNorm and BatchNorm run on GroupNorm's kernels (Note [LayerNorm and BatchNorm as
// GroupNorm]): sums over whole rows or channels differ in order between devices, hence the
// reduction tolerance.
#include "kernels/op_table.h"

#include <cstdint>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include <leangrad/autograd/arithmetic_functions.h>
#include <leangrad/autograd/composed_layers.h>
#include <leangrad/autograd/ctc_loss.h>
#include <leangrad/autograd/fold_functions.h>
#include <leangrad/autograd/fractional_max_pool.h>
#include <leangrad/autograd/functions.h>
#include <leangrad/autograd/grad_mode.h>
#include <leangrad/autograd/grid_sample.h>
#include <leangrad/autograd/indexing_functions.h>
#include <leangrad/autograd/linalg_decompositions.h>
#include <leangrad/autograd/margin_losses.h>
#include <leangrad/autograd/nn_functions.h>
#include <leangrad/autograd/reduction_functions.h>
#include <leangrad/autograd/shape_functions.h>
#include <leangrad/autograd/statistics_functions.h>
#include <leangrad/autograd/volumetric_functions.h>
#include <leangrad/core/creation.h>
#include <leangrad/kernels/creation.h>
#include <leangrad/nn/packed_sequence.h>
#include <leangrad/nn/rnn.h>

namespace leangrad::test {
namespace {

constexpr Layout kT = Layout::Transposed;

Tolerance norm_tolerance(DType dtype) {
  if (dtype == kFloat32) return kTolF32Sum;
  if (dtype == kFloat64) return kTolF64Sum;
  return elementwise_tolerance(dtype);
}

// Note [BatchNorm's weight gradient cancels]
//   dweight[c] = sum_i g_i (x_i - mean) rstd over the m values of channel c, and
//   sum_i (x_i - mean) = 0: the terms cancel, and the result can be small against them. Each
//   device computes its own mean, within a few ulps (4 u |mean|, u the unit roundoff of the math
//   type) of the true one; dweight moves by sum_i g_i rstd times that: up to
//   sum_i |g_i| rstd 4 u |mean| <= 1.5 m rstd 4 u |mean| (with_grads' upstream |g_i| < 1.5),
//   an absolute error no relative tolerance covers near 0. The rows below allow that on top of
//   the sums' tolerance: inputs uniform in [-2, 3] have |mean| <= 0.5 plus sampling noise (below
//   0.6) and rstd = 1 / std <= 1 / 1.3 (the uniform's std is 5 / sqrt(12) = 1.44).
Tolerance batch_norm_train_tolerance(DType dtype, std::int64_t per_channel) {
  Tolerance tol = norm_tolerance(dtype);
  const double u = math_unit_roundoff(dtype);
  tol.atol += 1.5 * static_cast<double>(per_channel) * (1 / 1.3) * 4 * u * 0.6;
  return tol;
}

// ---- LayerNorm, BatchNorm -----------------------------------------------------------------------
std::vector<OpCase> normalization_cases() {
  std::vector<OpCase> c;
  for (DType dtype : kFloatingDTypes) {
    const std::string suffix = dtype_suffix(dtype);
    const Tolerance tol = norm_tolerance(dtype);
    c.push_back(
        {"layer_norm_" + suffix,
         grads_of([](const Inputs& v) { return layer_norm(v[0], {37}, v[1], v[2]); }),
         {input({3, 5, 37}, dtype, -2.0, 3.0), input({37}, dtype, 0.5, 1.5), input({37}, dtype)},
         tol});
    c.push_back(
        {"batch_norm_train_" + suffix,
         grads_of([](const Inputs& v) {
           return batch_norm(v[0], {}, {}, v[1], v[2], /*training=*/true);
         }),
         {input({4, 6, 5, 7}, dtype, -2.0, 3.0), input({6}, dtype, 0.5, 1.5), input({6}, dtype)},
         batch_norm_train_tolerance(dtype, 4 * 5 * 7)});
  }
  c.push_back({"layer_norm_two_dims_no_affine_transposed_f32",
               grads_of([](const Inputs& v) {
                 return layer_norm(v[0], {9, 8});
               }),
               {input({4, 9, 8}, kFloat32, -2.0, 3.0, kT)},
               kTolF32Sum});
  // 2048 rows of 96: CUDA's warp-per-row teams (Note [LayerNorm on CUDA]), many row chunks for
  // dweight and dbias.
  c.push_back({"layer_norm_many_rows_f32",
               grads_of([](const Inputs& v) { return layer_norm(v[0], {96}, v[1], v[2]); }),
               {input({2048, 96}, kFloat32, -2.0, 3.0), input({96}, kFloat32, 0.5, 1.5),
                input({96}, kFloat32)},
               kTolF32Sum});
  // Three rows of 4096: a block per row on CUDA, one row block on the CPU.
  c.push_back({"layer_norm_long_rows_f32",
               grads_of([](const Inputs& v) { return layer_norm(v[0], {4096}, v[1], v[2]); }),
               {input({3, 4096}, kFloat32, -2.0, 3.0), input({4096}, kFloat32, 0.5, 1.5),
                input({4096}, kFloat32)},
               kTolF32Sum});
  // Three channels of 8 * 64 * 64 = 32768 values: few, long channels, each cut into many pieces
  // (Note [BatchNorm on CUDA], Note [Vectorised BatchNorm]: planes).
  c.push_back({"batch_norm_train_long_channels_f32",
               grads_of([](const Inputs& v) {
                 return batch_norm(v[0], {}, {}, v[1], v[2], /*training=*/true);
               }),
               {input({8, 3, 64, 64}, kFloat32, -2.0, 3.0), input({3}, kFloat32, 0.5, 1.5),
                input({3}, kFloat32)},
               batch_norm_train_tolerance(kFloat32, 8 * 64 * 64)});
  // BatchNorm1d's (N, C) and small planes: the column layouts of both kernels, with row blocks
  // (CPU) and row chunks (CUDA).
  c.push_back({"batch_norm_train_columns_f32",
               grads_of([](const Inputs& v) {
                 return batch_norm(v[0], {}, {}, v[1], v[2], /*training=*/true);
               }),
               {input({300, 40}, kFloat32, -2.0, 3.0), input({40}, kFloat32, 0.5, 1.5),
                input({40}, kFloat32)},
               batch_norm_train_tolerance(kFloat32, 300)});
  c.push_back({"batch_norm_train_small_planes_bf16",
               grads_of([](const Inputs& v) {
                 return batch_norm(v[0], {}, {}, v[1], v[2], /*training=*/true);
               }),
               {input({64, 24, 3}, kBFloat16, -2.0, 3.0), input({24}, kBFloat16, 0.5, 1.5),
                input({24}, kBFloat16)},
               batch_norm_train_tolerance(kBFloat16, 64 * 3)});
  c.push_back({"batch_norm_train_nc_transposed_f32",
               grads_of([](const Inputs& v) { return batch_norm(v[0], {}, {}, v[1], {}, true); }),
               {input({12, 10}, kFloat32, -2.0, 3.0, kT), input({10}, kFloat32, 0.5, 1.5)},
               batch_norm_train_tolerance(kFloat32, 12)});
  // instance_norm: group_norm's kernels with a group per channel, and the running statistics'
  // update (a mean and an unbiased variance per slice, averaged over the batch) as outputs too.
  c.push_back({"instance_norm_running_stats_f32",
               [](const Inputs& v) {
                 const Tensor rm = v[3].clone(), rv = v[4].clone();
                 Outputs out = with_grads({v[0], v[1], v[2]}, [&](const Inputs& l) {
                   return instance_norm(l[0], rm, rv, l[1], l[2], true, 0.3, 1e-5);
                 });
                 out.push_back(rm);
                 out.push_back(rv);
                 return out;
               },
               {input({3, 5, 6, 7}, kFloat32, -2.0, 3.0), input({5}, kFloat32, 0.5, 1.5),
                input({5}, kFloat32), input({5}, kFloat32), input({5}, kFloat32, 0.5, 2.0)},
               kTolF32Sum});
  c.push_back({"batch_norm_eval_f32",
               // The gradients of x, weight and bias (the running statistics get none, as in
               // PyTorch).
               [](const Inputs& v) {
                 return with_grads({v[0], v[1], v[2]}, [&v](const Inputs& l) {
                   return batch_norm(l[0], v[3], v[4], l[1], l[2], /*training=*/false);
                 });
               },
               {input({2, 5, 6, 6}, kFloat32, -2.0, 3.0), input({5}, kFloat32, 0.5, 1.5),
                input({5}, kFloat32), input({5}, kFloat32), input({5}, kFloat32, 0.5, 2.0)},
               kTolF32});
  // The running statistics after one training step, float32 statistics beside bfloat16 input.
  for (DType dtype : {kFloat32, kBFloat16}) {
    c.push_back({std::string("batch_norm_running_stats_") + dtype_suffix(dtype),
                 [](const Inputs& v) {
                   const Tensor rm = v[1].clone(), rv = v[2].clone();
                   batch_norm(v[0], rm, rv, {}, {}, /*training=*/true, 0.3);
                   return Outputs{rm, rv};
                 },
                 {input({8, 4, 6, 6}, dtype, -2.0, 3.0), input({4}, kFloat32),
                  input({4}, kFloat32, 0.5, 2.0)},
                 kTolF32Sum});
  }
  return c;
}

// ---- Embedding -------------------------------------------------------------------------------
// Indices in [0, 9) over 70 lookups: every row repeats, so the backward's additions to one row
// (CUDA atomics, any order) are compared with the CPU's in-order sums.
std::vector<OpCase> embedding_cases() {
  std::vector<OpCase> c;
  for (DType dtype : kFloatingDTypes) {
    const std::string suffix = dtype_suffix(dtype);
    c.push_back({"embedding_" + suffix,
                 grads_of([](const Inputs& v) { return embedding(v[1], v[0]); }),
                 {input({9, 33}, dtype), input({2, 5, 7}, kInt64, 0.0, 9.0)},
                 norm_tolerance(dtype)});
  }
  c.push_back({"embedding_padding_idx_transposed_f32",
               grads_of([](const Inputs& v) { return embedding(v[1], v[0], 2); }),
               {input({9, 40}, kFloat32, -1.0, 1.0, kT), input({70}, kInt64, 0.0, 9.0)},
               kTolF32Sum});
  return c;
}

// ---- index_select, gather, the scatters, cumsum and the composed ops ------------------------
// Indices repeat (20 or more picks of 8 or 9 positions), so the gradients' sums (CUDA atomics, any
// order) are compared with the CPU's in-order ones; integer rows are exact.
std::vector<OpCase> indexing_cases() {
  std::vector<OpCase> c;
  for (DType dtype : kFloatingDTypes) {
    const std::string suffix = dtype_suffix(dtype);
    c.push_back({"index_select_dim1_" + suffix,
                 grads_of([](const Inputs& v) { return index_select(v[0], 1, v[1]); }),
                 {input({4, 9, 33}, dtype), input({20}, kInt64, 0.0, 9.0)},
                 norm_tolerance(dtype)});
    c.push_back({"gather_dim2_" + suffix,
                 grads_of([](const Inputs& v) { return gather(v[0], 2, v[1]); }),
                 {input({3, 5, 8}, dtype), input({3, 4, 30}, kInt64, 0.0, 8.0)},
                 norm_tolerance(dtype)});
  }
  c.push_back({"index_select_dim0_transposed_i64",
               [](const Inputs& v) -> Outputs { return {index_select(v[0], 0, v[1])}; },
               {input({9, 7}, kInt64, -50.0, 50.0, kT), input({25}, kInt64, 0.0, 9.0)},
               kTolExact});
  c.push_back({"gather_dim0_transposed_f32",
               grads_of([](const Inputs& v) { return gather(v[0], 0, v[1]); }),
               {input({9, 12}, kFloat32, -1.0, 1.0, kT), input({30, 10}, kInt64, 0.0, 9.0)},
               kTolF32Sum});
  c.push_back({"scatter_add_dim1_f32",
               grads_of([](const Inputs& v) { return scatter_add(v[0], 1, v[1], v[2]); }),
               {input({5, 8}), input({5, 40}, kInt64, 0.0, 8.0), input({5, 40})},
               kTolF32Sum});
  c.push_back(
      {"scatter_add_dim0_bf16",
       grads_of([](const Inputs& v) { return scatter_add(v[0], 0, v[1], v[2]); }),
       {input({6, 7}, kBFloat16), input({30, 7}, kInt64, 0.0, 6.0), input({30, 7}, kBFloat16)},
       norm_tolerance(kBFloat16)});
  c.push_back({"scatter_add_dim0_i64",
               [](const Inputs& v) -> Outputs { return {scatter_add(v[0], 0, v[1], v[2])}; },
               {input({6, 7}, kInt64, -50.0, 50.0), input({30, 7}, kInt64, 0.0, 6.0),
                input({30, 7}, kInt64, -50.0, 50.0)},
               kTolExact});
  // scatter: the element latest along dim wins on both devices (CUDA claims each place first),
  // so values and gradients are exact with repeats; products, means and sums of a place combine
  // in any order on CUDA, maxima exactly; integers exactly.
  c.push_back({"scatter_repeats_dim1_f32",
               grads_of([](const Inputs& v) { return scatter(v[0], 1, v[1], v[2]); }),
               {input({5, 8}), input({5, 40}, kInt64, 0.0, 8.0), input({5, 40})},
               kTolExact});
  c.push_back({"scatter_reduce_prod_mean_amax_dim0_f32",
               grads_of([](const Inputs& v) {
                 return add(add(scatter_reduce(v[0], 0, v[1], v[2], "prod"),
                                scatter_reduce(v[0], 0, v[1], v[2], "mean", false)),
                            scatter_reduce(v[0], 0, v[1], v[2], "amax", false));
               }),
               {input({6, 7}, kFloat32, 0.5, 1.5), input({20, 7}, kInt64, 0.0, 6.0),
                input({20, 7}, kFloat32, 0.5, 1.5)},
               kTolF32Sum});
  c.push_back(
      {"scatter_reduce_amin_dim1_transposed_bf16",
       grads_of([](const Inputs& v) { return scatter_reduce(v[0], 1, v[1], v[2], "amin"); }),
       {input({6, 9}, kBFloat16, -1.0, 1.0, kT), input({6, 30}, kInt64, 0.0, 9.0),
        input({6, 30}, kBFloat16)},
       kTolExact});
  c.push_back({"scatter_reduce_i64_u8",
               [](const Inputs& v) -> Outputs {
                 return {scatter_reduce(v[0], 0, v[1], v[2], "prod"),
                         scatter_reduce(v[0], 0, v[1], v[2], "mean", false),
                         scatter_reduce(v[0].to(kUInt8), 0, v[1], v[2].to(kUInt8), "sum"),
                         scatter(v[0], 0, v[1], v[2])};
               },
               {input({6, 7}, kInt64, -50.0, 50.0), input({30, 7}, kInt64, 0.0, 6.0),
                input({30, 7}, kInt64, -50.0, 50.0)},
               kTolExact});
  // cumsum: both devices make the same additions in the same order (the backward from the end).
  for (DType dtype : {kFloat32, kFloat16}) {
    c.push_back({std::string("cumsum_dim1_") + dtype_suffix(dtype),
                 grads_of([](const Inputs& v) { return cumsum(v[0], 1); }),
                 {input({3, 300, 5}, dtype)},
                 kTolExact});
  }
  c.push_back({"cumsum_last_dim_transposed_f64",
               grads_of([](const Inputs& v) { return cumsum(v[0], -1); }),
               {input({40, 9}, kFloat64, -1.0, 1.0, kT)},
               kTolExact});
  c.push_back({"cumsum_i32",
               [](const Inputs& v) -> Outputs { return {cumsum(v[0], 0)}; },
               {input({50, 3}, kInt32, -100.0, 100.0)},
               kTolExact});
  // The running reductions: the same steps in the same order on both devices (cumprod and
  // cummax bit for bit; logcumsumexp's exp and log1p are libm's against CUDA's, a few ulps). The
  // gradients are compositions (cumsum, where, scatter_add): exact, or within the sums'.
  c.push_back({"cumprod_cummax_dim1_f32",
               grads_of([](const Inputs& v) {
                 return add(cumprod(v[0], 1), std::get<0>(cummax(v[0], 1)));
               }),
               {input({3, 40, 5}, kFloat32, 0.5, 1.5)},
               kTolF32Sum});
  c.push_back({"cummin_indices_last_dim_transposed_f64",
               [](const Inputs& v) -> Outputs {
                 const auto [values, indices] = cummin(v[0], -1);
                 return {values, indices};
               },
               {input({30, 9}, kFloat64, -1.0, 1.0, kT)},
               kTolExact});
  c.push_back({"cumprod_i64",
               [](const Inputs& v) -> Outputs { return {cumprod(v[0], 0)}; },
               {input({20, 3}, kInt64, -3.0, 3.0)},
               kTolExact});
  c.push_back({"logcumsumexp_dim0_f32",
               grads_of([](const Inputs& v) { return logcumsumexp(v[0], 0); }),
               {input({60, 7}, kFloat32, -20.0, 20.0)},
               kTolF32Sum});
  // prod: runs, columns, separated dims (in stages) and a long run split into segments.
  c.push_back({"prod_dims_f32",
               grads_of([](const Inputs& v) { return add(prod(v[0], 1), prod(v[0], 0).sum()); }),
               {input({3, 20, 4}, kFloat32, 0.8, 1.25)},
               kTolF32Sum});
  c.push_back({"prod_long_run_f64",
               [](const Inputs& v) -> Outputs {
                 return {prod(v[0]), prod(v[0].to(kInt64), 0)};
               },
               {input({40000}, kFloat64, 0.9999, 1.0001)},
               kTolF64Sum});
  // The order statistics and searches: compositions of sort, gather and argmax.
  c.push_back({"median_kthvalue_quantile_f32",
               grads_of([](const Inputs& v) {
                 return add(add(std::get<0>(median(v[0], 1)), std::get<0>(kthvalue(v[0], 3, 1))),
                            quantile(v[0], 0.3, 1));
               }),
               {input({6, 25})},
               kTolExact});
  // mode (session 54): sort, cumsum, scatter_add and gather over integers full of ties.
  c.push_back({"mode_i64",
               [](const Inputs& v) {
                 auto [values, indices] = mode(v[0], 1);
                 return Outputs{values, indices};
               },
               {input({6, 25}, kInt64, 0.0, 5.0)},
               kTolExact});
  // The array functions of session 55: unique and histogram (sort, runs, searchsorted and
  // scatter_add on the device, a count read back), cov, corrcoef and trapezoid (products and
  // reductions), the scatter copies (index_put, index_copy), fill_diagonal_ and lu_unpack.
  c.push_back({"unique_histogram_f32",
               [](const Inputs& v) {
                 auto [values, inverse, counts] = unique(round(mul(v[0], 4.0)), true, true, true);
                 auto [hist, edges] = histogram(v[0], 7, std::vector<double>{-1.0, 1.0});
                 return Outputs{values, inverse, counts, hist, edges};
               },
               {input({300}, kFloat32, -1.2, 1.2)},
               kTolExact});
  c.push_back({"unique_dim_i64",
               [](const Inputs& v) {
                 auto [rows, inverse, counts] = unique_dim(v[0], 0, true, true, true);
                 return Outputs{rows, inverse, counts};
               },
               {input({40, 3}, kInt64, 0.0, 2.0)},
               kTolExact});
  c.push_back({"cov_corrcoef_trapezoid_f32",
               grads_of([](const Inputs& v) {
                 return add(add(sum(cov(v[0], 1, std::nullopt, v[1])), sum(corrcoef(v[0]))),
                            sum(cumulative_trapezoid(v[0], 0.5)));
               }),
               {input({5, 30}), input({30}, kFloat32, 0.5, 1.5)},
               kTolF32Sum});
  c.push_back({"scatter_copies_f32",
               grads_of([](const Inputs& v) {
                 const Tensor a = select_scatter(v[0], v[1], 1, 2);
                 const Tensor b = diagonal_scatter(a, v[2], 1);
                 return masked_scatter(b, gt(v[0], 0.0), v[3]);
               }),
               {input({6, 7}), input({6}), input({6}), input({42})},
               kTolExact});
  c.push_back({"fill_diagonal_lu_unpack_f64",
               [](const Inputs& v) {
                 Tensor filled = v[0].clone();
                 filled.fill_diagonal_(2.0, /*wrap=*/true);
                 const auto [lu, pivots] = linalg::lu_factor(narrow(v[0], 0, 0, 5));
                 const auto [P, L, U] = lu_unpack(lu, pivots);
                 return Outputs{filled, P, L, U};
               },
               {input({11, 5}, kFloat64)},
               kTolExact});
  // Session 56: as_strided and Tensor::unfold (views on the device, the gradient index_add and
  // index_select of storage positions), div's rounding modes (integer and floating, x // 0
  // included), geqrf (host round trip) with householder_product (matmuls on the device), and
  // the _ex variants' infos.
  c.push_back(
      {"as_strided_unfold_f32",
       grads_of([](const Inputs& v) {
         return mul(as_strided(v[0], {5, 4}, {3, 1}, 2), narrow(v[0].unfold(0, 4, 3), 0, 0, 5));
       }),
       {input({20})},
       kTolF32Sum});
  c.push_back({"div_rounding_modes_i64_f32",
               [](const Inputs& v) {
                 return Outputs{div(v[0], v[1], "floor"), div(v[0], v[1], "trunc"),
                                div(v[2], v[3], "floor"), div(v[2], v[3], "trunc"),
                                div(v[0], -3.0, "trunc")};
               },
               {input({40}, kInt64, -20.0, 20.0), input({40}, kInt64, -3.0, 3.0),
                input({40}, kFloat32, -8.0, 8.0), input({40}, kFloat32, -2.0, 2.0)},
               kTolExact});
  c.push_back(
      {"householder_geqrf_ex_f64",
       [](const Inputs& v) {
         const auto [packed, tau] = geqrf(v[0]);
         const auto [factor, info] = linalg::cholesky_ex(v[1]);
         const auto [inverse, inv_info] = linalg::inv_ex(v[2]);
         return Outputs{packed, tau, linalg::householder_product(packed, tau), info, inv_info};
       },
       {input({3, 6, 4}, kFloat64), input({2, 3, 3}, kFloat64), input({2, 3, 3}, kFloat64)},
       kTolF64Sum});
  // Session 59: ldl_factor and ldl_solve (host round trips), the solve's gradient in B.
  c.push_back({"ldl_factor_solve_f64",
               [](const Inputs& v) {
                 const Tensor a = add(v[0], v[0].mT());
                 const auto [ld, pivots, info] = linalg::ldl_factor_ex(a);
                 const Tensor b = v[1].detach().requires_grad_();
                 const Tensor x = linalg::ldl_solve(ld, pivots, b);
                 sum(mul(x, x)).backward();
                 return Outputs{ld, pivots, info, x, b.grad()};
               },
               {input({2, 5, 5}, kFloat64), input({3, 2, 5, 2}, kFloat64)},
               kTolF64Sum});
  // Indexing by tensors (autograd/advanced_indexing.cpp): nonzero, index_select, a stable
  // argsort of the positions and index_add on the device; repeated positions take their last
  // value on both devices.
  c.push_back({"advanced_index_mask_f32",
               grads_of([](const Inputs& v) {
                 return v[0].index({indexing::Slice(), gt(v[1], 0.0)});
               }),
               {input({4, 6, 5}), input({6, 5})},
               kTolExact});
  c.push_back({"advanced_index_put_f32",
               [](const Inputs& v) -> Outputs {
                 Tensor masked = v[0].clone();
                 masked.index_put_({gt(v[0], 0.0)}, -1.0);
                 Tensor rows = v[0].clone();
                 rows.index_put_({indexing::Slice(), v[1]}, v[2]);
                 return {masked, rows, v[0].index({v[1], indexing::Slice(), v[1]})};
               },
               {input({6, 6, 6}), input({20}, kInt64, 0.0, 6.0), input({6, 20, 6})},
               kTolExact});
  c.push_back({"searchsorted_bucketize_f32",
               [](const Inputs& v) -> Outputs {
                 const Tensor rows = std::get<0>(sort(v[0], 1));
                 return {searchsorted(rows, v[1]), searchsorted(rows, v[1], false, true),
                         bucketize(v[1], rows.select(0, 0))};
               },
               {input({4, 50}), input({4, 30})},
               kTolExact});
  // index_add and index_fill (repeated indices), repeat_interleave, meshgrid, and the arithmetic
  // of several tensors (autograd/arithmetic_functions.h): compositions, masks made on the device.
  c.push_back(
      {"index_add_fill_interleave_f32",
       grads_of([](const Inputs& v) {
         const Tensor added = index_add(v[0], 1, v[1], v[2], 0.5);
         return repeat_interleave(index_fill(added, 0, v[3], -2.0), 3, 1);
       }),
       {input({6, 9}), input({25}, kInt64, 0.0, 9.0), input({6, 25}), input({4}, kInt64, 0.0, 6.0)},
       kTolF32Sum});
  c.push_back({"nonzero_f32",
               [](const Inputs& v) -> Outputs { return {nonzero(gt(v[0], 0.5))}; },
               {input({7, 9, 11})},
               kTolExact});
  c.push_back({"bincount_weighted_f32",
               [](const Inputs& v) -> Outputs {
                 return {bincount(v[0]), bincount(v[0], v[1], 12)};
               },
               {input({50}, kInt64, 0.0, 9.0), input({50})},
               kTolF32Sum});
  c.push_back({"masked_select_f32",
               grads_of([](const Inputs& v) { return masked_select(v[0], gt(v[1], 0.0)); }),
               {input({6, 40}), input({40})},
               kTolExact});
  c.push_back(
      {"lerp_addcmul_addcdiv_logaddexp_f32",
       grads_of([](const Inputs& v) {
         const std::vector<Tensor> g = meshgrid({v[3], v[4]}, "xy");
         const Tensor t = lerp(v[0], v[1], v[2]) + addcmul(v[0], v[1], v[2], 0.5);
         return logaddexp(addcdiv(t, v[1], g[0] + 3.0, -1.0), g[1] * 4.0);
       }),
       {input({7, 5}), input({5}), input({7, 1}, kFloat32, -0.5, 1.5), input({5}), input({7})},
       kTolF32Sum});
  // The composed ops (their own index tensors, masks and blocks made on the input's device).
  c.push_back({"flip_roll_repeat_f32",
               grads_of([](const Inputs& v) {
                 return roll(flip(v[0], {0, 2}), {2, -1}, {1, 2}).repeat({2, 1, 1});
               }),
               {input({3, 4, 5})},
               kTolExact});
  c.push_back({"tril_triu_pad_bf16",
               grads_of([](const Inputs& v) {
                 return pad(add(tril(v[0], 1), triu(v[0], 2)), {1, -1, 2, 0}, 0.5);
               }),
               {input({2, 5, 6}, kBFloat16)},
               kTolExact});
  // reflect, replicate and circular padding: an index made on the host, copied to the device,
  // and index_select (the gradient's sums of up to 9 copies: CUDA atomics).
  for (DType dtype : {kFloat32, kBFloat16}) {
    c.push_back({std::string("pad_modes_") + dtype_suffix(dtype),
                 grads_of([](const Inputs& v) {
                   return add(
                       add(pad(v[0], {2, 1, 1, 3}, kReflect), pad(v[0], {3, 0, 2, 2}, kReplicate)),
                       pad(v[0], {-1, 4, 2, 2}, kCircular));
                 }),
                 {input({2, 3, 5, 6}, dtype)},
                 norm_tolerance(dtype)});
  }
  c.push_back(
      {"norm_logsumexp_f32",
       grads_of([](const Inputs& v) { return add(norm(v[0], 2.0, {1}), logsumexp(v[0], {1})); }),
       {input({6, 50})},
       kTolF32Sum});
  // Sorting: CUDA's segmented radix sort against the CPU's comparison sort, the same order
  // element for element (ties in position order, NaN the largest).
  c.push_back({"sort_dim1_nan_descending_bf16",
               [](const Inputs& v) -> Outputs {
                 const Tensor x =
                     where(gt(v[0], 0.7), full_like(v[0], std::numeric_limits<double>::quiet_NaN()),
                           v[0]);
                 const auto [values, indices] = sort(x, 1, /*descending=*/true);
                 return {values, indices};
               },
               {input({3, 40, 5}, kBFloat16)},
               kTolExact});
  c.push_back({"argsort_dim0_ties_i64",
               [](const Inputs& v) -> Outputs { return {argsort(v[0], 0)}; },
               {input({50, 6}, kInt64, -5.0, 5.0)},
               kTolExact});
  c.push_back({"argsort_long_rows_f32",
               [](const Inputs& v) -> Outputs { return {argsort(v[0], -1)}; },
               {input({4, 5000})},
               kTolExact});
  c.push_back({"topk_f32",
               grads_of([](const Inputs& v) { return std::get<0>(topk(v[0], 5, -1)); }),
               {input({7, 300})},
               kTolExact});
  c.push_back({"one_hot_i64",
               [](const Inputs& v) -> Outputs { return {one_hot(v[0], 7)}; },
               {input({4, 5}, kInt64, 0.0, 7.0)},
               kTolExact});
  return c;
}

// ---- ConvTranspose2d ------------------------------------------------------------------------
// conv2d's kernels run with the roles of Note [ConvTranspose2d as conv2d's gradient]; sums of up
// to C_in / groups kH kW = 72 products in another order on each device: the GEMM tolerance.
std::vector<OpCase> conv_transpose_cases() {
  std::vector<OpCase> c;
  c.push_back({"conv_transpose2d_stride2_f32",
               grads_of([](const Inputs& v) {
                 return conv_transpose2d(v[0], v[1], v[2], {2, 2}, {1, 1}, {1, 1});
               }),
               {input({2, 8, 7, 6}), input({8, 5, 3, 3}), input({5})},
               kTolF32Gemm});
  c.push_back({"conv_transpose2d_groups_dilation_transposed_f32",
               grads_of([](const Inputs& v) {
                 return conv_transpose2d(v[0], v[1], {}, {1, 2}, {0, 1}, {0, 1}, 2, {2, 1});
               }),
               {input({2, 6, 9, 5}, kFloat32, -1.0, 1.0, kT), input({6, 4, 3, 2})},
               kTolF32Gemm});
  c.push_back({"conv_transpose2d_f64",
               grads_of([](const Inputs& v) {
                 return conv_transpose2d(v[0], v[1], v[2], {3, 2}, {1, 0}, {2, 1});
               }),
               {input({1, 3, 5, 4}, kFloat64), input({3, 4, 4, 3}, kFloat64), input({4}, kFloat64)},
               kTolF64});
  for (DType dtype : {kFloat16, kBFloat16}) {
    c.push_back({std::string("conv_transpose2d_") + dtype_suffix(dtype),
                 [](const Inputs& v) {
                   return Outputs{conv_transpose2d(v[0], v[1], v[2], {2, 2}, {1, 1})};
                 },
                 {input({2, 4, 6, 6}, dtype), input({4, 3, 4, 4}, dtype), input({3}, dtype)},
                 elementwise_tolerance(dtype)});
  }
  return c;
}

// ---- interpolate ------------------------------------------------------------------------------
// Both devices compute the same taps (kernels/layers_math.h) in the same precision: forwards agree
// to the elementwise tolerance; backwards add up to ~16 weighted terms per input in another order
// (CUDA atomics).
std::vector<OpCase> interpolate_cases() {
  std::vector<OpCase> c;
  for (DType dtype : kFloatingDTypes) {
    const std::string suffix = dtype_suffix(dtype);
    c.push_back({"interpolate_nearest_" + suffix,
                 grads_of([](const Inputs& v) {
                   return interpolate(v[0], std::nullopt, Scale2{1.7, 2.0});
                 }),
                 {input({2, 3, 7, 9}, dtype)},
                 norm_tolerance(dtype)});
    c.push_back({"interpolate_bilinear_" + suffix,
                 grads_of([](const Inputs& v) {
                   return interpolate(v[0], Size2{11, 6}, std::nullopt, kBilinear);
                 }),
                 {input({2, 3, 7, 9}, dtype)},
                 norm_tolerance(dtype)});
    // Bicubic: 16 taps, clamped at the edges (session 42).
    c.push_back({"interpolate_bicubic_" + suffix,
                 grads_of([](const Inputs& v) {
                   return interpolate(v[0], Size2{11, 6}, std::nullopt, kBicubic);
                 }),
                 {input({2, 3, 7, 9}, dtype)},
                 norm_tolerance(dtype)});
  }
  c.push_back({"interpolate_bicubic_align_corners_scale_f32",
               grads_of([](const Inputs& v) {
                 return interpolate(v[0], std::nullopt, Scale2{2.5, 1.5}, kBicubic, true);
               }),
               {input({2, 4, 6, 5}, kFloat32, -1.0, 1.0, kT)},
               kTolF32Sum});
  c.push_back({"interpolate_nearest_exact_f32",
               grads_of([](const Inputs& v) {
                 return interpolate(v[0], Size2{13, 4}, std::nullopt, kNearestExact);
               }),
               {input({2, 3, 7, 9}, kFloat32)},
               kTolF32Sum});
  c.push_back({"interpolate_bilinear_align_corners_transposed_f32",
               grads_of([](const Inputs& v) {
                 return interpolate(v[0], std::nullopt, Scale2{2.5, 3.0}, kBilinear, true);
               }),
               {input({2, 4, 6, 5}, kFloat32, -1.0, 1.0, kT)},
               kTolF32Sum});
  // Other ranks: the 2-d resize over (N, C, 1, L) and, for volumes, over the (N, C D, H, W)
  // planes and then depth (Note [Interpolation of any rank]).
  c.push_back({"interpolate_linear_trilinear_nearest_3d_f32",
               grads_of([](const Inputs& v) {
                 using Sizes = std::vector<std::int64_t>;
                 return cat({interpolate(v[0], Sizes{13}, std::nullopt, kLinear, true).flatten(),
                             interpolate(v[1], Sizes{5, 7, 4}, std::nullopt, kTrilinear).flatten(),
                             interpolate(v[1], std::nullopt, std::vector<double>{1.5, 0.5, 2.0},
                                         kNearestExact)
                                 .flatten()});
               }),
               {input({2, 3, 9}), input({2, 2, 3, 6, 5})},
               kTolF32Sum});
  return c;
}

// ---- Recurrent layers, 1-d and 3-d poolings, conv3d, embedding_bag ---------------------------
// Composed of the ops above (nn/rnn.cpp, autograd/volumetric_functions.cpp, embedding_bag in
// autograd/nn_functions.cpp), so these rows check the compositions' device paths: the steps'
// matmuls and gates, index_select and index_add across devices, the host-side layouts.

// A recurrent module's parameters set from seeded values (the same on every device), moved to x's
// device and dtype.
template <typename Module>
void seeded_parameters(Module& module, const Tensor& x) {
  {
    const NoGradGuard no_grad;
    std::uint64_t seed = 101;
    for (Tensor& p : module->parameters())
      p.copy_(make_input_storage(input(p.shape(), kFloat32, -0.6, 0.6), seed++));
  }
  module->to(x.dtype());
  module->to(x.device());
}

std::vector<OpCase> volumetric_recurrent_cases() {
  std::vector<OpCase> c;
  c.push_back({"lstm_two_layers_bidirectional_f32",
               grads_of([](const Inputs& v) {
                 nn::LSTM lstm(nn::LSTMOptions(8, 12).num_layers(2).bidirectional(true));
                 seeded_parameters(lstm, v[0]);
                 return std::get<0>(lstm(v[0]));
               }),
               {input({6, 3, 8})},
               kTolF32Sum});
  c.push_back({"gru_batch_first_projection_free_f64",
               grads_of([](const Inputs& v) {
                 nn::GRU gru(nn::GRUOptions(5, 7).batch_first(true));
                 seeded_parameters(gru, v[0]);
                 return std::get<0>(gru(v[0]));
               }),
               {input({2, 9, 5}, kFloat64)},
               kTolF64Sum});
  // Packed: each step on the sequences still going, the batch unsorted (session 46).
  c.push_back({"lstm_packed_bidirectional_unsorted_f32",
               grads_of([](const Inputs& v) {
                 nn::LSTM lstm(nn::LSTMOptions(8, 6).bidirectional(true));
                 seeded_parameters(lstm, v[0]);
                 auto [out, state] =
                     lstm->forward_with_packed_input(nn::utils::rnn::pack_padded_sequence(
                         v[0], tensor<std::int64_t>({3, 6, 1, 4}), false, false));
                 return cat({out.data().flatten(), std::get<0>(state).flatten(),
                             std::get<1>(state).flatten()});
               }),
               {input({6, 4, 8})},
               kTolF32Sum});
  // unfold and fold: index_select and index_add over the padded planes (session 46).
  c.push_back({"unfold_fold_f32",
               grads_of([](const Inputs& v) {
                 return cat({unfold(v[0], {3, 2}, {1, 2}, {1, 1}, {2, 1}).flatten(),
                             fold(v[1], {5, 6}, {2, 2}, {1, 1}, {0, 0}, {1, 1}).flatten()});
               }),
               {input({2, 3, 7, 6}), input({2, 8, 20})},
               kTolF32Sum});
  // Compositions of session 46: LP pool, LRN, bilinear, channel shuffle and the multi-class
  // hinge loss (its targets are read on the host).
  c.push_back(
      {"lp_pool_lrn_bilinear_shuffle_multi_margin_f32",
       grads_of([](const Inputs& v) {
         return cat({lp_pool2d(v[0], 2.0, {2, 2}, {1, 1}).flatten(),
                     local_response_norm(v[0], 3, 0.1).flatten(),
                     channel_shuffle(v[0], 2).flatten(), bilinear(v[1], v[2], v[3]).flatten(),
                     multi_margin_loss(v[1], tensor<std::int64_t>({0, 2, 1, 3}).to(v[1].device()),
                                       2, 0.5, Tensor(), Reduction::None)});
       }),
       {input({2, 4, 5, 5}, kFloat32, 0.5, 1.5), input({4, 4}), input({4, 3}), input({2, 4, 3})},
       kTolF32Sum});
  // ctc_loss: computed on the host (a CUDA input copied there, the gradient copied back).
  c.push_back({"ctc_loss_f32",
               grads_of([](const Inputs& v) {
                 const Device d = v[0].device();
                 return ctc_loss(log_softmax(v[0], 2),
                                 tensor(std::vector<std::int64_t>{1, 2, 2, 3, 4, 0}, {2, 3}).to(d),
                                 tensor<std::int64_t>({8, 6}).to(d),
                                 tensor<std::int64_t>({3, 2}).to(d), 0, Reduction::None);
               }),
               {input({8, 2, 5})},
               kTolF32Sum});
  // The decompositions run on the host (a CUDA operand copied there and back), their gradients'
  // products and masks on the device: the same factorization on both, float64 to round-off.
  // Each input is shifted by 3 I (uniform entries in [-1, 1)), so the matrices are
  // well conditioned.
  c.push_back({"linalg_lu_inv_det_solve_cholesky_f64",
               grads_of([](const Inputs& v) {
                 const Tensor a = add(v[0], mul(eye(4, v[0].options()), 3.0));
                 const Tensor spd = matmul(a, transpose(a, -2, -1));
                 const auto [lu, pivots] = linalg::lu_factor(a);
                 return cat({linalg::inv(a).flatten(), linalg::det(a).flatten(),
                             linalg::solve(a, v[1]).flatten(), linalg::cholesky(spd).flatten(),
                             lu.flatten(), linalg::lu_solve(lu, pivots, v[1]).flatten(),
                             linalg::solve_triangular(a, v[1], true).flatten()});
               }),
               {input({2, 4, 4}, kFloat64), input({2, 4, 3}, kFloat64)},
               kTolF64});
  c.push_back({"linalg_qr_eigh_svd_f64",
               grads_of([](const Inputs& v) {
                 const auto [Q, R] = linalg::qr(v[0]);
                 const Tensor sym = add(v[1], transpose(v[1], -2, -1));
                 const auto [w, V] = linalg::eigh(sym);
                 const auto [U, S, Vh] = linalg::svd(v[0], false);
                 // Sign-free: V diag(w) V^T's pieces and U diag(S + 1) Vh.
                 return cat({Q.flatten(), R.flatten(), w.flatten(),
                             matmul(mul(V, unsqueeze(w, -2)), transpose(V, -2, -1)).flatten(),
                             matmul(mul(U, unsqueeze(add(S, 1.0), -2)), Vh).flatten()});
               }),
               {input({2, 6, 4}, kFloat64), input({2, 5, 5}, kFloat64)},
               kTolF64});
  // Session 47: fractional max pooling with given samples (the windows' starts worked out on the
  // host), the antialiased resize (matmuls by weight matrices) and the cross-map LRN.
  c.push_back(
      {"fractional_max_pool_antialias_cross_map_lrn_f32",
       grads_of([](const Inputs& v) {
         const Device d = v[0].device();
         const Tensor s2 =
             tensor(std::vector<float>{0.1f, 0.7f, 0.35f, 0.9f, 0.5f, 0.05f, 0.25f, 0.6f, 0.8f,
                                       0.15f, 0.45f, 0.55f, 0.95f, 0.3f, 0.65f, 0.2f},
                    {2, 4, 2})
                 .to(d);
         const Tensor s3 =
             tensor(std::vector<float>{0.4f, 0.75f, 0.12f, 0.58f, 0.33f, 0.87f}, {1, 2, 3}).to(d);
         return cat(
             {fractional_max_pool2d(v[0], {2, 2}, Size2{3, 3}, std::nullopt, s2).flatten(),
              fractional_max_pool3d(v[1], {2, 2, 2}, Size3{2, 3, 2}, std::nullopt, s3).flatten(),
              interpolate(v[0], Size2{2, 3}, std::nullopt, kBicubic, std::nullopt, std::nullopt,
                          /*antialias=*/true)
                  .flatten(),
              cross_map_lrn2d(v[0], 3, 0.1).flatten()});
       }),
       {input({2, 4, 5, 5}, kFloat32, 0.5, 1.5), input({1, 2, 4, 5, 5})},
       kTolF32Sum});
  // Session 48: grid_sample in every mode and padding (the gathers of Note [Sampling by
  // gathers]), affine_grid's matmul, and conv2d with kSame over an even kernel (a view of one
  // output more).
  c.push_back({"grid_sample_affine_grid_conv_same_f32",
               grads_of([](const Inputs& v) {
                 const Tensor warp = affine_grid(v[2], {2, 3, 3, 4});
                 return cat({grid_sample(v[0], v[1], kBilinear, kReflection).flatten(),
                             grid_sample(v[0], v[1], kBicubic, kBorder, true).flatten(),
                             grid_sample(v[0], v[1], kNearest).flatten(),
                             grid_sample(v[0], warp, kBilinear, kZeros, true).flatten(),
                             grid_sample(v[3], v[4], kBilinear, kBorder).flatten(),
                             conv2d(v[0], v[5], Tensor(), {1, 1}, kSame, {1, 2}).flatten()});
               }),
               {input({2, 3, 5, 6}), input({2, 4, 3, 2}, kFloat32, -1.2, 1.2),
                input({2, 2, 3}, kFloat32, -0.8, 0.8), input({1, 2, 3, 4, 5}),
                input({1, 2, 2, 3, 3}, kFloat32, -1.1, 1.1), input({4, 3, 2, 4})},
               kTolF32Sum});
  c.push_back({"conv3d_strided_dilated_groups_f32",
               grads_of([](const Inputs& v) {
                 return conv3d(v[0], v[1], v[2], {2, 1, 1}, {1, 0, 1}, {1, 2, 1}, 2);
               }),
               {input({2, 4, 5, 6, 7}), input({6, 2, 3, 2, 3}), input({6})},
               kTolF32Gemm});
  c.push_back({"max_pool3d_with_indices_ceil_f32",
               [](const Inputs& v) {
                 Tensor indices;
                 Outputs out = with_grads(v, [&](const Inputs& x) {
                   auto [y, i] = max_pool3d_with_indices(x[0], {2, 3, 2}, {2, 2, 1}, {1, 1, 1},
                                                         {1, 1, 2}, true);
                   indices = i;
                   return y;
                 });
                 out.push_back(indices);
                 return out;
               },
               {input({2, 3, 5, 7, 6})},
               kTolExact});
  c.push_back({"avg_adaptive_pool3d_f32",
               grads_of([](const Inputs& v) {
                 return cat(
                     {avg_pool3d(v[0], {3, 2, 2}, {2, 2, 1}, {1, 1, 0}, true, false).flatten(),
                      adaptive_avg_pool3d(v[0], {3, 2, 4}).flatten(),
                      adaptive_max_pool3d(v[0], {2, 3, 3}).flatten()});
               }),
               {input({2, 3, 5, 6, 7})},
               kTolF32Sum});
  c.push_back({"max_avg_pool1d_f64",
               grads_of([](const Inputs& v) {
                 return cat({max_pool1d(v[0], 3, 2, 1, 2, true).flatten(),
                             avg_pool1d(v[0], 4, 3, 2, true, false).flatten(),
                             adaptive_avg_pool1d(v[0], 5).flatten()});
               }),
               {input({2, 3, 17}, kFloat64)},
               kTolF64Sum});
  // Indices in [0, 9) over 40 entries in 6 bags (one empty): rows repeat within and across bags.
  c.push_back({"embedding_bag_modes_f32",
               grads_of([](const Inputs& v) {
                 const Tensor offsets =
                     tensor(std::vector<std::int64_t>{0, 7, 7, 15, 30, 33}, {6}).to(v[0].device());
                 return cat({embedding_bag(v[1], v[0], offsets, kSum).flatten(),
                             embedding_bag(v[1], v[0], offsets, kMean).flatten(),
                             embedding_bag(v[1], v[0], offsets, kMax).flatten()});
               }),
               {input({9, 16}), input({40}, kInt64, 0.0, 9.0)},
               kTolF32Sum});
  c.push_back({"conv_transpose1d_interpolate_area_f32",
               grads_of([](const Inputs& v) {
                 return cat({conv_transpose1d(v[0], v[1], v[2], 2, 1, 1, 2, 2).flatten(),
                             interpolate(v[3], Size2{5, 3}, std::nullopt, kArea).flatten()});
               }),
               {input({2, 4, 9}), input({4, 3, 3}), input({6}), input({2, 3, 9, 8})},
               kTolF32Sum});
  // conv_transpose2d over the depth planes, then index_add into the output depths (session 46).
  c.push_back(
      {"conv_transpose3d_strided_groups_f32",
       grads_of([](const Inputs& v) {
         return conv_transpose3d(v[0], v[1], v[2], {2, 1, 2}, {1, 0, 1}, {1, 0, 0}, 2, {1, 2, 1});
       }),
       {input({2, 4, 3, 5, 4}), input({4, 3, 2, 3, 2}), input({6})},
       kTolF32Sum});
  c.push_back(
      {"embedding_bag_per_sample_weights_f32",
       grads_of([](const Inputs& v) { return embedding_bag(v[1], v[0], Tensor(), kSum, v[2]); }),
       {input({9, 16}), input({5, 8}, kInt64, 0.0, 9.0), input({5, 8}, kFloat32, 0.5, 1.5)},
       kTolF32Sum});
  return c;
}

}  // namespace

std::vector<OpCase> nn_layer_op_cases() {
  std::vector<OpCase> c;
  for (auto section : {normalization_cases, embedding_cases, indexing_cases, conv_transpose_cases,
                       interpolate_cases, volumetric_recurrent_cases}) {
    for (OpCase& row : section())
      c.push_back(std::move(row));
  }
  return c;
}

}  // namespace leangrad::test
