// Reductions in CUDA: sum, mean, max, min, prod and argmax of contiguous runs or columns
// (kernels/backend.h). kernels/cpu/reduce.cpp is the reference; the merge rules are shared
// through reduce_math.h.
//
// Policy (every choice depends only on the sizes, so results are deterministic; no atomics):
// runs (inner == 1, each output reduces a contiguous run):
//   - runs of at most kThreadRunMax elements: one thread per output, a plain loop;
//   - runs of at most kSegmentLen elements: one block per output, each thread striding over the
//     run (coalesced), then a warp-shuffle block reduction;
//   - longer runs: each run is cut into segments of kSegmentLen, one block per (output, segment)
//     writes a partial to a workspace, and the partials are reduced again by the same rules
//     (a second pass, recursively for very long runs). A 16M-element sum thus uses 1024 blocks
//     instead of one, and no thread adds more than kSegmentLen / kThreads values in sequence.
// columns (inner > 1, each output reduces a column of an (R, inner) slab):
//   - one thread per output, consecutive threads on consecutive columns (coalesced rows); runs
//     longer than kColumnSegmentLen rows are cut into segments whose partials, laid out as an
//     (outer, num_segments, inner) block, are reduced again the same way.
// Argmax carries (value, index) pairs, merged with first-index tie breaking.
#include <algorithm>
#include <limits>

#include <leangrad/kernels/backend.h>
#include <leangrad/kernels/dispatch.h>
#include <leangrad/kernels/reduce_math.h>
#include <leangrad/kernels/cuda/cuda_common.cuh>

