// Test helpers shared by every suite: build tensors from plain values, read any tensor back as
// doubles, and compare against an expected vector with tolerances. Deliberately independent of
// the kernels under test: values are converted with plain static_casts and strided tensors are
// read with their own index loop.
//   Tensor x = test::make_tensor({1, 2, 3, 4, 5, 6}, {2, 3}, kFloat16);
//   EXPECT_TRUE(test::all_close(ops::unary(UnaryOp::Neg, x), {-1, -2, -3, -4, -5, -6}));
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include <leangrad/core/tensor.h>

// EXPECT_CONTAINS(message, "part"): the text contains the part, else a failure showing the text.
#define EXPECT_CONTAINS(text, part) \
  EXPECT_NE(std::string(text).find(part), std::string::npos) << "in: " << (text)

namespace leangrad::test {

// A contiguous CPU tensor of `dtype` and `shape` holding `values` in row-major order
// (shape {} is 0-d and takes one value). Values are converted with static_cast (through float
// for float16/bfloat16, x != 0 for bool).
Tensor make_tensor(const std::vector<double>& values, const Shape& shape, DType dtype = kFloat32);

// Every element of `t` (any dtype, device or strides) as double, in logical row-major order.
std::vector<double> to_vector(const Tensor& t);

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

// EXPECT_TRUE(all_close(...)) as a function (failures point at this helper's line; prefer the
// all_close form, or wrap calls in SCOPED_TRACE, to see the caller's line).
void expect_close(const Tensor& t, const std::vector<double>& expected, double rtol, double atol);
void expect_close(const Tensor& t, const std::vector<double>& expected);

}  // namespace leangrad::test
