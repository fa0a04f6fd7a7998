// NCCL, loaded at its first call: the forwarding definitions of the NCCL functions the NCCL
// process group calls (distributed/nccl/process_group_nccl.cpp). Note [Lazily loaded CUDA
// libraries] in kernels/cuda/cublas_lazy.cpp says why and how.
#include <nccl.h>

#include <string>

#include <leangrad/core/cuda/lazy_libraries.h>
#include <leangrad/core/error.h>
#include <leangrad/core/shared_library.h>

// The file this build found, tried after the versioned name (CMakeLists.txt).
#ifndef LEANGRAD_NCCL_BUILD_PATH
#define LEANGRAD_NCCL_BUILD_PATH ""
#endif

namespace {

leangrad::detail::SharedLibrary& nccl() {
  static leangrad::detail::SharedLibrary library(
      "NCCL (the nccl process group)",
      leangrad::detail::library_files("libnccl.so." + std::to_string(NCCL_MAJOR),
                                      LEANGRAD_NCCL_BUILD_PATH));
  return library;
}

}  // namespace

extern "C" {

// ---- Communicators --------------------------------------------------------------------------
ncclResult_t ncclGetVersion(int* version) {
  return LG_REAL_FUNCTION(nccl(), ncclGetVersion)(version);
}
ncclResult_t ncclGetUniqueId(ncclUniqueId* id) {
  return LG_REAL_FUNCTION(nccl(), ncclGetUniqueId)(id);
}
ncclResult_t ncclCommInitRankConfig(ncclComm_t* comm, int nranks, ncclUniqueId id, int rank,
                                    ncclConfig_t* config) {
  return LG_REAL_FUNCTION(nccl(), ncclCommInitRankConfig)(comm, nranks, id, rank, config);
}
ncclResult_t ncclCommFinalize(ncclComm_t comm) {
  return LG_REAL_FUNCTION(nccl(), ncclCommFinalize)(comm);
}
ncclResult_t ncclCommDestroy(ncclComm_t comm) {
  return LG_REAL_FUNCTION(nccl(), ncclCommDestroy)(comm);
}
ncclResult_t ncclCommAbort(ncclComm_t comm) {
  return LG_REAL_FUNCTION(nccl(), ncclCommAbort)(comm);
}
ncclResult_t ncclCommGetAsyncError(ncclComm_t comm, ncclResult_t* async_error) {
  return LG_REAL_FUNCTION(nccl(), ncclCommGetAsyncError)(comm, async_error);
}
const char* ncclGetErrorString(ncclResult_t result) {
  return LG_REAL_FUNCTION(nccl(), ncclGetErrorString)(result);
}
const char* ncclGetLastError(ncclComm_t comm) {
  return LG_REAL_FUNCTION(nccl(), ncclGetLastError)(comm);
}

// ---- Collectives ----------------------------------------------------------------------------
ncclResult_t ncclAllReduce(const void* send, void* recv, size_t count, ncclDataType_t dtype,
                           ncclRedOp_t op, ncclComm_t comm, cudaStream_t stream) {
  return LG_REAL_FUNCTION(nccl(), ncclAllReduce)(send, recv, count, dtype, op, comm, stream);
}
ncclResult_t ncclBroadcast(const void* send, void* recv, size_t count, ncclDataType_t dtype,
                           int root, ncclComm_t comm, cudaStream_t stream) {
  return LG_REAL_FUNCTION(nccl(), ncclBroadcast)(send, recv, count, dtype, root, comm, stream);
}
ncclResult_t ncclAllGather(const void* send, void* recv, size_t send_count, ncclDataType_t dtype,
                           ncclComm_t comm, cudaStream_t stream) {
  return LG_REAL_FUNCTION(nccl(), ncclAllGather)(send, recv, send_count, dtype, comm, stream);
}
ncclResult_t ncclReduceScatter(const void* send, void* recv, size_t recv_count,
                               ncclDataType_t dtype, ncclRedOp_t op, ncclComm_t comm,
                               cudaStream_t stream) {
  return LG_REAL_FUNCTION(nccl(), ncclReduceScatter)(send, recv, recv_count, dtype, op, comm,
                                                     stream);
}

}  // extern "C"

namespace leangrad::detail {

cuda::LibraryStatus nccl_status() {
  // Every function defined above: a name the library lacks shows here, without a GPU.
  return probe_library(
      "NCCL", nccl(),
      {"ncclGetVersion", "ncclGetUniqueId", "ncclCommInitRankConfig", "ncclCommFinalize",
       "ncclCommDestroy", "ncclCommAbort", "ncclCommGetAsyncError", "ncclGetErrorString",
       "ncclGetLastError", "ncclAllReduce", "ncclBroadcast", "ncclAllGather", "ncclReduceScatter"},
      [] {
        // NCCL >= 2.9 numbers its versions major * 10000 + minor * 100 + patch.
        int v = 0;
        LG_CHECK(ncclGetVersion(&v) == ncclSuccess, "ncclGetVersion failed");
        return std::array<int, 3>{v / 10000, v / 100 % 100, v % 100};
      });
}

}  // namespace leangrad::detail
