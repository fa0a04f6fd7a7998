// cuDNN, loaded at its first call: the forwarding definitions of the cuDNN functions conv2d's
// cuDNN path calls (kernels/cuda/conv_cudnn.cu). Note [Lazily loaded CUDA libraries] in
// kernels/cuda/cublas_lazy.cpp says why and how.
#include <cudnn.h>

#include <array>
#include <string>

#include <leangrad/core/cuda/lazy_libraries.h>
#include <leangrad/core/error.h>
#include <leangrad/core/shared_library.h>

// conv_cudnn.cu uses the 4-d descriptor and _v7 heuristics calls that cuDNN 9 marks deprecated;
// naming them here (to resolve them) would repeat the warning once per function.
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

// The file this build found, tried after the versioned name (CMakeLists.txt).
#ifndef LEANGRAD_CUDNN_BUILD_PATH
#define LEANGRAD_CUDNN_BUILD_PATH ""
#endif

namespace {

leangrad::detail::SharedLibrary& cudnn() {
  static leangrad::detail::SharedLibrary library(
      "cuDNN (conv2d's cuDNN path)",
      leangrad::detail::library_files("libcudnn.so." + std::to_string(CUDNN_MAJOR),
                                      LEANGRAD_CUDNN_BUILD_PATH));
  return library;
}

}  // namespace

