// oneDNN's sgemm behind kernels/cpu/gemm.h (built with LEANGRAD_WITH_ONEDNN; Debian's
// libdnnl-dev). dnnl_sgemm takes row-major operands as gemm.h does, generates its kernels for the
// running CPU at the first call of each shape class, and threads with OpenMP (the same libgomp as
// leangrad's kernels), following the calling thread's default, which gemm() sets from
// set_num_threads; inside a parallel region it runs on the calling thread.
#include <leangrad/kernels/cpu/gemm.h>

#include <oneapi/dnnl/dnnl.h>
#include <oneapi/dnnl/dnnl_debug.h>

#include <leangrad/core/error.h>

namespace leangrad::kernels::cpu::onednn {

bool built() {
  return true;
}

std::string version() {
  const dnnl_version_t* v = dnnl_version();
  return std::to_string(v->major) + "." + std::to_string(v->minor) + "." + std::to_string(v->patch);
}

void sgemm(bool trans_a, bool trans_b, std::int64_t m, std::int64_t n, std::int64_t k, float alpha,
           const float* a, std::int64_t lda, const float* b, std::int64_t ldb, float beta, float* c,
           std::int64_t ldc) {
  const dnnl_status_t status = dnnl_sgemm(trans_a ? 'T' : 'N', trans_b ? 'T' : 'N', m, n, k, alpha,
                                          a, lda, b, ldb, beta, c, ldc);
  if (status != dnnl_success) {
    LG_THROW(Error, "gemm (cpu kernel, oneDNN ", version(), " sgemm): m=", m, " n=", n, " k=", k,
             " lda=", lda, " ldb=", ldb, " ldc=", ldc, " trans_a=", trans_a, " trans_b=", trans_b,
             " failed: ", dnnl_status2str(status));
  }
}

}  // namespace leangrad::kernels::cpu::onednn
