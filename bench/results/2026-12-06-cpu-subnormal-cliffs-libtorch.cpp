// LibTorch 1.13's side of 2026-12-06-cpu-subnormal-cliffs.cpp: the same ops, ranges, sizes and
// timing (bench/results/2026-12-06-cpu-subnormal-cliffs-zen5-2core.md); TanhExp written as a
// PyTorch user writes it, x * tanh(exp(x)).
//   g++ -O2 -std=c++17 -I/usr/include/torch/csrc/api/include \
//     bench/results/2026-12-06-cpu-subnormal-cliffs-libtorch.cpp -ltorch -ltorch_cpu -lc10 \
//     -o /tmp/subnormal-cliffs-libtorch
#include <torch/torch.h>
#include <cstdio>
#include <functional>
#include <vector>
#include "best_of.h"
using torch::Tensor;
int main() {
  torch::set_num_threads(1);
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
      {"exp", [](const Tensor& x) { return torch::exp(x); }},
      {"tanhexp", [](const Tensor& x) { return x * torch::tanh(torch::exp(x)); }},
      {"sigmoid", [](const Tensor& x) { return torch::sigmoid(x); }},
      {"silu", [](const Tensor& x) { return torch::silu(x); }},
      {"gelu", [](const Tensor& x) { return torch::gelu(x); }},
      {"softmax", [](const Tensor& x) { return torch::softmax(x, 1); }},
      {"log_softmax", [](const Tensor& x) { return torch::log_softmax(x, 1); }},
      {"logsumexp", [](const Tensor& x) { return torch::logsumexp(x, {1}); }},
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
      torch::manual_seed(0);
      const Tensor x =
          (torch::rand({rows, cols}) * (r.hi - r.lo) + r.lo).detach().requires_grad_(true);
      const double forward = best_of_ms(20, 0, [&] {
        torch::NoGradGuard no_grad;
        op.f(x);
      });
      const double both = best_of_ms(20, 0, [&] {
        Tensor y = op.f(x);
        y.backward(torch::ones_like(y));
        x.mutable_grad().reset();
      });
      std::printf(" %.2f / %.2f |", forward * per_element, both * per_element);
    }
    std::printf("\n");
  }
}
