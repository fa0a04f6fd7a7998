// The creation functions that fill: constants, ranges and random numbers, run by kernels on the
// tensor's device. All take a shape and TensorOptions (dtype float32 on the CPU by default), as in
// LibTorch. empty(), from_blob() and tensor() are in core/creation.h, included here.
#pragma once

#include <cstdint>

#include <leangrad/core/creation.h>

namespace leangrad {

Tensor zeros(const Shape& shape, const TensorOptions& options = {});
Tensor ones(const Shape& shape, const TensorOptions& options = {});
Tensor full(const Shape& shape, double value, const TensorOptions& options = {});
// The *_like functions take t's shape, and t's dtype and device unless options set them (the
// fields options set override t's, TensorOptions::merge_in), as LibTorch's.
Tensor zeros_like(const Tensor& t, const TensorOptions& options = {});
Tensor ones_like(const Tensor& t, const TensorOptions& options = {});
Tensor full_like(const Tensor& t, double value, const TensorOptions& options = {});

// [start, end) in steps of `step` (the dtype comes from options: float32 by default; pass kInt64
// for integer ranges). Throws Error for step 0 or a step that moves away from end. An integral
// dtype truncates start, end and step to integers first, as PyTorch (Note [arange of an integral
// dtype] in kernels/creation.cpp).
Tensor arange(double end, const TensorOptions& options = {});
Tensor arange(double start, double end, double step = 1.0, const TensorOptions& options = {});
// `steps` values from start to end, both included, evenly spaced: computed in double (PyTorch's
// two-sided formula, start + i * step for the first half and end - (steps - 1 - i) * step for
// the second, so both ends are exact) and rounded once to the dtype.
Tensor linspace(double start, double end, std::int64_t steps, const TensorOptions& options = {});
// base^v for linspace's values v, computed in double and rounded once, as torch.logspace.
Tensor logspace(double start, double end, std::int64_t steps, double base = 10.0,
                const TensorOptions& options = {});
// The signal windows of torch.hann_window, hamming_window, blackman_window, bartlett_window and
// kaiser_window, window_length values computed in double and rounded once (PyTorch computes in
// the dtype): for the symmetric window (periodic false) of N = window_length, w[n] at
// x = 2 pi n / (N - 1) is
//   hann      0.5 - 0.5 cos x                   hamming   alpha - beta cos x
//   blackman  0.42 - 0.5 cos x + 0.08 cos 2x    bartlett  1 - |2 n / (N - 1) - 1|
//   kaiser    I0(beta sqrt(1 - (2 n / (N - 1) - 1)^2)) / I0(beta);
// periodic (the default) gives the first N of the symmetric window of N + 1, and a length of 1
// gives (1). Floating dtypes. Each also takes (window_length, options), and hamming and kaiser
// (window_length, periodic, options), as LibTorch's.
Tensor hann_window(std::int64_t window_length, bool periodic = true,
                   const TensorOptions& options = {});
Tensor hann_window(std::int64_t window_length, const TensorOptions& options);
Tensor hamming_window(std::int64_t window_length, bool periodic = true, double alpha = 0.54,
                      double beta = 0.46, const TensorOptions& options = {});
Tensor hamming_window(std::int64_t window_length, const TensorOptions& options);
Tensor hamming_window(std::int64_t window_length, bool periodic, const TensorOptions& options);
Tensor blackman_window(std::int64_t window_length, bool periodic = true,
                       const TensorOptions& options = {});
Tensor blackman_window(std::int64_t window_length, const TensorOptions& options);
Tensor bartlett_window(std::int64_t window_length, bool periodic = true,
                       const TensorOptions& options = {});
Tensor bartlett_window(std::int64_t window_length, const TensorOptions& options);
Tensor kaiser_window(std::int64_t window_length, bool periodic = true, double beta = 12.0,
                     const TensorOptions& options = {});
Tensor kaiser_window(std::int64_t window_length, const TensorOptions& options);
Tensor kaiser_window(std::int64_t window_length, bool periodic, const TensorOptions& options);
// A 0-d tensor holding value, as torch.scalar_tensor (full({}, value, options)).
Tensor scalar_tensor(double value, const TensorOptions& options = {});
// The n x m identity (m = n by default): ones on the diagonal.
Tensor eye(std::int64_t n, const TensorOptions& options = {});
Tensor eye(std::int64_t n, std::int64_t m, const TensorOptions& options = {});

// U[0, 1) and N(0, 1) from the device's default Philox generator (see manual_seed). Floating
// dtypes only. The same seed gives the same numbers on the CPU and on CUDA.
Tensor rand(const Shape& shape, const TensorOptions& options = {});
Tensor randn(const Shape& shape, const TensorOptions& options = {});
Tensor rand_like(const Tensor& t, const TensorOptions& options = {});
Tensor randn_like(const Tensor& t, const TensorOptions& options = {});
// Integers uniform in [low, high) (high - low at most 2^53), in options' dtype: float32 unless
// given, as LibTorch's C++ randint (write TensorOptions(kInt64) for integers).
Tensor randint(std::int64_t low, std::int64_t high, const Shape& shape,
               const TensorOptions& options = {});
Tensor randint(std::int64_t high, const Shape& shape, const TensorOptions& options = {});
// randint in t's shape, dtype and device (unless options set them), as torch.randint_like.
Tensor randint_like(const Tensor& t, std::int64_t high, const TensorOptions& options = {});
Tensor randint_like(const Tensor& t, std::int64_t low, std::int64_t high,
                    const TensorOptions& options = {});
// A random permutation of 0 .. n - 1, int64 unless options say otherwise (any dtype that holds
// n - 1 exactly), as LibTorch's randperm: a Fisher-Yates shuffle on the host from n Philox
// counters of the device's default generator (core/permutation.h), copied to the device. Not
// torch.randperm's order for the same seed: the generators differ.
Tensor randperm(std::int64_t n, const TensorOptions& options = TensorOptions(kInt64));

}  // namespace leangrad
