// CPU launchers of the elementwise kernels (kernels/backend.h): the reference implementations the
// CUDA kernels are tested against. The per-element math is shared with CUDA through
// kernels/elementwise_math.h; each launcher picks its op's loop (kernels/cpu/
// elementwise_loops.h). This file holds the unary ops, where, cast and fill; the other families
// have files of their own, so that two cores compile them side by side (one file of them all took
// 237 s at -O3): the binary ops (elementwise_binary.cpp), the activations and their gradients
// (elementwise_activation.cpp), the comparisons (elementwise_compare.cpp), and the range-limited
// ops, sin, cos and tan of float and the special functions (elementwise_range_limited.cpp).
#include <leangrad/kernels/backend.h>

#include <algorithm>
#include <cstdint>
#include <type_traits>

#include <leangrad/kernels/cpu/elementwise_loops.h>
#include <leangrad/kernels/cpu/elementwise_range_limited.h>
#include <leangrad/kernels/cpu/float_to_int.h>
#include <leangrad/kernels/cpu/half_convert.h>
#include <leangrad/kernels/cpu/parallel_for.h>
#include <leangrad/kernels/cpu/transpose_copy.h>
#include <leangrad/kernels/dispatch.h>
#include <leangrad/kernels/elementwise_math.h>
#include <leangrad/kernels/op_dispatch.h>

