// The exp-based float32 ops over inputs drawn uniformly from ranges of different widths, one
// thread, in ns per element: forward without a graph, and forward plus backward through autograd;
// the best of 20 calls on a (1024, 1024) tensor
// (bench/results/2026-12-06-cpu-subnormal-cliffs-zen5-2core.md). softmax, log_softmax and logsumexp
// reduce each row. Run against two builds of the library through LD_LIBRARY_PATH to compare them;
// the LibTorch twin is ...-subnormal-cliffs-libtorch.cpp:
//   g++ -O2 -std=c++20 -I. -Ibuild/include bench/results/2026-12-06-cpu-subnormal-cliffs.cpp \
//     -Lbuild -lleangrad -Wl,-rpath,$PWD/build -o /tmp/subnormal-cliffs
//   /tmp/subnormal-cliffs; LD_LIBRARY_PATH=OTHER_BUILD /tmp/subnormal-cliffs
#include <leangrad/leangrad.h>
#include <cstdio>
#include <functional>
#include <vector>
#include "best_of.h"
using namespace leangrad;
int main() {
  set_num_threads(1);
  const std::int64_t rows = 1024, cols = 1024;
  struct Range {
    const char* name;
    double lo, hi;
  };
  const std::vector<Range> ranges = {{"[-2,2]", -2, 2},           {"[4,10]", 4, 10},
                                     {"[-60,60]", -60, 60},       {"[-150,150]", -150, 150},
                                     {"[-150,-104]", -150, -104}, {"[104,150]", 104, 150}};
  struct Op {
    const char* name;
    std::function<Tensor(const Tensor&)> f;
  };
  const std::vector<Op> ops = {
      {"exp", [](const Tensor& x) { return exp(x); }},
      {"tanhexp", [](const Tensor& x) { return tanhexp(x); }},
      {"sigmoid", [](const Tensor& x) { return sigmoid(x); }},
      {"silu", [](const Tensor& x) { return silu(x); }},
      {"gelu", [](const Tensor& x) { return gelu(x); }},
      {"softmax", [](const Tensor& x) { return softmax(x, 1); }},
      {"log_softmax", [](const Tensor& x) { return log_softmax(x, 1); }},
      {"logsumexp", [](const Tensor& x) { return logsumexp(x, {1}); }},
  };
  std::printf("| op |");
  for (const Range& r : ranges)
    std::printf(" %s |", r.name);
  std::printf("\n| --- |");
  for (std::size_t i = 0; i < ranges.size(); ++i)
    std::printf(" ---: |");
  std::printf("\n");
  const double per_element = 1e6 / static_cast<double>(rows * cols);
  for (const Op& op : ops) {
    std::printf("| %s |", op.name);
    for (const Range& r : ranges) {
      manual_seed(0);
      const Tensor x = (rand({rows, cols}) * (r.hi - r.lo) + r.lo).detach().requires_grad_(true);
      const double forward = best_of_ms(20, 0, [&] {
        NoGradGuard no_grad;
        op.f(x);
      });
      const double both = best_of_ms(20, 0, [&] {
        Tensor y = op.f(x);
        y.backward(ones_like(y));
        x.mutable_grad() = Tensor();
      });
      std::printf(" %.2f / %.2f |", forward * per_element, both * per_element);
    }
    std::printf("\n");
  }
}
