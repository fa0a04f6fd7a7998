// The running reductions in CUDA (kernels/backend.h): cumsum, cumprod, logcumsumexp, cummax and
// cummin; kernels/cpu/scan.cpp is the reference. One thread per column (o, c): it walks down the
// dim taking reduce_math's steps in order, the same steps as the CPU takes, so both give the same
// bits (up to libm against CUDA's exp and log1p for logcumsumexp). Adjacent threads take adjacent
// columns (coalesced when inner is large). A long last dim (inner == 1) of few rows leaves most of
// the GPU idle; a block-wide scan is the next step if that case matters.
#include <cstdint>
#include <limits>

#include <leangrad/kernels/backend.h>
#include <leangrad/kernels/dispatch.h>
#include <leangrad/kernels/reduce_math.h>
#include <leangrad/kernels/cuda/cuda_common.cuh>

namespace leangrad::kernels::cuda {

namespace {

constexpr int kThreads = 256;

template <typename T, typename Acc, typename Combine>
__global__ void scan_kernel(T* out, const T* in, std::int64_t outer, std::int64_t size,
                            std::int64_t inner, bool reverse, Acc identity, Combine combine) {
  const std::int64_t columns = outer * inner;
  for (std::int64_t k = global_thread_index(); k < columns; k += grid_thread_count()) {
    const std::int64_t base = (k / inner) * size * inner + k % inner;
    Acc acc = identity;
    for (std::int64_t j = 0; j < size; ++j) {
      const std::int64_t offset = base + (reverse ? size - 1 - j : j) * inner;
      acc = combine(acc, static_cast<Acc>(in[offset]));
      out[offset] = static_cast<T>(acc);
    }
  }
}

template <typename T, typename Acc>
__global__ void scan_extremum_kernel(T* values, std::int64_t* indices, const T* in,
                                     std::int64_t outer, std::int64_t size, std::int64_t inner,
                                     bool is_max) {
  const std::int64_t columns = outer * inner;
  for (std::int64_t k = global_thread_index(); k < columns; k += grid_thread_count()) {
    const std::int64_t base = (k / inner) * size * inner + k % inner;
    Acc best = static_cast<Acc>(in[base]);
    std::int64_t best_index = 0;
    for (std::int64_t j = 0; j < size; ++j) {
      const std::int64_t offset = base + j * inner;
      const Acc v = static_cast<Acc>(in[offset]);
      if (reduce_math::extremum_takes(v, best, is_max)) {
        best = v;
        best_index = j;
      }
      values[offset] = static_cast<T>(best);
      indices[offset] = best_index;
    }
  }
}

template <typename Acc>
struct AddStep {
  __device__ Acc operator()(Acc a, Acc b) const { return reduce_math::wrapping_add(a, b); }
};
template <typename Acc>
struct MulStep {
  __device__ Acc operator()(Acc a, Acc b) const { return reduce_math::wrapping_mul(a, b); }
};
template <typename Acc>
struct LogAddExpStep {
  __device__ Acc operator()(Acc a, Acc b) const { return reduce_math::log_add_exp(a, b); }
};

template <typename T, typename Acc, typename Combine>
void launch_scan(void* out, const void* in, std::int64_t outer, std::int64_t size,
                 std::int64_t inner, bool reverse, Acc identity, Combine combine) {
  auto* kernel = scan_kernel<T, Acc, Combine>;
  const unsigned int blocks = grid_size(kernel, kThreads, ceil_div(outer * inner, kThreads));
  kernel<<<blocks, kThreads, 0, current_stream()>>>(static_cast<T*>(out), static_cast<const T*>(in),
                                                    outer, size, inner, reverse, identity, combine);
  LG_CUDA_CHECK_LAUNCH();
}

}  // namespace

void scan(ScanOp op, DType dtype, void* out, const void* in, std::int64_t outer, std::int64_t size,
          std::int64_t inner, bool reverse) {
  switch (op) {
    case ScanOp::Sum:
      dispatch_addable(dtype, "cumsum", [&]<typename T>() {
        using Acc = reduce_math::scan_acc_t<T>;  // Note [Running reductions of float32 in float64]
        launch_scan<T>(out, in, outer, size, inner, reverse, Acc(0), AddStep<Acc>{});
      });
      return;
    case ScanOp::Prod:
      dispatch_addable(dtype, "cumprod", [&]<typename T>() {
        using Acc = reduce_math::scan_acc_t<T>;  // Note [Running reductions of float32 in float64]
        launch_scan<T>(out, in, outer, size, inner, reverse, Acc(1), MulStep<Acc>{});
      });
      return;
    case ScanOp::LogSumExp:
      dispatch_floating(dtype, "logcumsumexp", [&]<typename T>() {
        using Acc = reduce_math::scan_acc_t<T>;  // Note [Running reductions of float32 in float64]
        launch_scan<T>(out, in, outer, size, inner, reverse, -std::numeric_limits<Acc>::infinity(),
                       LogAddExpStep<Acc>{});
      });
      return;
  }
  LG_THROW(Error, "scan: unknown op ", static_cast<int>(op));
}

void scan_extremum(DType dtype, void* values, std::int64_t* indices, const void* in,
                   std::int64_t outer, std::int64_t size, std::int64_t inner, bool is_max) {
  dispatch_all(dtype, is_max ? "cummax" : "cummin", [&]<typename T>() {
    using Acc = reduce_math::max_acc_t<T>;
    auto* kernel = scan_extremum_kernel<T, Acc>;
    const unsigned int blocks = grid_size(kernel, kThreads, ceil_div(outer * inner, kThreads));
    kernel<<<blocks, kThreads, 0, current_stream()>>>(
        static_cast<T*>(values), indices, static_cast<const T*>(in), outer, size, inner, is_max);
    LG_CUDA_CHECK_LAUNCH();
  });
}

}  // namespace leangrad::kernels::cuda
