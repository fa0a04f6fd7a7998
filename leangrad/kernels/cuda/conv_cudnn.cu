// The cuDNN implementation of conv2d and its gradients (kernels/cuda/conv_cudnn.h): the baseline
// our implicit-GEMM kernels (conv.cu) are measured against, selected with LEANGRAD_CONV=cudnn or
// ops::set_conv2d_backend, and the fallback for problems those kernels do not take.
// cuDNN's legacy convolution API: descriptors for NCHW tensors and, as PyTorch does without
// cudnn.benchmark, the best-ranked algorithm of cuDNN's heuristics that is usable here (Note
// [cuDNN algorithm choice]), chosen once per problem (Note [cuDNN algorithm cache]); workspace
// from leangrad's caching allocator.
// Math: float16/bfloat16 on tensor cores with float32 accumulation; float32 with FMA only unless
// cuda::allow_tf32(); float64 in double.
//
// Note [cuDNN handles]: as Note [cuBLAS handles] (linalg.cu): one per device, created on first use,
// never destroyed, bound to the caller's stream under a mutex held while the work is enqueued.
#include <cudnn.h>

#include <map>
#include <mutex>
#include <optional>
#include <vector>

#include <leangrad/core/cuda.h>
#include <leangrad/kernels/cuda/conv_cudnn.h>
#include <leangrad/kernels/cuda/cuda_common.cuh>

#define LG_CUDNN_CHECK(expr)                                                                      \
  do {                                                                                            \
    const cudnnStatus_t lg_cudnn_status_ = (expr);                                                \
    if (lg_cudnn_status_ != CUDNN_STATUS_SUCCESS) [[unlikely]]                                    \
      throw ::leangrad::Error(::leangrad::detail::str_cat("cuDNN call failed: ", #expr, ": ",     \
                                                          cudnnGetErrorString(lg_cudnn_status_)), \
                              __FILE__, __LINE__);                                                \
  } while (0)

namespace leangrad::kernels::cuda {

namespace {

std::mutex& handles_mutex() {
  static std::mutex mutex;
  return mutex;
}

// Call with handles_mutex() held. See Note [cuDNN handles].
cudnnHandle_t handle_for_device(int device) {
  static std::vector<cudnnHandle_t>* handles = new std::vector<cudnnHandle_t>();  // leaked
  if (static_cast<int>(handles->size()) <= device) handles->resize(device + 1, nullptr);
  cudnnHandle_t& handle = (*handles)[device];
  if (handle == nullptr) {
    CudaDeviceGuard guard(device);
    LG_CUDNN_CHECK(cudnnCreate(&handle));
  }
  return handle;
}

// The descriptors of one problem, destroyed with it.
class ConvDescriptors {
 public:
  ConvDescriptors(DType dtype, const Conv2dGeometry& g) {
    cudnnDataType_t data = CUDNN_DATA_FLOAT;
    cudnnDataType_t compute = CUDNN_DATA_FLOAT;
    cudnnMathType_t math = CUDNN_DEFAULT_MATH;
    switch (dtype) {
      case DType::Float32:
        fma_only_ = !leangrad::cuda::allow_tf32();
        math = fma_only_ ? CUDNN_FMA_MATH : CUDNN_DEFAULT_MATH;
        break;
      case DType::Float64:
        data = compute = CUDNN_DATA_DOUBLE;
        break;
      case DType::Float16:
        data = CUDNN_DATA_HALF;
        math = CUDNN_TENSOR_OP_MATH;
        break;
      case DType::BFloat16:
        data = CUDNN_DATA_BFLOAT16;
        math = CUDNN_TENSOR_OP_MATH;
        break;
      default:
        LG_THROW(DTypeError, "conv2d (cudnn): expected a floating dtype, got ", dtype);
    }
    double_scalars_ = dtype == DType::Float64;
    LG_CUDNN_CHECK(cudnnCreateTensorDescriptor(&x));
    LG_CUDNN_CHECK(cudnnCreateTensorDescriptor(&y));
    LG_CUDNN_CHECK(cudnnCreateFilterDescriptor(&w));
    LG_CUDNN_CHECK(cudnnCreateConvolutionDescriptor(&conv));
    LG_CUDNN_CHECK(cudnnSetTensor4dDescriptor(x, CUDNN_TENSOR_NCHW, data, as_int(g.batch),
                                              as_int(g.in_channels), as_int(g.in_h),
                                              as_int(g.in_w)));
    LG_CUDNN_CHECK(cudnnSetTensor4dDescriptor(y, CUDNN_TENSOR_NCHW, data, as_int(g.batch),
                                              as_int(g.out_channels), as_int(g.out_h),
                                              as_int(g.out_w)));
    LG_CUDNN_CHECK(cudnnSetFilter4dDescriptor(w, data, CUDNN_TENSOR_NCHW, as_int(g.out_channels),
                                              as_int(g.in_channels_per_group()), as_int(g.kernel_h),
                                              as_int(g.kernel_w)));
    LG_CUDNN_CHECK(cudnnSetConvolution2dDescriptor(
        conv, as_int(g.pad_h), as_int(g.pad_w), as_int(g.stride_h), as_int(g.stride_w),
        as_int(g.dilation_h), as_int(g.dilation_w), CUDNN_CROSS_CORRELATION, compute));
    LG_CUDNN_CHECK(cudnnSetConvolutionGroupCount(conv, as_int(g.groups)));
    LG_CUDNN_CHECK(cudnnSetConvolutionMathType(conv, math));
  }
  ~ConvDescriptors() {
    cudnnDestroyConvolutionDescriptor(conv);
    cudnnDestroyFilterDescriptor(w);
    cudnnDestroyTensorDescriptor(y);
    cudnnDestroyTensorDescriptor(x);
  }
  ConvDescriptors(const ConvDescriptors&) = delete;
  ConvDescriptors& operator=(const ConvDescriptors&) = delete;

