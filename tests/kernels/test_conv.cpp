// Tests of conv2d (autograd/nn_functions.cpp, kernels/ops_conv.cpp, kernels/cpu/conv.cpp,
// kernels/onednn/onednn_conv.cpp): the forward against a direct seven-deep loop, float32 within
// the rounding bound of float64 under im2col + GEMM and oneDNN's direct convolution, float64
// finite-difference gradient checks of x, weight and bias over the odd cases (stride, dilation,
// groups, depthwise, 1x1 and 7x7 kernels, padding, batch 1, non-square and non-contiguous input,
// no bias, channel counts off the tile sizes),
// PyTorch's values (tests/data/conv2d.json), float16/bfloat16 and the errors bad input raises.
// CUDA against the CPU is in the device op table (op_table_conv.cpp).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <leangrad/autograd/functions.h>
#include <leangrad/autograd/nn_functions.h>
#include <leangrad/core/cuda.h>
#include <leangrad/core/parallel.h>
#include <leangrad/kernels/conv_geometry.h>
#include <leangrad/kernels/cpu/conv_direct.h>
#include <leangrad/kernels/cpu/gemm.h>
#include <leangrad/kernels/creation.h>
#include <leangrad/kernels/ops.h>
#include "testing/gradcheck.h"
#include "testing/reference_data.h"
#include "testing/tensor_testing.h"

