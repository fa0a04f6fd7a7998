// GroupNorm (kernels/group_norm_math.h, kernels/ops_group_norm.cpp, autograd/nn_functions.cpp) on
// the CPU: PyTorch reference values (output and the gradients of x, weight and bias), float64
// gradchecks over the shapes that exercise the layout (affine or not, one group, one channel per
// group, 1-D and 2-D spatial dims, (N, C) input, batch 1, non-contiguous input), Welford's
// stability, 16-bit dtypes and errors. CUDA against this CPU path: op_table_tanhexp_group_norm.cpp.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <iostream>
#include <vector>

#include <leangrad/autograd/nn_functions.h>
#include <leangrad/core/error.h>
#include <leangrad/kernels/creation.h>
#include <leangrad/kernels/group_norm_math.h>
#include <leangrad/kernels/ops.h>
#include "testing/gradcheck.h"
#include "testing/reference_data.h"
#include "testing/tensor_testing.h"

namespace leangrad::test {
namespace {

TEST(GroupNorm, MatchesPyTorchReference) {
  int checked = 0;
  for (const ReferenceCase& c : load_reference("tanhexp_group_norm.json")) {
    if (c.name.rfind("group_norm", 0) != 0) continue;
    SCOPED_TRACE(c.name);
    const bool affine = c.params.at("affine").get<bool>();
    const std::int64_t groups = c.params.at("num_groups").get<std::int64_t>();
    const double eps = c.params.at("eps").get<double>();
    Tensor x = c.at("x").clone().requires_grad_();
    Tensor w = affine ? c.at("weight").clone().requires_grad_() : Tensor();
    Tensor b = affine ? c.at("bias").clone().requires_grad_() : Tensor();
    Tensor y = group_norm(x, groups, w, b, eps);
    y.backward(c.at("g"));
    constexpr double kRtol = 1.3e-6;  // PyTorch's float32 defaults
    constexpr double kAtol = 1e-5;
    EXPECT_TRUE(all_close(y, to_vector(c.at("y")), kRtol, kAtol));
    EXPECT_TRUE(all_close(x.grad(), to_vector(c.at("dx")), kRtol, kAtol));
    if (affine) {
      EXPECT_TRUE(all_close(w.grad(), to_vector(c.at("dweight")), kRtol, kAtol));
      EXPECT_TRUE(all_close(b.grad(), to_vector(c.at("dbias")), kRtol, kAtol));
    }
    ++checked;
  }
  EXPECT_EQ(checked, 3);
}

// Welford statistics of `values` in float: one welford_update per value (the former CUDA
// kernels' and the CPU reference's way), or vectors of kWidth merged with welford_of_values
// (the CUDA kernels' way now: Note [GroupNorm strategies]).
kernels::WelfordState<float> welford_per_value(const std::vector<float>& values) {
  kernels::WelfordState<float> s;
  for (float v : values)
    s = kernels::welford_update(s, v);
  return s;
}
template <int kWidth>
kernels::WelfordState<float> welford_per_vector(const std::vector<float>& values) {
  kernels::WelfordState<float> s;
  for (std::size_t i = 0; i < values.size(); i += kWidth) {
    float v[kWidth];
    for (int k = 0; k < kWidth; ++k)
      v[k] = values[i + k];
    s = kernels::welford_merge(s, kernels::welford_of_values<kWidth>(v));
  }
  return s;
}

// The per-vector statistics against the per-value ones and a double two-pass reference, on
// groups of 4 .. 65536 values with a mean up to 8 standard deviations off 0. The bound is the
// forward error of Welford's updating algorithm (Chan, Golub & LeVeque, 1983): relative error of
// M2 within n * kappa * eps, kappa = sqrt(1 + mean^2 / var) its condition number; the mean
// within n * eps relative to sqrt(mean^2 + var).
TEST(GroupNorm, PerVectorWelfordStatisticsMatchPerValueWelford) {
  constexpr double kEps = 5.9604644775390625e-8;  // 2^-24
  std::uint64_t seed = 1;
  for (std::int64_t n : {8, 64, 1000, 4096, 65536}) {
    for (double offset : {0.0, 3.0, -8.0}) {
      SCOPED_TRACE(::testing::Message() << "n " << n << ", mean " << offset);
      const std::vector<double> draws = to_vector(uniform_input({n}, -1.7, 1.7, seed++));
      std::vector<float> values;
      for (double d : draws)
        values.push_back(static_cast<float>(d + offset));
      double sum = 0;
      for (float v : values)
        sum += v;
      const double mean = sum / static_cast<double>(n);
      double m2 = 0;
      for (float v : values)
        m2 += (v - mean) * (v - mean);
      const double kappa = std::sqrt(1.0 + mean * mean * static_cast<double>(n) / m2);
      const double m2_bound = static_cast<double>(n) * kappa * kEps * m2;
      const double mean_bound =
          static_cast<double>(n) * kEps * std::sqrt(mean * mean + m2 / static_cast<double>(n));
      for (const kernels::WelfordState<float>& s :
           {welford_per_value(values), welford_per_vector<4>(values),
            welford_per_vector<8>(values)}) {
        EXPECT_EQ(s.count, n);
        EXPECT_NEAR(s.mean, mean, mean_bound);
        EXPECT_NEAR(s.m2, m2, m2_bound);
      }
      // The two float estimates are far closer to each other than the bound says.
      const kernels::WelfordState<float> a = welford_per_value(values);
      const kernels::WelfordState<float> b = welford_per_vector<4>(values);
      std::cout << "[ GroupNorm ] n " << n << ", mean " << offset << ": M2 relative difference "
                << std::fabs(a.m2 - b.m2) / m2 << " (bound " << m2_bound / m2 << ")\n";
    }
  }
}

// gradcheck of group_norm(x, groups, w, b) over every input that requires grad.
::testing::AssertionResult check_group_norm(const Tensor& x, std::int64_t groups, bool affine,
                                            std::uint64_t seed = 0) {
  const std::int64_t channels = x.shape()[1];
  const Tensor w = affine ? uniform_input({channels}, 0.5, 1.5, seed + 1) : Tensor();
  const Tensor b = affine ? uniform_input({channels}, -1.0, 1.0, seed + 2) : Tensor();
  return gradcheck(
      [groups](const std::vector<Tensor>& in) { return group_norm(in[0], groups, in[1], in[2]); },
      {x, w, b});
}

TEST(GroupNorm, GradcheckAffine2dSpatial) {
  EXPECT_TRUE(check_group_norm(uniform_input({2, 6, 3, 4}, -2.0, 2.0, 1), 3, true));
}

TEST(GroupNorm, GradcheckWithoutAffine) {
  EXPECT_TRUE(check_group_norm(uniform_input({2, 6, 3, 4}, -2.0, 2.0, 2), 2, false));
}

TEST(GroupNorm, GradcheckOneGroup) {
  EXPECT_TRUE(check_group_norm(uniform_input({2, 4, 5}, -1.0, 3.0, 3), 1, true));
}

TEST(GroupNorm, GradcheckChannelsEqualGroups1dSpatial) {
  EXPECT_TRUE(check_group_norm(uniform_input({3, 4, 6}, -2.0, 2.0, 4), 4, true));
}

TEST(GroupNorm, GradcheckNoSpatialDims) {
  EXPECT_TRUE(check_group_norm(uniform_input({3, 6}, -2.0, 2.0, 5), 2, true));
}

TEST(GroupNorm, GradcheckBatchOne) {
  EXPECT_TRUE(check_group_norm(uniform_input({1, 4, 3, 3}, -2.0, 2.0, 6), 2, true));
}

TEST(GroupNorm, GradcheckNonContiguousInput) {
  Tensor x = uniform_input({2, 4, 5, 3}, -2.0, 2.0, 7).detach().transpose(2, 3);  // (2, 4, 3, 5)
  x.requires_grad_();
  ASSERT_FALSE(x.is_contiguous());
  EXPECT_TRUE(check_group_norm(x, 2, true));
}

TEST(GroupNorm, GradcheckWeightWithoutBias) {
  const Tensor x = uniform_input({2, 4, 3}, -2.0, 2.0, 8);
  const Tensor w = uniform_input({4}, 0.5, 1.5, 9);
  EXPECT_TRUE(gradcheck(
      [](const std::vector<Tensor>& in) { return group_norm(in[0], 2, in[1], Tensor()); }, {x, w}));
}

// A float32 group of 100000 values with mean 1000 and std ~0.3: E[x^2] - E[x]^2 in float would
// lose the variance entirely; Welford keeps float32 within float rounding of the float64 result.
TEST(GroupNorm, WelfordStatisticsAreStableForLargeOffsets) {
  const Tensor x64 = uniform_input({1, 2, 50000}, 999.5, 1000.5, 11).detach();
  const ops::GroupNormOutput r64 = ops::group_norm(x64, 1, Tensor(), Tensor(), 1e-5);
  const ops::GroupNormOutput r32 = ops::group_norm(x64.to(kFloat32), 1, Tensor(), Tensor(), 1e-5);
  EXPECT_EQ(r32.mean.dtype(), kFloat32);
  EXPECT_TRUE(all_close(r32.mean, to_vector(r64.mean), 1e-6, 0));
  EXPECT_TRUE(all_close(r32.rstd, to_vector(r64.rstd), 1e-4, 0));
}

TEST(GroupNorm, WelfordMergeEqualsOnePass) {
  using kernels::WelfordState;
  const std::vector<double> values = {3.0, -1.0, 4.0, 1.5, -5.0, 9.0, 2.5};
  WelfordState<double> all, left, right;
  for (std::size_t i = 0; i < values.size(); ++i) {
    all = kernels::welford_update(all, values[i]);
    if (i < 3)
      left = kernels::welford_update(left, values[i]);
    else
      right = kernels::welford_update(right, values[i]);
  }
  const WelfordState<double> merged = kernels::welford_merge(left, right);
  EXPECT_EQ(merged.count, all.count);
  EXPECT_NEAR(merged.mean, all.mean, 1e-14);
  EXPECT_NEAR(merged.m2, all.m2, 1e-12);
  const WelfordState<double> with_empty = kernels::welford_merge(WelfordState<double>{}, all);
  EXPECT_EQ(with_empty.mean, all.mean);
}

TEST(GroupNorm, SixteenBitDtypesMatchFloat32Rounded) {
  const Tensor x = uniform_input({2, 6, 5, 5}, -2.0, 3.0, 12).detach().to(kFloat32);
  const Tensor w = uniform_input({6}, 0.5, 1.5, 13).detach().to(kFloat32);
  const Tensor b = uniform_input({6}, -1.0, 1.0, 14).detach().to(kFloat32);
  for (DType dtype : {kFloat16, kBFloat16}) {
    SCOPED_TRACE(dtype_name(dtype));
    const Tensor xh = x.to(dtype);
    const Tensor expected = ops::group_norm(xh.to(kFloat32), 3, w.to(dtype).to(kFloat32),
                                            b.to(dtype).to(kFloat32), 1e-5)
                                .output.to(dtype);
    const ops::GroupNormOutput r = ops::group_norm(xh, 3, w.to(dtype), b.to(dtype), 1e-5);
    EXPECT_EQ(r.output.dtype(), dtype);
    EXPECT_EQ(r.mean.dtype(), kFloat32);
    EXPECT_TRUE(all_close(r.output, to_vector(expected)));
  }
}

TEST(GroupNorm, BackwardComputesOnlyWhatIsAsked) {
  const Tensor x = uniform_input({2, 4, 3}, -1.0, 1.0, 15).detach();
  const Tensor w = ones({4}, TensorOptions(kFloat64));
  const ops::GroupNormOutput f = ops::group_norm(x, 2, w, Tensor(), 1e-5);
  const ops::GroupNormGrads g = ops::group_norm_backward(ones_like(x), x, f.mean, f.rstd, w, 2,
                                                         /*need_input=*/false,
                                                         /*need_weight=*/true,
                                                         /*need_bias=*/false);
  EXPECT_FALSE(g.grad_input.defined());
  EXPECT_TRUE(g.grad_weight.defined());
  EXPECT_FALSE(g.grad_bias.defined());
  // dy = 1 everywhere: dweight[c] sums xhat over channel c, and xhat sums to 0 over each group.
  const std::vector<double> dw = to_vector(g.grad_weight);
  EXPECT_NEAR(dw[0] + dw[1], 0.0, 1e-12);
  EXPECT_NEAR(dw[2] + dw[3], 0.0, 1e-12);
  EXPECT_GT(std::fabs(dw[0]), 1e-3);
}

TEST(GroupNorm, RejectsBadArguments) {
  const Tensor x = zeros({2, 6, 4});
  EXPECT_THROW(group_norm(x, 4), ShapeError);             // 4 does not divide 6
  EXPECT_THROW(group_norm(zeros({6}), 2), ShapeError);    // no (N, C)
  EXPECT_THROW(group_norm(x, 3, ones({5})), ShapeError);  // weight not (C,)
  EXPECT_THROW(group_norm(x, 3, ones({6}, TensorOptions(kFloat64))), DTypeError);
  EXPECT_THROW(group_norm(zeros({2, 6}, TensorOptions(kInt64)), 3), DTypeError);
}

}  // namespace
}  // namespace leangrad::test
