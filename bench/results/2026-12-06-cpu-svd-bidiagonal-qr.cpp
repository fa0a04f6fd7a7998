// Where the forward of the 256 x 256 float32 SVD goes, before and after the bidiagonal QR
// (bench/results/2026-12-06-cpu-svd-bidiagonal-qr-zen4-2core.md): Eigen's BDCSVD whole, with and
// without vectors, against the pieces kernels::svd now runs: Eigen's Householder
// bidiagonalization, forming U and V from its reflections, and kernels::bidiagonal_svd with and
// without vectors. Best of 7 runs each, one thread.
//   g++ -O3 -march=x86-64-v3 -DNDEBUG -std=c++20 -I. -I/usr/include/eigen3 \
//     bench/results/2026-12-06-cpu-svd-bidiagonal-qr.cpp -Lbuild -lleangrad \
//     -Wl,-rpath,$PWD/build -o /tmp/svd-pieces && /tmp/svd-pieces
#include <Eigen/SVD>

#include <algorithm>
#include <chrono>
#include <cstdio>

#include <leangrad/kernels/bidiagonal_svd.h>

using Matrix = Eigen::MatrixXf;

template <typename F>
double best_ms(F f) {
  double best = 1e9;
  for (int r = 0; r < 7; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    f();
    best = std::min(best,
                    std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  return best * 1e3;
}

int main() {
  const int n = 256;
  const Matrix a = Matrix::Random(n, n);
  std::printf("Eigen BDCSVD with U and V: %.3f ms\n", best_ms([&] {
                Eigen::BDCSVD<Matrix> s(a, Eigen::ComputeThinU | Eigen::ComputeThinV);
              }));
  std::printf("Eigen BDCSVD values only:  %.3f ms\n", best_ms([&] { Eigen::BDCSVD<Matrix> s(a); }));
  std::printf("bidiagonalization:         %.3f ms\n",
              best_ms([&] { Eigen::internal::UpperBidiagonalization<Matrix> b(a); }));
  Eigen::internal::UpperBidiagonalization<Matrix> reduction(a);
  Matrix u, v;
  std::printf("form U:                    %.3f ms\n", best_ms([&] {
                u = Matrix::Identity(n, n);
                u.applyOnTheLeft(reduction.householderU());
              }));
  std::printf("form V:                    %.3f ms\n", best_ms([&] {
                v = Matrix::Identity(n, n);
                v.applyOnTheLeft(reduction.householderV());
              }));
  const Eigen::VectorXf d0 = reduction.bidiagonal().diagonal();
  const Eigen::VectorXf e0 = reduction.bidiagonal().diagonal(1);
  for (const bool vectors : {true, false}) {
    std::printf("bidiagonal QR, vectors %d:  %.3f ms\n", vectors, best_ms([&] {
                  Eigen::VectorXf d = d0, e = e0;
                  Matrix uu = u, vv = v;
                  leangrad::kernels::bidiagonal_svd(d.data(), e.data(), n,
                                                    vectors ? uu.data() : nullptr, n,
                                                    vectors ? vv.data() : nullptr, n);
                }));
  }
}
