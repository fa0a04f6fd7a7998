// The fused CUDA optimizer kernels of kernels/backend.h: one launch updates many parameter
// tensors, reading each of p, g and the states once and writing each once. The per-element math
// is the CPU's own (kernels/optim_math.h, kernels/quantization_math.h). Layout: multi-tensor lists
// -> device helpers -> kernels (elementwise optimizers, Adam8bit, clip_grad_norm, gradient
// scaling) -> launchers.
//
// Note [Multi-tensor launch]
//   - The host packs the tensors into a TensorList passed BY VALUE as the kernel argument: per
//     tensor its pointers, size and scalars, plus first_chunk[t], the index of tensor t's first
//     chunk (a prefix sum). The list is sized to stay within the portable 4 KiB kernel-parameter
//     limit; longer lists take several launches (GPT-2 small, 148 tensors: 3 or 4).
//   - One CUDA block per chunk: kChunkElements (16384) elements for the elementwise optimizers
//     (float32, float64, float16 or bfloat16, one dtype per launch) and clip_grad_norm, 32 quant
//     blocks (8192 elements) for Adam8bit. A block finds its tensor by binary search over
//     first_chunk, so no block-to-tensor table is needed.
//   - The elementwise kernels load and store 16-byte vectors (4 floats, 2 doubles or 8 16-bit
//     values) when every pointer of the launch is 16-byte aligned (the caching allocator's blocks
//     are), else single elements. Each element's streams are widened to Update::Math (float for
//     the 16-bit types) and every value written rounded once to the dtype (Note [Optimizers in
//     half precision] in kernels/optim_math.h).
//   - Adam8bit: one warp per quant block of 256 elements, 8 per lane (two float4 of p and g,
//     two 4-byte words of codes per moment); the block's new absmax is a warp max (shuffles),
//     its reciprocal is taken once, and each code comes from a guess and the maps' midpoint
//     thresholds (Note [Code search from a guess]): shared memory holds only the two maps and
//     their thresholds, which each CUDA block computes itself. A warp's next quant block is
//     loaded before the current one's math, so its loads are in flight meanwhile.
//   - NaN/Inf gradients, and finite ones whose square overflows the second moment (Adam8bit):
//     the element keeps its parameter and its (dequantised) moments, requantised with the block's
//     new absmax like the others; the kernel stores 1 into *skipped_nonfinite; nothing waits for
//     the GPU.
//   - Gated steps (Note [Gated step] in kernels/optim_math.h): thread 0 of each block resolves its
//     tensor's scalars (block_scalars) before any element is touched; when found_inf skips the
//     step the whole block returns, and the block of the tensor's first chunk counts the skip.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>

#include <leangrad/kernels/backend.h>
#include <leangrad/kernels/quantization_math.h>
#include <leangrad/kernels/cuda/cuda_common.cuh>

