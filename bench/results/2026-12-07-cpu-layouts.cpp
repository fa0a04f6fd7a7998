// Elementwise ops, casts and reductions of a (2048, 2048) float32 in four layouts (contiguous; the
// transpose of a contiguous one; every other column of a (2048, 4096); a (1, 2048) row expanded);
// the maxima of a contiguous one in four dtypes; nonzero and masked_select; and float16's
// dropout, cumsum, pooling and Embedding beside float32's: the best of 5 calls after 1 (the
// maxima: of 9 after 2), one thread (set here: the library reads OMP_NUM_THREADS, not a variable
// of its own) (bench/results/2026-12-07-cpu-transposed-operands-zen5-2core.md). A layout or
// dtype far slower than the contiguous float32 row marks a loop that reads it badly. LibTorch's
// side is 2026-12-07-cpu-layouts-libtorch.cpp; run against two builds of the library through
// LD_LIBRARY_PATH to compare them:
//   g++ -O2 -std=c++20 -I. -Ibuild/include bench/results/2026-12-07-cpu-layouts.cpp \
//     -Lbuild -lleangrad -Wl,-rpath,$PWD/build -o /tmp/layouts
//   /tmp/layouts; LD_LIBRARY_PATH=OTHER_BUILD /tmp/layouts
#include <leangrad/leangrad.h>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <utility>
#include <vector>
#include "best_of.h"
using namespace leangrad;
using Op = std::pair<const char*, std::function<Tensor(const Tensor&)>>;
int main() {
  set_num_threads(1);
  const Tensor base = randn({2048, 2048});
  const Tensor wide = randn({2048, 4096});
  const std::vector<std::pair<const char*, Tensor>> layouts = {
      {"contiguous", base},
      {"transposed", base.t()},
      {"every other column", wide.slice(1, 0, 4096, 2)},
      {"broadcast row", randn({1, 2048}).expand({2048, 2048})},
  };
  const std::vector<Op> ops = {
      {"relu", [](const Tensor& x) { return relu(x); }},
      {"exp", [](const Tensor& x) { return exp(x); }},
      {"x * 2", [](const Tensor& x) { return x * 2.0; }},
      {"x + x", [](const Tensor& x) { return x + x; }},
      {"x + contiguous", [&](const Tensor& x) { return x + base; }},
      {"contiguous()", [](const Tensor& x) { return x.contiguous(); }},
      {"clone()", [](const Tensor& x) { return x.clone(); }},
      {"to float16", [](const Tensor& x) { return x.to(kFloat16); }},
      {"to bfloat16", [](const Tensor& x) { return x.to(kBFloat16); }},
      {"to float64", [](const Tensor& x) { return x.to(kFloat64); }},
      {"to int32", [](const Tensor& x) { return x.to(kInt32); }},
      {"to float16 and back", [](const Tensor& x) { return x.to(kFloat16).to(kFloat32); }},
      {"sum", [](const Tensor& x) { return sum(x); }},
      {"sum dim 0", [](const Tensor& x) { return sum(x, {0}); }},
      {"sum dim 1", [](const Tensor& x) { return sum(x, {1}); }},
      {"amax dim 1", [](const Tensor& x) { return amax(x, {1}); }},
      {"softmax dim 1", [](const Tensor& x) { return softmax(x, 1); }},
      {"where(x > 0, x, 0 * x)", [](const Tensor& x) { return where(x > 0.0, x, 0.0 * x); }},
      {"x > 0", [](const Tensor& x) { return x > 0.0; }},
      {"copy_ into contiguous",
       [](const Tensor& x) {
         Tensor y = empty({2048, 2048});
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
      {"amax dim 1", [](const Tensor& x) { return amax(x, {1}); }},
      {"amin dim 1", [](const Tensor& x) { return amin(x, {1}); }},
      {"amax", [](const Tensor& x) { return amax(x); }},
      {"amax dim 0", [](const Tensor& x) { return amax(x, {0}); }},
      {"argmax dim 1", [](const Tensor& x) { return argmax(x, 1); }},
      {"argmin dim 1", [](const Tensor& x) { return argmin(x, 1); }},
      {"argmax", [](const Tensor& x) { return argmax(x); }},
      {"sum dim 1 (for scale)", [](const Tensor& x) { return sum(x, {1}); }},
  };
  std::printf(
      "\n| contiguous (2048, 2048) | float32 ms | float64 ms | float16 ms | int32 ms |\n"
      "| --- | ---: | ---: | ---: | ---: |\n");
  const Tensor as[] = {base, base.to(kFloat64), base.to(kFloat16), (base * 100.0).to(kInt32)};
  for (const auto& [name, op] : maxima) {
    std::printf("| %s |", name);
    for (const Tensor& x : as)
      std::printf(" %.3f |", best_of_ms(9, 2, [&] { return op(x); }));
    std::printf("\n");
  }

  // Forward and backward under a loss, (y * y).sum(), where a row says so.
  const auto with_backward = [](const Tensor& y, const Tensor& x) {
    (y * y).sum().backward();
    return x.grad();
  };
  const Tensor mask = base > 1.0;
  const Tensor flat_mask = randn({1 << 22}) > 1.0;
  const Tensor images = randn({16, 64, 32, 32});
  const Tensor big_images = randn({32, 64, 32, 32});
  const Tensor weights = randn({512, 2048});
  const Tensor ids = randint(0, 512, {4096}, kInt64);
  // Each input in float32 and float16, converted before the timing.
  const auto in = [](const Tensor& t) { return std::pair<Tensor, Tensor>{t, t.to(kFloat16)}; };
  const auto base_in = in(base), images_in = in(images), big_in = in(big_images),
             weights_in = in(weights);
  const auto pick = [](const std::pair<Tensor, Tensor>& p, DType d) {
    return d == kFloat32 ? p.first : p.second;
  };
  const std::vector<std::pair<const char*, std::function<Tensor(DType)>>> others = {
      {"nonzero of a (2048, 2048) mask, 16% true", [&](DType) { return nonzero(mask); }},
      {"nonzero of a (4194304) mask, 16% true", [&](DType) { return nonzero(flat_mask); }},
      {"masked_select, the (2048, 2048) mask", [&](DType) { return masked_select(base, mask); }},
      {"dropout(0.1) of (2048, 2048)",
       [&](DType d) { return dropout(pick(base_in, d), 0.1, true); }},
      {"cumsum along rows of (2048, 2048)", [&](DType d) { return cumsum(pick(base_in, d), 1); }},
      {"max_pool2d 2 x 2 of (32, 64, 32, 32)",
       [&](DType d) {
         return max_pool2d(pick(big_in, d), Size2{2, 2});
       }},
      {"avg_pool2d 2 x 2 of (16, 64, 32, 32), with backward",
       [&](DType d) {
         const Tensor x = pick(images_in, d).detach().requires_grad_(true);
         return with_backward(avg_pool2d(x, Size2{2, 2}), x);
       }},
      {"Embedding (512, 2048) by 4096 ids, with backward",
       [&](DType d) {
         const Tensor w = pick(weights_in, d).detach().requires_grad_(true);
         return with_backward(embedding(ids, w), w);
       }},
  };
  std::printf("\n| op | float32 ms | float16 ms |\n| --- | ---: | ---: |\n");
  for (const auto& [name, op] : others) {
    std::printf("| %s |", name);
    for (const DType d : {kFloat32, kFloat16})
      std::printf(" %.2f |", best_of_ms(5, 1, [&] { return op(d); }));
    std::printf("\n");
  }
}
