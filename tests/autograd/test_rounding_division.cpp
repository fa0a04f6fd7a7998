// remainder, fmod, floor_divide and the bitwise ops (autograd/functions.h) against PyTorch 1.13
// (tests/data/rounding_division.json, written by make_rounding_division.py): values bit for bit
// (signed zeros, infinities and NaN included) in float32, float64, int64, int32, uint8 and bool,
// remainder's and fmod's gradients; the integer conventions PyTorch raises on (x % 0, INT_MIN
// % -1); the methods, operators and in-place forms. Bad input: the Ops table of
// tests/misuse/test_misuse_ops.cpp.
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include <leangrad/autograd/engine.h>
#include <leangrad/autograd/functions.h>
#include <leangrad/autograd/grad_mode.h>
#include <leangrad/core/creation.h>
#include <leangrad/core/cuda.h>
#include <leangrad/kernels/creation.h>
#include "testing/reference_data.h"
#include "testing/tensor_testing.h"

namespace leangrad::test {
namespace {

const std::vector<ReferenceCase>& cases() {
  static const std::vector<ReferenceCase> all = load_reference("rounding_division.json");
  return all;
}

// got equals want in dtype and value, the sign of a zero included, NaN for NaN (of either sign:
// the JSON reference keeps none, and x86's invalid operations give a negative NaN).
void expect_same(const Tensor& got, const Tensor& want, const std::string& what) {
  ASSERT_EQ(got.dtype(), want.dtype()) << what;
  ASSERT_EQ(got.shape(), want.shape()) << what;
  if (is_floating(want.dtype()))
    EXPECT_TRUE(matches_within_roundoff(got, want, {}, {.ulps = 0})) << what;
  else
    EXPECT_TRUE(equal(got, want)) << what;
  const auto g = to_vector(got), w = to_vector(want);
  for (std::size_t i = 0; i < w.size(); ++i) {
    if (w[i] == 0) {
      EXPECT_EQ(std::signbit(g[i]), std::signbit(w[i])) << what << " element " << i;
    }
  }
}

TEST(RoundingDivision, MatchesPyTorch) {
  int checked = 0;
  for (const ReferenceCase& c : cases()) {
    const bool floating = c.name.rfind("floating_", 0) == 0;
    if (!floating && c.name.rfind("integral_", 0) != 0) continue;
    SCOPED_TRACE(c.name);
    const Tensor& a = c.at("a");
    const Tensor& b = c.at("b");
    expect_same(remainder(a, b), c.at("remainder"), "remainder");
    expect_same(fmod(a, b), c.at("fmod"), "fmod");
    expect_same(floor_divide(a, b), c.at("floor_divide"), "floor_divide");
    const double scalar = floating ? -2.5 : 3.0;
    expect_same(remainder(a, scalar), c.at("remainder_scalar"), "remainder by a scalar");
    expect_same(fmod(a, scalar), c.at("fmod_scalar"), "fmod by a scalar");
    expect_same(floor_divide(a, scalar), c.at("floor_divide_scalar"), "floor_divide by a scalar");
    if (floating) expect_same(remainder(7.5, b), c.at("scalar_remainder"), "remainder of 7.5");
    ++checked;
  }
  EXPECT_EQ(checked, 5);
}

// d/da = 1, d/db = -floor(a / b) (remainder) or -trunc(a / b) (fmod): one rounding of the
// quotient's product with the weight on each side.
TEST(RoundingDivision, GradientsArePyTorchs) {
  const ReferenceCase* found = nullptr;
  for (const ReferenceCase& each : cases())
    if (each.name == "gradients") found = &each;
  ASSERT_NE(found, nullptr);
  const ReferenceCase& c = *found;
  for (const char* op : {"remainder", "fmod"}) {
    SCOPED_TRACE(op);
    Tensor a = c.at("a").clone().requires_grad_();
    Tensor b = c.at("b").clone().requires_grad_();
    const Tensor out = std::string(op) == "remainder" ? remainder(a, b) : fmod(a, b);
    sum(mul(out, c.at("w"))).backward();
    EXPECT_TRUE(matches_within_roundoff(a.grad(), c.at(std::string("d_a_") + op), {}, {.ulps = 4}));
    EXPECT_TRUE(
        matches_within_roundoff(b.grad(), c.at(std::string("d_b_") + op), {}, {.ulps = 16}));
  }
  // A scalar dividend: d remainder(s, b) / db = -floor(s / b).
  Tensor b = c.at("b").clone().requires_grad_();
  sum(remainder(7.5, b)).backward();
  const auto divisors = to_vector(c.at("b"));
  std::vector<double> want;
  for (double v : divisors)
    want.push_back(-std::floor(7.5 / v));
  EXPECT_TRUE(all_close(b.grad(), want));
  // floor_divide is piecewise constant: nothing flows through it.
  const Tensor q = floor_divide(c.at("a").clone().requires_grad_(), 2.0);
  EXPECT_FALSE(q.requires_grad());
}

TEST(RoundingDivision, BitwiseOpsArePyTorchs) {
  int checked = 0;
  for (const ReferenceCase& c : cases()) {
    if (c.name.rfind("bitwise_", 0) != 0) continue;
    SCOPED_TRACE(c.name);
    const Tensor& a = c.at("a");
    const Tensor& b = c.at("b");
    expect_same(bitwise_and(a, b), c.at("bitwise_and"), "and");
    expect_same(bitwise_or(a, b), c.at("bitwise_or"), "or");
    expect_same(bitwise_xor(a, b), c.at("bitwise_xor"), "xor");
    expect_same(bitwise_not(a), c.at("bitwise_not"), "not");
    expect_same(bitwise_and(a, 6.0), c.at("bitwise_and_scalar"), "and 6");
    expect_same(bitwise_or(a, 6.0), c.at("bitwise_or_scalar"), "or 6");
    expect_same(bitwise_xor(a, 6.0), c.at("bitwise_xor_scalar"), "xor 6");
    // The operators and methods are the functions.
    expect_same(a & b, bitwise_and(a, b), "&");
    expect_same(a | b, bitwise_or(a, b), "|");
    expect_same(a ^ b, bitwise_xor(a, b), "^");
    expect_same(~a, bitwise_not(a), "~");
    expect_same(a.bitwise_xor(6.0), bitwise_xor(a, 6.0), "method");
    ++checked;
  }
  EXPECT_EQ(checked, 4);
}

// Where PyTorch raises ZeroDivisionError or the hardware traps, leangrad keeps
// a == (a / b) * b + a % b (Note [Defined integer semantics]): x % 0 == x, x // 0 == 0,
// INT_MIN % -1 == 0, INT_MIN // -1 == INT_MIN (wrapped).
TEST(RoundingDivision, IntegerEdgesAreDefined) {
  const std::int64_t min64 = std::numeric_limits<std::int64_t>::min();
  const Tensor a = tensor(std::vector<std::int64_t>{7, -7, min64, min64, 0});
  const Tensor b = tensor(std::vector<std::int64_t>{0, 0, -1, 1, 0});
  const auto values = [](const Tensor& t) {
    std::vector<std::int64_t> v(static_cast<std::size_t>(t.numel()));
    for (std::int64_t i = 0; i < t.numel(); ++i)
      v[static_cast<std::size_t>(i)] = t.data_ptr<std::int64_t>()[i];
    return v;
  };
  EXPECT_EQ(values(remainder(a, b)), (std::vector<std::int64_t>{7, -7, 0, 0, 0}));
  EXPECT_EQ(values(fmod(a, b)), (std::vector<std::int64_t>{7, -7, 0, 0, 0}));
  EXPECT_EQ(values(floor_divide(a, b)), (std::vector<std::int64_t>{0, 0, min64, min64, 0}));
  const Tensor small =
      tensor(std::vector<std::int32_t>{std::numeric_limits<std::int32_t>::min(), 9});
  EXPECT_EQ(to_vector(remainder(small, -1.0)), (std::vector<double>{0, 0}));
  EXPECT_EQ(to_vector(floor_divide(small, -1.0)), (std::vector<double>{-2147483648.0, -9}));
  EXPECT_EQ(to_vector(remainder(tensor(std::vector<std::uint8_t>{200, 3}), 0.0)),
            (std::vector<double>{200, 3}));
}

// x % y and the in-place forms: self's memory, the version moved, gradients as remainder's.
TEST(RoundingDivision, OperatorsAndInPlaceForms) {
  const Tensor a = tensor(std::vector<double>{5.5, -5.5, 7.0, -1.25});
  const Tensor b = tensor(std::vector<double>{2.0, 2.0, -3.0, 0.5});
  expect_same(a % b, remainder(a, b), "%");
  expect_same(a % 1.5, remainder(a, 1.5), "% scalar");
  expect_same(a.remainder(b), remainder(a, b), "method");
  expect_same(a.fmod(1.5), fmod(a, 1.5), "fmod method");
  expect_same(a.floor_divide(b), floor_divide(a, b), "floor_divide method");

  Tensor x = a.clone();
  const void* memory = x.data_ptr();
  const auto version = x.version();
  x %= b;
  EXPECT_EQ(x.data_ptr(), memory);
  EXPECT_GT(x.version(), version);
  expect_same(x, remainder(a, b), "%=");
  Tensor y = a.clone();
  y.fmod_(b);
  expect_same(y, fmod(a, b), "fmod_");
  Tensor z = a.clone();
  z.floor_divide_(-2.0);
  expect_same(z, floor_divide(a, -2.0), "floor_divide_");

  Tensor bits = tensor(std::vector<std::int64_t>{12, -1, 7});
  bits &= 6.0;
  expect_same(bits, tensor(std::vector<std::int64_t>{4, 6, 6}), "&=");
  bits |= tensor(std::vector<std::int64_t>{1, 0, 8});
  expect_same(bits, tensor(std::vector<std::int64_t>{5, 6, 14}), "|=");
  bits ^= 3.0;
  expect_same(bits, tensor(std::vector<std::int64_t>{6, 5, 13}), "^=");
  bits.bitwise_not_();
  expect_same(bits, tensor(std::vector<std::int64_t>{-7, -6, -14}), "bitwise_not_");

  // Recorded in place: the gradient of a through h.remainder_(b) is remainder's.
  Tensor leaf = a.clone().requires_grad_();
  Tensor divisor = b.clone().requires_grad_();
  Tensor h = mul(leaf, 1.0);
  h.remainder_(divisor);
  sum(mul(h, 3.0)).backward();
  EXPECT_TRUE(equal(leaf.grad(), full({4}, 3.0, kFloat64)));
  std::vector<double> want;
  for (double q : to_vector(floor_divide(a, b)))
    want.push_back(-3.0 * q);
  EXPECT_TRUE(all_close(divisor.grad(), want));
}

// The CUDA kernels are the CPU's functions (kernels/elementwise_math.h) on the device: the same
// bits. SKIPPED without a CUDA device.
TEST(RoundingDivisionCuda, SameAsTheCpu) {
  if (!cuda::is_available()) GTEST_SKIP() << "no CUDA device";
  const Device gpu(DeviceType::CUDA, 0);
  for (const ReferenceCase& c : cases()) {
    if (c.name == "gradients") continue;
    SCOPED_TRACE(c.name);
    const Tensor a = c.at("a"), b = c.at("b");
    const Tensor ga = a.to(gpu), gb = b.to(gpu);
    if (c.name.rfind("bitwise_", 0) == 0) {
      expect_same(bitwise_and(ga, gb).to(kCPU), bitwise_and(a, b), "and");
      expect_same(bitwise_xor(ga, 6.0).to(kCPU), bitwise_xor(a, 6.0), "xor 6");
      expect_same(bitwise_not(ga).to(kCPU), bitwise_not(a), "not");
    } else {
      expect_same(remainder(ga, gb).to(kCPU), remainder(a, b), "remainder");
      expect_same(fmod(ga, gb).to(kCPU), fmod(a, b), "fmod");
      expect_same(floor_divide(ga, gb).to(kCPU), floor_divide(a, b), "floor_divide");
    }
  }
}

}  // namespace
}  // namespace leangrad::test
