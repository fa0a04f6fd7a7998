// The cuDNN implementation of conv2d and its gradients (kernels/cuda/conv.h): the baseline our
// implicit-GEMM kernels (conv.cu) are measured against, selected with LEANGRAD_CONV=cudnn or
// ops::set_conv2d_backend, and the fallback for problems those kernels do not take.
// cuDNN's legacy convolution API: descriptors for NCHW tensors, the algorithm its heuristics rank
// first (as PyTorch does without cudnn.benchmark), workspace from leangrad's caching allocator.
// Math: float16/bfloat16 on tensor cores with float32 accumulation; float32 with FMA only unless
// cuda::allow_tf32(); float64 in double.
//
// Note [cuDNN handles]: as Note [cuBLAS handles] (linalg.cu): one per device, created on first use,
// never destroyed, bound to the caller's stream under a mutex held while the work is enqueued.
#include <cudnn.h>

#include <mutex>
#include <vector>

#include "core/creation.h"
#include "core/cuda.h"
#include "core/cuda/cuda_check.h"
#include "kernels/cuda/conv.h"

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
        math = leangrad::cuda::allow_tf32() ? CUDNN_DEFAULT_MATH : CUDNN_FMA_MATH;
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
    LG_CUDNN_CHECK(cudnnCreateTensorDescriptor(&bias));
    LG_CUDNN_CHECK(cudnnCreateFilterDescriptor(&w));
    LG_CUDNN_CHECK(cudnnCreateConvolutionDescriptor(&conv));
    LG_CUDNN_CHECK(cudnnSetTensor4dDescriptor(x, CUDNN_TENSOR_NCHW, data, as_int(g.batch),
                                              as_int(g.in_channels), as_int(g.in_h),
                                              as_int(g.in_w)));
    LG_CUDNN_CHECK(cudnnSetTensor4dDescriptor(y, CUDNN_TENSOR_NCHW, data, as_int(g.batch),
                                              as_int(g.out_channels), as_int(g.out_h),
                                              as_int(g.out_w)));
    LG_CUDNN_CHECK(
        cudnnSetTensor4dDescriptor(bias, CUDNN_TENSOR_NCHW, data, 1, as_int(g.out_channels), 1, 1));
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
    cudnnDestroyTensorDescriptor(bias);
    cudnnDestroyTensorDescriptor(y);
    cudnnDestroyTensorDescriptor(x);
  }
  ConvDescriptors(const ConvDescriptors&) = delete;
  ConvDescriptors& operator=(const ConvDescriptors&) = delete;

  // alpha = 1 and beta = 0 or 1, in the scalar type cuDNN expects (double for double data).
  const void* one() const { return double_scalars_ ? static_cast<const void*>(&one_d_) : &one_f_; }
  const void* zero() const {
    return double_scalars_ ? static_cast<const void*>(&zero_d_) : &zero_f_;
  }

  cudnnTensorDescriptor_t x = nullptr, y = nullptr, bias = nullptr;
  cudnnFilterDescriptor_t w = nullptr;
  cudnnConvolutionDescriptor_t conv = nullptr;

 private:
  static int as_int(std::int64_t v) { return static_cast<int>(v); }
  bool double_scalars_ = false;
  float one_f_ = 1.0f, zero_f_ = 0.0f;
  double one_d_ = 1.0, zero_d_ = 0.0;
};

// Workspace bytes on the current device, freed (stream-ordered) when the returned tensor dies.
Tensor workspace(std::size_t bytes) {
  return empty({static_cast<std::int64_t>(bytes)},
               TensorOptions(kUInt8).device(Device::cuda(leangrad::cuda::current_device())));
}

// The first algorithm of cuDNN's ranking that reports success.
template <typename Perf>
auto first_usable(const std::vector<Perf>& perf, int returned, const char* what) {
  for (int i = 0; i < returned; ++i) {
    if (perf[i].status == CUDNN_STATUS_SUCCESS) return perf[i].algo;
  }
  LG_THROW(Error, "conv2d (cudnn): no ", what, " algorithm supports this problem");
}

