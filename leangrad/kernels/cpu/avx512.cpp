#include <leangrad/kernels/cpu/avx512.h>

#include <atomic>

namespace leangrad::kernels::cpu {

namespace {

// set_avx512_copies_allowed's switch, on by default.
std::atomic<bool>& avx512_allowed() {
  static std::atomic<bool> allowed{true};
  return allowed;
}

}  // namespace

bool avx512_copies_enabled() {
#if LEANGRAD_AVX512_CLONES
  static const bool cpu_has_it = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
           __builtin_cpu_supports("avx512cd") && __builtin_cpu_supports("avx512dq") &&
           __builtin_cpu_supports("avx512vl");
  }();
  return cpu_has_it && avx512_allowed().load(std::memory_order_relaxed);
#else
  return false;
#endif
}

void set_avx512_copies_allowed(bool allowed) {
  avx512_allowed().store(allowed);
}

}  // namespace leangrad::kernels::cpu