namespace leangrad::kernels::cuda {
namespace {

constexpr int kThreadsPerBlock = 256;
constexpr int kWarpsPerBlock = kThreadsPerBlock / kWarpSize;
constexpr int kFloatsPerVector = 4;             // float4
constexpr std::int64_t kChunkElements = 16384;  // elementwise kernels: elements per CUDA block
constexpr int kQuantBlocksPerWarp = 4;          // Adam8bit: quant blocks per warp per chunk
constexpr std::int64_t kQuantBlocksPerChunk = kWarpsPerBlock * kQuantBlocksPerWarp;
constexpr int kElementsPerLane = kQuantBlockSize / kWarpSize;  // 8
constexpr std::size_t kMaxKernelArgBytes = 4096;
static_assert(kThreadsPerBlock == kQuantCodes, "one thread per map entry");
static_assert(kElementsPerLane == 2 * kFloatsPerVector, "two vectors per lane per quant block");

// ---- Multi-tensor lists (Note [Multi-tensor launch]) -----------------------------------------

template <typename Entry>
struct TensorList {
  static constexpr int kMaxTensors =
      static_cast<int>((kMaxKernelArgBytes - 256) / (sizeof(Entry) + sizeof(std::int64_t)));
  Entry tensors[kMaxTensors];
  std::int64_t first_chunk[kMaxTensors + 1];
  int num_tensors;
};

// Calls launch(list, num_chunks) for successive lists holding every entry with chunks > 0.
template <typename Entry, typename NumChunks, typename Launch>
void for_each_tensor_list(const std::vector<Entry>& entries, const NumChunks& num_chunks,
                          const Launch& launch) {
  static_assert(sizeof(TensorList<Entry>) + 128 <= kMaxKernelArgBytes, "kernel argument too big");
  TensorList<Entry> list;
  std::memset(&list, 0, sizeof(list));
  auto flush = [&] {
    if (list.num_tensors == 0) return;
    launch(list, list.first_chunk[list.num_tensors]);
    list.num_tensors = 0;
  };
  for (const Entry& entry : entries) {
    const std::int64_t chunks = num_chunks(entry);
    if (chunks == 0) continue;
    const int t = list.num_tensors;
    list.tensors[t] = entry;
    list.first_chunk[t + 1] = list.first_chunk[t] + chunks;
    list.num_tensors = t + 1;
    if (list.num_tensors == TensorList<Entry>::kMaxTensors) flush();
  }
  flush();
}

bool aligned16(const void* p) {
  return reinterpret_cast<std::uintptr_t>(p) % 16 == 0;
}

// The chunks of an optimizer tensor: at least one when it counts skipped steps, so that an empty
// parameter's count is kept too (its block touches no element).
template <typename Entry>
std::int64_t update_chunks(const Entry& t, std::int64_t chunks) {
  return t.step_args.skipped != nullptr ? std::max<std::int64_t>(chunks, 1) : chunks;
}

// ---- Device helpers --------------------------------------------------------------------------

// 16 bytes of T: a float4, two doubles, or eight Half or BFloat16.
template <typename T>
struct alignas(16) Vector16 {
  static constexpr int kLanes = 16 / static_cast<int>(sizeof(T));
  T val[kLanes];
};
using Float4 = Vector16<float>;
static_assert(Float4::kLanes == kFloatsPerVector);
struct alignas(4) Byte4 {
  std::uint8_t val[kFloatsPerVector];
};

// The tensor of the list that owns chunk `chunk`: the last t with first_chunk[t] <= chunk.
template <typename List>
__device__ __forceinline__ int locate_tensor(const List& list, std::int64_t chunk) {
  int lo = 0;
  int hi = list.num_tensors - 1;
  while (lo < hi) {
    const int mid = (lo + hi + 1) / 2;
    if (list.first_chunk[mid] <= chunk) {
      lo = mid;
    } else {
      hi = mid - 1;
    }
  }
  return lo;
}

struct MaxMerge {
  template <typename T>
  __device__ T operator()(T a, T b) const {
    return a > b ? a : b;
  }
};
// The inf-norm's max: NaN wins (kernels/optim_math.h).
struct MaxPropagatingNanMerge {
  template <typename T>
  __device__ T operator()(T a, T b) const {
    return max_propagating_nan(a, b);
  }
};

// The scalars of tensor t for this block, resolved once by thread 0 (resolve_step) and shared;
// false, for every thread of the block, when found_inf skips the step. Called by all threads.
template <typename Update, typename List>
__device__ bool block_scalars(const Update& update, const List& list, int t, const int* found_inf,
                              typename Update::TensorScalars* scalars) {
  __shared__ typename Update::TensorScalars shared_scalars;
  __shared__ bool apply;
  if (threadIdx.x == 0) {
    const bool owner = blockIdx.x == list.first_chunk[t];
    apply = resolve_step(update, list.tensors[t], found_inf, owner, &shared_scalars);
  }
  __syncthreads();
  *scalars = shared_scalars;
  return apply;
}

// ---- Kernels: elementwise optimizers (float32, float64, float16, bfloat16) ---------------------

// One chunk of one tensor through `update` (Note [Optimizer streams] in kernels/optim_math.h).
template <typename Update, bool kVectorized>
__global__ void __launch_bounds__(kThreadsPerBlock)
    multi_tensor_update_kernel(TensorList<OptimTensor<Update>> list, Update update,
                               const int* found_inf, int* skipped_nonfinite) {
  constexpr int kStreams = Update::kNumStreams;
  using T = typename Update::Scalar;
  using M = typename Update::Math;
  using Vector = Vector16<T>;
  constexpr int kLanes = Vector::kLanes;
  const int t = locate_tensor(list, blockIdx.x);
  const OptimTensor<Update>& entry = list.tensors[t];
  typename Update::TensorScalars scalars;
  if (!block_scalars(update, list, t, found_inf, &scalars)) return;
  const std::int64_t begin = (blockIdx.x - list.first_chunk[t]) * kChunkElements;
  const std::int64_t end = min(begin + kChunkElements, entry.numel);
  bool skipped = false;
  std::int64_t scalar_begin = begin;
  if constexpr (kVectorized) {
    const std::int64_t vector_end = begin + (end - begin) / kLanes * kLanes;
    for (std::int64_t i = begin + threadIdx.x * kLanes; i < vector_end;
         i += kThreadsPerBlock * kLanes) {
      Vector v[kStreams];
#pragma unroll
      for (int k = 0; k < kStreams; ++k)
        v[k] = entry.data[k] != nullptr ? *reinterpret_cast<const Vector*>(entry.data[k] + i)
                                        : Vector{};
#pragma unroll
      for (int lane = 0; lane < kLanes; ++lane) {
        M x[kStreams];
#pragma unroll
        for (int k = 0; k < kStreams; ++k)
          x[k] = static_cast<M>(v[k].val[lane]);
        skipped |= !update(scalars, x);
#pragma unroll
        for (int k = 0; k < kStreams; ++k)
          if (k != kGradSlot) v[k].val[lane] = static_cast<T>(x[k]);
      }
#pragma unroll
      for (int k = 0; k < kStreams; ++k)
        if (k != kGradSlot && entry.data[k] != nullptr)
          *reinterpret_cast<Vector*>(entry.data[k] + i) = v[k];
    }
    scalar_begin = vector_end;
  }
  for (std::int64_t i = scalar_begin + threadIdx.x; i < end; i += kThreadsPerBlock) {
    M x[kStreams];
#pragma unroll
    for (int k = 0; k < kStreams; ++k)
      x[k] = entry.data[k] != nullptr ? static_cast<M>(entry.data[k][i]) : M(0);
    skipped |= !update(scalars, x);
#pragma unroll
    for (int k = 0; k < kStreams; ++k)
      if (k != kGradSlot && entry.data[k] != nullptr) entry.data[k][i] = static_cast<T>(x[k]);
  }
  // Every writer stores the same value.
  if (skipped && skipped_nonfinite != nullptr) *skipped_nonfinite = 1;
}

// ---- Kernel: Adam8bit ------------------------------------------------------------------------

// Element j (0..7) of a lane within its quant block: two float4 per lane, lanes contiguous.
__device__ __forceinline__ int lane_element(int lane, int j) {
  return (j / kFloatsPerVector) * (kWarpSize * kFloatsPerVector) + lane * kFloatsPerVector +
         j % kFloatsPerVector;
}

// The maps and their midpoint thresholds (Note [Code search from a guess]), in shared memory,
// built by each CUDA block: one entry per thread.
struct QuantTables {
  float signed_map[kQuantCodes];
  float unsigned_map[kQuantCodes];
  float signed_thresholds[kQuantCodes - 1];
  float unsigned_thresholds[kQuantCodes - 1];