namespace leangrad {
namespace {

using test::all_close;
using test::gradcheck;
using test::to_vector;
using test::uniform_input;

struct ConvCase {
  std::string name;
  Shape x, w;
  bool bias = true;
  Size2 stride = {1, 1}, padding = {0, 0}, dilation = {1, 1};
  std::int64_t groups = 1;
  bool permuted_input = false;  // x a (N, H, C, W) tensor permuted to (N, C, H, W)
};

// The odd cases every check below runs over.
std::vector<ConvCase> odd_cases() {
  return {
      {"basic_3x3_pad1", {2, 3, 5, 5}, {4, 3, 3, 3}, true, {1, 1}, {1, 1}},
      {"stride2", {2, 3, 7, 6}, {2, 3, 3, 3}, true, {2, 2}, {1, 1}},
      {"stride_2x3_nonsquare", {1, 2, 8, 11}, {3, 2, 3, 2}, true, {2, 3}, {0, 1}},
      {"dilation2", {1, 3, 7, 8}, {2, 3, 3, 3}, true, {1, 1}, {2, 2}, {2, 2}},
      {"groups2", {2, 4, 5, 5}, {6, 2, 3, 3}, true, {1, 1}, {1, 1}, {1, 1}, 2},
      {"depthwise", {2, 3, 6, 5}, {3, 1, 3, 3}, true, {1, 1}, {1, 1}, {1, 1}, 3},
      {"pointwise_1x1", {2, 5, 4, 3}, {3, 5, 1, 1}},
      {"pointwise_1x1_stride2", {1, 3, 5, 5}, {2, 3, 1, 1}, true, {2, 2}},
      {"kernel_7x7_pad3", {1, 2, 9, 8}, {2, 2, 7, 7}, true, {1, 1}, {3, 3}},
      {"batch1_pad2", {1, 3, 4, 6}, {2, 3, 3, 3}, true, {1, 1}, {2, 2}},
      {"permuted_input", {2, 3, 5, 4}, {2, 3, 3, 3}, true, {1, 1}, {1, 1}, {1, 1}, 1, true},
      {"no_bias", {2, 3, 5, 5}, {2, 3, 3, 3}, false, {1, 1}, {1, 1}},
      {"channels_5_to_7", {1, 5, 4, 4}, {7, 5, 3, 3}, true, {1, 1}, {1, 1}},
      {"stride2_dilation2_groups3", {1, 6, 9, 9}, {3, 2, 3, 3}, true, {2, 2}, {2, 2}, {2, 2}, 3},
      // Stride 1 and out_w == in_w with dilation down only: im2col's same-width path.
      {"dilation_rows_only", {2, 3, 7, 8}, {2, 3, 3, 3}, true, {1, 1}, {2, 1}, {2, 1}},
  };
}

// The inputs of a case, float64 leaves requiring grad; bias undefined for no-bias cases.
std::vector<Tensor> make_inputs(const ConvCase& c, std::uint64_t seed) {
  Tensor x;
  if (c.permuted_input) {
    x = uniform_input({c.x[0], c.x[2], c.x[1], c.x[3]}, -1.0, 1.0, seed)
            .detach()
            .permute({0, 2, 1, 3});
    x.requires_grad_();
  } else {
    x = uniform_input(c.x, -1.0, 1.0, seed);
  }
  Tensor w = uniform_input(c.w, -1.0, 1.0, seed + 1);
  Tensor b = c.bias ? uniform_input({c.w[0]}, -1.0, 1.0, seed + 2) : Tensor();
  return {x, w, b};
}

// y[n, co, oh, ow] = b[co] + sum over (ci, r, s) of x[n, g cin_g + ci, ih, iw] w[co, ci, r, s]:
// the definition, with no shared index math.
std::vector<double> direct_conv(const ConvCase& c, const std::vector<double>& x,
                                const std::vector<double>& w, const std::vector<double>& b,
                                Shape& out_shape) {
  const std::int64_t n = c.x[0], cin = c.x[1], h = c.x[2], wd = c.x[3];
  const std::int64_t cout = c.w[0], cin_g = c.w[1], kh = c.w[2], kw = c.w[3];
  const std::int64_t cout_g = cout / c.groups;
  const std::int64_t ho = (h + 2 * c.padding[0] - c.dilation[0] * (kh - 1) - 1) / c.stride[0] + 1;
  const std::int64_t wo = (wd + 2 * c.padding[1] - c.dilation[1] * (kw - 1) - 1) / c.stride[1] + 1;
  out_shape = {n, cout, ho, wo};
  std::vector<double> y;
  for (std::int64_t in = 0; in < n; ++in)
    for (std::int64_t co = 0; co < cout; ++co)
      for (std::int64_t oh = 0; oh < ho; ++oh)
        for (std::int64_t ow = 0; ow < wo; ++ow) {
          double acc = b.empty() ? 0.0 : b[co];
          const std::int64_t group = co / cout_g;
          for (std::int64_t ci = 0; ci < cin_g; ++ci)
            for (std::int64_t r = 0; r < kh; ++r)
              for (std::int64_t s = 0; s < kw; ++s) {
                const std::int64_t ih = oh * c.stride[0] - c.padding[0] + r * c.dilation[0];
                const std::int64_t iw = ow * c.stride[1] - c.padding[1] + s * c.dilation[1];
                if (ih < 0 || ih >= h || iw < 0 || iw >= wd) continue;
                const std::int64_t cx = group * cin_g + ci;
                acc += x[((in * cin + cx) * h + ih) * wd + iw] *
                       w[((co * cin_g + ci) * kh + r) * kw + s];
              }
          y.push_back(acc);
        }
  return y;
}

Tensor run_conv(const ConvCase& c, const std::vector<Tensor>& in) {
  return conv2d(in[0], in[1], in[2], c.stride, c.padding, c.dilation, c.groups);
}

// conv2d of the case's float64 inputs against direct_conv, to 1e-12; returns direct_conv's values.
std::vector<double> expect_forward_matches_direct_loop(const ConvCase& c,
                                                       const std::vector<Tensor>& in) {
  Shape expected_shape;
  std::vector<double> expected =
      direct_conv(c, to_vector(in[0]), to_vector(in[1]),
                  c.bias ? to_vector(in[2]) : std::vector<double>{}, expected_shape);
  const Tensor y = run_conv(c, in);
  EXPECT_EQ(y.shape(), expected_shape);
  EXPECT_TRUE(all_close(y, expected, 1e-12, 1e-12));
  return expected;
}

TEST(Conv2d, ForwardMatchesDirectLoop) {
  for (const ConvCase& c : odd_cases()) {
    SCOPED_TRACE(c.name);
    const std::vector<Tensor> in = make_inputs(c, 7);
    const std::vector<double> expected = expect_forward_matches_direct_loop(c, in);
    // float32 agrees to float32 precision.
    const Tensor y32 =
        conv2d(in[0].to(kFloat32), in[1].to(kFloat32), c.bias ? in[2].to(kFloat32) : Tensor(),
               c.stride, c.padding, c.dilation, c.groups);
    EXPECT_TRUE(all_close(y32, expected, 1e-5, 1e-5));
  }
}

// Cases with at least 16 channels per group on both sides, which Note [Which CPU convolution]
// (kernels/cpu/conv.cpp) sends to oneDNN's direct convolution by default: channel counts off its
// blocks of 8 and 16, stride, padding, dilation, groups, batch 1, a 1x1 and a 5x5 kernel.
std::vector<ConvCase> wide_cases() {
  return {
      {"wide_16_to_16_pad1", {2, 16, 6, 7}, {16, 16, 3, 3}, true, {1, 1}, {1, 1}},
      {"wide_17_to_33_stride2", {1, 17, 9, 8}, {33, 17, 3, 3}, true, {2, 2}, {1, 1}},
      {"wide_groups2", {2, 32, 5, 6}, {40, 16, 3, 3}, true, {1, 1}, {1, 1}, {1, 1}, 2},
      {"wide_dilation2", {1, 24, 9, 9}, {20, 24, 3, 3}, false, {1, 1}, {2, 2}, {2, 2}},
      {"wide_pointwise_1x1", {3, 16, 4, 5}, {24, 16, 1, 1}},
      {"wide_batch1_5x5_pad2", {1, 20, 7, 6}, {18, 20, 5, 5}, true, {1, 1}, {2, 2}},
      {"wide_stride_2x3_nonsquare", {2, 16, 8, 11}, {16, 16, 3, 2}, false, {2, 3}, {0, 1}},
      {"wide_permuted_input", {2, 16, 5, 4}, {16, 16, 3, 3}, true, {1, 1}, {1, 1}, {1, 1}, 1, true},
  };
}

// Every case of both tables.
std::vector<ConvCase> all_cases() {
  std::vector<ConvCase> cases = odd_cases();
  for (ConvCase& c : wide_cases())
    cases.push_back(std::move(c));
  return cases;
}

// float32 forward, input gradient and weight gradient against float64 on the same values (the
// float64 path is checked against the direct loop above and by the gradchecks). Bound per
// element: any order of summing the n products of one output, n its reduction length, rounds by
// at most (n + 2) u sum |terms| (u = 2^-24); sum |terms| is the same operation in float64 on the
// inputs' absolute values. Holds for im2col + GEMM and for oneDNN's direct convolution alike.
void expect_float32_within_rounding(const std::vector<ConvCase>& cases) {
  auto abs_of = [](const Tensor& t) {
    std::vector<double> v = to_vector(t);
    for (double& e : v)
      e = std::abs(e);
    return test::make_tensor(v, t.shape(), kFloat64);
  };
  auto expect_within = [](const Tensor& got, const Tensor& exact, const Tensor& magnitude,
                          double terms, const char* what) {
    const std::vector<double> g = to_vector(got), e = to_vector(exact), m = to_vector(magnitude);
    ASSERT_EQ(g.size(), e.size());
    const double u = 0x1p-24;
    for (std::size_t i = 0; i < g.size(); ++i) {
      ASSERT_LE(std::abs(g[i] - e[i]), (terms + 2) * u * m[i] + 1e-30) << what << " at " << i;
    }
  };
  for (const ConvCase& c : cases) {
    SCOPED_TRACE(c.name);
    const std::vector<Tensor> in = make_inputs(c, 23);
    const ops::Conv2dParams p{c.stride[0],   c.stride[1],   c.padding[0], c.padding[1],
                              c.dilation[0], c.dilation[1], c.groups};
    // Values a float32 holds exactly, so that both precisions multiply the same numbers.
    auto representable = [](const Tensor& t) { return t.detach().to(kFloat32).to(kFloat64); };
    const Tensor x = representable(in[0]), w = representable(in[1]);
    const Tensor b = c.bias ? representable(in[2]) : Tensor();
    const Tensor y = ops::conv2d(x, w, b, p);
    const Tensor dy = representable(uniform_input(y.shape(), -1.0, 1.0, 29));
    auto f32 = [](const Tensor& t) { return t.defined() ? t.to(kFloat32) : Tensor(); };
    // x as the case has it (a permuted view stays one): the entries make operands contiguous.
    const Tensor x32 = c.permuted_input ? f32(in[0].detach()) : f32(x);
    const std::int64_t kernel_area = c.w[2] * c.w[3];
    expect_within(ops::conv2d(x32, f32(w), f32(b), p), y,
                  ops::conv2d(abs_of(x), abs_of(w), c.bias ? abs_of(b) : Tensor(), p),
                  static_cast<double>(c.w[1] * kernel_area + 1), "forward");
    expect_within(ops::conv2d_input_grad(f32(dy), f32(w), x.shape(), p),
                  ops::conv2d_input_grad(dy, w, x.shape(), p),
                  ops::conv2d_input_grad(abs_of(dy), abs_of(w), x.shape(), p),
                  static_cast<double>(c.w[0] / c.groups * kernel_area), "input grad");
    expect_within(ops::conv2d_weight_grad(f32(dy), x32, w.shape(), p),
                  ops::conv2d_weight_grad(dy, x, w.shape(), p),
                  ops::conv2d_weight_grad(abs_of(dy), abs_of(x), w.shape(), p),
                  static_cast<double>(y.shape()[0] * y.shape()[2] * y.shape()[3]), "weight grad");
  }
}

// im2col + GEMM under each CPU GEMM backend (Eigen; oneDNN in builds with it).
TEST(Conv2d, Float32MatchesFloat64UnderEachCpuGemmBackend) {
  std::vector<ops::CpuGemmBackend> backends = {ops::CpuGemmBackend::Eigen};
  if (kernels::cpu::onednn::built()) backends.push_back(ops::CpuGemmBackend::OneDnn);
  const ops::CpuConv2dAlgorithmGuard gemm(ops::CpuConv2dAlgorithm::Gemm);
  for (ops::CpuGemmBackend backend : backends) {
    SCOPED_TRACE(backend == ops::CpuGemmBackend::OneDnn ? "onednn" : "eigen");
    const ops::CpuGemmBackendGuard guard(backend);
    expect_float32_within_rounding(all_cases());
  }
}

// oneDNN's direct convolution wherever it has one (the wide cases; odd ones such as depthwise or
// 2 channels per group it may decline, and those then run im2col + GEMM), at 1 and 2 threads (a
// primitive is built per thread count), and the default choice.
// A case of 2.6 MB per sample (input and output) in 7 samples: pieces of 3 samples (Note [Direct
// convolution pieces], 8 MiB) make 3 + 3 + 1 at one thread and 3 | 3 + 1 at two, so the weight
// gradient sums pieces within a chunk and chunks after.
TEST(Conv2d, Float32MatchesFloat64UnderTheDirectConvolution) {
  const int threads_before = get_num_threads();
  std::vector<ConvCase> cases = all_cases();
  cases.push_back({"wide_in_pieces", {7, 16, 128, 160}, {16, 16, 3, 3}, true, {1, 1}, {1, 1}});
  for (int threads : {1, 2}) {
    SCOPED_TRACE("threads " + std::to_string(threads));
    set_num_threads(threads);
    const ops::CpuConv2dAlgorithmGuard direct(ops::CpuConv2dAlgorithm::Direct);
    expect_float32_within_rounding(cases);
  }
  set_num_threads(threads_before);
  const ops::CpuConv2dAlgorithmGuard automatic(ops::CpuConv2dAlgorithm::Auto);
  expect_float32_within_rounding(all_cases());
}

// The direct convolution is really there for the usual 3 x 3 in a build with oneDNN (on any
// x86-64 with AVX2 oneDNN generates one), and nowhere without it.
TEST(Conv2d, DirectConvolutionExistsWhereOneDnnIsBuilt) {
  const Shape x{2, 16, 6, 7}, w{16, 16, 3, 3};
  ops::Conv2dParams p;
  p.pad_h = p.pad_w = 1;
  const Tensor xt = uniform_input(x, -1.0, 1.0, 3).detach().to(kFloat32);
  const Tensor wt = uniform_input(w, -1.0, 1.0, 4).detach().to(kFloat32);
  Conv2dGeometry g;
  g.batch = 2, g.in_channels = 16, g.in_h = 6, g.in_w = 7, g.out_channels = 16;
  g.kernel_h = g.kernel_w = 3, g.out_h = 6, g.out_w = 7, g.pad_h = g.pad_w = 1;
  Tensor y = empty({2, 16, 6, 7});
  const bool ran = kernels::cpu::onednn::conv2d_direct_forward(
      g, static_cast<float*>(y.data_ptr()), static_cast<const float*>(xt.data_ptr()),
      static_cast<const float*>(wt.data_ptr()), nullptr);
  EXPECT_EQ(ran, kernels::cpu::onednn::built());
  if (!ran) return;
  const ops::CpuConv2dAlgorithmGuard gemm(ops::CpuConv2dAlgorithm::Gemm);
  // Both within (144 + 2) u sum |terms| of the exact sum (above), so within twice that of each
  // other; sum |terms| <= 144 here (|x|, |w| <= 1).
  EXPECT_TRUE(
      all_close(y, to_vector(ops::conv2d(xt, wt, Tensor(), p)), 0, 2 * 146 * 144 * 0x1p-24));
}

// Several threads convolving at once share the primitive cache and each get their own scratch:
// every result equals the one computed alone (same primitive, same thread count: bitwise).
TEST(Conv2d, DirectConvolutionFromSeveralThreadsAtOnce) {
  const ops::CpuConv2dAlgorithmGuard direct(ops::CpuConv2dAlgorithm::Direct);
  const Tensor x = uniform_input({4, 32, 10, 9}, -1.0, 1.0, 5).detach().to(kFloat32);
  const Tensor w = uniform_input({24, 32, 3, 3}, -1.0, 1.0, 6).detach().to(kFloat32);
  ops::Conv2dParams p;
  p.pad_h = p.pad_w = 1;
  const std::vector<double> alone = to_vector(ops::conv2d(x, w, Tensor(), p));
  std::vector<std::vector<double>> results(4);
  std::vector<std::thread> threads;
  for (std::size_t t = 0; t < results.size(); ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 10; ++i)
        results[t] = to_vector(ops::conv2d(x, w, Tensor(), p));
    });
  }
  for (std::thread& t : threads)
    t.join();
  for (const std::vector<double>& r : results)
    EXPECT_EQ(r, alone);
}

