// amp::AutocastGuard (autograd/autocast.h): the dtype every op gives under the policy of Note
// [Autocast policy], values against float64 loops over the rounded operands, the cast cache,
// gradients reaching float32 parameters, nesting, backward and checkpoint recompute.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include <leangrad/autograd/activations.h>
#include <leangrad/autograd/autocast.h>
#include <leangrad/autograd/checkpoint.h>
#include <leangrad/autograd/functions.h>
#include <leangrad/autograd/grad_mode.h>
#include <leangrad/autograd/graph.h>
#include <leangrad/autograd/nn_functions.h>
#include <leangrad/core/generator.h>
#include <leangrad/kernels/creation.h>
#include "testing/reference_data.h"
#include "testing/tensor_testing.h"

namespace leangrad {
namespace {

using amp::AutocastGuard;
using test::to_vector;

Tensor param(const Shape& shape) {
  return randn(shape).requires_grad_(true);
}

// x rounded to `dtype` and back to float32 (the operand a lower-precision op really sees).
Tensor rounded(const Tensor& x, DType dtype) {
  return x.detach().to(dtype).to(kFloat32);
}

// Relative distance of one rounding to a 16-bit float: 2^-8 for bfloat16 (8 significand bits),
// 2^-11 for float16.
double unit_roundoff(DType dtype) {
  return dtype == kBFloat16 ? std::ldexp(1.0, -8) : std::ldexp(1.0, -11);
}

class AutocastPolicy : public ::testing::TestWithParam<DType> {};

TEST_P(AutocastPolicy, EachOpGivesThePolicysDtype) {
  const DType low = GetParam();
  manual_seed(1);
  const Tensor x = randn({4, 8});
  const Tensor w = param({6, 8});
  const Tensor b = param({6});
  const Tensor image = randn({2, 4, 5, 5});
  const Tensor kernel = param({4, 4, 3, 3});
  const Tensor target = tensor(std::vector<std::int64_t>{0, 2, 1, 5}, {4});

  AutocastGuard autocast(low);
  // Lower precision.
  EXPECT_EQ(matmul(x, w.transpose(0, 1)).dtype(), low);
  const Tensor y = linear(x, w, b);
  EXPECT_EQ(y.dtype(), low);
  EXPECT_EQ(conv2d(image, kernel, Tensor(), {1, 1}, {1, 1}).dtype(), low);
  // float32 whatever comes in.
  EXPECT_EQ(softmax(y, 1).dtype(), kFloat32);
  EXPECT_EQ(log_softmax(y, 1).dtype(), kFloat32);
  EXPECT_EQ(cross_entropy(y, target).dtype(), kFloat32);
  EXPECT_EQ(nll_loss(y, target).dtype(), kFloat32);
  EXPECT_EQ(mse_loss(y, y.detach().to(kFloat32)).dtype(), kFloat32);
  EXPECT_EQ(l1_loss(y, y.detach()).dtype(), kFloat32);
  EXPECT_EQ(sum(y).dtype(), kFloat32);
  EXPECT_EQ(exp(y).dtype(), kFloat32);
  EXPECT_EQ((2.0 / y).dtype(), kFloat32);  // torch's __rdiv__
  EXPECT_EQ(log(y.abs()).dtype(), kFloat32);
  EXPECT_EQ(pow(y, 2.0).dtype(), kFloat32);
  const Tensor unit = tanh(y);  // in the domains of asin and acos
  for (const Tensor& t : {tan(y), asin(unit), acos(unit), sinh(y), cosh(y)})
    EXPECT_EQ(t.dtype(), kFloat32);
  // Not in PyTorch's float32 list: the input's dtype.
  for (const Tensor& t : {atan(y), asinh(y), atanh(unit), exp2(y), atan2(y, y)})
    EXPECT_EQ(t.dtype(), low);
  // The input's dtype (float32 math inside the fused kernels).
  const Tensor h = conv2d(image, kernel, Tensor(), {1, 1}, {1, 1});
  EXPECT_EQ(group_norm(h, 2, param({4}), param({4})).dtype(), low);
  EXPECT_EQ(tanhexp(h).dtype(), low);
  EXPECT_EQ(relu(y).dtype(), low);
  for (const Tensor& t : {elu(y), selu(y), leaky_relu(y), hardtanh(y), gelu(y), silu(y), mish(y)})
    EXPECT_EQ(t.dtype(), low);
  EXPECT_EQ(softplus(y).dtype(), kFloat32);  // in PyTorch's float32 list
  EXPECT_EQ(mean(y, {1}).dtype(), low);      // in none of PyTorch's lists
  EXPECT_EQ(y.var({1}).dtype(), low);
  EXPECT_EQ(max_pool2d(h, {2, 2}).dtype(), low);
  EXPECT_EQ(adaptive_max_pool2d(h, {2, 3}).dtype(), low);
  // Mixed operands promote to the widest.
  EXPECT_EQ(add(y, randn({6})).dtype(), kFloat32);
  EXPECT_EQ(mul(y, y).dtype(), low);
  // float64 is never cast, not even by a lower-precision op.
  const Tensor d = randn({3, 3}, TensorOptions(kFloat64));
  EXPECT_EQ(matmul(d, d).dtype(), kFloat64);
  EXPECT_EQ(sum(d).dtype(), kFloat64);
}

INSTANTIATE_TEST_SUITE_P(LowerPrecisions, AutocastPolicy, ::testing::Values(kBFloat16, kFloat16),
                         [](const auto& info) { return std::string(dtype_name(info.param)); });

TEST(Autocast, NothingIsCastOutsideTheGuardOrWhenDisabledInside) {
  manual_seed(2);
  const Tensor a = randn({3, 4});
  const Tensor b = randn({4, 2});
  EXPECT_EQ(matmul(a, b).dtype(), kFloat32);
  EXPECT_FALSE(amp::is_autocast_enabled());
  {
    AutocastGuard outer(kBFloat16);
    EXPECT_TRUE(amp::is_autocast_enabled());
    {
      AutocastGuard off(kBFloat16, std::nullopt, /*enabled=*/false);
      EXPECT_FALSE(amp::is_autocast_enabled());
      EXPECT_EQ(matmul(a, b).dtype(), kFloat32);
    }
    EXPECT_EQ(matmul(a, b).dtype(), kBFloat16);
    {
      AutocastGuard inner(kFloat16);
      EXPECT_EQ(matmul(a, b).dtype(), kFloat16);
    }
    EXPECT_EQ(amp::autocast_state(DeviceType::CPU).dtype, kBFloat16);
  }
  EXPECT_FALSE(amp::is_autocast_enabled());
  EXPECT_EQ(matmul(a, b).dtype(), kFloat32);
}

TEST(Autocast, AGuardForAnotherDeviceTypeLeavesCpuOpsAlone) {
  manual_seed(3);
  const Tensor a = randn({3, 4});
  AutocastGuard cuda_only(kBFloat16, DeviceType::CUDA);
  EXPECT_EQ(matmul(a, a.transpose(0, 1)).dtype(), kFloat32);
  AutocastGuard cpu(kBFloat16, DeviceType::CPU);
  EXPECT_EQ(matmul(a, a.transpose(0, 1)).dtype(), kBFloat16);
}

// The case of tests/data/amp.json named `name`.
test::ReferenceCase reference_case(const std::string& name) {
  for (test::ReferenceCase& c : test::load_reference("amp.json"))
    if (c.name == name) return c;
  LG_THROW(Error, "amp.json has no case ", name);
}

// Each device type has its own setting, as in PyTorch: torch.autocast("cuda", enabled=False)
// inside torch.autocast("cpu") leaves the CPU ops autocast (tests/data/make_amp.py recorded the
// bfloat16 product torch 1.13 gave there). Its values are not the reference: PyTorch 1.13's CPU
// bfloat16 mm rounds partial sums to 16 bits (3.078 where the exact product is 3.069); ours is the
// float64 product of the rounded operands within one rounding (2^-8 relative) plus the float32
// accumulation error K 2^-24 sum |a b|.
TEST(Autocast, AGuardForOneDeviceTypeLeavesTheOthersSetting) {
  const test::ReferenceCase c = reference_case("autocast_nested_cuda_off");
  const Tensor& a = c.at("a");
  const Tensor& b = c.at("b");
  const Tensor& expected = c.at("y");
  ASSERT_EQ(expected.dtype(), kBFloat16);
  AutocastGuard cpu(kBFloat16, DeviceType::CPU);
  {
    AutocastGuard cuda_off(kFloat16, DeviceType::CUDA, /*enabled=*/false);
    EXPECT_TRUE(amp::is_autocast_enabled(DeviceType::CPU));
    EXPECT_FALSE(amp::is_autocast_enabled(DeviceType::CUDA));
    const Tensor y = matmul(a, b);
    ASSERT_EQ(y.dtype(), expected.dtype());
    const std::vector<double> as = to_vector(rounded(a, kBFloat16)),
                              bs = to_vector(rounded(b, kBFloat16)), ys = to_vector(y);
    const std::int64_t rows = a.size(0), inner = a.size(1), cols = b.size(1);
    for (std::int64_t i = 0; i < rows; ++i) {
      for (std::int64_t j = 0; j < cols; ++j) {
        double exact = 0, magnitude = 0;
        for (std::int64_t k = 0; k < inner; ++k) {
          exact += as[i * inner + k] * bs[k * cols + j];
          magnitude += std::fabs(as[i * inner + k] * bs[k * cols + j]);
        }
        const double bound = std::ldexp(std::fabs(exact), -8) + inner * std::ldexp(magnitude, -24);
        EXPECT_NEAR(ys[i * cols + j], exact, bound) << "at (" << i << ", " << j << ")";
      }
    }
  }
  {
    AutocastGuard cuda(kFloat16, DeviceType::CUDA);
    EXPECT_EQ(amp::autocast_state(DeviceType::CUDA).dtype, kFloat16);
    EXPECT_EQ(amp::autocast_state(DeviceType::CPU).dtype, kBFloat16);
    EXPECT_EQ(matmul(a, b).dtype(), kBFloat16);
    {
      AutocastGuard all_off(kBFloat16, std::nullopt, /*enabled=*/false);  // every device type
      EXPECT_FALSE(amp::is_autocast_enabled());
      EXPECT_EQ(matmul(a, b).dtype(), kFloat32);
    }
    EXPECT_TRUE(amp::is_autocast_enabled(DeviceType::CUDA));
  }
  EXPECT_FALSE(amp::is_autocast_enabled(DeviceType::CUDA));
  EXPECT_EQ(matmul(a, b).dtype(), kBFloat16);
}

// mean keeps its input's dtype under autocast (it is in none of PyTorch's lists), accumulating
// in float32 and rounding once, as torch 1.13 (tests/data/make_amp.py): within one bfloat16 ulp.
TEST(Autocast, MeanKeepsItsInputsDtypeAsInPyTorch) {
  const test::ReferenceCase c = reference_case("autocast_mean");
  const Tensor& x = c.at("x");
  ASSERT_EQ(x.dtype(), kBFloat16);
  AutocastGuard autocast(kBFloat16);
  const Tensor m = mean(x);
  ASSERT_EQ(m.dtype(), c.at("y").dtype());
  const double want = c.at("y").item<float>();
  EXPECT_NEAR(m.item<float>(), want, std::ldexp(std::fabs(want), -7));
}

// A scalar divided by a 16-bit tensor runs in float32 (torch's __rdiv__ is in PyTorch's CUDA fp32
// list): each element is float32's correctly rounded 2 / x, which the float64 quotient rounded
// to float32 equals (float64 carries more than twice float32's bits).
TEST_P(AutocastPolicy, AScalarDividedByATensorRunsInFloat32) {
  const DType low = GetParam();
  manual_seed(9);
  const Tensor x = randn({17}).to(low);
  Tensor y;
  {
    AutocastGuard autocast(low);
    y = 2.0 / x;
  }
  ASSERT_EQ(y.dtype(), kFloat32);
  const std::vector<double> xs = to_vector(x), ys = to_vector(y);
  for (std::size_t i = 0; i < xs.size(); ++i)
    EXPECT_EQ(ys[i], static_cast<float>(2.0 / xs[i])) << "at " << i;
}

TEST(Autocast, RefusesADtypeThatIsNotSixteenBitFloat) {
  for (DType dtype : {kFloat32, kFloat64, kInt64}) {
    try {
      AutocastGuard guard(dtype);
      FAIL() << "AutocastGuard(" << dtype << ") did not throw";
    } catch (const DTypeError& e) {
      EXPECT_CONTAINS(e.what(), "AutocastGuard");
      EXPECT_CONTAINS(e.what(), dtype_name(dtype));
    }
    EXPECT_FALSE(amp::is_autocast_enabled());
  }
}

// linear under autocast is the product of the rounded operands, accumulated in float32 and
// rounded once: within one rounding of the float64 product of the rounded operands, plus the
// float32 accumulation error K 2^-24 sum |a b|.
TEST_P(AutocastPolicy, LinearEqualsTheProductOfTheRoundedOperands) {
  const DType low = GetParam();
  manual_seed(4);
  constexpr std::int64_t kIn = 16, kOut = 5, kBatch = 7;
  const Tensor x = randn({kBatch, kIn});
  const Tensor w = param({kOut, kIn});
  const Tensor b = param({kOut});
  Tensor y;
  {
    AutocastGuard autocast(low);
    y = linear(x, w, b);
  }
  const std::vector<double> xs = to_vector(rounded(x, low)), ws = to_vector(rounded(w, low)),
                            bs = to_vector(rounded(b, low)), ys = to_vector(y);
  const double u = unit_roundoff(low);
  for (std::int64_t i = 0; i < kBatch; ++i) {
    for (std::int64_t j = 0; j < kOut; ++j) {
      double exact = 0, magnitude = 0;
      for (std::int64_t k = 0; k < kIn; ++k) {
        exact += xs[i * kIn + k] * ws[j * kIn + k];
        magnitude += std::fabs(xs[i * kIn + k] * ws[j * kIn + k]);
      }
      // The product is rounded to `low`, then the bias added and rounded again.
      const double bound = 2 * u * (std::fabs(exact) + std::fabs(bs[j])) +
                           kIn * std::ldexp(1.0, -24) * magnitude + u * std::fabs(bs[j]);
      EXPECT_NEAR(ys[i * kOut + j], exact + bs[j], bound) << "at (" << i << ", " << j << ")";
    }
  }
}

// The float32 parameters get float32 gradients through the casts, equal (bitwise) to the
// gradients of the same casts written by hand.
TEST_P(AutocastPolicy, Float32ParametersGetTheGradientsOfTheExplicitCasts) {
  const DType low = GetParam();
  manual_seed(5);
  const Tensor x = randn({6, 8});
  const Tensor w = param({4, 8});
  const Tensor b = param({4});
  const Tensor target = tensor(std::vector<std::int64_t>{0, 1, 2, 3, 0, 1}, {6});
  {
    AutocastGuard autocast(low);
    const Tensor loss = cross_entropy(linear(x, w, b).relu(), target);
    EXPECT_EQ(loss.dtype(), kFloat32);
    loss.backward();
  }
  ASSERT_TRUE(w.grad().defined());
  EXPECT_EQ(w.grad().dtype(), kFloat32);
  EXPECT_EQ(b.grad().dtype(), kFloat32);

  const Tensor w2 = w.detach().clone().requires_grad_(true);
  const Tensor b2 = b.detach().clone().requires_grad_(true);
  const Tensor logits = add(matmul(x.to(low), w2.to(low).transpose(0, 1)), b2.to(low)).relu();
  cross_entropy(logits.to(kFloat32), target).backward();
  EXPECT_EQ(to_vector(w.grad()), to_vector(w2.grad()));
  EXPECT_EQ(to_vector(b.grad()), to_vector(b2.grad()));
}

// Note [Autocast cast cache]: a weight used twice is cast once; the cache empties with the
// outermost guard, and an in-place change of the weight makes its entry stale.

// The node of the cast of linear's weight in y = linear(x, w) without a bias: y's MatmulBackward,
// its second input's TransposeBackward, then the cast (null if the graph is not that).
std::shared_ptr<autograd::Node> weight_cast(const Tensor& y) {
  const std::shared_ptr<autograd::Node> matmul = y.grad_fn();
  if (!matmul || matmul->name() != "MatmulBackward" || matmul->next_edges.size() != 2) return {};
  const std::shared_ptr<autograd::Node> transpose = matmul->next_edges[1].function;
  if (!transpose || transpose->name() != "TransposeBackward" || transpose->next_edges.empty())
    return {};
  const std::shared_ptr<autograd::Node> cast = transpose->next_edges[0].function;
  return cast && cast->name() == "ToBackward" ? cast : nullptr;
}

TEST(Autocast, AWeightUsedTwiceIsCastOnce) {
  manual_seed(6);
  Tensor w = param({5, 5});
  const Tensor x = randn({3, 5});
  EXPECT_EQ(amp::autocast_cache_size(), 0u);
  Tensor y1, y2;
  {
    AutocastGuard autocast(kBFloat16);
    y1 = linear(x, w);
    {
      AutocastGuard nested(kBFloat16);
      y2 = linear(y1, w);  // the same weight, reached from a nested guard
    }
    EXPECT_EQ(amp::autocast_cache_size(), 1u);  // w only: x does not require grad
    // The uses share one cast: the matmuls' weight operand is one tensor, made by one node.
    const Tensor again = linear(x, w);
    ASSERT_NE(weight_cast(y1), nullptr);
    EXPECT_EQ(weight_cast(again), weight_cast(y1));
    EXPECT_EQ(weight_cast(y2), weight_cast(y1));
    EXPECT_EQ(amp::autocast_cache_size(), 1u);

    {
      NoGradGuard no_grad;
      w.mul_(2.0);  // in place: the cached bfloat16 copy is stale now
    }
    const Tensor doubled = linear(x, w);
    ASSERT_NE(weight_cast(doubled), nullptr);
    EXPECT_NE(weight_cast(doubled), weight_cast(y1));  // a new cast of the changed weight
    const std::vector<double> d = to_vector(doubled), o = to_vector(y1);
    for (std::size_t i = 0; i < d.size(); ++i)
      EXPECT_EQ(d[i], 2 * o[i]) << i;  // scaling by 2 is exact in bfloat16
    EXPECT_EQ(amp::autocast_cache_size(), 1u);
  }
  EXPECT_EQ(amp::autocast_cache_size(), 0u);

  // Gradients through the shared cast accumulate both uses: compare with explicit casts.
  sum(y2.to(kFloat32)).backward();
  const Tensor w_ref = (w.detach() / 2.0).requires_grad_(true);  // the weight before mul_
  const Tensor wl = w_ref.to(kBFloat16);
  const Tensor r1 = matmul(x.to(kBFloat16), wl.transpose(0, 1));
  sum(matmul(r1, wl.transpose(0, 1)).to(kFloat32)).backward();
  EXPECT_EQ(to_vector(w.grad()), to_vector(w_ref.grad()));
}

// Backward runs with autocast off: a gradient hook called by a backward started inside the
// guard sees autocast disabled (its own ops are not cast), and the gradients equal those of a
// backward started outside, bitwise.
TEST(Autocast, BackwardInsideTheGuardRunsWithAutocastOff) {
  manual_seed(7);
  const Tensor x = randn({4, 6});
  const Tensor w1 = param({6, 6});
  const Tensor w2 = w1.detach().clone().requires_grad_(true);
  bool enabled_in_hook = true;
  DType hook_matmul_dtype = kBFloat16;
  Tensor loss1, loss2;
  {
    AutocastGuard autocast(kFloat16);
    Tensor h = linear(x, w1);
    h.register_hook([&](const Tensor& g) {
      enabled_in_hook = amp::is_autocast_enabled();
      hook_matmul_dtype = matmul(g.to(kFloat32), g.to(kFloat32).transpose(0, 1)).dtype();
    });
    loss1 = sum(tanhexp(h));
    loss2 = sum(tanhexp(linear(x, w2)));
    loss1.backward();
    EXPECT_TRUE(amp::is_autocast_enabled());  // restored after the backward
  }
  EXPECT_FALSE(enabled_in_hook);
  EXPECT_EQ(hook_matmul_dtype, kFloat32);
  loss2.backward();
  EXPECT_EQ(to_vector(w1.grad()), to_vector(w2.grad()));
}

// A checkpoint segment is recomputed in the dtypes of its forward even when backward runs
// outside the guard: gradients equal those of the same forward without the checkpoint.
TEST(Autocast, CheckpointRecomputesUnderTheForwardsAutocastState) {
  manual_seed(8);
  const Tensor x = randn({2, 3, 6, 6});
  const Tensor k1 = param({3, 3, 3, 3});
  const Tensor k2 = k1.detach().clone().requires_grad_(true);
  const Tensor gw = param({3});
  const auto block = [](const Tensor& in, const Tensor& k, const Tensor& g) {
    return tanhexp(group_norm(conv2d(in, k, Tensor(), {1, 1}, {1, 1}), 3, g));
  };
  Tensor plain, checkpointed;
  {
    AutocastGuard autocast(kBFloat16);
    plain = block(x, k1, gw);
    checkpointed = autograd::checkpoint(
        [&](const std::vector<Tensor>& in) { return std::vector<Tensor>{block(in[0], k2, gw)}; },
        {x})[0];
  }
  EXPECT_EQ(plain.dtype(), kBFloat16);
  EXPECT_EQ(checkpointed.dtype(), kBFloat16);
  sum(plain).backward();
  const Tensor gw_plain = gw.grad().clone();
  gw.set_grad(Tensor());
  sum(checkpointed).backward();
  EXPECT_EQ(to_vector(k1.grad()), to_vector(k2.grad()));
  EXPECT_EQ(to_vector(gw_plain), to_vector(gw.grad()));
}

}  // namespace
}  // namespace leangrad
