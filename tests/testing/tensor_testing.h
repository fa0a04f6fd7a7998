// Test helpers shared by every suite: build tensors from plain values, read any tensor back as
// doubles, and compare against an expected vector with tolerances. Deliberately independent of
// the kernels under test: values are converted with plain static_casts and strided tensors are
// read with their own index loop.
//   Tensor x = test::make_tensor({1, 2, 3, 4, 5, 6}, {2, 3}, kFloat16);
//   EXPECT_TRUE(test::all_close(ops::unary(UnaryOp::Neg, x), {-1, -2, -3, -4, -5, -6}));
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <leangrad/core/tensor.h>

// EXPECT_CONTAINS(message, "part"): the text contains the part, else a failure showing the text.
#define EXPECT_CONTAINS(text, part) \
  EXPECT_NE(std::string(text).find(part), std::string::npos) << "in: " << (text)

// EXPECT_THROW_MSG(statement, "part"): the statement throws a leangrad::Error whose what()
// contains the part (a failure showing "(no error)" when it throws none).
#define EXPECT_THROW_MSG(statement, part) \
  EXPECT_CONTAINS(::leangrad::test::error_message([&] { (void)(statement); }), part)

namespace leangrad::test {

// A contiguous CPU tensor of `dtype` and `shape` holding `values` in row-major order
// (shape {} is 0-d and takes one value). Values are converted with static_cast (through float
// for float16/bfloat16, x != 0 for bool).
Tensor make_tensor(const std::vector<double>& values, const Shape& shape, DType dtype = kFloat32);

// The what() of the leangrad::Error that `fn` throws, or "(no error)" when it throws none (other
// exceptions pass through).
std::string error_message(const std::function<void()>& fn);

// Every element of `t` (any dtype, device or strides) as double, in logical row-major order.
std::vector<double> to_vector(const Tensor& t);
// The row-major multi-index of the flat index i in `shape`.
std::vector<std::int64_t> unravel(std::int64_t i, const Shape& shape);
// The offset, in elements, from t's data pointer of its element i in logical row-major order, by
// its strides.
std::int64_t storage_offset_of(const Tensor& t, std::int64_t i);

// Every float16 or bfloat16 value once: a contiguous 1-d tensor of 65,536 elements whose element
// i has the bits (i + shift) mod 2^16 (both NaNs' payloads, the infinities, the subnormals).
Tensor every_sixteen_bit_value(DType dtype, std::uint16_t shift = 0);
// The bits of a float16 or bfloat16 tensor's elements (any device or strides), in logical
// row-major order: what a bitwise comparison of 16-bit results reads.
std::vector<std::uint16_t> sixteen_bit_patterns(const Tensor& t);
// The largest |element| of t (0 for an empty tensor), in double.
double max_abs(const Tensor& t);

// The unit roundoff of the type the kernels compute `dtype` in: 2^-53 for float64, 2^-24 for
// float32 and for the 16-bit dtypes (computed in float). The unit of the roundoff bounds below
// and of the tests that derive their own.
double math_unit_roundoff(DType dtype);

// Tolerances that fit one rounding of a result in `dtype` (0 for integral and bool dtypes).
struct Tolerance {
  double rtol = 0;
  double atol = 0;
};
Tolerance tolerance_for(DType dtype);

// Success when `t` has expected.size() elements and each satisfies
// |actual - expected| <= atol + rtol * |expected| (NaN matches NaN, an infinity only itself).
// The failure message names the first mismatching index (flat and multi-index), both values,
// the shape, the dtype and the number of mismatches. Use as EXPECT_TRUE(all_close(...)).
::testing::AssertionResult all_close(const Tensor& t, const std::vector<double>& expected,
                                     double rtol, double atol);
// The same with tolerance_for(t.dtype()).
::testing::AssertionResult all_close(const Tensor& t, const std::vector<double>& expected);

// ---- Against a reference computed elsewhere (PyTorch), in units of roundoff --------------------
// Where got and the reference each evaluate one closed form (a few correctly rounded operations
// and libm calls good to a few ulps, in each side's own order), they differ by a few units of
// roundoff u of the largest magnitude on the path, and a wrong formula, branch or clamp is off by
// O(1) of it: a bound of `ulps` u of that magnitude separates the two. How to choose the options:
//  - ulps: count the roundings on each side's longest path (a libm call as its ulp bound), add
//    them and leave room; the autograd tests allow 16 for values and 32 for gradients (one chain
//    rule deeper). u is math_unit_roundoff of got's dtype, float32 or float64 (other dtypes
//    fail unless bitwise: a 16-bit result is rounded to 16 bits and needs its own bound).
//  - inputs: the function's operands at each element (the point x, a target t), named for the
//    message. The scale of element i is max(1, |want_i|, |input_i| for each input), finite ones
//    only (an infinite x would make the bound check nothing): list every operand the
//    intermediates grow with, so a large x does not fail a bound meant for |result|.
//  - non_finite: MustMatch where the reference is NaN or infinite on purpose (poles, domain
//    edges, an infinite gradient at a clamp): NaN must meet NaN and an infinity the same
//    infinity. Forbidden where every reference value is finite by construction: a NaN or
//    infinity in the reference then fails.
//  - bitwise: results that are exactly representable (sign, the roundings): each element equals
//    the reference bit for bit, the sign of a zero included; ulps and non_finite are unused.
// A NaN or infinite got against a finite reference always fails. Use as
//   EXPECT_TRUE(matches_within_roundoff(y, want, {{"x", x}}, {.ulps = 16})) << "value";
enum class NonFinite {
  MustMatch,  // NaN matches NaN, an infinity only itself
  Forbidden,  // every reference value must be finite
};
struct RoundoffMatch {
  double ulps = 0;
  NonFinite non_finite = NonFinite::MustMatch;
  bool bitwise = false;
};
// One operand of the function, element by element as got (same number of elements).
struct NamedInput {
  const char* name;
  Tensor values;
};
// Success when `got` and `want` have the same number of elements and each element matches as
// `match` says. The failure message lists every mismatching element with its inputs and bound.
::testing::AssertionResult matches_within_roundoff(const Tensor& got, const Tensor& want,
                                                   const std::vector<NamedInput>& inputs,
                                                   const RoundoffMatch& match);

// EXPECT_TRUE(all_close(...)) as a function (failures point at this helper's line; prefer the
// all_close form, or wrap calls in SCOPED_TRACE, to see the caller's line).
void expect_close(const Tensor& t, const std::vector<double>& expected, double rtol, double atol);
void expect_close(const Tensor& t, const std::vector<double>& expected);

}  // namespace leangrad::test
