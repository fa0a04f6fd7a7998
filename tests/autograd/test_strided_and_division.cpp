// as_strided (autograd/shape_functions.h), Tensor::unfold, empty_strided (core/creation.h) and
// div with rounding_mode (autograd/functions.h): values and gradients against PyTorch's
// (tests/data/strided_and_division.json, make_strided_and_division.py), gradients by finite
// differences, and the checks on bad arguments.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include <leangrad/autograd/functions.h>
#include <leangrad/autograd/reduction_functions.h>
#include <leangrad/autograd/shape_functions.h>
#include <leangrad/core/creation.h>
#include <leangrad/kernels/creation.h>
#include "testing/gradcheck.h"
#include "testing/reference_data.h"
#include "testing/tensor_testing.h"

namespace leangrad {
namespace {

using test::gradcheck;
using test::gradgradcheck;
using test::matches_within_roundoff;
using test::RoundoffMatch;
using test::uniform_input;
using Inputs = std::vector<Tensor>;

// What make_strided_and_division.py's view_of takes of the base before as_strided or unfold.
Tensor view_of(const Tensor& a, const std::string& view) {
  if (view == "none") return a;
  if (view == "slice") return a.slice(0, 1, a.size(0));
  if (view == "narrow") return a.slice(0, 2, 6);
  if (view == "transpose") return a.t();
  EXPECT_EQ(view, "expand");
  return a.expand({3, 4});
}

Tensor apply_case(const test::ReferenceCase& rc, const test::ReferenceInputs& in) {
  const nlohmann::json& p = rc.params;
  const std::string op = p.at("op").get<std::string>();
  if (op == "as_strided") {
    const std::optional<std::int64_t> offset =
        p.contains("offset") ? std::optional(p.at("offset").get<std::int64_t>()) : std::nullopt;
    return as_strided(view_of(in.tensors[0], p.at("view").get<std::string>()),
                      p.at("size").get<Shape>(), p.at("stride").get<Strides>(), offset);
  }
  if (op == "unfold") {
    return view_of(in.tensors[0], p.at("view").get<std::string>())
        .unfold(p.at("dim").get<std::int64_t>(), p.at("size").get<std::int64_t>(),
                p.at("step").get<std::int64_t>());
  }
  EXPECT_EQ(op, "div");
  const std::string mode = p.at("mode").get<std::string>();
  return p.contains("scalar") ? div(in.tensors[0], p.at("scalar").get<double>(), mode)
                              : div(in.tensors[0], in.tensors[1], mode);
}

// as_strided and unfold are views: their values are the base's elements, bit for bit. Their
// gradients add at most three upstream values per element (the overlapping windows) in either
// side's order: 8 units of roundoff. div's roundings are exact (integers, or trunc and floor of
// one correctly rounded quotient: PyTorch's floor_divide formula on both sides), zeros' signs
// and the infinities and NaN of a division by 0 included; its gradient is exactly 0.
TEST(StridedAndDivisionReference, MatchesPyTorch) {
  const std::vector<test::ReferenceCase> cases = test::load_reference("strided_and_division.json");
  ASSERT_EQ(cases.size(), 35u);  // make_strided_and_division.py's count
  for (const test::ReferenceCase& rc : cases) {
    SCOPED_TRACE(rc.name);
    const test::ReferenceInputs in = test::reference_inputs(rc);
    const Tensor y = apply_case(rc, in);
    ASSERT_TRUE(y.defined());
    ASSERT_EQ(y.shape(), rc.at("y").shape());
    ASSERT_EQ(y.dtype(), rc.at("y").dtype());
    if (is_floating(y.dtype())) {
      // Bit for bit but for a NaN's sign bit (0 / 0 gives x86's negative default NaN here and a
      // positive one in PyTorch's vectorised loop): the NaN themselves must coincide.
      const Tensor nan_here = isnan(rc.at("y"));
      EXPECT_TRUE(isnan(y).equal(nan_here)) << "NaN";
      EXPECT_TRUE(matches_within_roundoff(where(nan_here, zeros_like(y), y),
                                          where(nan_here, zeros_like(y), rc.at("y")), {},
                                          RoundoffMatch{.bitwise = true}))
          << "value";
    } else {
      EXPECT_TRUE(y.equal(rc.at("y"))) << "value";
    }
    test::expect_reference_gradients(rc, in, y, 8);
    if (HasFatalFailure()) return;
  }
}

TEST(AsStrided, GradientsMatchFiniteDifferences) {
  const Tensor a = uniform_input({12}, -1.0, 1.0, 3);
  const Tensor b = uniform_input({1, 4}, -1.0, 1.0, 4);
  const auto windows = [](const Inputs& x) { return as_strided(x[0], {3, 4}, {2, 1}, 1).pow(3.0); };
  // A view's elements only: where as_strided reaches past its input into the storage, the
  // gradient of those elements is dropped (PyTorch's too; the reference case
  // as_strided__on_narrow_reaching_outside), which finite differences of the base would not see.
  const auto on_view = [](const Inputs& x) {
    return as_strided(x[0].slice(0, 2, 10), {2, 3}, {1, 2}, 2).pow(3.0);
  };
  const auto on_overlapping = [](const Inputs& x) {
    return as_strided(x[0].expand({3, 4}), {2, 2}, {1, 1}, 0).pow(3.0);
  };
  const auto unfolded = [](const Inputs& x) { return x[0].unfold(0, 3, 2).pow(3.0); };
  // Distinct elements of a contiguous input: the gradient copied into zeros (its own path).
  const auto disjoint = [](const Inputs& x) {
    return as_strided(x[0], {2, 3}, {5, 2}, 1).pow(3.0);
  };
  EXPECT_TRUE(gradcheck(disjoint, {a}));
  EXPECT_TRUE(gradgradcheck(disjoint, {a}));
  EXPECT_TRUE(gradcheck(windows, {a}));
  EXPECT_TRUE(gradgradcheck(windows, {a}));
  EXPECT_TRUE(gradcheck(on_view, {a}));
  EXPECT_TRUE(gradcheck(on_overlapping, {b}));
  EXPECT_TRUE(gradgradcheck(on_overlapping, {b}));
  EXPECT_TRUE(gradcheck(unfolded, {a}));
}

TEST(AsStrided, SharesStorageAndChecksItsBounds) {
  Tensor a = arange(12.0);
  const Tensor v = as_strided(a, {3, 2}, {4, 1}, 1);
  EXPECT_EQ(v.storage().get(), a.storage().get());
  EXPECT_EQ(v.strides(), (Strides{4, 1}));
  EXPECT_EQ(v.storage_offset(), 1);
  a.fill_(5.0);  // a write to the base is seen through the view
  EXPECT_TRUE(v.equal(full({3, 2}, 5.0)));
  EXPECT_THROW(as_strided(a, {3, 2}, {4, 1}, 5), ShapeError);  // reaches element 14 of 12
  EXPECT_THROW(as_strided(a, {3, 2}, {-4, 1}), ShapeError);    // negative stride
  EXPECT_THROW(as_strided(a, {3, 2}, {4}), ShapeError);        // a stride short
  EXPECT_THROW(as_strided(a, {-1, 2}, {4, 1}), ShapeError);    // negative size
  EXPECT_THROW(as_strided(a, {2}, {1}, -1), ShapeError);       // negative offset
  EXPECT_THROW(as_strided(Tensor(), {2}, {1}), Error);
  // The bound is the storage's, not the tensor's: a view may reach the base's other elements.
  EXPECT_TRUE(as_strided(a.slice(0, 10, 12), {12}, {1}, 0).equal(a));
  EXPECT_THROW(a.unfold(0, 13, 1), ShapeError);
  EXPECT_THROW(a.unfold(0, 2, 0), ShapeError);
  EXPECT_THROW(a.unfold(1, 2, 1), ShapeError);
}

TEST(EmptyStrided, LaysOutItsStorage) {
  Tensor t = empty_strided({2, 3}, {1, 2}, kFloat64);
  EXPECT_EQ(t.shape(), (Shape{2, 3}));
  EXPECT_EQ(t.strides(), (Strides{1, 2}));
  EXPECT_EQ(t.dtype(), kFloat64);
  EXPECT_EQ(t.storage()->nbytes(), 6 * sizeof(double));  // element 5 is the last addressed
  t.copy_(arange(6.0, kFloat64).reshape({2, 3}));
  EXPECT_TRUE(t.equal(arange(6.0, kFloat64).reshape({2, 3})));
  // Overlap along a dim of stride 0 is allowed, and such a tensor is refused for elementwise
  // writes (fill_ writes one value everywhere and takes it, as PyTorch's).
  Tensor expanded = empty_strided({3, 2}, {0, 1});
  EXPECT_EQ(expanded.storage()->nbytes(), 2 * sizeof(float));
  EXPECT_THROW(expanded.add_(1.0), Error);
  EXPECT_EQ(empty_strided({0, 4}, {4, 1}).numel(), 0);
  EXPECT_TRUE(empty_strided({2}, {1}, TensorOptions().requires_grad(true)).requires_grad());
  EXPECT_THROW(empty_strided({2, 3}, {1}), ShapeError);
  EXPECT_THROW(empty_strided({2, 3}, {-1, 1}), ShapeError);
  EXPECT_THROW(empty_strided({std::int64_t{1} << 40, std::int64_t{1} << 40}, {1, 1}), Error);
}

TEST(RoundedDivision, IntegersAreExactAndChecked) {
  const Tensor a = tensor(std::vector<std::int64_t>{7, -7, 7, -7, 0, 5});
  const Tensor b = tensor(std::vector<std::int64_t>{2, 2, -2, -2, 3, 0});
  // Python's // and C's / on each pair; x // 0 == 0 and trunc(x / 0) == 0 for integers.
  EXPECT_TRUE(div(a, b, "floor").equal(tensor(std::vector<std::int64_t>{3, -4, -4, 3, 0, 0})));
  EXPECT_TRUE(div(a, b, "trunc").equal(tensor(std::vector<std::int64_t>{3, -3, -3, 3, 0, 0})));
  EXPECT_TRUE(a.div(b, std::nullopt).equal(div(a, b)));  // no mode: true division, float32
  EXPECT_EQ(a.divide(b, "trunc").dtype(), kInt64);
  const std::int64_t lowest = std::numeric_limits<std::int64_t>::min();
  EXPECT_TRUE(div(tensor(std::vector<std::int64_t>{lowest}), -1.0, "trunc")
                  .equal(tensor(std::vector<std::int64_t>{lowest})));
  EXPECT_THROW(div(a, b, "round"), Error);
  EXPECT_THROW(div(ones({2}, kBool), ones({2}, kBool), "floor"), DTypeError);
  EXPECT_THROW(div(ones({2}, kBool), 2.0, "trunc"), DTypeError);
}

// A 16-bit quotient is truncated before it is rounded: 2826 / 11 = 256.9 rounds to 257 in
// float16 (PyTorch 1.13's CPU trunc gives 257), its trunc is 256, as floor's.
TEST(RoundedDivision, SixteenBitQuotientsTruncateBeforeRounding) {
  for (const DType dtype : {kFloat16, kBFloat16}) {
    SCOPED_TRACE(dtype_name(dtype));
    const Tensor a = full({1}, 2826.0, dtype);
    const Tensor b = full({1}, 11.0, dtype);
    // The exact trunc and floor rounded once to the dtype (bfloat16 holds 2832 for 2826, whose
    // quotient 257.45 truncates to 257, itself rounded to 256; its quotient alone rounds to 258).
    const double a_value = a.to(kFloat64).item<double>();
    const auto in_dtype = [dtype](double v) {
      return full({1}, v, dtype).to(kFloat64).item<double>();
    };
    const double want = in_dtype(std::trunc(a_value / 11.0));
    EXPECT_EQ(div(a, b, "trunc").dtype(), dtype);
    EXPECT_EQ(div(a, b, "trunc").to(kFloat64).item<double>(), want);
    EXPECT_EQ(div(a, 11.0, "trunc").to(kFloat64).item<double>(), want);
    EXPECT_EQ(div(neg(a), b, "trunc").to(kFloat64).item<double>(), -want);
    EXPECT_EQ(div(a, b, "floor").to(kFloat64).item<double>(), in_dtype(std::floor(a_value / 11.0)));
  }
}

TEST(RoundedDivision, GradientIsZero) {
  const Tensor a = uniform_input({3}, -2.0, 2.0, 5);
  const Tensor b = uniform_input({3}, 0.5, 1.0, 6);
  for (const char* mode : {"trunc", "floor"}) {
    SCOPED_TRACE(mode);
    a.mutable_grad() = Tensor();
    b.mutable_grad() = Tensor();
    Tensor y = add(div(a, b, mode), div(a, 2.0, mode));
    ASSERT_TRUE(y.requires_grad());
    sum(y).backward();
    EXPECT_TRUE(a.grad().equal(zeros({3}, kFloat64)));
    EXPECT_TRUE(b.grad().equal(zeros({3}, kFloat64)));
  }
}

}  // namespace
}  // namespace leangrad
