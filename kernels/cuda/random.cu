// Philox random fills in CUDA: one thread per element (grid-stride), the same per-element math as
// the CPU reference (kernels/random_math.h), so both devices give the same numbers.
#include "kernels/cuda/random.h"

#include "core/cuda.h"
#include "core/cuda/cuda_check.h"
#include "kernels/dispatch.h"
#include "kernels/random_math.h"

namespace leangrad::kernels::cuda {

namespace {

constexpr int kThreads = 256;

template <typename T>
__global__ void uniform_kernel(T* out, std::int64_t numel, std::uint64_t seed, std::uint64_t offset,
                               double low, double range) {
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < numel;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    out[i] = static_cast<T>(random_math::uniform_at<T>(i, seed, offset, low, range));
  }
}

template <typename T>
__global__ void normal_kernel(T* out, std::int64_t numel, std::uint64_t seed, std::uint64_t offset,
                              double mean, double stddev) {
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < numel;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    out[i] = static_cast<T>(random_math::normal_at<T>(i, seed, offset, mean, stddev));
  }
}

unsigned int grid_for(std::int64_t numel) {
  const std::int64_t blocks = (numel + kThreads - 1) / kThreads;
  return static_cast<unsigned int>(blocks < 65535 ? blocks : 65535);
}

cudaStream_t current() {
  return reinterpret_cast<cudaStream_t>(leangrad::cuda::current_stream().id());
}

}  // namespace

void uniform(DType dtype, void* out, std::int64_t numel, std::uint64_t seed, std::uint64_t offset,
             double low, double high) {
  if (numel == 0) return;
  dispatch_floating(dtype, "uniform_", [&]<typename T>() {
    uniform_kernel<T><<<grid_for(numel), kThreads, 0, current()>>>(static_cast<T*>(out), numel,
                                                                   seed, offset, low, high - low);
    LG_CUDA_CHECK_LAUNCH();
  });
}

void normal(DType dtype, void* out, std::int64_t numel, std::uint64_t seed, std::uint64_t offset,
            double mean, double stddev) {
  if (numel == 0) return;
  dispatch_floating(dtype, "normal_", [&]<typename T>() {
    normal_kernel<T><<<grid_for(numel), kThreads, 0, current()>>>(static_cast<T*>(out), numel, seed,
                                                                  offset, mean, stddev);
    LG_CUDA_CHECK_LAUNCH();
  });
}

}  // namespace leangrad::kernels::cuda