  __device__ void build() {
    const int c = static_cast<int>(threadIdx.x);
    signed_map[c] = dynamic_map_value(c, true);
    unsigned_map[c] = dynamic_map_value(c, false);
    __syncthreads();
    if (c + 1 < kQuantCodes) {
      signed_thresholds[c] = midpoint_threshold(signed_map[c], signed_map[c + 1]);
      unsigned_thresholds[c] = midpoint_threshold(unsigned_map[c], unsigned_map[c + 1]);
    }
    __syncthreads();
  }
};

// One lane's 8 elements of one quant block: parameter, gradient and the two codes.
struct Adam8bitLane {
  float p[kElementsPerLane];
  float g[kElementsPerLane];
  std::uint8_t c1[kElementsPerLane];
  std::uint8_t c2[kElementsPerLane];
  float old_absmax1;
  float old_absmax2;

  // Loads quant block `block` of e (`full`: all 256 elements exist, 16-byte loads).
  template <bool kVectorized>
  __device__ void load(const Adam8bitTensor& e, std::int64_t block, int lane) {
    const std::int64_t base = block * kQuantBlockSize;
    old_absmax1 = e.absmax1[block];
    old_absmax2 = e.absmax2[block];
    if (kVectorized && base + kQuantBlockSize <= e.numel) {
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const std::int64_t i = base + lane_element(lane, h * kFloatsPerVector);
        const Float4 pv = *reinterpret_cast<const Float4*>(e.param + i);
        const Float4 gv = *reinterpret_cast<const Float4*>(e.grad + i);
        const Byte4 b1 = *reinterpret_cast<const Byte4*>(e.state1 + i);
        const Byte4 b2 = *reinterpret_cast<const Byte4*>(e.state2 + i);
#pragma unroll
        for (int l = 0; l < kFloatsPerVector; ++l) {
          p[h * kFloatsPerVector + l] = pv.val[l];
          g[h * kFloatsPerVector + l] = gv.val[l];
          c1[h * kFloatsPerVector + l] = b1.val[l];
          c2[h * kFloatsPerVector + l] = b2.val[l];
        }
      }
      return;
    }
#pragma unroll
    for (int j = 0; j < kElementsPerLane; ++j) {
      const std::int64_t i = base + lane_element(lane, j);
      const bool valid = i < e.numel;
      p[j] = valid ? e.param[i] : 0.0f;
      g[j] = valid ? e.grad[i] : 0.0f;
      c1[j] = valid ? e.state1[i] : std::uint8_t{127};  // code of 0 (signed map)
      c2[j] = valid ? e.state2[i] : std::uint8_t{0};    // code of 0 (unsigned map)
    }
  }

