// The kernels over random layouts (tests/kernels/random_layouts.h): seeded shapes laid out as
// user code lays them out (permuted, sliced with a start and a step, padded, broadcast, offset,
// overlapping), so that the fast paths each layout selects (contiguous runs, tiled transposes,
// broadcast rows, kept broadcast dims reduced once, lanes along one dim or across another) meet
// shapes that no hand-written case names. What they must give:
//   - elementwise ops (unary, binary, compare, where, casts, activations and their gradients),
//     scans, sorts, softmax, cat and gathers, and the layers with their gradients (on the CPU):
//     the bits of the same op on the test's own contiguous copy of the inputs, or the same
//     refusal. Such a result does not depend on the layout (docs/kernels.md); the contiguous
//     path is checked against references of its own in each op's tests. A bias's gradient, a
//     sum, within its bound.
//   - writes (copy_, fill_, the in-place ops) into a strided view: that view's elements as the
//     same write into a contiguous copy gives them, and not one byte of the storage outside the
//     view changed; copy_ or an in-place op into a broadcast view refused, the storage untouched.
//   - reductions: maxima, minima and their indices exactly those of a plain loop over the
//     elements in logical order (PyTorch's rules for NaN and ties); sums, means and products
//     within their error bounds of a long double loop, integers exactly.
// Each runs on the CPU and, on a GPU, on CUDA (the RandomLayouts fixture). A failure names the
// case: its shapes, strides, offsets and dtypes (docs/testing.md, "Random layouts").
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <leangrad/autograd/fold_functions.h>
#include <leangrad/autograd/functions.h>
#include <leangrad/autograd/indexing_functions.h>
#include <leangrad/autograd/nn_functions.h>
#include <leangrad/core/cuda.h>
#include <leangrad/core/error.h>
#include <leangrad/core/half.h>
#include <leangrad/kernels/creation.h>
#include <leangrad/kernels/ops.h>
#include "kernels/every_unary_op.h"
#include "kernels/random_layouts.h"
#include "testing/tensor_testing.h"
#include "testing/thread_count.h"
#include "testing/within_bound.h"

namespace leangrad {
namespace {

using test::LayoutRng;
using test::materialize;
using test::random_shape;
using test::random_view;
using test::RandomView;
using test::same_elements;

const DType kAllDTypes[] = {kFloat32, kFloat64, kFloat16, kBFloat16, kInt64, kInt32, kUInt8, kBool};
const DType kFloatingDTypes[] = {kFloat32, kFloat64, kFloat16, kBFloat16};
const DType kNumericDTypes[] = {kFloat32, kFloat64, kFloat16, kBFloat16, kInt64, kInt32, kUInt8};

// The generator of a test: its own seed, plus LEANGRAD_RANDOM_LAYOUTS_SEED when set, so that a
// search for rarer cases can run the tests over many seeds, as one shell line:
//   for s in $(seq 100); do LEANGRAD_RANDOM_LAYOUTS_SEED=$s build/tests/leangrad_tests
//     --gtest_filter='*RandomLayouts.*' --gtest_brief=1 || echo "seed $s"; done
// (the suite runs the fixed ones).
LayoutRng seeded(std::uint64_t seed) {
  const char* extra = std::getenv("LEANGRAD_RANDOM_LAYOUTS_SEED");
  return LayoutRng(seed + (extra != nullptr ? std::strtoull(extra, nullptr, 10) * 1000 : 0));
}

using Outputs = std::vector<Tensor>;
using Op = std::function<Outputs(const std::vector<Tensor>&)>;

using Compare = std::function<::testing::AssertionResult(std::size_t output, const Tensor& got,
                                                         const Tensor& want)>;

std::string describe(const std::vector<RandomView>& views) {
  std::string out;
  for (std::size_t k = 0; k < views.size(); ++k)
    out += "\n  operand " + std::to_string(k) + ": " + views[k].description;
  return out;
}

DType random_dtype(LayoutRng& rng, const DType* first, std::size_t count) {
  return first[std::uniform_int_distribution<std::size_t>(0, count - 1)(rng)];
}

// gamma(k) = k u / (1 - k u): the relative bound of k roundings of unit u (Higham, "Accuracy and
// Stability of Numerical Algorithms", 3.1); 0 for k <= 0.
double gamma(double k, double u) {
  k = std::max(k, 0.0);
  return k * u / (1 - k * u);
}

// The unit roundoff of a result's last rounding to `dtype`: float16's and bfloat16's own, where
// math_unit_roundoff gives the float32 they are computed in.
double result_unit_roundoff(DType dtype) {
  if (dtype == kFloat16) return 0x1p-11;
  if (dtype == kBFloat16) return 0x1p-8;
  return test::math_unit_roundoff(dtype);
}

// Fills the storage of a view with finite values: floating ones of magnitude in [lo, hi), either
// sign; integers as random_values makes them.
void magnitudes(LayoutRng& rng, const Tensor& storage, double lo, double hi) {
  test::random_values(rng, storage, /*finite_only=*/true);
  std::uniform_real_distribution<double> u(lo, hi);
  std::bernoulli_distribution negative(0.5);
  void* p = storage.data_ptr();
  for (std::int64_t i = 0; i < storage.numel(); ++i) {
    const double v = (negative(rng) ? -1 : 1) * u(rng);
    switch (storage.dtype()) {
      case kFloat32:
        static_cast<float*>(p)[i] = static_cast<float>(v);
        break;
      case kFloat64:
        static_cast<double*>(p)[i] = v;
        break;
      case kFloat16:
        static_cast<Half*>(p)[i] = Half(static_cast<float>(v));
        break;
      case kBFloat16:
        static_cast<BFloat16*>(p)[i] = BFloat16(static_cast<float>(v));
        break;
      default:
        return;
    }
  }
}

// The tests run on the CPU and, when a GPU is there, on CUDA: a case's storage is made on the
// CPU and copied to the device whole, the view taken over the copy with the same sizes, strides
// and offset, and the results compared on the CPU. Both devices compute an element the same way
// whatever the layout, so the same bits are asked of each.
class RandomLayouts : public ::testing::TestWithParam<DeviceType> {
 protected:
  void SetUp() override {
    if (GetParam() == DeviceType::CUDA && !cuda::is_available()) GTEST_SKIP() << "no CUDA device";
  }
  Device device() const { return GetParam() == DeviceType::CUDA ? Device::cuda(0) : Device::cpu(); }

  // The CPU view v on this test's device: its whole storage copied there, the view's sizes,
  // strides and offset over the copy.
  Tensor on_device(const Tensor& v) const {
    if (device().is_cpu()) return v;
    const auto n = static_cast<std::int64_t>(v.storage()->nbytes() / v.element_size());
    return v.as_strided({n}, {1}, 0)
        .to(device())
        .as_strided(v.shape(), v.strides(), v.storage_offset());
  }

  // op on the views and on contiguous copies of them made by the test, on this test's device:
  // both refuse (a leangrad::Error), or both give outputs with the same elements (or as
  // `compare` says of them, on the CPU).
  ::testing::AssertionResult layout_free(const Op& op, const std::vector<Tensor>& views,
                                         const Compare& compare = nullptr) const {
    std::vector<Tensor> on, copies;
    for (const Tensor& v : views) {
      on.push_back(on_device(v));
      copies.push_back(materialize(v).to(device()));
    }
    std::optional<Outputs> got, want;
    std::string got_error, want_error;
    try {
      got = op(on);
    } catch (const Error& e) {
      got_error = e.what();
    }
    try {
      want = op(copies);
    } catch (const Error& e) {
      want_error = e.what();
    }
    if (!got && !want) return ::testing::AssertionSuccess();
    if (!got) return ::testing::AssertionFailure() << "the views were refused: " << got_error;
    if (!want) {
      return ::testing::AssertionFailure()
             << "the contiguous copies were refused (" << want_error << ") but not the views";
    }
    for (std::size_t k = 0; k < got->size(); ++k) {
      const Tensor g = (*got)[k].cpu(), w = (*want)[k].cpu();
      ::testing::AssertionResult same = compare ? compare(k, g, w) : same_elements(g, w);
      if (!same) return ::testing::AssertionFailure() << "output " << k << ": " << same.message();
    }
    return ::testing::AssertionSuccess();
  }

