// Tests of pad's reflect, replicate and circular modes (autograd/indexing_functions.cpp), of
// Conv1d/Conv2d's padding_mode (nn/conv.cpp) and of the padding modules (nn/padding.h): against
// PyTorch's values (tests/data/padding.json, written by tests/data/make_padding.py), a reference
// loop written here in every dtype, and first and second derivatives by finite differences.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

#include <leangrad/autograd/indexing_functions.h>
#include <leangrad/core/creation.h>
#include <leangrad/kernels/creation.h>
#include <leangrad/nn/conv.h>
#include <leangrad/nn/functional.h>
#include <leangrad/nn/padding.h>
#include "testing/gradcheck.h"
#include "testing/reference_data.h"
#include "testing/tensor_testing.h"

namespace leangrad {
namespace {

using test::all_close;
using test::gradcheck;
using test::gradgradcheck;
using test::make_tensor;
using test::to_vector;
using test::uniform_input;
using Inputs = std::vector<Tensor>;

constexpr double kU32 = 0x1p-24;  // float32's unit roundoff

std::vector<std::int64_t> ints(const nlohmann::json& j) {
  return j.get<std::vector<std::int64_t>>();
}

PadMode mode_named(const std::string& name) {
  if (name == "reflect") return kReflect;
  if (name == "replicate") return kReplicate;
  if (name == "circular") return kCircular;
  if (name == "zeros" || name == "constant") return kConstant;
  ADD_FAILURE() << "unknown mode " << name;
  return kConstant;
}

// The most copies of one input element a padding makes: per padded dim, the element itself and
// at most one copy per new position (a replicated edge gets them all).
std::int64_t most_copies(const std::vector<std::int64_t>& pad) {
  std::int64_t copies = 1;
  for (std::size_t i = 0; i < pad.size(); i += 2) {
    copies *= 1 + std::max<std::int64_t>(pad[i], 0) + std::max<std::int64_t>(pad[i + 1], 0);
  }
  return copies;
}

// Sums of at most k float32 terms, added in some order on each side: each within (k - 1) u of
// the sum of |terms| <= k max|a| max|b|, so the two within 2 k^2 u max|a| max|b|, and PyTorch's
// own final rounding adds u of the value.
double sum_bound(std::int64_t k, double max_a, double max_b) {
  const auto kd = static_cast<double>(k);
  return 2 * kd * kd * kU32 * max_a * max_b;
}

// ---- PyTorch's values ------------------------------------------------------------------------

TEST(PaddingReference, PadMatchesPyTorch) {
  int checked = 0;
  for (const test::ReferenceCase& rc : test::load_reference("padding.json")) {
    if (rc.params["op"] != "pad") continue;
    SCOPED_TRACE(rc.name);
    const std::vector<std::int64_t> amounts = ints(rc.params["pad"]);
    const Tensor x = rc.at("x").clone().requires_grad_();
    const Tensor y = pad(x, amounts, mode_named(rc.params["mode"]));
    // Copies: bit for bit.
    EXPECT_EQ(y.shape(), rc.at("y").shape());
    EXPECT_TRUE(all_close(y, to_vector(rc.at("y")), 0, 0));
    y.backward(rc.at("g"));
    // Each element's gradient sums the upstream gradient of its copies.
    const double atol = sum_bound(most_copies(amounts), 1.0, test::max_abs(rc.at("g")));
    EXPECT_TRUE(all_close(x.grad(), to_vector(rc.at("dx")), 0, atol));
    ++checked;
  }
  EXPECT_EQ(checked, 13);
}

// The module's own weights from the case; forward, then its three gradients.
template <typename Conv, typename Options>
void expect_conv_matches(const test::ReferenceCase& rc, const Options& options) {
  Conv conv(options);
  {
    NoGradGuard no_grad;
    conv->weight.copy_(rc.at("w"));
    conv->bias.copy_(rc.at("b"));
  }
  const Tensor x = rc.at("x").clone().requires_grad_();
  const Tensor y = conv(x);
  ASSERT_EQ(y.shape(), rc.at("y").shape());
  const auto& p = rc.params;
  const std::vector<std::int64_t> kernel = ints(p["kernel_size"]), padding = ints(p["padding"]);
  std::int64_t taps = 1, copies = 1;  // kernel elements; copies of one input element
  for (std::size_t d = 0; d < kernel.size(); ++d)
    taps *= kernel[d], copies *= 1 + 2 * padding[d];
  const std::int64_t groups = p["groups"];
  const std::int64_t per_output = p["in_channels"].get<std::int64_t>() / groups * taps + 1;
  const std::int64_t per_input = p["out_channels"].get<std::int64_t>() / groups * taps * copies;
  const std::int64_t per_weight = y.numel() / y.size(1);  // N times the output's positions
  const double x_max = test::max_abs(x), w_max = test::max_abs(rc.at("w"));
  const double g_max = test::max_abs(rc.at("g"));
  EXPECT_TRUE(all_close(y, to_vector(rc.at("y")), 0, sum_bound(per_output, x_max, w_max)));
  y.backward(rc.at("g"));
  EXPECT_TRUE(all_close(x.grad(), to_vector(rc.at("dx")), 0, sum_bound(per_input, g_max, w_max)))
      << "dx";
  EXPECT_TRUE(all_close(conv->weight.grad(), to_vector(rc.at("dw")), 0,
                        sum_bound(per_weight, g_max, x_max)))
      << "dw";
  EXPECT_TRUE(
      all_close(conv->bias.grad(), to_vector(rc.at("db")), 0, sum_bound(per_weight, g_max, 1.0)))
      << "db";
}

TEST(PaddingReference, ConvPaddingModesMatchPyTorch) {
  int checked = 0;
  for (const test::ReferenceCase& rc : test::load_reference("padding.json")) {
    const std::string op = rc.params["op"];
    if (op != "Conv2d" && op != "Conv1d") continue;
    SCOPED_TRACE(rc.name);
    const auto& p = rc.params;
    const std::vector<std::int64_t> k = ints(p["kernel_size"]), s = ints(p["stride"]);
    const std::vector<std::int64_t> pad_ = ints(p["padding"]), d = ints(p["dilation"]);
    const PadMode mode = mode_named(p["padding_mode"]);
    if (op == "Conv2d") {
      expect_conv_matches<nn::Conv2d>(
          rc, nn::Conv2dOptions(p["in_channels"], p["out_channels"], Size2{k[0], k[1]})
                  .stride(Size2{s[0], s[1]})
                  .padding(Size2{pad_[0], pad_[1]})
                  .dilation(Size2{d[0], d[1]})
                  .groups(p["groups"])
                  .padding_mode(mode));
    } else {
      expect_conv_matches<nn::Conv1d>(rc,
                                      nn::Conv1dOptions(p["in_channels"], p["out_channels"], k[0])
                                          .stride(s[0])
                                          .padding(pad_[0])
                                          .dilation(d[0])
                                          .groups(p["groups"])
                                          .padding_mode(mode));
    }
    ++checked;
  }
  EXPECT_EQ(checked, 5);
}

template <typename M>
std::string printed(const M& m) {
  std::ostringstream out;
  out << m;
  return out.str();
}

// The N amounts of p as an array.
template <std::size_t N>
std::array<std::int64_t, N> amounts(const std::vector<std::int64_t>& p) {
  EXPECT_EQ(p.size(), N);
  std::array<std::int64_t, N> a{};
  std::copy_n(p.begin(), std::min(N, p.size()), a.begin());
  return a;
}

// Calls f(module) with the module the case names, built from its padding and value.
template <typename F>
void with_module(const test::ReferenceCase& rc, F&& f) {
  const std::string op = rc.params["op"];
  const std::vector<std::int64_t> p = ints(rc.params["padding"]);
  const double value = rc.params["value"];
  if (op == "ReflectionPad1d") return f(nn::ReflectionPad1d(amounts<2>(p)));
  if (op == "ReflectionPad2d") return f(nn::ReflectionPad2d(amounts<4>(p)));
  if (op == "ReflectionPad3d") return f(nn::ReflectionPad3d(amounts<6>(p)));
  if (op == "ReplicationPad1d") return f(nn::ReplicationPad1d(amounts<2>(p)));
  if (op == "ReplicationPad2d") return f(nn::ReplicationPad2d(amounts<4>(p)));
  if (op == "ReplicationPad3d") return f(nn::ReplicationPad3d(amounts<6>(p)));
  if (op == "ZeroPad2d") return f(nn::ZeroPad2d(amounts<4>(p)));
  if (op == "ConstantPad1d") {
    return f(nn::ConstantPad1d(nn::ConstantPad1dOptions(amounts<2>(p), value)));
  }
  if (op == "ConstantPad2d") {
    return f(nn::ConstantPad2d(nn::ConstantPad2dOptions(amounts<4>(p), value)));
  }
  if (op == "ConstantPad3d") {
    return f(nn::ConstantPad3d(nn::ConstantPad3dOptions(amounts<6>(p), value)));
  }
  ADD_FAILURE() << "unknown module " << op;
}

TEST(PaddingReference, ModulesMatchPyTorch) {
  int checked = 0;
  for (const test::ReferenceCase& rc : test::load_reference("padding.json")) {
    if (rc.name.rfind("module__", 0) != 0) continue;
    SCOPED_TRACE(rc.name);
    with_module(rc, [&](auto module) {
      EXPECT_EQ(printed(module), rc.params["repr"].get<std::string>());
      const Tensor x = rc.at("x").clone().requires_grad_();
      const Tensor y = module(x);
      EXPECT_EQ(y.shape(), rc.at("y").shape());
      EXPECT_TRUE(all_close(y, to_vector(rc.at("y")), 0, 0));
      y.backward(rc.at("g"));
      const double atol = sum_bound(most_copies(module->padding()), 1.0, test::max_abs(rc.at("g")));
      EXPECT_TRUE(all_close(x.grad(), to_vector(rc.at("dx")), 0, atol));
      ++checked;
    });
  }
  EXPECT_EQ(checked, 10);
}

// ---- A reference loop in every dtype ---------------------------------------------------------

// The source position of output position o along a dim of n, by the definitions of the modes:
// reflect bounces off the ends (the edge element not repeated), replicate stops at them, and
// circular repeats what the cuts keep.
std::int64_t source_of(PadMode mode, std::int64_t o, std::int64_t n, std::int64_t before,
                       std::int64_t after) {
  std::int64_t i = o - before;
  if (mode == kReflect) {
    while (i < 0 || i >= n)
      i = i < 0 ? -i : 2 * (n - 1) - i;
  } else if (mode == kReplicate) {
    i = i < 0 ? 0 : (i >= n ? n - 1 : i);
  } else {
    std::vector<std::int64_t> kept;  // the positions the cuts leave
    for (std::int64_t j = std::max<std::int64_t>(-before, 0);
         j < n - std::max<std::int64_t>(-after, 0); ++j) {
      kept.push_back(j);
    }
    const auto m = static_cast<std::int64_t>(kept.size());
    std::int64_t k = o - std::max<std::int64_t>(before, 0);  // position within the kept run
    while (k < 0)
      k += m;
    i = kept[static_cast<std::size_t>(k % m)];
  }
  return i;
}

// pad of a 3-d input (the last two dims padded), element by element.
std::vector<double> reference_pad(const std::vector<double>& x, const Shape& shape, PadMode mode,
                                  const std::vector<std::int64_t>& pad) {
  const std::int64_t a = shape[0], h = shape[1], w = shape[2];
  const std::int64_t oh = h + pad[2] + pad[3], ow = w + pad[0] + pad[1];
  std::vector<double> out;
  for (std::int64_t i = 0; i < a; ++i) {
    for (std::int64_t r = 0; r < oh; ++r) {
      for (std::int64_t c = 0; c < ow; ++c) {
        const std::int64_t sr = source_of(mode, r, h, pad[2], pad[3]);
        const std::int64_t sc = source_of(mode, c, w, pad[0], pad[1]);
        out.push_back(x[static_cast<std::size_t>((i * h + sr) * w + sc)]);
      }
    }
  }
  return out;
}

TEST(PadModes, MatchAReferenceLoopInEveryDtype) {
  const Shape shape{2, 4, 5};
  std::vector<double> values;
  for (std::int64_t i = 0; i < shape_numel(shape); ++i)
    values.push_back(static_cast<double>(i % 97));
  const std::vector<std::vector<std::int64_t>> pads = {
      {1, 2, 3, 0}, {4, 4, 3, 3}, {-2, 3, 1, -1}, {0, 0, 2, 2}, {-1, -1, -2, 3}};
  for (PadMode mode : {kReflect, kReplicate, kCircular}) {
    for (const auto& amounts : pads) {
      for (DType dtype : {kFloat32, kFloat64, kFloat16, kBFloat16, kInt64, kInt32, kUInt8}) {
        SCOPED_TRACE(::testing::Message()
                     << pad_mode_name(mode) << " " << Shape(amounts) << " " << dtype);
        const Tensor x = make_tensor(values, shape, dtype);
        const Tensor y = pad(x, amounts, mode);
        EXPECT_EQ(y.dtype(), dtype);
        EXPECT_TRUE(all_close(y, reference_pad(values, shape, mode, amounts), 0, 0));
        // Through a non-contiguous view of the same values.
        const Tensor xt =
            make_tensor(values, {shape[0], shape[2], shape[1]}, dtype).transpose(1, 2);
        std::vector<double> tv = to_vector(xt);
        EXPECT_TRUE(
            all_close(pad(xt, amounts, mode), reference_pad(tv, shape, mode, amounts), 0, 0));
      }
    }
  }
}

TEST(PadModes, OneAndThreeDimsAndUnpaddedDims) {
  const Tensor x = make_tensor({0, 1, 2, 3, 4}, {1, 5});
  EXPECT_EQ(to_vector(pad(x, {2, 1}, kReflect)), (std::vector<double>{2, 1, 0, 1, 2, 3, 4, 3}));
  EXPECT_EQ(to_vector(pad(x, {2, 1}, kReplicate)), (std::vector<double>{0, 0, 0, 1, 2, 3, 4, 4}));
  EXPECT_EQ(to_vector(pad(x, {2, 1}, kCircular)), (std::vector<double>{3, 4, 0, 1, 2, 3, 4, 0}));
  // A pad of the last dim only leaves the first; zero amounts give a copy.
  const Tensor y = pad(x, {0, 0}, kReflect);
  EXPECT_FALSE(y.is_same(x));
  EXPECT_EQ(to_vector(y), to_vector(x));
  // Three padded dims of a 3-d input, against the loop one 2-d slice at a time.
  const Tensor cube = make_tensor({0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}, {2, 2, 3});
  const Tensor padded = pad(cube, {1, 1, 1, 0, 1, 0}, kReflect);
  EXPECT_EQ(padded.shape(), (Shape{3, 3, 5}));
  EXPECT_EQ(to_vector(padded.select(0, 0)),
            to_vector(pad(cube.select(0, 1), {1, 1, 1, 0}, kReflect)));
  EXPECT_EQ(to_vector(padded.select(0, 1)),
            to_vector(pad(cube.select(0, 0), {1, 1, 1, 0}, kReflect)));
  // Zeros is constant mode under the convolution's name.
  EXPECT_EQ(to_vector(pad(x, {1, 1}, kZeros)), to_vector(pad(x, {1, 1}, 0.0)));
  EXPECT_EQ(to_vector(nn::functional::pad(x, {1, 0}, kConstant, 7.0)),
            (std::vector<double>{7, 0, 1, 2, 3, 4}));
}

// Two padded dims go in one pass up to 2^22 output elements per padded block, a dim at a time
// beyond (Note [Padding by copies]): a block just past the limit against the loop, and empty
// inputs through the merged pass.
TEST(PadModes, LargeBlocksGoADimAtATimeAndEmptyInputsPass) {
  const Shape shape{1, 2050, 2050};  // padded by 1 all round: 2052^2 > 2^22
  std::vector<double> values(static_cast<std::size_t>(shape_numel(shape)));
  for (std::size_t i = 0; i < values.size(); ++i)
    values[i] = static_cast<double>(i % 97);
  const Tensor x = make_tensor(values, shape, kUInt8);
  for (PadMode mode : {kReflect, kReplicate}) {
    SCOPED_TRACE(pad_mode_name(mode));
    EXPECT_TRUE(all_close(pad(x, {1, 1, 1, 1}, mode),
                          reference_pad(values, shape, mode, {1, 1, 1, 1}), 0, 0));
  }
  EXPECT_EQ(pad(zeros({0, 3, 4}), {1, 1, 2, 2}, kReflect).shape(), (Shape{0, 7, 6}));
  EXPECT_EQ(pad(zeros({2, 0, 4}), {1, 1, 0, 0}, kReplicate).shape(), (Shape{2, 0, 6}));
}

// ---- Derivatives -------------------------------------------------------------------------------

TEST(PadModes, GradcheckAndGradgradcheck) {
  const Tensor x = uniform_input({2, 3, 4}, -1.0, 1.0, 5);
  for (PadMode mode : {kReflect, kReplicate, kCircular}) {
    SCOPED_TRACE(pad_mode_name(mode));
    // Squared, so that the second derivative is not 0 and goes through the recorded backward.
    const auto fn = [mode](const Inputs& in) {
      const Tensor y = pad(in[0], {2, -1, 1, 2}, mode);
      return y * y;
    };
    EXPECT_TRUE(gradcheck(fn, {x}));
    EXPECT_TRUE(gradgradcheck(fn, {x}));
  }
}

// ---- Modules and options -----------------------------------------------------------------------

TEST(PaddingModules, TakeOneAmountOrEachSideAndCheckTheRank) {
  nn::ReflectionPad2d reflect(1);
  EXPECT_EQ(printed(reflect), "ReflectionPad2d((1, 1, 1, 1))");
  EXPECT_EQ(reflect(ones({2, 3, 4, 4})).shape(), (Shape{2, 3, 6, 6}));
  EXPECT_EQ(reflect(ones({3, 4, 4})).shape(), (Shape{3, 6, 6}));
  EXPECT_THROW(reflect(ones({4, 4})), ShapeError);
  EXPECT_THROW(reflect(ones({1, 2, 3, 4, 4})), ShapeError);
  // The amounts must be smaller than the dims: an Error, not a read out of bounds.
  EXPECT_THROW(reflect(ones({1, 1, 1, 4})), ShapeError);
  nn::ReplicationPad1d replicate(nn::ReplicationPad1dOptions({0, 2}));
  EXPECT_EQ(to_vector(replicate(make_tensor({1, 2}, {1, 2}))), (std::vector<double>{1, 2, 2, 2}));
  nn::ConstantPad2d constant(nn::ConstantPad2dOptions(1, 2.5));
  EXPECT_EQ(printed(constant), "ConstantPad2d(padding=(1, 1, 1, 1), value=2.5)");
  EXPECT_EQ(constant(ones({5, 1, 1, 1})).shape(), (Shape{5, 1, 3, 3}));  // any rank >= 2
  EXPECT_THROW(constant(ones({3})), ShapeError);
}

TEST(ConvPaddingMode, PadsTheInputThenConvolvesWithoutPadding) {
  nn::Conv2d conv(nn::Conv2dOptions(2, 3, 3).padding(Size2{1, 2}).padding_mode(kReplicate));
  EXPECT_EQ(conv->extra_repr(),
            "2, 3, kernel_size=(3, 3), stride=(1, 1), padding=(1, 2), padding_mode=replicate");
  const Tensor x = uniform_input({1, 2, 4, 5}, -1.0, 1.0, 9).detach().to(kFloat32);
  const Tensor padded = pad(x, {2, 2, 1, 1}, kReplicate);
  EXPECT_TRUE(all_close(conv(x), to_vector(conv2d(padded, conv->weight, conv->bias)), 0, 0));
  nn::Conv1d conv1(nn::Conv1dOptions(2, 3, 3).padding(1).padding_mode(kCircular).bias(false));
  EXPECT_EQ(conv1->extra_repr(),
            "2, 3, kernel_size=(3,), stride=(1,), padding=(1,), bias=False, padding_mode=circular");
  const Tensor x1 = x.select(2, 0);
  EXPECT_TRUE(
      all_close(conv1(x1), to_vector(conv1d(pad(x1, {1, 1}, kCircular), conv1->weight)), 0, 0));
  // padding 0: nothing to pad, the same as zeros.
  nn::Conv2d unpadded(nn::Conv2dOptions(2, 3, 3).padding_mode(kReflect));
  EXPECT_EQ(unpadded(x).shape(), (Shape{1, 3, 2, 3}));
}

}  // namespace
}  // namespace leangrad
