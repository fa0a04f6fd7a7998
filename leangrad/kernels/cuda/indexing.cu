// Indexing in CUDA (kernels/backend.h); kernels/cpu/indexing.cpp is the reference.
//   index_select           one thread per output element (o, i, j): consecutive threads read
//                          consecutive elements of one input row and write consecutive outputs
//   index_select_backward  one thread per upstream element, atomicAdd into the opmath_t gradient
//                          (float32 or float64, which have native atomics)
//   gather                 one thread per index element, reading self through its strides
//   scatter                one thread per source element, combined into self with atomics: Sum
//                          atomicAdd (int64 as the unsigned 64-bit atomic, which wraps alike),
//                          Max and Min of integers atomicMax / atomicMin, the rest a
//                          compare-and-swap loop; Assign claims each place for its last writer
//                          (atomicMax of the positions) and then writes the winners
// With atomics, repeated indices make the order in which one element is combined vary between
// runs, and with it the last bits of a floating sum or product (maxima and minima depend on it
// only for the sign of a zero; the assignment not at all). An out-of-range index reads NaN (0 in
// an integral dtype) and writes nothing: no synchronisation to raise an error (the CPU entries
// check).
#include <cstdint>
#include <limits>
#include <type_traits>

#include <leangrad/kernels/backend.h>
#include <leangrad/kernels/dispatch.h>
#include <leangrad/kernels/reduce_math.h>
#include <leangrad/kernels/cuda/cuda_common.cuh>

