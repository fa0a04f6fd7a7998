// Maxima and minima along contiguous runs at one thread: amax, amin and argmax along the rows of
// a (64, 2048) float32 that stays in L2 (100 calls), of a (2048, 2048) float32, float64, bfloat16
// and int32, and max over every element; the best of 15 calls after 3
// (bench/results/2026-12-07-cpu-maxima-lanes-zen5-2core.md). LibTorch's side is
// 2026-12-07-cpu-maxima-lanes-libtorch.cpp. Run against two builds of the library through
// LD_LIBRARY_PATH to compare them:
//   g++ -O2 -std=c++20 -I. -Ibuild/include bench/results/2026-12-07-cpu-maxima-lanes.cpp \
//     -Lbuild -lleangrad -Wl,-rpath,$PWD/build -o /tmp/maxima-lanes
//   /tmp/maxima-lanes; LD_LIBRARY_PATH=OTHER_BUILD /tmp/maxima-lanes
#include <leangrad/leangrad.h>
#include <cstdio>
#include <functional>
#include <utility>
#include <vector>
#include "best_of.h"
using namespace leangrad;
int main() {
  set_num_threads(1);
  const Tensor small = randn({64, 2048});
  const Tensor x = randn({2048, 2048});
  const Tensor x64 = x.to(kFloat64), b = x.to(kBFloat16), i = (x * 100.0).to(kInt32);
  const auto hundred = [](const std::function<Tensor()>& f) {
    return [f] {
      for (int k = 0; k < 99; ++k)
        f();
      return f();
    };
  };
  const std::vector<std::pair<const char*, std::function<Tensor()>>> cases = {
      {"amax dim 1, (64, 2048) in L2, 100 calls", hundred([&] { return small.amax({1}); })},
      {"argmax dim 1, (64, 2048) in L2, 100 calls", hundred([&] { return small.argmax(1); })},
      {"amax dim 1, float32", [&] { return x.amax({1}); }},
      {"amin dim 1, float32", [&] { return x.amin({1}); }},
      {"argmax dim 1, float32", [&] { return x.argmax(1); }},
      {"max, float32", [&] { return x.max(); }},
      {"amax dim 1, float64", [&] { return x64.amax({1}); }},
      {"amax dim 1, bfloat16", [&] { return b.amax({1}); }},
      {"amax dim 1, int32", [&] { return i.amax({1}); }},
  };
  for (const auto& [name, f] : cases)
    std::printf("| %s | %.3f |\n", name, best_of_ms(15, 3, f));
}