TEST(Conv2d, CpuConv2dAlgorithmSwitchRoundTrips) {
  const ops::CpuConv2dAlgorithm before = ops::cpu_conv2d_algorithm();
  {
    const ops::CpuConv2dAlgorithmGuard guard(ops::CpuConv2dAlgorithm::Direct);
    EXPECT_EQ(ops::cpu_conv2d_algorithm(), ops::CpuConv2dAlgorithm::Direct);
    {
      const ops::CpuConv2dAlgorithmGuard inner(ops::CpuConv2dAlgorithm::Gemm);
      EXPECT_EQ(ops::cpu_conv2d_algorithm(), ops::CpuConv2dAlgorithm::Gemm);
    }
    EXPECT_EQ(ops::cpu_conv2d_algorithm(), ops::CpuConv2dAlgorithm::Direct);
  }
  EXPECT_EQ(ops::cpu_conv2d_algorithm(), before);
}

TEST(Conv2d, GradcheckOddCases) {
  for (const ConvCase& c : odd_cases()) {
    SCOPED_TRACE(c.name);
    EXPECT_TRUE(gradcheck([&c](const std::vector<Tensor>& in) { return run_conv(c, in); },
                          make_inputs(c, 11)));
  }
}

// Cases for the convolution by padded rows (kernels/cpu/conv_rows.cpp): stride 1, dilation 1,
// padding below the kernel's size. Output channels 1 to 9 (blocks of 4 and their remainders, in
// the forward and, as in channels, the input gradient), groups, a 5 x 3 kernel with uneven
// padding, no padding, a single-pixel output, planes wider than a chunk of the wide grid.
std::vector<ConvCase> rows_cases() {
  return {
      {"rows_16_to_1", {2, 16, 6, 7}, {1, 16, 3, 3}, true, {1, 1}, {1, 1}},
      {"rows_1_to_1_laplacian", {3, 1, 5, 4}, {1, 1, 3, 3}, false, {1, 1}, {1, 1}},
      {"rows_3_to_2_no_padding", {2, 3, 6, 5}, {2, 3, 3, 3}, true},
      {"rows_5_to_3_kernel_5x3", {1, 5, 8, 6}, {3, 5, 5, 3}, true, {1, 1}, {2, 0}},
      {"rows_6_to_9_groups3", {2, 6, 5, 5}, {9, 2, 3, 3}, true, {1, 1}, {1, 1}, {1, 1}, 3},
      {"rows_7_to_4_one_pixel", {2, 7, 3, 3}, {4, 7, 3, 3}, true},
      {"rows_2_to_5_wide", {1, 2, 4, 70}, {5, 2, 3, 3}, true, {1, 1}, {1, 1}},
  };
}

