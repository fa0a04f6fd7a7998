// Matrix products on the CPU with Eigen. Each operand is an Eigen::Map over the tensor's memory,
// row-major or column-major as its strides say (MatmulGeometry), so transposed views are
// multiplied in place. Threads: with at least as many batches as threads, batches run in parallel
// (Eigen then stays single-threaded inside each: it does not nest OpenMP regions); otherwise the
// batches run one after another and Eigen parallelizes each product (it is built with OpenMP and
// follows the calling thread's OpenMP default, which max_threads() sets to set_num_threads's
// count).
#include <leangrad/kernels/backend.h>

#include <algorithm>

#include <Eigen/Core>

#include <leangrad/core/error.h>
#include <leangrad/kernels/cpu/parallel_for.h>

namespace leangrad::kernels::cpu {

namespace {

template <typename T>
using RowMajorMatrix = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
template <typename T>
using ColMajorMatrix = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::ColMajor>;

// Calls f with an Eigen::Map of matrix `batch` of operand x, (rows, cols). Both map types have a
// unit inner stride, which Eigen's GEMM needs to read the memory directly instead of copying it.
template <typename T, typename F>
void with_matrix(const MatmulOperand& x, std::int64_t batch, std::int64_t rows, std::int64_t cols,
                 const F& f) {
  const T* base = static_cast<const T*>(x.data) + batch * x.batch_stride;
  if (x.row_major()) {
    f(Eigen::Map<const RowMajorMatrix<T>, 0, Eigen::OuterStride<>>(
        base, rows, cols, Eigen::OuterStride<>(x.row_stride)));
  } else {
    f(Eigen::Map<const ColMajorMatrix<T>, 0, Eigen::OuterStride<>>(
        base, rows, cols, Eigen::OuterStride<>(x.col_stride)));
  }
}

template <typename T>
void matmul_batch(const MatmulGeometry& g, T* out, std::int64_t batch) {
  Eigen::Map<RowMajorMatrix<T>> c(out + batch * g.m * g.n, g.m, g.n);
  with_matrix<T>(g.a, batch, g.m, g.k, [&](const auto& a) {
    with_matrix<T>(g.b, batch, g.k, g.n, [&](const auto& b) { c.noalias() = a * b; });
  });
}

template <typename T>
void matmul_typed(const MatmulGeometry& g, T* out) {
  if (g.batch >= max_threads()) {
    // Threads only when each gets enough multiply-adds to pay for starting them.
    constexpr std::int64_t kMinMacsPerTask = 1 << 18;
    const std::int64_t macs = std::max<std::int64_t>(g.m * g.n * g.k, 1);
    parallel_for(g.batch, std::max<std::int64_t>(1, kMinMacsPerTask / macs),
                 [&](std::int64_t begin, std::int64_t end) {
                   for (std::int64_t i = begin; i < end; ++i)
                     matmul_batch(g, out, i);
                 });
  } else {
    for (std::int64_t i = 0; i < g.batch; ++i)
      matmul_batch(g, out, i);
  }
}

}  // namespace

void matmul(DType dtype, const MatmulGeometry& g, void* out) {
  switch (dtype) {
    case DType::Float32:
      matmul_typed(g, static_cast<float*>(out));
      return;
    case DType::Float64:
      matmul_typed(g, static_cast<double*>(out));
      return;
    default:
      LG_THROW(DTypeError, "matmul (cpu kernel): expected float32 or float64, got ", dtype);
  }
}

}  // namespace leangrad::kernels::cpu
