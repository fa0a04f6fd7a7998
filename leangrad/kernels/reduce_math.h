// The math of the reductions, shared by the CPU and CUDA kernels: the
// accumulator and output types, the NaN-propagating max, and the (value, index) merge of argmax
// with first-index tie breaking. Kernels differ only in how they split the work; every merge goes
// through these functions, so the CPU tests exercise the rules the GPU follows.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include <leangrad/core/dtype.h>
#include <leangrad/core/error.h>
#include <leangrad/core/macros.h>

namespace leangrad::reduce_math {

// Sums accumulate in float for float32/16/bf16, double for float64, int64 for integers and bool.
template <typename T>
using sum_acc_t = std::conditional_t<std::is_integral_v<T>, std::int64_t, opmath_t<T>>;

// Max and argmax compare in float for the 16-bit floats and in int for bool/uint8 (CUDA shuffles
// need a 32-bit type), in T itself otherwise. The conversion is exact in every case.
template <typename T>
using max_acc_t =
    std::conditional_t<std::is_integral_v<T> && (sizeof(T) < 4), std::int32_t, opmath_t<T>>;

// Note [Running reductions of float32 in float64]
//   cumsum, cumprod and logcumsumexp carry float32's running value in float64 and round each
//   output from it once, as torch 1.13's CPU kernels do (at::acc_type<float, false> is double):
//   the j-th output is then within half an ulp of the float64 running value, where a float32
//   chain drifts by up to j ulps (cumsum of 2e7 ones stops at 2^24 = 16777216 in float32). CUDA
//   takes the same steps in the same type, so the two devices still give the same bits (torch's
//   CUDA kernels carry float32 in float32). The 16-bit floats run in float32, float64 in itself.
template <typename T>
using scan_acc_t = std::conditional_t<std::is_same_v<T, float>, double, opmath_t<T>>;

// The output dtype of a reduction: sums of integral/bool input give int64.
template <typename T>
using sum_out_t = std::conditional_t<std::is_integral_v<T>, std::int64_t, T>;

// a + b in a sum: integers wrap around (as PyTorch's) in unsigned arithmetic, where signed
// overflow would be undefined.
template <typename T>
LG_HOST_DEVICE T wrapping_add(T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(a) + static_cast<U>(b));
  } else {
    return a + b;
  }
}

// a * b in a product, wrapping around for integers as wrapping_add does.
template <typename T>
LG_HOST_DEVICE T wrapping_mul(T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(a) * static_cast<U>(b));
  } else {
    return a * b;
  }
}

// Runs f.template operator()<Out>() with Out the C++ type of the dtype a Sum or Mean of T writes:
// sum_out_t<T>, or float where a float16/bfloat16 input asks for float32 out_dtype (the unrounded
// partials of a reduction in stages, Note [Reducing separated dims in stages] in
// kernels/ops_reduce.cpp). Any other out_dtype is a DTypeError naming op.
template <typename T, typename F>
void dispatch_sum_out(DType out_dtype, const char* op, F&& f) {
  if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) {
    if (out_dtype == DType::Float32) {
      f.template operator()<float>();
      return;
    }
  }
  using Out = sum_out_t<T>;
  LG_CHECK_DTYPE(out_dtype == dtype_of<Out>, op, ": cannot write ", out_dtype, " from ",
                 dtype_of<T>, " input (expected ", dtype_of<Out>, ", or float32 from float16 or ",
                 "bfloat16)");
  f.template operator()<Out>();
}

template <typename Acc>
LG_HOST_DEVICE LG_INLINE bool is_nan(Acc x) {
  if constexpr (std::is_floating_point_v<Acc>) {
    return x != x;
  } else {
    return false;
  }
}

// The identity of max: -inf for floats (a real -inf ties with it, and ties keep the real element
// by index), the lowest value for integers.
template <typename Acc>
LG_HOST_DEVICE LG_INLINE Acc max_identity() {
  if constexpr (std::is_floating_point_v<Acc>) {
    return -std::numeric_limits<Acc>::infinity();
  } else {
    return std::numeric_limits<Acc>::lowest();
  }
}

