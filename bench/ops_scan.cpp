// ops_scan: forward + backward through autograd of 120 ops at realistic shapes (the ten
// "_fwd" rows forward only), float32, one line per op (its name and the median of 5 timed runs in
// ms, after 2 untimed ones), for a broad look at where a CPU kernel is slower than it should be.
// bench/compare/ops_scan_vs_libtorch.sh runs it beside LibTorch's side
// (bench/compare/libtorch/libtorch_ops_scan.cpp: the same ops, names, shapes and order) at 1 and 2
// threads and prints both with their ratio. A scan, not a specification: a row that stands out gets
// a benchmark of its own (bench_layers, bench_ops ...) and a look with perf.
//   OMP_NUM_THREADS=1 build/bench/ops_scan [NAME_SUBSTRING]
// Each op's output y is differentiated with y.backward(ones_like(y)) into x.grad, cleared before
// each run.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <string>
#include <tuple>
#include <vector>

#include <leangrad/leangrad.h>

namespace {

using leangrad::Tensor;

double median_ms(const std::function<void()>& run) {
  run();
  run();
  std::vector<double> ms;
  for (int i = 0; i < 5; ++i) {
    const auto begin = std::chrono::steady_clock::now();
    run();
    const auto end = std::chrono::steady_clock::now();
    ms.push_back(std::chrono::duration<double, std::milli>(end - begin).count());
  }
  std::sort(ms.begin(), ms.end());
  return ms[2];
}

struct Op {
  const char* name;
  Tensor x;  // the input differentiated
  std::function<Tensor(const Tensor&)> f;
};

// Whether `name` contains one of the comma-separated pieces of `only` (everything when empty).
bool selected(const std::string& name, const std::string& only) {
  if (only.empty()) return true;
  std::size_t start = 0;
  while (start <= only.size()) {
    const std::size_t comma = std::min(only.find(',', start), only.size());
    const std::string piece = only.substr(start, comma - start);
    if (!piece.empty() && name.find(piece) != std::string::npos) return true;
    start = comma + 1;
  }
  return false;
}

}  // namespace