// Under CpuConv2dAlgorithm::Rows: the forward against the direct loop, the gradients against
// finite differences (float64), and float32 within a sum's rounding of float64, for every case
// (those it does not take run im2col + GEMM), at 1 and 2 threads.
TEST(Conv2d, ConvolutionByPaddedRowsMatchesTheReferences) {
  const ops::CpuConv2dAlgorithmGuard rows(ops::CpuConv2dAlgorithm::Rows);
  for (const ConvCase& c : rows_cases()) {
    SCOPED_TRACE(c.name);
    expect_forward_matches_direct_loop(c, make_inputs(c, 31));
    EXPECT_TRUE(gradcheck([&c](const std::vector<Tensor>& t) { return run_conv(c, t); },
                          make_inputs(c, 37)));
  }
  const int threads_before = get_num_threads();
  std::vector<ConvCase> cases = rows_cases();
  for (ConvCase& c : all_cases())
    cases.push_back(std::move(c));
  for (int threads : {1, 2}) {
    SCOPED_TRACE("threads " + std::to_string(threads));
    set_num_threads(threads);
    expect_float32_within_rounding(cases);
  }
  set_num_threads(threads_before);
  // The default's choice among the paths, over the same cases.
  const ops::CpuConv2dAlgorithmGuard automatic(ops::CpuConv2dAlgorithm::Auto);
  expect_float32_within_rounding(rows_cases());
}