namespace leangrad::kernels::cuda {

namespace {

using reduce_math::ArgmaxPair;

constexpr int kThreads = 256;                    // block size of the block-per-segment kernel
constexpr std::int64_t kThreadRunMax = 16;       // runs this short: one thread per output
constexpr std::int64_t kSegmentLen = 16384;      // elements one block reduces
constexpr std::int64_t kColumnSegmentLen = 256;  // rows one thread reduces (column layout)

// ---- Device helpers --------------------------------------------------------------------------

// What a reduction does, as small function objects the kernels are templated on.
// Load: element i of a run (base[i * stride]) -> accumulator. Combine: merge two accumulators.
// Store: write output o.
template <typename In, typename Acc>
struct LoadValue {
  __device__ Acc operator()(const In* base, std::int64_t i, std::int64_t stride) const {
    return static_cast<Acc>(base[i * stride]);
  }
};
template <typename In, typename Acc>
struct LoadIndexed {
  __device__ ArgmaxPair<Acc> operator()(const In* base, std::int64_t i, std::int64_t stride) const {
    return {static_cast<Acc>(base[i * stride]), i};
  }
};

template <typename Acc>
struct SumCombine {
  __device__ Acc operator()(Acc a, Acc b) const { return reduce_math::wrapping_add(a, b); }
};
template <typename Acc>
struct ProdCombine {
  __device__ Acc operator()(Acc a, Acc b) const { return reduce_math::wrapping_mul(a, b); }
};
template <typename Acc>
struct MaxCombine {
  __device__ Acc operator()(Acc a, Acc b) const { return reduce_math::max_propagate_nan(a, b); }
};
template <typename Acc>
struct MinCombine {
  __device__ Acc operator()(Acc a, Acc b) const { return reduce_math::min_propagate_nan(a, b); }
};
template <typename Acc>
struct ArgmaxCombine {
  __device__ ArgmaxPair<Acc> operator()(ArgmaxPair<Acc> a, ArgmaxPair<Acc> b) const {
    return reduce_math::argmax_merge(a, b);
  }
};

template <typename Out>
struct StoreCast {
  template <typename Acc>
  __device__ void operator()(Out* out, std::int64_t o, Acc v) const {
    out[o] = static_cast<Out>(v);
  }
};
template <typename Out, typename Acc>
struct StoreMean {
  Acc count;  // the run length; 0 gives 0 / 0 = NaN, as in PyTorch
  __device__ void operator()(Out* out, std::int64_t o, Acc v) const {
    out[o] = static_cast<Out>(v / count);
  }
};
struct StoreIndex {
  template <typename Acc>
  __device__ void operator()(std::int64_t* out, std::int64_t o, ArgmaxPair<Acc> v) const {
    out[o] = v.index;
  }
};

// ---- Kernels ---------------------------------------------------------------------------------

// One thread per output: for short runs, where a block per output would idle most threads.
template <typename Acc, typename In, typename Out, typename Load, typename Combine, typename Store>
__global__ void reduce_thread_per_run_kernel(Out* out, const In* in, std::int64_t num_outputs,
                                             std::int64_t run_len, Acc identity, Load load,
                                             Combine combine, Store store) {
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t o = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
       o < num_outputs; o += stride) {
    const In* run = in + o * run_len;
    Acc acc = identity;
    for (std::int64_t i = 0; i < run_len; ++i)
      acc = combine(acc, load(run, i, 1));
    store(out, o, acc);
  }
}

// One block per (output, segment): item = output * num_segments + segment, and out[item] gets
// the merge of elements [segment * segment_len, (segment + 1) * segment_len) of the run.
template <typename Acc, typename In, typename Out, typename Load, typename Combine, typename Store>
__global__ void reduce_block_per_segment_kernel(Out* out, const In* in, std::int64_t num_items,
                                                std::int64_t run_len, std::int64_t num_segments,
                                                std::int64_t segment_len, Acc identity, Load load,
                                                Combine combine, Store store) {
  for (std::int64_t item = blockIdx.x; item < num_items; item += gridDim.x) {
    const std::int64_t o = item / num_segments;
    const std::int64_t begin = (item % num_segments) * segment_len;
    const std::int64_t end = begin + segment_len < run_len ? begin + segment_len : run_len;
    const In* run = in + o * run_len;
    Acc acc = identity;
    for (std::int64_t i = begin + threadIdx.x; i < end; i += blockDim.x) {
      acc = combine(acc, load(run, i, 1));
    }
    acc = block_reduce<kThreads>(acc, combine, identity);
    if (threadIdx.x == 0) store(out, item, acc);
  }
}

// Column layout: one thread per item = (o * num_segments + segment) * inner + j, and out[item]
// gets the merge of rows [segment * segment_len, (segment + 1) * segment_len) of column j of
// slab o. Consecutive threads read consecutive columns of a row.
template <typename Acc, typename In, typename Out, typename Load, typename Combine, typename Store>
__global__ void reduce_columns_kernel(Out* out, const In* in, std::int64_t num_items,
                                      std::int64_t run_len, std::int64_t inner,
                                      std::int64_t num_segments, std::int64_t segment_len,
                                      Acc identity, Load load, Combine combine, Store store) {
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t item = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
       item < num_items; item += stride) {
    const std::int64_t j = item % inner;
    const std::int64_t slab_segment = item / inner;
    const std::int64_t o = slab_segment / num_segments;
    const std::int64_t begin = (slab_segment % num_segments) * segment_len;
    const std::int64_t end = begin + segment_len < run_len ? begin + segment_len : run_len;
    const In* column = in + o * run_len * inner + j;
    Acc acc = identity;
    for (std::int64_t r = begin; r < end; ++r)
      acc = combine(acc, load(column, r, inner));
    store(out, item, acc);
  }
}

// ---- Launchers -------------------------------------------------------------------------------