namespace leangrad::kernels::cpu {
void unary(UnaryOp op, DType dtype, const ElementwiseGeometry& g, void* out, const void* a) {
  with_op(op, [&]<UnaryOp kOp>() {
    auto run = [&]<typename T>() {
      if constexpr (is_range_limited<kOp, T>()) {
        range_limited_unary(kOp, dtype, g, out, a);
        return;
      }
      // Always inlined, as the math below them (LG_ALWAYS_INLINE in core/macros.h): erf of
      // float stayed a call per element here, so its loop stayed scalar.
      elementwise_loop_as<T>(
          g, [](T x) LG_LAMBDA_ALWAYS_INLINE { return unary_element<kOp>(x); },
          [](auto x) LG_LAMBDA_ALWAYS_INLINE { return unary_op_apply<kOp>(x); },
          static_cast<T*>(out), static_cast<const T*>(a));
    };
    if constexpr (is_floating_only(kOp)) {
      dispatch_floating(dtype, op_name(op), run);
    } else {
      dispatch_numeric(dtype, op_name(op), run);
    }
  });
}

// A select copies one operand's bits, so it runs on the unsigned integer of the element's width,
// with the condition's bytes read as uint8, and selects with a mask, not a branch: GCC 12 has no
// vector type for a load of bool (nor vectorises a copy of Half's struct), and a loop over them
// stayed scalar with a branch per element, mispredicted half the time on a random mask (where of
// 16M float32 elements took 102 ms, an add 14); a strided loop (an operand broadcast from a 0-d
// tensor, as clamp's and relu's backward's) stays scalar, and the mask keeps it free of branches
// there too. A bool holds 0 or 1, so 0 - c is all ones exactly where c is true.
void where(DType dtype, const ElementwiseGeometry& g, void* out, const bool* cond, const void* a,
           const void* b) {
  const auto run = [&]<typename U>() {
    elementwise_loop(
        g,
        [](std::uint8_t c, U x, U y) {
          const U take_x = static_cast<U>(U{0} - static_cast<U>(c));
          return static_cast<U>(y ^ ((x ^ y) & take_x));
        },
        static_cast<U*>(out), reinterpret_cast<const std::uint8_t*>(cond), static_cast<const U*>(a),
        static_cast<const U*>(b));
  };
  switch (element_size(dtype)) {
    case 1:
      return run.template operator()<std::uint8_t>();
    case 2:
      return run.template operator()<std::uint16_t>();
    case 4:
      return run.template operator()<std::uint32_t>();
    case 8:
      return run.template operator()<std::uint64_t>();
  }
  LG_THROW(Error, "where: unsupported dtype ", dtype);
}

namespace {

// Note [16-bit casts in lanes]
//   float32 <-> float16/bfloat16 goes through kernels/cpu/half_convert.h's array conversions,
//   which run in vector lanes, where elementwise_loop converts one value at a time (GCC does not
//   vectorise core/half.h's float16 conversions). A run of the geometry whose two operands are
//   both contiguous is converted whole; any other run (a slice with a step, a broadcast row, a
//   copy_ into a strided view) a chunk of kHalfChunk values at a time, gathered at the input's
//   stride into a buffer and scattered at the output's (load_widened and store_narrowed of
//   elementwise_loops.h). Until session 71 only dense operands took the lanes: every other column
//   of a (2048, 4096) float32 took 19.8 ms to float16 on one thread where a dense (2048, 2048)
//   takes 0.35, and takes 1.3 (LibTorch 1.13: 2.3;
//   bench/results/2026-12-07-cpu-transposed-operands-zen5-2core.md). The same bits as
//   cast_value, tests/kernels/test_half_convert.cpp.
template <typename From, typename To>
void cast_in_lanes(const ElementwiseGeometry& g, To* out, const From* in) {
  for_each_run<2>(g, [&](auto, const std::int64_t* offset, const std::int64_t* stride,
                         std::int64_t n) LG_LAMBDA_ALWAYS_INLINE {
    const From* src = in + offset[1];
    To* dst = out + offset[0];
    if (stride[0] == 1 && stride[1] == 1) {
      if constexpr (std::is_same_v<From, float>)
        narrow(src, dst, n);
      else
        widen(src, dst, n);
      return;
    }
    float buffer[kHalfChunk];
    for (std::int64_t c = 0; c < n; c += kHalfChunk) {
      const std::int64_t m = std::min(kHalfChunk, n - c);
      const From* s = src + c * stride[1];
      To* d = dst + c * stride[0];
      if constexpr (std::is_same_v<From, float>) {
        for (std::int64_t j = 0; j < m; ++j)
          buffer[j] = s[j * stride[1]];
        store_narrowed(buffer, d, stride[0], m);
      } else if (stride[0] == 1) {
        load_widened(s, stride[1], m, d);
      } else {
        load_widened(s, stride[1], m, buffer);
        for (std::int64_t j = 0; j < m; ++j)
          d[j * stride[0]] = buffer[j];
      }
    }
  });
}

// float32 -> Int (int32, uint8) as cast_value converts: runs that step by 1 on both sides in
// blocks (float_to_int_run), other runs element by element.
template <typename Int>
void cast_float_to_int(const ElementwiseGeometry& g, Int* out, const float* in) {
  for_each_run<2>(g, [&](auto, const std::int64_t* offset, const std::int64_t* stride,
                         std::int64_t n) LG_LAMBDA_ALWAYS_INLINE {
    if (stride[0] == 1 && stride[1] == 1) {
      float_to_int_run(in + offset[1], out + offset[0], n);
      return;
    }
    for (std::int64_t j = 0; j < n; ++j)
      out[offset[0] + j * stride[0]] =
          static_cast<Int>(float_to_int32_wrapping(in[offset[1] + j * stride[1]]));
  });
}

// The casts that take cast_in_lanes; false for every other one.
bool cast_sixteen_bit(DType out_dtype, DType in_dtype, const ElementwiseGeometry& g, void* out,
                      const void* in) {
  const auto run = [&]<typename From, typename To>() {
    cast_in_lanes(g, static_cast<To*>(out), static_cast<const From*>(in));
    return true;
  };
  if (in_dtype == DType::Float32 && out_dtype == DType::Float16)
    return run.template operator()<float, Half>();
  if (in_dtype == DType::Float32 && out_dtype == DType::BFloat16)
    return run.template operator()<float, BFloat16>();
  if (in_dtype == DType::Float16 && out_dtype == DType::Float32)
    return run.template operator()<Half, float>();
  if (in_dtype == DType::BFloat16 && out_dtype == DType::Float32)
    return run.template operator()<BFloat16, float>();
  return false;
}

}  // namespace

void cast(DType out_dtype, DType in_dtype, const ElementwiseGeometry& g, void* out,
          const void* in) {
  if (cast_sixteen_bit(out_dtype, in_dtype, g, out, in)) return;  // Note [16-bit casts in lanes]
  if (in_dtype == DType::Float32 && out_dtype == DType::Int32) {  // Note [float to int32 in lanes]
    return cast_float_to_int(g, static_cast<std::int32_t*>(out), static_cast<const float*>(in));
  }
  if (in_dtype == DType::Float32 && out_dtype == DType::UInt8) {
    return cast_float_to_int(g, static_cast<std::uint8_t*>(out), static_cast<const float*>(in));
  }
  // Note [Tiled transposed copy]
  if (out_dtype == in_dtype && copy_transposed(g, element_size(out_dtype), out, in)) return;
  dispatch_all(out_dtype, "cast", [&]<typename To>() {
    dispatch_all(in_dtype, "cast", [&]<typename From>() {
      elementwise_loop(
          g, [](From x) { return cast_value<To>(x); }, static_cast<To*>(out),
          static_cast<const From*>(in));
    });
  });
}

void fill(DType dtype, const ElementwiseGeometry& g, void* out, double value) {
  dispatch_all(dtype, "fill", [&]<typename T>() {
    const T v = cast_value<T>(value);
    elementwise_loop(
        g, [v]() { return v; }, static_cast<T*>(out));
  });
}

}  // namespace leangrad::kernels::cpu