// Runs `body(handle)` with the device's handle bound to the current stream.
template <typename F>
void with_handle(const F& body) {
  const auto stream = reinterpret_cast<cudaStream_t>(leangrad::cuda::current_stream().id());
  std::lock_guard<std::mutex> lock(handles_mutex());
  cudnnHandle_t handle = handle_for_device(leangrad::cuda::current_device());
  LG_CUDNN_CHECK(cudnnSetStream(handle, stream));
  body(handle);
}

}  // namespace

void conv2d_forward_cudnn(DType dtype, const Conv2dGeometry& g, void* y, const void* x,
                          const void* w, const void* bias) {
  const ConvDescriptors d(dtype, g);
  with_handle([&](cudnnHandle_t handle) {
    std::vector<cudnnConvolutionFwdAlgoPerf_t> perf(CUDNN_CONVOLUTION_FWD_ALGO_COUNT);
    int returned = 0;
    LG_CUDNN_CHECK(cudnnGetConvolutionForwardAlgorithm_v7(
        handle, d.x, d.w, d.conv, d.y, static_cast<int>(perf.size()), &returned, perf.data()));
    const cudnnConvolutionFwdAlgo_t algo = first_usable(perf, returned, "forward");
    std::size_t bytes = 0;
    LG_CUDNN_CHECK(
        cudnnGetConvolutionForwardWorkspaceSize(handle, d.x, d.w, d.conv, d.y, algo, &bytes));
    const Tensor ws = workspace(bytes);
    LG_CUDNN_CHECK(cudnnConvolutionForward(handle, d.one(), d.x, x, d.w, w, d.conv, algo,
                                           ws.data_ptr(), bytes, d.zero(), d.y, y));
    if (bias != nullptr)
      LG_CUDNN_CHECK(cudnnAddTensor(handle, d.one(), d.bias, bias, d.one(), d.y, y));
  });
}

void conv2d_input_grad_cudnn(DType dtype, const Conv2dGeometry& g, void* dx, const void* dy,
                             const void* w) {
  const ConvDescriptors d(dtype, g);
  with_handle([&](cudnnHandle_t handle) {
    std::vector<cudnnConvolutionBwdDataAlgoPerf_t> perf(CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT);
    int returned = 0;
    LG_CUDNN_CHECK(cudnnGetConvolutionBackwardDataAlgorithm_v7(
        handle, d.w, d.y, d.conv, d.x, static_cast<int>(perf.size()), &returned, perf.data()));
    const cudnnConvolutionBwdDataAlgo_t algo = first_usable(perf, returned, "input-gradient");
    std::size_t bytes = 0;
    LG_CUDNN_CHECK(
        cudnnGetConvolutionBackwardDataWorkspaceSize(handle, d.w, d.y, d.conv, d.x, algo, &bytes));
    const Tensor ws = workspace(bytes);
    LG_CUDNN_CHECK(cudnnConvolutionBackwardData(handle, d.one(), d.w, w, d.y, dy, d.conv, algo,
                                                ws.data_ptr(), bytes, d.zero(), d.x, dx));
  });
}

void conv2d_weight_grad_cudnn(DType dtype, const Conv2dGeometry& g, void* dw, const void* dy,
                              const void* x) {
  const ConvDescriptors d(dtype, g);
  with_handle([&](cudnnHandle_t handle) {
    std::vector<cudnnConvolutionBwdFilterAlgoPerf_t> perf(CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT);
    int returned = 0;
    LG_CUDNN_CHECK(cudnnGetConvolutionBackwardFilterAlgorithm_v7(
        handle, d.x, d.y, d.conv, d.w, static_cast<int>(perf.size()), &returned, perf.data()));
    const cudnnConvolutionBwdFilterAlgo_t algo = first_usable(perf, returned, "weight-gradient");
    std::size_t bytes = 0;
    LG_CUDNN_CHECK(cudnnGetConvolutionBackwardFilterWorkspaceSize(handle, d.x, d.y, d.conv, d.w,
                                                                  algo, &bytes));
    const Tensor ws = workspace(bytes);
    LG_CUDNN_CHECK(cudnnConvolutionBackwardFilter(handle, d.one(), d.x, x, d.y, dy, d.conv, algo,
                                                  ws.data_ptr(), bytes, d.zero(), d.w, dw));
  });
}

}  // namespace leangrad::kernels::cuda
