// AVX-512 chosen at run time for loops the compiler vectorises: the default build is x86-64-v3
// (AVX2), and a kernel whose loop runs the same IEEE operations in every lane is compiled a second
// time for AVX-512 and takes that copy where the CPU has it.
//
// Note [AVX-512 at run time]
//   One binary runs on every machine leangrad targets (x86-64-v3), but most servers it runs on
//   have AVX-512: twice the lanes per instruction, which a compute-bound loop (TanhExp's two exps
//   and division per element) turns into up to twice the speed on a core with full-width units
//   (Zen 5, Intel's server cores; Zen 4 runs 512-bit operations in two halves). A kernel's loop
//   body is written once, as an inline function; a plain function and one marked
//   LG_AVX512_TARGET each contain a copy of it, and the compiler vectorises each copy for its own
//   target. The kernel calls the AVX-512 copy only when avx512_copies_enabled(), so no AVX-512
//   instruction reaches a CPU without it. Both copies compute each element with the same IEEE
//   operations (the files using this are compiled with -ffp-contract=off and write their fused
//   multiply-adds out), so they give the same bits: the tests run both and compare.
//   A build for a machine that has AVX-512 already (-march=native there) has one copy: its plain
//   loop is the AVX-512 one (LEANGRAD_AVX512_CLONES is 0).
//   The copies: TanhExp's loops (kernels/cpu/tanhexp_vectorized.cpp), the normal sampler's
//   Box-Muller (kernels/cpu/random.cpp), and the elementwise ops' contiguous loops and
//   range-limited lanes (Note [AVX-512 elementwise loops] in kernels/cpu/elementwise_loops.h).
#pragma once

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__)) && !defined(__AVX512F__)
#define LEANGRAD_AVX512_CLONES 1
#if defined(__clang__)
// x86-64-v4's extensions (Clang 14 takes no prefer-vector-width in the attribute).
#define LG_AVX512_TARGET __attribute__((target("avx512f,avx512bw,avx512cd,avx512dq,avx512vl")))
#else
// x86-64-v4's extensions, and 512-bit vectors preferred (some tunings default to 256).
#define LG_AVX512_TARGET \
  __attribute__((target("avx512f,avx512bw,avx512cd,avx512dq,avx512vl,prefer-vector-width=512")))
#endif
#else
#define LEANGRAD_AVX512_CLONES 0
#endif

namespace leangrad::kernels::cpu {

// True when the kernels take their AVX-512 copies: this build has them (LEANGRAD_AVX512_CLONES),
// the CPU it runs on has AVX-512 F, BW, CD, DQ and VL (asked once), and set_avx512_copies_allowed
// has not said false.
bool avx512_copies_enabled();

// For tests and benchmarks: false makes avx512_copies_enabled() false (the kernels then run their
// x86-64-v3 loops, as on a CPU without AVX-512); true gives the CPU's answer back.
void set_avx512_copies_allowed(bool allowed);

}  // namespace leangrad::kernels::cpu
