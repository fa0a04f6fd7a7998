// gemm (kernels/cpu/gemm.h): a loop for tiny products (Note [Tiny products]); Eigen's GEMM over
// maps of the operands, or oneDNN's sgemm for float when ops::cpu_gemm_backend() says so.
#include <leangrad/kernels/cpu/gemm.h>

#include <algorithm>
#include <array>
#include <type_traits>

#include <Eigen/Core>

#include <leangrad/kernels/cpu/async_signals.h>
#include <leangrad/kernels/cpu/parallel_for.h>
#include <leangrad/kernels/ops.h>

namespace leangrad::kernels::cpu {

namespace {

template <typename T>
using RowMajorMatrix = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
template <typename T>
using ColMajorMatrix = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::ColMajor>;

// Calls f with op(x) (rows, cols) as an Eigen::Map: x itself row-major, or x^T, which is x's
// memory read column-major. Both maps have a unit inner stride, which Eigen's GEMM needs to read
// the memory in place instead of copying it.
template <typename T, typename F>
void with_operand(bool trans, const T* x, std::int64_t rows, std::int64_t cols, std::int64_t ld,
                  const F& f) {
  if (!trans) {
    f(Eigen::Map<const RowMajorMatrix<T>, 0, Eigen::OuterStride<>>(x, rows, cols,
                                                                   Eigen::OuterStride<>(ld)));
  } else {
    f(Eigen::Map<const ColMajorMatrix<T>, 0, Eigen::OuterStride<>>(x, rows, cols,
                                                                   Eigen::OuterStride<>(ld)));
  }
}

template <typename T>
void eigen_gemm(bool trans_a, bool trans_b, std::int64_t m, std::int64_t n, std::int64_t k, T alpha,
                const T* a, std::int64_t lda, const T* b, std::int64_t ldb, T beta, T* c,
                std::int64_t ldc) {
  Eigen::Map<RowMajorMatrix<T>, 0, Eigen::OuterStride<>> cm(c, m, n, Eigen::OuterStride<>(ldc));
  with_operand(trans_a, a, m, k, lda, [&](const auto& am) {
    with_operand(trans_b, b, k, n, ldb, [&](const auto& bm) {
      if (beta == T(0)) {
        if (alpha == T(1)) {
          cm.noalias() = am * bm;
        } else {
          cm.noalias() = alpha * am * bm;  // Eigen folds the factor into its GEMM
        }
        return;
      }
      if (beta != T(1)) cm *= beta;
      if (alpha == T(1)) {
        cm.noalias() += am * bm;
      } else {
        cm.noalias() += alpha * am * bm;
      }
    });
  });
}

// c = beta * c for an empty sum (k == 0); beta == 0 writes zeros without reading c.
template <typename T>
void scale_output(std::int64_t m, std::int64_t n, T beta, T* c, std::int64_t ldc) {
  for (std::int64_t i = 0; i < m; ++i) {
    T* row = c + i * ldc;
    if (beta == T(0)) {
      std::fill(row, row + n, T(0));
    } else {
      for (std::int64_t j = 0; j < n; ++j)
        row[j] *= beta;
    }
  }
}

// Note [Tiny products]
//   A product of at most kTinyMacs multiply-adds, at least kTinyMinColumns wide (and with a
//   transposed b at least kTinyMinColumns tall), is computed by tiny_gemm's loop rather than by
//   oneDNN or Eigen, whose set-up per call (dispatch, blocking, the signal mask) costs 0.5 us and
//   more, several times the arithmetic: an 8 x 8 x 8 product took 0.60 us through oneDNN's sgemm
//   and takes 0.06 here, 16 x 16 x 16 0.62 and 0.22, and a batch of 4096 of them is one call each
//   (bench/results/2026-12-06-cpu-tiny-gemm-zen4-2core.md). Row i of c is the sum over p, in
//   order, of op(a)[i][p] times row p of op(b): its columns in blocks of kTinyBlock (then half of
//   that, then what is left), each block's sums held in registers, its columns in SIMD lanes. A
//   transposed b is first copied into a row-major scratch (worth it only over several rows, hence
//   the height). A narrow product (a matrix-vector one) would run its inner loop over a column or
//   two, and keeps the libraries. The rounding is within the GEMM bound of the header, and the
//   order does not depend on the thread count.
constexpr std::int64_t kTinyMacs = 8192;
constexpr std::int64_t kTinyMinColumns = 4;
// The columns one block of tiny_gemm sums in registers (two AVX2 vectors of float).
constexpr std::int64_t kTinyBlock = 16;

bool tiny(bool trans_b, std::int64_t m, std::int64_t n, std::int64_t k) {
  if (n < kTinyMinColumns || (trans_b && m < kTinyMinColumns)) return false;
  return m <= kTinyMacs && n <= kTinyMacs && k <= kTinyMacs && m * n * k <= kTinyMacs;
}

// Columns j0 .. j0 + width of row i of c: out = alpha * sum_p x_p row_p + beta * out, the sum over
// p in order. With width a constant (kTinyBlock or half of it), the sums stay in registers.
template <typename T, typename Width>
[[gnu::always_inline]] inline void tiny_block(bool trans_a, std::int64_t i, std::int64_t j0,
                                              Width width, std::int64_t k, T alpha, const T* a,
                                              std::int64_t lda, const T* rows,
                                              std::int64_t row_stride, T beta, T* out) {
  std::array<T, kTinyBlock> sum{};
  for (std::int64_t p = 0; p < k; ++p) {
    const T x = trans_a ? a[p * lda + i] : a[i * lda + p];
    const T* const row = rows + p * row_stride + j0;
    for (std::int64_t j = 0; j < width; ++j)
      sum[j] += x * row[j];
  }
  if (beta == T(0)) {  // out is not read: it may hold garbage
    for (std::int64_t j = 0; j < width; ++j)
      out[j0 + j] = alpha * sum[j];
  } else {
    for (std::int64_t j = 0; j < width; ++j)
      out[j0 + j] = alpha * sum[j] + beta * out[j0 + j];
  }
}

template <typename T>
void tiny_gemm(bool trans_a, bool trans_b, std::int64_t m, std::int64_t n, std::int64_t k, T alpha,
               const T* a, std::int64_t lda, const T* b, std::int64_t ldb, T beta, T* c,
               std::int64_t ldc) {
  std::array<T, kTinyMacs / kTinyMinColumns> packed;  // op(b) when trans_b: k n <= kTinyMacs / m
  const T* rows = b;
  std::int64_t row_stride = ldb;
  if (trans_b) {
    for (std::int64_t p = 0; p < k; ++p) {
      for (std::int64_t j = 0; j < n; ++j)
        packed[p * n + j] = b[j * ldb + p];
    }
    rows = packed.data();
    row_stride = n;
  }
  constexpr std::integral_constant<std::int64_t, kTinyBlock> kBlock;
  constexpr std::integral_constant<std::int64_t, kTinyBlock / 2> kHalfBlock;
  for (std::int64_t i = 0; i < m; ++i) {
    T* const out = c + i * ldc;
    std::int64_t j0 = 0;
    for (; j0 + kBlock <= n; j0 += kBlock)
      tiny_block(trans_a, i, j0, kBlock, k, alpha, a, lda, rows, row_stride, beta, out);
    if (j0 + kHalfBlock <= n) {
      tiny_block(trans_a, i, j0, kHalfBlock, k, alpha, a, lda, rows, row_stride, beta, out);
      j0 += kHalfBlock;
    }
    if (j0 < n) tiny_block(trans_a, i, j0, n - j0, k, alpha, a, lda, rows, row_stride, beta, out);
  }
}

}  // namespace

template <typename T>
void gemm(bool trans_a, bool trans_b, std::int64_t m, std::int64_t n, std::int64_t k, T alpha,
          const T* a, std::int64_t lda, const T* b, std::int64_t ldb, T beta, T* c,
          std::int64_t ldc) {
  if (m <= 0 || n <= 0) return;
  if (k <= 0) {
    scale_output(m, n, beta, c, ldc);
    return;
  }
  if (tiny(trans_b, m, n, k)) {  // Note [Tiny products]
    tiny_gemm(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
    return;
  }
  max_threads();  // the calling thread's OpenMP default, which both libraries follow
  // No signal handled on this thread or its workers while a product runs (Note [Signals and
  // oneDNN's GEMM kernels] in kernels/cpu/async_signals.h): Eigen's products too, whose regions
  // may create the worker threads that later run oneDNN's.
  const AsyncSignalsDeferred signals_deferred;
  if constexpr (std::is_same_v<T, float>) {
    if (ops::cpu_gemm_backend() == ops::CpuGemmBackend::OneDnn) {
      onednn::sgemm(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
      return;
    }
  }
  eigen_gemm(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

template void gemm<float>(bool, bool, std::int64_t, std::int64_t, std::int64_t, float, const float*,
                          std::int64_t, const float*, std::int64_t, float, float*, std::int64_t);
template void gemm<double>(bool, bool, std::int64_t, std::int64_t, std::int64_t, double,
                           const double*, std::int64_t, const double*, std::int64_t, double,
                           double*, std::int64_t);

}  // namespace leangrad::kernels::cpu
