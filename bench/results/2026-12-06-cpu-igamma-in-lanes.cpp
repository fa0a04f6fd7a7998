// The forward and forward + backward of igamma over 2048 x 4096 float32 pairs, a and x in
// [4, 12) (the ops scan's igamma row), mean of 3 after one warm-up, for
// 2026-12-06-cpu-igamma-in-lanes-zen4-2core.md. Build and run against a build of leangrad:
//   g++ -O2 -std=c++20 -I. bench/results/2026-12-06-cpu-igamma-in-lanes.cpp -Lbuild -lleangrad \
//     -Wl,-rpath,$PWD/build -o /tmp/igamma && OMP_NUM_THREADS=1 /tmp/igamma
#include <chrono>
#include <cstdio>

#include <leangrad/leangrad.h>

namespace lg = leangrad;

int main() {
  const lg::Tensor a = (lg::rand({2048, 4096}) + 0.5) * 8.0;
  const lg::Tensor x = ((lg::rand({2048, 4096}) + 0.5) * 8.0).requires_grad_(true);
  const auto time = [](const char* name, const auto& f) {
    f();
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < 3; ++i)
      f();
    const auto end = std::chrono::steady_clock::now();
    std::printf("%s %.1f ms\n", name,
                std::chrono::duration<double, std::milli>(end - start).count() / 3);
  };
  time("igamma fwd", [&] {
    lg::NoGradGuard no_grad;
    lg::igamma(a, x);
  });
  time("igamma fwd+bwd", [&] { lg::sum(lg::igamma(a, x)).backward(); });
}