extern "C" {

// ---- Handles and descriptors ------------------------------------------------------------------
cudnnStatus_t cudnnCreate(cudnnHandle_t* handle) {
  return LG_REAL_FUNCTION(cudnn(), cudnnCreate)(handle);
}
cudnnStatus_t cudnnSetStream(cudnnHandle_t handle, cudaStream_t stream) {
  return LG_REAL_FUNCTION(cudnn(), cudnnSetStream)(handle, stream);
}
size_t cudnnGetVersion() {
  return LG_REAL_FUNCTION(cudnn(), cudnnGetVersion)();
}
const char* cudnnGetErrorString(cudnnStatus_t status) {
  return LG_REAL_FUNCTION(cudnn(), cudnnGetErrorString)(status);
}
cudnnStatus_t cudnnCreateTensorDescriptor(cudnnTensorDescriptor_t* desc) {
  return LG_REAL_FUNCTION(cudnn(), cudnnCreateTensorDescriptor)(desc);
}
cudnnStatus_t cudnnDestroyTensorDescriptor(cudnnTensorDescriptor_t desc) {
  return LG_REAL_FUNCTION(cudnn(), cudnnDestroyTensorDescriptor)(desc);
}
cudnnStatus_t cudnnSetTensor4dDescriptor(cudnnTensorDescriptor_t desc, cudnnTensorFormat_t format,
                                         cudnnDataType_t data_type, int n, int c, int h, int w) {
  return LG_REAL_FUNCTION(cudnn(), cudnnSetTensor4dDescriptor)(desc, format, data_type, n, c, h, w);
}
cudnnStatus_t cudnnCreateFilterDescriptor(cudnnFilterDescriptor_t* desc) {
  return LG_REAL_FUNCTION(cudnn(), cudnnCreateFilterDescriptor)(desc);
}
cudnnStatus_t cudnnDestroyFilterDescriptor(cudnnFilterDescriptor_t desc) {
  return LG_REAL_FUNCTION(cudnn(), cudnnDestroyFilterDescriptor)(desc);
}
cudnnStatus_t cudnnSetFilter4dDescriptor(cudnnFilterDescriptor_t desc, cudnnDataType_t data_type,
                                         cudnnTensorFormat_t format, int k, int c, int h, int w) {
  return LG_REAL_FUNCTION(cudnn(), cudnnSetFilter4dDescriptor)(desc, data_type, format, k, c, h, w);
}
cudnnStatus_t cudnnCreateConvolutionDescriptor(cudnnConvolutionDescriptor_t* desc) {
  return LG_REAL_FUNCTION(cudnn(), cudnnCreateConvolutionDescriptor)(desc);
}
cudnnStatus_t cudnnDestroyConvolutionDescriptor(cudnnConvolutionDescriptor_t desc) {
  return LG_REAL_FUNCTION(cudnn(), cudnnDestroyConvolutionDescriptor)(desc);
}
cudnnStatus_t cudnnSetConvolution2dDescriptor(cudnnConvolutionDescriptor_t desc, int pad_h,
                                              int pad_w, int stride_h, int stride_w, int dilation_h,
                                              int dilation_w, cudnnConvolutionMode_t mode,
                                              cudnnDataType_t compute_type) {
  return LG_REAL_FUNCTION(cudnn(), cudnnSetConvolution2dDescriptor)(
      desc, pad_h, pad_w, stride_h, stride_w, dilation_h, dilation_w, mode, compute_type);
}
cudnnStatus_t cudnnSetConvolutionGroupCount(cudnnConvolutionDescriptor_t desc, int groups) {
  return LG_REAL_FUNCTION(cudnn(), cudnnSetConvolutionGroupCount)(desc, groups);
}
cudnnStatus_t cudnnSetConvolutionMathType(cudnnConvolutionDescriptor_t desc,
                                          cudnnMathType_t math_type) {
  return LG_REAL_FUNCTION(cudnn(), cudnnSetConvolutionMathType)(desc, math_type);
}

// ---- Algorithm choice and workspace sizes ------------------------------------------------------
cudnnStatus_t cudnnGetConvolutionForwardAlgorithm_v7(cudnnHandle_t handle,
                                                     const cudnnTensorDescriptor_t x_desc,
                                                     const cudnnFilterDescriptor_t w_desc,
                                                     const cudnnConvolutionDescriptor_t conv_desc,
                                                     const cudnnTensorDescriptor_t y_desc,
                                                     const int requested, int* returned,
                                                     cudnnConvolutionFwdAlgoPerf_t* results) {
  return LG_REAL_FUNCTION(cudnn(), cudnnGetConvolutionForwardAlgorithm_v7)(
      handle, x_desc, w_desc, conv_desc, y_desc, requested, returned, results);
}
cudnnStatus_t cudnnGetConvolutionBackwardDataAlgorithm_v7(
    cudnnHandle_t handle, const cudnnFilterDescriptor_t w_desc,
    const cudnnTensorDescriptor_t dy_desc, const cudnnConvolutionDescriptor_t conv_desc,
    const cudnnTensorDescriptor_t dx_desc, const int requested, int* returned,
    cudnnConvolutionBwdDataAlgoPerf_t* results) {
  return LG_REAL_FUNCTION(cudnn(), cudnnGetConvolutionBackwardDataAlgorithm_v7)(
      handle, w_desc, dy_desc, conv_desc, dx_desc, requested, returned, results);
}
cudnnStatus_t cudnnGetConvolutionBackwardFilterAlgorithm_v7(
    cudnnHandle_t handle, const cudnnTensorDescriptor_t x_desc,
    const cudnnTensorDescriptor_t dy_desc, const cudnnConvolutionDescriptor_t conv_desc,
    const cudnnFilterDescriptor_t dw_desc, const int requested, int* returned,
    cudnnConvolutionBwdFilterAlgoPerf_t* results) {
  return LG_REAL_FUNCTION(cudnn(), cudnnGetConvolutionBackwardFilterAlgorithm_v7)(
      handle, x_desc, dy_desc, conv_desc, dw_desc, requested, returned, results);
}
cudnnStatus_t cudnnGetConvolutionForwardWorkspaceSize(
    cudnnHandle_t handle, const cudnnTensorDescriptor_t x_desc,
    const cudnnFilterDescriptor_t w_desc, const cudnnConvolutionDescriptor_t conv_desc,
    const cudnnTensorDescriptor_t y_desc, cudnnConvolutionFwdAlgo_t algo, size_t* bytes) {
  return LG_REAL_FUNCTION(cudnn(), cudnnGetConvolutionForwardWorkspaceSize)(
      handle, x_desc, w_desc, conv_desc, y_desc, algo, bytes);
}
cudnnStatus_t cudnnGetConvolutionBackwardDataWorkspaceSize(
    cudnnHandle_t handle, const cudnnFilterDescriptor_t w_desc,
    const cudnnTensorDescriptor_t dy_desc, const cudnnConvolutionDescriptor_t conv_desc,
    const cudnnTensorDescriptor_t dx_desc, cudnnConvolutionBwdDataAlgo_t algo, size_t* bytes) {
  return LG_REAL_FUNCTION(cudnn(), cudnnGetConvolutionBackwardDataWorkspaceSize)(
      handle, w_desc, dy_desc, conv_desc, dx_desc, algo, bytes);
}
cudnnStatus_t cudnnGetConvolutionBackwardFilterWorkspaceSize(
    cudnnHandle_t handle, const cudnnTensorDescriptor_t x_desc,
    const cudnnTensorDescriptor_t dy_desc, const cudnnConvolutionDescriptor_t conv_desc,
    const cudnnFilterDescriptor_t dw_desc, cudnnConvolutionBwdFilterAlgo_t algo, size_t* bytes) {
  return LG_REAL_FUNCTION(cudnn(), cudnnGetConvolutionBackwardFilterWorkspaceSize)(
      handle, x_desc, dy_desc, conv_desc, dw_desc, algo, bytes);
}

// ---- Convolutions -------------------------------------------------------------------------------
cudnnStatus_t cudnnConvolutionForward(cudnnHandle_t handle, const void* alpha,
                                      const cudnnTensorDescriptor_t x_desc, const void* x,
                                      const cudnnFilterDescriptor_t w_desc, const void* w,
                                      const cudnnConvolutionDescriptor_t conv_desc,
                                      cudnnConvolutionFwdAlgo_t algo, void* workspace,
                                      size_t workspace_bytes, const void* beta,
                                      const cudnnTensorDescriptor_t y_desc, void* y) {
  return LG_REAL_FUNCTION(cudnn(), cudnnConvolutionForward)(handle, alpha, x_desc, x, w_desc, w,
                                                            conv_desc, algo, workspace,
                                                            workspace_bytes, beta, y_desc, y);
}
cudnnStatus_t cudnnConvolutionBackwardData(cudnnHandle_t handle, const void* alpha,
                                           const cudnnFilterDescriptor_t w_desc, const void* w,
                                           const cudnnTensorDescriptor_t dy_desc, const void* dy,
                                           const cudnnConvolutionDescriptor_t conv_desc,
                                           cudnnConvolutionBwdDataAlgo_t algo, void* workspace,
                                           size_t workspace_bytes, const void* beta,
                                           const cudnnTensorDescriptor_t dx_desc, void* dx) {
  return LG_REAL_FUNCTION(cudnn(), cudnnConvolutionBackwardData)(
      handle, alpha, w_desc, w, dy_desc, dy, conv_desc, algo, workspace, workspace_bytes, beta,
      dx_desc, dx);
}
cudnnStatus_t cudnnConvolutionBackwardFilter(cudnnHandle_t handle, const void* alpha,
                                             const cudnnTensorDescriptor_t x_desc, const void* x,
                                             const cudnnTensorDescriptor_t dy_desc, const void* dy,
                                             const cudnnConvolutionDescriptor_t conv_desc,
                                             cudnnConvolutionBwdFilterAlgo_t algo, void* workspace,
                                             size_t workspace_bytes, const void* beta,
                                             const cudnnFilterDescriptor_t dw_desc, void* dw) {
  return LG_REAL_FUNCTION(cudnn(), cudnnConvolutionBackwardFilter)(
      handle, alpha, x_desc, x, dy_desc, dy, conv_desc, algo, workspace, workspace_bytes, beta,
      dw_desc, dw);
}

}  // extern "C"