  // Dequantise, update, take the warp's new absmax, requantise (p and the codes in place).
  // Returns false when an element was skipped (a NaN/Inf gradient or second moment).
  __device__ bool update(const AdamUpdate& adam, const AdamUpdate::TensorScalars& scalars,
                         const QuantTables& tables, float* absmax1, float* absmax2, int lane) {
    float m[kElementsPerLane], v[kElementsPerLane];
    float max1 = 0.0f, max2 = 0.0f;
    bool all_applied = true;
#pragma unroll
    for (int j = 0; j < kElementsPerLane; ++j) {
      float x[AdamUpdate::kNumStreams] = {
          p[j], g[j], dequantize_state(tables.signed_map, c1[j], old_absmax1),
          dequantize_state(tables.unsigned_map, c2[j], old_absmax2), 0.0f};
      // Elements past the end (zeros, all states 0) give m = v = 0: no effect on the absmax.
      all_applied &= adam(scalars, x);
      p[j] = x[kParamSlot];
      m[j] = x[2];
      v[j] = x[3];
      max1 = fmaxf(max1, fabsf(m[j]));
      max2 = fmaxf(max2, v[j]);
    }
    const float new_absmax1 = warp_allreduce(max1, MaxMerge{});
    const float new_absmax2 = warp_allreduce(max2, MaxMerge{});
    if (lane == 0) {
      *absmax1 = new_absmax1;
      *absmax2 = new_absmax2;
    }
    const float inv1 = inverse_absmax(new_absmax1);
    const float inv2 = inverse_absmax(new_absmax2);
#pragma unroll
    for (int j = 0; j < kElementsPerLane; ++j) {
      c1[j] = quantize_state(tables.signed_thresholds, m[j], inv1, true);
      c2[j] = quantize_state(tables.unsigned_thresholds, v[j], inv2, false);
    }
    return all_applied;
  }

