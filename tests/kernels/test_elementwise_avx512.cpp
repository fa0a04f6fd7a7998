// The AVX-512 copies of the CPU's contiguous elementwise loops (Note [AVX-512 elementwise loops] in
// kernels/cpu/elementwise_loops.h) against the x86-64-v3 loops they copy: every unary op, every
// activation and its gradient, and every floating binary op, on float32 inputs spread over the
// whole float range (every 65,521st bit pattern: both signs, subnormals, infinities and NaNs
// among them), the float16 chunks' float math on every float16 value, and bfloat16's loops on
// every bfloat16 value. Each output must have
// the bits of the other copy's (two NaNs count as equal: which NaN an op on NaNs returns is IEEE
// 754's freedom, Note [float16 elementwise in float lanes]). SKIPPED on a CPU without AVX-512, and
// in a build whose plain loops are already AVX-512 (-march=native there: no second copy).
#include <gtest/gtest.h>

#include <array>
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <optional>
#include <string>

#include <leangrad/core/error.h>
#include <leangrad/core/half.h>
#include <leangrad/kernels/creation.h>
#include <leangrad/kernels/ops.h>
#include "kernels/every_unary_op.h"
#include "testing/avx512_copies.h"
#include "testing/tensor_testing.h"

namespace leangrad::test {
namespace {

// A prime step through the 2^32 float bit patterns: 65,550 values, an odd count (vector tails).
constexpr std::uint32_t kBitStep = 65521;

// Float32 values at every kBitStep-th bit pattern from `shift` on, as a 1-d contiguous tensor.
Tensor spread_floats(std::uint32_t shift) {
  const std::int64_t n = (std::int64_t{1} << 32) / kBitStep + 1;
  Tensor t = zeros({n}, kFloat32);
  auto* p = static_cast<float*>(t.data_ptr());
  for (std::int64_t i = 0; i < n; ++i)
    p[i] = std::bit_cast<float>(static_cast<std::uint32_t>(i) * kBitStep + shift);
  return t;
}

// The count of elements whose bits differ (two NaNs equal), and the first such index in `first`.
template <typename T>
std::int64_t count_differences(const Tensor& a, const Tensor& b, std::int64_t& first) {
  const auto* pa = static_cast<const T*>(a.data_ptr());
  const auto* pb = static_cast<const T*>(b.data_ptr());
  std::int64_t count = 0;
  for (std::int64_t i = 0; i < a.numel(); ++i) {
    const bool both_nan =
        std::isnan(static_cast<float>(pa[i])) && std::isnan(static_cast<float>(pb[i]));
    if (!both_nan && std::memcmp(&pa[i], &pb[i], sizeof(T)) != 0) {
      if (count == 0) first = i;
      ++count;
    }
  }
  return count;
}

// Runs `op` with the AVX-512 copies allowed and then refused, and expects the same bits; an op
// that refuses the dtype must refuse it both ways. Returns whether there were results to compare.
bool expect_copies_agree(const std::string& name, const std::function<Tensor()>& op) {
  SCOPED_TRACE(name);
  const auto run = [&](bool allowed) -> std::optional<Tensor> {
    const Avx512Copies copies(allowed);
    try {
      return op();
    } catch (const Error&) {
      return std::nullopt;
    }
  };
  const std::optional<Tensor> wide = run(true);
  const std::optional<Tensor> narrow = run(false);
  EXPECT_EQ(wide.has_value(), narrow.has_value()) << "refused one way only";
  if (!wide || !narrow) return false;
  EXPECT_EQ(wide->dtype(), narrow->dtype());
  EXPECT_EQ(wide->numel(), narrow->numel());
  if (wide->dtype() != narrow->dtype() || wide->numel() != narrow->numel()) return true;
  std::int64_t first = -1;
  const std::int64_t differences =
      wide->dtype() == kFloat16    ? count_differences<Half>(*wide, *narrow, first)
      : wide->dtype() == kBFloat16 ? count_differences<BFloat16>(*wide, *narrow, first)
                                   : count_differences<float>(*wide, *narrow, first);
  EXPECT_EQ(differences, 0) << "first at element " << first;
  return true;
}

constexpr std::array kActivations = {
    ActivationOp::LeakyRelu,  ActivationOp::Elu,         ActivationOp::EluResult,
    ActivationOp::Hardtanh,   ActivationOp::Clamp,       ActivationOp::Gelu,
    ActivationOp::GeluTanh,   ActivationOp::Silu,        ActivationOp::Mish,
    ActivationOp::Softplus,   ActivationOp::SmoothL1,    ActivationOp::Huber,
    ActivationOp::Hardswish,  ActivationOp::Hardsigmoid, ActivationOp::LogSigmoid,
    ActivationOp::Softsign,   ActivationOp::Tanhshrink,  ActivationOp::Celu,
    ActivationOp::Softshrink, ActivationOp::Hardshrink,  ActivationOp::Threshold};
// Holes or repeats break the count; an op added past the last needs adding here.
static_assert(kActivations.back() == ActivationOp::Threshold &&
                  static_cast<std::size_t>(kActivations.back()) + 1 == kActivations.size(),
              "kActivations lists each ActivationOp once, in the enum's order");

// Parameters that make each activation's two sides and its parameters matter: a slope, alpha,
// bounds (p0 < p1), beta and threshold, delta, lambda.
constexpr double kP0 = 0.75;
constexpr double kP1 = 1.5;

TEST(ElementwiseAvx512, UnaryOpsGiveTheBitsOfTheAvx2Loop) {
  if (!Avx512Copies::exist()) GTEST_SKIP() << "no AVX-512 copies on this CPU or in this build";
  const Tensor x = spread_floats(1);
  std::size_t compared = 0;
  for (const UnaryOp op : kEveryUnaryOp)
    compared += expect_copies_agree("unary op " + std::to_string(static_cast<int>(op)),
                                    [&] { return ops::unary(op, x); });
  EXPECT_EQ(compared, kEveryUnaryOp.size());
}

TEST(ElementwiseAvx512, ActivationsAndGradientsGiveTheBitsOfTheAvx2Loop) {
  if (!Avx512Copies::exist()) GTEST_SKIP() << "no AVX-512 copies on this CPU or in this build";
  const Tensor x = spread_floats(1);
  const Tensor dy = spread_floats(12345);
  std::size_t compared = 0;
  for (const ActivationOp op : kActivations) {
    const std::string name = "activation " + std::to_string(static_cast<int>(op));
    compared += expect_copies_agree(name, [&] { return ops::activation(op, x, kP0, kP1); });
    compared += expect_copies_agree(name + " gradient",
                                    [&] { return ops::activation_backward(op, dy, x, kP0, kP1); });
  }
  EXPECT_EQ(compared, 2 * kActivations.size() - 1);  // EluResult is a gradient only
}

TEST(ElementwiseAvx512, FloatingBinaryOpsGiveTheBitsOfTheAvx2Loop) {
  if (!Avx512Copies::exist()) GTEST_SKIP() << "no AVX-512 copies on this CPU or in this build";
  const Tensor a = spread_floats(1);
  const Tensor b = spread_floats(777);
  std::size_t compared = 0;
  for (int k = 0; k <= static_cast<int>(kLastBinaryOp); ++k) {
    const auto op = static_cast<BinaryOp>(k);
    compared += expect_copies_agree("binary op " + std::to_string(k),
                                    [&] { return ops::binary(op, a, b); });
  }
  // Every BinaryOp but the seven of integral operands (the bitwise three, gcd, lcm, the shifts).
  EXPECT_EQ(compared, static_cast<std::size_t>(kLastBinaryOp) + 1 - 7);
}

TEST(ElementwiseAvx512, Float16ChunksGiveTheBitsOfTheAvx2Loop) {
  if (!Avx512Copies::exist()) GTEST_SKIP() << "no AVX-512 copies on this CPU or in this build";
  const Tensor h = every_sixteen_bit_value(kFloat16);
  std::size_t compared = 0;
  for (const UnaryOp op : kEveryUnaryOp)
    compared += expect_copies_agree("float16 unary op " + std::to_string(static_cast<int>(op)),
                                    [&] { return ops::unary(op, h); });
  for (const ActivationOp op : kActivations)
    compared += expect_copies_agree("float16 activation " + std::to_string(static_cast<int>(op)),
                                    [&] { return ops::activation(op, h, kP0, kP1); });
  EXPECT_EQ(compared, kEveryUnaryOp.size() + kActivations.size() - 1);
}

// bfloat16's plain loop has an AVX-512 copy too (its conversions are integer lanes): every
// bfloat16 value through every unary op, activation and gradient, and binary op.
TEST(ElementwiseAvx512, BFloat16LoopsGiveTheBitsOfTheAvx2Loop) {
  if (!Avx512Copies::exist()) GTEST_SKIP() << "no AVX-512 copies on this CPU or in this build";
  const Tensor x = every_sixteen_bit_value(kBFloat16);
  const Tensor y = every_sixteen_bit_value(kBFloat16, 12345);
  std::size_t compared = 0;
  for (const UnaryOp op : kEveryUnaryOp)
    compared += expect_copies_agree("bfloat16 unary op " + std::to_string(static_cast<int>(op)),
                                    [&] { return ops::unary(op, x); });
  for (const ActivationOp op : kActivations) {
    const std::string name = "bfloat16 activation " + std::to_string(static_cast<int>(op));
    compared += expect_copies_agree(name, [&] { return ops::activation(op, x, kP0, kP1); });
    compared += expect_copies_agree(name + " gradient",
                                    [&] { return ops::activation_backward(op, y, x, kP0, kP1); });
  }
  for (int k = 0; k <= static_cast<int>(kLastBinaryOp); ++k) {
    const auto op = static_cast<BinaryOp>(k);
    compared += expect_copies_agree("bfloat16 binary op " + std::to_string(k),
                                    [&] { return ops::binary(op, x, y); });
  }
  // The binary ops as for float32, less nextafter (float32 and float64 only).
  EXPECT_EQ(compared, kEveryUnaryOp.size() + 2 * kActivations.size() - 1 +
                          static_cast<std::size_t>(kLastBinaryOp) + 1 - 7 - 1);
}

}  // namespace
}  // namespace leangrad::test
