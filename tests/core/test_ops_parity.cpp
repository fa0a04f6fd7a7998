// Tensor ops against PyTorch 1.13 where a review found them apart (tests/data/ops_parity.json,
// written by tests/data/make_ops_parity.py): logical add/mul/maximum/minimum of bool tensors,
// integer pow, clamp of integral tensors, masked_fill with a broadcasting mask, arange of
// integral dtypes, the values full and fill_ accept, and printing. Each row computes its outputs
// from the case's inputs and compares dtype, shape and values with PyTorch's; below the table,
// the inputs for which PyTorch raises (the script checks that it does) must raise here too, and
// every tensor of a print_* case must print as PyTorch's repr.
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include <leangrad/autograd/functions.h>
#include <leangrad/kernels/creation.h>
#include "testing/reference_data.h"
#include "testing/tensor_testing.h"

namespace leangrad::test {

struct ParityCase {
  std::string name;
  std::function<Tensor(const ReferenceCase&)> run;  // computes "y"
};

void PrintTo(const ParityCase& parity, std::ostream* out) {
  *out << parity.name;
}

namespace {

const std::vector<ReferenceCase>& reference_cases() {
  static const std::vector<ReferenceCase> cases = load_reference("ops_parity.json");
  return cases;
}

const ReferenceCase& reference(const std::string& name) {
  for (const ReferenceCase& c : reference_cases())
    if (c.name == name) return c;
  LG_THROW(Error, "ops_parity.json has no case '", name, "' (run tests/data/make_ops_parity.py)");
}

ParityCase value(std::string name, std::function<Tensor()> f) {
  return {std::move(name), [f](const ReferenceCase&) { return f(); }};
}
ParityCase unary(std::string name, std::function<Tensor(const Tensor&)> f) {
  return {std::move(name), [f](const ReferenceCase& c) { return f(c.at("x")); }};
}
ParityCase binary(std::string name, std::function<Tensor(const Tensor&, const Tensor&)> f) {
  return {std::move(name), [f](const ReferenceCase& c) { return f(c.at("x"), c.at("t")); }};
}

std::vector<ParityCase> parity_cases() {
  const double inf = std::numeric_limits<double>::infinity();
  return {
      // Two bool operands: or and and, bool results.
      binary("bool_add", [](const Tensor& x, const Tensor& t) { return x + t; }),
      binary("bool_mul", [](const Tensor& x, const Tensor& t) { return x * t; }),
      binary("bool_maximum", [](const Tensor& x, const Tensor& t) { return maximum(x, t); }),
      binary("bool_minimum", [](const Tensor& x, const Tensor& t) { return minimum(x, t); }),
      binary("bool_add_inplace",
             [](const Tensor& x, const Tensor& t) {
               Tensor y = x.clone();
               y.add_(t);
               return y;
             }),
      binary("bool_mul_inplace",
             [](const Tensor& x, const Tensor& t) {
               Tensor y = x.clone();
               y *= t;
               return y;
             }),
      unary("bool_add_broadcast_0d", [](const Tensor& x) { return x + full({}, 1, kBool); }),
      unary("bool_div", [](const Tensor& x) { return x / ones({4}, kBool); }),
      // Integer pow.
      unary("int64_pow_scalar", [](const Tensor& x) { return x.pow(3.0); }),
      unary("int64_pow_zero", [](const Tensor& x) { return x.pow(0.0); }),
      unary("int64_pow_negative_tensor",
            [](const Tensor& x) {
              return x.pow(tensor<std::int64_t>({-1, -1, -3, -1, -2}));
            }),
      // clamp of integral tensors.
      unary("clamp_int64_fractional_bounds", [](const Tensor& x) { return x.clamp(0.5, 2.5); }),
      unary("clamp_int64_fractional_min", [](const Tensor& x) { return x.clamp_min(1.5); }),
      unary("clamp_int32_fractional_max", [](const Tensor& x) { return x.clamp_max(1.25); }),
      unary("clamp_int64_integral_bounds", [](const Tensor& x) { return x.clamp(1, 2); }),
      unary("clamp_min_above_max", [](const Tensor& x) { return x.clamp(2.5, 1.5); }),
      // masked_fill broadcasts the tensor and the mask together.
      {"masked_fill_broadcast_mask",
       [](const ReferenceCase& c) { return c.at("x").masked_fill(c.at("mask"), -1.0); }},
      unary("masked_fill_int64_fractional_value",
            [](const Tensor& x) {
              return x.masked_fill(tensor<bool>({true, false}), 2.5);
            }),
      // arange of integral dtypes.
      value("arange_int64_fractional_step", [] { return arange(0, 5, 1.5, kInt64); }),
      value("arange_int64_fractional_start", [] { return arange(0.5, 5, 1, kInt64); }),
      value("arange_int64_negative_start", [] { return arange(-2.5, 2, 1.5, kInt64); }),
      value("arange_int32_fractional_step", [] { return arange(0, 5, 1.5, kInt32); }),
      value("arange_int32_negative_start", [] { return arange(-2.5, 2, 1.5, kInt32); }),
      value("arange_int32_fractional_end", [] { return arange(0, 2.5, 1, kInt32); }),
      value("arange_uint8_fractional_end", [] { return arange(0, 2.5, 1, kUInt8); }),
      value("arange_int64_negative_step", [] { return arange(5, 0.5, -1.5, kInt64); }),
      value("arange_float32_fractional_step", [] { return arange(0, 3, 0.1); }),
      // Values full and fill_ accept.
      value("full_uint8_minus_one", [] { return full({2}, -1, kUInt8); }),
      value("full_uint8_minus_255", [] { return full({2}, -255, kUInt8); }),
      value("full_float16_largest", [] { return full({2}, 65504, kFloat16); }),
      value("full_float16_infinity", [inf] { return full({2}, inf, kFloat16); }),
      value("full_bool_two", [] { return full({2}, 2, kBool); }),
      value("fill_int64_fractional", [] { return zeros({2}, kInt64).fill_(-2.7); }),
  };
}

class OpsParity : public ::testing::TestWithParam<ParityCase> {};

// Integral and bool results exactly; floating ones within one rounding of their dtype
// (tolerance_for): PyTorch computes a float32 arange in float32, where leangrad rounds start +
// i * step once from double, so element 9 of arange(0, 3, 0.1) is an ulp apart.
TEST_P(OpsParity, MatchesPyTorch) {
  const Tensor& want = reference(GetParam().name).at("y");
  const Tensor actual = GetParam().run(reference(GetParam().name));
  ASSERT_TRUE(actual.defined());
  EXPECT_EQ(actual.dtype(), want.dtype());
  ASSERT_EQ(actual.shape(), want.shape());
  EXPECT_TRUE(all_close(actual, to_vector(want)));
}

INSTANTIATE_TEST_SUITE_P(OpsParity, OpsParity, ::testing::ValuesIn(parity_cases()),
                         [](const ::testing::TestParamInfo<ParityCase>& info) {
                           return info.param.name;
                         });

// Every case PyTorch wrote has a row, so the JSON and the table cannot drift apart.
TEST(OpsParityTable, CoversEveryReferenceCase) {
  std::map<std::string, int> rows;
  for (const ParityCase& parity : parity_cases())
    ++rows[parity.name];
  std::size_t value_cases = 0;
  for (const ReferenceCase& c : reference_cases()) {
    if (c.name.rfind("print_", 0) == 0) continue;  // TensorPrinting.MatchesPyTorchRepr
    ++value_cases;
    EXPECT_EQ(rows[c.name], 1) << "ops_parity.json case '" << c.name << "'";
  }
  EXPECT_EQ(rows.size(), value_cases);
}

// PyTorch's repr of each print_* tensor (or of the op the case names applied to it), with
// "dtype=torch.float64" written "dtype=float64" and "grad_fn=<MulBackward0>" written
// "grad_fn=<MulBackward>" (Note [PyTorch's print format] in core/tensor_print.cpp).
TEST(TensorPrinting, MatchesPyTorchRepr) {
  int printed = 0;
  int with_grad_fn = 0;
  for (const ReferenceCase& c : reference_cases()) {
    if (c.name.rfind("print_", 0) != 0) continue;
    SCOPED_TRACE(c.name);
    Tensor x = c.at("x").clone();
    if (c.params.at("requires_grad").get<bool>()) x.requires_grad_();
    const std::string op = c.params.value("op", "");
    if (op == "mul_2") {
      x = x * 2;
    } else if (op == "sum") {
      x = x.sum();
    } else if (op == "exp") {
      x = x.exp();
    } else {
      ASSERT_EQ(op, "") << "an op make_ops_parity.py's PRINT_OPS has and this test lacks";
    }
    std::string want = c.params.at("repr").get<std::string>();
    for (std::size_t at = want.find("torch."); at != std::string::npos; at = want.find("torch."))
      want.erase(at, 6);
    if (const std::size_t at = want.find("Backward0>"); at != std::string::npos) {
      want.erase(at + 8, 1);
      ++with_grad_fn;
    }
    EXPECT_EQ(x.str(), want);
    ++printed;
  }
  EXPECT_GE(printed, 40);
  EXPECT_EQ(with_grad_fn, 3);
}

// The message of the Error `f` throws (empty, and a failure, when it throws none).
template <typename E = Error, typename F>
std::string error_of(F f) {
  try {
    f();
  } catch (const E& e) {
    return e.what();
  }
  ADD_FAILURE() << "no error thrown";
  return "";
}

// make_ops_parity.py checks that PyTorch raises for each of these.
TEST(OpsParityErrors, BoolSubAndPow) {
  const Tensor x = tensor<bool>({true, false});
  EXPECT_CONTAINS(error_of<DTypeError>([&] { x - x; }), "sub");
  EXPECT_CONTAINS(error_of<DTypeError>([&] { x.pow(x); }), "pow");
  EXPECT_CONTAINS(error_of<DTypeError>([&] { x.clone().add_(ones({2}, kInt64)); }),
                  "result type int64 can't be cast to the desired output type bool");
}

TEST(OpsParityErrors, IntegerToNegativeScalarPower) {
  const Tensor x = tensor<std::int64_t>({2, 1, -1});
  EXPECT_CONTAINS(error_of<DTypeError>([&] { x.pow(-1.0); }),
                  "integers to negative integer powers are not allowed");
  EXPECT_CONTAINS(error_of<DTypeError>([&] { x.to(kUInt8).pow(-2.0); }), "uint8");
  EXPECT_CONTAINS(error_of<DTypeError>([&] { pow(x.to(kInt32), -1.0); }), "int32");
  // A float tensor, or a tensor of exponents, is not refused.
  EXPECT_TRUE(all_close(x.to(kFloat32).pow(-1.0), {0.5, 1.0, -1.0}));
}

TEST(OpsParityErrors, ClampBoundOutsideTheDtype) {
  EXPECT_CONTAINS(error_of([] { zeros({2}, kUInt8).clamp_max(300); }), "clamp: bound 300");
}

TEST(OpsParityErrors, MaskedFillValueOutsideTheDtype) {
  EXPECT_CONTAINS(error_of([] {
                    zeros({2}, kUInt8).masked_fill(tensor<bool>({true, false}), 300);
                  }),
                  "masked_fill: value 300 cannot be converted to dtype uint8");
}

// An int64 range is computed in int64, as PyTorch's: beyond 2^53 every integer is there (in
// double, [2^53, 2^53 + 8) held repeats and its own end), down to INT64_MIN's neighbourhood.
TEST(OpsParity, ArangeOfInt64IsExactBeyond2To53) {
  const Tensor r = arange(0x1p53, 0x1p53 + 8, 1, kInt64);
  ASSERT_EQ(r.numel(), 8);
  for (std::int64_t i = 0; i < 8; ++i)
    EXPECT_EQ(r.data_ptr<std::int64_t>()[i], (std::int64_t{1} << 53) + i);
  const Tensor down = arange(-0x1p63 + 4096, -0x1p63, -1024, kInt64);
  ASSERT_EQ(down.numel(), 4);
  for (std::int64_t i = 0; i < 4; ++i)
    EXPECT_EQ(down.data_ptr<std::int64_t>()[i],
              std::numeric_limits<std::int64_t>::min() + 4096 - 1024 * i);
}

TEST(OpsParityErrors, ArangeStepTruncatedToZero) {
  EXPECT_CONTAINS(error_of([] { arange(0, 5, 0.5, kInt64); }), "step must be non-zero");
}

TEST(OpsParityErrors, FullAndFillValuesOutsideTheDtype) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  const std::vector<std::pair<double, DType>> cases = {
      {300, kUInt8}, {-256, kUInt8},    {3e9, kInt32},    {nan, kInt64},
      {inf, kInt64}, {65505, kFloat16}, {1e300, kFloat32}};
  for (const auto& c : cases) {
    const double v = c.first;  // a plain variable: Clang 14 cannot capture a structured binding
    const DType dtype = c.second;
    SCOPED_TRACE(dtype_name(dtype));
    EXPECT_CONTAINS(error_of([&] { full({2}, v, dtype); }), "without overflow");
  }
  EXPECT_CONTAINS(error_of([] { zeros({2}, kUInt8).fill_(-1.5); }),
                  "fill_: value -1.5 cannot be converted to dtype uint8 without overflow");
  EXPECT_CONTAINS(error_of([] { zeros({2}, kUInt8).fill_(255.5); }), "without overflow");
  EXPECT_CONTAINS(error_of([] { full_like(zeros({2}, kUInt8), 300); }),
                  "full: value 300 cannot be converted");
  // A refused fill_ leaves the tensor as it was.
  Tensor t = full({2}, 7, kUInt8);
  EXPECT_THROW(t.fill_(256), Error);
  EXPECT_TRUE(all_close(t, {7, 7}));
}

}  // namespace
}  // namespace leangrad::test