  template <bool kVectorized>
  __device__ void store(const Adam8bitTensor& e, std::int64_t block, int lane) const {
    const std::int64_t base = block * kQuantBlockSize;
    if (kVectorized && base + kQuantBlockSize <= e.numel) {
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const std::int64_t i = base + lane_element(lane, h * kFloatsPerVector);
        Float4 pv;
        Byte4 b1, b2;
#pragma unroll
        for (int l = 0; l < kFloatsPerVector; ++l) {
          pv.val[l] = p[h * kFloatsPerVector + l];
          b1.val[l] = c1[h * kFloatsPerVector + l];
          b2.val[l] = c2[h * kFloatsPerVector + l];
        }
        *reinterpret_cast<Float4*>(e.param + i) = pv;
        *reinterpret_cast<Byte4*>(e.state1 + i) = b1;
        *reinterpret_cast<Byte4*>(e.state2 + i) = b2;
      }
      return;
    }
#pragma unroll
    for (int j = 0; j < kElementsPerLane; ++j) {
      const std::int64_t i = base + lane_element(lane, j);
      if (i < e.numel) {
        e.param[i] = p[j];
        e.state1[i] = c1[j];
        e.state2[i] = c2[j];
      }
    }
  }
};

// Each warp updates kQuantBlocksPerWarp quant blocks of the chunk, loading the next block's
// elements before the current block's math so the loads are in flight during it.
template <bool kVectorized>
__global__ void __launch_bounds__(kThreadsPerBlock)
    adam8bit_kernel(TensorList<Adam8bitTensor> list, AdamUpdate update, const int* found_inf,
                    int* skipped_nonfinite) {
  __shared__ QuantTables tables;
  const int t = locate_tensor(list, blockIdx.x);
  const Adam8bitTensor& e = list.tensors[t];
  AdamUpdate::TensorScalars scalars;
  if (!block_scalars(update, list, t, found_inf, &scalars)) return;
  tables.build();
  const int warp = static_cast<int>(threadIdx.x) / kWarpSize;
  const int lane = static_cast<int>(threadIdx.x) % kWarpSize;
  const std::int64_t num_blocks = ceil_div(e.numel, kQuantBlockSize);
  const std::int64_t first_block = (blockIdx.x - list.first_chunk[t]) * kQuantBlocksPerChunk + warp;
  bool skipped = false;
  Adam8bitLane current{}, next{};
  if (first_block < num_blocks) current.load<kVectorized>(e, first_block, lane);
  for (int k = 0; k < kQuantBlocksPerWarp; ++k) {
    const std::int64_t block = first_block + k * kWarpsPerBlock;
    if (block >= num_blocks) break;  // warp-uniform
    const std::int64_t following = block + kWarpsPerBlock;
    if (k + 1 < kQuantBlocksPerWarp && following < num_blocks)
      next.load<kVectorized>(e, following, lane);
    skipped |= !current.update(update, scalars, tables, e.absmax1 + block, e.absmax2 + block, lane);
    current.store<kVectorized>(e, block, lane);
    current = next;
  }
  if (skipped && skipped_nonfinite != nullptr) *skipped_nonfinite = 1;
}

// ---- Kernels: clip_grad_norm -----------------------------------------------------------------

