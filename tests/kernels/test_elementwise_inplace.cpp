// The in-place elementwise entries of kernels/ops.h: ops::unary_ (every UnaryOp) and
// ops::activation_ (the fused leaky_relu, elu / selu and hardtanh) write self's own memory and
// give bitwise the out-of-place result (ops::unary, and the compositions of
// autograd/activations.cpp), on contiguous, transposed and sliced self, in every dtype the
// out-of-place op takes; the elements a slice skips stay as they were; the version goes up; what
// would change self's dtype is refused. The CUDA side is in the op table (rows *_inplace_*).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include <leangrad/autograd/activations.h>
#include <leangrad/autograd/functions.h>
#include <leangrad/core/error.h>
#include <leangrad/kernels/creation.h>
#include <leangrad/kernels/elementwise_math.h>
#include <leangrad/kernels/ops.h>
#include "testing/gradcheck.h"
#include "testing/tensor_testing.h"

namespace leangrad {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

// Every UnaryOp, in enum order: op_name names each one, and nothing past the last, so an op
// added to the enum is covered here without a list to update.
std::vector<UnaryOp> every_unary_op() {
  std::vector<UnaryOp> ops;
  for (int k = 0; k < 256; ++k) {
    const auto op = static_cast<UnaryOp>(k);
    if (std::string(op_name(op)) == "unknown_unary_op") break;
    ops.push_back(op);
  }
  return ops;
}

// n values for `dtype`: the edge points first (signed zeros, the kinks and bounds of the
// activations below, halves for round, NaN and the infinities), then U[-4, 4). Integral dtypes
// get integers that every one of them holds (uint8: non-negative).
std::vector<double> input_values(DType dtype, std::int64_t n, std::uint64_t seed) {
  std::vector<double> values;
  if (is_floating(dtype)) {
    values = {0.0, -0.0, 1.0,  -1.0,  0.5,  -0.5, 2.5,  -2.5, 6.0,
              0.7, 0.2,  1e-3, 100.0, -100, kNaN, kInf, -kInf};
    for (double v : test::to_vector(test::uniform_input({n}, -4.0, 4.0, seed)))
      values.push_back(v);
  } else {
    const bool is_unsigned = dtype == kUInt8;
    for (std::int64_t i = 0; static_cast<std::int64_t>(values.size()) < n; ++i) {
      const double v = static_cast<double>((i * 37) % 201 - 100);  // -100 ... 100
      values.push_back(is_unsigned ? std::abs(v) : v);
    }
  }
  values.resize(static_cast<std::size_t>(n));
  return values;
}

// A layout of self: a fresh base tensor and the view of it that the op writes.
struct Layout {
  const char* name;
  Shape base_shape;
  std::function<Tensor(const Tensor&)> view;
  // The base's elements outside the view (none: nullptr).
  std::function<Tensor(const Tensor&)> outside;
};

std::vector<Layout> layouts() {
  return {
      {"contiguous", {6, 8}, [](const Tensor& b) { return b; }, nullptr},
      {"transposed", {8, 6}, [](const Tensor& b) { return b.transpose(0, 1); }, nullptr},
      {"sliced",
       {6, 16},
       [](const Tensor& b) { return b.slice(1, 0, 16, 2); },
       [](const Tensor& b) { return b.slice(1, 1, 16, 2); }},
      {"zero_dim", {}, [](const Tensor& b) { return b; }, nullptr},
      {"empty", {0, 3}, [](const Tensor& b) { return b; }, nullptr},
  };
}

std::int64_t numel_of(const Shape& shape) {
  std::int64_t n = 1;
  for (std::int64_t s : shape)
    n *= s;
  return n;
}

::testing::AssertionResult bitwise_equal(const Tensor& got, const Tensor& want) {
  if (got.dtype() != want.dtype() || got.shape() != want.shape()) {
    return ::testing::AssertionFailure() << "got " << got.dtype() << " " << got.shape() << ", want "
                                         << want.dtype() << " " << want.shape();
  }
  return test::matches_within_roundoff(got, want, {}, {.bitwise = true});
}

// Writes self = in_place(view of a fresh base) and checks it bit for bit against
// out_of_place(the same view of another base with the same values), that self's memory was
// written (the same data pointer, a higher version) and that what the view skips is untouched.
void check_in_place(DType dtype, std::uint64_t seed,
                    const std::function<void(const Tensor&)>& in_place,
                    const std::function<Tensor(const Tensor&)>& out_of_place) {
  for (const Layout& layout : layouts()) {
    SCOPED_TRACE(layout.name);
    const std::vector<double> values = input_values(dtype, numel_of(layout.base_shape), seed);
    const Tensor base = test::make_tensor(values, layout.base_shape, dtype);
    const Tensor original = test::make_tensor(values, layout.base_shape, dtype);
    const Tensor self = layout.view(base);
    const Tensor want = out_of_place(layout.view(original));
    const void* memory = self.data_ptr();
    const std::uint32_t version = self.version();
    in_place(self);
    EXPECT_EQ(self.data_ptr(), memory);
    EXPECT_GT(self.version(), version);
    EXPECT_TRUE(bitwise_equal(self, want));
    if (layout.outside) {
      EXPECT_TRUE(bitwise_equal(layout.outside(base), layout.outside(original)))
          << "an element outside the view was written";
    }
  }
}

TEST(UnaryInPlace, BitwiseTheOutOfPlaceOpOnEveryLayoutAndDtype) {
  for (const UnaryOp op : every_unary_op()) {
    for (const DType dtype : {kFloat32, kFloat64, kFloat16, kBFloat16, kInt64, kInt32, kUInt8}) {
      if (!is_floating(dtype) && kernels::is_floating_only(op)) continue;  // refused, below
      SCOPED_TRACE(std::string(op_name(op)) + "_ " + dtype_name(dtype));
      check_in_place(
          dtype, 11, [op](const Tensor& t) { ops::unary_(op, t); },
          [op](const Tensor& t) { return ops::unary(op, t); });
    }
  }
}

// What self cannot hold is refused before anything is written, as PyTorch's "result type Float
// can't be cast to the desired output type Long"; so are bool (as the out-of-place ops) and an
// expanded self (one element in several places).
TEST(UnaryInPlace, RefusesWhatWouldChangeTheDtype) {
  for (const UnaryOp op : every_unary_op()) {
    const std::string name = std::string(op_name(op)) + "_";
    SCOPED_TRACE(name);
    for (const DType dtype : {kInt64, kInt32, kUInt8, kBool}) {
      const Tensor t = test::make_tensor({1, 0, 2}, {3}, dtype);
      const std::uint32_t version = t.version();
      if (kernels::is_floating_only(op)) {
        try {
          ops::unary_(op, t);
          ADD_FAILURE() << name << " of " << dtype << " was not refused";
        } catch (const DTypeError& e) {
          EXPECT_CONTAINS(e.what(), name);
          EXPECT_CONTAINS(e.what(), "result type float32 can't be cast");
          EXPECT_CONTAINS(e.what(), dtype_name(dtype));
        }
      } else if (dtype == kBool) {
        EXPECT_THROW(ops::unary_(op, t), DTypeError);
      } else {
        continue;
      }
      EXPECT_EQ(t.version(), version);
      EXPECT_TRUE(bitwise_equal(t, test::make_tensor({1, 0, 2}, {3}, dtype)));
    }
  }
  const Tensor expanded = ones({1, 3}).expand({2, 3});
  try {
    ops::unary_(UnaryOp::Neg, expanded);
    ADD_FAILURE() << "an expanded self was written";
  } catch (const Error& e) {
    EXPECT_CONTAINS(e.what(), "neg_");
  }
  EXPECT_THROW(ops::unary_(UnaryOp::Exp, Tensor()), Error);
}

// The fused activations against the compositions of elementwise ops that PyTorch's definitions
// spell out (written here; leaky_relu, elu, selu and hardtanh out of place write the in-place
// kernels' bits, tests/kernels/test_activation_kernels.cpp), with the kinks, bounds, signed zeros,
// NaN and infinities in the input; a bound that float16 and bfloat16 round (0.7) and a slope they
// round (0.2, 0.3).
Tensor composed_elu(const Tensor& t, double alpha) {
  return where(gt(t, 0.0), t, mul(expm1(clamp_max(t, 0.0)), alpha));
}

TEST(ActivationInPlace, BitwiseTheComposedOpsOnEveryLayoutAndDtype) {
  constexpr double kSeluAlpha = 1.6732632423543772848170429916717;
  constexpr double kSeluScale = 1.0507009873554804934193349852946;
  struct Row {
    std::string name;
    std::function<void(const Tensor&)> in_place;
    std::function<Tensor(const Tensor&)> composed;
  };
  const auto leaky = [](double slope) {
    return Row{"leaky_relu(" + std::to_string(slope) + ")",
               [slope](const Tensor& t) { ops::activation_(ActivationOp::LeakyRelu, t, slope); },
               [slope](const Tensor& t) { return where(gt(t, 0.0), t, mul(t, slope)); }};
  };
  const auto elu_row = [](double alpha) {
    return Row{"elu(" + std::to_string(alpha) + ")",
               [alpha](const Tensor& t) { ops::activation_(ActivationOp::Elu, t, alpha, 1.0); },
               [alpha](const Tensor& t) { return composed_elu(t, alpha); }};
  };
  const auto hardtanh_row = [](double low, double high) {
    return Row{
        "hardtanh(" + std::to_string(low) + ", " + std::to_string(high) + ")",
        [low, high](const Tensor& t) { ops::activation_(ActivationOp::Hardtanh, t, low, high); },
        [low, high](const Tensor& t) {
          return masked_fill(masked_fill(t, ge(t, high), high), le(t, low), low);
        }};
  };
  const std::vector<Row> rows = {
      leaky(0.2),
      leaky(0.0),
      leaky(-0.3),
      elu_row(1.0),
      elu_row(0.5),
      elu_row(0.0),
      {"selu",
       [](const Tensor& t) { ops::activation_(ActivationOp::Elu, t, kSeluAlpha, kSeluScale); },
       [](const Tensor& t) { return mul(composed_elu(t, kSeluAlpha), kSeluScale); }},
      hardtanh_row(-1.0, 1.0),
      hardtanh_row(-0.5, 2.0),
      hardtanh_row(0.0, 6.0),
      hardtanh_row(-0.3, 0.7),
      hardtanh_row(0.5, 0.5),
  };
  for (const Row& row : rows) {
    for (const DType dtype : {kFloat32, kFloat64, kFloat16, kBFloat16}) {
      SCOPED_TRACE(row.name + " " + dtype_name(dtype));
      check_in_place(dtype, 12, row.in_place, row.composed);
    }
  }
}

TEST(ActivationInPlace, RefusesNonFloatingSelfAndBoundsItCannotHold) {
  for (const ActivationOp op :
       {ActivationOp::LeakyRelu, ActivationOp::Elu, ActivationOp::Hardtanh}) {
    const std::string name = std::string(op_name(op)) + "_";
    const Tensor t = test::make_tensor({-2, 3}, {2}, kInt64);
    try {
      ops::activation_(op, t, 0.0, 1.0);
      ADD_FAILURE() << name << " of int64 was not refused";
    } catch (const DTypeError& e) {
      EXPECT_CONTAINS(e.what(), name);
      EXPECT_CONTAINS(e.what(), "int64");
    }
    EXPECT_TRUE(test::all_close(t, {-2, 3}, 0.0, 0.0));
  }
  // 1e6 is past float16's largest finite value (65504): masked_fill refuses it too.
  const Tensor h = test::make_tensor({-2, 3}, {2}, kFloat16);
  try {
    ops::activation_(ActivationOp::Hardtanh, h, -1e6, 1.0);
    ADD_FAILURE() << "a bound float16 cannot hold was accepted";
  } catch (const Error& e) {
    EXPECT_CONTAINS(e.what(), "hardtanh_");
    EXPECT_CONTAINS(e.what(), "float16");
  }
  EXPECT_TRUE(test::all_close(h, {-2, 3}, 0.0, 0.0));
}

}  // namespace
}  // namespace leangrad
