// LibTorch 1.13's side of 2026-12-06-cpu-elementwise-avx512.cpp: the same ops, inputs, sizes and
// timing (bench/results/2026-12-06-cpu-elementwise-avx512-zen5-2core.md). LibTorch 1.13 has no
// float16 exp or gelu on the CPU: those rows report the error.
//   g++ -O2 -std=c++17 -I/usr/include/torch/csrc/api/include \
//     bench/results/2026-12-06-cpu-elementwise-avx512-libtorch.cpp -ltorch -ltorch_cpu -lc10 \
//     -o /tmp/elementwise-avx512-libtorch
#include <torch/torch.h>
#include <cstdio>
#include <functional>
#include <vector>
#include "best_of.h"
using torch::Tensor;
int main() {
  torch::set_num_threads(1);
  torch::NoGradGuard no_grad;
  const std::int64_t n = 1 << 20;
  torch::manual_seed(0);
  const Tensor x = torch::rand({n}) * 4 - 2, y = torch::rand({n}) * 4 - 2;  // [-2, 2]
  const Tensor xp = torch::rand({n}) * 10 + 0.1;                            // [0.1, 10.1]
  const Tensor xu = torch::rand({n}) * 0.98 + 0.01;                         // [0.01, 0.99]
  const Tensor x16 = x.to(torch::kFloat16);
  struct Op {
    const char* name;
    std::function<Tensor()> f;
  };
  const std::vector<Op> ops = {
      {"exp", [&] { return torch::exp(x); }},
      {"log", [&] { return torch::log(xp); }},
      {"tanh", [&] { return torch::tanh(x); }},
      {"sigmoid", [&] { return torch::sigmoid(x); }},
      {"erf", [&] { return torch::erf(x); }},
      {"expm1", [&] { return torch::expm1(x); }},
      {"log1p", [&] { return torch::log1p(xp); }},
      {"sqrt", [&] { return torch::sqrt(xp); }},
      {"atan", [&] { return torch::atan(x); }},
      {"sinh", [&] { return torch::sinh(x); }},
      {"sin", [&] { return torch::sin(x); }},
      {"tan", [&] { return torch::tan(x); }},
      {"gelu", [&] { return torch::gelu(x); }},
      {"gelu_tanh", [&] { return torch::gelu(x, "tanh"); }},
      {"silu", [&] { return torch::silu(x); }},
      {"mish", [&] { return torch::mish(x); }},
      {"softplus", [&] { return torch::softplus(x); }},
      {"elu", [&] { return torch::elu(x); }},
      {"log_sigmoid", [&] { return torch::log_sigmoid(x); }},
      {"add", [&] { return torch::add(x, y); }},
      {"mul", [&] { return torch::mul(x, y); }},
      {"atan2", [&] { return torch::atan2(x, y); }},
      {"pow", [&] { return torch::pow(xp, y); }},
      {"hypot", [&] { return torch::hypot(x, y); }},
      {"lgamma", [&] { return torch::lgamma(xp); }},
      {"digamma", [&] { return torch::digamma(xp); }},
      {"i0", [&] { return torch::i0(x); }},
      {"special_i1e", [&] { return torch::special_i1e(x); }},
      {"special_ndtri", [&] { return torch::special_ndtri(xu); }},
      {"special_bessel_j0", [&] { return torch::special_bessel_j0(xp); }},
      {"special_bessel_y1", [&] { return torch::special_bessel_y1(xp); }},
      {"special_modified_bessel_k0", [&] { return torch::special_modified_bessel_k0(xp); }},
      {"special_airy_ai", [&] { return torch::special_airy_ai(x); }},
      {"erfc", [&] { return torch::erfc(x); }},
      {"asin", [&] { return torch::asin(xu); }},
      {"exp float16", [&] { return torch::exp(x16); }},
      {"gelu float16", [&] { return torch::gelu(x16); }},
  };
  for (const Op& op : ops) {
    try {
      std::printf("%s %.3f\n", op.name,
                  best_of_ms(15, 0, [&] { op.f(); }) * 1e6 / static_cast<double>(n));
    } catch (const std::exception& e) {
      std::printf("%s error: %.60s\n", op.name, e.what());
    }
  }
}
