// CPU launchers of the reductions (the reference for kernels/cuda/reduce.cu). Called only by
// kernels/ops_reduce.cpp, which has permuted and copied the input so that output element o
// reduces the contiguous run in[o * reduce_size, (o + 1) * reduce_size).
#pragma once

#include <cstdint>

#include "core/dtype.h"
#include "kernels/ops.h"

namespace leangrad::kernels::cpu {

// `in` holds num_outputs * reduce_size contiguous elements of `dtype`; `out` holds num_outputs
// elements of dtype `dtype`, except for Sum of integral/bool input, whose `out` is int64.
// reduce_size 0 gives 0 for Sum and NaN for Mean (Max is rejected by the caller). Sums are
// pairwise (see Note [Pairwise summation] in reduce.cpp); the result never depends on the number
// of threads.
void reduce(ReduceOp op, DType dtype, void* out, const void* in, std::int64_t num_outputs,
            std::int64_t reduce_size);

// out[o] = index (within its run) of the first maximum of run o; NaN counts as the maximum.
// reduce_size must be > 0.
void argmax(DType dtype, std::int64_t* out, const void* in, std::int64_t num_outputs,
            std::int64_t reduce_size);

}  // namespace leangrad::kernels::cpu
