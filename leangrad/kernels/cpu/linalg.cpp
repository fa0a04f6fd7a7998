// Matrix products on the CPU: each matrix of the batch is one gemm (kernels/cpu/gemm.h: oneDNN's
// sgemm or Eigen) over the tensor's memory, an operand stored column-major (a transposed view) read
// as the transpose of a row-major one, so nothing is copied. Threads: with at least as many
// batches as threads, batches run in parallel and each gemm on its own thread; otherwise the
// batches run one after another and gemm splits each product over the threads.
#include <leangrad/kernels/backend.h>

#include <algorithm>

#include <leangrad/core/error.h>
#include <leangrad/kernels/cpu/gemm.h>
#include <leangrad/kernels/cpu/parallel_for.h>

namespace leangrad::kernels::cpu {

namespace {

// Matrix `batch` of x as gemm takes it: its first element, whether it is stored transposed, and
// the distance between its stored rows.
template <typename T>
struct GemmOperand {
  const T* data;
  bool trans;
  std::int64_t ld;
};

template <typename T>
GemmOperand<T> gemm_operand(const MatmulOperand& x, std::int64_t batch) {
  const T* base = static_cast<const T*>(x.data) + batch * x.batch_stride;
  return x.row_major() ? GemmOperand<T>{base, false, x.row_stride}
                       : GemmOperand<T>{base, true, x.col_stride};
}

template <typename T>
void matmul_batch(const MatmulGeometry& g, T* out, std::int64_t batch) {
  const GemmOperand<T> a = gemm_operand<T>(g.a, batch);
  const GemmOperand<T> b = gemm_operand<T>(g.b, batch);
  gemm<T>(a.trans, b.trans, g.m, g.n, g.k, T(1), a.data, a.ld, b.data, b.ld, T(0),
          out + batch * g.m * g.n, g.n);
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
