// The CUDA elementwise loops: two generic grid-stride kernels and the launcher that picks one.
// Each family's file (kernels/cuda/elementwise*.cu: unary, where, cast and fill; binary;
// activation; compare) defines its per-element functors, which call the CPU's own math
// (kernels/elementwise_math.h), and hands them to launch_elementwise, in three layers:
//   per-element functors (one per family)  -> what one output element is
//   two generic grid-stride kernels        -> contiguous (16-byte vectors of every dtype) or
//                                             strided (geometry; 32-bit FastDivmod index math
//                                             below 2^31 elements, int64 above)
//   launchers                              -> dtype/op dispatch, choice of kernel, launch + check
// Every family shares the two kernels, so the profiler shows e.g.
// elementwise_contiguous_kernel<4, BinaryFunctor<Add, float>, ...>. The families are files of
// their own so that the CUDA build compiles them side by side, as the CPU's (Note [CPU
// elementwise loop] in kernels/cpu/elementwise_loops.h).
#pragma once

#include <algorithm>
#include <cstdint>
#include <utility>

#include <leangrad/kernels/elementwise_geometry.h>
#include <leangrad/kernels/cuda/cuda_common.cuh>

namespace leangrad::kernels::cuda {

// ---- Device helpers --------------------------------------------------------------------------

// The vector width of an op: 16 bytes of its widest operand type (4 float32, 8 float16, 2 int64,
// 16 uint8/bool; a float32 -> bool compare reads 4 floats and writes 4 bools per step).
template <typename... Types>
inline constexpr int kOpVectorWidth = kVectorBytes / static_cast<int>(std::max({sizeof(Types)...}));

template <int kWidth, typename Out, typename F, typename... In>
__device__ __forceinline__ Vector<Out, kWidth> apply_lanes(const F& f,
                                                           const Vector<In, kWidth>&... in) {
  Vector<Out, kWidth> out;
#pragma unroll
  for (int lane = 0; lane < kWidth; ++lane)
    out.val[lane] = f(in.val[lane]...);
  return out;
}

// The element offsets of all operands for linear output index i: ElementwiseGeometry::offset
// for every operand in one pass, so the divisions are done once per element, not per operand.
// Index is int64 (any size) or uint32 with FastDivmod (numel < 2^31, see launch_elementwise).
template <int kNumOperands>
__device__ __forceinline__ void operand_offsets(const ElementwiseGeometry& g, std::int64_t i,
                                                std::int64_t (&offsets)[kNumOperands]) {
#pragma unroll
  for (int k = 0; k < kNumOperands; ++k)
    offsets[k] = 0;
  for (int d = g.ndim - 1; d >= 0; --d) {
    const std::int64_t size = g.sizes[d];
    const std::int64_t index = i % size;
    i /= size;
#pragma unroll
    for (int k = 0; k < kNumOperands; ++k)
      offsets[k] += index * g.strides[k][d];
  }
}

// The geometry with a FastDivmod per dim, for iteration spaces of fewer than 2^31 elements.
struct ElementwiseGeometry32 {
  int ndim = 0;
  FastDivmod sizes[kMaxDims];
  std::int64_t strides[kMaxOperands][kMaxDims] = {};
};

template <int kNumOperands>
__device__ __forceinline__ void operand_offsets(const ElementwiseGeometry32& g, std::uint32_t i,
                                                std::int64_t (&offsets)[kNumOperands]) {
#pragma unroll
  for (int k = 0; k < kNumOperands; ++k)
    offsets[k] = 0;
  for (int d = g.ndim - 1; d >= 0; --d) {
    const std::uint32_t quotient = g.sizes[d].div(i);
    const std::int64_t index = g.sizes[d].mod(i, quotient);
    i = quotient;
#pragma unroll
    for (int k = 0; k < kNumOperands; ++k)
      offsets[k] += index * g.strides[k][d];
  }
}

template <typename F, typename Out, typename... In, std::size_t... k>
__device__ __forceinline__ void apply_strided(const F& f, Out* out, const std::int64_t* offsets,
                                              std::index_sequence<k...>, const In*... in) {
  out[offsets[0]] = f(in[offsets[k + 1]]...);
}

// ---- Kernels ---------------------------------------------------------------------------------

// out[i] = f(in[i]...) for i < n, every operand contiguous and aligned to Vector<., kWidth>:
// whole vectors first, then the last n % kWidth elements one by one. out may alias an input
// (in-place ops): each element is read before it is written, by the same thread.
template <int kWidth, typename F, typename Out, typename... In>
__global__ void elementwise_contiguous_kernel(std::int64_t n, F f, Out* out, const In*... in) {
  const std::int64_t num_vectors = n / kWidth;
  const std::int64_t step = grid_thread_count();
  for (std::int64_t v = global_thread_index(); v < num_vectors; v += step)
    store_vector<kWidth>(out, v, apply_lanes<kWidth, Out>(f, load_vector<kWidth>(in, v)...));
  for (std::int64_t i = num_vectors * kWidth + global_thread_index(); i < n; i += step)
    out[i] = f(in[i]...);
}

// out[off0(i)] = f(in[offk(i)]...) for every linear index i of the geometry (any strides,
// broadcast inputs with stride 0). Geometry is ElementwiseGeometry (int64 indices) or
// ElementwiseGeometry32 (uint32 indices, numel < 2^31), passed by value (kernel parameter
// space, ~0.5 KB).
template <typename Geometry, typename Index, typename F, typename Out, typename... In>
__global__ void elementwise_strided_kernel(Geometry g, Index numel, F f, Out* out,
                                           const In*... in) {
  constexpr int kNumOperands = 1 + static_cast<int>(sizeof...(In));
  const auto step = static_cast<Index>(grid_thread_count());
  for (auto i = static_cast<Index>(global_thread_index()); i < numel; i += step) {
    std::int64_t offsets[kNumOperands];
    operand_offsets(g, i, offsets);
    apply_strided(f, out, offsets, std::index_sequence_for<In...>{}, in...);
  }
}

// ---- Launch helpers --------------------------------------------------------------------------

inline constexpr int kElementwiseThreads = 256;

inline ElementwiseGeometry32 to_geometry32(const ElementwiseGeometry& g) {
  ElementwiseGeometry32 g32;
  g32.ndim = g.ndim;
  for (int d = 0; d < g.ndim; ++d) {
    g32.sizes[d] = FastDivmod(static_cast<std::uint32_t>(g.sizes[d]));
    for (int k = 0; k < g.num_operands; ++k)
      g32.strides[k][d] = g.strides[k][d];
  }
  return g32;
}

// Runs f over the geometry: the contiguous kernel when every operand is contiguous and aligned
// for vector access, the strided kernel otherwise (32-bit index math below 2^31 elements).
// Operand 0 of g is out, then in... in order.
template <typename F, typename Out, typename... In>
void launch_elementwise(const ElementwiseGeometry& g, const F& f, Out* out, const In*... in) {
  LG_INTERNAL_ASSERT(g.num_operands == 1 + static_cast<int>(sizeof...(In)),
                     "elementwise launch: geometry has ", g.num_operands, " operands, kernel ",
                     1 + sizeof...(In));
  if (g.numel == 0) return;
  constexpr int kWidth = kOpVectorWidth<Out, In...>;
  bool contiguous = true;
  for (int k = 0; k < g.num_operands; ++k)
    contiguous = contiguous && g.is_contiguous(k);
  const cudaStream_t stream = current_stream();
  if (contiguous && vector_aligned<Out, kWidth>(out) && (vector_aligned<In, kWidth>(in) && ...)) {
    auto* kernel = elementwise_contiguous_kernel<kWidth, F, Out, In...>;
    const unsigned int blocks = grid_size(kernel, kElementwiseThreads,
                                          ceil_div(ceil_div(g.numel, kWidth), kElementwiseThreads));
    kernel<<<blocks, kElementwiseThreads, 0, stream>>>(g.numel, f, out, in...);
  } else if (g.numel < (std::int64_t{1} << 31)) {
    auto* kernel = elementwise_strided_kernel<ElementwiseGeometry32, std::uint32_t, F, Out, In...>;
    const unsigned int blocks =
        grid_size(kernel, kElementwiseThreads, ceil_div(g.numel, kElementwiseThreads));
    kernel<<<blocks, kElementwiseThreads, 0, stream>>>(
        to_geometry32(g), static_cast<std::uint32_t>(g.numel), f, out, in...);
  } else {
    auto* kernel = elementwise_strided_kernel<ElementwiseGeometry, std::int64_t, F, Out, In...>;
    const unsigned int blocks =
        grid_size(kernel, kElementwiseThreads, ceil_div(g.numel, kElementwiseThreads));
    kernel<<<blocks, kElementwiseThreads, 0, stream>>>(g, g.numel, f, out, in...);
  }
  LG_CUDA_CHECK_LAUNCH();
}

}  // namespace leangrad::kernels::cuda
