// cuBLAS, loaded at its first call: the forwarding definitions of the cuBLAS functions leangrad
// calls (kernels/cuda/linalg.cu, core/cuda/cuda_check.h).
//
// Note [Lazily loaded CUDA libraries]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
// libleangrad.so built with CUDA records no CUDA library as needed (readelf -d shows none; the
// install test checks it):
//  - The CUDA runtime is linked statically (CMake's CUDA_RUNTIME_LIBRARY Static, the nvcc
//    default). The static runtime finds the driver, libcuda.so.1, with dlopen when a program
//    first asks for a device, and reports "no device" when it is absent. Its symbols are kept
//    out of libleangrad.so's exports (--exclude-libs), so a program that links the shared
//    runtime itself still gets its own. Both act on the device's primary context, so pointers,
//    streams and events pass between them.
//  - cuBLAS, cuDNN and NCCL are not linked. For each function leangrad calls, this file (and
//    cudnn_lazy.cpp, distributed/nccl/nccl_lazy.cpp) defines a function of the same name and
//    signature, declared by the library's own header, so the compiler checks that they agree.
//    The definition resolves the real function with dlopen/dlsym on its first call
//    (core/shared_library.h) and forwards to it. Call sites are unchanged.
//  - These definitions are hidden (-fvisibility=hidden on the three files, CMakeLists.txt): a
//    program that links cuBLAS itself never calls them by accident.
//  - libleangrad.so is linked with --no-undefined, so a call to a library function that has no
//    forwarding definition here fails the build rather than the first run on a GPU.
// So a CPU program links and runs on a machine without any CUDA library, and a CUDA op on a
// machine without cuBLAS raises a leangrad::Error that names cuBLAS and the files tried. This is
// what PyTorch does for the driver API and NVRTC (LazyNVRTC); we do it for every library but
// the driver, which the static runtime already loads lazily.
#include <cublas_v2.h>

#include <array>
#include <string>

#include <leangrad/core/cuda/lazy_libraries.h>
#include <leangrad/core/error.h>
#include <leangrad/core/shared_library.h>

// The file this build found, tried after the versioned name (CMakeLists.txt).
#ifndef LEANGRAD_CUBLAS_BUILD_PATH
#define LEANGRAD_CUBLAS_BUILD_PATH ""
#endif

namespace {

leangrad::detail::SharedLibrary& cublas() {
  static leangrad::detail::SharedLibrary library(
      "cuBLAS (CUDA matmul)",
      leangrad::detail::library_files("libcublas.so." + std::to_string(CUBLAS_VER_MAJOR),
                                      LEANGRAD_CUBLAS_BUILD_PATH));
  return library;
}

}  // namespace

extern "C" {

cublasStatus_t cublasCreate_v2(cublasHandle_t* handle) {
  return LG_REAL_FUNCTION(cublas(), cublasCreate_v2)(handle);
}

cublasStatus_t cublasSetStream_v2(cublasHandle_t handle, cudaStream_t stream) {
  return LG_REAL_FUNCTION(cublas(), cublasSetStream_v2)(handle, stream);
}

cublasStatus_t cublasSetMathMode(cublasHandle_t handle, cublasMath_t mode) {
  return LG_REAL_FUNCTION(cublas(), cublasSetMathMode)(handle, mode);
}

cublasStatus_t cublasSetWorkspace_v2(cublasHandle_t handle, void* workspace, size_t bytes) {
  return LG_REAL_FUNCTION(cublas(), cublasSetWorkspace_v2)(handle, workspace, bytes);
}

cublasStatus_t cublasGemmStridedBatchedEx(cublasHandle_t handle, cublasOperation_t transa,
                                          cublasOperation_t transb, int m, int n, int k,
                                          const void* alpha, const void* a, cudaDataType a_type,
                                          int lda, long long int stride_a, const void* b,
                                          cudaDataType b_type, int ldb, long long int stride_b,
                                          const void* beta, void* c, cudaDataType c_type, int ldc,
                                          long long int stride_c, int batch_count,
                                          cublasComputeType_t compute_type, cublasGemmAlgo_t algo) {
  // cublas_api.h also has a C++ overload of this name (taking cublasDataType): pick the C one.
  using CFunction = cublasStatus_t (*)(
      cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int, const void*, const void*,
      cudaDataType, int, long long int, const void*, cudaDataType, int, long long int, const void*,
      void*, cudaDataType, int, long long int, int, cublasComputeType_t, cublasGemmAlgo_t);
  constexpr CFunction self = &cublasGemmStridedBatchedEx;
  return leangrad::detail::real_function<self>(cublas(), "cublasGemmStridedBatchedEx")(
      handle, transa, transb, m, n, k, alpha, a, a_type, lda, stride_a, b, b_type, ldb, stride_b,
      beta, c, c_type, ldc, stride_c, batch_count, compute_type, algo);
}

cublasStatus_t cublasGetProperty(libraryPropertyType type, int* value) {
  return LG_REAL_FUNCTION(cublas(), cublasGetProperty)(type, value);
}

const char* cublasGetStatusName(cublasStatus_t status) {
  return LG_REAL_FUNCTION(cublas(), cublasGetStatusName)(status);
}

const char* cublasGetStatusString(cublasStatus_t status) {
  return LG_REAL_FUNCTION(cublas(), cublasGetStatusString)(status);
}

}  // extern "C"

namespace leangrad::detail {

cuda::LibraryStatus cublas_status() {
  // Every function defined above: a name the library lacks shows here, without a GPU.
  return probe_library(
      "cuBLAS", cublas(),
      {"cublasCreate_v2", "cublasSetStream_v2", "cublasSetMathMode", "cublasSetWorkspace_v2",
       "cublasGemmStridedBatchedEx", "cublasGetProperty", "cublasGetStatusName",
       "cublasGetStatusString"},
      [] {
        std::array<int, 3> v{};
        const libraryPropertyType parts[] = {MAJOR_VERSION, MINOR_VERSION, PATCH_LEVEL};
        for (int i = 0; i < 3; ++i) {
          LG_CHECK(cublasGetProperty(parts[i], &v[i]) == CUBLAS_STATUS_SUCCESS,
                   "cublasGetProperty failed");
        }
        return v;
      });
}

}  // namespace leangrad::detail
