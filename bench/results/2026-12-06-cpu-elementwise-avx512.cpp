// Forward elementwise ops of float32 without a graph, one thread, in ns per element: the best of
// 15 calls on 1M elements (bench/results/2026-12-06-cpu-elementwise-avx512-zen5-2core.md). Each
// op's input is uniform over a range where it is defined. Run against two builds of the library
// through LD_LIBRARY_PATH to compare them; the LibTorch twin is
// ...-elementwise-avx512-libtorch.cpp:
//   g++ -O2 -std=c++20 -I. -Ibuild/include bench/results/2026-12-06-cpu-elementwise-avx512.cpp \
//     -Lbuild -lleangrad -Wl,-rpath,$PWD/build -o /tmp/elementwise-avx512
//   /tmp/elementwise-avx512; LD_LIBRARY_PATH=OTHER_BUILD /tmp/elementwise-avx512
#include <leangrad/leangrad.h>
#include <cstdio>
#include <functional>
#include <vector>
#include "best_of.h"
using namespace leangrad;
int main() {
  set_num_threads(1);
  NoGradGuard no_grad;
  const std::int64_t n = 1 << 20;
  manual_seed(0);
  const Tensor x = rand({n}) * 4 - 2, y = rand({n}) * 4 - 2;  // [-2, 2]
  const Tensor xp = rand({n}) * 10 + 0.1;                     // [0.1, 10.1]
  const Tensor xu = rand({n}) * 0.98 + 0.01;                  // [0.01, 0.99]
  const Tensor x16 = x.to(kFloat16);
  struct Op {
    const char* name;
    std::function<Tensor()> f;
  };
  const std::vector<Op> ops = {
      {"exp", [&] { return exp(x); }},
      {"log", [&] { return log(xp); }},
      {"tanh", [&] { return tanh(x); }},
      {"sigmoid", [&] { return sigmoid(x); }},
      {"erf", [&] { return erf(x); }},
      {"expm1", [&] { return expm1(x); }},
      {"log1p", [&] { return log1p(xp); }},
      {"sqrt", [&] { return sqrt(xp); }},
      {"atan", [&] { return atan(x); }},
      {"sinh", [&] { return sinh(x); }},
      {"sin", [&] { return sin(x); }},
      {"tan", [&] { return tan(x); }},
      {"gelu", [&] { return gelu(x); }},
      {"gelu_tanh", [&] { return gelu(x, "tanh"); }},
      {"silu", [&] { return silu(x); }},
      {"mish", [&] { return mish(x); }},
      {"softplus", [&] { return softplus(x); }},
      {"elu", [&] { return elu(x); }},
      {"log_sigmoid", [&] { return log_sigmoid(x); }},
      {"add", [&] { return add(x, y); }},
      {"mul", [&] { return mul(x, y); }},
      {"atan2", [&] { return atan2(x, y); }},
      {"pow", [&] { return pow(xp, y); }},
      {"hypot", [&] { return hypot(x, y); }},
      {"lgamma", [&] { return lgamma(xp); }},
      {"digamma", [&] { return digamma(xp); }},
      {"i0", [&] { return i0(x); }},
      {"special_i1e", [&] { return special_i1e(x); }},
      {"special_ndtri", [&] { return special_ndtri(xu); }},
      {"special_bessel_j0", [&] { return special_bessel_j0(xp); }},
      {"special_bessel_y1", [&] { return special_bessel_y1(xp); }},
      {"special_modified_bessel_k0", [&] { return special_modified_bessel_k0(xp); }},
      {"special_airy_ai", [&] { return special_airy_ai(x); }},
      {"erfc", [&] { return erfc(x); }},
      {"asin", [&] { return asin(xu); }},
      {"exp float16", [&] { return exp(x16); }},
      {"gelu float16", [&] { return gelu(x16); }},
  };
  for (const Op& op : ops)
    std::printf("%s %.3f\n", op.name,
                best_of_ms(15, 0, [&] { op.f(); }) * 1e6 / static_cast<double>(n));
}
