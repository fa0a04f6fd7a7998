// The float16 elementwise ops of the CPU launcher (kernels/cpu/elementwise.cpp, Note
// [float16 elementwise in float lanes] in kernels/cpu/elementwise_loops.h), which widen their
// operands into float buffers, compute there and narrow once: bit for bit the element functions of
// kernels/elementwise_math.h (what every device computes per element: binary_element,
// unary_element, compare_element, the activation elements), on every float16 value, NaN payloads
// included. Every layout the launcher has a path for: contiguous (at offsets and lengths that leave
// vector tails), transposed (gathered), a broadcast row and column (stride 0 along a run or across
// runs), a scalar operand, and in place on a transposed view (a strided output). 65,536 elements
// split over the threads at the middle of a row.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <string>
#include <utility>

#include <leangrad/core/half.h>
#include <leangrad/kernels/creation.h>
#include <leangrad/kernels/elementwise_math.h>
#include <leangrad/kernels/ops.h>
#include "kernels/every_unary_op.h"

namespace leangrad {
namespace {

constexpr std::int64_t kSide = 256;  // kSide * kSide = every float16 value once
constexpr std::int64_t kCount = kSide * kSide;

constexpr std::array kBinaryOps = {BinaryOp::Add,     BinaryOp::Sub,  BinaryOp::Mul,
                                   BinaryOp::Div,     BinaryOp::Pow,  BinaryOp::Maximum,
                                   BinaryOp::Minimum, BinaryOp::Atan2};
constexpr std::array kCompareOps = {CompareOp::Gt, CompareOp::Lt, CompareOp::Ge,
                                    CompareOp::Le, CompareOp::Eq, CompareOp::Ne};

// The scalars of the scalar-operand cases: ordinary, negative, past float16's range, NaN.
constexpr double kScalars[] = {0.5, -3.0, 1e5, std::numeric_limits<double>::quiet_NaN()};

// Calls f(std::integral_constant<Op, op>) for every op of kOps, so the op is a template argument
// of the element function the test compares with.
template <const auto& kOps, typename F>
void for_each_op(F&& f) {
  using Op = typename std::remove_cvref_t<decltype(kOps)>::value_type;
  [&]<std::size_t... I>(std::index_sequence<I...>) {
    (f(std::integral_constant<Op, kOps[I]>{}), ...);
  }
  (std::make_index_sequence<kOps.size()>{});
}

// A contiguous (kSide, kSide) float16 tensor whose element i has the bits (i * step + shift) mod
// 2^16: with an odd step, every float16 value once (step 1, shift 0: in bit order).
Tensor every_half(std::uint32_t step = 1, std::uint32_t shift = 0) {
  Tensor t = zeros({kSide, kSide}, kFloat16);
  auto* p = static_cast<Half*>(t.data_ptr());
  for (std::int64_t i = 0; i < kCount; ++i)
    p[i] =
        Half::from_bits(static_cast<std::uint16_t>(static_cast<std::uint32_t>(i) * step + shift));
  return t;
}

Half half_at(const Tensor& t, std::int64_t i) {
  return static_cast<const Half*>(t.data_ptr())[i];
}

// Element (row, col) of a contiguous (kSide, kSide) tensor.
Half half_at(const Tensor& t, std::int64_t row, std::int64_t col) {
  return half_at(t, row * kSide + col);
}

std::string hex(unsigned bits) {
  char text[8];
  std::snprintf(text, sizeof text, "0x%04x", bits);
  return text;
}

// Success when got(i) and want(i) have the same bits for every i in [0, n); the failure names
// the count and the first mismatch. Got and want give Half or bool.
template <typename Got, typename Want>
::testing::AssertionResult same_bits(std::int64_t n, const Got& got, const Want& want) {
  std::int64_t mismatches = 0, first = -1;
  unsigned first_got = 0, first_want = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    const auto g = got(i);
    const auto w = want(i);
    unsigned gb, wb;
    if constexpr (std::is_same_v<decltype(g), const bool>) {
      gb = g, wb = w;
    } else {
      gb = g.bits, wb = w.bits;
    }
    if (gb != wb && mismatches++ == 0) first = i, first_got = gb, first_want = wb;
  }
  if (mismatches == 0) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << mismatches << " of " << n << " differ; first at " << first << ": got " << hex(first_got)
         << ", the element gives " << hex(first_want);
}

bool is_nan(Half h) {
  return (h.bits & 0x7fffu) > 0x7c00u;
}

// The element's result for operands x and y, where `got` may stand for it: an op on two NaNs
// returns one of them, and IEEE 754 leaves open which (x86 returns its first source's, and a
// compiler may swap a commutative op's operands), so there any NaN got is the element's.
Half either_nan(Half want, Half got, Half x, Half y) {
  return is_nan(x) && is_nan(y) && is_nan(got) ? got : want;
}

TEST(ElementwiseFloat16, EveryUnaryOpOnEveryValueIsTheElementFunction) {
  const Tensor a = every_half();
  // Every UnaryOp: tests/kernels/every_unary_op.h.
  for_each_op<test::kEveryUnaryOp>([&](auto op_constant) {
    constexpr UnaryOp kOp = decltype(op_constant)::value;
    SCOPED_TRACE(op_name(kOp));
    const auto element = [](Half x) { return kernels::unary_element<kOp>(x); };

    const Tensor out = ops::unary(kOp, a);
    EXPECT_TRUE(same_bits(
        kCount, [&](std::int64_t i) { return half_at(out, i); },
        [&](std::int64_t i) { return element(half_at(a, i)); }));

    const Tensor transposed = ops::unary(kOp, a.transpose(0, 1));  // gathered
    EXPECT_TRUE(same_bits(
        kCount, [&](std::int64_t i) { return half_at(transposed, i); },
        [&](std::int64_t i) { return element(half_at(a, i % kSide, i / kSide)); }));

    const Tensor in_place = every_half();  // every element once, through a strided output
    ops::unary_(kOp, in_place.transpose(0, 1));
    EXPECT_TRUE(same_bits(
        kCount, [&](std::int64_t i) { return half_at(in_place, i); },
        [&](std::int64_t i) { return element(half_at(a, i)); }));

    // Lengths and offsets that leave vector tails and a last chunk of 1 element.
    for (std::int64_t n : {1, 7, 9, 511, 513, 1025}) {
      SCOPED_TRACE("length " + std::to_string(n));
      const Tensor part = ops::unary(kOp, a.view({kCount}).slice(0, 3, 3 + n));
      EXPECT_TRUE(same_bits(
          n, [&](std::int64_t i) { return half_at(part, i); },
          [&](std::int64_t i) { return element(half_at(a, 3 + i)); }));
    }
  });
}

TEST(ElementwiseFloat16, EveryBinaryOpIsTheElementFunction) {
  const Tensor a = every_half();
  const Tensor b = every_half(40503, 12345);          // every value again, paired differently
  const Tensor row = b.slice(0, 7, 8).view({kSide});  // broadcast down the columns
  const Tensor column = b.slice(1, 5, 6);             // (kSide, 1): stride 0 along each run
  const auto a_at = [&](std::int64_t i) { return half_at(a, i); };
  const auto b_at = [&](std::int64_t i) { return half_at(b, i); };
  const auto a_transposed_at = [&](std::int64_t i) { return half_at(a, i % kSide, i / kSide); };
  for_each_op<kBinaryOps>([&](auto op_constant) {
    constexpr BinaryOp kOp = decltype(op_constant)::value;
    SCOPED_TRACE(op_name(kOp));
    // Element i of out against the element of the operands x_at(i) and y_at(i).
    const auto is_element = [](const Tensor& out, const auto& x_at, const auto& y_at) {
      return same_bits(
          kCount, [&](std::int64_t i) { return half_at(out, i); },
          [&](std::int64_t i) {
            const Half x = x_at(i), y = y_at(i);
            return either_nan(kernels::binary_element<kOp>(x, y), half_at(out, i), x, y);
          });
    };

    EXPECT_TRUE(is_element(ops::binary(kOp, a, b), a_at, b_at));
    EXPECT_TRUE(is_element(ops::binary(kOp, a.transpose(0, 1), b), a_transposed_at, b_at));
    EXPECT_TRUE(is_element(ops::binary(kOp, a, row), a_at,
                           [&](std::int64_t i) { return half_at(b, 7, i % kSide); }));
    EXPECT_TRUE(is_element(
        ops::binary(kOp, column, a), [&](std::int64_t i) { return half_at(b, i / kSide, 5); },
        a_at));
    const Tensor in_place = every_half();  // every element once, through a strided output
    ops::binary_(kOp, in_place.transpose(0, 1), b.transpose(0, 1));
    EXPECT_TRUE(is_element(in_place, a_at, b_at));

    for (double s : kScalars) {
      SCOPED_TRACE("scalar " + std::to_string(s));
      const float scalar = kernels::cast_value<float>(s);  // the op's math type, as binary's
      for (bool scalar_first : {false, true}) {
        const Tensor out = ops::binary(kOp, a, s, scalar_first);
        EXPECT_TRUE(same_bits(
            kCount, [&](std::int64_t i) { return half_at(out, i); },
            [&](std::int64_t i) {
              const float x = kernels::to_opmath(half_at(a, i));
              const Half want =
                  static_cast<Half>(scalar_first ? kernels::binary_op_apply<kOp>(scalar, x)
                                                 : kernels::binary_op_apply<kOp>(x, scalar));
              return either_nan(want, half_at(out, i), half_at(a, i), Half(scalar));
            }));
      }
    }
  });
}

TEST(ElementwiseFloat16, EveryCompareOpIsTheElementFunction) {
  const Tensor a = every_half();
  const Tensor b = every_half(40503, 12345);
  const Tensor column = b.slice(1, 5, 6);
  for_each_op<kCompareOps>([&](auto op_constant) {
    constexpr CompareOp kOp = decltype(op_constant)::value;
    SCOPED_TRACE(op_name(kOp));
    const auto element = [](Half x, Half y) { return kernels::compare_element<kOp>(x, y); };
    const auto bool_at = [](const Tensor& t, std::int64_t i) {
      return static_cast<const bool*>(t.data_ptr())[i];
    };

    const Tensor out = ops::compare(kOp, a, b);
    EXPECT_TRUE(same_bits(
        kCount, [&](std::int64_t i) { return bool_at(out, i); },
        [&](std::int64_t i) { return element(half_at(a, i), half_at(b, i)); }));

    const Tensor transposed = ops::compare(kOp, a.transpose(0, 1), column);
    EXPECT_TRUE(same_bits(
        kCount, [&](std::int64_t i) { return bool_at(transposed, i); },
        [&](std::int64_t i) {
          return element(half_at(a, i % kSide, i / kSide), half_at(b, i / kSide, 5));
        }));

    for (double s : kScalars) {
      SCOPED_TRACE("scalar " + std::to_string(s));
      const Tensor with_scalar = ops::compare(kOp, a, s);
      const Half scalar = kernels::cast_value<Half>(s);  // compared in the tensor's dtype
      EXPECT_TRUE(same_bits(
          kCount, [&](std::int64_t i) { return bool_at(with_scalar, i); },
          [&](std::int64_t i) { return element(half_at(a, i), scalar); }));
    }
  });
}

// pow(x, 2) of float16 takes the x * x shortcut on the CPU (Note [pow with a scalar exponent])
// where every other exponent keeps std::pow: the shortcut must give std::pow's bits (the element
// function's: binary_element<Pow> is std::pow in float, rounded once) for every float16 value,
// contiguous and transposed. A NaN's sign and payload are IEEE 754's choice: any NaN for a NaN.
TEST(ElementwiseFloat16, PowOfTwoIsTheLibrarysPow) {
  const Tensor a = every_half();
  const Half two(2.0f);
  const auto want = [&](const Tensor& out, auto x_at) {
    return same_bits(
        kCount, [&](std::int64_t i) { return half_at(out, i); },
        [&](std::int64_t i) {
          const Half x = x_at(i), w = kernels::binary_element<BinaryOp::Pow>(x, two);
          return is_nan(w) && is_nan(half_at(out, i)) ? half_at(out, i) : w;
        });
  };
  EXPECT_TRUE(
      want(ops::binary(BinaryOp::Pow, a, 2.0), [&](std::int64_t i) { return half_at(a, i); }));
  EXPECT_TRUE(want(ops::binary(BinaryOp::Pow, a.transpose(0, 1), 2.0),
                   [&](std::int64_t i) { return half_at(a, i % kSide, i / kSide); }));
}

TEST(ElementwiseFloat16, LeakyReluIsTheElementFunction) {
  const Tensor a = every_half();
  for (double slope : {0.01, -2.5, 3e4}) {
    SCOPED_TRACE("negative_slope " + std::to_string(slope));
    const kernels::LeakyReluElement<Half> element{kernels::cast_value<float>(slope)};
    for (bool transposed : {false, true}) {
      const Tensor out = every_half();
      ops::activation_(ActivationOp::LeakyRelu, transposed ? out.transpose(0, 1) : out, slope);
      EXPECT_TRUE(same_bits(
          kCount, [&](std::int64_t i) { return half_at(out, i); },
          [&](std::int64_t i) { return element(half_at(a, i)); }));
    }
  }
}

}  // namespace
}  // namespace leangrad
