// max_pool1d, avg_pool1d, adaptive_avg_pool1d and the modules nn::MaxPool1d, nn::AvgPool1d and
// nn::AdaptiveAvgPool1d against PyTorch 1.13 (tests/data/pool1d.json, written by make_pool1d.py):
// values, max_pool1d's indices and the gradients, over strides, padding, dilation, ceil_mode,
// count_include_pad, adaptive windows that overlap or outnumber the input, unbatched input and
// ties; a gradcheck to second order; the modules equal the functions. Bad arguments: the Pooling
// misuse table (tests/misuse/test_misuse_nn_functions.cpp).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <tuple>
#include <vector>

#include <leangrad/autograd/engine.h>
#include <leangrad/autograd/functions.h>
#include <leangrad/autograd/nn_functions.h>
#include <leangrad/nn/pooling.h>
#include "testing/gradcheck.h"
#include "testing/reference_data.h"
#include "testing/tensor_testing.h"
#include "testing/within_bound.h"

namespace leangrad {
namespace {

// A maximum is one of the inputs and its index the same choice: exact. An average sums at most
// `window` elements and divides once (the adaptive one multiplies by 1 / count instead, so the
// two differ in the last bits): within (window + 2) u of the largest input. A gradient sums at
// most `window` weights over the windows that hold an element (at most kernel of them, each a
// weight divided by a count): within (window + 2) u of the largest weight.
void expect_within(const Tensor& got, const Tensor& want, double units, double scale,
                   const char* what) {
  EXPECT_TRUE(test::within_bound(got, want, units * test::math_unit_roundoff(want.dtype()) * scale))
      << what;
}

TEST(Pool1d, MatchesPyTorch) {
  int checked = 0;
  for (const test::ReferenceCase& c : test::load_reference("pool1d.json")) {
    SCOPED_TRACE(c.name);
    ++checked;
    const auto& p = c.params;
    const std::string op = p.at("op").get<std::string>();
    Tensor x = c.at("x").clone().requires_grad_();
    Tensor y;
    double window = 0;
    if (op == "max_pool1d") {
      Tensor indices;
      std::tie(y, indices) = max_pool1d_with_indices(
          x, p.at("kernel").get<std::int64_t>(), p.at("stride").get<std::int64_t>(),
          p.at("padding").get<std::int64_t>(), p.at("dilation").get<std::int64_t>(),
          p.at("ceil_mode").get<bool>());
      EXPECT_TRUE(test::matches_within_roundoff(y, c.at("y"), {}, {.bitwise = true})) << "value";
      EXPECT_EQ(indices.dtype(), kInt64);
      EXPECT_EQ(test::to_vector(indices), test::to_vector(c.at("indices"))) << "indices";
      window = static_cast<double>(p.at("kernel").get<std::int64_t>());
    } else if (op == "avg_pool1d") {
      y = avg_pool1d(x, p.at("kernel").get<std::int64_t>(), p.at("stride").get<std::int64_t>(),
                     p.at("padding").get<std::int64_t>(), p.at("ceil_mode").get<bool>(),
                     p.at("count_include_pad").get<bool>());
      window = static_cast<double>(p.at("kernel").get<std::int64_t>());
      expect_within(y, c.at("y"), window + 2, test::max_abs(x), "value");
    } else {
      const std::int64_t size = p.at("output_size").get<std::int64_t>();
      y = adaptive_avg_pool1d(x, size);
      const std::int64_t length = x.size(-1);
      window = static_cast<double>((length + size - 1) / size + 1);
      expect_within(y, c.at("y"), window + 2, test::max_abs(x), "value");
    }
    sum(mul(y, c.at("w"))).backward();
    expect_within(x.grad(), c.at("dx"), window + 2, test::max_abs(c.at("w")), "gradient");
  }
  EXPECT_EQ(checked, 16);
}

// Distinct inputs (no ties within a finite-difference step): first and second derivatives of
// y * y for each pooling, batched and not.
TEST(Pool1d, FirstAndSecondDerivativesMatchFiniteDifferences) {
  const std::vector<test::GradcheckFn> functions = {
      [](const std::vector<Tensor>& in) {
        const Tensor y = max_pool1d(in[0], 3, 2, 1, 2, true);
        return y * y;
      },
      [](const std::vector<Tensor>& in) {
        const Tensor y = avg_pool1d(in[0], 4, 3, 2, true, false);
        return y * y;
      },
      [](const std::vector<Tensor>& in) {
        const Tensor y = adaptive_avg_pool1d(in[0], 4);
        return y * y;
      },
  };
  for (const Shape& shape : {Shape{2, 3, 9}, Shape{3, 8}}) {
    for (std::size_t i = 0; i < functions.size(); ++i) {
      SCOPED_TRACE(i);
      Tensor x = test::uniform_input(shape, -2.0, 2.0, static_cast<int>(7 + i));
      EXPECT_TRUE(test::gradcheck(functions[i], {x}));
      EXPECT_TRUE(test::gradgradcheck(functions[i], {x}));
    }
  }
}

TEST(Pool1d, ModulesAreTheFunctions) {
  const Tensor x = test::uniform_input({2, 3, 11}, -2.0, 2.0, 3);
  nn::MaxPool1d max(nn::MaxPool1dOptions(3).stride(2).padding(1).dilation(2).ceil_mode(true));
  EXPECT_TRUE(equal(max(x), max_pool1d(x, 3, 2, 1, 2, true)));
  auto [y, indices] = max->forward_with_indices(x);
  EXPECT_TRUE(equal(indices, std::get<1>(max_pool1d_with_indices(x, 3, 2, 1, 2, true))));
  EXPECT_EQ(max->extra_repr(),
            "kernel_size=[3], stride=[2], padding=[1], dilation=[2], ceil_mode=true");
  nn::AvgPool1d avg(nn::AvgPool1dOptions(4).padding(2).count_include_pad(false));
  EXPECT_TRUE(equal(avg(x), avg_pool1d(x, 4, 4, 2, false, false)));
  EXPECT_EQ(avg->extra_repr(),
            "kernel_size=[4], stride=[4], padding=[2], ceil_mode=false, count_include_pad=false");
  nn::AdaptiveAvgPool1d adaptive(5);
  EXPECT_TRUE(equal(adaptive(x), adaptive_avg_pool1d(x, 5)));
  EXPECT_EQ(adaptive->extra_repr(), "output_size=[5]");
}

}  // namespace
}  // namespace leangrad
