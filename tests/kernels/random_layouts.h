// Random views for the layout tests (tests/kernels/test_random_layouts.cpp): seeded shapes, each
// laid out by a random mix of what user code makes (a permute, a slice with a start and a step, a
// padded row, a broadcast dim, a storage offset, overlapping windows), filled with values that
// include the edges of each dtype; and the test's own readers of such a view, element by element
// through its strides, independent of the kernels under test.
//   test::LayoutRng rng(7);
//   const test::RandomView x = test::random_view(rng, test::random_shape(rng, 4096), kFloat32);
//   EXPECT_TRUE(test::same_elements(ops::unary(UnaryOp::Exp, x.view),
//                                   ops::unary(UnaryOp::Exp, test::materialize(x.view))))
//       << x.description;
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include <leangrad/core/tensor.h>

namespace leangrad::test {

using LayoutRng = std::mt19937_64;

// What a view may do: inputs may broadcast (stride 0) and overlap (two indices, one element);
// a tensor that is written may do neither.
struct ViewKinds {
  bool broadcast = true;
  bool overlap = true;
};

struct RandomView {
  Tensor view;
  Tensor storage;           // the contiguous 1-d tensor whose memory the view reads
  std::string description;  // shape, strides, offset and dtype, for failure messages
};

// A shape of 0 to 4 dims (mostly 1 to 3) whose sizes are small, near a power of two, or 1 and
// whose element count is at most max_numel; now and then one size 0.
Shape random_shape(LayoutRng& rng, std::int64_t max_numel);
// A view of `shape` and `dtype` laid out at random as `kinds` allows, over a storage filled
// with random values (random_values) that the view's elements take.
RandomView random_view(LayoutRng& rng, const Shape& shape, DType dtype, ViewKinds kinds = {});
// The same over a storage of its own: make_storage(numel) returns the contiguous 1-d tensor the
// view is taken from by view ops (slice, view, permute, expand, as_strided), so that a storage
// that requires grad gives a view whose gradient reaches it through them.
RandomView random_view_over(LayoutRng& rng, const Shape& shape, ViewKinds kinds,
                            const std::function<Tensor(std::int64_t numel)>& make_storage);
// Fills a contiguous tensor with random values of its dtype: mostly small values, and now and
// then a small integer (ties), a zero of either sign, an infinity, a NaN, a subnormal, a huge
// value or an integer type's extreme; finite_only leaves out the infinities and NaNs.
void random_values(LayoutRng& rng, const Tensor& contiguous, bool finite_only = false);
// `shape` with each dim of size > 1 kept or, at random, made 1 (a broadcast operand), and at
// random with leading dims dropped.
Shape broadcast_operand_shape(LayoutRng& rng, const Shape& shape);

// A contiguous copy of t made by the test itself: each element's bytes read through t's strides.
Tensor materialize(const Tensor& t);
// The offsets, in elements, from t's data pointer of its elements in logical row-major order,
// walked as an odometer (test::storage_offset_of, without a division per element).
std::vector<std::int64_t> offsets_in_order(const Tensor& t);

// Success when got and want have the same shape and dtype and each element the same bits, a NaN
// matching any NaN (IEEE 754 leaves open which NaN operand propagates, so only a NaN's payload
// may differ between two correct loops). The message names the first element that differs.
::testing::AssertionResult same_elements(const Tensor& got, const Tensor& want);

}  // namespace leangrad::test