// An infinity in the input reaches the weight gradient only through the taps that read it: the
// padded rows' weight gradient, whose wide grid multiplies it by zeros of dy for other taps, must
// not turn those taps' entries into NaN. Against im2col + GEMM, whose columns hold the taps' own
// pixels: the same entries infinite, the same NaN, the rest within rounding (float64).
TEST(Conv2d, ConvolutionByPaddedRowsKeepsAnInfinityToItsTaps) {
  Tensor x = uniform_input({2, 2, 4, 5}, -1.0, 1.0, 41).detach();
  x.data_ptr<double>()[1 * 40 + 0 * 20 + 1 * 5 + 4] = std::numeric_limits<double>::infinity();
  const Tensor dy = uniform_input({2, 1, 4, 5}, -1.0, 1.0, 43).detach();
  ops::Conv2dParams p;
  p.pad_h = p.pad_w = 1;
  std::vector<double> by[2];
  for (int k = 0; k < 2; ++k) {
    const ops::CpuConv2dAlgorithmGuard guard(k == 0 ? ops::CpuConv2dAlgorithm::Gemm
                                                    : ops::CpuConv2dAlgorithm::Rows);
    by[k] = to_vector(ops::conv2d_weight_grad(dy, x, {1, 2, 3, 3}, p));
  }
  int finite = 0;
  for (std::size_t i = 0; i < by[0].size(); ++i) {
    const double gemm = by[0][i], rows = by[1][i];
    if (std::isnan(gemm) || std::isinf(gemm)) {
      EXPECT_TRUE(std::isnan(gemm) ? std::isnan(rows) : rows == gemm) << i;
    } else {
      ++finite;
      EXPECT_NEAR(rows, gemm, 1e-12) << i;
    }
  }
  // The taps whose column reaches x's last column from no valid output stay finite.
  EXPECT_GT(finite, 0);
  EXPECT_LT(finite, 18);
}