namespace leangrad::detail {

cuda::LibraryStatus cudnn_status() {
  // Every function defined above: a name the library lacks shows here, without a GPU.
  return probe_library("cuDNN", cudnn(),
                       {"cudnnCreate",
                        "cudnnSetStream",
                        "cudnnGetVersion",
                        "cudnnGetErrorString",
                        "cudnnCreateTensorDescriptor",
                        "cudnnDestroyTensorDescriptor",
                        "cudnnSetTensor4dDescriptor",
                        "cudnnCreateFilterDescriptor",
                        "cudnnDestroyFilterDescriptor",
                        "cudnnSetFilter4dDescriptor",
                        "cudnnCreateConvolutionDescriptor",
                        "cudnnDestroyConvolutionDescriptor",
                        "cudnnSetConvolution2dDescriptor",
                        "cudnnSetConvolutionGroupCount",
                        "cudnnSetConvolutionMathType",
                        "cudnnGetConvolutionForwardAlgorithm_v7",
                        "cudnnGetConvolutionBackwardDataAlgorithm_v7",
                        "cudnnGetConvolutionBackwardFilterAlgorithm_v7",
                        "cudnnGetConvolutionForwardWorkspaceSize",
                        "cudnnGetConvolutionBackwardDataWorkspaceSize",
                        "cudnnGetConvolutionBackwardFilterWorkspaceSize",
                        "cudnnConvolutionForward",
                        "cudnnConvolutionBackwardData",
                        "cudnnConvolutionBackwardFilter"},
                       [] {
                         // cuDNN 9 numbers its versions major * 10000 + minor * 100 + patch.
                         const auto v = static_cast<int>(cudnnGetVersion());
                         return std::array<int, 3>{v / 10000, v / 100 % 100, v % 100};
                       });
}

}  // namespace leangrad::detail