namespace leangrad::kernels::cuda {

namespace {

constexpr int kThreads = 256;

template <typename T>
__device__ __forceinline__ T out_of_range_value() {
  if constexpr (std::is_integral_v<T>) {
    return T{};
  } else {
    return static_cast<T>(std::numeric_limits<float>::quiet_NaN());
  }
}

template <typename T>
__device__ __forceinline__ void atomic_add(T* address, T value) {
  if constexpr (std::is_same_v<T, std::int64_t>) {
    atomicAdd(reinterpret_cast<unsigned long long*>(address),  // NOLINT(runtime/int)
              static_cast<unsigned long long>(value));         // NOLINT(runtime/int)
  } else {
    atomicAdd(address, value);
  }
}

template <typename T>
__global__ void index_select_kernel(T* out, const T* in, const std::int64_t* indices,
                                    std::int64_t outer, std::int64_t size, std::int64_t num_indices,
                                    std::int64_t inner) {
  const std::int64_t total = outer * num_indices * inner;
  for (std::int64_t k = global_thread_index(); k < total; k += grid_thread_count()) {
    const std::int64_t r = k / inner;
    const std::int64_t row = indices[r % num_indices];
    out[k] = (row >= 0 && row < size) ? in[((r / num_indices) * size + row) * inner + k % inner]
                                      : out_of_range_value<T>();
  }
}

template <typename T, typename Acc>
__global__ void index_select_backward_kernel(Acc* grad_in, const T* grad_out,
                                             const std::int64_t* indices, std::int64_t outer,
                                             std::int64_t size, std::int64_t num_indices,
                                             std::int64_t inner, std::int64_t skip_index) {
  const std::int64_t total = outer * num_indices * inner;
  for (std::int64_t k = global_thread_index(); k < total; k += grid_thread_count()) {
    const std::int64_t r = k / inner;
    const std::int64_t row = indices[r % num_indices];
    if (row < 0 || row >= size || row == skip_index) continue;
    atomic_add(grad_in + ((r / num_indices) * size + row) * inner + k % inner,
               static_cast<Acc>(grad_out[k]));
  }
}

template <typename T>
__global__ void gather_kernel(T* out, const T* self, const std::int64_t* index, GatherGeometry g,
                              std::int64_t total) {
  for (std::int64_t k = global_thread_index(); k < total; k += grid_thread_count()) {
    const std::int64_t v = index[k];
    out[k] =
        g.valid(v) ? self[g.self_base(k) + v * g.self_strides[g.dim]] : out_of_range_value<T>();
  }
}

// The unsigned integer of Acc's size, for compare-and-swap on its bits.
template <typename Acc>
using cas_word_t = std::conditional_t<sizeof(Acc) == 4, unsigned int,
                                      unsigned long long>;  // NOLINT(runtime/int)

// *address = step(*address, value) atomically, by compare-and-swap on the bits: another thread's
// write between the read and the swap makes the swap fail, and the step is taken again on what
// that thread wrote. A step that changes nothing (max with a smaller value) writes nothing.
template <typename Acc, typename Step>
__device__ __forceinline__ void atomic_step(Acc* address, Acc value, Step step) {
  using Word = cas_word_t<Acc>;
  static_assert(sizeof(Word) == sizeof(Acc));
  Word* word = reinterpret_cast<Word*>(address);
  Word old = *word;
  Word assumed;
  do {
    assumed = old;
    Acc current;
    memcpy(&current, &assumed, sizeof(Acc));
    const Acc next = step(current, value);
    Word next_bits;
    memcpy(&next_bits, &next, sizeof(Acc));
    if (next_bits == assumed) return;
    old = atomicCAS(word, assumed, next_bits);
  } while (old != assumed);
}

// Combines value into *address as ScatterOp op says (not Assign): integers' Max and Min with the
// hardware's atomics, the rest as atomic_add or atomic_step.
template <ScatterOp op, typename Acc>
__device__ __forceinline__ void atomic_combine(Acc* address, Acc value) {
  if constexpr (op == ScatterOp::Sum) {
    atomic_add(address, value);
  } else if constexpr (op == ScatterOp::Prod) {
    atomic_step(address, value, [](Acc a, Acc b) { return reduce_math::wrapping_mul(a, b); });
  } else if constexpr (std::is_integral_v<Acc>) {
    using Native = std::conditional_t<sizeof(Acc) == 4, int, long long>;  // NOLINT(runtime/int)
    Native* native = reinterpret_cast<Native*>(address);
    if constexpr (op == ScatterOp::Max) {
      atomicMax(native, static_cast<Native>(value));
    } else {
      atomicMin(native, static_cast<Native>(value));
    }
  } else if constexpr (op == ScatterOp::Max) {
    atomic_step(address, value, [](Acc a, Acc b) { return reduce_math::max_propagate_nan(a, b); });
  } else {
    atomic_step(address, value, [](Acc a, Acc b) { return reduce_math::min_propagate_nan(a, b); });
  }
}

template <ScatterOp op, typename T, typename Acc>
__global__ void scatter_combine_kernel(Acc* self, const T* src, const std::int64_t* index,
                                       GatherGeometry g, std::int64_t total) {
  for (std::int64_t k = global_thread_index(); k < total; k += grid_thread_count()) {
    const std::int64_t v = index[k];
    if (!g.valid(v)) continue;
    atomic_combine<op>(self + g.self_base(k) + v * g.self_strides[g.dim], static_cast<Acc>(src[k]));
  }
}

// Assign, first pass: winners[place] becomes the largest index position k naming it. Within a
// line a larger k is a later element, so this is the CPU's last writer.
__global__ void scatter_claim_kernel(long long* winners,  // NOLINT(runtime/int)
                                     const std::int64_t* index, GatherGeometry g,
                                     std::int64_t total) {
  for (std::int64_t k = global_thread_index(); k < total; k += grid_thread_count()) {
    const std::int64_t v = index[k];
    if (!g.valid(v)) continue;
    atomicMax(winners + g.self_base(k) + v * g.self_strides[g.dim],
              static_cast<long long>(k));  // NOLINT(runtime/int)
  }
}

// Assign, second pass: each place written once, by its winner.
template <typename T>
__global__ void scatter_assign_kernel(T* self, const T* src, const std::int64_t* index,
                                      const long long* winners,  // NOLINT(runtime/int)
                                      GatherGeometry g, std::int64_t total) {
  for (std::int64_t k = global_thread_index(); k < total; k += grid_thread_count()) {
    const std::int64_t v = index[k];
    if (!g.valid(v)) continue;
    const std::int64_t offset = g.self_base(k) + v * g.self_strides[g.dim];
    if (winners[offset] == k) self[offset] = src[k];
  }
}

}  // namespace

void index_select(DType dtype, void* out, const void* in, const std::int64_t* indices,
                  std::int64_t outer, std::int64_t size, std::int64_t num_indices,
                  std::int64_t inner) {
  dispatch_all(dtype, "index_select", [&]<typename T>() {
    auto* kernel = index_select_kernel<T>;
    const unsigned int blocks =
        grid_size(kernel, kThreads, ceil_div(outer * num_indices * inner, kThreads));
    kernel<<<blocks, kThreads, 0, current_stream()>>>(
        static_cast<T*>(out), static_cast<const T*>(in), indices, outer, size, num_indices, inner);
    LG_CUDA_CHECK_LAUNCH();
  });
}

void index_select_backward(DType dtype, void* grad_in, const void* grad_out,
                           const std::int64_t* indices, std::int64_t outer, std::int64_t size,
                           std::int64_t num_indices, std::int64_t inner, std::int64_t skip_index) {
  dispatch_floating(dtype, "index_select_backward", [&]<typename T>() {
    using Acc = opmath_t<T>;
    auto* kernel = index_select_backward_kernel<T, Acc>;
    const unsigned int blocks =
        grid_size(kernel, kThreads, ceil_div(outer * num_indices * inner, kThreads));
    kernel<<<blocks, kThreads, 0, current_stream()>>>(static_cast<Acc*>(grad_in),
                                                      static_cast<const T*>(grad_out), indices,
                                                      outer, size, num_indices, inner, skip_index);
    LG_CUDA_CHECK_LAUNCH();
  });
}

void gather(DType dtype, void* out, const void* self, const std::int64_t* index,
            const GatherGeometry& g) {
  const std::int64_t total = g.line_count() * g.line_length();
  if (total == 0) return;
  dispatch_all(dtype, "gather", [&]<typename T>() {
    auto* kernel = gather_kernel<T>;
    const unsigned int blocks = grid_size(kernel, kThreads, ceil_div(total, kThreads));
    kernel<<<blocks, kThreads, 0, current_stream()>>>(static_cast<T*>(out),
                                                      static_cast<const T*>(self), index, g, total);
    LG_CUDA_CHECK_LAUNCH();
  });
}

void scatter(ScatterOp op, DType dtype, void* self, const void* src, const std::int64_t* index,
             const GatherGeometry& g) {
  const std::int64_t total = g.line_count() * g.line_length();
  if (total == 0) return;
  const cudaStream_t stream = current_stream();
  if (op == ScatterOp::Assign) {
    Workspace workspace(Workspace::bytes_for<long long>(g.self_extent));  // NOLINT(runtime/int)
    auto* winners = workspace.take<long long>(g.self_extent);             // NOLINT(runtime/int)
    // All bits set: -1, below every position.
    LG_CUDA_CHECK(cudaMemsetAsync(winners, 0xff, sizeof(*winners) * g.self_extent, stream));
    const unsigned int claim_blocks =
        grid_size(scatter_claim_kernel, kThreads, ceil_div(total, kThreads));
    scatter_claim_kernel<<<claim_blocks, kThreads, 0, stream>>>(winners, index, g, total);
    LG_CUDA_CHECK_LAUNCH();
    dispatch_all(dtype, "scatter", [&]<typename T>() {
      auto* kernel = scatter_assign_kernel<T>;
      const unsigned int blocks = grid_size(kernel, kThreads, ceil_div(total, kThreads));
      kernel<<<blocks, kThreads, 0, stream>>>(static_cast<T*>(self), static_cast<const T*>(src),
                                              index, winners, g, total);
      LG_CUDA_CHECK_LAUNCH();
    });
    return;
  }
  dispatch_addable(dtype, op_name(op), [&]<typename T>() {
    using Acc = opmath_t<T>;
    const auto launch = [&]<ScatterOp kOp>() {
      auto* kernel = scatter_combine_kernel<kOp, T, Acc>;
      const unsigned int blocks = grid_size(kernel, kThreads, ceil_div(total, kThreads));
      kernel<<<blocks, kThreads, 0, stream>>>(static_cast<Acc*>(self), static_cast<const T*>(src),
                                              index, g, total);
      LG_CUDA_CHECK_LAUNCH();
    };
    switch (op) {
      case ScatterOp::Sum:
        launch.template operator()<ScatterOp::Sum>();
        break;
      case ScatterOp::Prod:
        launch.template operator()<ScatterOp::Prod>();
        break;
      case ScatterOp::Max:
        launch.template operator()<ScatterOp::Max>();
        break;
      case ScatterOp::Min:
        launch.template operator()<ScatterOp::Min>();
        break;
      case ScatterOp::Assign:
        break;
    }
  });
}

}  // namespace leangrad::kernels::cuda
