// CUDA launchers of the Philox random fills (on the current stream); kernels/cpu/random.cpp is the
// reference.
#pragma once

#include <cstdint>

#include "core/dtype.h"

namespace leangrad::kernels::cuda {

// Writes numel contiguous elements of `dtype` (floating) at `out`.
void uniform(DType dtype, void* out, std::int64_t numel, std::uint64_t seed, std::uint64_t offset,
             double low, double high);
void normal(DType dtype, void* out, std::int64_t numel, std::uint64_t seed, std::uint64_t offset,
            double mean, double stddev);

}  // namespace leangrad::kernels::cuda
