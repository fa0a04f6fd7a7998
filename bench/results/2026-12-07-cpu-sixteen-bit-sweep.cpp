// Elementwise ops in float32, float16 and bfloat16 side by side, the best of 5 calls after 1 on a
// (2048, 2048) tensor, one thread (set here; until session 71 the command below set
// LEANGRAD_NUM_THREADS=1, which the library does not read, and the sweep ran on two): a 16-bit
// row far slower than float32's marks a loop that lost its lanes
// (bench/results/2026-12-07-cpu-bfloat16-avx512-zen5-2core.md; hardtanh, clamp, elu, selu and
// pow(x, 2) of float16 were found so). Run against two builds of the library through
// LD_LIBRARY_PATH to compare them:
//   g++ -O2 -std=c++20 -I. -Ibuild/include bench/results/2026-12-07-cpu-sixteen-bit-sweep.cpp \
//     -Lbuild -lleangrad -Wl,-rpath,$PWD/build -o /tmp/sixteen-bit-sweep
//   /tmp/sixteen-bit-sweep; LD_LIBRARY_PATH=OTHER_BUILD /tmp/sixteen-bit-sweep
#include <leangrad/leangrad.h>
#include <cstdio>
#include <functional>
#include <utility>
#include <vector>
#include "best_of.h"
using namespace leangrad;
int main() {
  set_num_threads(1);
  const Tensor x32 = randn({2048, 2048});
  const std::vector<std::pair<const char*, std::function<Tensor(const Tensor&)>>> ops = {
      {"elu", [](const Tensor& x) { return elu(x, 1.0); }},
      {"selu", [](const Tensor& x) { return selu(x); }},
      {"celu", [](const Tensor& x) { return celu(x, 1.0); }},
      {"leaky_relu", [](const Tensor& x) { return leaky_relu(x, 0.01); }},
      {"hardtanh", [](const Tensor& x) { return hardtanh(x, -1.0, 1.0); }},
      {"clamp", [](const Tensor& x) { return clamp(x, -0.5, 0.5); }},
      {"relu6", [](const Tensor& x) { return relu6(x); }},
      {"relu", [](const Tensor& x) { return relu(x); }},
      {"gelu", [](const Tensor& x) { return gelu(x); }},
      {"silu", [](const Tensor& x) { return silu(x); }},
      {"hardswish", [](const Tensor& x) { return hardswish(x); }},
      {"softplus", [](const Tensor& x) { return softplus(x, 1.0, 20.0); }},
      {"prelu", [](const Tensor& x) { return prelu(x, full({1}, 0.25, x.dtype())); }},
      {"threshold", [](const Tensor& x) { return threshold(x, 0.1, 20.0); }},
      {"abs", [](const Tensor& x) { return abs(x); }},
      {"sign", [](const Tensor& x) { return sign(x); }},
      {"round", [](const Tensor& x) { return round(x); }},
      {"sqrt", [](const Tensor& x) { return sqrt(abs(x)); }},
      {"where", [](const Tensor& x) { return where(x > 0.0, x, zeros_like(x)); }},
      {"maximum", [](const Tensor& x) { return maximum(x, x * 0.5); }},
      {"pow(x, 2)", [](const Tensor& x) { return pow(x, 2.0); }},
      {"pow(x, 3)", [](const Tensor& x) { return pow(x, 3.0); }},
      {"clamp_min", [](const Tensor& x) { return clamp_min(x, 0.0); }},
      {"nan_to_num", [](const Tensor& x) { return nan_to_num(x); }},
      {"sum", [](const Tensor& x) { return sum(x); }},
      {"softmax", [](const Tensor& x) { return softmax(x, 1); }},
      {"layer_norm", [](const Tensor& x) { return layer_norm(x, {2048}); }},
  };
  std::printf("| op | float32 ms | float16 ms | bfloat16 ms |\n| --- | ---: | ---: | ---: |\n");
  for (const auto& [name, op] : ops) {
    std::printf("| %s |", name);
    for (const DType dtype : {kFloat32, kFloat16, kBFloat16}) {
      const Tensor x = x32.to(dtype);
      std::printf(" %.2f |", best_of_ms(5, 1, [&] { return op(x); }));
    }
    std::printf("\n");
  }
}
