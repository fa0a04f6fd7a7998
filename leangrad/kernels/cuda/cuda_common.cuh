// The helpers every CUDA kernel file uses, in one place: the current stream, ceil_div, the one
// grid-size policy (the device's real SM count times the kernel's occupancy), Vector<T, W> for
// 16-byte loads with its alignment check, warp and block reductions of any trivially copyable
// type, and Workspace (scratch memory from the caching allocator). Included only by
// kernels/cuda/*.cu; the host parts are defined in cuda_common.cu.
//
// Note [Grid policy]
//   A grid-stride kernel gets min(blocks the work needs, one full wave), a wave being
//   sm_count() x resident_blocks_per_sm(kernel, threads): every block the device can hold at once,
//   each looping over the rest. Both numbers come from the device (cudaDeviceGetAttribute,
//   cudaOccupancyMaxActiveBlocksPerMultiprocessor), cached per device and per kernel, so the same
//   code fills an RTX 3060 and an H200 with no per-GPU constants. Kernels whose blocks each own a
//   fixed piece of the problem (a GEMM tile, an optimizer chunk) launch one block per piece and
//   do not use grid_size.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include <leangrad/core/allocator.h>
#include <leangrad/core/cuda/cuda_check.h>
#include <leangrad/core/macros.h>

namespace leangrad::kernels::cuda {

inline constexpr int kWarpSize = 32;
inline constexpr unsigned int kFullWarpMask = 0xffffffffu;
inline constexpr int kVectorBytes = 16;  // the widest single load of a thread

// ---- Streams and sizes -----------------------------------------------------------------------

// The stream this thread's kernels go to on the current device (core/cuda.h current_stream).
cudaStream_t current_stream();

LG_HOST_DEVICE constexpr std::int64_t ceil_div(std::int64_t a, std::int64_t b) {
  return (a + b - 1) / b;
}

// ---- Grid policy (Note [Grid policy]) --------------------------------------------------------

// Streaming multiprocessors of the current device.
int sm_count();

// cudaOccupancyMaxActiveBlocksPerMultiprocessor as the caller's translation unit sees it.
using OccupancyQuery = cudaError_t (*)(int* blocks, const void* kernel, int threads,
                                       std::size_t dynamic_smem_bytes);

// Note [Occupancy in the caller's runtime]
//   A kernel is known only to the CUDA runtime that registered it: libleangrad's kernels to the
//   runtime linked statically into it, a program's own kernels (bench/variants) to the runtime
//   that program links. Asked about a kernel it does not hold, a runtime answers
//   cudaErrorInvalidResourceHandle. So the occupancy query is compiled into each caller's
//   translation unit (`static`: internal linkage, one copy per unit, which no other library's
//   copy can interpose) and handed to the cache in cuda_common.cu, which keys it by kernel,
//   device, threads and shared memory.
static inline cudaError_t occupancy_of(int* blocks, const void* kernel, int threads,
                                       std::size_t dynamic_smem_bytes) {
  return cudaOccupancyMaxActiveBlocksPerMultiprocessor(blocks, kernel, threads, dynamic_smem_bytes);
}

// Blocks of `kernel` (threads per block, dynamic shared memory) one SM holds at once, at least 1;
// `query` asks the runtime that registered the kernel.
int resident_blocks_per_sm(const void* kernel, int threads, std::size_t dynamic_smem_bytes,
                           OccupancyQuery query);
template <typename Kernel>
int resident_blocks_per_sm(Kernel* kernel, int threads, std::size_t dynamic_smem_bytes = 0) {
  return resident_blocks_per_sm(reinterpret_cast<const void*>(kernel), threads, dynamic_smem_bytes,
                                &occupancy_of);
}

// One wave of `kernel` (Note [Grid policy]): every block of it the device holds at once.
template <typename Kernel>
std::int64_t wave_blocks(Kernel* kernel, int threads, std::size_t dynamic_smem_bytes = 0) {
  return static_cast<std::int64_t>(sm_count()) *
         resident_blocks_per_sm(kernel, threads, dynamic_smem_bytes);
}

// Blocks for a grid-stride `kernel` whose work would fill `blocks_needed` blocks: at most one wave.
template <typename Kernel>
unsigned int grid_size(Kernel* kernel, int threads, std::int64_t blocks_needed,
                       std::size_t dynamic_smem_bytes = 0) {
  const std::int64_t wave = wave_blocks(kernel, threads, dynamic_smem_bytes);
  const std::int64_t blocks = blocks_needed < wave ? blocks_needed : wave;
  return static_cast<unsigned int>(blocks < 1 ? 1 : blocks);
}

// ---- Vectors ---------------------------------------------------------------------------------

// kWidth elements of T loaded or stored as one access (16 bytes for float x 4, half x 8).
template <typename T, int kWidth>
struct alignas(sizeof(T) * kWidth) Vector {
  T val[kWidth];
};

// Elements of T in one 16-byte vector.
template <typename T>
inline constexpr int kVectorWidth = kVectorBytes / static_cast<int>(sizeof(T));

// True when every pointer may be accessed as Vector<T, kWidth> (null counts: an absent operand).
template <typename T, int kWidth, typename... Pointers>
bool vector_aligned(const Pointers*... pointers) {
  constexpr std::uintptr_t kAlign = alignof(Vector<T, kWidth>);
  return ((reinterpret_cast<std::uintptr_t>(pointers) % kAlign == 0) && ...);
}

// Vector number v of p (elements [v * kWidth, (v + 1) * kWidth)).
template <int kWidth, typename T>
__device__ __forceinline__ Vector<std::remove_const_t<T>, kWidth> load_vector(T* p,
                                                                              std::int64_t v) {
  return reinterpret_cast<const Vector<std::remove_const_t<T>, kWidth>*>(p)[v];
}
template <int kWidth, typename T>
__device__ __forceinline__ void store_vector(T* p, std::int64_t v, const Vector<T, kWidth>& x) {
  reinterpret_cast<Vector<T, kWidth>*>(p)[v] = x;
}

// ---- Grid-stride indices ---------------------------------------------------------------------

__device__ __forceinline__ std::int64_t global_thread_index() {
  return static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
}
__device__ __forceinline__ std::int64_t grid_thread_count() {
  return static_cast<std::int64_t>(gridDim.x) * blockDim.x;
}

// ---- Reductions ------------------------------------------------------------------------------
// For any trivially copyable T (float, a Welford state, an (value, index) pair) and any
// associative merge; every tree is fixed, so results depend only on the sizes, never on timing.

// v shuffled across the warp as 32-bit words: shuffle(word) is one __shfl_*_sync of a word.
template <typename T, typename Shuffle>
__device__ __forceinline__ T shuffle_words(const T& v, const Shuffle& shuffle) {
  static_assert(std::is_trivially_copyable_v<T>, "shuffled values must be trivially copyable");
  constexpr int kWords = static_cast<int>((sizeof(T) + 3) / 4);
  unsigned int words[kWords] = {};
  std::memcpy(words, &v, sizeof(T));
#pragma unroll
  for (int w = 0; w < kWords; ++w)
    words[w] = shuffle(words[w]);
  T out;
  std::memcpy(&out, words, sizeof(T));
  return out;
}

// v from the lane `offset` above; v from the lane whose index differs by `mask`.
template <typename T>
__device__ __forceinline__ T shfl_down(const T& v, int offset) {
  return shuffle_words(
      v, [offset](unsigned int w) { return __shfl_down_sync(kFullWarpMask, w, offset); });
}
template <typename T>
__device__ __forceinline__ T shfl_xor(const T& v, int mask) {
  return shuffle_words(v,
                       [mask](unsigned int w) { return __shfl_xor_sync(kFullWarpMask, w, mask); });
}

// Lane 0 gets merge() of the warp's 32 values (a halving tree: lane i takes lane i + offset).
template <typename T, typename Merge>
__device__ __forceinline__ T warp_reduce(T v, Merge merge) {
#pragma unroll
  for (int offset = kWarpSize / 2; offset > 0; offset /= 2)
    v = merge(v, shfl_down(v, offset));
  return v;
}

// Every lane gets merge() of the values of its kLanes-lane segment of the warp (segments of
// consecutive lanes, kLanes a power of two up to 32: the whole warp by default), by a butterfly:
// the same value in every lane of a segment.
template <int kLanes = kWarpSize, typename T, typename Merge>
__device__ __forceinline__ T warp_allreduce(T v, Merge merge) {
  static_assert(kLanes > 0 && kLanes <= kWarpSize && (kLanes & (kLanes - 1)) == 0);
#pragma unroll
  for (int offset = kLanes / 2; offset > 0; offset /= 2)
    v = merge(v, shfl_xor(v, offset));
  return v;
}

// Thread 0 gets merge() of the block's values: warps first, then warp 0 over the warps' results.
// blockDim.x is a multiple of 32 and at most kMaxThreads; `identity` pads the missing warps.
// Ends with a barrier, so a block may call it again at once.
template <int kMaxThreads, typename T, typename Merge>
__device__ T block_reduce(T v, Merge merge, T identity) {
  static_assert(kMaxThreads % kWarpSize == 0 && kMaxThreads <= 1024);
  constexpr int kMaxWarps = kMaxThreads / kWarpSize;
  // Raw storage: T may have default member initializers, which __shared__ variables cannot run.
  __shared__ __align__(16) unsigned char storage[kMaxWarps * sizeof(T)];
  T* warp_results = reinterpret_cast<T*>(storage);
  const int lane = static_cast<int>(threadIdx.x) % kWarpSize;
  const int warp = static_cast<int>(threadIdx.x) / kWarpSize;
  v = warp_reduce(v, merge);
  if (lane == 0) warp_results[warp] = v;
  __syncthreads();
  if (warp == 0) {
    const int num_warps = static_cast<int>(blockDim.x) / kWarpSize;
    v = warp_reduce(lane < num_warps ? warp_results[lane] : identity, merge);
  }
  __syncthreads();
  return v;
}

// Every thread of the block gets the result of block_reduce (broadcast through shared memory).
template <int kMaxThreads, typename T, typename Merge>
__device__ T block_allreduce(T v, Merge merge, T identity) {
  __shared__ __align__(16) unsigned char storage[sizeof(T)];
  T* result = reinterpret_cast<T*>(storage);
  v = block_reduce<kMaxThreads>(v, merge, identity);
  if (threadIdx.x == 0) *result = v;
  __syncthreads();
  v = *result;
  __syncthreads();
  return v;
}

// The merges most kernels need.
struct SumMerge {
  template <typename T>
  __device__ T operator()(const T& a, const T& b) const {
    return a + b;
  }
};

// ---- Workspace -------------------------------------------------------------------------------

// Scratch memory on the current device from its caching allocator, carved into typed arrays
// (each 256-byte aligned). Stream-ordered: freeing it when the launcher returns is safe, because
// later work on the stream runs after the kernels that used it.
class Workspace {
 public:
  // Bytes that take<U>(count) uses, for sizing a workspace before carving it.
  template <typename U>
  static std::size_t bytes_for(std::int64_t count) {
    return round_up(static_cast<std::size_t>(count) * sizeof(U));
  }
  explicit Workspace(std::size_t nbytes);

  template <typename U>
  U* take(std::int64_t count) {
    const std::size_t nbytes = bytes_for<U>(count);
    LG_INTERNAL_ASSERT(used_ + nbytes <= size_, "Workspace: ", used_ + nbytes, " bytes taken of ",
                       size_);
    U* p = reinterpret_cast<U*>(static_cast<unsigned char*>(data_.get()) + used_);
    used_ += nbytes;
    return p;
  }

 private:
  static std::size_t round_up(std::size_t nbytes) { return (nbytes + 255) / 256 * 256; }
  DataPtr data_;
  std::size_t size_ = 0;
  std::size_t used_ = 0;
};

}  // namespace leangrad::kernels::cuda
