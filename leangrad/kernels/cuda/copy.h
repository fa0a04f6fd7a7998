// Byte copies between host and device memory on the current CUDA stream (cudaMemcpyAsync).
// Used by ops::copy_ for cross-device copies of contiguous data.
#pragma once

#include <cstddef>

#include <leangrad/core/device.h>

namespace leangrad::kernels::cuda {

// Copies nbytes from src (on src_device) to dst (on dst_device); at least one side is CUDA.
// With non_blocking and a pinned host side (src_pinned / dst_pinned) the call returns without
// waiting (the caller marks the pinned block as used on the stream, so the pinned pool does not
// reuse it early). Otherwise it returns once the data is in place: a device-to-host or pageable
// copy synchronizes the stream.
void copy_bytes(void* dst, Device dst_device, bool dst_pinned, const void* src, Device src_device,
                bool src_pinned, std::size_t nbytes, bool non_blocking);

}  // namespace leangrad::kernels::cuda
