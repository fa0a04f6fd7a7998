// avg_pool2d forward and backward with local_response_norm's window, (5, 1) at stride 1 over
// (64, 1, 260, 784) float32 (cross_map_lrn2d's (64, 256, 28, 28) with its channels padded by 2
// on each side), five steps after two of warm-up, the profiler's table: AvgPool2dBackward 84.4 ms
// a call before the shares were kept (bench/results/2026-12-06-cpu-broadcast-runs-zen4-2core.md),
// 37.0 after.
//   g++ -O2 -std=c++20 -I. bench/results/2026-12-06-cpu-avg-pool-backward.cpp -Lbuild -lleangrad \
//       -Wl,-rpath,build -o /tmp/avg_pool_backward && OMP_NUM_THREADS=1 /tmp/avg_pool_backward
#include <leangrad/leangrad.h>
#include <cstdio>
namespace lg = leangrad;
int main() {
  const lg::Tensor x = lg::randn({64, 1, 260, 784}).requires_grad_(true);
  for (int r = 0; r < 2; ++r)
    lg::avg_pool2d(x, {5, 1}, {1, 1}).sum().backward();
  lg::profiler::Profile p;
  for (int r = 0; r < 5; ++r)
    lg::avg_pool2d(x, {5, 1}, {1, 1}).sum().backward();
  std::puts(p.table(6).c_str());
}
