// The backend contract: every raw-pointer launcher a backend provides, declared once for both
// backends (as candle's backend.rs lists the ops of a backend). The list is
// kernels/backend_launchers.inc, included below inside namespace kernels::cpu (defined in
// kernels/cpu/*.cpp: the plain reference loops and the fast CPU kernels) and inside
// kernels::cuda (defined in kernels/cuda/*.cu; in a build without CUDA by the throwing stubs of
// kernels/no_cuda/cuda_stubs.cpp). Only the tensor-level entries (kernels/ops_*.cpp) call these,
// after checking dtypes, devices and shapes and making operands contiguous where a launcher says
// so; each entry's `switch` on the device picks the namespace. CUDA launchers run on the current
// stream of the current device and return without waiting for the GPU.
//
// Adding an op touches five places (docs/architecture.md walks through one): its launcher here,
// its CPU loop in kernels/cpu/<op>.cpp, its CUDA kernel in kernels/cuda/<op>.cu, its tensor-level
// entry in kernels/ops.h and kernels/ops_<op>.cpp, and its rows in the device op table
// (tests/kernels/op_table*.cpp).
#pragma once

#include <cstdint>
#include <vector>

#include <leangrad/core/dtype.h>
#include <leangrad/kernels/conv_geometry.h>
#include <leangrad/kernels/elementwise_geometry.h>
#include <leangrad/kernels/gather_geometry.h>
#include <leangrad/kernels/group_norm_math.h>
#include <leangrad/kernels/layers_math.h>
#include <leangrad/kernels/matmul_geometry.h>
#include <leangrad/kernels/ops.h>
#include <leangrad/kernels/optim_math.h>

namespace leangrad::kernels::cpu {
#include <leangrad/kernels/backend_launchers.inc>
}  // namespace leangrad::kernels::cpu

namespace leangrad::kernels::cuda {
#include <leangrad/kernels/backend_launchers.inc>
}  // namespace leangrad::kernels::cuda
