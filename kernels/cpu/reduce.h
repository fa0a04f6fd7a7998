// CPU launchers of the reductions (the reference for kernels/cuda/reduce.cu). Called only by
// kernels/ops_reduce.cpp, which has brought the input to one of the contiguous layouts below
// (see its Strategy note) and checked dtypes and sizes.
#pragma once

#include <cstdint>

#include "core/dtype.h"
#include "kernels/ops.h"

namespace leangrad::kernels::cpu {

// `in` is a contiguous (outer, reduce_size, inner) block of `dtype`; `out` is (outer, inner):
//   out[o * inner + j] = op over r of in[(o * reduce_size + r) * inner + j].
// inner == 1 is the common case: output o reduces the contiguous run
// in[o * reduce_size, (o + 1) * reduce_size). out has dtype `dtype`, except for Sum of
// integral/bool input, whose out is int64. reduce_size 0 gives 0 for Sum and NaN for Mean (Max is
// rejected by the caller).
void reduce(ReduceOp op, DType dtype, void* out, const void* in, std::int64_t outer,
            std::int64_t reduce_size, std::int64_t inner);

// out[o] = index (within its run) of the first maximum of run o; NaN counts as the maximum.
// reduce_size must be > 0.
void argmax(DType dtype, std::int64_t* out, const void* in, std::int64_t num_outputs,
            std::int64_t reduce_size);

}  // namespace leangrad::kernels::cpu