int main(int argc, char** argv) {
  namespace lg = leangrad;
  const std::string only = argc > 1 ? argv[1] : "";
  lg::manual_seed(0);
  const Tensor queries = lg::randn({8, 8, 256, 64}).requires_grad_(true);
  const Tensor keys = lg::randn({8, 8, 256, 64});
  const Tensor chain = lg::randn({512, 512}).requires_grad_(true);
  const Tensor sequence = lg::randn({50, 32, 256}).requires_grad_(true);      // (T, N, features)
  const Tensor volume = lg::randn({4, 16, 16, 32, 32}).requires_grad_(true);  // (N, C, D, H, W)
  const Tensor volume_w = lg::randn({32, 16, 3, 3, 3});
  const Tensor deconv3d_w = lg::randn({16, 8, 4, 4, 4});  // (C_in, C_out, kD, kH, kW)
  const Tensor bag_ids = ((lg::rand({64 * 20}) * 49999.0).to(lg::kInt64));
  const Tensor bag_offsets = lg::arange(0, 64 * 20, 20).to(lg::kInt64);  // 64 bags of 20
  lg::nn::LSTM lstm(lg::nn::LSTMOptions(256, 512));
  lg::nn::GRU gru(lg::nn::GRUOptions(256, 512));
  const Tensor chain2 = lg::randn({512, 512});
  // The decompositions: (256, 256) matrices and a batch of 4096 (8, 8) ones, made well
  // conditioned (or positive definite, or symmetric) inside each op.
  const Tensor square = (lg::randn({256, 256}) * 0.1).requires_grad_(true);
  const Tensor small_squares = (lg::randn({4096, 8, 8}) * 0.1).requires_grad_(true);
  const Tensor rhs = lg::randn({256, 16});
  const Tensor eye256 = lg::eye(256);
  // One large matrix: (1024, 1024), where the factorizations' blocking and threads show.
  const Tensor square1024 = (lg::randn({1024, 1024}) * 0.01).requires_grad_(true);
  const Tensor rhs1024 = lg::randn({1024, 16});
  const Tensor eye1024 = lg::eye(1024);
  const Tensor eye8 = lg::eye(8);
  const Tensor chain3 = lg::randn({512, 512});
  const Tensor image = lg::randn({16, 64, 64, 64}).requires_grad_(true);
  const Tensor pool_in = lg::randn({64, 64, 56, 56}).requires_grad_(true);
  const Tensor table = lg::randn({50000, 512}).requires_grad_(true);
  const Tensor ids = (lg::rand({64, 128}) * 49999.0).to(lg::kInt64);
  const Tensor deconv_in = lg::randn({16, 64, 32, 32}).requires_grad_(true);
  const Tensor deconv_w = lg::randn({64, 32, 4, 4});
  const Tensor big = lg::randn({4096, 4096}).requires_grad_(true);
  const Tensor big_rows = lg::randn({4096, 4096});
  const Tensor big_target = lg::randn({4096, 4096});
  const Tensor big_prob = lg::rand({4096, 4096});
  // Factors near 1: products of 4096 of them stay normal numbers (randn's would overflow).
  const Tensor near_one = (lg::randn({4096, 4096}) * 0.01 + 1.0).requires_grad_(true);
  const Tensor features = lg::randn({64, 512, 7, 7}).requires_grad_(true);
  const Tensor channels = lg::randn({64, 256, 28, 28}).requires_grad_(true);
  const Tensor shuffle_in = lg::randn({16, 256, 48, 48}).requires_grad_(true);
  const Tensor pos = (lg::rand({2048, 4096}) + 0.5).requires_grad_(true);  // in [0.5, 1.5)
  const Tensor pos2 = lg::rand({2048, 4096}) + 0.5;
  const Tensor pos2_mask = lg::gt(pos2, lg::full_like(pos2, 1.0));
  const Tensor rows = (lg::rand({2048}) * 4095.0).to(lg::kInt64);           // in [0, 4096)
  const Tensor columns = (lg::rand({4096, 1024}) * 4095.0).to(lg::kInt64);  // in [0, 4096)
  const Tensor targets = (lg::rand({4096, 4096}) * 4095.0).to(lg::kInt64);  // in [0, 4096)
  const Tensor prelu_weight = lg::full({256}, 0.25);
  // CTC: 200 steps of 32 sequences over 40 classes, targets of 50 labels in [1, 40).
  const Tensor ctc_logits = lg::randn({200, 32, 40}).requires_grad_(true);
  const Tensor ctc_targets = (lg::rand({32, 50}) * 38.99 + 1.0).to(lg::kInt64);
  const Tensor ctc_input_lengths = lg::full({32}, 200.0).to(lg::kInt64);
  const Tensor ctc_target_lengths = lg::full({32}, 50.0).to(lg::kInt64);
  // Session 47: fractional max pooling with samples drawn once (each side its own uniform draw),
  // and the adaptive softmax over 20000 classes (shortlist 2000, clusters to 10000 and 20000).
  const Tensor fraction_samples = lg::rand({16, 64, 2});
  const Tensor hidden = lg::randn({512, 256}).requires_grad_(true);
  const Tensor word_ids = (lg::rand({512}) * 19999.0).to(lg::kInt64);
  lg::nn::AdaptiveLogSoftmaxWithLoss adaptive_softmax(
      lg::nn::AdaptiveLogSoftmaxWithLossOptions(256, 20000, {2000, 10000}));
  const std::vector<Op> ops = {
      {"interpolate_bilinear", image,
       [](const Tensor& x) {
         return lg::interpolate(x, std::nullopt, lg::Scale2{2.0, 2.0}, lg::kBilinear, false);
       }},
      {"interpolate_nearest", image,
       [](const Tensor& x) {
         return lg::interpolate(x, std::nullopt, lg::Scale2{2.0, 2.0}, lg::kNearest);
       }},
      {"embedding", table, [&](const Tensor& x) { return lg::embedding(ids, x); }},
      {"avg_pool2d", pool_in,
       [](const Tensor& x) {
         return lg::avg_pool2d(x, {2, 2});
       }},
      {"max_pool2d", pool_in,
       [](const Tensor& x) {
         return lg::max_pool2d(x, {2, 2});
       }},
      {"conv_transpose2d", deconv_in,
       [&](const Tensor& x) {
         return lg::conv_transpose2d(x, deconv_w, Tensor(), {2, 2}, {1, 1});
       }},
      {"mse_loss", big, [&](const Tensor& x) { return lg::mse_loss(x, big_target); }},
      {"l1_loss", big, [&](const Tensor& x) { return lg::l1_loss(x, big_target); }},
      {"bce_with_logits", big,
       [&](const Tensor& x) { return lg::binary_cross_entropy_with_logits(x, big_prob); }},
      {"adaptive_avg_pool2d", features,
       [](const Tensor& x) {
         return lg::adaptive_avg_pool2d(x, {1, 1});
       }},
      {"sum_dim1", big, [](const Tensor& x) { return x.sum(1); }},
      {"mean", big, [](const Tensor& x) { return x.mean(); }},
      {"transpose_contiguous", big, [](const Tensor& x) { return x.t().contiguous(); }},
      {"add_transposed", big, [&](const Tensor& x) { return x.t() + big_rows; }},
      {"cat_dim1", channels,
       [](const Tensor& x) {
         return lg::cat({x, x}, 1);
       }},
      {"pixel_shuffle", shuffle_in, [](const Tensor& x) { return lg::pixel_shuffle(x, 2); }},
      {"var_dim1", big, [](const Tensor& x) { return x.var(1); }},
      {"sin", pos, [](const Tensor& x) { return lg::sin(x); }},
      {"cos", pos, [](const Tensor& x) { return lg::cos(x); }},
      {"tan", pos, [](const Tensor& x) { return lg::tan(x); }},
      {"atan", pos, [](const Tensor& x) { return lg::atan(x); }},
      {"asin", pos, [](const Tensor& x) { return lg::asin(x * 0.5); }},
      {"lgamma", pos, [](const Tensor& x) { return lg::lgamma(x * 8.0); }},
      {"digamma", pos, [](const Tensor& x) { return lg::digamma(x * 8.0); }},
      {"erfinv", pos, [](const Tensor& x) { return lg::erfinv(x - 1.0); }},
      {"erfc", pos, [](const Tensor& x) { return lg::erfc(x * 2.0 - 2.0); }},
      {"special_erfcx", pos, [](const Tensor& x) { return lg::special_erfcx(x * 8.0 - 4.0); }},
      {"special_ndtri", pos, [](const Tensor& x) { return lg::special_ndtri(x * 0.9 - 0.4); }},
      {"i0", pos, [](const Tensor& x) { return lg::i0(x * 20.0 - 20.0); }},
      {"special_i1e", pos, [](const Tensor& x) { return lg::special_i1e(x * 40.0 - 40.0); }},
      // Forward only, x + f(x.detach()): LibTorch 1.13's Bessel functions have no gradient.
      {"special_bessel_j0_fwd", pos,
       [](const Tensor& x) { return x + lg::special_bessel_j0(x.detach() * 40.0 - 20.0); }},
      // The central range alone, [-5, 5) (Note [Special functions in lanes]).
      {"special_bessel_j0_central_fwd", pos,
       [](const Tensor& x) { return x + lg::special_bessel_j0(x.detach() * 10.0 - 10.0); }},
      {"special_bessel_y1_fwd", pos,
       [](const Tensor& x) { return x + lg::special_bessel_y1(x.detach() * 20.0 + 0.1); }},
      {"special_modified_bessel_k1_fwd", pos,
       [](const Tensor& x) { return x + lg::special_modified_bessel_k1(x.detach() * 10.0 + 0.01); }},
      {"special_airy_ai_fwd", pos,
       [](const Tensor& x) { return x + lg::special_airy_ai(x.detach() * 20.0 - 10.0); }},
      // The central range alone, [-2, 1).
      {"special_airy_ai_central_fwd", pos,
       [](const Tensor& x) { return x + lg::special_airy_ai(x.detach() * 3.0 - 3.5); }},
      // Forward only: LibTorch's orthogonal polynomials have no gradient either. Degree 12:
      // Chebyshev's closed form, Legendre's and Hermite's recurrences.
      {"special_chebyshev_polynomial_t_fwd", pos, [](const Tensor& x) {
         return x + lg::special_chebyshev_polynomial_t(x.detach() * 2.0 - 1.0, 12.0);
       }},
      {"special_legendre_polynomial_p_fwd", pos, [](const Tensor& x) {
         return x + lg::special_legendre_polynomial_p(x.detach() * 2.0 - 1.0, 12.0);
       }},
      {"special_hermite_polynomial_h_fwd", pos, [](const Tensor& x) {
         return x + lg::special_hermite_polynomial_h(x.detach() * 4.0 - 2.0, 12.0);
       }},
      {"sinc", pos, [](const Tensor& x) { return lg::sinc(x * 6.0 - 6.0); }},
      {"igamma", pos, [&](const Tensor& x) { return lg::igamma(pos2 * 8.0, x * 8.0); }},
      {"xlogy", pos, [&](const Tensor& x) { return lg::xlogy(x, pos2); }},
      {"logit", pos, [](const Tensor& x) { return lg::logit(x * 0.9 - 0.4); }},
      {"hypot", pos, [&](const Tensor& x) { return lg::hypot(x, pos2); }},
      {"fmax", pos, [&](const Tensor& x) { return lg::fmax(x, pos2); }},
      {"sinh", pos, [](const Tensor& x) { return lg::sinh(x); }},
      {"pow_scalar", pos, [](const Tensor& x) { return lg::pow(x, 3.0); }},
      {"pow_tensor", pos, [&](const Tensor& x) { return lg::pow(x, pos2); }},
      {"sqrt", pos, [](const Tensor& x) { return lg::sqrt(x); }},
      {"rsqrt", pos, [](const Tensor& x) { return lg::rsqrt(x); }},
      {"reciprocal", pos, [](const Tensor& x) { return lg::reciprocal(x); }},
      {"log2", pos, [](const Tensor& x) { return lg::log2(x); }},
      {"exp2", pos, [](const Tensor& x) { return lg::exp2(x); }},
      {"log10", pos, [](const Tensor& x) { return lg::log10(x); }},
      {"atan2", pos, [&](const Tensor& x) { return lg::atan2(x, pos2); }},
      {"amax_dim1", pos, [](const Tensor& x) { return lg::amax(x, {1}); }},
      {"std_dim1", pos, [](const Tensor& x) { return lg::std(x, {1}); }},
      {"dropout", pos, [](const Tensor& x) { return lg::dropout(x, 0.5, true); }},
      {"smooth_l1_loss", pos, [&](const Tensor& x) { return lg::smooth_l1_loss(x, pos2); }},
      {"huber_loss", pos, [&](const Tensor& x) { return lg::huber_loss(x, pos2); }},
      {"kl_div", pos, [&](const Tensor& x) { return lg::kl_div(x, pos2); }},
      {"binary_cross_entropy", pos,
       [&](const Tensor& x) { return lg::binary_cross_entropy(lg::sigmoid(x), pos2 * 0.5); }},
      {"cosine_similarity", pos, [&](const Tensor& x) { return lg::cosine_similarity(x, pos2); }},
      {"pairwise_distance", pos, [&](const Tensor& x) { return lg::pairwise_distance(x, pos2); }},
      {"maximum", pos, [&](const Tensor& x) { return lg::maximum(x, pos2); }},
      {"masked_fill", pos, [&](const Tensor& x) { return lg::masked_fill(x, pos2_mask, 0.0); }},
      {"softplus", pos, [](const Tensor& x) { return lg::softplus(x); }},
      {"log_softmax_dim0", pos, [](const Tensor& x) { return lg::log_softmax(x, 0); }},
      {"index_select_dim0", big, [&](const Tensor& x) { return lg::index_select(x, 0, rows); }},
      {"index_select_dim1", big, [&](const Tensor& x) { return lg::index_select(x, 1, rows); }},
      {"gather_dim1", big, [&](const Tensor& x) { return lg::gather(x, 1, columns); }},
      {"scatter_add_dim1", big,
       [&](const Tensor& x) { return lg::scatter_add(x, 1, targets, big_target); }},
      {"scatter_dim1", big,
       [&](const Tensor& x) { return lg::scatter(x, 1, targets, big_target); }},
      {"scatter_reduce_amax_dim1", big,
       [&](const Tensor& x) { return lg::scatter_reduce(x, 1, targets, big_target, "amax"); }},
      {"scatter_reduce_prod_dim1", near_one,
       [&](const Tensor& x) { return lg::scatter_reduce(x, 1, targets, big_target, "prod"); }},
      {"cumsum_dim0", big, [](const Tensor& x) { return lg::cumsum(x, 0); }},
      {"cumsum_dim1", big, [](const Tensor& x) { return lg::cumsum(x, 1); }},
      {"prod_dim1", near_one, [](const Tensor& x) { return lg::prod(x, 1); }},
      {"cumprod_dim1", near_one, [](const Tensor& x) { return lg::cumprod(x, 1); }},
      {"logcumsumexp_dim1", big, [](const Tensor& x) { return lg::logcumsumexp(x, 1); }},
      {"cummax_dim1", big, [](const Tensor& x) { return std::get<0>(lg::cummax(x, 1)); }},
      {"median_dim1", big, [](const Tensor& x) { return std::get<0>(lg::median(x, 1)); }},
      {"quantile_dim1", big, [](const Tensor& x) { return lg::quantile(x, 0.3, 1); }},
      {"quantile_9q_dim1", big,
       [](const Tensor& x) { return lg::quantile(x, lg::linspace(0.1, 0.9, 9), 1); }},
      {"logsumexp_dim1", big, [](const Tensor& x) { return lg::logsumexp(x, {1}); }},
      {"norm_dim1", big, [](const Tensor& x) { return lg::norm(x, 2.0, {1}); }},
      {"flip_dim1", big, [](const Tensor& x) { return lg::flip(x, {1}); }},
      {"roll_dim1", big, [](const Tensor& x) { return lg::roll(x, 7, 1); }},
      {"tril", big, [](const Tensor& x) { return lg::tril(x); }},
      {"pad_reflect", image,
       [](const Tensor& x) {
         return lg::pad(x, {1, 1, 1, 1}, lg::kReflect);
       }},
      {"interpolate_bicubic", image,
       [](const Tensor& x) {
         return lg::interpolate(x, std::nullopt, lg::Scale2{2.0, 2.0}, lg::kBicubic, false);
       }},
      {"instance_norm", image, [](const Tensor& x) { return lg::instance_norm(x); }},
      {"hardswish", pos, [](const Tensor& x) { return lg::hardswish(x); }},
      {"log_sigmoid", pos, [](const Tensor& x) { return lg::log_sigmoid(x); }},
      {"prelu", channels, [&](const Tensor& x) { return lg::prelu(x, prelu_weight); }},
      {"einsum_attention", queries,
       [&](const Tensor& x) {
         return lg::einsum("bhqd,bhkd->bhqk", {x, keys});
       }},
      {"einsum_chain", chain,
       [&](const Tensor& x) {
         return lg::einsum("ij,jk,kl->il", {x, chain2, chain3});
       }},
      {"lstm", sequence, [&](const Tensor& x) { return std::get<0>(lstm->forward(x)); }},
      {"gru", sequence, [&](const Tensor& x) { return std::get<0>(gru->forward(x)); }},
      {"conv3d", volume,
       [&](const Tensor& x) {
         return lg::conv3d(x, volume_w, Tensor(), {1, 1, 1}, {1, 1, 1});
       }},
      {"max_pool3d", volume,
       [&](const Tensor& x) {
         return lg::max_pool3d(x, {2, 2, 2});
       }},
      {"embedding_bag", table,
       [&](const Tensor& x) { return lg::embedding_bag(bag_ids, x, bag_offsets, lg::kSum); }},
      {"conv_transpose3d", volume,
       [&](const Tensor& x) {
         return lg::conv_transpose3d(x, deconv3d_w, Tensor(), {2, 2, 2}, {1, 1, 1});
       }},
      {"unfold_patches", image,
       [](const Tensor& x) {
         return lg::unfold(x, {2, 2}, {1, 1}, {0, 0}, {2, 2});
       }},
      {"ctc_loss", ctc_logits,
       [&](const Tensor& x) {
         return lg::ctc_loss(lg::log_softmax(x, 2), ctc_targets, ctc_input_lengths,
                             ctc_target_lengths);
       }},
      {"interpolate_trilinear", volume,
       [](const Tensor& x) {
         return lg::interpolate(x, std::nullopt, std::vector<double>{2, 2, 2}, lg::kTrilinear,
                                false);
       }},
      {"fractional_max_pool2d", image,
       [&](const Tensor& x) {
         return lg::fractional_max_pool2d(x, {2, 2}, lg::Size2{40, 40}, std::nullopt,
                                          fraction_samples);
       }},
      {"interpolate_bilinear_antialias", image,
       [](const Tensor& x) {
         return lg::interpolate(x, lg::Size2{24, 24}, std::nullopt, lg::kBilinear, false,
                                std::nullopt, /*antialias=*/true);
       }},
      {"cross_map_lrn2d", channels,
       [](const Tensor& x) { return lg::cross_map_lrn2d(x, 5, 1e-4, 0.75, 1.0); }},
      {"adaptive_log_softmax", hidden,
       [&](const Tensor& x) { return adaptive_softmax(x, word_ids).output; }},
      {"linalg_inv_256", square, [&](const Tensor& x) { return lg::linalg::inv(x + eye256); }},
      {"linalg_solve_256", square,
       [&](const Tensor& x) { return lg::linalg::solve(x + eye256, rhs); }},
      {"linalg_det_batched_8", small_squares,
       [&](const Tensor& x) { return lg::linalg::det(x + eye8); }},
      // Forward only, x + f(x.detach()): LibTorch's LDL has no gradient. An indefinite matrix.
      {"linalg_ldl_256_fwd", square,
       [&](const Tensor& x) {
         const auto [ld, pivots] = lg::linalg::ldl_factor(x.detach() + x.detach().t());
         return x.narrow(1, 0, 16) + lg::linalg::ldl_solve(ld, pivots, rhs);
       }},
      {"linalg_cholesky_256", square,
       [&](const Tensor& x) { return lg::linalg::cholesky(x.matmul(x.t()) + eye256); }},
      {"linalg_solve_1024", square1024,
       [&](const Tensor& x) { return lg::linalg::solve(x + eye1024, rhs1024); }},
      {"linalg_cholesky_1024", square1024,
       [&](const Tensor& x) { return lg::linalg::cholesky(x.matmul(x.t()) + eye1024); }},
      {"linalg_qr_256", square,
       [](const Tensor& x) {
         const auto [q, r] = lg::linalg::qr(x);
         return q.matmul(r);
       }},
      {"linalg_eigh_256", square,
       [](const Tensor& x) {
         const auto [w, v] = lg::linalg::eigh(x + x.t());
         return (v * w).matmul(v.t());
       }},
      {"linalg_svd_256", square,
       [](const Tensor& x) {
         const auto [u, s, vh] = lg::linalg::svd(x, false);
         return (u * s).matmul(vh);
       }},
      {"linalg_svd_batched_8", small_squares,
       [](const Tensor& x) {
         const auto [u, s, vh] = lg::linalg::svd(x, false);
         return (u * s.unsqueeze(-2)).matmul(vh);
       }},
  };
  for (const Op& op : ops) {
    if (!selected(op.name, only)) continue;
    Tensor x = op.x;
    const double ms = median_ms([&] {
      x.mutable_grad() = Tensor();
      const Tensor y = op.f(x);
      y.backward(lg::ones_like(y));
    });
    std::printf("%s %.3f\n", op.name, ms);
  }
  return 0;
}