TEST(Conv2d, HalfAndBFloat16RoundTheFloat32Result) {
  const ConvCase c{"f16", {2, 3, 6, 5}, {4, 3, 3, 3}, true, {1, 1}, {1, 1}};
  const std::vector<Tensor> in = make_inputs(c, 3);
  for (DType dtype : {kFloat16, kBFloat16}) {
    const Tensor x = in[0].to(dtype), w = in[1].to(dtype), b = in[2].to(dtype);
    const Tensor expected =
        conv2d(x.to(kFloat32), w.to(kFloat32), b.to(kFloat32), c.stride, c.padding);
    const Tensor y = conv2d(x, w, b, c.stride, c.padding);
    EXPECT_EQ(y.dtype(), dtype);
    EXPECT_TRUE(all_close(y, to_vector(expected.to(dtype)), 0, 0));
  }
}

TEST(Conv2d, MatchesPyTorch) {
  for (const test::ReferenceCase& rc : test::load_reference("conv2d.json")) {
    SCOPED_TRACE(rc.name);
    const auto& p = rc.params;
    const Size2 stride = {p["stride"][0], p["stride"][1]};
    const Size2 padding = {p["padding"][0], p["padding"][1]};
    const Size2 dilation = {p["dilation"][0], p["dilation"][1]};
    const std::int64_t groups = p["groups"];
    const bool has_bias = rc.tensors.count("b") != 0;
    Tensor x = rc.at("x").clone().requires_grad_();
    Tensor w = rc.at("w").clone().requires_grad_();
    Tensor b = has_bias ? rc.at("b").clone().requires_grad_() : Tensor();
    const Tensor y = conv2d(x, w, b, stride, padding, dilation, groups);
    y.backward(rc.at("grad_y"));
    // PyTorch's default float32 tolerances (torch.testing.assert_close).
    constexpr double kRtol = 1.3e-6, kAtol = 1e-5;
    EXPECT_TRUE(all_close(y, to_vector(rc.at("y")), kRtol, kAtol));
    EXPECT_TRUE(all_close(x.grad(), to_vector(rc.at("dx")), kRtol, kAtol));
    EXPECT_TRUE(all_close(w.grad(), to_vector(rc.at("dw")), kRtol, kAtol));
    if (has_bias) {
      EXPECT_TRUE(all_close(b.grad(), to_vector(rc.at("db")), kRtol, kAtol));
    }
  }
}

