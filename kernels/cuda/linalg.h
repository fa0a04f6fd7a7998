// CUDA launcher of the matrix product (cuBLAS), on the current stream of the current device
// (asynchronous). Same contract as kernels/cpu/linalg.h, which is the reference.
#pragma once

#include "core/dtype.h"
#include "kernels/matmul_geometry.h"

namespace leangrad::kernels::cuda {

// out = a @ b for every batch (see MatmulGeometry). float32 (TF32 tensor cores only when
// cuda::allow_tf32()), float64, float16 and bfloat16 (both accumulate in float32).
void matmul(DType dtype, const MatmulGeometry& g, void* out);

}  // namespace leangrad::kernels::cuda
