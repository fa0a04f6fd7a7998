// kernels::cuda::copy_bytes (kernels/cuda/copy.h): byte copies CPU <-> CUDA and CUDA <-> CUDA
// with cudaMemcpyAsync on the current stream of the CUDA side's device. ops::copy_ calls it for
// cross-device copies of contiguous data; strided and dtype-changing copies are kernels (cast).
// When it returns:
//   host <-> device, non_blocking with a pinned host side: at once (the copy is queued);
//   host <-> device otherwise (pageable memory, or blocking): after the stream has synchronized;
//   device -> device, one GPU: at once; the copy is ordered on the stream like a kernel;
//   device -> device, two GPUs: after the copy has completed (both streams synchronized).
// Every stream synchronisation here counts as a host sync (core/host_sync.h).
#include <leangrad/kernels/cuda/copy.h>

#include <leangrad/core/cuda.h>
#include <leangrad/core/error.h>
#include <leangrad/core/host_sync.h>
#include <leangrad/kernels/cuda/cuda_common.cuh>

namespace leangrad::kernels::cuda {
namespace {

cudaStream_t device_stream(int device) {
  return static_cast<cudaStream_t>(leangrad::cuda::current_stream(device).handle());
}

}  // namespace

void copy_bytes(void* dst, Device dst_device, bool dst_pinned, const void* src, Device src_device,
                bool src_pinned, std::size_t nbytes, bool non_blocking) {
  LG_INTERNAL_ASSERT(dst_device.is_cuda() || src_device.is_cuda(),
                     "copy_bytes: neither side is a CUDA device (", src_device, " -> ", dst_device,
                     ")");
  if (nbytes == 0) return;

  if (dst_device.is_cuda() && src_device.is_cuda()) {
    if (dst_device.index == src_device.index) {
      CudaDeviceGuard guard(dst_device.index);
      LG_CUDA_CHECK(cudaMemcpyAsync(dst, src, nbytes, cudaMemcpyDeviceToDevice,
                                    device_stream(dst_device.index)));
      return;
    }
    // Two GPUs: the source must be complete before the copy reads it, and the copy complete
    // before either block can be reused by its allocator (which orders reuse only on its own
    // device's stream). Rare enough that synchronizing both sides is the right trade.
    const cudaStream_t src_stream = device_stream(src_device.index);
    {
      CudaDeviceGuard guard(src_device.index);
      count_host_sync();
      LG_CUDA_CHECK(cudaStreamSynchronize(src_stream));
    }
    CudaDeviceGuard guard(dst_device.index);
    const cudaStream_t dst_stream = device_stream(dst_device.index);
    LG_CUDA_CHECK(
        cudaMemcpyPeerAsync(dst, dst_device.index, src, src_device.index, nbytes, dst_stream));
    count_host_sync();
    LG_CUDA_CHECK(cudaStreamSynchronize(dst_stream));
    return;
  }

  const bool host_to_device = dst_device.is_cuda();
  const int device = host_to_device ? dst_device.index : src_device.index;
  const bool host_pinned = host_to_device ? src_pinned : dst_pinned;
  CudaDeviceGuard guard(device);
  const cudaStream_t stream = device_stream(device);
  LG_CUDA_CHECK(cudaMemcpyAsync(
      dst, src, nbytes, host_to_device ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost, stream));
  // Pageable memory gives no asynchrony worth keeping, and a blocking copy must have landed.
  if (!(non_blocking && host_pinned)) {
    count_host_sync();
    LG_CUDA_CHECK(cudaStreamSynchronize(stream));
  }
}

}  // namespace leangrad::kernels::cuda
