// LibTorch 1.13's side of 2026-12-07-cpu-layouts.cpp: the same ops, layouts, sizes and timing,
// one thread (bench/results/2026-12-07-cpu-transposed-operands-zen5-2core.md). LibTorch gives an
// elementwise result, clone() and to() the layout of a dense input (a transposed input gives a
// transposed result), where leangrad's are contiguous. A float16 op LibTorch 1.13 has no CPU
// kernel for prints n/a.
//   g++ -O2 -std=c++17 -I/usr/include/torch/csrc/api/include \
//     bench/results/2026-12-07-cpu-layouts-libtorch.cpp -ltorch -ltorch_cpu -lc10 \
//     -o /tmp/layouts-libtorch
#include <torch/torch.h>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <utility>
#include <vector>
#include "best_of.h"
using torch::Tensor;
using Op = std::pair<const char*, std::function<Tensor(const Tensor&)>>;
int main() {
  at::set_num_threads(1);
  const Tensor base = torch::randn({2048, 2048});
  const Tensor wide = torch::randn({2048, 4096});
  const std::vector<std::pair<const char*, Tensor>> layouts = {
      {"contiguous", base},
      {"transposed", base.t()},
      {"every other column", wide.slice(1, 0, 4096, 2)},
      {"broadcast row", torch::randn({1, 2048}).expand({2048, 2048})},
  };
  const std::vector<Op> ops = {
      {"relu", [](const Tensor& x) { return torch::relu(x); }},
      {"exp", [](const Tensor& x) { return torch::exp(x); }},
      {"x * 2", [](const Tensor& x) { return x * 2.0; }},
      {"x + x", [](const Tensor& x) { return x + x; }},
      {"x + contiguous", [&](const Tensor& x) { return x + base; }},
      {"contiguous()", [](const Tensor& x) { return x.contiguous(); }},
      {"clone()", [](const Tensor& x) { return x.clone(); }},
      {"to float16", [](const Tensor& x) { return x.to(torch::kHalf); }},
      {"to bfloat16", [](const Tensor& x) { return x.to(torch::kBFloat16); }},
      {"to float64", [](const Tensor& x) { return x.to(torch::kFloat64); }},
      {"to int32", [](const Tensor& x) { return x.to(torch::kInt32); }},
      {"to float16 and back",
       [](const Tensor& x) { return x.to(torch::kHalf).to(torch::kFloat32); }},
      {"sum", [](const Tensor& x) { return x.sum(); }},
      {"sum dim 0", [](const Tensor& x) { return x.sum(0); }},
      {"sum dim 1", [](const Tensor& x) { return x.sum(1); }},
      {"amax dim 1", [](const Tensor& x) { return x.amax(1); }},
      {"softmax dim 1", [](const Tensor& x) { return torch::softmax(x, 1); }},
      {"where(x > 0, x, 0 * x)", [](const Tensor& x) { return torch::where(x > 0.0, x, 0.0 * x); }},
      {"x > 0", [](const Tensor& x) { return x > 0.0; }},
      {"copy_ into contiguous",
       [](const Tensor& x) {
         Tensor y = torch::empty({2048, 2048});
         y.copy_(x);
         return y;
       }},
  };
  std::printf("| op |");
  for (const auto& [name, x] : layouts)
    std::printf(" %s ms |", name);
  std::printf("\n| --- | ---: | ---: | ---: | ---: |\n");
  for (const auto& [name, op] : ops) {
    std::printf("| %s |", name);
    for (const auto& [layout, x] : layouts)
      std::printf(" %.2f |", best_of_ms(5, 1, [&] { return op(x); }));
    std::printf("\n");
  }

  const std::vector<Op> maxima = {
      {"amax dim 1", [](const Tensor& x) { return x.amax(1); }},
      {"amin dim 1", [](const Tensor& x) { return x.amin(1); }},
      {"amax", [](const Tensor& x) { return x.amax(); }},
      {"amax dim 0", [](const Tensor& x) { return x.amax(0); }},
      {"argmax dim 1", [](const Tensor& x) { return x.argmax(1); }},
      {"argmin dim 1", [](const Tensor& x) { return x.argmin(1); }},
      {"argmax", [](const Tensor& x) { return x.argmax(); }},
      {"sum dim 1 (for scale)", [](const Tensor& x) { return x.sum(1); }},
  };
  std::printf(
      "\n| contiguous (2048, 2048) | float32 ms | float64 ms | float16 ms | int32 ms |\n"
      "| --- | ---: | ---: | ---: | ---: |\n");
  const Tensor as[] = {base, base.to(torch::kFloat64), base.to(torch::kHalf),
                       (base * 100.0).to(torch::kInt32)};
  for (const auto& [name, op] : maxima) {
    std::printf("| %s |", name);
    for (const Tensor& x : as)
      std::printf(" %.3f |", best_of_ms(9, 2, [&] { return op(x); }));
    std::printf("\n");
  }

  const auto with_backward = [](const Tensor& y, const Tensor& x) {
    (y * y).sum().backward();
    return x.grad();
  };
  const Tensor mask = base > 1.0;
  const Tensor flat_mask = torch::randn({1 << 22}) > 1.0;
  const Tensor images = torch::randn({16, 64, 32, 32});
  const Tensor big_images = torch::randn({32, 64, 32, 32});
  const Tensor weights = torch::randn({512, 2048});
  const Tensor ids = torch::randint(0, 512, {4096}, torch::kInt64);
  const auto in = [](const Tensor& t) { return std::pair<Tensor, Tensor>{t, t.to(torch::kHalf)}; };
  const auto base_in = in(base), images_in = in(images), big_in = in(big_images),
             weights_in = in(weights);
  const auto pick = [](const std::pair<Tensor, Tensor>& p, torch::ScalarType d) {
    return d == torch::kFloat32 ? p.first : p.second;
  };
  const std::vector<std::pair<const char*, std::function<Tensor(torch::ScalarType)>>> others = {
      {"nonzero of a (2048, 2048) mask, 16% true",
       [&](torch::ScalarType) { return mask.nonzero(); }},
      {"nonzero of a (4194304) mask, 16% true",
       [&](torch::ScalarType) { return flat_mask.nonzero(); }},
      {"masked_select, the (2048, 2048) mask",
       [&](torch::ScalarType) { return base.masked_select(mask); }},
      {"dropout(0.1) of (2048, 2048)",
       [&](torch::ScalarType d) { return torch::dropout(pick(base_in, d), 0.1, true); }},
      {"cumsum along rows of (2048, 2048)",
       [&](torch::ScalarType d) { return pick(base_in, d).cumsum(1); }},
      {"max_pool2d 2 x 2 of (32, 64, 32, 32)",
       [&](torch::ScalarType d) {
         return torch::max_pool2d(pick(big_in, d), {2, 2});
       }},
      {"avg_pool2d 2 x 2 of (16, 64, 32, 32), with backward",
       [&](torch::ScalarType d) {
         const Tensor x = pick(images_in, d).detach().requires_grad_(true);
         return with_backward(torch::avg_pool2d(x, {2, 2}), x);
       }},
      {"Embedding (512, 2048) by 4096 ids, with backward",
       [&](torch::ScalarType d) {
         const Tensor w = pick(weights_in, d).detach().requires_grad_(true);
         return with_backward(torch::embedding(w, ids), w);
       }},
  };
  std::printf("\n| op | float32 ms | float16 ms |\n| --- | ---: | ---: |\n");
  for (const auto& [name, op] : others) {
    std::printf("| %s |", name);
    for (const torch::ScalarType d : {torch::kFloat32, torch::kHalf}) {
      try {
        std::printf(" %.2f |", best_of_ms(5, 1, [&] { return op(d); }));
      } catch (const c10::Error&) {
        std::printf(" n/a |");
      }
    }
    std::printf("\n");
  }
}
