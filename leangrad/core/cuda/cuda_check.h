// CUDA error checking for implementation files (never included by public headers):
//   LG_CUDA_CHECK(cudaMemcpyAsync(...));   throws leangrad::Error with file:line, the call and
//                                           the CUDA error name and text
//   kernel<<<grid, block, 0, stream>>>(...); LG_CUDA_CHECK_LAUNCH();
//   LG_CUBLAS_CHECK(cublasSgemm(...));
//   LG_CUDA_WARN(cudaFree(ptr));            for destructors and deleters: prints, never throws
// plus CudaDeviceGuard, which makes a device current for a scope.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <cstdio>

#include <leangrad/core/error.h>

namespace leangrad::detail {

// Clears the runtime's last-error slot (so the next LG_CUDA_CHECK_LAUNCH does not report this
// error again) and throws; out-of-memory becomes OutOfMemoryError.
[[noreturn]] inline void throw_cuda_error(cudaError_t status, const char* expr, const char* file,
                                          int line) {
  (void)cudaGetLastError();
  const std::string message = str_cat("CUDA call failed: ", expr, ": ", cudaGetErrorName(status),
                                      " (", cudaGetErrorString(status), ")");
  if (status == cudaErrorMemoryAllocation) throw OutOfMemoryError(message, file, line);
  throw Error(message, file, line);
}

[[noreturn]] inline void throw_cublas_error(cublasStatus_t status, const char* expr,
                                            const char* file, int line) {
  throw Error(str_cat("cuBLAS call failed: ", expr, ": ", cublasGetStatusName(status), " (",
                      cublasGetStatusString(status), ")"),
              file, line);
}

inline void warn_cuda_error(cudaError_t status, const char* expr, const char* file,
                            int line) noexcept {
  (void)cudaGetLastError();
  // During process exit the runtime may already be unloaded: that is not worth a message.
  if (status == cudaErrorCudartUnloading) return;
  std::fprintf(stderr, "leangrad: warning: %s failed: %s (%s) at %s:%d\n", expr,
               cudaGetErrorName(status), cudaGetErrorString(status), file, line);
}

}  // namespace leangrad::detail

#define LG_CUDA_CHECK(expr)                                                             \
  do {                                                                                  \
    const cudaError_t lg_cuda_status_ = (expr);                                         \
    if (lg_cuda_status_ != cudaSuccess) [[unlikely]]                                    \
      ::leangrad::detail::throw_cuda_error(lg_cuda_status_, #expr, __FILE__, __LINE__); \
  } while (0)

// After every kernel launch: reports bad launch configurations (and earlier asynchronous errors).
#define LG_CUDA_CHECK_LAUNCH() LG_CUDA_CHECK(cudaGetLastError())

#define LG_CUBLAS_CHECK(expr)                                                               \
  do {                                                                                      \
    const cublasStatus_t lg_cublas_status_ = (expr);                                        \
    if (lg_cublas_status_ != CUBLAS_STATUS_SUCCESS) [[unlikely]]                            \
      ::leangrad::detail::throw_cublas_error(lg_cublas_status_, #expr, __FILE__, __LINE__); \
  } while (0)

#define LG_CUDA_WARN(expr)                                                             \
  do {                                                                                 \
    const cudaError_t lg_cuda_status_ = (expr);                                        \
    if (lg_cuda_status_ != cudaSuccess) [[unlikely]]                                   \
      ::leangrad::detail::warn_cuda_error(lg_cuda_status_, #expr, __FILE__, __LINE__); \
  } while (0)

namespace leangrad {

// Makes `device` current for the scope and restores the previous device on exit; a no-op (one
// cudaGetDevice) when it is already current, the usual single-GPU case.
class CudaDeviceGuard {
 public:
  explicit CudaDeviceGuard(int device) {
    LG_CUDA_CHECK(cudaGetDevice(&previous_));
    if (previous_ == device) return;
    LG_CUDA_CHECK(cudaSetDevice(device));
    switched_ = true;
  }
  ~CudaDeviceGuard() {
    if (switched_) LG_CUDA_WARN(cudaSetDevice(previous_));
  }
  CudaDeviceGuard(const CudaDeviceGuard&) = delete;
  CudaDeviceGuard& operator=(const CudaDeviceGuard&) = delete;

 private:
  int previous_ = 0;
  bool switched_ = false;
};

}  // namespace leangrad
