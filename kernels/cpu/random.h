// CPU launchers of the Philox random fills (the reference for kernels/cuda/random.cu).
#pragma once

#include <cstdint>

#include "core/dtype.h"

namespace leangrad::kernels::cpu {

// Writes numel contiguous elements of `dtype` (floating) at `out`.
void uniform(DType dtype, void* out, std::int64_t numel, std::uint64_t seed, std::uint64_t offset,
             double low, double high);
void normal(DType dtype, void* out, std::int64_t numel, std::uint64_t seed, std::uint64_t offset,
            double mean, double stddev);

}  // namespace leangrad::kernels::cpu
