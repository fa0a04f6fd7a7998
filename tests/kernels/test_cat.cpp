// Tests of ops::cat (kernels/ops_shape.cpp): every dim, strided inputs, dtype promotion,
// PyTorch's legacy skipping of 1-D empty tensors, and the errors of mismatched inputs.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include <leangrad/core/creation.h>
#include <leangrad/kernels/ops.h>
#include "testing/tensor_testing.h"

namespace leangrad {
namespace {

using test::all_close;
using test::make_tensor;
using test::to_vector;

std::vector<double> iota(int n, double start = 0) {
  std::vector<double> v;
  for (int i = 0; i < n; ++i)
    v.push_back(start + i);
  return v;
}

// Reference: concatenation of row-major blocks along `dim` of tensors given as values+shape.
std::vector<double> reference_cat(const std::vector<Tensor>& tensors, std::int64_t dim) {
  const Shape& first = tensors[0].shape();
  std::int64_t outer = 1;
  for (std::int64_t d = 0; d < dim; ++d)
    outer *= first[d];
  std::vector<std::vector<double>> values;
  std::vector<std::int64_t> block;  // elements per outer index, per tensor
  for (const Tensor& t : tensors) {
    values.push_back(to_vector(t));
    block.push_back(outer == 0 ? 0 : t.numel() / outer);
  }
  std::vector<double> out;
  for (std::int64_t o = 0; o < outer; ++o) {
    for (std::size_t k = 0; k < tensors.size(); ++k) {
      for (std::int64_t j = 0; j < block[k]; ++j) {
        out.push_back(values[k][static_cast<std::size_t>(o * block[k] + j)]);
      }
    }
  }
  return out;
}

TEST(Cat, EveryDimOfThreeTensors) {
  const Tensor a = make_tensor(iota(24), {2, 3, 4});
  for (std::int64_t dim = 0; dim < 3; ++dim) {
    SCOPED_TRACE("dim " + std::to_string(dim));
    Shape shape_b = {2, 3, 4};
    shape_b[dim] = 1;
    Shape shape_c = {2, 3, 4};
    shape_c[dim] = 2;
    const Tensor b = make_tensor(iota(24 / a.shape()[dim], 100), shape_b);
    const Tensor c = make_tensor(iota(24 / a.shape()[dim] * 2, 200), shape_c);
    const Tensor out = ops::cat({a, b, c}, dim);
    Shape expected_shape = {2, 3, 4};
    expected_shape[dim] += 3;
    EXPECT_EQ(out.shape(), expected_shape);
    EXPECT_TRUE(out.is_contiguous());
    EXPECT_TRUE(all_close(out, reference_cat({a, b, c}, dim), 0, 0));
    // A negative dim means the same dim counted from the end.
    EXPECT_TRUE(all_close(ops::cat({a, b, c}, dim - 3), reference_cat({a, b, c}, dim), 0, 0));
  }
}

TEST(Cat, StridedAndExpandedInputs) {
  const Tensor transposed = make_tensor(iota(6), {3, 2}).transpose(0, 1);      // (2, 3)
  const Tensor stepped = make_tensor(iota(12, 50), {2, 6}).slice(1, 0, 6, 2);  // (2, 3)
  const Tensor expanded = make_tensor({7, 8}, {2, 1}).expand({2, 3});          // (2, 3)
  for (std::int64_t dim : {0, 1}) {
    const Tensor out = ops::cat({transposed, stepped, expanded}, dim);
    EXPECT_TRUE(all_close(out, reference_cat({transposed, stepped, expanded}, dim), 0, 0));
  }
}

TEST(Cat, PromotesDTypes) {
  const Tensor ints = make_tensor({1, 2}, {1, 2}, kInt32);
  const Tensor floats = make_tensor({0.5, 1.5}, {1, 2}, kFloat32);
  const Tensor out = ops::cat({ints, floats}, 0);
  EXPECT_EQ(out.dtype(), kFloat32);
  EXPECT_TRUE(all_close(out, {1, 2, 0.5, 1.5}, 0, 0));

  const Tensor halves = make_tensor({1.5}, {1}, kFloat16);
  const Tensor brains = make_tensor({2.5}, {1}, kBFloat16);
  const Tensor mixed = ops::cat({halves, brains}, 0);
  EXPECT_EQ(mixed.dtype(), kFloat32);
  EXPECT_TRUE(all_close(mixed, {1.5, 2.5}, 0, 0));

  const Tensor flags = make_tensor({1, 0}, {2}, kBool);
  const Tensor bytes = make_tensor({200}, {1}, kUInt8);
  const Tensor with_bytes = ops::cat({flags, bytes}, 0);
  EXPECT_EQ(with_bytes.dtype(), kUInt8);
  EXPECT_TRUE(all_close(with_bytes, {1, 0, 200}, 0, 0));
  EXPECT_EQ(ops::cat({flags, flags}, 0).dtype(), kBool);
}

TEST(Cat, EveryDType) {
  for (DType dtype : {kFloat32, kFloat64, kFloat16, kBFloat16, kInt64, kInt32, kUInt8, kBool}) {
    SCOPED_TRACE(dtype_name(dtype));
    const Tensor a = make_tensor({1, 0, 1, 1}, {2, 2}, dtype);
    const Tensor b = make_tensor({0, 1}, {2, 1}, dtype);
    const Tensor out = ops::cat({a, b}, 1);
    EXPECT_EQ(out.dtype(), dtype);
    EXPECT_TRUE(all_close(out, {1, 0, 0, 1, 1, 1}, 0, 0));
  }
}

TEST(Cat, EmptyInputs) {
  const Tensor a = make_tensor(iota(6), {2, 3});
  // Legacy rule: 1-D tensors of shape [0] are skipped whatever their dims.
  const Tensor legacy = empty({0});
  const Tensor out = ops::cat({legacy, a, legacy}, 1);
  EXPECT_EQ(out.shape(), (Shape{2, 3}));
  EXPECT_TRUE(all_close(out, iota(6), 0, 0));
  // A tensor with a zero size along dim takes part and adds nothing.
  const Tensor none = empty({2, 0});
  EXPECT_TRUE(all_close(ops::cat({none, a, none}, 1), iota(6), 0, 0));
  const Tensor rows = ops::cat({empty({0, 3}), empty({0, 3})}, 0);
  EXPECT_EQ(rows.shape(), (Shape{0, 3}));
  // Only legacy empties: an empty 1-D result.
  EXPECT_EQ(ops::cat({legacy, legacy}, 0).shape(), (Shape{0}));
  // Legacy empties still take part in dtype promotion.
  EXPECT_EQ(ops::cat({empty({0}, kFloat64), make_tensor({1}, {1})}, 0).dtype(), kFloat64);
}

TEST(Cat, MismatchedSizesNameBothShapes) {
  const Tensor a = empty({2, 3});
  const Tensor b = empty({4, 5});
  try {
    ops::cat({a, b}, 0);
    FAIL() << "expected ShapeError";
  } catch (const ShapeError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("cat"), std::string::npos) << what;
    EXPECT_NE(what.find("[2, 3]"), std::string::npos) << what;
    EXPECT_NE(what.find("[4, 5]"), std::string::npos) << what;
  }
  EXPECT_NO_THROW(ops::cat({empty({2, 3}), empty({2, 5})}, 1));
}

TEST(Cat, Errors) {
  EXPECT_THROW(ops::cat({}, 0), Error);
  EXPECT_THROW(ops::cat({empty({2, 3}), empty({2, 3, 1})}, 0), ShapeError);  // dim counts
  EXPECT_THROW(ops::cat({empty({}), empty({})}, 0), ShapeError);             // 0-d
  EXPECT_THROW(ops::cat({empty({2, 3})}, 2), ShapeError);                    // dim range
  EXPECT_THROW(ops::cat({empty({2, 3})}, -3), ShapeError);
  EXPECT_THROW(ops::cat({empty({2}), Tensor()}, 0), Error);
}

}  // namespace
}  // namespace leangrad
