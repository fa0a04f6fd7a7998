// result_type and can_cast (autograd/type_promotion.h) against PyTorch 1.13's tables for every
// pair of leangrad's dtypes (tests/data/type_promotion.json, make_type_promotion.py), and
// result_type against the dtypes the elementwise ops and the in-place checks actually give.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include <leangrad/autograd/functions.h>
#include <leangrad/autograd/type_promotion.h>
#include <leangrad/kernels/creation.h>
#include "testing/reference_data.h"

namespace leangrad {
namespace {

const std::vector<DType> kDTypes = {kFloat32, kFloat64, kFloat16, kBFloat16,
                                    kInt64,   kInt32,   kUInt8,   kBool};

TEST(TypePromotion, MatchesPyTorchsTables) {
  const std::vector<test::ReferenceCase> cases = test::load_reference("type_promotion.json");
  ASSERT_EQ(cases.size(), 1u);
  const nlohmann::json& p = cases[0].params;
  const auto names = p.at("dtypes").get<std::vector<std::string>>();
  ASSERT_EQ(names.size(), kDTypes.size());
  const auto both_dims = p.at("both_dims").get<std::vector<std::string>>();
  const auto with_zero_dim = p.at("with_zero_dim").get<std::vector<std::string>>();
  const auto with_int = p.at("with_int").get<std::vector<std::string>>();
  const auto with_float = p.at("with_float").get<std::vector<std::string>>();
  const auto casts = p.at("can_cast").get<std::vector<bool>>();
  for (std::size_t i = 0; i < kDTypes.size(); ++i) {
    const DType a = kDTypes[i];
    ASSERT_EQ(names[i], dtype_name(a));
    const Tensor x = ones({2}, a);
    EXPECT_EQ(dtype_name(result_type(x, 2.0)), with_int[i]) << a;
    EXPECT_EQ(dtype_name(result_type(2.0, x)), with_int[i]) << a;
    EXPECT_EQ(dtype_name(result_type(x, 2.5)), with_float[i]) << a;
    for (std::size_t j = 0; j < kDTypes.size(); ++j) {
      const DType b = kDTypes[j];
      const std::size_t at = i * kDTypes.size() + j;
      EXPECT_EQ(dtype_name(result_type(x, ones({2}, b))), both_dims[at]) << a << " " << b;
      EXPECT_EQ(dtype_name(result_type(x, ones({}, b))), with_zero_dim[at]) << a << " " << b;
      EXPECT_EQ(can_cast(a, b), casts[at]) << a << " " << b;
    }
  }
}

// What the ops give: maximum's dtype is result_type's, and an in-place mul_ is refused exactly
// where can_cast refuses its result into self.
TEST(TypePromotion, IsWhatTheOpsDo) {
  for (const DType a : kDTypes) {
    for (const DType b : kDTypes) {
      SCOPED_TRACE(std::string(dtype_name(a)) + " " + dtype_name(b));
      const Tensor x = ones({2}, a);
      const Tensor y = ones({2}, b);
      EXPECT_EQ(maximum(x, y).dtype(), result_type(x, y));
      Tensor self = x.clone();
      bool refused = false;
      try {
        self.mul_(y);
      } catch (const DTypeError&) {
        refused = true;
      }
      EXPECT_EQ(refused, !can_cast(result_type(x, y), a));
    }
    const Tensor x = ones({2}, a);
    if (a != kBool) {
      EXPECT_EQ(mul(x, 2.5).dtype(), result_type(x, 2.5));
    }
    EXPECT_EQ(maximum(x, ones({}, kFloat64)).dtype(), result_type(x, ones({}, kFloat64)));
  }
}

}  // namespace
}  // namespace leangrad