// partials[chunk] = sum of |g|^p (max |g| for the inf-norm) over one chunk, in M = opmath_t<T>.
template <typename T, typename M = opmath_t<T>>
__global__ void __launch_bounds__(kThreadsPerBlock)
    grad_norm_partials_kernel(TensorList<GradSpanOf<T>> list, M norm_type, bool inf_norm,
                              M* partials) {
  const int t = locate_tensor(list, blockIdx.x);
  const GradSpanOf<T>& g = list.tensors[t];
  const std::int64_t begin = (blockIdx.x - list.first_chunk[t]) * kChunkElements;
  const std::int64_t end = min(begin + kChunkElements, g.numel);
  M acc = M(0);
  for (std::int64_t i = begin + threadIdx.x; i < end; i += kThreadsPerBlock) {
    const M x = static_cast<M>(g.data[i]);
    acc = inf_norm ? max_propagating_nan(acc, M(fabs(x))) : acc + norm_term(x, norm_type);
  }
  acc = inf_norm ? block_reduce<kThreadsPerBlock>(acc, MaxPropagatingNanMerge{}, M(0))
                 : block_reduce<kThreadsPerBlock>(acc, SumMerge{}, M(0));
  if (threadIdx.x == 0) partials[blockIdx.x] = acc;
}

// One block: total_norm = the norm from the partials (summed in double).
template <typename T>
__global__ void __launch_bounds__(kThreadsPerBlock)
    grad_norm_finish_kernel(const T* partials, std::int64_t num_partials, T norm_type,
                            bool inf_norm, T* total_norm) {
  double acc = 0.0;
  for (std::int64_t i = threadIdx.x; i < num_partials; i += kThreadsPerBlock)
    acc = inf_norm ? max_propagating_nan(acc, static_cast<double>(partials[i])) : acc + partials[i];
  acc = inf_norm ? block_reduce<kThreadsPerBlock>(acc, MaxPropagatingNanMerge{}, 0.0)
                 : block_reduce<kThreadsPerBlock>(acc, SumMerge{}, 0.0);
  if (threadIdx.x == 0)
    *total_norm = static_cast<T>(inf_norm ? acc : pow(acc, 1.0 / static_cast<double>(norm_type)));
}

// One chunk of the gradients times clip_coefficient(max_norm, *total_norm), in M, rounded to T.
template <typename T, typename M = opmath_t<T>>
__global__ void __launch_bounds__(kThreadsPerBlock)
    clip_grads_kernel(TensorList<GradSpanOf<T>> list, M max_norm, const M* total_norm) {
  const int t = locate_tensor(list, blockIdx.x);
  const GradSpanOf<T>& g = list.tensors[t];
  const std::int64_t begin = (blockIdx.x - list.first_chunk[t]) * kChunkElements;
  const std::int64_t end = min(begin + kChunkElements, g.numel);
  const M coef = clip_coefficient(max_norm, *total_norm);
  for (std::int64_t i = begin + threadIdx.x; i < end; i += kThreadsPerBlock)
    g.data[i] = static_cast<T>(static_cast<M>(g.data[i]) * coef);
}

// ---- Kernels: gradient scaling (amp::GradScaler) ---------------------------------------------

// One chunk of the gradients times 1 / *scale; *found_inf = 1 when an element is NaN or Inf.
__global__ void __launch_bounds__(kThreadsPerBlock)
    unscale_grads_kernel(TensorList<GradSpan> list, const float* scale, int* found_inf) {
  const int t = locate_tensor(list, blockIdx.x);
  const GradSpan& g = list.tensors[t];
  const std::int64_t begin = (blockIdx.x - list.first_chunk[t]) * kChunkElements;
  const std::int64_t end = min(begin + kChunkElements, g.numel);
  const float inv_scale = inverse_scale(*scale);
  bool nonfinite = false;
  for (std::int64_t i = begin + threadIdx.x; i < end; i += kThreadsPerBlock)
    g.data[i] = unscale_element(g.data[i], inv_scale, &nonfinite);
  if (nonfinite) *found_inf = 1;  // every writer stores the same value
}

