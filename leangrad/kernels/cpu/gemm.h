// gemm: the one matrix product every CPU kernel calls (matmul, linear through it, conv2d's three
// products). Row-major, as BLAS's gemm in its row-major form:
//   c (m, n) = alpha * op(a) op(b) + beta * c,   op(x) = x, or x^T when trans_x,
// where a is stored (m, k), or (k, m) when trans_a, each row lda elements after the one before;
// b likewise (k, n) or (n, k) with ldb; c (m, n) with ldc. beta == 0 never reads c (it may hold
// garbage, even NaN), as in BLAS.
//
// Products of at most 8192 multiply-adds (at least 4 columns wide) run a plain loop on the calling
// thread, whatever the backend: the libraries' set-up per call is several times their arithmetic
// (Note [Tiny products] in gemm.cpp). Two implementations take the rest (ops::CpuGemmBackend
// picks, for float):
//  - Eigen's GEMM over Eigen::Maps of the operands (always there, and every float64 product);
//    compiled for the build's architecture (LEANGRAD_CPU_ARCH).
//  - oneDNN's sgemm (kernels/onednn/, in builds with LEANGRAD_WITH_ONEDNN; the default there): its
//    kernels are generated at run time for the CPU the program runs on (AVX2, AVX-512, AMX), so
//    one binary gets each machine's widest vectors.
// Each sums an output's k products in an order of its own: results agree to within the usual
// GEMM rounding bound (k * eps * sum |a| |b|), not bitwise. Each is deterministic for a given
// thread count and alignment of the operands: Eigen's small products peel their loops to the
// operands' alignment, so a buffer at another address can change the last bits (tensors are
// 64-byte aligned; kernels/cpu/attention.cpp aligns its scratch tiles so).
//
// Threads: called outside a parallel region, either library splits the product over max_threads()
// threads; called from inside a parallel_for task (a batch of products in parallel), it runs on the
// calling thread alone.
#pragma once

#include <cstdint>
#include <string>

namespace leangrad::kernels::cpu {

template <typename T>
void gemm(bool trans_a, bool trans_b, std::int64_t m, std::int64_t n, std::int64_t k, T alpha,
          const T* a, std::int64_t lda, const T* b, std::int64_t ldb, T beta, T* c,
          std::int64_t ldc);

extern template void gemm<float>(bool, bool, std::int64_t, std::int64_t, std::int64_t, float,
                                 const float*, std::int64_t, const float*, std::int64_t, float,
                                 float*, std::int64_t);
extern template void gemm<double>(bool, bool, std::int64_t, std::int64_t, std::int64_t, double,
                                  const double*, std::int64_t, const double*, std::int64_t, double,
                                  double*, std::int64_t);

// The oneDNN side: defined in kernels/onednn/onednn_gemm.cpp, or by the stand-ins of
// kernels/no_onednn/ in a build without oneDNN.
namespace onednn {

// Whether this build links oneDNN.
bool built();
// oneDNN's version as the loaded library reports it ("2.6.3"), or "" without oneDNN.
std::string version();
// gemm for float through dnnl_sgemm; throws Error without oneDNN or when oneDNN reports one.
void sgemm(bool trans_a, bool trans_b, std::int64_t m, std::int64_t n, std::int64_t k, float alpha,
           const float* a, std::int64_t lda, const float* b, std::int64_t ldb, float beta, float* c,
           std::int64_t ldc);

// sgemm with trans_b, its b^T copied into a row-major scratch a panel of at most panel_bytes (and
// at least 16 columns of c; at least one panel per thread) at a time, and dnnl_sgemm run on each
// panel with trans_b false, by the thread that copied it (Note [oneDNN's sgemm with b
// transposed]). sgemm takes this path where oneDNN's own is slow; tests call it directly, with
// small panels.
void sgemm_b_transposed_first(bool trans_a, std::int64_t m, std::int64_t n, std::int64_t k,
                              float alpha, const float* a, std::int64_t lda, const float* b,
                              std::int64_t ldb, float beta, float* c, std::int64_t ldc,
                              std::int64_t panel_bytes);

}  // namespace onednn
}  // namespace leangrad::kernels::cpu
