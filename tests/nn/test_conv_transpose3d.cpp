// conv_transpose3d and nn::ConvTranspose3d (autograd/volumetric_functions.cpp, Note [Volumes by
// planes]): against PyTorch 1.13 (tests/data/conv_transpose3d.json, written by
// make_conv_transpose3d.py: output and the gradients of the input, the weight and the bias),
// against the definition written here as a loop (each input element times each weight element,
// added at its output position), by finite differences to the second order, and the module as the
// function, initialised as PyTorch's. Bad arguments: tests/misuse/test_misuse_nn_layers.cpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include <leangrad/autograd/functions.h>
#include <leangrad/autograd/graph.h>
#include <leangrad/autograd/volumetric_functions.h>
#include <leangrad/core/generator.h>
#include <leangrad/kernels/ops.h>
#include <leangrad/nn/conv.h>
#include "testing/gradcheck.h"
#include "testing/reference_data.h"
#include "testing/tensor_testing.h"
#include "testing/within_bound.h"

namespace leangrad {
namespace {

using Inputs = std::vector<Tensor>;

Size3 size3_of(const nlohmann::json& v) {
  return {v.at(0).get<std::int64_t>(), v.at(1).get<std::int64_t>(), v.at(2).get<std::int64_t>()};
}

// Each output and each gradient is a sum of at most m products (m the largest of C_in kD kH kW,
// C_out / groups kD kH kW and N D_out H_out W_out), summed in another order than PyTorch's: within
// m u times the sum of their magnitudes, at most m max|a| max|b|; the bound 4 m^2 u max|x| max|w|
// (the upstream weights are at most 1) leaves room and still catches any wrong tap.
double sum_bound(const Tensor& x, const Tensor& weight, const Tensor& y) {
  const double k = static_cast<double>(weight.size(2) * weight.size(3) * weight.size(4));
  const double m =
      std::max({static_cast<double>(weight.size(0)) * k, static_cast<double>(weight.size(1)) * k,
                static_cast<double>(y.numel() / y.size(y.dim() - 4))});
  return 4 * m * m * test::math_unit_roundoff(kFloat64) * std::max(1.0, test::max_abs(x)) *
         std::max(1.0, test::max_abs(weight));
}

// Whether y is the kernel's conv_transpose3d node, or the bias added to it.
bool made_by_kernel(const Tensor& y) {
  std::shared_ptr<autograd::Node> node = y.grad_fn();
  if (node != nullptr && node->name() == "AddBackward" && node->next_edges[0].valid())
    node = node->next_edges[0].function;
  return node != nullptr && node->name() == "ConvTranspose3dBackward";
}

// Every case in `dtype` (the float64 data rounded to it), within sum_bound at dtype's unit
// roundoff (the inputs' rounding adds 2 u per product, inside the bound's 4 m^2 u); returns how
// many ran on the 3-D kernel's input gradient (the node conv_transpose3d, Note [Direct 3-D
// convolution]).
int check_cases(DType dtype) {
  int checked = 0, by_kernel = 0;
  for (const test::ReferenceCase& c : test::load_reference("conv_transpose3d.json")) {
    SCOPED_TRACE(c.name);
    ++checked;
    const auto& p = c.params;
    Tensor x = c.at("x").to(dtype).detach().clone().requires_grad_();
    Tensor weight = c.at("weight").to(dtype).detach().clone().requires_grad_();
    Tensor bias = c.tensors.count("bias") ? c.at("bias").to(dtype).detach().clone().requires_grad_()
                                          : Tensor();
    const Tensor y =
        conv_transpose3d(x, weight, bias, size3_of(p.at("stride")), size3_of(p.at("padding")),
                         size3_of(p.at("output_padding")), p.at("groups").get<std::int64_t>(),
                         size3_of(p.at("dilation")));
    by_kernel += made_by_kernel(y);
    EXPECT_EQ(y.shape(), c.at("y").shape());
    if (y.shape() != c.at("y").shape()) continue;
    const double bound = sum_bound(x, weight, y) * test::math_unit_roundoff(dtype) /
                         test::math_unit_roundoff(kFloat64);
    EXPECT_TRUE(test::within_bound(y, c.at("y"), bound)) << "output";
    sum(mul(y, c.at("w").to(dtype))).backward();
    EXPECT_TRUE(test::within_bound(x.grad(), c.at("dx"), bound)) << "input gradient";
    EXPECT_TRUE(test::within_bound(weight.grad(), c.at("dweight"), bound)) << "weight gradient";
    if (bias.defined()) {
      EXPECT_TRUE(test::within_bound(bias.grad(), c.at("dbias"), bound)) << "bias gradient";
    }
  }
  EXPECT_EQ(checked, 5);
  return by_kernel;
}

TEST(ConvTranspose3d, MatchesPyTorch) {
  EXPECT_EQ(check_cases(kFloat64), 0);  // float64 composes conv_transpose2d
}

// float32 by the composition (Gemm), then by the 3-D kernel wherever oneDNN has one (Direct takes
// it at any channel count).
TEST(ConvTranspose3d, KernelAndCompositionMatchPyTorchInFloat32) {
  {
    const ops::CpuConv2dAlgorithmGuard gemm(ops::CpuConv2dAlgorithm::Gemm);
    EXPECT_EQ(check_cases(kFloat32), 0);
  }
  const ops::CpuConv2dAlgorithmGuard direct(ops::CpuConv2dAlgorithm::Direct);
  if (check_cases(kFloat32) == 0)
    GTEST_SKIP() << "oneDNN has no 3-D convolution kernel in this build or CPU";
}

struct Geometry {
  Size3 stride, padding, output_padding;
  std::int64_t groups;
  Size3 dilation;
};

// The definition: input element (n, i, s) times weight (i, o_g, k) adds to output (n, g C_g + o_g,
// s stride - padding + k dilation) when that lies in the output, g the group of channel i; then
// the bias. Loops in float64 over plain vectors.
std::vector<double> reference_conv_transpose3d(const Tensor& x, const Tensor& w, const Tensor& b,
                                               const Geometry& g, const Shape& out_shape) {
  const std::vector<double> xv = test::to_vector(x), wv = test::to_vector(w);
  const std::int64_t n = x.size(0), c_in = x.size(1), c_group = w.size(1);
  const std::int64_t in_group = c_in / g.groups, c_out = c_group * g.groups;
  const std::array<std::int64_t, 3> in{x.size(2), x.size(3), x.size(4)};
  const std::array<std::int64_t, 3> k{w.size(2), w.size(3), w.size(4)};
  const std::array<std::int64_t, 3> out{out_shape[2], out_shape[3], out_shape[4]};
  std::vector<double> y(static_cast<std::size_t>(n * c_out * out[0] * out[1] * out[2]), 0.0);
  if (b.defined()) {
    const std::vector<double> bv = test::to_vector(b);
    for (std::size_t at = 0; at < y.size(); ++at)
      y[at] = bv[(at / static_cast<std::size_t>(out[0] * out[1] * out[2])) %
                 static_cast<std::size_t>(c_out)];
  }
  for (std::int64_t s = 0; s < n; ++s)
    for (std::int64_t i = 0; i < c_in; ++i)
      for (std::int64_t og = 0; og < c_group; ++og)
        for (std::int64_t d = 0; d < in[0]; ++d)
          for (std::int64_t h = 0; h < in[1]; ++h)
            for (std::int64_t v = 0; v < in[2]; ++v)
              for (std::int64_t kd = 0; kd < k[0]; ++kd)
                for (std::int64_t kh = 0; kh < k[1]; ++kh)
                  for (std::int64_t kw = 0; kw < k[2]; ++kw) {
                    const std::int64_t od = d * g.stride[0] - g.padding[0] + kd * g.dilation[0];
                    const std::int64_t oh = h * g.stride[1] - g.padding[1] + kh * g.dilation[1];
                    const std::int64_t ow = v * g.stride[2] - g.padding[2] + kw * g.dilation[2];
                    if (od < 0 || od >= out[0] || oh < 0 || oh >= out[1] || ow < 0 || ow >= out[2])
                      continue;
                    const std::int64_t o = (i / in_group) * c_group + og;
                    const double xe = xv[static_cast<std::size_t>(
                        (((s * c_in + i) * in[0] + d) * in[1] + h) * in[2] + v)];
                    const double we = wv[static_cast<std::size_t>(
                        (((i * c_group + og) * k[0] + kd) * k[1] + kh) * k[2] + kw)];
                    y[static_cast<std::size_t>(
                        (((s * c_out + o) * out[0] + od) * out[1] + oh) * out[2] + ow)] += xe * we;
                  }
  return y;
}

TEST(ConvTranspose3d, IsItsDefinition) {
  struct Case {
    Shape x, w;
    Geometry g;
    bool bias;
  };
  const std::vector<Case> cases = {
      {{2, 3, 2, 3, 2}, {3, 2, 2, 2, 3}, {{1, 1, 1}, {0, 0, 0}, {0, 0, 0}, 1, {1, 1, 1}}, true},
      {{1, 2, 3, 2, 3}, {2, 3, 3, 2, 2}, {{2, 1, 3}, {1, 0, 2}, {1, 0, 2}, 1, {1, 2, 1}}, false},
      {{2, 4, 2, 3, 2}, {4, 1, 2, 2, 2}, {{3, 2, 1}, {2, 1, 0}, {2, 1, 0}, 2, {2, 1, 2}}, true},
      {{1, 6, 3, 2, 2}, {6, 2, 3, 1, 2}, {{1, 2, 2}, {1, 0, 1}, {0, 1, 1}, 3, {2, 1, 1}}, true},
  };
  std::uint64_t seed = 400;
  for (const Case& k : cases) {
    SCOPED_TRACE(::testing::Message() << "x " << k.x << ", weight " << k.w);
    const Tensor x = test::uniform_input(k.x, -1, 1, seed++).detach();
    const Tensor w = test::uniform_input(k.w, -1, 1, seed++).detach();
    const Tensor b =
        k.bias ? test::uniform_input({k.w[1] * k.g.groups}, -1, 1, seed++).detach() : Tensor();
    const Tensor y = conv_transpose3d(x, w, b, k.g.stride, k.g.padding, k.g.output_padding,
                                      k.g.groups, k.g.dilation);
    Shape expected_shape{k.x[0], k.w[1] * k.g.groups};
    for (std::size_t d = 0; d < 3; ++d) {
      expected_shape.push_back((k.x[d + 2] - 1) * k.g.stride[d] - 2 * k.g.padding[d] +
                               k.g.dilation[d] * (k.w[d + 2] - 1) + k.g.output_padding[d] + 1);
    }
    ASSERT_EQ(y.shape(), expected_shape);
    const std::vector<double> want = reference_conv_transpose3d(x, w, b, k.g, expected_shape);
    EXPECT_TRUE(test::within_bound(y, tensor(want, expected_shape), sum_bound(x, w, y)));
  }
}

TEST(ConvTranspose3dGrad, FirstAndSecondOrder) {
  const Tensor x = test::uniform_input({1, 4, 2, 3, 2}, -1, 1, 410);
  const Tensor w = test::uniform_input({4, 1, 2, 2, 3}, -1, 1, 411);
  const Tensor b = test::uniform_input({2}, -1, 1, 412);
  const auto f = [](const Inputs& in) {
    return conv_transpose3d(in[0], in[1], in[2], {2, 1, 2}, {1, 0, 1}, {1, 0, 0}, 2, {1, 2, 1});
  };
  EXPECT_TRUE(test::gradcheck(f, {x, w, b}));
  EXPECT_TRUE(test::gradgradcheck(f, {x, w, b}));
  // One group, unbatched.
  const Tensor xu = test::uniform_input({2, 2, 2, 3}, -1, 1, 413);
  const Tensor wu = test::uniform_input({2, 3, 3, 2, 2}, -1, 1, 414);
  EXPECT_TRUE(test::gradcheck(
      [](const Inputs& in) {
        return conv_transpose3d(in[0], in[1], Tensor(), {1, 2, 1}, {1, 1, 0}, {0, 1, 0});
      },
      {xu, wu}));
}

TEST(ConvTranspose3d, ModuleIsTheFunction) {
  manual_seed(7);
  nn::ConvTranspose3d deconv(nn::ConvTranspose3dOptions(4, 6, Size3{2, 3, 3})
                                 .stride({1, 2, 2})
                                 .padding(1)
                                 .output_padding({0, 1, 1})
                                 .groups(2));
  EXPECT_EQ(deconv->weight.shape(), (Shape{4, 3, 2, 3, 3}));
  EXPECT_EQ(deconv->bias.shape(), (Shape{6}));
  // PyTorch's init: U(-1/sqrt(fan_in), 1/sqrt(fan_in)), fan_in = C_out / groups * kD kH kW = 54.
  const double bound = 1.0 / std::sqrt(54.0);
  EXPECT_LE(test::max_abs(deconv->weight), bound);
  EXPECT_GT(test::max_abs(deconv->weight), 0.5 * bound);
  EXPECT_LE(test::max_abs(deconv->bias), bound);
  const Tensor x = test::uniform_input({2, 4, 3, 4, 5}, -1.0, 1.0, 3).to(kFloat32);
  const Tensor y = deconv(x);
  EXPECT_EQ(y.shape(), (Shape{2, 6, 2, 8, 10}));  // (3 - 1) - 2 + 1 + 1; (4 - 1) 2 - 2 + 2 + 1 + 1
  EXPECT_TRUE(equal(
      y, conv_transpose3d(x, deconv->weight, deconv->bias, {1, 2, 2}, {1, 1, 1}, {0, 1, 1}, 2)));
  EXPECT_EQ(deconv->extra_repr(),
            "4, 6, kernel_size=(2, 3, 3), stride=(1, 2, 2), padding=(1, 1, 1), "
            "output_padding=(0, 1, 1), groups=2");
  EXPECT_EQ(nn::ConvTranspose3d(nn::ConvTranspose3dOptions(2, 2, 1).bias(false))->extra_repr(),
            "2, 2, kernel_size=(1, 1, 1), stride=(1, 1, 1), bias=False");
}

}  // namespace
}  // namespace leangrad
