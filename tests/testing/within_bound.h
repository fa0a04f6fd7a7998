// within_bound: every element of `got` within one absolute `bound` of `want`'s, for the tests
// that derive a single bound for a whole tensor (a sum's length times the unit roundoff times the
// largest magnitude involved, written above each test). The failure names the first element
// outside, both values and the bound. Use as EXPECT_TRUE(test::within_bound(y, want, b)) << what.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstddef>
#include <vector>

#include <leangrad/core/tensor.h>
#include "testing/tensor_testing.h"

namespace leangrad::test {

inline ::testing::AssertionResult within_bound(const Tensor& got, const Tensor& want,
                                               double bound) {
  if (!got.defined()) return ::testing::AssertionFailure() << "an undefined tensor";
  if (got.shape() != want.shape()) {
    return ::testing::AssertionFailure()
           << "shape " << got.shape() << ", expected " << want.shape();
  }
  const std::vector<double> g = to_vector(got), w = to_vector(want);
  for (std::size_t i = 0; i < g.size(); ++i) {
    if (!(std::abs(g[i] - w[i]) <= bound)) {
      return ::testing::AssertionFailure()
             << "element " << i << ": " << g[i] << " vs " << w[i] << " (bound " << bound << ")";
    }
  }
  return ::testing::AssertionSuccess();
}

}  // namespace leangrad::test
