// leangrad-demo: a tour of the foundation on one screen. Creates and prints tensors, takes views,
// broadcasts, reduces, then fits a linear regression with gradients written by hand (matmul and
// transpose) and shows that the caching allocator stops calling malloc after the first step.
//   leangrad-demo [--device cpu|cuda] [--steps N]
#include <leangrad/leangrad.h>

#include <charconv>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <string>

namespace {

struct Options {
  leangrad::Device device = leangrad::Device::cpu();
  int steps = 200;
};

Options parse(int argc, char** argv) {
  Options options;
  if (leangrad::cuda::is_available()) options.device = leangrad::Device::cuda();
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--device" && i + 1 < argc) {
      const std::string value = argv[++i];
      if (value != "cpu" && value != "cuda") throw std::invalid_argument("--device: cpu or cuda");
      options.device = value == "cpu" ? leangrad::Device::cpu() : leangrad::Device::cuda();
    } else if (arg == "--steps" && i + 1 < argc) {
      const std::string value = argv[++i];
      const char* last = value.data() + value.size();
      const auto [end, error] = std::from_chars(value.data(), last, options.steps);
      if (error != std::errc() || end != last || options.steps < 1)
        throw std::invalid_argument("--steps: expected a whole number > 0, got '" + value + "'");
    } else if (arg == "--device" || arg == "--steps") {
      throw std::invalid_argument(arg + ": expected a value after it");
    } else {
      throw std::invalid_argument("unknown argument '" + arg +
                                  "' (usage: leangrad-demo [--device cpu|cuda] [--steps N])");
    }
  }
  return options;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace leangrad;
  try {
    const Options options = parse(argc, argv);
    const Device device = options.device;
    std::cout << "leangrad demo on " << device << " (" << get_num_threads() << " CPU threads, "
              << (cuda::is_available() ? "CUDA available" : "no CUDA device") << ")\n\n";

    // ---- Tensors, views, broadcasting, reductions -------------------------------------------
    Tensor a = arange(12, TensorOptions(kFloat32).device(device)).view({3, 4});
    std::cout << "a = arange(12).view({3, 4}):\n" << a << "\n";
    std::cout << "a.transpose(0, 1) (a view, strides " << shape_str(a.transpose(0, 1).strides())
              << "):\n"
              << a.transpose(0, 1) << "\n";
    std::cout << "a.slice(1, 0, 4, 2):\n" << a.slice(1, 0, 4, 2) << "\n";
    Tensor row = tensor(std::vector<float>{10, 20, 30, 40}, {}, device);
    std::cout << "a + [10, 20, 30, 40] (broadcast):\n" << a + row << "\n";
    std::cout << "a.sum({1}) = " << a.sum({1}) << ", a.max() = " << a.max()
              << ", a.argmax(1) = " << a.argmax(1) << "\n";
    std::cout << "a.to(kBFloat16) = " << a.to(kBFloat16).slice(1, 0, 2) << " (first 2 cols)\n\n";

    // ---- Linear regression with hand-written gradients --------------------------------------
    // y = X w_true + noise; minimise mean((X w - y)^2) by gradient descent:
    //   grad = 2/N X^T (X w - y)
    manual_seed(0);
    const std::int64_t n = 4096, features = 64;
    const TensorOptions opts = TensorOptions(kFloat32).device(device);
    Tensor x = randn({n, features}, opts);                      // (N, F)
    Tensor w_true = randn({features, 1}, opts);                 // (F, 1)
    Tensor y = matmul(x, w_true) + randn({n, 1}, opts) * 0.01;  // (N, 1)
    Tensor w = zeros({features, 1}, opts);
    const double lr = 0.1;
    std::int64_t backend_allocs_after_first = -1;
    for (int step = 1; step <= options.steps; ++step) {
      Tensor residual = matmul(x, w) - y;                             // (N, 1)
      Tensor grad = matmul(x.transpose(0, 1), residual) * (2.0 / n);  // (F, 1)
      w.add_(grad, -lr);
      if (step == 1) backend_allocs_after_first = memory::stats(device).backend_allocs;
      if (step == 1 || step % 50 == 0 || step == options.steps) {
        const float loss = (residual * residual).mean().item<float>();
        std::cout << "step " << step << "  loss " << loss << "\n";
      }
    }
    const float error = (w - w_true).abs().max().item<float>();
    std::cout << "max |w - w_true| = " << error << "\n";
    const MemoryStats stats = memory::stats(device);
    std::cout << "backend allocations: " << backend_allocs_after_first << " after step 1, "
              << stats.backend_allocs << " at the end (the cache serves the rest)\n\n";
    std::cout << memory::summary(device);
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "leangrad-demo: " << e.what() << "\n";
    return 1;
  }
}