// The message of the error `fn` throws (empty if none, or another type).
template <typename E, typename F>
std::string error_message(F&& fn) {
  try {
    fn();
  } catch (const E& e) {
    return e.what();
  } catch (...) {
    return "(another exception type)";
  }
  return "(no exception)";
}

TEST(Conv2d, BadShapesRaiseShapeErrorNamingTheShapes) {
  const Tensor x = zeros({2, 4, 5, 5});
  const Tensor w = zeros({6, 2, 3, 3});
  // (A 3-D input is an unbatched one: Note [Unbatched convolutions].)
  std::string m = error_message<ShapeError>([&] { conv2d(zeros({5, 5}), w); });
  EXPECT_NE(m.find("expected a 4-D input"), std::string::npos) << m;
  EXPECT_NE(m.find("[5, 5]"), std::string::npos) << m;
  m = error_message<ShapeError>([&] { conv2d(x, zeros({6, 2, 3})); });
  EXPECT_NE(m.find("4-D weight"), std::string::npos) << m;
  m = error_message<ShapeError>([&] {
    conv2d(zeros({2, 5, 5, 5}), zeros({6, 1, 3, 3}), {}, {1, 1}, {0, 0}, {1, 1}, 2);
  });
  EXPECT_NE(m.find("not divisible by groups"), std::string::npos) << m;
  m = error_message<ShapeError>([&] { conv2d(x, w); });  // 4 channels, weight wants 2
  EXPECT_NE(m.find("[6, 2, 3, 3]"), std::string::npos) << m;
  EXPECT_NE(m.find("[2, 4, 5, 5]"), std::string::npos) << m;
  m = error_message<ShapeError>([&] { conv2d(x, zeros({6, 4, 7, 7}), {}, {1, 1}, {0, 0}); });
  EXPECT_NE(m.find("larger than the padded input"), std::string::npos) << m;
  // With padding 1 the 7x7 kernel fits the 5x5 input: no error.
  EXPECT_EQ(conv2d(x, zeros({6, 4, 7, 7}), {}, {1, 1}, {1, 1}).shape(), (Shape{2, 6, 1, 1}));
  m = error_message<ShapeError>([&] { conv2d(x, zeros({6, 4, 3, 3}), zeros({5})); });
  EXPECT_NE(m.find("bias of shape"), std::string::npos) << m;
  m = error_message<ShapeError>([&] { conv2d(x, zeros({6, 4, 3, 3}), {}, {0, 1}); });
  EXPECT_NE(m.find("stride"), std::string::npos) << m;
}

TEST(Conv2d, DTypeMismatchRaisesDTypeError) {
  const Tensor x = zeros({1, 2, 4, 4});
  EXPECT_THROW(conv2d(x, zeros({3, 2, 3, 3}, kFloat64)), DTypeError);
  EXPECT_THROW(conv2d(x, zeros({3, 2, 3, 3}), zeros({3}, kFloat16)), DTypeError);
  EXPECT_THROW(conv2d(zeros({1, 2, 4, 4}, kInt64), zeros({3, 2, 3, 3}, kInt64)), DTypeError);
}

TEST(Conv2d, DeviceMismatchRaisesDeviceError) {
  if (!cuda::is_available()) GTEST_SKIP() << "no CUDA device";
  const Tensor x = zeros({1, 2, 4, 4});
  EXPECT_THROW(conv2d(x, zeros({3, 2, 3, 3}).cuda()), DeviceError);
  EXPECT_THROW(conv2d(x.cuda(), zeros({3, 2, 3, 3}).cuda(), zeros({3})), DeviceError);
}

