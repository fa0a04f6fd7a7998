// Sums along contiguous runs (the run layout of kernels/cpu/reduce.cpp) at one thread: a
// (2048, 2048) float32 in L3, summed whole and along its rows; a (1, 2048) row expanded to
// (2048, 2048), whose rows are read again from L1; a (64, 2048) float32 that stays in L2, summed
// along its rows 100 times; rows of 196 (a conv bias gradient's runs) and that gradient's sum;
// the same (2048, 2048) in float64, bfloat16, float16 and int32; the best of 15 calls after 3
// (bench/results/2026-12-07-cpu-sum-lanes-zen5-2core.md). LibTorch's side is
// 2026-12-07-cpu-sum-lanes-libtorch.cpp. Run against two builds of the library through
// LD_LIBRARY_PATH to compare them:
//   g++ -O2 -std=c++20 -I. -Ibuild/include bench/results/2026-12-07-cpu-sum-lanes.cpp \
//     -Lbuild -lleangrad -Wl,-rpath,$PWD/build -o /tmp/sum-lanes
//   /tmp/sum-lanes; LD_LIBRARY_PATH=OTHER_BUILD /tmp/sum-lanes
#include <leangrad/leangrad.h>
#include <cstdio>
#include <functional>
#include <utility>
#include <vector>
#include "best_of.h"
using namespace leangrad;
int main() {
  set_num_threads(1);
  const Tensor x = randn({2048, 2048});
  const Tensor row = randn({1, 2048}).expand({2048, 2048});
  const Tensor small = randn({64, 2048});
  const Tensor short_rows = randn({4096, 196}), bias_grad = randn({64, 64, 14, 14});
  const std::vector<std::pair<const char*, std::function<Tensor()>>> cases = {
      {"sum, float32", [&] { return x.sum(); }},
      {"sum dim 1, float32", [&] { return x.sum({1}); }},
      {"mean dim 1, float32", [&] { return x.mean({1}); }},
      {"sum dim 1, broadcast row", [&] { return row.sum({1}); }},
      {"sum, broadcast row", [&] { return row.sum(); }},
      {"sum dim 1, (64, 2048) in L2, 100 calls",
       [&] {
         for (int i = 0; i < 99; ++i)
           small.sum({1});
         return small.sum({1});
       }},
      {"sum dim 1, (4096, 196)", [&] { return short_rows.sum({1}); }},
      {"sum over (0, 2, 3) of (64, 64, 14, 14)",
       [&] {
         return bias_grad.sum({0, 2, 3});
       }},
      {"sum dim 1, float64", [x64 = x.to(kFloat64)] { return x64.sum({1}); }},
      {"sum dim 1, bfloat16", [b = x.to(kBFloat16)] { return b.sum({1}); }},
      {"sum dim 1, float16", [h = x.to(kFloat16)] { return h.sum({1}); }},
      {"sum dim 1, int32", [i = (x * 100.0).to(kInt32)] { return i.sum({1}); }},
  };
  for (const auto& [name, f] : cases)
    std::printf("| %s | %.3f |\n", name, best_of_ms(15, 3, f));
}
