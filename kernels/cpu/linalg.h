// CPU launcher of the matrix product (Eigen), the reference for kernels/cuda/linalg.cu. Called
// only by kernels/ops_linalg.cpp, which has checked shapes, dtypes and devices.
#pragma once

#include "core/dtype.h"
#include "kernels/matmul_geometry.h"

namespace leangrad::kernels::cpu {

// out = a @ b for every batch (see MatmulGeometry). float32 and float64; ops::matmul computes
// float16/bfloat16 products on the CPU in float32.
void matmul(DType dtype, const MatmulGeometry& g, void* out);

}  // namespace leangrad::kernels::cpu