  // layout_free, and on CUDA also the bits of the CPU's op, for the ops whose kernels the two
  // devices share exactly (kernels/elementwise_math.h's defined integer and conversion semantics,
  // comparisons, selections, gathers, scatters by assignment or extremum, sorts and the scans
  // that ops.h says give the same bits on both).
  ::testing::AssertionResult exact_on_every_device(const Op& op,
                                                   const std::vector<Tensor>& views) const {
    ::testing::AssertionResult same = layout_free(op, views);
    if (!same || device().is_cpu()) return same;
    std::vector<Tensor> on, host;
    for (const Tensor& v : views) {
      on.push_back(on_device(v));
      host.push_back(materialize(v));
    }
    Outputs got, want;
    try {
      got = op(on);
      want = op(host);
    } catch (const Error&) {
      return ::testing::AssertionSuccess();  // refused on one device: layout_free has the rest
    }
    for (std::size_t k = 0; k < got.size(); ++k) {
      ::testing::AssertionResult equal = same_elements(got[k].cpu(), want[k]);
      if (!equal) {
        return ::testing::AssertionFailure()
               << "output " << k << ", CUDA against the CPU: " << equal.message();
      }
    }
    return ::testing::AssertionSuccess();
  }

  ::testing::AssertionResult writes_only_the_view(
      const std::function<void(const Tensor&, const std::vector<Tensor>&)>& write,
      const RandomView& dst, const std::vector<Tensor>& operands) const;
};

INSTANTIATE_TEST_SUITE_P(Devices, RandomLayouts,
                         ::testing::Values(DeviceType::CPU, DeviceType::CUDA),
                         [](const ::testing::TestParamInfo<DeviceType>& info) {
                           return std::string(info.param == DeviceType::CUDA ? "cuda" : "cpu");
                         });

// ---- Elementwise ops ----------------------------------------------------------------------------

TEST_P(RandomLayouts, UnaryOpsGiveTheContiguousBits) {
  LayoutRng rng = seeded(101);
  for (const DType dtype : kAllDTypes) {
    for (int k = 0; k < 16; ++k) {
      const RandomView x = random_view(rng, random_shape(rng, 2048), dtype);
      for (const UnaryOp op : test::kEveryUnaryOp) {
        EXPECT_TRUE(
            layout_free([op](const auto& in) { return Outputs{ops::unary(op, in[0])}; }, {x.view}))
            << op_name(op) << describe({x});
      }
    }
  }
}

// Large enough to be split over threads, a few cheap ops.
TEST_P(RandomLayouts, UnaryOpsOfLargeViewsGiveTheContiguousBits) {
  LayoutRng rng = seeded(102);
  const UnaryOp kOps[] = {UnaryOp::Neg, UnaryOp::Exp, UnaryOp::Relu, UnaryOp::Sigmoid};
  for (const DType dtype : kFloatingDTypes) {
    for (int k = 0; k < 3; ++k) {
      Shape shape;
      do {
        shape = random_shape(rng, 300000);
      } while (shape.size() < 2);
      const RandomView x = random_view(rng, shape, dtype);
      for (const UnaryOp op : kOps) {
        EXPECT_TRUE(
            layout_free([op](const auto& in) { return Outputs{ops::unary(op, in[0])}; }, {x.view}))
            << op_name(op) << describe({x});
      }
    }
  }
}

TEST_P(RandomLayouts, BinaryOpsComparisonsAndWhereGiveTheContiguousBits) {
  LayoutRng rng = seeded(103);
  for (int k = 0; k < 250; ++k) {
    const Shape shape = random_shape(rng, 1024);
    const DType da = random_dtype(rng, kAllDTypes, std::size(kAllDTypes));
    const DType db = k % 4 == 0 ? random_dtype(rng, kAllDTypes, std::size(kAllDTypes)) : da;
    const RandomView a = random_view(rng, test::broadcast_operand_shape(rng, shape), da);
    const RandomView b = random_view(rng, test::broadcast_operand_shape(rng, shape), db);
    const RandomView cond = random_view(rng, test::broadcast_operand_shape(rng, shape), kBool);
    const bool integral = !is_floating(da) && !is_floating(db);
    for (int op = 0; op <= static_cast<int>(kLastBinaryOp); ++op) {
      const auto binary_op = static_cast<BinaryOp>(op);
      const Op apply = [binary_op](const auto& in) {
        return Outputs{ops::binary(binary_op, in[0], in[1])};
      };
      // Integers stay integers but for the ops computed in float (libm's and CUDA's functions
      // differ there): those results are the devices' shared integer semantics.
      const bool shared = integral && binary_op != BinaryOp::Div && binary_op != BinaryOp::Atan2 &&
                          binary_op != BinaryOp::Hypot && binary_op != BinaryOp::Copysign;
      EXPECT_TRUE(shared ? exact_on_every_device(apply, {a.view, b.view})
                         : layout_free(apply, {a.view, b.view}))
          << op_name(binary_op) << describe({a, b});
      EXPECT_TRUE(layout_free(
          [binary_op](const auto& in) { return Outputs{ops::binary(binary_op, in[0], 3.0)}; },
          {a.view}))
          << op_name(binary_op) << " with a scalar" << describe({a});
    }
    for (const CompareOp op : {CompareOp::Gt, CompareOp::Lt, CompareOp::Ge, CompareOp::Le,
                               CompareOp::Eq, CompareOp::Ne}) {
      EXPECT_TRUE(exact_on_every_device(
          [op](const auto& in) { return Outputs{ops::compare(op, in[0], in[1])}; },
          {a.view, b.view}))
          << op_name(op) << describe({a, b});
    }
    EXPECT_TRUE(exact_on_every_device(
        [](const auto& in) { return Outputs{ops::where(in[0], in[1], in[2])}; },
        {cond.view, a.view, b.view}))
        << "where" << describe({cond, a, b});
  }
}

TEST_P(RandomLayouts, CastsGiveTheContiguousBits) {
  LayoutRng rng = seeded(104);
  for (const DType from : kAllDTypes) {
    for (int k = 0; k < 8; ++k) {
      const RandomView x = random_view(rng, random_shape(rng, 4096), from);
      for (const DType to : kAllDTypes) {
        EXPECT_TRUE(exact_on_every_device(
            [to](const auto& in) { return Outputs{ops::cast(in[0], to)}; }, {x.view}))
            << "to " << to << describe({x});
      }
    }
  }
}

struct Activation {
  ActivationOp op;
  double p0, p1;
};
// Every ActivationOp with parameters in its domain (EluResult is a gradient only).
const Activation kActivations[] = {
    {ActivationOp::LeakyRelu, 0.1, 0},   {ActivationOp::Elu, 1.0, 1.0},
    {ActivationOp::Hardtanh, -1.0, 0.5}, {ActivationOp::Clamp, -0.5, 2.0},
    {ActivationOp::Gelu, 0, 0},          {ActivationOp::GeluTanh, 0, 0},
    {ActivationOp::Silu, 0, 0},          {ActivationOp::Mish, 0, 0},
    {ActivationOp::Softplus, 2.0, 5.0},  {ActivationOp::SmoothL1, 0.5, 0},
    {ActivationOp::Huber, 0.75, 0},      {ActivationOp::Hardswish, 0, 0},
    {ActivationOp::Hardsigmoid, 0, 0},   {ActivationOp::LogSigmoid, 0, 0},
    {ActivationOp::Softsign, 0, 0},      {ActivationOp::Tanhshrink, 0, 0},
    {ActivationOp::Celu, 1.5, 0},        {ActivationOp::Softshrink, 0.5, 0},
    {ActivationOp::Hardshrink, 0.5, 0},  {ActivationOp::Threshold, 0.25, 2.0}};

TEST_P(RandomLayouts, ActivationsAndTheirGradientsGiveTheContiguousBits) {
  LayoutRng rng = seeded(105);
  for (const DType dtype : kFloatingDTypes) {
    for (int k = 0; k < 6; ++k) {
      const Shape shape = random_shape(rng, 2048);
      const RandomView x = random_view(rng, shape, dtype);
      const RandomView grad = random_view(rng, shape, dtype);
      for (const Activation& a : kActivations) {
        EXPECT_TRUE(layout_free(
            [a](const auto& in) { return Outputs{ops::activation(a.op, in[0], a.p0, a.p1)}; },
            {x.view}))
            << op_name(a.op) << describe({x});
        EXPECT_TRUE(layout_free(
            [a](const auto& in) {
              return Outputs{ops::activation_backward(a.op, in[0], in[1], a.p0, a.p1)};
            },
            {grad.view, x.view}))
            << op_name(a.op) << " backward" << describe({grad, x});
      }
    }
  }
}

// A random dim of a shape with at least one dim, negative now and then.
std::int64_t random_dim(LayoutRng& rng, const Shape& shape) {
  const auto n = static_cast<std::int64_t>(shape.size());
  const std::int64_t d = std::uniform_int_distribution<std::int64_t>(0, n - 1)(rng);
  return std::uniform_int_distribution<int>(0, 3)(rng) == 0 ? d - n : d;
}

// An int64 view of `shape` (laid out at random) whose values are in [0, bound).
RandomView random_indices(LayoutRng& rng, const Shape& shape, std::int64_t bound) {
  RandomView index = random_view(rng, shape, kInt64);
  auto* data = index.storage.data_ptr<std::int64_t>();
  for (std::int64_t i = 0; i < index.storage.numel(); ++i)
    data[i] = std::uniform_int_distribution<std::int64_t>(0, bound - 1)(rng);
  return index;
}

// The ops that run along one dim (scans, sorts, softmax) or gather and scatter along it: each
// element of their results is made by the same steps in the same order whatever the layout (ops.h),
// so the bits are the contiguous copy's.
TEST_P(RandomLayouts, ScansSortsSoftmaxCatAndIndexingGiveTheContiguousBits) {
  LayoutRng rng = seeded(110);
  int checked = 0;
  for (int k = 0; k < 200; ++k) {
    const DType dtype = random_dtype(rng, kAllDTypes, std::size(kAllDTypes));
    Shape shape;
    do {
      shape = random_shape(rng, 2048);
    } while (shape.empty());
    const RandomView x = random_view(rng, shape, dtype);
    const std::int64_t dim = random_dim(rng, shape);
    const bool flag = k % 2 == 0;  // reverse, descending, log
    const std::string what = " along dim " + std::to_string(dim) + describe({x});
    for (const ScanOp op : {ScanOp::Sum, ScanOp::Prod, ScanOp::LogSumExp}) {
      // cumsum's and cumprod's steps are the same on both devices (ops.h); logcumsumexp's exp and
      // log are each device's own.
      const Op apply = [&](const auto& in) { return Outputs{ops::scan(op, in[0], dim, flag)}; };
      EXPECT_TRUE(op == ScanOp::LogSumExp ? layout_free(apply, {x.view})
                                          : exact_on_every_device(apply, {x.view}))
          << op_name(op) << (flag ? " reversed" : "") << what;
    }
    EXPECT_TRUE(exact_on_every_device(
        [&](const auto& in) {
          auto [values, indices] = ops::scan_extremum(in[0], dim, flag);
          return Outputs{values, indices};
        },
        {x.view}))
        << (flag ? "cummax" : "cummin") << what;
    EXPECT_TRUE(exact_on_every_device(
        [&](const auto& in) { return Outputs{ops::argsort(in[0], dim, flag)}; }, {x.view}))
        << "argsort" << (flag ? " descending" : "") << what;
    const RandomView grad = random_view(rng, shape, dtype);
    EXPECT_TRUE(layout_free(
        [&](const auto& in) {
          const Tensor out = ops::softmax(in[0], dim, flag);
          return Outputs{out, ops::softmax_backward(in[1], out, dim, flag)};
        },
        {x.view, grad.view}))
        << (flag ? "log_softmax" : "softmax") << " and its gradient" << what;
    // cat with a second operand of another length along dim (and layout).
    Shape other_shape = shape;
    other_shape[static_cast<std::size_t>(dim < 0 ? dim + static_cast<std::int64_t>(shape.size())
                                                 : dim)] =
        std::uniform_int_distribution<int>(0, 40)(rng);
    const RandomView other = random_view(rng, other_shape, dtype);
    EXPECT_TRUE(exact_on_every_device(
        [&](const auto& in) {
          return Outputs{ops::cat({in[0], in[1]}, dim)};
        },
        {x.view, other.view}))
        << "cat" << what << describe({other});
    const std::int64_t size = shape[static_cast<std::size_t>(
        dim < 0 ? dim + static_cast<std::int64_t>(shape.size()) : dim)];
    if (size > 0) {
      const RandomView index =
          random_indices(rng, {std::uniform_int_distribution<std::int64_t>(0, 70)(rng)}, size);
      EXPECT_TRUE(exact_on_every_device(
          [&](const auto& in) { return Outputs{ops::index_select(in[0], dim, in[1])}; },
          {x.view, index.view}))
          << "index_select" << what << describe({index});
      Shape gather_shape = shape;
      for (std::int64_t& s : gather_shape)
        s = std::uniform_int_distribution<std::int64_t>(0, s)(rng);
      const RandomView where = random_indices(rng, gather_shape, size);
      EXPECT_TRUE(exact_on_every_device(
          [&](const auto& in) { return Outputs{ops::gather(in[0], dim, in[1])}; },
          {x.view, where.view}))
          << "gather" << what << describe({where});
      // scatter and its reductions into x from a source of the index's shape: a place named
      // twice combines in index order on the CPU; CUDA's floating sums and products use atomics,
      // whose order varies between runs, so those are asked of the CPU only.
      const RandomView src = random_view(rng, gather_shape, dtype);
      for (const ScatterOp op :
           {ScatterOp::Assign, ScatterOp::Sum, ScatterOp::Prod, ScatterOp::Max, ScatterOp::Min}) {
        if (GetParam() == DeviceType::CUDA && is_floating(dtype) &&
            (op == ScatterOp::Sum || op == ScatterOp::Prod))
          continue;
        EXPECT_TRUE(exact_on_every_device(
            [&](const auto& in) { return Outputs{ops::scatter(op, in[0], dim, in[1], in[2])}; },
            {x.view, where.view, src.view}))
            << op_name(op) << what << describe({where, src});
      }
    }
    ++checked;
  }
  EXPECT_GE(checked, 200);
}

// ---- Layers -------------------------------------------------------------------------------------

// A layer of x (N, C, H, W) with float32 parameters made here.
struct Layer {
  const char* name;
  std::function<Tensor(const Tensor& x, const std::vector<Tensor>& params)> fn;
  std::vector<Shape> params;  // of C
  int bias = -1;              // the parameter that is a bias, if one is, and the output's dim
  int bias_dim = 1;           // that it runs along
  bool products = false;      // composed of two matrix products (adaptive average pooling)
};

// The layers, in every floating dtype, their outputs, the input's gradient and their parameters'
// give the contiguous copies' bits, but for a bias's gradient: the sum of the output's gradient
// over every dim but the channels, whose order follows the gradient's layout. Each of two sums of
// n terms is within e = gamma(n - 1) sum |g| of the exact one before its rounding to the dtype
// (SumsMeansAndProductsWithinTheirErrorBounds), so they differ by at most 2 e plus the two
// roundings, u_out of each result; the gradient here is finite and at most 2 in magnitude.
// Adaptive average pooling (and interpolate's area mode, which is it) is two matmuls with averaging
// matrices P_h, P_w (api-notes.md, "Adaptive average pooling"), whose order of summation follows
// the layout as a matmul's does: y = P_h x P_w^T is within (gamma(H) + gamma(W) + gamma(H)
// gamma(W)) max |x| of the exact one (a row of P sums to 1; Higham 3.5 for each product), x's
// gradient P_h^T g P_w within the same with (OH, OW) for (H, W) times max |g| OH OW (a column of P
// sums to at most its count of rows); two such results differ by twice that, plus the roundings to
// a 16-bit dtype. linear is not here: it hands its operands' layouts to matmul, whose order of
// summation follows them (a weight gradient's last bit moved with a broadcast input), which
// MatrixProductsWithinTheirErrorBounds bounds; conv2d copies its operands first.

TEST_P(RandomLayouts, LayersAndTheirGradientsGiveTheContiguousBits) {
  // CUDA's layers are compared with the CPU's by the device op table; some of their gradients add
  // with atomics, in an order that varies from run to run, so bits are asked of the CPU only.
  if (GetParam() == DeviceType::CUDA) GTEST_SKIP() << "the CPU's layers only";
  LayoutRng rng = seeded(111);
  std::map<std::string, int> ran;  // cases each layer ran (not refused by its own checks)
  std::vector<std::string> names;
  for (int k = 0; k < 40; ++k) {
    const std::int64_t n = std::uniform_int_distribution<std::int64_t>(1, 3)(rng);
    const std::int64_t c = 2 * std::uniform_int_distribution<std::int64_t>(1, 4)(rng);
    const std::int64_t h = std::uniform_int_distribution<std::int64_t>(2, 17)(rng);
    const std::int64_t w = std::uniform_int_distribution<std::int64_t>(2, 17)(rng);
    const Shape shape{n, c, h, w};
    const DType dtype = kFloatingDTypes[k % 4];
    const RandomView x = random_view(rng, shape, dtype, {.broadcast = true, .overlap = false});
    magnitudes(rng, x.storage, 0.0, 2.0);
    const std::vector<Layer> layers = {
        {"tanhexp", [](const Tensor& v, const auto&) { return tanhexp(v); }, {}},
        {"group_norm",
         [](const Tensor& v, const auto& p) { return group_norm(v, 2, p[0], p[1]); },
         {{c}, {c}}},
        {"layer_norm",
         [h, w](const Tensor& v, const auto& p) {
           return layer_norm(v, {h, w}, p[0], p[1]);
         },
         {{h, w}, {h, w}}},
        {"batch_norm",
         [](const Tensor& v, const auto& p) {
           return batch_norm(v, Tensor(), Tensor(), p[0], p[1], /*training=*/true);
         },
         {{c}, {c}}},
        {"conv2d",
         [](const Tensor& v, const auto& p) {
           return conv2d(v, p[0], p[1], {1, 1}, {1, 1});
         },
         {{3, c, 3, 3}, {3}},
         1},
        {"conv2d_strided",
         [](const Tensor& v, const auto& p) {
           return conv2d(v, p[0], Tensor(), {2, 1}, {0, 1});
         },
         {{4, c, 2, 3}}},
        {"pixel_shuffle", [](const Tensor& v, const auto&) { return pixel_shuffle(v, 1); }, {}},
        {"max_pool2d",
         [](const Tensor& v, const auto&) {
           return max_pool2d(v, {2, 2}, {1, 2}, {1, 0});
         },
         {}},
        {"avg_pool2d",
         [](const Tensor& v, const auto&) {
           return avg_pool2d(v, {2, 2}, {2, 1}, {1, 1});
         },
         {}},
        {"avg_pool2d_ceil_no_pad_count",
         [](const Tensor& v, const auto&) {
           return avg_pool2d(v, {3, 2}, {2, 2}, {1, 0}, /*ceil_mode=*/true,
                             /*count_include_pad=*/false);
         },
         {}},
        {"max_pool2d_dilated",
         [](const Tensor& v, const auto&) {
           return max_pool2d(v, {2, 2}, {1, 1}, {0, 1}, {2, 1}, /*ceil_mode=*/true);
         },
         {}},
        {"adaptive_avg_pool2d",
         [](const Tensor& v, const auto&) {
           return adaptive_avg_pool2d(v, {3, 5});
         },
         {},
         -1,
         1,
         true},
        {"adaptive_max_pool2d",
         [](const Tensor& v, const auto&) {
           return adaptive_max_pool2d(v, {5, 3});
         },
         {}},
        {"interpolate_nearest",
         [](const Tensor& v, const auto&) {
           return interpolate(v, Size2{7, 9});
         },
         {}},
        {"interpolate_bilinear",
         [](const Tensor& v, const auto&) {
           return interpolate(v, Size2{9, 7}, std::nullopt, kBilinear, false);
         },
         {}},
        {"interpolate_bicubic",
         [](const Tensor& v, const auto&) {
           return interpolate(v, Size2{5, 11}, std::nullopt, kBicubic, true);
         },
         {}},
        {"interpolate_area",
         [](const Tensor& v, const auto&) {
           return interpolate(v, Size2{2, 3}, std::nullopt, kArea);
         },
         {},
         -1,
         1,
         true},
        {"pad_reflect",
         [](const Tensor& v, const auto&) {
           return pad(v, {1, 1, 1, 0}, kReflect);
         },
         {}},
        {"pad_replicate",
         [](const Tensor& v, const auto&) {
           return pad(v, {2, 0, 1, 3}, kReplicate);
         },
         {}},
        {"pad_circular",
         [](const Tensor& v, const auto&) {
           return pad(v, {1, 1, 1, 1}, kCircular);
         },
         {}},
        {"unfold",
         [](const Tensor& v, const auto&) {
           return unfold(v, {2, 3});
         },
         {}},
        {"instance_norm",
         [](const Tensor& v, const auto& p) {
           return instance_norm(v, Tensor(), Tensor(), p[0], p[1]);
         },
         {{c}, {c}}},
        {"conv_transpose2d",
         [](const Tensor& v, const auto& p) {
           return conv_transpose2d(v, p[0], Tensor(), {2, 1}, {1, 0}, {1, 0});
         },
         {{c, 3, 3, 2}}},
        {"conv2d_grouped",
         [](const Tensor& v, const auto& p) {
           return conv2d(v, p[0], Tensor(), {1, 1}, {1, 1}, {1, 1}, 2);
         },
         {{4, c / 2, 3, 3}}},
    };
    if (names.empty()) {
      for (const Layer& layer : layers)
        names.push_back(layer.name);
    }
    for (const Layer& layer : layers) {
      std::vector<Tensor> params;
      for (const Shape& p : layer.params) {
        Tensor t = empty(p, dtype);
        magnitudes(rng, t, 0.1, 1.0);
        params.push_back(t);
      }
      // The gradient of the output: laid out at random too.
      Tensor probe;
      try {
        probe = layer.fn(materialize(x.view), params);
      } catch (const Error&) {
        continue;  // a shape the layer refuses (a window wider than the input)
      }
      ++ran[layer.name];
      const RandomView grad = random_view(rng, probe.shape(), dtype);
      magnitudes(rng, grad.storage, 0.0, 2.0);
      // Outputs: y, x's gradient, then the parameters'.
      const auto bias_output = static_cast<std::size_t>(2 + layer.bias);
      const auto within_products_bound = [&](std::size_t output, const Tensor& got,
                                             const Tensor& want) {
        const double u = test::math_unit_roundoff(dtype);
        const double u_out = result_unit_roundoff(dtype);
        const std::int64_t h = shape[2], w = shape[3], oh = probe.shape()[2], ow = probe.shape()[3];
        // output 0: y, its products over (H, W); output 1: x's gradient, over (OH, OW).
        const std::int64_t k1 = output == 0 ? h : oh, k2 = output == 0 ? w : ow;
        const double scale = output == 0 ? test::max_abs(x.view)
                                         : test::max_abs(grad.view) * static_cast<double>(oh * ow);
        const double g1 = gamma(static_cast<double>(k1), u), g2 = gamma(static_cast<double>(k2), u);
        const double e = (g1 + g2 + g1 * g2) * scale;
        return test::within_bound(got, want, 2 * e + 2 * u_out * (scale + e));
      };
      const Compare compare = [&](std::size_t output, const Tensor& got, const Tensor& want) {
        if (layer.products) return within_products_bound(output, got, want);
        if (layer.bias < 0 || output != bias_output) return same_elements(got, want);
        const std::int64_t channels = got.numel();
        const double n = static_cast<double>(probe.numel() / std::max<std::int64_t>(channels, 1));
        // u of the accumulation (float32 for the 16-bit dtypes), u_out of the result's rounding.
        const double u = test::math_unit_roundoff(dtype);
        const double u_out = result_unit_roundoff(dtype);
        const double gamma_n = gamma(n - 1, u);
        std::int64_t inner = 1;  // the row-major stride of bias_dim
        for (std::size_t d = static_cast<std::size_t>(layer.bias_dim) + 1; d < probe.shape().size();
             ++d)
          inner *= probe.shape()[d];
        std::vector<double> magnitude(static_cast<std::size_t>(channels), 0.0);
        const std::vector<double> g = test::to_vector(grad.view);
        for (std::size_t i = 0; i < g.size(); ++i)
          magnitude[static_cast<std::size_t>((static_cast<std::int64_t>(i) / inner) % channels)] +=
              std::fabs(g[i]);
        const std::vector<double> a = test::to_vector(got), b = test::to_vector(want);
        for (std::size_t j = 0; j < a.size(); ++j) {
          const double e = gamma_n * magnitude[j];  // each sum's error before its rounding
          const double bound = 2 * e + 2 * u_out * (std::fabs(b[j]) + 2 * e);
          if (!(std::fabs(a[j] - b[j]) <= bound)) {
            return ::testing::AssertionFailure() << "bias gradient " << j << ": " << a[j] << " vs "
                                                 << b[j] << ", bound " << bound;
          }
        }
        return ::testing::AssertionSuccess();
      };
      EXPECT_TRUE(layout_free(
          [&](const auto& in) {
            Tensor leaf = in[0].detach().requires_grad_(true);
            std::vector<Tensor> p;
            for (const Tensor& t : params)
              p.push_back(t.detach().requires_grad_(true));
            const Tensor y = layer.fn(leaf, p);
            y.backward(in[1]);
            Outputs out{y, leaf.grad()};
            for (const Tensor& t : p)
              out.push_back(t.grad());
            return out;
          },
          {x.view, grad.view}, compare))
          << layer.name << describe({x, grad});
    }
  }
  // Every layer ran on most cases: a parameter of the wrong shape would refuse them all.
  for (const std::string& name : names)
    EXPECT_GE(ran[name], 30) << name;
}

// ---- Matrix products ----------------------------------------------------------------------------

// matmul of (B?, M, K) and (B?, K, N) operands, each laid out at random (a transpose, a slice with
// a step, an offset, a batch broadcast from 1), with and without batch dims on either side,
// against a long double loop: each result is a sum of K products, within gamma(K) sum |a b| of the
// exact one in any order of the sum (Higham 3.1, 3.5), u of the dtype the products accumulate in.
TEST_P(RandomLayouts, MatrixProductsWithinTheirErrorBounds) {
  LayoutRng rng = seeded(113);
  const std::vector<std::int64_t> kSizes = {1, 2, 3, 7, 8, 16, 17, 33, 64, 65};
  const auto size = [&] {
    return kSizes[std::uniform_int_distribution<std::size_t>(0, kSizes.size() - 1)(rng)];
  };
  for (int k = 0; k < 120; ++k) {
    const DType dtype = k % 3 == 2 ? kFloat64 : kFloat32;
    const std::int64_t m = size(), inner = size(), n = size(), batch = size() % 5 + 1;
    const int form = k % 4;  // 2-d @ 2-d, 3-d @ 3-d, 3-d @ 2-d, 2-d @ 3-d
    const bool batched_a = form == 1 || form == 2, batched_b = form == 1 || form == 3;
    const Shape a_shape = batched_a ? Shape{batch, m, inner} : Shape{m, inner};
    const Shape b_shape = batched_b ? Shape{batch, inner, n} : Shape{inner, n};
    const test::ViewKinds kinds{.broadcast = true, .overlap = false};
    RandomView a = random_view(rng, a_shape, dtype, kinds);
    RandomView b = random_view(rng, b_shape, dtype, kinds);
    magnitudes(rng, a.storage, 0.0, 2.0);
    magnitudes(rng, b.storage, 0.0, 2.0);
    SCOPED_TRACE(describe({a, b}));
    const Tensor got = matmul(on_device(a.view), on_device(b.view)).cpu();
    const bool batched = batched_a || batched_b;
    const Shape want_shape = batched ? Shape{batch, m, n} : Shape{m, n};
    ASSERT_EQ(got.shape(), want_shape);
    const std::vector<double> va = test::to_vector(a.view), vb = test::to_vector(b.view);
    const std::vector<double> vc = test::to_vector(got);
    const double u = test::math_unit_roundoff(dtype);
    const double gamma_k = gamma(static_cast<double>(inner), u);
    int failures = 0;
    for (std::int64_t q = 0; q < (batched ? batch : 1); ++q) {
      const std::int64_t a0 = batched_a ? q * m * inner : 0, b0 = batched_b ? q * inner * n : 0;
      for (std::int64_t i = 0; i < m; ++i) {
        for (std::int64_t j = 0; j < n; ++j) {
          long double exact = 0, magnitude = 0;
          for (std::int64_t t = 0; t < inner; ++t) {
            const long double p = static_cast<long double>(va[a0 + i * inner + t]) *
                                  static_cast<long double>(vb[b0 + t * n + j]);
            exact += p;
            magnitude += std::fabs(p);
          }
          const double c = vc[static_cast<std::size_t>((q * m + i) * n + j)];
          const double bound = gamma_k * static_cast<double>(magnitude);
          // The difference taken in long double: rounding `exact` to double first would add
          // half an ulp of the result to it.
          if (!(std::fabs(static_cast<long double>(c) - exact) <= bound) && failures++ < 3) {
            ADD_FAILURE() << "[" << q << ", " << i << ", " << j << "]: " << c << ", exactly "
                          << static_cast<double>(exact) << ", bound " << bound;
          }
        }
      }
    }
  }
}

// ---- Gradients of views ---------------------------------------------------------------------

// A view made from a storage that requires grad by the view ops (slice, view, permute, expand,
// as_strided with overlapping windows), its backward given a gradient g: the storage's gradient
// at each element is the sum of g over the view's elements that are it, and 0 where the view does
// not reach. g holds small integers, so the sums are exact in any order.
TEST_P(RandomLayouts, ViewGradientsAddUpInTheirStorage) {
  LayoutRng rng = seeded(112);
  for (int k = 0; k < 200; ++k) {
    const DType dtype = k % 2 == 0 ? kFloat32 : kFloat64;
    Tensor leaf;
    const RandomView v =
        test::random_view_over(rng, random_shape(rng, 2048), {}, [&](std::int64_t numel) {
          Tensor values = empty({numel}, dtype);
          test::random_values(rng, values, /*finite_only=*/true);
          leaf = values.to(device()).requires_grad_(true);
          return leaf;
        });
    Tensor g = empty(v.view.shape(), dtype);
    std::vector<double> want(static_cast<std::size_t>(leaf.numel()), 0.0);
    for (std::int64_t i = 0; i < g.numel(); ++i) {
      const double x = std::uniform_int_distribution<int>(-8, 8)(rng);
      ops::fill_(g.view({-1}).slice(0, i, i + 1), x);
      want[static_cast<std::size_t>(v.view.storage_offset() +
                                    test::storage_offset_of(v.view, i))] += x;
    }
    v.view.backward(g.to(device()));
    EXPECT_TRUE(test::all_close(leaf.grad(), want, 0, 0)) << describe({v});
  }
}

// ---- Writes into views --------------------------------------------------------------------------

// Which elements of v's storage the view holds: 1 at each, 0 elsewhere.
std::vector<char> inside_of(const RandomView& v) {
  std::vector<char> inside(static_cast<std::size_t>(v.storage.numel()), 0);
  const std::int64_t start = v.view.storage_offset() - v.storage.storage_offset();
  for (const std::int64_t offset : test::offsets_in_order(v.view))
    inside[static_cast<std::size_t>(start + offset)] = 1;
  return inside;
}

// How many elements of a storage of element_size bytes, outside `inside`, differ between its
// bytes `before` and `after` a write.
std::int64_t changed_outside(const std::vector<char>& inside, std::size_t element_size,
                             const std::vector<unsigned char>& before,
                             const std::vector<unsigned char>& after) {
  std::int64_t changed = 0;
  for (std::size_t e = 0; e < inside.size(); ++e) {
    if (!inside[e] && std::memcmp(before.data() + e * element_size, after.data() + e * element_size,
                                  element_size) != 0)
      ++changed;
  }
  return changed;
}

std::vector<unsigned char> bytes_of(const Tensor& contiguous) {
  const auto* p = static_cast<const unsigned char*>(contiguous.data_ptr());
  return {p, p + contiguous.nbytes()};
}

// write(dst, operands) into the view `dst` and into a contiguous copy of it (the operands as
// contiguous copies too), on this test's device: the same refusal, or the view's elements the
// copy's, with every byte of dst's storage outside the view unchanged.
::testing::AssertionResult RandomLayouts::writes_only_the_view(
    const std::function<void(const Tensor&, const std::vector<Tensor>&)>& write,
    const RandomView& dst, const std::vector<Tensor>& operands) const {
  const Tensor storage = dst.storage.to(device());
  const Tensor view =
      storage.as_strided(dst.view.shape(), dst.view.strides(), dst.view.storage_offset());
  const std::vector<unsigned char> before = bytes_of(storage.cpu());
  Tensor copy = materialize(dst.view).to(device());
  std::vector<Tensor> on, operand_copies;
  for (const Tensor& o : operands) {
    on.push_back(on_device(o));
    operand_copies.push_back(materialize(o).to(device()));
  }
  std::string got_error, want_error;
  bool got_ok = true, want_ok = true;
  try {
    write(view, on);
  } catch (const Error& e) {
    got_ok = false;
    got_error = e.what();
  }
  try {
    write(copy, operand_copies);
  } catch (const Error& e) {
    want_ok = false;
    want_error = e.what();
  }
  const std::vector<unsigned char> after = bytes_of(storage.cpu());
  if (!got_ok || !want_ok) {
    if (got_ok != want_ok) {
      return ::testing::AssertionFailure()
             << (got_ok ? "the copy was refused (" + want_error + ") but not the view"
                        : "the view was refused: " + got_error);
    }
    if (before != after) return ::testing::AssertionFailure() << "refused, but wrote the storage";
    return ::testing::AssertionSuccess();
  }
  const std::int64_t changed =
      changed_outside(inside_of(dst), dst.view.element_size(), before, after);
  if (changed != 0) {
    return ::testing::AssertionFailure()
           << changed << " elements of the storage outside the view changed";
  }
  return same_elements(view.cpu(), copy.cpu());
}

TEST_P(RandomLayouts, WritesChangeTheViewAndNothingElse) {
  LayoutRng rng = seeded(106);
  const test::ViewKinds kWritable{.broadcast = false, .overlap = false};
  for (int k = 0; k < 300; ++k) {
    const Shape shape = random_shape(rng, 2048);
    const DType dtype = random_dtype(rng, kAllDTypes, std::size(kAllDTypes));
    const DType src_dtype =
        k % 3 == 0 ? random_dtype(rng, kAllDTypes, std::size(kAllDTypes)) : dtype;
    const RandomView dst = random_view(rng, shape, dtype, kWritable);
    const RandomView src = random_view(rng, test::broadcast_operand_shape(rng, shape), src_dtype);
    const RandomView mask = random_view(rng, test::broadcast_operand_shape(rng, shape), kBool);
    const std::string what = describe({dst, src});
    EXPECT_TRUE(writes_only_the_view([](const Tensor& d, const auto& in) { ops::copy_(d, in[0]); },
                                     dst, {src.view}))
        << "copy_" << what;
    EXPECT_TRUE(
        writes_only_the_view([](const Tensor& d, const auto&) { ops::fill_(d, 1.0); }, dst, {}))
        << "fill_" << what;
    for (const BinaryOp op : {BinaryOp::Add, BinaryOp::Mul, BinaryOp::Maximum, BinaryOp::Div}) {
      EXPECT_TRUE(writes_only_the_view(
          [op](const Tensor& d, const auto& in) { ops::binary_(op, d, in[0]); }, dst, {src.view}))
          << op_name(op) << "_" << what;
    }
    for (const UnaryOp op : {UnaryOp::Neg, UnaryOp::Exp, UnaryOp::Abs}) {
      EXPECT_TRUE(
          writes_only_the_view([op](const Tensor& d, const auto&) { ops::unary_(op, d); }, dst, {}))
          << op_name(op) << "_" << what;
    }
    for (const Activation& a :
         {Activation{ActivationOp::LeakyRelu, 0.1, 0}, Activation{ActivationOp::Clamp, -1.0, 2.0},
          Activation{ActivationOp::Elu, 1.0, 1.0}}) {
      EXPECT_TRUE(writes_only_the_view(
          [a](const Tensor& d, const auto&) { ops::activation_(a.op, d, a.p0, a.p1); }, dst, {}))
          << op_name(a.op) << "_" << what;
    }
    EXPECT_TRUE(writes_only_the_view(
        [](const Tensor& d, const auto& in) {
          ops::masked_fill_(d, in[0], full({}, 0.0, TensorOptions(d.dtype()).device(d.device())));
        },
        dst, {mask.view}))
        << "masked_fill_" << describe({dst, mask});
  }
}

// A write whose source lies in the memory it writes (x[1:] += x[:-1], a copy_ from a transposed
// view of itself): the view's elements become what the write gives copies of both taken before
// it, on the same device, and nothing outside the view changes. Both views are taken from the
// start of one storage, so they overlap in every way the layouts allow.
TEST_P(RandomLayouts, WritesThatReadTheirOwnMemory) {
  LayoutRng rng = seeded(114);
  const std::int64_t kStorage = 1 << 16;
  int checked = 0;
  for (int k = 0; k < 400 && checked < 150; ++k) {
    const DType dtype = random_dtype(rng, kAllDTypes, std::size(kAllDTypes));
    const Shape shape = random_shape(rng, 256);
    Tensor shared = empty({kStorage}, dtype);
    test::random_values(rng, shared);
    bool too_big = false;  // a view that needs more than the storage: the case is drawn again
    const auto from_shared = [&](std::int64_t numel) {
      too_big |= numel > kStorage;
      return numel > kStorage ? empty({numel}, dtype) : shared;
    };
    const RandomView dst =
        test::random_view_over(rng, shape, {.broadcast = false, .overlap = false}, from_shared);
    const RandomView src =
        test::random_view_over(rng, test::broadcast_operand_shape(rng, shape), {}, from_shared);
    if (too_big) continue;
    ++checked;
    using Write = std::function<void(const Tensor&, const Tensor&)>;
    const std::pair<const char*, Write> writes[] = {
        {"copy_", [](const Tensor& d, const Tensor& s) { ops::copy_(d, s); }},
        {"add_", [](const Tensor& d, const Tensor& s) { ops::binary_(BinaryOp::Add, d, s); }},
        {"mul_", [](const Tensor& d, const Tensor& s) { ops::binary_(BinaryOp::Mul, d, s); }},
        {"maximum_",
         [](const Tensor& d, const Tensor& s) { ops::binary_(BinaryOp::Maximum, d, s); }},
    };
    const std::vector<char> inside = inside_of(dst);
    const std::vector<unsigned char> before = bytes_of(shared);
    for (const auto& [name, write] : writes) {
      SCOPED_TRACE(std::string(name) + describe({dst, src}));
      const Tensor storage = shared.clone().to(device());
      const auto over = [&](const Tensor& v) {
        return storage.as_strided(v.shape(), v.strides(), v.storage_offset());
      };
      Tensor want = materialize(dst.view).to(device());
      bool refused = false;
      try {
        write(want, materialize(src.view).to(device()));
      } catch (const Error&) {
        refused = true;
      }
      if (refused) {
        EXPECT_THROW(write(over(dst.view), over(src.view)), Error);
        EXPECT_TRUE(bytes_of(storage.cpu()) == before);
        continue;
      }
      write(over(dst.view), over(src.view));
      const Tensor after = storage.cpu();
      EXPECT_TRUE(same_elements(
          after.as_strided(dst.view.shape(), dst.view.strides(), dst.view.storage_offset()),
          want.cpu()));
      EXPECT_EQ(changed_outside(inside, shared.element_size(), before, bytes_of(after)), 0)
          << "elements outside the view changed";
    }
  }
  EXPECT_EQ(checked, 150);
}

// copy_ and the in-place ops would write one element from several sources (PyTorch refuses them
// too); fill_ and masked_fill_ write one value, which PyTorch allows and so does leangrad.
TEST_P(RandomLayouts, WritesIntoABroadcastViewAreRefused) {
  LayoutRng rng = seeded(107);
  int refused = 0;  // views with a broadcast dim, out of the first of up to 1000 drawn
  for (int k = 0; k < 1000 && refused < 12; ++k) {
    const Shape shape = random_shape(rng, 1024);
    const RandomView dst = random_view(rng, shape, kFloat32, {.broadcast = true, .overlap = false});
    bool expanded = false;
    for (std::size_t d = 0; d < shape.size(); ++d)
      expanded |= shape[d] > 1 && dst.view.strides()[d] == 0;
    if (!expanded) continue;
    ++refused;
    const Tensor storage = dst.storage.to(device());
    const Tensor view =
        storage.as_strided(dst.view.shape(), dst.view.strides(), dst.view.storage_offset());
    const std::vector<unsigned char> before = bytes_of(storage.cpu());
    EXPECT_THROW(ops::copy_(view, full(shape, 3.0, device())), Error) << dst.description;
    EXPECT_THROW(ops::binary_(BinaryOp::Add, view, 1.0), Error) << dst.description;
    EXPECT_THROW(ops::unary_(UnaryOp::Exp, view), Error) << dst.description;
    EXPECT_TRUE(before == bytes_of(storage.cpu())) << dst.description;
  }
  EXPECT_EQ(refused, 12);
}

// ---- Reductions -----------------------------------------------------------------------------

// Dims to reduce: empty (all) or a random subset, some of them negative.
std::vector<std::int64_t> random_dims(LayoutRng& rng, std::size_t ndim) {
  std::vector<std::int64_t> dims;
  for (std::size_t d = 0; d < ndim; ++d) {
    if (std::uniform_int_distribution<int>(0, 1)(rng))
      dims.push_back(std::uniform_int_distribution<int>(0, 3)(rng) == 0
                         ? static_cast<std::int64_t>(d) - static_cast<std::int64_t>(ndim)
                         : static_cast<std::int64_t>(d));
  }
  return dims;
}

// The elements of t grouped by output: for each output element (row-major over the kept dims),
// the flat indices of its inputs in logical order.
std::vector<std::vector<std::int64_t>> groups(const Shape& shape, std::vector<bool> reduced) {
  std::int64_t outputs = 1;
  for (std::size_t d = 0; d < shape.size(); ++d)
    outputs *= reduced[d] ? 1 : shape[d];
  std::vector<std::vector<std::int64_t>> out(static_cast<std::size_t>(outputs));
  std::int64_t numel = 1;
  for (const std::int64_t s : shape)
    numel *= s;
  std::vector<std::int64_t> index(shape.size(), 0);
  for (std::int64_t i = 0; i < numel; ++i) {
    std::int64_t o = 0;
    for (std::size_t d = 0; d < shape.size(); ++d) {
      if (!reduced[d]) o = o * shape[d] + index[d];
    }
    out[static_cast<std::size_t>(o)].push_back(i);
    for (std::size_t d = shape.size(); d-- > 0;) {
      if (++index[d] < shape[d]) break;
      index[d] = 0;
    }
  }
  return out;
}

std::vector<bool> reduced_mask(std::size_t ndim, const std::vector<std::int64_t>& dims) {
  std::vector<bool> reduced(ndim, dims.empty());
  for (const std::int64_t d : dims)
    reduced[static_cast<std::size_t>(d < 0 ? d + static_cast<std::int64_t>(ndim) : d)] = true;
  return reduced;
}

Shape reduced_shape(const Shape& shape, const std::vector<bool>& reduced, bool keepdim) {
  Shape out;
  for (std::size_t d = 0; d < shape.size(); ++d) {
    if (!reduced[d])
      out.push_back(shape[d]);
    else if (keepdim)
      out.push_back(1);
  }
  return out;
}

// An element of a contiguous tensor as an ordered key: NaN-ness and the value as long double
// (exact for every dtype but int64, which keeps its own integer).
struct Key {
  bool nan = false;
  long double value = 0;
  std::int64_t integer = 0;
  bool is_integer = false;
  bool operator>(const Key& o) const { return is_integer ? integer > o.integer : value > o.value; }
  bool operator<(const Key& o) const { return is_integer ? integer < o.integer : value < o.value; }
};

Key key_of(const Tensor& contiguous, std::int64_t i) {
  const void* p = contiguous.data_ptr();
  Key k;
  switch (contiguous.dtype()) {
    case kFloat32:
      k.value = static_cast<const float*>(p)[i];
      break;
    case kFloat64:
      k.value = static_cast<const double*>(p)[i];
      break;
    case kFloat16:
      k.value = static_cast<float>(static_cast<const Half*>(p)[i]);
      break;
    case kBFloat16:
      k.value = static_cast<float>(static_cast<const BFloat16*>(p)[i]);
      break;
    case kInt64:
      k.integer = static_cast<const std::int64_t*>(p)[i];
      k.is_integer = true;
      break;
    case kInt32:
      k.integer = static_cast<const std::int32_t*>(p)[i];
      k.is_integer = true;
      break;
    case kUInt8:
      k.integer = static_cast<const std::uint8_t*>(p)[i];
      k.is_integer = true;
      break;
    case kBool:
      k.integer = static_cast<const bool*>(p)[i] ? 1 : 0;
      k.is_integer = true;
      break;
  }
  k.nan = std::isnan(k.value);
  return k;
}

// The index (within `members`) of the extremum by PyTorch's rules: for the values, NaN wins and
// of several the last; of equal values (+0 and -0 too) the first. For the indices (max(dim),
// argmax), the first NaN.
std::size_t extremum_position(const Tensor& contiguous, const std::vector<std::int64_t>& members,
                              bool is_max, bool for_index) {
  std::size_t best = 0;
  Key b = key_of(contiguous, members[0]);
  for (std::size_t j = 1; j < members.size(); ++j) {
    const Key x = key_of(contiguous, members[j]);
    if (b.nan && for_index) break;
    if (x.nan || (!b.nan && (is_max ? x > b : x < b))) {
      best = j;
      b = x;
    }
  }
  return best;
}

TEST_P(RandomLayouts, MaximaMinimaAndTheirIndicesMatchAPlainLoop) {
  LayoutRng rng = seeded(108);
  int checked = 0;
  for (int k = 0; k < 400; ++k) {
    const DType dtype = random_dtype(rng, kNumericDTypes, std::size(kNumericDTypes));
    const RandomView x = random_view(rng, random_shape(rng, 4096), dtype);
    const Tensor c = materialize(x.view);
    const Tensor xv = on_device(x.view);
    const Shape& shape = x.view.shape();
    const bool keepdim = k % 2 == 0;
    const std::vector<std::int64_t> dims = random_dims(rng, shape.size());
    const std::vector<bool> reduced = reduced_mask(shape.size(), dims);
    const auto members = groups(shape, reduced);
    bool empty_group = c.numel() == 0 && !members.empty();
    for (const auto& m : members)
      empty_group |= m.empty();
    for (const bool is_max : {true, false}) {
      const ReduceOp op = is_max ? ReduceOp::Max : ReduceOp::Min;
      SCOPED_TRACE(std::string(op_name(op)) + " over " + std::to_string(dims.size()) +
                   " dims (none: all), keepdim " + std::to_string(keepdim) + describe({x}));
      if (empty_group) {
        EXPECT_THROW(ops::reduce(op, xv, dims, keepdim), Error);
        continue;
      }
      const Tensor got = ops::reduce(op, xv, dims, keepdim).cpu();
      Tensor want = empty(reduced_shape(shape, reduced, keepdim), dtype);
      for (std::size_t o = 0; o < members.size(); ++o) {
        const std::int64_t i = members[o][extremum_position(c, members[o], is_max, false)];
        std::memcpy(static_cast<unsigned char*>(want.data_ptr()) + o * c.element_size(),
                    static_cast<const unsigned char*>(c.data_ptr()) + i * c.element_size(),
                    c.element_size());
      }
      EXPECT_TRUE(same_elements(got, want));
      ++checked;
    }
    // One dim with indices: max(dim), min(dim), argmax, argmin; and over the flattened tensor.
    if (c.numel() == 0) continue;
    const std::int64_t dim = shape.empty()
                                 ? 0
                                 : std::uniform_int_distribution<std::int64_t>(
                                       0, static_cast<std::int64_t>(shape.size()) - 1)(rng);
    std::vector<bool> one(shape.size(), false);
    if (!shape.empty()) one[static_cast<std::size_t>(dim)] = true;
    const auto lines = groups(shape, one);
    for (const bool is_max : {true, false}) {
      SCOPED_TRACE(std::string(is_max ? "max" : "min") + "(dim " + std::to_string(dim) +
                   "), keepdim " + std::to_string(keepdim) + describe({x}));
      const auto [values, indices] = is_max ? xv.max(dim, keepdim) : xv.min(dim, keepdim);
      const Tensor arg = is_max ? xv.argmax(dim, keepdim) : xv.argmin(dim, keepdim);
      Tensor want_values = empty(reduced_shape(shape, one, keepdim), dtype);
      Tensor want_indices = empty(reduced_shape(shape, one, keepdim), kInt64);
      for (std::size_t o = 0; o < lines.size(); ++o) {
        const std::size_t j = extremum_position(c, lines[o], is_max, true);
        std::memcpy(
            static_cast<unsigned char*>(want_values.data_ptr()) + o * c.element_size(),
            static_cast<const unsigned char*>(c.data_ptr()) + lines[o][j] * c.element_size(),
            c.element_size());
        static_cast<std::int64_t*>(want_indices.data_ptr())[o] = static_cast<std::int64_t>(j);
      }
      EXPECT_TRUE(same_elements(values.cpu(), want_values));
      EXPECT_TRUE(same_elements(indices.cpu(), want_indices));
      EXPECT_TRUE(same_elements(arg.cpu(), want_indices));
      std::vector<std::int64_t> all(static_cast<std::size_t>(c.numel()));
      for (std::int64_t i = 0; i < c.numel(); ++i)
        all[static_cast<std::size_t>(i)] = i;
      const Tensor flat = (is_max ? xv.argmax() : xv.argmin()).cpu();
      EXPECT_EQ(flat.item<std::int64_t>(),
                static_cast<std::int64_t>(extremum_position(c, all, is_max, true)));
    }
  }
  EXPECT_GE(checked, 600);
}

// Sums, means and products against a long double loop. Floating results: a sum of n terms in any
// order, each addition rounded with the accumulator's unit roundoff u (float32 for the 16-bit
// dtypes, as leangrad accumulates them), is within gamma(n - 1) sum |x| of the exact sum, gamma(k)
// = k u / (1 - k u) (Higham, "Accuracy and Stability of Numerical Algorithms", 4.2); a mean adds
// a division (or a reciprocal and a product: two roundings); a product of n terms is within
// gamma(n - 1) of the exact one relatively (3.1); then the result's rounding to its dtype, u_out of
// it. Integers: exact, int64 wrapping around as the kernels do.
TEST_P(RandomLayouts, SumsMeansAndProductsWithinTheirErrorBounds) {
  LayoutRng rng = seeded(109);
  int checked = 0;
  for (int k = 0; k < 400; ++k) {
    const DType dtype = random_dtype(rng, kNumericDTypes, std::size(kNumericDTypes));
    const ReduceOp op = k % 3 == 0 ? ReduceOp::Sum : (k % 3 == 1 ? ReduceOp::Mean : ReduceOp::Prod);
    if (op == ReduceOp::Mean && !is_floating(dtype)) continue;
    const Shape shape = random_shape(rng, op == ReduceOp::Prod ? 1024 : 8192);
    RandomView x = random_view(rng, shape, dtype);
    // A product's factors near 1, so that even 1024 of them stay inside float16's normal range
    // (the bound holds without overflow and underflow).
    if (op == ReduceOp::Prod)
      magnitudes(rng, x.storage, 0.996, 1.004);
    else
      magnitudes(rng, x.storage, 0.0, 8.0);
    const Tensor c = materialize(x.view);
    const bool keepdim = k % 2 == 1;
    const std::vector<std::int64_t> dims = random_dims(rng, shape.size());
    const std::vector<bool> reduced = reduced_mask(shape.size(), dims);
    const auto members = groups(shape, reduced);
    SCOPED_TRACE(std::string(op_name(op)) + " over " + std::to_string(dims.size()) +
                 " dims (none: all), keepdim " + std::to_string(keepdim) + describe({x}));
    const Tensor got = ops::reduce(op, on_device(x.view), dims, keepdim).cpu();
    ASSERT_EQ(got.shape(), reduced_shape(shape, reduced, keepdim));
    if (!is_floating(dtype)) {
      ASSERT_EQ(got.dtype(), kInt64);
      for (std::size_t o = 0; o < members.size(); ++o) {
        std::uint64_t want = op == ReduceOp::Prod ? 1 : 0;  // wrapping int64 arithmetic
        for (const std::int64_t i : members[o]) {
          const auto v = static_cast<std::uint64_t>(key_of(c, i).integer);
          want = op == ReduceOp::Prod ? want * v : want + v;
        }
        EXPECT_EQ(got.data_ptr<std::int64_t>()[o], static_cast<std::int64_t>(want)) << o;
      }
      ++checked;
      continue;
    }
    ASSERT_EQ(got.dtype(), dtype);
    const double u = test::math_unit_roundoff(dtype);
    const double u_out = result_unit_roundoff(dtype);
    const std::vector<double> values = test::to_vector(got);
    for (std::size_t o = 0; o < members.size(); ++o) {
      const auto n = static_cast<double>(members[o].size());
      const double gamma_n = gamma(n - 1, u);
      long double exact = op == ReduceOp::Prod ? 1 : 0, magnitude = 0;
      for (const std::int64_t i : members[o]) {
        const long double v = key_of(c, i).value;
        exact = op == ReduceOp::Prod ? exact * v : exact + v;
        magnitude += std::fabs(v);
      }
      double error;  // before the result's rounding to its dtype
      if (op == ReduceOp::Prod) {
        error = gamma_n * static_cast<double>(std::fabs(exact));
      } else if (op == ReduceOp::Sum) {
        error = gamma_n * static_cast<double>(magnitude);
      } else {
        if (n == 0) {
          EXPECT_TRUE(std::isnan(values[o])) << "the mean of nothing, output " << o;
          continue;
        }
        exact /= n;
        const double e_sum = gamma_n * static_cast<double>(magnitude) / n;
        error = e_sum + 2.5 * u * (static_cast<double>(std::fabs(exact)) + e_sum);
      }
      const double w = static_cast<double>(exact);
      const double bound = error + u_out * (std::fabs(w) + error);
      EXPECT_LE(std::fabs(values[o] - w), bound) << "output " << o << " of " << members[o].size()
                                                 << " terms: " << values[o] << ", exactly " << w;
    }
    ++checked;
  }
  EXPECT_GE(checked, 300);
}

// ---- Thread counts ---------------------------------------------------------------------------

// The CPU kernels cut their work by the thread count, and each of these promises the same bits
// at any count (docs/kernels.md: the pairwise sums' fixed splits, the normalizations' chunks,
// elementwise loops whose elements do not depend on each other): views large enough to be split,
// laid out at random, give at 2, 3 and 4 threads the bits they give at 1.
TEST_P(RandomLayouts, ResultsDoNotDependOnTheThreadCount) {
  if (GetParam() == DeviceType::CUDA) GTEST_SKIP() << "the CPU's threads";
  LayoutRng rng = seeded(115);
  for (int k = 0; k < 8; ++k) {
    const DType dtype = kFloatingDTypes[k % 4];
    Shape shape;
    do {
      shape = random_shape(rng, 200000);
    } while (shape.size() < 2 || shape_numel(shape) == 0);
    const RandomView x = random_view(rng, shape, dtype);
    magnitudes(rng, x.storage, 0.0, 4.0);
    const RandomView y = random_view(rng, test::broadcast_operand_shape(rng, shape), dtype);
    const std::vector<std::int64_t> dims = random_dims(rng, shape.size());
    const std::int64_t dim = random_dim(rng, shape);
    // Columns long enough for the threads to split them (three chunks of rows and more).
    const RandomView tall = random_view(rng, {70001, 2 + k % 3}, dtype);
    magnitudes(rng, tall.storage, 0.0, 4.0);
    const Shape four = {2, 3, 40, 50};
    const RandomView image = random_view(rng, four, dtype, {.broadcast = true, .overlap = false});
    magnitudes(rng, image.storage, 0.0, 4.0);
    const auto outputs = [&] {
      return Outputs{ops::unary(UnaryOp::Exp, x.view),
                     ops::unary(UnaryOp::Sigmoid, x.view),
                     ops::binary(BinaryOp::Add, x.view, y.view),
                     ops::binary(BinaryOp::Mul, x.view, y.view),
                     ops::cast(x.view, kFloat16),
                     ops::reduce(ReduceOp::Sum, x.view, dims, false),
                     ops::reduce(ReduceOp::Mean, x.view, dims, true),
                     ops::reduce(ReduceOp::Max, x.view, dims, false),
                     ops::reduce(ReduceOp::Sum, tall.view, {0}, false),
                     ops::reduce(ReduceOp::Mean, tall.view, {0}, false),
                     ops::reduce(ReduceOp::Sum, tall.view, {1}, false),
                     ops::argmax(x.view, dim, false),
                     ops::scan(ScanOp::Sum, x.view, dim),
                     ops::softmax(x.view, dim, false),
                     tanhexp(x.view),
                     group_norm(image.view, 3),
                     layer_norm(image.view, {40, 50}),
                     batch_norm(image.view, Tensor(), Tensor(), Tensor(), Tensor(), true)};
    };
    Outputs one;
    {
      const ThreadCount threads(1);
      one = outputs();
    }
    for (const int t : {2, 3, 4}) {
      const ThreadCount threads(t);
      const Outputs many = outputs();
      for (std::size_t o = 0; o < one.size(); ++o) {
        EXPECT_TRUE(same_elements(many[o], one[o]))
            << "output " << o << " at " << t << " threads" << describe({x, y, tall, image});
      }
    }
  }
}

}  // namespace
}  // namespace leangrad
