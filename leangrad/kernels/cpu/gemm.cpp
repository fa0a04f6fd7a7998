// gemm (kernels/cpu/gemm.h): Eigen's GEMM over maps of the operands, or oneDNN's sgemm for float
// when ops::cpu_gemm_backend() says so.
#include <leangrad/kernels/cpu/gemm.h>

#include <algorithm>
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