// Reduces num_outputs runs of run_len elements of `in` into `out` by the policy at the top.
template <typename Acc, typename In, typename Out, typename Load, typename Combine, typename Store>
void launch_reduce(Out* out, const In* in, std::int64_t num_outputs, std::int64_t run_len,
                   Acc identity, Load load, Combine combine, Store store) {
  if (num_outputs == 0) return;
  const cudaStream_t stream = current_stream();
  if (run_len <= kThreadRunMax) {
    auto* kernel = reduce_thread_per_run_kernel<Acc, In, Out, Load, Combine, Store>;
    kernel<<<grid_size(kernel, kThreads, ceil_div(num_outputs, kThreads)), kThreads, 0, stream>>>(
        out, in, num_outputs, run_len, identity, load, combine, store);
    LG_CUDA_CHECK_LAUNCH();
    return;
  }
  if (run_len <= kSegmentLen) {
    // Enough threads to cover the run once, in whole warps.
    const int threads = static_cast<int>(
        std::min<std::int64_t>(kThreads, ceil_div(run_len, kWarpSize) * kWarpSize));
    auto* kernel = reduce_block_per_segment_kernel<Acc, In, Out, Load, Combine, Store>;
    kernel<<<grid_size(kernel, threads, num_outputs), threads, 0, stream>>>(
        out, in, num_outputs, run_len, 1, run_len, identity, load, combine, store);
    LG_CUDA_CHECK_LAUNCH();
    return;
  }
  // Long runs: partials per segment into a workspace from the caching allocator (stream-ordered:
  // freeing it when this function returns is safe, later work on the stream runs after ours).
  const std::int64_t num_segments = ceil_div(run_len, kSegmentLen);
  const std::int64_t num_items = num_outputs * num_segments;
  Workspace workspace(Workspace::bytes_for<Acc>(num_items));
  Acc* partials = workspace.take<Acc>(num_items);
  auto* kernel = reduce_block_per_segment_kernel<Acc, In, Acc, Load, Combine, StoreCast<Acc>>;
  kernel<<<grid_size(kernel, kThreads, num_items), kThreads, 0, stream>>>(
      partials, in, num_items, run_len, num_segments, kSegmentLen, identity, load, combine,
      StoreCast<Acc>{});
  LG_CUDA_CHECK_LAUNCH();
  launch_reduce(out, static_cast<const Acc*>(partials), num_outputs, num_segments, identity,
                LoadValue<Acc, Acc>{}, combine, store);
}

// Reduces the columns of outer (run_len, inner) slabs of `in` into `out` (outer, inner).
template <typename Acc, typename In, typename Out, typename Load, typename Combine, typename Store>
void launch_columns(Out* out, const In* in, std::int64_t outer, std::int64_t run_len,
                    std::int64_t inner, Acc identity, Load load, Combine combine, Store store) {
  if (outer * inner == 0) return;
  const cudaStream_t stream = current_stream();
  const std::int64_t num_segments = ceil_div(run_len, kColumnSegmentLen);
  if (num_segments <= 1) {
    const std::int64_t num_items = outer * inner;
    auto* kernel = reduce_columns_kernel<Acc, In, Out, Load, Combine, Store>;
    kernel<<<grid_size(kernel, kThreads, ceil_div(num_items, kThreads)), kThreads, 0, stream>>>(
        out, in, num_items, run_len, inner, 1, run_len, identity, load, combine, store);
    LG_CUDA_CHECK_LAUNCH();
    return;
  }
  // Partials (outer, num_segments, inner) in a workspace, then the same again over segments.
  const std::int64_t num_items = outer * num_segments * inner;
  Workspace workspace(Workspace::bytes_for<Acc>(num_items));
  Acc* partials = workspace.take<Acc>(num_items);
  auto* kernel = reduce_columns_kernel<Acc, In, Acc, Load, Combine, StoreCast<Acc>>;
  kernel<<<grid_size(kernel, kThreads, ceil_div(num_items, kThreads)), kThreads, 0, stream>>>(
      partials, in, num_items, run_len, inner, num_segments, kColumnSegmentLen, identity, load,
      combine, StoreCast<Acc>{});
  LG_CUDA_CHECK_LAUNCH();
  launch_columns(out, static_cast<const Acc*>(partials), outer, num_segments, inner, identity,
                 LoadValue<Acc, Acc>{}, combine, store);
}