TEST(Conv2d, BackendSwitchRoundTrips) {
  const ops::Conv2dBackend before = ops::conv2d_backend();
  {
    ops::Conv2dBackendGuard guard(ops::Conv2dBackend::Cudnn);
    EXPECT_EQ(ops::conv2d_backend(), ops::Conv2dBackend::Cudnn);
    // The CPU ignores the backend.
    EXPECT_EQ(conv2d(ones({1, 1, 3, 3}), ones({1, 1, 3, 3})).item<float>(), 9.0f);
    try {
      ops::Conv2dBackendGuard inner(ops::Conv2dBackend::ImplicitGemm);
      throw std::runtime_error("leaving by an exception");
    } catch (const std::runtime_error&) {
    }
    EXPECT_EQ(ops::conv2d_backend(), ops::Conv2dBackend::Cudnn);
  }
  EXPECT_EQ(ops::conv2d_backend(), before);
}

TEST(Conv2d, EmptyBatchGivesEmptyOutputAndZeroWeightGrad) {
  Tensor x = zeros({0, 2, 5, 5}).requires_grad_();
  Tensor w = ones({3, 2, 3, 3}).requires_grad_();
  const Tensor y = conv2d(x, w);
  EXPECT_EQ(y.shape(), (Shape{0, 3, 3, 3}));
  y.sum().backward();
  EXPECT_TRUE(all_close(w.grad(), std::vector<double>(54, 0.0), 0, 0));
}

// Note [Huge convolutions] in kernels/cuda/conv.cu: an input of 2^31 or more elements runs as
// sub-batches. Checked against the same convolution done by hand on two halves of the batch
// (each below the limit): the forward's halves concatenated, the input gradient likewise, the
// weight gradient their sum. bfloat16 keeps it to ~20 GB of device memory; on both CUDA
// implementations.
TEST(Conv2d, CudaInputsOf2To31ElementsRunAsSubBatches) {
  if (!cuda::is_available()) GTEST_SKIP() << "no CUDA device";
  constexpr std::int64_t kBatch = 514;  // 514 x 64 x 256 x 256 = 2.16e9 elements
  const auto options = TensorOptions(kBFloat16).device(Device::cuda());
  const Tensor x = rand({kBatch, 64, 256, 256}, options);
  const Tensor w = rand({8, 64, 3, 3}, options) * 0.05;
  ops::Conv2dParams p;
  p.pad_h = p.pad_w = 1;
  const Tensor first = x.slice(0, 0, kBatch / 2);
  const Tensor second = x.slice(0, kBatch / 2, kBatch);
  for (ops::Conv2dBackend backend : {ops::Conv2dBackend::ImplicitGemm, ops::Conv2dBackend::Cudnn}) {
    SCOPED_TRACE(backend == ops::Conv2dBackend::Cudnn ? "cudnn" : "implicit gemm");
    const ops::Conv2dBackendGuard guard(backend);
    const Tensor y = ops::conv2d(x, w, Tensor(), p);
    const Tensor y_halves =
        cat({ops::conv2d(first, w, Tensor(), p), ops::conv2d(second, w, Tensor(), p)}, 0);
    // The implicit GEMM reduces each output in the same order whatever the batch: equal; cuDNN
    // may pick another algorithm for another batch size: within an ulp of bfloat16.
    const auto max_abs = [](const Tensor& t) {
      return ops::reduce(ReduceOp::Max, ops::unary(UnaryOp::Abs, t.to(kFloat32)), {}, false)
          .item<float>();
    };
    const double y_tolerance =
        backend == ops::Conv2dBackend::Cudnn ? 0.0078125 * max_abs(y_halves) : 0.0;
    EXPECT_LE(max_abs(y - y_halves), y_tolerance);
    const Tensor dy = y.detach();
    const Tensor dw = ops::conv2d_weight_grad(dy, x, w.shape(), p).to(kFloat32);
    const Tensor dw_halves =
        (ops::conv2d_weight_grad(dy.slice(0, 0, kBatch / 2), first, w.shape(), p).to(kFloat32) +
         ops::conv2d_weight_grad(dy.slice(0, kBatch / 2, kBatch), second, w.shape(), p)
             .to(kFloat32));
    // The sub-batches of one call add in float32 (implicit GEMM) or bfloat16 (cuDNN's beta = 1),
    // the two hand-made halves in float32 after rounding each to bfloat16: at most a few
    // bfloat16 ulps apart.
    EXPECT_LE(max_abs(dw - dw_halves), 4 * 0.0078125 * max_abs(dw_halves));
  }
}

}  // namespace
}  // namespace leangrad
