// Philox random fills in CUDA (uniform, normal of kernels/backend.h): one thread per Philox block,
// one philox4x32_10 call giving all the block's elements (4 for float32/16, 2 for float64), with
// the per-element math of the CPU reference (kernels/random_math.h), so both devices give the
// same numbers.
#include <leangrad/kernels/backend.h>
#include <leangrad/kernels/cuda/cuda_common.cuh>
#include <leangrad/kernels/dispatch.h>
#include <leangrad/kernels/random_math.h>

namespace leangrad::kernels::cuda {
namespace {

constexpr int kThreads = 256;

// Elements [c * kPerBlock, min(numel, (c + 1) * kPerBlock)) of out for every Philox block c.
// Lane(block, lane) is the value of one element.
template <typename T, std::int64_t kPerBlock, typename Lane>
__global__ void philox_fill_kernel(T* __restrict__ out, std::int64_t numel, std::uint64_t seed,
                                   std::uint64_t offset, Lane lane_value) {
  const std::int64_t num_blocks = ceil_div(numel, kPerBlock);
  for (std::int64_t c = global_thread_index(); c < num_blocks; c += grid_thread_count()) {
    const philox::Block block = philox::philox4x32_10(offset + static_cast<std::uint64_t>(c), seed);
    const std::int64_t base = c * kPerBlock;
#pragma unroll
    for (int lane = 0; lane < kPerBlock; ++lane)
      if (base + lane < numel) out[base + lane] = static_cast<T>(lane_value(block, lane));
  }
}

template <typename T>
struct UniformLane {
  double low, range;
  __device__ double operator()(const philox::Block& block, int lane) const {
    return random_math::uniform_lane<T>(block, lane, low, range);
  }
};

template <typename T>
struct NormalLane {
  double mean, stddev;
  __device__ double operator()(const philox::Block& block, int lane) const {
    return random_math::normal_lane<T>(block, lane, mean, stddev);
  }
};

template <typename T, std::int64_t kPerBlock, typename Lane>
void launch_fill(T* out, std::int64_t numel, std::uint64_t seed, std::uint64_t offset,
                 const Lane& lane) {
  auto* kernel = philox_fill_kernel<T, kPerBlock, Lane>;
  const unsigned int blocks =
      grid_size(kernel, kThreads, ceil_div(ceil_div(numel, kPerBlock), kThreads));
  kernel<<<blocks, kThreads, 0, current_stream()>>>(out, numel, seed, offset, lane);
  LG_CUDA_CHECK_LAUNCH();
}

}  // namespace

void uniform(DType dtype, void* out, std::int64_t numel, std::uint64_t seed, std::uint64_t offset,
             double low, double high) {
  if (numel == 0) return;
  dispatch_floating(dtype, "uniform_", [&]<typename T>() {
    launch_fill<T, random_math::uniform_per_block<T>>(static_cast<T*>(out), numel, seed, offset,
                                                      UniformLane<T>{low, high - low});
  });
}

void normal(DType dtype, void* out, std::int64_t numel, std::uint64_t seed, std::uint64_t offset,
            double mean, double stddev) {
  if (numel == 0) return;
  dispatch_floating(dtype, "normal_", [&]<typename T>() {
    launch_fill<T, random_math::normal_per_block<T>>(static_cast<T*>(out), numel, seed, offset,
                                                     NormalLane<T>{mean, stddev});
  });
}

}  // namespace leangrad::kernels::cuda
