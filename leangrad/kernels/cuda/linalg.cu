// Matrix products in CUDA with cuBLAS (cublasGemmStridedBatchedEx): matmul of kernels/backend.h,
// the Eigen launcher in kernels/cpu/linalg.cpp being the reference.
//
// Note [Row-major GEMM with cuBLAS]
// cuBLAS is column-major; our out is row-major (m, n). Memory holding a row-major (m, n) matrix
// is the column-major (n, m) matrix out^T, and out^T = b^T a^T. So we ask cuBLAS for the
// column-major product b^T a^T, with m and n swapped and b passed first. For each operand:
//   row-major (col_stride 1):   its memory read column-major is already the transpose we need
//                               -> CUBLAS_OP_N, leading dimension row_stride;
//   column-major (row_stride 1): its memory read column-major is the matrix itself
//                               -> CUBLAS_OP_T, leading dimension col_stride.
// So transposed views go in without a copy; batch strides (0 for a broadcast operand) go in as is.
//
// Note [cuBLAS handles]
// One handle per device, created on first use and shared by all threads; a mutex serializes
// binding it to the caller's current stream and enqueueing the GEMM (both only queue work, so the
// lock is short). Handles are never destroyed: at process exit the CUDA runtime may already be
// torn down, and destroying then crashes (PyTorch leaks them for the same reason).
// cuBLAS's own workspace would be shared by every stream the handle is bound to, so two streams'
// GEMMs could use it at once: each (device, stream) gets its own (kWorkspaceBytes, from the
// caching allocator, on that stream), set with cublasSetWorkspace before each GEMM. Workspaces
// live as long as the process, keyed by the stream's id, which is never reused.
#include <climits>
#include <map>
#include <mutex>
#include <utility>
#include <vector>

#include <leangrad/core/cuda.h>
#include <leangrad/kernels/backend.h>
#include <leangrad/kernels/cuda/cuda_common.cuh>

namespace leangrad::kernels::cuda {

namespace {

std::mutex& handles_mutex() {
  static std::mutex mutex;
  return mutex;
}

// cuBLAS's recommended workspace: 32 MiB on Hopper (sm_90) and later, 4 MiB before.
std::size_t workspace_bytes(int device) {
  int major = 0;
  LG_CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
  return (major >= 9 ? 32 : 4) * std::size_t{1024 * 1024};
}

// The workspace of (device, stream); call with handles_mutex() held. See Note [cuBLAS handles].
const DataPtr& workspace_for(int device, const leangrad::cuda::Stream& stream) {
  static auto* workspaces = new std::map<std::pair<int, std::uint64_t>, DataPtr>();  // leaked
  DataPtr& workspace = (*workspaces)[{device, stream.id()}];
  if (!workspace) {
    workspace = allocator_for(Device::cuda(device)).allocate(workspace_bytes(device), stream.ref());
  }
  return workspace;
}

// The handle of `device`; call with handles_mutex() held. See Note [cuBLAS handles].
cublasHandle_t handle_for_device(int device) {
  static std::vector<cublasHandle_t>* handles = new std::vector<cublasHandle_t>();  // leaked
  if (static_cast<int>(handles->size()) <= device) handles->resize(device + 1, nullptr);
  cublasHandle_t& handle = (*handles)[device];
  if (handle == nullptr) {
    CudaDeviceGuard guard(device);
    LG_CUBLAS_CHECK(cublasCreate(&handle));
    // A 16-bit product is summed in float32 and rounded to its dtype once: split-K partial sums
    // kept in the 16-bit output type would round it several times (PyTorch allows that by
    // default, allow_fp16_reduced_precision_reduction; leangrad, as with TF32, does not).
    LG_CUBLAS_CHECK(cublasSetMathMode(
        handle, static_cast<cublasMath_t>(CUBLAS_DEFAULT_MATH |
                                          CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION)));
  }
  return handle;
}

// cuBLAS takes int sizes and long long strides.
int checked_int(std::int64_t value, const char* what) {
  LG_CHECK_SHAPE(value <= INT_MAX, "matmul: ", what, " ", value,
                 " is too large for cuBLAS (at most ", INT_MAX, ")");
  return static_cast<int>(value);
}

struct CublasOperand {
  cublasOperation_t op;
  int ld;
};

// See Note [Row-major GEMM with cuBLAS].
CublasOperand cublas_operand(const MatmulOperand& x) {
  if (x.row_major()) return {CUBLAS_OP_N, checked_int(x.row_stride, "row stride")};
  return {CUBLAS_OP_T, checked_int(x.col_stride, "column stride")};
}

}  // namespace

void matmul(DType dtype, const MatmulGeometry& g, void* out) {
  cudaDataType_t data_type;
  cublasComputeType_t compute_type;
  // alpha = 1, beta = 0 in the compute type's scalar type (double for float64, else float).
  const float one_f = 1.0f, zero_f = 0.0f;
  const double one_d = 1.0, zero_d = 0.0;
  const void* alpha = &one_f;
  const void* beta = &zero_f;
  switch (dtype) {
    case DType::Float32:
      data_type = CUDA_R_32F;
      compute_type =
          leangrad::cuda::allow_tf32() ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
      break;
    case DType::Float64:
      data_type = CUDA_R_64F;
      compute_type = CUBLAS_COMPUTE_64F;
      alpha = &one_d;
      beta = &zero_d;
      break;
    case DType::Float16:
      data_type = CUDA_R_16F;
      compute_type = CUBLAS_COMPUTE_32F;
      break;
    case DType::BFloat16:
      data_type = CUDA_R_16BF;
      compute_type = CUBLAS_COMPUTE_32F;
      break;
    default:
      LG_THROW(DTypeError, "matmul (cuda kernel): expected a floating dtype, got ", dtype);
  }

  const int m = checked_int(g.m, "size");
  const int n = checked_int(g.n, "size");
  const int k = checked_int(g.k, "size");
  const int batch = checked_int(g.batch, "batch size");
  const CublasOperand first = cublas_operand(g.b);   // b^T (n, k)
  const CublasOperand second = cublas_operand(g.a);  // a^T (k, m)
  const leangrad::cuda::Stream stream = leangrad::cuda::current_stream();
  const int device = leangrad::cuda::current_device();

  std::lock_guard<std::mutex> lock(handles_mutex());
  cublasHandle_t handle = handle_for_device(device);
  const DataPtr& workspace = workspace_for(device, stream);
  LG_CUBLAS_CHECK(cublasSetStream(handle, static_cast<cudaStream_t>(stream.handle())));
  LG_CUBLAS_CHECK(cublasSetWorkspace(handle, workspace.get(), workspace_bytes(device)));
  LG_CUBLAS_CHECK(cublasGemmStridedBatchedEx(
      handle, first.op, second.op, n, m, k, alpha, g.b.data, data_type, first.ld,
      static_cast<long long>(g.b.batch_stride), g.a.data, data_type, second.ld,
      static_cast<long long>(g.a.batch_stride), beta, out, data_type, n,
      static_cast<long long>(g.m) * g.n, batch, compute_type, CUBLAS_GEMM_DEFAULT));
}

}  // namespace leangrad::kernels::cuda
