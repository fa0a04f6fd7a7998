// Stand-ins for kernels/onednn/ in a build without oneDNN (LEANGRAD_WITH_ONEDNN=OFF): every CPU
// matrix product then runs on Eigen, and asking for oneDNN throws (ops::set_cpu_gemm_backend
// refuses it before any product is tried).
#include <leangrad/kernels/cpu/gemm.h>

#include <leangrad/core/error.h>

namespace leangrad::kernels::cpu::onednn {

bool built() {
  return false;
}

std::string version() {
  return "";
}

namespace {

[[noreturn]] void throw_not_built() {
  LG_THROW(Error,
           "gemm (cpu kernel): leangrad was built without oneDNN (LEANGRAD_WITH_ONEDNN=OFF); "
           "install libdnnl-dev (tools/bootstrap.sh does) and configure again");
}

}  // namespace

void sgemm(bool, bool, std::int64_t, std::int64_t, std::int64_t, float, const float*, std::int64_t,
           const float*, std::int64_t, float, float*, std::int64_t) {
  throw_not_built();
}

void sgemm_b_transposed_first(bool, std::int64_t, std::int64_t, std::int64_t, float, const float*,
                              std::int64_t, const float*, std::int64_t, float, float*, std::int64_t,
                              std::int64_t) {
  throw_not_built();
}

}  // namespace leangrad::kernels::cpu::onednn