// The identity of min, max_identity's mirror: +inf for floats, the highest value for integers.
template <typename Acc>
LG_HOST_DEVICE LG_INLINE Acc min_identity() {
  if constexpr (std::is_floating_point_v<Acc>) {
    return std::numeric_limits<Acc>::infinity();
  } else {
    return std::numeric_limits<Acc>::max();
  }
}

// max(a, b) where NaN wins (torch.max propagates NaN): b replaces a when b is NaN or greater
// (any compare with a NaN `a` is false, so a NaN a stays). One select, so loops stay
// branch-free; between equal values (+0 and -0) a, the earlier one, is kept.
template <typename Acc>
LG_HOST_DEVICE LG_INLINE Acc max_propagate_nan(Acc a, Acc b) {
  return is_nan(b) || b > a ? b : a;
}

// min(a, b) where NaN wins, the mirror of max_propagate_nan (torch.min propagates NaN too).
template <typename Acc>
LG_HOST_DEVICE LG_INLINE Acc min_propagate_nan(Acc a, Acc b) {
  return is_nan(b) || b < a ? b : a;
}

// A candidate for argmax: a value and the index it came from.
template <typename Acc>
struct ArgmaxPair {
  Acc value;
  std::int64_t index;
};

// "No element yet": loses to every real element (see max_identity).
template <typename Acc>
LG_HOST_DEVICE LG_INLINE ArgmaxPair<Acc> argmax_identity() {
  return {max_identity<Acc>(), std::numeric_limits<std::int64_t>::max()};
}

// The better of two candidates: NaN beats everything, then the larger value; between equal
// values (or two NaNs) the smaller index wins. Commutative and associative, so any merge order
// gives the first occurrence of the maximum.
template <typename Acc>
LG_HOST_DEVICE LG_INLINE ArgmaxPair<Acc> argmax_merge(ArgmaxPair<Acc> a, ArgmaxPair<Acc> b) {
  const bool a_nan = is_nan(a.value);
  const bool b_nan = is_nan(b.value);
  bool take_b;
  if (a_nan || b_nan) {
    take_b = b_nan && (!a_nan || b.index < a.index);
  } else {
    take_b = b.value > a.value || (b.value == a.value && b.index < a.index);
  }
  return take_b ? b : a;
}

// ---- Running reductions (the scans of kernels/cpu/scan.cpp and kernels/cuda/scan.cu) ----------

// log(exp(acc) + exp(x)), the step of logcumsumexp, as torch's: the larger of the two plus
// log1p(exp(smaller - larger)), so nothing overflows. A NaN x gives NaN (and so does every later
// step); two equal infinities give that infinity (-inf, -inf: nothing yet; +inf, +inf: +inf), where
// inf - inf would be NaN.
template <typename Acc>
LG_HOST_DEVICE LG_INLINE Acc log_add_exp(Acc acc, Acc x) {
  const bool x_nan = x != x;
  const Acc lo = x_nan ? x : (x < acc ? x : acc);
  const Acc hi = x_nan ? x : (x < acc ? acc : x);
  const bool lo_finite = lo - lo == Acc(0);  // inf - inf and NaN - NaN are NaN
  if (lo != hi || lo_finite) return std::log1p(std::exp(lo - hi)) + hi;
  return acc;
}

// Whether x, the next element of a cumulative maximum (is_max) or minimum, replaces the running
// best: a NaN always does, and nothing replaces a NaN best; otherwise x >= best (x <= best for
// the minimum), so that among equal values the later index is kept, as torch.cummax/cummin.
template <typename Acc>
LG_HOST_DEVICE LG_INLINE bool extremum_takes(Acc x, Acc best, bool is_max) {
  if (is_nan(x)) return true;
  if (is_nan(best)) return false;
  return is_max ? x >= best : x <= best;
}

}  // namespace leangrad::reduce_math