  // float32 without TF32: only FMA math (no tensor-op conversion) is allowed.
  bool fma_only() const { return fma_only_; }

  // alpha = 1 and beta = 0 or 1, in the scalar type cuDNN expects (double for double data).
  const void* one() const { return double_scalars_ ? static_cast<const void*>(&one_d_) : &one_f_; }
  const void* zero() const {
    return double_scalars_ ? static_cast<const void*>(&zero_d_) : &zero_f_;
  }

  cudnnTensorDescriptor_t x = nullptr, y = nullptr;
  cudnnFilterDescriptor_t w = nullptr;
  cudnnConvolutionDescriptor_t conv = nullptr;

 private:
  static int as_int(std::int64_t v) { return static_cast<int>(v); }
  bool double_scalars_ = false;
  bool fma_only_ = false;
  float one_f_ = 1.0f, zero_f_ = 0.0f;
  double one_d_ = 1.0, zero_d_ = 0.0;
};

// Note [cuDNN algorithm choice]
//   cuDNN's heuristics rank every algorithm for the problem, each with the math type it assumes
//   and the workspace it needs. We take the first in rank order that
//     - reported success,
//     - needs at most kMaxWorkspaceBytes (1 GiB) of workspace, and a workspace the caching
//       allocator can actually give (an out-of-memory here moves on to the next algorithm: one
//       needing no workspace is always ranked),
//     - for float32 without TF32, does not convert to tensor-op math,
//   and set the descriptor's math type to the one the heuristic ranked it with (the workspace
//   size is then asked for that math type).
constexpr std::size_t kMaxWorkspaceBytes = std::size_t{1} << 30;

// Note [cuDNN algorithm cache]
//   Asking the heuristics is host work, done under the handles' mutex before every launch. The
//   H100 pass of 2026-11-25 timed cuDNN's float32 and bfloat16 convolutions of one srnet layer
//   at 2.6-6.3 ms where our kernels take 0.5-1.1 ms, bfloat16 on tensor cores slower than
//   float32 (bench/results/2026-11-25-h100-80gb-hbm3.md): what host time between the launches
//   would look like (the next pass checks it). Like PyTorch's cache of algorithms per
//   ConvolutionParams, the first call for a problem chooses as Note [cuDNN algorithm choice]
//   says, and the choice (algorithm, math type, workspace bytes) is kept per device, direction,
//   dtype, TF32 setting and geometry; later calls go straight to it. When its workspace cannot be
//   had, that call searches again (and takes the next usable algorithm) without replacing it.
//   Entries are never dropped: a program meets few convolution problems.
enum class Direction { Forward, InputGrad, WeightGrad };

struct Choice {
  int algo = 0;
  cudnnMathType_t math = CUDNN_DEFAULT_MATH;
  std::size_t workspace_bytes = 0;
};

struct ProblemKey {
  int device;
  Direction direction;
  DType dtype;
  bool fma_only;
  Conv2dGeometry geometry;
  auto operator<=>(const ProblemKey&) const = default;
};

ProblemKey problem_key(Direction direction, DType dtype, bool fma_only, const Conv2dGeometry& g) {
  return {leangrad::cuda::current_device(), direction, dtype, fma_only, g};
}

// Call with handles_mutex() held.
std::map<ProblemKey, Choice>& choices() {
  static auto* cache = new std::map<ProblemKey, Choice>();  // leaked, as the handles
  return *cache;
}

// A workspace of `bytes`, or none when the caching allocator cannot give it.
std::optional<Workspace> try_workspace(std::size_t bytes) {
  std::optional<Workspace> workspace;
  try {
    // Workspace rounds every take up to 256 bytes: size it as take will ask.
    workspace.emplace(Workspace::bytes_for<unsigned char>(static_cast<std::int64_t>(bytes)));
  } catch (const OutOfMemoryError&) {
  }
  return workspace;
}

// Runs the problem `key` with its cached choice, or chooses (Note [cuDNN algorithm choice]):
// `query` returns the heuristics' ranking.
template <typename Algo, typename Perf, typename Query, typename WorkspaceSize, typename Run>
void run_chosen(ConvDescriptors& d, const ProblemKey& key, const char* what, const Query& query,
                const WorkspaceSize& workspace_size, const Run& run) {
  std::map<ProblemKey, Choice>& cache = choices();
  if (const auto it = cache.find(key); it != cache.end()) {
    const Choice choice = it->second;
    if (std::optional<Workspace> workspace = try_workspace(choice.workspace_bytes)) {
      LG_CUDNN_CHECK(cudnnSetConvolutionMathType(d.conv, choice.math));
      run(static_cast<Algo>(choice.algo),
          workspace->take<unsigned char>(static_cast<std::int64_t>(choice.workspace_bytes)),
          choice.workspace_bytes);
      return;
    }
  }
  for (const Perf& candidate : query()) {
    if (candidate.status != CUDNN_STATUS_SUCCESS || candidate.memory > kMaxWorkspaceBytes) continue;
    const bool tensor_op = candidate.mathType == CUDNN_TENSOR_OP_MATH ||
                           candidate.mathType == CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION;
    if (d.fma_only() && tensor_op) continue;
    const cudnnMathType_t math = d.fma_only() ? CUDNN_FMA_MATH : candidate.mathType;
    LG_CUDNN_CHECK(cudnnSetConvolutionMathType(d.conv, math));
    const std::size_t bytes = workspace_size(candidate.algo);
    if (bytes > kMaxWorkspaceBytes) continue;
    std::optional<Workspace> workspace = try_workspace(bytes);
    if (!workspace) continue;
    cache.try_emplace(key, Choice{static_cast<int>(candidate.algo), math, bytes});
    run(candidate.algo, workspace->take<unsigned char>(static_cast<std::int64_t>(bytes)), bytes);
    return;
  }
  LG_THROW(Error, "conv2d (cudnn): no ", what,
           " algorithm fits this problem within the workspace limit and the free memory");
}

// Runs `body(handle)` with the device's handle bound to the current stream.
template <typename F>
void with_handle(const F& body) {
  std::lock_guard<std::mutex> lock(handles_mutex());
  cudnnHandle_t handle = handle_for_device(leangrad::cuda::current_device());
  LG_CUDNN_CHECK(cudnnSetStream(handle, current_stream()));
  body(handle);
}

}  // namespace

void conv2d_forward_cudnn(DType dtype, const Conv2dGeometry& g, void* y, const void* x,
                          const void* w) {
  ConvDescriptors d(dtype, g);
  with_handle([&](cudnnHandle_t handle) {
    run_chosen<cudnnConvolutionFwdAlgo_t, cudnnConvolutionFwdAlgoPerf_t>(
        d, problem_key(Direction::Forward, dtype, d.fma_only(), g), "forward",
        [&] {
          std::vector<cudnnConvolutionFwdAlgoPerf_t> perf(CUDNN_CONVOLUTION_FWD_ALGO_COUNT);
          int returned = 0;
          LG_CUDNN_CHECK(cudnnGetConvolutionForwardAlgorithm_v7(handle, d.x, d.w, d.conv, d.y,
                                                                static_cast<int>(perf.size()),
                                                                &returned, perf.data()));
          perf.resize(static_cast<std::size_t>(returned));
          return perf;
        },
        [&](cudnnConvolutionFwdAlgo_t algo) {
          std::size_t bytes = 0;
          LG_CUDNN_CHECK(
              cudnnGetConvolutionForwardWorkspaceSize(handle, d.x, d.w, d.conv, d.y, algo, &bytes));
          return bytes;
        },
        [&](cudnnConvolutionFwdAlgo_t algo, void* workspace, std::size_t bytes) {
          LG_CUDNN_CHECK(cudnnConvolutionForward(handle, d.one(), d.x, x, d.w, w, d.conv, algo,
                                                 workspace, bytes, d.zero(), d.y, y));
        });
  });
}

void conv2d_input_grad_cudnn(DType dtype, const Conv2dGeometry& g, void* dx, const void* dy,
                             const void* w) {
  ConvDescriptors d(dtype, g);
  with_handle([&](cudnnHandle_t handle) {
    run_chosen<cudnnConvolutionBwdDataAlgo_t, cudnnConvolutionBwdDataAlgoPerf_t>(
        d, problem_key(Direction::InputGrad, dtype, d.fma_only(), g), "input-gradient",
        [&] {
          std::vector<cudnnConvolutionBwdDataAlgoPerf_t> perf(
              CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT);
          int returned = 0;
          LG_CUDNN_CHECK(cudnnGetConvolutionBackwardDataAlgorithm_v7(handle, d.w, d.y, d.conv, d.x,
                                                                     static_cast<int>(perf.size()),
                                                                     &returned, perf.data()));
          perf.resize(static_cast<std::size_t>(returned));
          return perf;
        },
        [&](cudnnConvolutionBwdDataAlgo_t algo) {
          std::size_t bytes = 0;
          LG_CUDNN_CHECK(cudnnGetConvolutionBackwardDataWorkspaceSize(handle, d.w, d.y, d.conv, d.x,
                                                                      algo, &bytes));
          return bytes;
        },
        [&](cudnnConvolutionBwdDataAlgo_t algo, void* workspace, std::size_t bytes) {
          LG_CUDNN_CHECK(cudnnConvolutionBackwardData(handle, d.one(), d.w, w, d.y, dy, d.conv,
                                                      algo, workspace, bytes, d.zero(), d.x, dx));
        });
  });
}

void conv2d_weight_grad_cudnn(DType dtype, const Conv2dGeometry& g, void* dw, const void* dy,
                              const void* x, bool accumulate) {
  ConvDescriptors d(dtype, g);
  with_handle([&](cudnnHandle_t handle) {
    run_chosen<cudnnConvolutionBwdFilterAlgo_t, cudnnConvolutionBwdFilterAlgoPerf_t>(
        d, problem_key(Direction::WeightGrad, dtype, d.fma_only(), g), "weight-gradient",
        [&] {
          std::vector<cudnnConvolutionBwdFilterAlgoPerf_t> perf(
              CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT);
          int returned = 0;
          LG_CUDNN_CHECK(cudnnGetConvolutionBackwardFilterAlgorithm_v7(
              handle, d.x, d.y, d.conv, d.w, static_cast<int>(perf.size()), &returned,
              perf.data()));
          perf.resize(static_cast<std::size_t>(returned));
          return perf;
        },
        [&](cudnnConvolutionBwdFilterAlgo_t algo) {
          std::size_t bytes = 0;
          LG_CUDNN_CHECK(cudnnGetConvolutionBackwardFilterWorkspaceSize(handle, d.x, d.y, d.conv,
                                                                        d.w, algo, &bytes));
          return bytes;
        },
        [&](cudnnConvolutionBwdFilterAlgo_t algo, void* workspace, std::size_t bytes) {
          LG_CUDNN_CHECK(cudnnConvolutionBackwardFilter(handle, d.one(), d.x, x, d.y, dy, d.conv,
                                                        algo, workspace, bytes,
                                                        accumulate ? d.one() : d.zero(), d.w, dw));
        });
  });
}

}  // namespace leangrad::kernels::cuda
