// Uses only the core, memory and nn names of shared/API.md, through the installed umbrella
// header, and the kernel-level API of <leangrad/kernels/ops.h>. Its own data/dataset.h and
// core/tensor.h (include/ here) are named like leangrad's headers and come first on the include
// path. Exits non-zero (with a message) when a value is wrong.
#include <leangrad/kernels/ops.h>
#include <leangrad/leangrad.h>

#include "core/tensor.h"
#include "data/dataset.h"

#include <cmath>
#include <iostream>
#include <string>
#include <vector>

namespace {
int failures = 0;

// A module in LibTorch's idiom: a holder member, registered by value.
struct TinyImpl : leangrad::nn::Module {
  TinyImpl() { fc = register_module("fc", leangrad::nn::Linear(3, 2)); }
  leangrad::Tensor forward(const leangrad::Tensor& x) override { return fc(x); }
  leangrad::nn::Linear fc{nullptr};
};
LEANGRAD_MODULE(Tiny);

void check(bool ok, const char* what) {
  if (!ok) {
    std::cerr << "consumer: FAILED " << what << "\n";
    ++failures;
  }
}
}  // namespace

int main() {
  using namespace leangrad;
  manual_seed(42);
  Tensor a = arange(6, TensorOptions().dtype(kFloat64)).view({2, 3});
  Tensor b = ones({3}, TensorOptions().dtype(kFloat64));
  Tensor c = (a + b) * 2.0;  // [[2, 4, 6], [8, 10, 12]]
  check(c.sum().item<double>() == 42.0, "broadcast arithmetic and sum");
  check(c.transpose(0, 1).contiguous().select(0, 2).select(0, 1).item<double>() == 12.0,
        "transpose/contiguous/select");
  check(matmul(a, a.transpose(0, 1)).select(0, 1).select(0, 1).item<double>() == 50.0, "matmul");
  check(c.argmax(1).select(0, 0).item<std::int64_t>() == 2, "argmax");
  check(where(a.gt(2.5), a, zeros({2, 3}, kFloat64)).sum().item<double>() == 12.0, "where/gt");
  check(std::fabs(randn({10000}).mean().item<float>()) < 0.05f, "randn mean");
  check(cat({a, a}, 0).shape() == Shape{4, 3} && stack({b, b}, 1).shape() == Shape{3, 2},
        "cat/stack");
  check(a.to(kFloat16).to(kFloat32).dtype() == kFloat32, "casts");
  bool threw = false;
  try {
    a + ones({4});
  } catch (const ShapeError& e) {
    threw = std::string(e.what()).find("[2, 3]") != std::string::npos;
  }
  check(threw, "ShapeError naming the shapes");
  Tiny tiny;
  check(tiny(ones({4, 3})).shape() == Shape{4, 2} &&
            tiny->named_parameters().keys() == std::vector<std::string>{"fc.weight", "fc.bias"},
        "nn module holders");
  const MemoryStats stats = memory::stats(kCPU);
  check(stats.allocated > 0 && stats.reserved >= stats.allocated, "memory::stats");
  check(!memory::summary(kCPU).empty(), "memory::summary");
  check(ops::unary(UnaryOp::Neg, a).sum().item<double>() == -15.0, "ops::unary");
  check(consumer::Dataset().size() == 3 && consumer::kTensorHeaderValue == 7,
        "the consumer's own data/dataset.h and core/tensor.h");
  std::cout << "consumer: leangrad " << (cuda::is_available() ? "with" : "without") << " a GPU, "
            << get_num_threads() << " threads, " << failures << " failures\n";
  return failures == 0 ? 0 : 1;
}
