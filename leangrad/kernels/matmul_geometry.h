// MatmulGeometry: a batched matrix product as the CPU (kernels/cpu/gemm.h) and CUDA (cuBLAS)
// launchers see it.
// Built by ops::matmul (kernels/ops_linalg.cpp), which views every operand as (batch, rows, cols)
// with BLAS-compatible strides, copying only operands that have none.
#pragma once

#include <cstdint>

namespace leangrad {

// One operand: element (batch b, row i, col j) lives at
// data[b * batch_stride + i * row_stride + j * col_stride], in elements. Always one of
//   row-major:    col_stride == 1 and row_stride >= max(cols, 1)
//   column-major: row_stride == 1 and col_stride >= max(rows, 1)   (e.g. a transposed view)
// batch_stride is 0 when one matrix is broadcast over the batch.
struct MatmulOperand {
  const void* data = nullptr;
  std::int64_t batch_stride = 0;
  std::int64_t row_stride = 0;
  std::int64_t col_stride = 0;

  bool row_major() const { return col_stride == 1; }
};

// out (batch, m, n), contiguous = a (batch, m, k) @ b (batch, k, n), all of one dtype; every
// size > 0 (ops::matmul handles empty products itself).
struct MatmulGeometry {
  std::int64_t batch = 1;
  std::int64_t m = 0;
  std::int64_t n = 0;
  std::int64_t k = 0;
  MatmulOperand a;
  MatmulOperand b;
};

}  // namespace leangrad
