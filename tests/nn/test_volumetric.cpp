// The 3-d layers against PyTorch 1.13 (tests/data/volumetric.json, written by
// make_volumetric.py): conv3d (strides, padding, dilation, groups, no bias, unbatched) and
// nn::Conv3d with padding_mode reflect and circular; max_pool3d with its indices (padding,
// dilation, ceil_mode, ties); avg_pool3d (count_include_pad, ceil_mode, divisor_override);
// adaptive_avg_pool3d and adaptive_max_pool3d with indices: outputs and every gradient. Then
// gradchecks to second order, and the modules against the functions. Bad arguments: the
// Volumetric misuse table (tests/misuse/test_misuse_volumetric.cpp).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include <leangrad/autograd/autocast.h>
#include <leangrad/autograd/engine.h>
#include <leangrad/autograd/functions.h>
#include <leangrad/autograd/grad_mode.h>
#include <leangrad/autograd/volumetric_functions.h>
#include <leangrad/kernels/ops.h>
#include <leangrad/nn/conv.h>
#include <leangrad/nn/pooling.h>
#include "testing/gradcheck.h"
#include "testing/reference_data.h"
#include "testing/tensor_testing.h"
#include "testing/within_bound.h"

namespace leangrad {
namespace {

Size3 size3(const nlohmann::json& j) {
  const auto v = j.get<std::vector<std::int64_t>>();
  return {v.at(0), v.at(1), v.at(2)};
}

// got within units * u * scale of want, element for element.
void expect_within(const Tensor& got, const Tensor& want, double units, double scale,
                   const std::string& what) {
  EXPECT_TRUE(test::within_bound(
      got, want, units * test::math_unit_roundoff(want.dtype()) * std::max(1.0, scale)))
      << what;
}

const std::vector<test::ReferenceCase>& cases() {
  static const std::vector<test::ReferenceCase> all = test::load_reference("volumetric.json");
  return all;
}

// A convolution's output, and each of its gradients, is a sum of at most m products of an
// input-side factor and a weight-side one (m the largest of C_in / groups kD kH kW, C_out /
// groups kD kH kW and N D_out H_out W_out), summed in another order than PyTorch's: within
// m u of the sum of the products' magnitudes, at most m max|a| max|b|. The bound is 4 m^2 u
// max|x| max|w| (|w.| <= 1 for the upstream weights), which any wrong tap or plane exceeds by far.
double conv_units(const Tensor& x, const Tensor& weight, const Tensor& y, std::int64_t groups) {
  const double kernel = static_cast<double>(weight.size(2) * weight.size(3) * weight.size(4));
  const double m = std::max({static_cast<double>(weight.size(1)) * kernel,
                             static_cast<double>(weight.size(0) / groups) * kernel,
                             static_cast<double>(y.numel() / y.size(y.dim() - 4))});
  return 4 * m * m * std::max(1.0, test::max_abs(x)) * std::max(1.0, test::max_abs(weight));
}

// Every conv3d case in `dtype` (the reference's float64 data rounded to it), within
// conv_units of the reference at dtype's unit roundoff; returns how many of them ops::conv3d's
// kernel took (Note [Direct 3-D convolution]).
int check_conv3d_cases(DType dtype) {
  const double u = test::math_unit_roundoff(dtype);
  int checked = 0, by_kernel = 0;
  for (const test::ReferenceCase& c : cases()) {
    const auto& p = c.params;
    const std::string op = p.at("op").get<std::string>();
    if (op != "conv3d" && op != "conv3d_module") continue;
    SCOPED_TRACE(c.name);
    ++checked;
    Tensor x = c.at("x").to(dtype).detach().clone().requires_grad_();
    Tensor weight = c.at("weight").to(dtype).detach().clone().requires_grad_();
    Tensor bias = c.tensors.count("bias") ? c.at("bias").to(dtype).detach().clone().requires_grad_()
                                          : Tensor();
    Tensor y;
    std::int64_t groups = 1;
    std::vector<Tensor> parameters = {weight, bias};
    if (op == "conv3d") {
      groups = p.at("groups").get<std::int64_t>();
      const ops::Conv3dParams kernel_params{size3(p.at("stride")), size3(p.at("padding")),
                                            size3(p.at("dilation")), groups};
      by_kernel += x.dim() == 5 && ops::use_conv3d_kernel(x, weight, bias, kernel_params);
      y = conv3d(x, weight, bias, size3(p.at("stride")), size3(p.at("padding")),
                 size3(p.at("dilation")), groups);
    } else {
      const std::string mode = p.at("padding_mode").get<std::string>();
      nn::Conv3d conv(nn::Conv3dOptions(2, 3, Size3{3, 2, 3})
                          .stride(Size3{1, 2, 1})
                          .padding(Size3{1, 1, 2})
                          .padding_mode(mode == "reflect" ? kReflect : kCircular));
      conv->to(dtype);
      {
        NoGradGuard no_grad;
        conv->weight.copy_(weight);
        conv->bias.copy_(bias);
      }
      y = conv(x);
      parameters = {conv->weight, conv->bias};
      EXPECT_EQ(conv->extra_repr(),
                "2, 3, kernel_size=(3, 2, 3), stride=(1, 2, 1), padding=(1, 1, "
                "2), padding_mode=" +
                    mode);
    }
    EXPECT_EQ(y.dtype(), dtype);
    const double bound = conv_units(x, weight, c.at("y"), groups) * u;
    EXPECT_TRUE(test::within_bound(y, c.at("y"), bound)) << "output";
    sum(mul(y, c.at("w").to(dtype))).backward();
    EXPECT_TRUE(test::within_bound(x.grad(), c.at("dx"), bound)) << "input gradient";
    EXPECT_TRUE(test::within_bound(parameters[0].grad(), c.at("dweight"), bound))
        << "weight gradient";
    if (parameters[1].defined()) {
      EXPECT_TRUE(test::within_bound(parameters[1].grad(), c.at("dbias"), bound))
          << "bias gradient";
    }
  }
  EXPECT_EQ(checked, 6);
  return by_kernel;
}

TEST(Conv3d, MatchesPyTorch) {
  EXPECT_EQ(check_conv3d_cases(kFloat64), 0);  // float64 composes conv2d (no kernel)
}

// float32 by the composition over conv2d (Gemm), then by oneDNN's 3-D kernel wherever it has one
// (Direct takes it at any channel count). The inputs' rounding to float32 adds 2 u per product,
// inside conv_units' 4 m^2 u.
TEST(Conv3d, KernelAndCompositionMatchPyTorchInFloat32) {
  {
    const ops::CpuConv2dAlgorithmGuard gemm(ops::CpuConv2dAlgorithm::Gemm);
    EXPECT_EQ(check_conv3d_cases(kFloat32), 0);
  }
  const ops::CpuConv2dAlgorithmGuard direct(ops::CpuConv2dAlgorithm::Direct);
  const int by_kernel = check_conv3d_cases(kFloat32);
  if (by_kernel == 0) GTEST_SKIP() << "oneDNN has no 3-D convolution kernel in this build or CPU";
}

// The kernel's node and its gradients' nodes (each the other two, as conv2d's) against the
// composition in float64: y = conv3d(x, w, b); the first derivatives of <y, r> recorded; then the
// gradients of <dx, v> + <dw, s> in x, w and r. Every result is a sum of at most m products of
// two factors of magnitude <= 2 (inputs in [-2, 2], weights and directions in [-1, 1]), so the
// float32 kernel is within 4 m^2 u (u float32's) times 2 of the float64 composition.
TEST(Conv3d, KernelDifferentiatesTwiceAsTheComposition) {
  const ops::CpuConv2dAlgorithmGuard direct(ops::CpuConv2dAlgorithm::Direct);
  struct Case {
    Shape x, w;
    ops::Conv3dParams p;
  };
  const std::vector<Case> cases = {
      {{2, 16, 5, 6, 7}, {16, 16, 3, 2, 3}, {{1, 2, 1}, {1, 0, 1}, {1, 1, 2}, 1}},
      {{1, 32, 4, 5, 6}, {32, 16, 2, 3, 3}, {{2, 1, 1}, {0, 1, 1}, {1, 2, 1}, 2}},
  };
  int seed = 70;
  for (const Case& k : cases) {
    SCOPED_TRACE(::testing::PrintToString(k.x));
    const Tensor x64 = test::uniform_input(k.x, -2.0, 2.0, seed++);
    const Tensor w64 = test::uniform_input(k.w, -1.0, 1.0, seed++);
    const Tensor b64 = test::uniform_input({k.w[0]}, -1.0, 1.0, seed++);
    if (!ops::use_conv3d_kernel(x64.to(kFloat32), w64.to(kFloat32), b64.to(kFloat32), k.p))
      GTEST_SKIP() << "oneDNN has no 3-D convolution kernel in this build or CPU";
    std::vector<std::vector<Tensor>> results;
    for (DType dtype : {kFloat64, kFloat32}) {
      const Tensor x = x64.detach().to(dtype).requires_grad_();
      const Tensor w = w64.detach().to(dtype).requires_grad_();
      const Tensor b = b64.detach().to(dtype).requires_grad_();
      const Tensor y = conv3d(x, w, b, k.p.stride, k.p.padding, k.p.dilation, k.p.groups);
      EXPECT_EQ(autograd::grad_fn_name(y) == "Conv3dBackward", dtype == kFloat32);
      const Tensor r = test::uniform_input(y.shape(), -1.0, 1.0, 90).to(dtype).requires_grad_();
      const std::vector<Tensor> first =
          autograd::grad({sum(mul(y, r))}, {x, w, b}, {}, std::nullopt, /*create_graph=*/true);
      const Tensor v = test::uniform_input(k.x, -1.0, 1.0, 91).to(dtype);
      const Tensor s = test::uniform_input(k.w, -1.0, 1.0, 92).to(dtype);
      std::vector<Tensor> second =
          autograd::grad({add(sum(mul(first[0], v)), sum(mul(first[1], s)))}, {x, w, r});
      second.insert(second.begin(),
                    {y.detach(), first[0].detach(), first[1].detach(), first[2].detach()});
      results.push_back(second);
    }
    const double m = static_cast<double>(
        std::max({k.w[1] * k.w[2] * k.w[3] * k.w[4], k.w[0] / k.p.groups * k.w[2] * k.w[3] * k.w[4],
                  results[0][0].numel() / k.w[0]}));
    const double bound = 8 * m * m * test::math_unit_roundoff(kFloat32);
    const char* names[] = {"y", "dx", "dw", "db", "d2x", "d2w", "d2r"};
    for (std::size_t i = 0; i < results[0].size(); ++i)
      EXPECT_TRUE(test::within_bound(results[1][i], results[0][i], bound)) << names[i];
  }
}

// float16 and bfloat16 take the kernel too: each entry is the float32 kernel on the operands
// widened (exactly) and its result rounded once, so bit for bit that; autograd takes it (the node
// is Conv3dBackward), and under CPU autocast float32 operands are cast to bfloat16 and take it.
TEST(Conv3d, SixteenBitFloatsRunTheKernelInFloat32) {
  const ops::CpuConv2dAlgorithmGuard direct(ops::CpuConv2dAlgorithm::Direct);
  const ops::Conv3dParams p{{1, 2, 1}, {1, 0, 1}, {1, 1, 2}, 1};
  const Tensor x32 = test::uniform_input({2, 16, 5, 6, 7}, -2.0, 2.0, 120).detach().to(kFloat32);
  const Tensor w32 = test::uniform_input({16, 16, 3, 2, 3}, -1.0, 1.0, 121).detach().to(kFloat32);
  const Tensor b32 = test::uniform_input({16}, -1.0, 1.0, 122).detach().to(kFloat32);
  if (!ops::use_conv3d_kernel(x32, w32, b32, p))
    GTEST_SKIP() << "oneDNN has no 3-D convolution kernel in this build or CPU";
  for (DType dtype : {kFloat16, kBFloat16}) {
    SCOPED_TRACE(::testing::PrintToString(dtype));
    const Tensor x = x32.to(dtype), w = w32.to(dtype), b = b32.to(dtype);
    auto wide = [](const Tensor& t) { return t.to(kFloat32); };
    ASSERT_TRUE(ops::use_conv3d_kernel(x, w, b, p));
    const Tensor y = ops::conv3d(x, w, b, p);
    EXPECT_EQ(y.dtype(), dtype);
    EXPECT_EQ(test::to_vector(y),
              test::to_vector(ops::conv3d(wide(x), wide(w), wide(b), p).to(dtype)));
    const Tensor dy = test::uniform_input(y.shape(), -1.0, 1.0, 123).detach().to(dtype);
    EXPECT_EQ(test::to_vector(ops::conv3d_input_grad(dy, w, x.shape(), p)),
              test::to_vector(ops::conv3d_input_grad(wide(dy), wide(w), x.shape(), p).to(dtype)));
    EXPECT_EQ(test::to_vector(ops::conv3d_weight_grad(dy, x, w.shape(), p)),
              test::to_vector(ops::conv3d_weight_grad(wide(dy), wide(x), w.shape(), p).to(dtype)));
    const Tensor xr = x.detach().requires_grad_();
    const Tensor yr = conv3d(xr, w, b, p.stride, p.padding, p.dilation, p.groups);
    EXPECT_EQ(autograd::grad_fn_name(yr), "Conv3dBackward");
    EXPECT_EQ(test::to_vector(yr), test::to_vector(y));
  }
  const amp::AutocastGuard autocast(kBFloat16, DeviceType::CPU);
  const Tensor xr = x32.detach().requires_grad_();
  const Tensor y = conv3d(xr, w32, b32, p.stride, p.padding, p.dilation, p.groups);
  EXPECT_EQ(y.dtype(), kBFloat16);
  EXPECT_EQ(autograd::grad_fn_name(y), "Conv3dBackward");
  EXPECT_EQ(test::to_vector(y), test::to_vector(ops::conv3d(x32.to(kBFloat16), w32.to(kBFloat16),
                                                            b32.to(kBFloat16), p)));
}

// f() throws an E whose message holds `words`.
template <typename E, typename F>
void expect_error(const F& f, const std::string& words) {
  try {
    f();
    ADD_FAILURE() << "no error, expected one saying: " << words;
  } catch (const E& e) {
    EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
  }
}

// The kernel's entries refuse what they cannot take, naming the op, rather than compute wrongly.
TEST(Conv3d, KernelEntriesRefuseOtherOperands) {
  const Tensor x = test::uniform_input({1, 16, 3, 3, 3}, -1.0, 1.0, 95);
  const Tensor w = test::uniform_input({16, 16, 2, 2, 2}, -1.0, 1.0, 96);
  const ops::Conv3dParams p;
  expect_error<DTypeError>([&] { ops::conv3d(x, w, Tensor(), p); },
                           "conv3d: the kernel takes float32, float16 or bfloat16");
  EXPECT_FALSE(ops::use_conv3d_kernel(x, w, Tensor(), p));
  const Tensor x32 = x.to(kFloat32), w32 = w.to(kFloat32);
  expect_error<ShapeError>(
      [&] {
        ops::conv3d_input_grad(zeros({1, 16, 3, 3, 3}), w32, x32.shape(), p);
      },
      "conv3d_input_grad: expected grad_out of shape [1, 16, 2, 2, 2]");
  expect_error<ShapeError>(
      [&] {
        ops::conv3d(x32, w32.reshape({16, 16, 8}), Tensor(), p);
      },
      "conv3d: expected a 5-D weight");
  const ops::Conv3dParams bad{{1, 0, 1}, {0, 0, 0}, {1, 1, 1}, 1};
  EXPECT_FALSE(ops::use_conv3d_kernel(x32, w32, Tensor(), bad));
  expect_error<ShapeError>([&] { ops::conv3d(x32, w32, Tensor(), bad); },
                           "expected stride and dilation >= 1");
}

// A maximum is one of the inputs and its index the same choice: exact. An average sums at most
// k elements (k the window's size) and divides, or scales by a divisor, once per stage: within
// (k + 4) u of the largest input. A gradient sums at most k upstream weights (the windows that
// hold an element) divided by counts: within (k + 4) u of the largest weight.
TEST(Pool3d, MatchesPyTorch) {
  int checked = 0;
  for (const test::ReferenceCase& c : cases()) {
    const auto& p = c.params;
    const std::string op = p.at("op").get<std::string>();
    if (op.find("pool3d") == std::string::npos) continue;
    SCOPED_TRACE(c.name);
    ++checked;
    Tensor x = c.at("x").clone().requires_grad_();
    Tensor y, indices;
    double window = 1;
    if (op == "max_pool3d" || op == "avg_pool3d") {
      const Size3 k = size3(p.at("kernel"));
      window = static_cast<double>(k[0] * k[1] * k[2]);
      if (op == "max_pool3d") {
        std::tie(y, indices) =
            max_pool3d_with_indices(x, k, size3(p.at("stride")), size3(p.at("padding")),
                                    size3(p.at("dilation")), p.at("ceil_mode").get<bool>());
      } else {
        std::optional<std::int64_t> divisor;
        if (!p.at("divisor_override").is_null())
          divisor = p.at("divisor_override").get<std::int64_t>();
        y = avg_pool3d(x, k, size3(p.at("stride")), size3(p.at("padding")),
                       p.at("ceil_mode").get<bool>(), p.at("count_include_pad").get<bool>(),
                       divisor);
      }
    } else {
      const Size3 size = size3(p.at("output_size"));
      for (int d = 0; d < 3; ++d) {
        const std::int64_t in = x.size(x.dim() - 3 + d), out = size[static_cast<std::size_t>(d)];
        window *= static_cast<double>((in + out - 1) / out + 1);
      }
      if (op == "adaptive_max_pool3d")
        std::tie(y, indices) = adaptive_max_pool3d_with_indices(x, size);
      else
        y = adaptive_avg_pool3d(x, size);
    }
    if (indices.defined()) {
      EXPECT_TRUE(test::matches_within_roundoff(y, c.at("y"), {}, {.bitwise = true})) << "value";
      EXPECT_EQ(test::to_vector(indices), test::to_vector(c.at("indices"))) << "indices";
    } else {
      expect_within(y, c.at("y"), window + 4, test::max_abs(x), "value");
    }
    sum(mul(y, c.at("w"))).backward();
    expect_within(x.grad(), c.at("dx"), window + 4, test::max_abs(c.at("w")), "gradient");
  }
  EXPECT_EQ(checked, 16);
}

// First and second derivatives by finite differences, over distinct inputs (no tie moves within
// a step): conv3d with every option, and each pooling.
TEST(Volumetric, FirstAndSecondDerivativesMatchFiniteDifferences) {
  const Tensor x = test::uniform_input({1, 4, 4, 4, 5}, -2.0, 2.0, 31);
  const Tensor weight = test::uniform_input({2, 2, 2, 2, 3}, -1.0, 1.0, 32);
  const Tensor bias = test::uniform_input({2}, -1.0, 1.0, 33);
  const test::GradcheckFn conv = [](const std::vector<Tensor>& in) {
    const Tensor y = conv3d(in[0], in[1], in[2], {2, 1, 1}, {1, 0, 1}, {1, 2, 1}, 2);
    return y * y;
  };
  EXPECT_TRUE(test::gradcheck(conv, {x, weight, bias}));
  EXPECT_TRUE(test::gradgradcheck(conv, {x, weight, bias}));
  // One group takes the other gather (Note [Volumes by planes]).
  const Tensor weight1 = test::uniform_input({2, 4, 2, 2, 3}, -1.0, 1.0, 34);
  const test::GradcheckFn conv1 = [](const std::vector<Tensor>& in) {
    const Tensor y = conv3d(in[0], in[1], in[2], {1, 2, 1}, {1, 1, 0}, {2, 1, 1});
    return y * y;
  };
  EXPECT_TRUE(test::gradcheck(conv1, {x, weight1, bias}));
  EXPECT_TRUE(test::gradgradcheck(conv1, {x, weight1, bias}));
  const std::vector<test::GradcheckFn> pools = {
      [](const std::vector<Tensor>& in) {
        const Tensor y = max_pool3d(in[0], {2, 2, 3}, {1, 2, 2}, {1, 1, 1}, {1, 1, 1}, true);
        return y * y;
      },
      [](const std::vector<Tensor>& in) {
        const Tensor y = avg_pool3d(in[0], {3, 2, 2}, {2, 1, 2}, {1, 1, 0}, true, false);
        return y * y;
      },
      [](const std::vector<Tensor>& in) {
        const Tensor y = adaptive_avg_pool3d(in[0], {3, 2, 3});
        return y * y;
      },
      [](const std::vector<Tensor>& in) {
        const Tensor y = adaptive_max_pool3d(in[0], {3, 2, 3});
        return y * y;
      },
  };
  for (std::size_t i = 0; i < pools.size(); ++i) {
    SCOPED_TRACE(i);
    EXPECT_TRUE(test::gradcheck(pools[i], {x}));
    EXPECT_TRUE(test::gradgradcheck(pools[i], {x}));
  }
}

TEST(Volumetric, ModulesAreTheFunctions) {
  manual_seed(8);
  const Tensor x = test::uniform_input({2, 3, 6, 7, 8}, -2.0, 2.0, 41).to(kFloat32);
  nn::Conv3d conv(nn::Conv3dOptions(3, 4, 3).stride({1, 2, 2}).padding(1).bias(false));
  EXPECT_EQ(conv->weight.shape(), (Shape{4, 3, 3, 3, 3}));
  EXPECT_FALSE(conv->bias.defined());
  // PyTorch's init: U(-1/sqrt(fan_in), 1/sqrt(fan_in)), fan_in = 3 * 27.
  EXPECT_LE(test::max_abs(conv->weight), 1.0 / std::sqrt(81.0));
  EXPECT_TRUE(equal(conv(x), conv3d(x, conv->weight, Tensor(), {1, 2, 2}, {1, 1, 1})));
  nn::MaxPool3d max(nn::MaxPool3dOptions(2).stride({1, 2, 2}).padding(1).ceil_mode(true));
  EXPECT_TRUE(equal(max(x), max_pool3d(x, {2, 2, 2}, {1, 2, 2}, {1, 1, 1}, {1, 1, 1}, true)));
  EXPECT_TRUE(equal(
      std::get<1>(max->forward_with_indices(x)),
      std::get<1>(max_pool3d_with_indices(x, {2, 2, 2}, {1, 2, 2}, {1, 1, 1}, {1, 1, 1}, true))));
  EXPECT_EQ(max->extra_repr(),
            "kernel_size=[2, 2, 2], stride=[1, 2, 2], padding=[1, 1, 1], "
            "dilation=[1, 1, 1], ceil_mode=true");
  nn::AvgPool3d avg(nn::AvgPool3dOptions({1, 2, 2}).divisor_override(3));
  EXPECT_TRUE(equal(avg(x), avg_pool3d(x, {1, 2, 2}, {1, 2, 2}, {0, 0, 0}, false, true, 3)));
  nn::AdaptiveAvgPool3d global(1);
  EXPECT_EQ(global(x).shape(), (Shape{2, 3, 1, 1, 1}));
  EXPECT_TRUE(equal(global(x), adaptive_avg_pool3d(x, {1, 1, 1})));
  nn::AdaptiveMaxPool3d adaptive(Size3{3, 2, 5});
  EXPECT_TRUE(equal(adaptive(x), adaptive_max_pool3d(x, {3, 2, 5})));
  EXPECT_EQ(adaptive->extra_repr(), "output_size=[3, 2, 5]");
}

}  // namespace
}  // namespace leangrad
