// CPU launchers of the activations and their gradients (kernels/backend.h), elementwise over one
// tensor and two parameters: the one-rounding ones (each a float computation rounded once to the
// dtype) through their float math in lanes, the others through their element functors. The math
// is kernels/elementwise_math.h's, shared with CUDA. The other elementwise families:
// kernels/cpu/elementwise.cpp.
#include <leangrad/kernels/backend.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include <leangrad/kernels/cpu/elementwise_loops.h>
#include <leangrad/kernels/cpu/half_convert.h>
#include <leangrad/kernels/dispatch.h>
#include <leangrad/kernels/elementwise_math.h>

namespace leangrad::kernels::cpu {

namespace {

// Note [16-bit hardtanh and clamp in float lanes]
//   hardtanh and clamp give each element x's bits or a bound's (a NaN keeps its bits), chosen by
//   comparisons in float (HardtanhElement, ClampElement in kernels/elementwise_math.h). Over
//   float16 and bfloat16 the element functor's selects of 16-bit structs kept the plain loop
//   scalar, with core/half.h's conversion of each float16: hardtanh of 16M elements took 19 ms
//   in bfloat16 and 42 in float16 on one Zen 5 core, float32's 2.8; now 4.1 and 4.0
//   (bench/results/2026-12-07-cpu-bfloat16-avx512-zen5-2core.md). Here each chunk of kHalfChunk
//   elements is widened into float exactly (kernels/cpu/half_convert.h: a NaN's bits too), the
//   functor's comparisons are made there, and the output's bits are selected from the input's
//   and the bounds' as 16-bit integers, a loop GCC vectorises: the functor's result bit for bit
//   (ActivationKernels.SixteenBitBoundsGiveTheElementFunctorsBits). A chunk reads its input
//   before it writes, so the in-place hardtanh_ and clamp_ (output == input) read as before.

// The bounds of one call: compared in float, written as bits.
struct SixteenBitBounds {
  bool has_min;
  bool has_max;
  float min;
  float max;
  std::uint16_t min_bits;
  std::uint16_t max_bits;
};

template <typename T>
SixteenBitBounds bounds_of(const HardtanhElement<T>& e) {
  return {
      true,           true,          static_cast<float>(e.min_val), static_cast<float>(e.max_val),
      e.min_val.bits, e.max_val.bits};
}

template <typename T>
SixteenBitBounds bounds_of(const ClampElement<T>& e) {
  return {e.has_min, e.has_max, e.min_compared, e.max_compared, e.min_val.bits, e.max_val.bits};
}

// hardtanh: max where x >= max, then min where that <= min.
LG_ALWAYS_INLINE std::uint16_t hardtanh_bits(const SixteenBitBounds& b, float x,
                                             std::uint16_t bits) {
  const bool above = x >= b.max;
  const float upper = above ? b.max : x;
  const std::uint16_t upper_bits = above ? b.max_bits : bits;
  return upper <= b.min ? b.min_bits : upper_bits;
}

// clamp: min where x < min, then max where that > max; an absent bound compares false.
LG_ALWAYS_INLINE std::uint16_t clamp_bits(const SixteenBitBounds& b, float x, std::uint16_t bits) {
  const bool below = b.has_min && x < b.min;
  const float lower = below ? b.min : x;
  const std::uint16_t lower_bits = below ? b.min_bits : bits;
  return b.has_max && lower > b.max ? b.max_bits : lower_bits;
}

// The loop around both notes' math: each run of a 16-bit geometry in chunks of kHalfChunk
// elements, x gathered (a strided input read at its stride), widened into float and its bits
// kept; body(scratch, m, widened, bits, result) writes the m results' bits (the four are distinct
// buffers: bodies take the pointers __restrict, or their selects stay branches), which go out at
// the output's stride. Scratch is the body's own buffers, one per run (so per thread). The chunk is
// read whole before it is written: an output that is its input (the in-place ops) is read as
// before.
template <typename Scratch, typename T, typename Body>
void sixteen_bit_chunks(const ElementwiseGeometry& g, T* out, const T* in, const Body& body) {
  static_assert(sizeof(T) == sizeof(std::uint16_t));
  for_each_run<2>(g, [&](auto, const std::int64_t* offset, const std::int64_t* stride,
                         std::int64_t n) LG_LAMBDA_ALWAYS_INLINE {
    Scratch scratch;
    T x[kHalfChunk];
    float widened[kHalfChunk];
    std::uint16_t bits[kHalfChunk];
    std::uint16_t result[kHalfChunk];
    for (std::int64_t c = 0; c < n; c += kHalfChunk) {
      const std::int64_t m = std::min(kHalfChunk, n - c);
      const auto bytes = static_cast<std::size_t>(m) * sizeof(T);
      const T* src = in + offset[1] + c * stride[1];
      if (stride[1] == 1) {
        // T is trivially copyable; its default member initialiser alone makes GCC call it
        // non-trivial, hence the casts to void*.
        std::memcpy(static_cast<void*>(x), src, bytes);
      } else {
        for (std::int64_t j = 0; j < m; ++j)
          x[j] = src[j * stride[1]];
      }
      widen(x, widened, m);
      std::memcpy(bits, static_cast<const void*>(x), bytes);
      body(scratch, m, widened, bits, result);
      T* dst = out + offset[0] + c * stride[0];
      if (stride[0] == 1) {
        std::memcpy(static_cast<void*>(dst), result, bytes);
      } else {
        for (std::int64_t j = 0; j < m; ++j)
          dst[j * stride[0]] = T::from_bits(result[j]);
      }
    }
  });
}

struct NoScratch {};

template <bool kHardtanh, typename T>
void bounded_16bit_loop(const ElementwiseGeometry& g, const SixteenBitBounds& bounds, T* out,
                        const T* in) {
  sixteen_bit_chunks<NoScratch>(
      g, out, in,
      [&bounds](NoScratch&, std::int64_t m, const float* __restrict widened,
                const std::uint16_t* __restrict bits, std::uint16_t* __restrict result)
          LG_LAMBDA_ALWAYS_INLINE {
            const SixteenBitBounds b = bounds;
            for (std::int64_t j = 0; j < m; ++j)
              result[j] = kHardtanh ? hardtanh_bits(b, widened[j], bits[j])
                                    : clamp_bits(b, widened[j], bits[j]);
          });
}

// Note [float16 elu in float lanes]
//   elu (and selu, elu with a scale) of float16 rounds to float16 between its steps, as PyTorch's
//   composition does (EluElement: expm1 rounded, times alpha rounded, times scale rounded), so it
//   kept the plain loop with core/half.h's conversions: 25.6 ms for 4M elements on one Zen 5
//   core, selu 47.0, float32's 0.8. Here a chunk is widened into float (F16C), each step runs in
//   float lanes over the chunk, and each rounding is a narrowing to float16 and a widening back
//   (kernels/cpu/half_convert.h: core/half.h's bits, NaN's included); x's own bits are kept where
//   x > 0. So every element gets EluElement's bits
//   (ActivationKernels.Float16EluGivesTheElementFunctorsBits). bfloat16 keeps the plain loop,
//   whose conversions GCC vectorises.
void elu_half_loop(const ElementwiseGeometry& g, const EluElement<Half>& element, Half* out,
                   const Half* in) {
  // A step's results in float, and rounded to float16.
  struct Scratch {
    float work[kHalfChunk];
    Half rounded[kHalfChunk];
  };
  const float alpha = element.alpha;
  const float scale = element.scale;
  sixteen_bit_chunks<Scratch>(
      g, out, in,
      [alpha, scale](Scratch& s, std::int64_t m, const float* __restrict widened,
                     const std::uint16_t* __restrict bits, std::uint16_t* __restrict result)
          LG_LAMBDA_ALWAYS_INLINE {
            const auto bytes = static_cast<std::size_t>(m) * sizeof(Half);
            for (std::int64_t j = 0; j < m; ++j)
              s.work[j] = unary_op_apply<UnaryOp::Expm1>(widened[j]);
            narrow(s.work, s.rounded, m);  // expm1(x) rounded to float16
            widen(s.rounded, s.work, m);
            for (std::int64_t j = 0; j < m; ++j)
              s.work[j] *= alpha;
            narrow(s.work, s.rounded, m);  // times alpha, rounded
            std::memcpy(result, static_cast<const void*>(s.rounded), bytes);
            for (std::int64_t j = 0; j < m; ++j) {
              const std::uint16_t x_bits = bits[j], elu_bits = result[j];  // both read: a select
              result[j] = widened[j] > 0.0f ? x_bits : elu_bits;
            }
            if (scale != 1.0f) {
              std::memcpy(static_cast<void*>(s.rounded), result, bytes);
              widen(s.rounded, s.work, m);
              for (std::int64_t j = 0; j < m; ++j)
                s.work[j] *= scale;
              narrow(s.work, s.rounded, m);  // times scale, rounded
              std::memcpy(result, static_cast<const void*>(s.rounded), bytes);
            }
          });
}

}  // namespace

void activation(ActivationOp op, DType dtype, const ElementwiseGeometry& g, void* out,
                const void* a, double p0, double p1) {
  if (is_one_rounding_activation(op)) {
    with_one_rounding_activation(op, [&]<ActivationOp kOp>() {
      dispatch_floating(dtype, op_name(op), [&]<typename T>() {
        const OneRoundingActivationElement<kOp, T> element{make_activation_params<T>(op, p0, p1)};
        elementwise_loop_as<T>(
            g, element, [element](float x) LG_LAMBDA_ALWAYS_INLINE { return element.math(x); },
            static_cast<T*>(out), static_cast<const T*>(a));
      });
    });
    return;
  }
  const auto run = [&]<typename T>() {
    with_activation_element<T>(op, p0, p1, [&](const auto& element) {
      using Element = std::decay_t<decltype(element)>;
      constexpr bool kSixteenBit = std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>;
      if constexpr (kSixteenBit && (std::is_same_v<Element, HardtanhElement<T>> ||
                                    std::is_same_v<Element, ClampElement<T>>)) {
        // Note [16-bit hardtanh and clamp in float lanes]
        bounded_16bit_loop<std::is_same_v<Element, HardtanhElement<T>>>(
            g, bounds_of(element), static_cast<T*>(out), static_cast<const T*>(a));
      } else if constexpr (std::is_same_v<Element, EluElement<Half>>) {
        // Note [float16 elu in float lanes]
        elu_half_loop(g, element, static_cast<Half*>(out), static_cast<const Half*>(a));
      } else if constexpr (std::is_same_v<Element, LeakyReluElement<Half>>) {
        // x where x > 0 is Half(float(x)): the same bits as the element's select of x.
        const float slope = element.negative_slope;
        half_loop(
            g, [slope](float m) { return m > 0.0f ? m : m * slope; }, static_cast<Half*>(out),
            static_cast<const Half*>(a));
      } else {
        elementwise_loop(g, element, static_cast<T*>(out), static_cast<const T*>(a));
      }
    });
  };
  if (op == ActivationOp::Clamp) {
    dispatch_numeric(dtype, op_name(op), run);  // clamp_ takes integers too
  } else {
    dispatch_floating(dtype, op_name(op), run);
  }
}

void activation_backward(ActivationOp op, DType dtype, const ElementwiseGeometry& g,
                         void* grad_input, const void* grad_output, const void* x, double p0,
                         double p1) {
  with_activation_gradient(op, [&]<ActivationOp kOp>() {
    dispatch_floating(dtype, op_name(op), [&]<typename T>() {
      const ActivationBackwardElement<kOp, T> element{make_activation_params<T>(op, p0, p1)};
      elementwise_loop_as<T>(
          g, element,
          [element](float dy, float v) LG_LAMBDA_ALWAYS_INLINE { return element.math(dy, v); },
          static_cast<T*>(grad_input), static_cast<const T*>(grad_output),
          static_cast<const T*>(x));
    });
  });
}

}  // namespace leangrad::kernels::cpu
