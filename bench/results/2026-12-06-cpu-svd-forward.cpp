// linalg::svd of a (256, 256) float32 matrix at one thread, best of 7: the forward with vectors,
// svdvals, eigh of x x^T, and the ops scan row's forward + backward, to see where linalg_svd_256's
// 0.70x LibTorch goes (bench/results/2026-12-06-cpu-broadcast-runs-zen4-2core.md, "SVD 256").
//   g++ -O2 -std=c++20 -I. bench/results/2026-12-06-cpu-svd-forward.cpp -Lbuild -lleangrad \
//       -Wl,-rpath,build -o /tmp/svd_forward && OMP_NUM_THREADS=1 /tmp/svd_forward
#include <leangrad/leangrad.h>
#include <algorithm>
#include <chrono>
#include <cstdio>
namespace lg = leangrad;
template <typename F>
double best(F f) {
  double b = 1e9;
  for (int r = 0; r < 7; ++r) {
    auto t0 = std::chrono::steady_clock::now();
    f();
    b = std::min(
        b,
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  return b;
}
int main() {
  const lg::Tensor x = lg::randn({256, 256});
  std::printf("svd fwd (vectors): %.2f ms\n",
              best([&] { auto [u, s, vh] = lg::linalg::svd(x, false); }));
  std::printf("svdvals: %.2f ms\n", best([&] { auto s = lg::linalg::svdvals(x); }));
  std::printf("eigh fwd: %.2f ms\n",
              best([&] { auto [w, v] = lg::linalg::eigh(lg::matmul(x, x.t())); }));
  std::printf("svd fwd+bwd: %.2f ms\n", best([&] {
                lg::Tensor a = x.detach().requires_grad_(true);
                auto [u, s, vh] = lg::linalg::svd(a, false);
                (u * s).matmul(vh).sum().backward();
              }));
}
