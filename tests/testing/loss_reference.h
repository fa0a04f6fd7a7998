// Comparing a loss case of a PyTorch reference file (tests/data/distribution_losses.json,
// margin_losses.json) with leangrad's result: every operand, the per-element loss or its
// reduction, and each operand's gradient, within a few units of roundoff of a scale the case's
// magnitudes set (test_distribution_losses.cpp, test_margin_losses.cpp).
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include <leangrad/core/tensor.h>
#include "testing/reference_data.h"
#include "testing/tensor_testing.h"

namespace leangrad::test {

// The magnitude an operand value a brings to a loss's terms: |a|, or |a log a| where the log is
// the larger (t * log(t), t * log(x) in the Poisson and KL losses).
inline double term_magnitude(double a) {
  const double m = std::abs(a);
  return m == 0.0 || !std::isfinite(m) ? 0.0 : m * std::max(1.0, std::abs(std::log(m)));
}

// Per output element, the largest term magnitude of the operands broadcast to the output's
// shape (each operand named in `operands` is expanded to `out_shape`).
inline std::vector<double> loss_term_scale(const ReferenceCase& c,
                                           const std::vector<std::string>& operands,
                                           const Shape& broadcast_shape) {
  std::int64_t n = 1;
  for (std::int64_t s : broadcast_shape)
    n *= s;
  std::vector<double> scale(static_cast<std::size_t>(n), 1.0);
  for (const std::string& name : operands) {
    const std::vector<double> v = to_vector(c.at(name).expand(broadcast_shape).contiguous());
    for (std::size_t i = 0; i < v.size(); ++i)
      scale[i] = std::max(scale[i], term_magnitude(v[i]));
  }
  return scale;
}

// `got` against PyTorch's `want` element by element: non-finite values exactly (NaN for NaN),
// finite ones within ulps units of roundoff u of max(|want|, scale), where scale is `scale`'s
// element when it has got's size (an elementwise result), else `reduced_scale` (a reduction, or
// the gradient of an operand broadcast over several elements: each of its elements adds many
// terms). Both sides evaluate the same few correctly rounded operations and libm functions in
// about the same order; a wrong formula, clamp, mask or branch is off by O(1).
inline void expect_matches_reference(const Tensor& got, const Tensor& want,
                                     const std::vector<double>& scale, double reduced_scale,
                                     double ulps, const std::string& what) {
  ASSERT_TRUE(got.defined()) << what << " is undefined";
  ASSERT_EQ(got.shape(), want.shape()) << what;
  const std::vector<double> g = to_vector(got), e = to_vector(want);
  const double u = math_unit_roundoff(got.dtype());
  for (std::size_t i = 0; i < g.size(); ++i) {
    if (!std::isfinite(e[i])) {
      EXPECT_TRUE(std::isnan(e[i]) ? std::isnan(g[i]) : g[i] == e[i])
          << what << " [" << i << "]: " << g[i] << " against PyTorch's " << e[i];
      continue;
    }
    const double s = scale.size() == g.size() ? scale[i] : reduced_scale;
    EXPECT_LE(std::abs(g[i] - e[i]), ulps * u * std::max(std::abs(e[i]), s))
        << what << " [" << i << "]: " << g[i] << " against PyTorch's " << e[i];
  }
}

}  // namespace leangrad::test