// Runs or columns, as the launcher's layout says.
template <typename Acc, typename In, typename Out, typename Load, typename Combine, typename Store>
void launch(Out* out, const In* in, std::int64_t outer, std::int64_t run_len, std::int64_t inner,
            Acc identity, Load load, Combine combine, Store store) {
  if (inner == 1) {
    launch_reduce(out, in, outer, run_len, identity, load, combine, store);
  } else {
    launch_columns(out, in, outer, run_len, inner, identity, load, combine, store);
  }
}

}  // namespace

void reduce(ReduceOp op, DType dtype, DType out_dtype, void* out, const void* in,
            std::int64_t outer, std::int64_t reduce_size, std::int64_t inner) {
  switch (op) {
    case ReduceOp::Sum:
      dispatch_all(dtype, "sum", [&]<typename T>() {
        using Acc = reduce_math::sum_acc_t<T>;
        reduce_math::dispatch_sum_out<T>(out_dtype, "sum", [&]<typename Out>() {
          launch(static_cast<Out*>(out), static_cast<const T*>(in), outer, reduce_size, inner,
                 Acc(0), LoadValue<T, Acc>{}, SumCombine<Acc>{}, StoreCast<Out>{});
        });
      });
      return;
    case ReduceOp::Mean:
      dispatch_floating(dtype, "mean", [&]<typename T>() {
        using Acc = reduce_math::sum_acc_t<T>;
        reduce_math::dispatch_sum_out<T>(out_dtype, "mean", [&]<typename Out>() {
          launch(static_cast<Out*>(out), static_cast<const T*>(in), outer, reduce_size, inner,
                 Acc(0), LoadValue<T, Acc>{}, SumCombine<Acc>{},
                 StoreMean<Out, Acc>{static_cast<Acc>(reduce_size)});
        });
      });
      return;
    case ReduceOp::Max:
    case ReduceOp::Min:
      LG_CHECK_DTYPE(out_dtype == dtype, op_name(op), ": cannot write ", out_dtype, " from ", dtype,
                     " input (expected ", dtype, ")");
      dispatch_all(dtype, op_name(op), [&]<typename T>() {
        using Acc = reduce_math::max_acc_t<T>;
        const auto extremum = [&](Acc identity, auto combine) {
          launch(static_cast<T*>(out), static_cast<const T*>(in), outer, reduce_size, inner,
                 identity, LoadValue<T, Acc>{}, combine, StoreCast<T>{});
        };
        if (op == ReduceOp::Max)
          extremum(reduce_math::max_identity<Acc>(), MaxCombine<Acc>{});
        else
          extremum(reduce_math::min_identity<Acc>(), MinCombine<Acc>{});
      });
      return;
    case ReduceOp::Prod:
      dispatch_all(dtype, "prod", [&]<typename T>() {
        using Acc = reduce_math::sum_acc_t<T>;
        reduce_math::dispatch_sum_out<T>(out_dtype, "prod", [&]<typename Out>() {
          launch(static_cast<Out*>(out), static_cast<const T*>(in), outer, reduce_size, inner,
                 Acc(1), LoadValue<T, Acc>{}, ProdCombine<Acc>{}, StoreCast<Out>{});
        });
      });
      return;
  }
  LG_THROW(Error, "reduce: unknown op ", static_cast<int>(op));
}

void argmax(DType dtype, std::int64_t* out, const void* in, std::int64_t num_outputs,
            std::int64_t reduce_size) {
  dispatch_all(dtype, "argmax", [&]<typename T>() {
    using Acc = reduce_math::max_acc_t<T>;
    launch_reduce(out, static_cast<const T*>(in), num_outputs, reduce_size,
                  reduce_math::argmax_identity<Acc>(), LoadIndexed<T, Acc>{}, ArgmaxCombine<Acc>{},
                  StoreIndex{});
  });
}

}  // namespace leangrad::kernels::cuda