// One thread: the scale and growth tracker after a step.
__global__ void update_scale_kernel(float* scale, int* growth_tracker, const int* found_inf,
                                    double growth_factor, double backoff_factor,
                                    int growth_interval) {
  update_scale_state(scale, growth_tracker, *found_inf, growth_factor, backoff_factor,
                     growth_interval);
}

// ---- Launchers -------------------------------------------------------------------------------

template <typename Update>
void launch_update(const Update& update, const std::vector<OptimTensor<Update>>& tensors,
                   const int* found_inf, int* skipped_nonfinite) {
  bool aligned = true;
  for (const OptimTensor<Update>& t : tensors)
    for (const auto* p : t.data)
      aligned = aligned && aligned16(p);
  const cudaStream_t stream = current_stream();
  for_each_tensor_list(
      tensors,
      [](const OptimTensor<Update>& t) {
        return update_chunks(t, ceil_div(t.numel, kChunkElements));
      },
      [&](const TensorList<OptimTensor<Update>>& list, std::int64_t num_chunks) {
        const auto blocks = static_cast<unsigned int>(num_chunks);
        if (aligned) {
          multi_tensor_update_kernel<Update, true>
              <<<blocks, kThreadsPerBlock, 0, stream>>>(list, update, found_inf, skipped_nonfinite);
        } else {
          multi_tensor_update_kernel<Update, false>
              <<<blocks, kThreadsPerBlock, 0, stream>>>(list, update, found_inf, skipped_nonfinite);
        }
        LG_CUDA_CHECK_LAUNCH();
      });
}

template <typename T>
std::int64_t grad_chunks(const GradSpanOf<T>& g) {
  return ceil_div(g.numel, kChunkElements);
}

}  // namespace

template <typename T>
void sgd_step(const SgdUpdateOf<T>& update, const std::vector<OptimTensor<SgdUpdateOf<T>>>& tensors,
              const int* found_inf) {
  launch_update(update, tensors, found_inf, nullptr);
}

template <typename T>
void adam_step(const AdamUpdateOf<T>& update,
               const std::vector<OptimTensor<AdamUpdateOf<T>>>& tensors, const int* found_inf,
               int* skipped_nonfinite) {
  launch_update(update, tensors, found_inf, skipped_nonfinite);
}

template <typename T>
void radam_step(const RAdamUpdateOf<T>& update,
                const std::vector<OptimTensor<RAdamUpdateOf<T>>>& tensors, const int* found_inf) {
  launch_update(update, tensors, found_inf, nullptr);
}

void adam8bit_step(const AdamUpdate& update, const std::vector<Adam8bitTensor>& tensors,
                   const int* found_inf, int* skipped_nonfinite) {
  bool aligned = true;
  for (const Adam8bitTensor& t : tensors) {
    aligned = aligned && aligned16(t.param) && aligned16(t.grad);
    aligned = aligned && reinterpret_cast<std::uintptr_t>(t.state1) % 4 == 0 &&
              reinterpret_cast<std::uintptr_t>(t.state2) % 4 == 0;
  }
  const cudaStream_t stream = current_stream();
  for_each_tensor_list(
      tensors,
      [](const Adam8bitTensor& t) {
        return update_chunks(t, ceil_div(ceil_div(t.numel, kQuantBlockSize), kQuantBlocksPerChunk));
      },
      [&](const TensorList<Adam8bitTensor>& list, std::int64_t num_chunks) {
        const auto blocks = static_cast<unsigned int>(num_chunks);
        if (aligned) {
          adam8bit_kernel<true>
              <<<blocks, kThreadsPerBlock, 0, stream>>>(list, update, found_inf, skipped_nonfinite);
        } else {
          adam8bit_kernel<false>
              <<<blocks, kThreadsPerBlock, 0, stream>>>(list, update, found_inf, skipped_nonfinite);
        }
        LG_CUDA_CHECK_LAUNCH();
      });
}

