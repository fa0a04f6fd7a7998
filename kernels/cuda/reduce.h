// CUDA launchers of the reductions, on the current stream (asynchronous). Same contract as
// kernels/cpu/reduce.h, which is the reference: called only by kernels/ops_reduce.cpp with the
// input permuted and copied so that output o reduces in[o * reduce_size, (o + 1) * reduce_size).
#pragma once

#include <cstdint>

#include "core/dtype.h"
#include "kernels/ops.h"

namespace leangrad::kernels::cuda {

// `in` holds num_outputs * reduce_size contiguous elements of `dtype`; `out` holds num_outputs
// elements of dtype `dtype`, except for Sum of integral/bool input, whose `out` is int64.
// reduce_size 0 gives 0 for Sum and NaN for Mean. Deterministic: no atomics, and the split of the
// work depends only on the sizes.
void reduce(ReduceOp op, DType dtype, void* out, const void* in, std::int64_t num_outputs,
            std::int64_t reduce_size);

// out[o] = index (within its run) of the first maximum of run o; NaN counts as the maximum.
// reduce_size must be > 0.
void argmax(DType dtype, std::int64_t* out, const void* in, std::int64_t num_outputs,
            std::int64_t reduce_size);

}  // namespace leangrad::kernels::cuda
