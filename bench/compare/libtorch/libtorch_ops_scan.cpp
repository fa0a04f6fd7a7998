// libtorch-ops-scan: LibTorch's side of bench/compare/ops_scan_vs_libtorch.sh. The ops of
// bench/ops_scan.cpp with the same names, shapes and order, as a LibTorch 1.13 user writes them,
// forward + backward through autograd, float32, one line per op (its name and the median of 5
// timed runs in ms, after 2 untimed ones).
//   libtorch-ops-scan [--threads N] [NAME_SUBSTRING]
#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <tuple>
#include <vector>

namespace {

namespace F = torch::nn::functional;
using torch::Tensor;

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
  Tensor x;
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
  std::string only;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--threads") == 0 && i + 1 < argc) {
      at::set_num_interop_threads(1);
      at::set_num_threads(std::atoi(argv[++i]));
    } else {
      only = argv[i];
    }
  }
  torch::manual_seed(0);
  const Tensor queries = torch::randn({8, 8, 256, 64}).requires_grad_(true);
  const Tensor keys = torch::randn({8, 8, 256, 64});
  const Tensor chain = torch::randn({512, 512}).requires_grad_(true);
  const Tensor sequence = torch::randn({50, 32, 256}).requires_grad_(true);      // (T, N, features)
  const Tensor volume = torch::randn({4, 16, 16, 32, 32}).requires_grad_(true);  // (N, C, D, H, W)
  const Tensor volume_w = torch::randn({32, 16, 3, 3, 3});
  const Tensor deconv3d_w = torch::randn({16, 8, 4, 4, 4});  // (C_in, C_out, kD, kH, kW)
  const Tensor bag_ids = ((torch::rand({64 * 20}) * 49999.0).to(torch::kInt64));
  const Tensor bag_offsets = torch::arange(0, 64 * 20, 20).to(torch::kInt64);  // 64 bags of 20
  torch::nn::LSTM lstm(torch::nn::LSTMOptions(256, 512));
  torch::nn::GRU gru(torch::nn::GRUOptions(256, 512));
  const Tensor chain2 = torch::randn({512, 512});
  // The decompositions: (256, 256) matrices and a batch of 4096 (8, 8) ones, made well
  // conditioned (or positive definite, or symmetric) inside each op.
  const Tensor square = (torch::randn({256, 256}) * 0.1).requires_grad_(true);
  const Tensor small_squares = (torch::randn({4096, 8, 8}) * 0.1).requires_grad_(true);
  const Tensor rhs = torch::randn({256, 16});
  const Tensor eye256 = torch::eye(256);
  // One large matrix: (1024, 1024), where the factorizations' blocking and threads show.
  const Tensor square1024 = (torch::randn({1024, 1024}) * 0.01).requires_grad_(true);
  const Tensor rhs1024 = torch::randn({1024, 16});
  const Tensor eye1024 = torch::eye(1024);
  const Tensor eye8 = torch::eye(8);
  const Tensor chain3 = torch::randn({512, 512});
  const Tensor image = torch::randn({16, 64, 64, 64}).requires_grad_(true);
  const Tensor pool_in = torch::randn({64, 64, 56, 56}).requires_grad_(true);
  const Tensor table = torch::randn({50000, 512}).requires_grad_(true);
  const Tensor ids = (torch::rand({64, 128}) * 49999.0).to(torch::kLong);
  const Tensor deconv_in = torch::randn({16, 64, 32, 32}).requires_grad_(true);
  const Tensor deconv_w = torch::randn({64, 32, 4, 4});
  const Tensor big = torch::randn({4096, 4096}).requires_grad_(true);
  const Tensor big_rows = torch::randn({4096, 4096});
  const Tensor big_target = torch::randn({4096, 4096});
  const Tensor big_prob = torch::rand({4096, 4096});
  const Tensor near_one = (torch::randn({4096, 4096}) * 0.01 + 1.0).requires_grad_(true);
  const Tensor features = torch::randn({64, 512, 7, 7}).requires_grad_(true);
  const Tensor channels = torch::randn({64, 256, 28, 28}).requires_grad_(true);
  const Tensor shuffle_in = torch::randn({16, 256, 48, 48}).requires_grad_(true);
  const Tensor pos = (torch::rand({2048, 4096}) + 0.5).requires_grad_(true);
  const Tensor pos2 = torch::rand({2048, 4096}) + 0.5;
  const Tensor pos2_mask = pos2 > 1.0;
  const Tensor rows = (torch::rand({2048}) * 4095.0).to(torch::kLong);           // in [0, 4096)
  const Tensor columns = (torch::rand({4096, 1024}) * 4095.0).to(torch::kLong);  // in [0, 4096)
  const Tensor targets = (torch::rand({4096, 4096}) * 4095.0).to(torch::kLong);  // in [0, 4096)
  const Tensor prelu_weight = torch::full({256}, 0.25);
  // CTC: 200 steps of 32 sequences over 40 classes, targets of 50 labels in [1, 40).
  const Tensor ctc_logits = torch::randn({200, 32, 40}).requires_grad_(true);
  const Tensor ctc_targets = (torch::rand({32, 50}) * 38.99 + 1.0).to(torch::kLong);
  const Tensor ctc_input_lengths = torch::full({32}, 200, torch::kLong);
  const Tensor ctc_target_lengths = torch::full({32}, 50, torch::kLong);
  const auto bilinear = F::InterpolateFuncOptions()
                            .scale_factor(std::vector<double>{2, 2})
                            .mode(torch::kBilinear)
                            .align_corners(false);
  const auto nearest =
      F::InterpolateFuncOptions().scale_factor(std::vector<double>{2, 2}).mode(torch::kNearest);
  // Session 47: fractional max pooling with samples drawn once (each side its own uniform draw),
  // and the adaptive softmax over 20000 classes (shortlist 2000, clusters to 10000 and 20000).
  const Tensor fraction_samples = torch::rand({16, 64, 2});
  const Tensor hidden = torch::randn({512, 256}).requires_grad_(true);
  const Tensor word_ids = (torch::rand({512}) * 19999.0).to(torch::kLong);
  torch::nn::AdaptiveLogSoftmaxWithLoss adaptive_softmax(
      torch::nn::AdaptiveLogSoftmaxWithLossOptions(256, 20000, {2000, 10000}));
  torch::nn::CrossMapLRN2d cross_map(torch::nn::CrossMapLRN2dOptions(5));
  const std::vector<Op> ops = {
      {"interpolate_bilinear", image, [&](const Tensor& x) { return F::interpolate(x, bilinear); }},
      {"interpolate_nearest", image, [&](const Tensor& x) { return F::interpolate(x, nearest); }},
      {"embedding", table, [&](const Tensor& x) { return torch::embedding(x, ids); }},
      {"avg_pool2d", pool_in,
       [](const Tensor& x) {
         return torch::avg_pool2d(x, {2, 2});
       }},
      {"max_pool2d", pool_in,
       [](const Tensor& x) {
         return torch::max_pool2d(x, {2, 2});
       }},
      {"conv_transpose2d", deconv_in,
       [&](const Tensor& x) { return torch::conv_transpose2d(x, deconv_w, {}, 2, 1); }},
      {"mse_loss", big, [&](const Tensor& x) { return torch::mse_loss(x, big_target); }},
      {"l1_loss", big, [&](const Tensor& x) { return torch::l1_loss(x, big_target); }},
      {"bce_with_logits", big,
       [&](const Tensor& x) { return torch::binary_cross_entropy_with_logits(x, big_prob); }},
      {"adaptive_avg_pool2d", features,
       [](const Tensor& x) {
         return torch::adaptive_avg_pool2d(x, {1, 1});
       }},
      {"sum_dim1", big, [](const Tensor& x) { return x.sum(1); }},
      {"mean", big, [](const Tensor& x) { return x.mean(); }},
      {"transpose_contiguous", big, [](const Tensor& x) { return x.t().contiguous(); }},
      {"add_transposed", big, [&](const Tensor& x) { return x.t() + big_rows; }},
      {"cat_dim1", channels,
       [](const Tensor& x) {
         return torch::cat({x, x}, 1);
       }},
      {"pixel_shuffle", shuffle_in, [](const Tensor& x) { return torch::pixel_shuffle(x, 2); }},
      {"var_dim1", big, [](const Tensor& x) { return x.var(1); }},
      {"sin", pos, [](const Tensor& x) { return torch::sin(x); }},
      {"cos", pos, [](const Tensor& x) { return torch::cos(x); }},
      {"tan", pos, [](const Tensor& x) { return torch::tan(x); }},
      {"atan", pos, [](const Tensor& x) { return torch::atan(x); }},
      {"asin", pos, [](const Tensor& x) { return torch::asin(x * 0.5); }},
      {"lgamma", pos, [](const Tensor& x) { return torch::lgamma(x * 8.0); }},
      {"digamma", pos, [](const Tensor& x) { return torch::digamma(x * 8.0); }},
      {"erfinv", pos, [](const Tensor& x) { return torch::erfinv(x - 1.0); }},
      {"erfc", pos, [](const Tensor& x) { return torch::erfc(x * 2.0 - 2.0); }},
      {"special_erfcx", pos, [](const Tensor& x) { return torch::special::erfcx(x * 8.0 - 4.0); }},
      {"special_ndtri", pos, [](const Tensor& x) { return torch::special::ndtri(x * 0.9 - 0.4); }},
      {"i0", pos, [](const Tensor& x) { return torch::i0(x * 20.0 - 20.0); }},
      {"special_i1e", pos, [](const Tensor& x) { return torch::special::i1e(x * 40.0 - 40.0); }},
      // Forward only, x + f(x.detach()): LibTorch 1.13's Bessel functions have no gradient.
      {"special_bessel_j0_fwd", pos,
       [](const Tensor& x) { return x + torch::special::bessel_j0(x.detach() * 40.0 - 20.0); }},
      // The central range alone, [-5, 5) (Note [Special functions in lanes]).
      {"special_bessel_j0_central_fwd", pos,
       [](const Tensor& x) { return x + torch::special::bessel_j0(x.detach() * 10.0 - 10.0); }},
      {"special_bessel_y1_fwd", pos,
       [](const Tensor& x) { return x + torch::special::bessel_y1(x.detach() * 20.0 + 0.1); }},
      {"special_modified_bessel_k1_fwd", pos,
       [](const Tensor& x) {
         return x + torch::special::modified_bessel_k1(x.detach() * 10.0 + 0.01);
       }},
      {"special_airy_ai_fwd", pos,
       [](const Tensor& x) { return x + torch::special::airy_ai(x.detach() * 20.0 - 10.0); }},
      // The central range alone, [-2, 1).
      {"special_airy_ai_central_fwd", pos,
       [](const Tensor& x) { return x + torch::special::airy_ai(x.detach() * 3.0 - 3.5); }},
      // Forward only: LibTorch's orthogonal polynomials have no gradient either. Degree 12:
      // Chebyshev's closed form, Legendre's and Hermite's recurrences.
      {"special_chebyshev_polynomial_t_fwd", pos, [](const Tensor& x) {
         return x + torch::special::chebyshev_polynomial_t(x.detach() * 2.0 - 1.0, 12.0);
       }},
      {"special_legendre_polynomial_p_fwd", pos, [](const Tensor& x) {
         return x + torch::special::legendre_polynomial_p(x.detach() * 2.0 - 1.0, 12.0);
       }},
      {"special_hermite_polynomial_h_fwd", pos, [](const Tensor& x) {
         return x + torch::special::hermite_polynomial_h(x.detach() * 4.0 - 2.0, 12.0);
       }},
      {"sinc", pos, [](const Tensor& x) { return torch::sinc(x * 6.0 - 6.0); }},
      {"igamma", pos, [&](const Tensor& x) { return torch::igamma(pos2 * 8.0, x * 8.0); }},
      {"xlogy", pos, [&](const Tensor& x) { return torch::xlogy(x, pos2); }},
      {"logit", pos, [](const Tensor& x) { return torch::logit(x * 0.9 - 0.4); }},
      {"hypot", pos, [&](const Tensor& x) { return torch::hypot(x, pos2); }},
      {"fmax", pos, [&](const Tensor& x) { return torch::fmax(x, pos2); }},
      {"sinh", pos, [](const Tensor& x) { return torch::sinh(x); }},
      {"pow_scalar", pos, [](const Tensor& x) { return torch::pow(x, 3.0); }},
      {"pow_tensor", pos, [&](const Tensor& x) { return torch::pow(x, pos2); }},
      {"sqrt", pos, [](const Tensor& x) { return torch::sqrt(x); }},
      {"rsqrt", pos, [](const Tensor& x) { return torch::rsqrt(x); }},
      {"reciprocal", pos, [](const Tensor& x) { return torch::reciprocal(x); }},
      {"log2", pos, [](const Tensor& x) { return torch::log2(x); }},
      {"exp2", pos, [](const Tensor& x) { return torch::exp2(x); }},
      {"log10", pos, [](const Tensor& x) { return torch::log10(x); }},
      {"atan2", pos, [&](const Tensor& x) { return torch::atan2(x, pos2); }},
      {"amax_dim1", pos, [](const Tensor& x) { return torch::amax(x, {1}); }},
      {"std_dim1", pos, [](const Tensor& x) { return torch::std(x, {1}); }},
      {"dropout", pos, [](const Tensor& x) { return torch::dropout(x, 0.5, true); }},
      {"smooth_l1_loss", pos, [&](const Tensor& x) { return torch::smooth_l1_loss(x, pos2); }},
      {"huber_loss", pos, [&](const Tensor& x) { return torch::huber_loss(x, pos2); }},
      {"kl_div", pos, [&](const Tensor& x) { return torch::kl_div(x, pos2); }},
      {"binary_cross_entropy", pos,
       [&](const Tensor& x) { return torch::binary_cross_entropy(torch::sigmoid(x), pos2 * 0.5); }},
      {"cosine_similarity", pos,
       [&](const Tensor& x) { return torch::cosine_similarity(x, pos2); }},
      {"pairwise_distance", pos,
       [&](const Tensor& x) { return torch::pairwise_distance(x, pos2); }},
      {"maximum", pos, [&](const Tensor& x) { return torch::maximum(x, pos2); }},
      {"masked_fill", pos, [&](const Tensor& x) { return x.masked_fill(pos2_mask, 0.0); }},
      {"softplus", pos, [](const Tensor& x) { return F::softplus(x); }},
      {"log_softmax_dim0", pos, [](const Tensor& x) { return torch::log_softmax(x, 0); }},
      {"index_select_dim0", big, [&](const Tensor& x) { return x.index_select(0, rows); }},
      {"index_select_dim1", big, [&](const Tensor& x) { return x.index_select(1, rows); }},
      {"gather_dim1", big, [&](const Tensor& x) { return x.gather(1, columns); }},
      {"scatter_add_dim1", big,
       [&](const Tensor& x) { return x.scatter_add(1, targets, big_target); }},
      {"scatter_dim1", big, [&](const Tensor& x) { return x.scatter(1, targets, big_target); }},
      {"scatter_reduce_amax_dim1", big,
       [&](const Tensor& x) { return x.scatter_reduce(1, targets, big_target, "amax"); }},
      {"scatter_reduce_prod_dim1", near_one,
       [&](const Tensor& x) { return x.scatter_reduce(1, targets, big_target, "prod"); }},
      {"cumsum_dim0", big, [](const Tensor& x) { return x.cumsum(0); }},
      {"cumsum_dim1", big, [](const Tensor& x) { return x.cumsum(1); }},
      {"prod_dim1", near_one, [](const Tensor& x) { return x.prod(1); }},
      {"cumprod_dim1", near_one, [](const Tensor& x) { return x.cumprod(1); }},
      {"logcumsumexp_dim1", big, [](const Tensor& x) { return x.logcumsumexp(1); }},
      {"cummax_dim1", big, [](const Tensor& x) { return std::get<0>(x.cummax(1)); }},
      {"median_dim1", big, [](const Tensor& x) { return std::get<0>(x.median(1)); }},
      {"quantile_dim1", big, [](const Tensor& x) { return x.quantile(0.3, 1); }},
      {"quantile_9q_dim1", big,
       [](const Tensor& x) { return x.quantile(torch::linspace(0.1, 0.9, 9), 1); }},
      {"logsumexp_dim1", big, [](const Tensor& x) { return x.logsumexp({1}); }},
      {"norm_dim1", big, [](const Tensor& x) { return x.norm(2, {1}); }},
      {"flip_dim1", big, [](const Tensor& x) { return x.flip({1}); }},
      {"roll_dim1", big, [](const Tensor& x) { return x.roll({7}, {1}); }},
      {"tril", big, [](const Tensor& x) { return x.tril(); }},
      {"pad_reflect", image,
       [](const Tensor& x) {
         return F::pad(x, F::PadFuncOptions({1, 1, 1, 1}).mode(torch::kReflect));
       }},
      {"interpolate_bicubic", image,
       [](const Tensor& x) {
         return F::interpolate(x, F::InterpolateFuncOptions()
                                      .scale_factor(std::vector<double>{2.0, 2.0})
                                      .mode(torch::kBicubic)
                                      .align_corners(false));
       }},
      {"instance_norm", image,
       [](const Tensor& x) {
         return torch::instance_norm(x, {}, {}, {}, {}, true, 0.1, 1e-5, false);
       }},
      {"hardswish", pos, [](const Tensor& x) { return torch::hardswish(x); }},
      {"log_sigmoid", pos, [](const Tensor& x) { return torch::log_sigmoid(x); }},
      {"prelu", channels, [&](const Tensor& x) { return torch::prelu(x, prelu_weight); }},
      {"einsum_attention", queries,
       [&](const Tensor& x) {
         return torch::einsum("bhqd,bhkd->bhqk", {x, keys});
       }},
      {"einsum_chain", chain,
       [&](const Tensor& x) {
         return torch::einsum("ij,jk,kl->il", {x, chain2, chain3});
       }},
      {"lstm", sequence, [&](const Tensor& x) { return std::get<0>(lstm->forward(x)); }},
      {"gru", sequence, [&](const Tensor& x) { return std::get<0>(gru->forward(x)); }},
      {"conv3d", volume, [&](const Tensor& x) { return torch::conv3d(x, volume_w, {}, 1, 1); }},
      {"max_pool3d", volume,
       [&](const Tensor& x) {
         return torch::max_pool3d(x, {2, 2, 2});
       }},
      {"embedding_bag", table,
       [&](const Tensor& x) {
         return std::get<0>(torch::embedding_bag(x, bag_ids, bag_offsets, false, /*sum*/ 0));
       }},
      {"conv_transpose3d", volume,
       [&](const Tensor& x) { return torch::conv_transpose3d(x, deconv3d_w, {}, 2, 1); }},
      {"unfold_patches", image,
       [](const Tensor& x) {
         return F::unfold(x, F::UnfoldFuncOptions({2, 2}).stride(2));
       }},
      {"ctc_loss", ctc_logits,
       [&](const Tensor& x) {
         return torch::ctc_loss(torch::log_softmax(x, 2), ctc_targets, ctc_input_lengths,
                                ctc_target_lengths);
       }},
      {"interpolate_trilinear", volume,
       [](const Tensor& x) {
         return F::interpolate(x, F::InterpolateFuncOptions()
                                      .scale_factor(std::vector<double>{2, 2, 2})
                                      .mode(torch::kTrilinear)
                                      .align_corners(false));
       }},
      {"fractional_max_pool2d", image,
       [&](const Tensor& x) {
         return std::get<0>(torch::fractional_max_pool2d(x, {2, 2}, {40, 40}, fraction_samples));
       }},
      {"interpolate_bilinear_antialias", image,
       [](const Tensor& x) {
         return F::interpolate(x, F::InterpolateFuncOptions()
                                      .size(std::vector<int64_t>{24, 24})
                                      .mode(torch::kBilinear)
                                      .align_corners(false)
                                      .antialias(true));
       }},
      {"cross_map_lrn2d", channels, [&](const Tensor& x) { return cross_map->forward(x); }},
      {"adaptive_log_softmax", hidden,
       [&](const Tensor& x) { return adaptive_softmax->forward(x, word_ids).output; }},
      {"linalg_inv_256", square, [&](const Tensor& x) { return torch::linalg::inv(x + eye256); }},
      {"linalg_solve_256", square,
       [&](const Tensor& x) { return torch::linalg::solve(x + eye256, rhs, true); }},
      {"linalg_det_batched_8", small_squares,
       [&](const Tensor& x) { return torch::linalg::det(x + eye8); }},
      // Forward only, x + f(x.detach()): LibTorch's LDL has no gradient. An indefinite matrix.
      {"linalg_ldl_256_fwd", square,
       [&](const Tensor& x) {
         const auto [ld, pivots] = torch::linalg_ldl_factor(x.detach() + x.detach().t());
         return x.narrow(1, 0, 16) + torch::linalg_ldl_solve(ld, pivots, rhs);
       }},
      {"linalg_cholesky_256", square,
       [&](const Tensor& x) { return torch::linalg::cholesky(x.matmul(x.t()) + eye256); }},
      {"linalg_solve_1024", square1024,
       [&](const Tensor& x) { return torch::linalg::solve(x + eye1024, rhs1024, true); }},
      {"linalg_cholesky_1024", square1024,
       [&](const Tensor& x) { return torch::linalg::cholesky(x.matmul(x.t()) + eye1024); }},
      {"linalg_qr_256", square,
       [](const Tensor& x) {
         const auto [q, r] = torch::linalg::qr(x);
         return q.matmul(r);
       }},
      {"linalg_eigh_256", square,
       [](const Tensor& x) {
         const auto [w, v] = torch::linalg::eigh(x + x.t(), "L");
         return (v * w).matmul(v.t());
       }},
      {"linalg_svd_256", square,
       [](const Tensor& x) {
         const auto [u, s, vh] = torch::linalg::svd(x, false, c10::nullopt);
         return (u * s).matmul(vh);
       }},
      {"linalg_svd_batched_8", small_squares,
       [](const Tensor& x) {
         const auto [u, s, vh] = torch::linalg::svd(x, false, c10::nullopt);
         return (u * s.unsqueeze(-2)).matmul(vh);
       }},
  };
  for (const Op& op : ops) {
    if (!selected(op.name, only)) continue;
    Tensor x = op.x;
    const double ms = median_ms([&] {
      x.mutable_grad() = Tensor();
      const Tensor y = op.f(x);
      y.backward(torch::ones_like(y));
    });
    std::printf("%s %.3f\n", op.name, ms);
  }
  return 0;
}