template <typename T>
void grad_norm(const std::vector<GradSpanOf<T>>& grads, opmath_t<T> norm_type,
               opmath_t<T>* total_norm) {
  using M = opmath_t<T>;
  std::int64_t chunks = 0;
  for (const GradSpanOf<T>& g : grads)
    chunks += grad_chunks(g);
  // One partial per chunk.
  Workspace workspace(Workspace::bytes_for<M>(chunks));
  M* partials = workspace.take<M>(chunks);
  const cudaStream_t stream = current_stream();
  const bool inf_norm = std::isinf(norm_type);
  std::int64_t offset = 0;
  for_each_tensor_list(
      grads, grad_chunks<T>, [&](const TensorList<GradSpanOf<T>>& list, std::int64_t num_chunks) {
        grad_norm_partials_kernel<T>
            <<<static_cast<unsigned int>(num_chunks), kThreadsPerBlock, 0, stream>>>(
                list, norm_type, inf_norm, partials + offset);
        LG_CUDA_CHECK_LAUNCH();
        offset += num_chunks;
      });
  grad_norm_finish_kernel<M>
      <<<1, kThreadsPerBlock, 0, stream>>>(partials, offset, norm_type, inf_norm, total_norm);
  LG_CUDA_CHECK_LAUNCH();
}

template <typename T>
void clip_grads(const std::vector<GradSpanOf<T>>& grads, opmath_t<T> max_norm,
                const opmath_t<T>* total_norm) {
  const cudaStream_t stream = current_stream();
  for_each_tensor_list(
      grads, grad_chunks<T>, [&](const TensorList<GradSpanOf<T>>& list, std::int64_t num_chunks) {
        clip_grads_kernel<T>
            <<<static_cast<unsigned int>(num_chunks), kThreadsPerBlock, 0, stream>>>(list, max_norm,
                                                                                     total_norm);
        LG_CUDA_CHECK_LAUNCH();
      });
}

#define LG_INSTANTIATE_CUDA_OPTIM(T)                                                              \
  template void sgd_step<T>(const SgdUpdateOf<T>&,                                                \
                            const std::vector<OptimTensor<SgdUpdateOf<T>>>&, const int*);         \
  template void adam_step<T>(const AdamUpdateOf<T>&,                                              \
                             const std::vector<OptimTensor<AdamUpdateOf<T>>>&, const int*, int*); \
  template void radam_step<T>(const RAdamUpdateOf<T>&,                                            \
                              const std::vector<OptimTensor<RAdamUpdateOf<T>>>&, const int*);     \
  template void grad_norm<T>(const std::vector<GradSpanOf<T>>&, opmath_t<T>, opmath_t<T>*);       \
  template void clip_grads<T>(const std::vector<GradSpanOf<T>>&, opmath_t<T>, const opmath_t<T>*);
LG_INSTANTIATE_CUDA_OPTIM(float)
LG_INSTANTIATE_CUDA_OPTIM(double)
LG_INSTANTIATE_CUDA_OPTIM(Half)
LG_INSTANTIATE_CUDA_OPTIM(BFloat16)
#undef LG_INSTANTIATE_CUDA_OPTIM

void unscale_and_check_finite(const std::vector<GradSpan>& grads, const float* scale,
                              int* found_inf) {
  const cudaStream_t stream = current_stream();
  for_each_tensor_list(
      grads, grad_chunks<float>, [&](const TensorList<GradSpan>& list, std::int64_t num_chunks) {
        unscale_grads_kernel<<<static_cast<unsigned int>(num_chunks), kThreadsPerBlock, 0,
                               stream>>>(list, scale, found_inf);
        LG_CUDA_CHECK_LAUNCH();
      });
}

void update_scale(float* scale, int* growth_tracker, const int* found_inf, double growth_factor,
                  double backoff_factor, int growth_interval) {
  update_scale_kernel<<<1, 1, 0, current_stream()>>>(
      scale, growth_tracker, found_inf, growth_factor, backoff_factor, growth_interval);
  LG_CUDA_CHECK_LAUNCH();
}

}  // namespace leangrad::kernels::cuda
