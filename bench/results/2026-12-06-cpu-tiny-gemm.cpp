// The cost of one kernels::cpu::gemm call on tiny float32 products (Note [Tiny products] in
// kernels/cpu/gemm.cpp), per shape and with b plain or transposed: the mean over 20,000 calls
// after 1,000 untimed, one thread (bench/results/2026-12-06-cpu-tiny-gemm-zen4-2core.md). Run
// against two builds of the library through LD_LIBRARY_PATH to compare them:
//   g++ -O3 -march=x86-64-v3 -std=c++20 -I. bench/results/2026-12-06-cpu-tiny-gemm.cpp \
//     -Lbuild -lleangrad -Wl,-rpath,$PWD/build -o /tmp/tiny-gemm
//   OMP_NUM_THREADS=1 /tmp/tiny-gemm; OMP_NUM_THREADS=1 LD_LIBRARY_PATH=OTHER_BUILD /tmp/tiny-gemm
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <vector>

#include <leangrad/kernels/cpu/gemm.h>

int main() {
  struct Shape {
    std::int64_t m, n, k;
  };
  const Shape shapes[] = {{4, 4, 4},    {8, 8, 8},   {8, 8, 1},    {16, 16, 16},
                          {1, 64, 64},  {64, 64, 1}, {32, 32, 4},  {16, 16, 17},
                          {16, 16, 32}, {32, 32, 8}, {24, 24, 24}, {32, 32, 32}};
  for (const Shape s : shapes) {
    std::vector<float> a(s.m * s.k, 1.1f), b(s.k * s.n, 0.9f), c(s.m * s.n);
    for (const bool trans_b : {false, true}) {
      auto call = [&] {
        leangrad::kernels::cpu::gemm<float>(false, trans_b, s.m, s.n, s.k, 1.0f, a.data(), s.k,
                                            b.data(), trans_b ? s.k : s.n, 0.0f, c.data(), s.n);
      };
      // Untimed first: oneDNN generates its kernels at the first call of a kind (tens of ms).
      for (int r = 0; r < 1000; ++r)
        call();
      constexpr int kCalls = 20000;
      const auto t0 = std::chrono::steady_clock::now();
      for (int r = 0; r < kCalls; ++r)
        call();
      const double ns =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / kCalls *
          1e9;
      std::printf("m %3lld n %3lld k %3lld trans_b %d: %6.0f ns a call\n",
                  static_cast<long long>(s.m), static_cast<long long>(s.n),
                  static_cast<long long>(s.k), trans_b ? 1 : 0, ns);
    }
  }
}
