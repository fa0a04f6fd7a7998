// TanhExp's CPU launchers (kernels/backend.h, "TanhExp"): one vectorised, threaded pass each way.
// The second CPU kernel beside the reference loops of kernels/cpu/tanhexp.cpp, which stay the
// specification: tests/kernels/test_tanhexp_vectorized.cpp checks these against them.
//
// Note [Vectorised TanhExp]
//   - The formulas are those of kernels/tanhexp_math.h (Note [Stable TanhExp]) with
//     PolynomialExpMath: e^x from kernels/cpu/exp_polynomial.h (Note [Polynomial exp], within
//     1.02 ulps) instead of the library's expf, whose call per element kept the reference loop
//     scalar. Everything else in the formulas is already branch-free (the Taylor branch is a
//     select), so under `#pragma GCC ivdep` the compiler runs the whole element in SIMD lanes: 8
//     floats with AVX2 (the default x86-64-v3 build), 16 with AVX-512: on a CPU that has it, a
//     second copy of each loop compiled for it (Note [AVX-512 at run time] in
//     kernels/cpu/avx512.h), or the only one in a -march=native build there.
//   - Accuracy against a double-precision reference, every 97th float32 above -87
//     (test_tanhexp_vectorized.cpp): the reference loop's bound (5 ulps, test_tanhexp.cpp) plus
//     what the two exps' larger error can add. Each exp's relative error is at most
//     kExpPolynomialMaxUlps * 2^-23; f = x tanh(u) and tanh(u) through t = e^{-2u} have condition
//     numbers at most 1 in u and in t, so each adds at most that relative error to f, which is at
//     most 2 * 1.02 ulps of f (an ulp is between 2^-24 and 2^-23 of the value) per exp. f' is
//     measured on the scale |tanh(u)| + |x u sech^2(u)|, on which u's error counts at most twice
//     (d/du of x u sech^2(u) brings a factor |1 - 2u tanh(u)|, whose product with the term stays
//     below the scale) and t's once: 2 * 3 * 1.02 ulps. Hence f within 5 + 4.08 and f' within
//     5 + 6.12 ulps.
//   - float16 and bfloat16: blocks of kConvertBlock elements converted to float on the stack
//     (kernels/cpu/half_convert.h: F16C for float16, core/half.h's rounding bit for bit), the
//     float loop, one rounding back (as the reference computes them in float and rounds once).
//     float64 keeps the reference loop (the library's exp and expm1 in double).
//   - Threads: parallel_for over the elements, as the reference. Each element is computed by the
//     same IEEE operations whichever lane, vector width or thread it lands in (this file is
//     compiled with -ffp-contract=off; the fused multiply-adds are written out), so results do
//     not depend on the thread count or on where a range starts.
#include <algorithm>
#include <cstdint>
#include <type_traits>

#include <leangrad/kernels/backend.h>
#include <leangrad/kernels/cpu/avx512.h>
#include <leangrad/kernels/cpu/exp_polynomial.h>
#include <leangrad/kernels/cpu/half_convert.h>
#include <leangrad/kernels/cpu/parallel_for.h>
#include <leangrad/kernels/cpu/tanhexp_reference.h>
#include <leangrad/kernels/dispatch.h>
#include <leangrad/kernels/tanhexp_math.h>

namespace leangrad::kernels::cpu {

namespace {

// Elements converted to float at a time on the 16-bit path: 2 KiB per float buffer.
constexpr std::int64_t kConvertBlock = 512;

// The loops, written once; each copy below is vectorised for its own target (Note [AVX-512 at run
// time] in kernels/cpu/avx512.h).
[[gnu::always_inline]] inline void forward_loop(std::int64_t n, float* y, const float* x) {
#pragma GCC ivdep
  for (std::int64_t i = 0; i < n; ++i)
    y[i] = tanhexp_forward_math<float, PolynomialExpMath>(x[i]);
}

[[gnu::always_inline]] inline void backward_loop(std::int64_t n, float* dx, const float* dy,
                                                 const float* x) {
#pragma GCC ivdep
  for (std::int64_t i = 0; i < n; ++i)
    dx[i] = dy[i] * tanhexp_derivative_math<float, PolynomialExpMath>(x[i]);
}

#if LEANGRAD_AVX512_CLONES
LG_AVX512_TARGET void forward_avx512(std::int64_t n, float* y, const float* x) {
  forward_loop(n, y, x);
}

LG_AVX512_TARGET void backward_avx512(std::int64_t n, float* dx, const float* dy, const float* x) {
  backward_loop(n, dx, dy, x);
}
#endif

void forward_float(std::int64_t n, float* y, const float* x) {
#if LEANGRAD_AVX512_CLONES
  if (avx512_copies_enabled()) return forward_avx512(n, y, x);
#endif
  forward_loop(n, y, x);
}

void backward_float(std::int64_t n, float* dx, const float* dy, const float* x) {
#if LEANGRAD_AVX512_CLONES
  if (avx512_copies_enabled()) return backward_avx512(n, dx, dy, x);
#endif
  backward_loop(n, dx, dy, x);
}

}  // namespace

void tanhexp_forward(DType dtype, std::int64_t n, void* out, const void* x) {
  if (dtype == DType::Float64) return reference::tanhexp_forward(dtype, n, out, x);
  dispatch_floating(dtype, "tanhexp", [&]<typename T>() {
    if constexpr (!std::is_same_v<T, double>) {
      T* y = static_cast<T*>(out);
      const T* in = static_cast<const T*>(x);
      parallel_for(n, kElementwiseGrain, [&](std::int64_t begin, std::int64_t end) {
        if constexpr (std::is_same_v<T, float>) {
          forward_float(end - begin, y + begin, in + begin);
        } else {
          float buffer[kConvertBlock];
          for (std::int64_t b0 = begin; b0 < end; b0 += kConvertBlock) {
            const std::int64_t m = std::min(kConvertBlock, end - b0);
            widen(in + b0, buffer, m);
            forward_float(m, buffer, buffer);
            narrow(buffer, y + b0, m);
          }
        }
      });
    }
  });
}

void tanhexp_backward(DType dtype, std::int64_t n, void* grad_input, const void* grad_output,
                      const void* x) {
  if (dtype == DType::Float64)
    return reference::tanhexp_backward(dtype, n, grad_input, grad_output, x);
  dispatch_floating(dtype, "tanhexp_backward", [&]<typename T>() {
    if constexpr (!std::is_same_v<T, double>) {
      T* dx = static_cast<T*>(grad_input);
      const T* dy = static_cast<const T*>(grad_output);
      const T* in = static_cast<const T*>(x);
      parallel_for(n, kElementwiseGrain, [&](std::int64_t begin, std::int64_t end) {
        if constexpr (std::is_same_v<T, float>) {
          backward_float(end - begin, dx + begin, dy + begin, in + begin);
        } else {
          float grad[kConvertBlock];
          float value[kConvertBlock];
          for (std::int64_t b0 = begin; b0 < end; b0 += kConvertBlock) {
            const std::int64_t m = std::min(kConvertBlock, end - b0);
            widen(dy + b0, grad, m);
            widen(in + b0, value, m);
            backward_float(m, grad, grad, value);
            narrow(grad, dx + b0, m);
          }
        }
      });
    }
  });
}

}  // namespace leangrad::kernels::cpu
