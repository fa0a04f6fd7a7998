// The reductions of the collectives (ReduceOp) and the elementwise loops that apply them to raw
// buffers. Backends call these wherever they combine two ranks' data: Gloo's all-reduce takes
// reduce_buffers as its reduction function, reduce_scatter combines the pieces it received with
// it. One function for every backend, so every backend rounds the same way.
#pragma once

#include <cstddef>

#include <leangrad/core/dtype.h>

namespace leangrad::distributed {

// Avg is a Sum followed by a division by the group size (floating dtypes only).
enum class ReduceOp { Sum, Avg, Max, Min };

// "sum", "avg", "max", "min" (as in error messages).
const char* reduce_op_name(ReduceOp op);

// Whether `op` can reduce tensors of `dtype`: Sum/Max/Min every numeric dtype (not bool), Avg the
// floating ones only.
bool reduce_op_supports(ReduceOp op, DType dtype);

// out[i] = a[i] (op) b[i] for n elements of `dtype`; out may alias a or b. Sum, Max and Min only
// (Avg reduces with Sum; see divide_buffer). Float16 and BFloat16 compute in float and round
// once per pair (so a sum over n ranks rounds n - 1 times, in the order the backend combines
// the ranks); Max and Min propagate NaN, as torch.max does.
void reduce_buffers(ReduceOp op, DType dtype, void* out, const void* a, const void* b,
                    std::size_t n);

// data[i] /= divisor for n elements of a floating `dtype`, computed in float for the 16-bit
// dtypes and rounded once: the second half of Avg.
void divide_buffer(DType dtype, void* data, std::size_t n, int divisor);

}  // namespace leangrad::distributed
