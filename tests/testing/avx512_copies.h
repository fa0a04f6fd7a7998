// Avx512Copies: whether the CPU kernels take their AVX-512 copies (Note [AVX-512 at run time] in
// kernels/cpu/avx512.h), set for one scope and allowed again after (the library's default); for
// the tests that run a kernel with and without them and compare the bits.
#pragma once

#include <leangrad/kernels/cpu/avx512.h>

namespace leangrad {

class Avx512Copies {
 public:
  explicit Avx512Copies(bool allowed) { kernels::cpu::set_avx512_copies_allowed(allowed); }
  ~Avx512Copies() { kernels::cpu::set_avx512_copies_allowed(true); }
  Avx512Copies(const Avx512Copies&) = delete;
  Avx512Copies& operator=(const Avx512Copies&) = delete;

  // Whether there are copies to compare with: this build has them and this CPU has AVX-512.
  static bool exist() {
    kernels::cpu::set_avx512_copies_allowed(true);
    return kernels::cpu::avx512_copies_enabled();
  }
};

}  // namespace leangrad
