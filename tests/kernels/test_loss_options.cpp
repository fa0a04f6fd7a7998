// Tests of the loss options of cross_entropy and nll_loss (autograd/nn_functions.cpp over the
// loss kernels of kernels/ops_layers.cpp): a class weight, label_smoothing and class-probability
// targets, also for input of any rank ((N, C, d1, ..., dk), unbatched (C)). Values and gradients
// against PyTorch 1.13 (tests/data/loss_options.json from make_loss_options.py, loss_nd.json from
// make_loss_nd.py) in float64 and float32, float64 gradchecks, and a weight on another device
// (the other errors are rows of tests/misuse/test_misuse_nn_functions.cpp).
// The CUDA kernels are compared with the CPU in op_table_layers.cpp.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include <leangrad/autograd/functions.h>
#include <leangrad/autograd/nn_functions.h>
#include <leangrad/core/cuda.h>
#include <leangrad/core/error.h>
#include <leangrad/kernels/creation.h>
#include "testing/gradcheck.h"
#include "testing/reference_data.h"
#include "testing/tensor_testing.h"

namespace leangrad {
namespace {

using test::gradcheck;
using test::uniform_input;
using Inputs = std::vector<Tensor>;

const Reduction kReductions[] = {Reduction::Mean, Reduction::Sum, Reduction::None};

Tensor int64_tensor(const std::vector<double>& values) {
  return test::make_tensor(values, {static_cast<std::int64_t>(values.size())}, kInt64);
}

Tensor float64_tensor(const std::vector<double>& values) {
  return test::make_tensor(values, {static_cast<std::int64_t>(values.size())}, kFloat64);
}

// ---- PyTorch reference (tests/data/loss_options.json) ------------------------------------------

using test::reduction_named;

// Runs every case of `file` (`count` of them) in `dtype` (the float64 inputs converted) and
// compares the output (its shape too) and the gradients with PyTorch's float64 numbers within
// {rtol, atol}.
void expect_matches_pytorch(const char* file, std::size_t count, DType dtype, double rtol,
                            double atol) {
  const std::vector<test::ReferenceCase> cases = test::load_reference(file);
  ASSERT_EQ(cases.size(), count);
  for (const test::ReferenceCase& rc : cases) {
    SCOPED_TRACE(rc.name);
    const Tensor x = rc.at("x").to(dtype).requires_grad_();
    const Tensor& index_or_probability = rc.at("target");
    const bool probabilities = is_floating(index_or_probability.dtype());
    const Tensor target =
        probabilities ? index_or_probability.to(dtype).requires_grad_() : index_or_probability;
    const Tensor weight = rc.tensors.count("weight") ? rc.at("weight").to(dtype) : Tensor();
    const Reduction r = reduction_named(rc.params["reduction"].get<std::string>());
    const std::int64_t ignore_index = rc.params["ignore_index"];
    const double label_smoothing = rc.params["label_smoothing"];
    const Tensor y = rc.params["op"] == "nll_loss"
                         ? nll_loss(x, target, r, ignore_index, weight)
                         : cross_entropy(x, target, r, ignore_index, weight, label_smoothing);
    EXPECT_EQ(y.dtype(), dtype);
    EXPECT_EQ(y.shape(), rc.at("y").shape());
    EXPECT_TRUE(test::all_close(y, test::to_vector(rc.at("y")), rtol, atol));
    if (!rc.tensors.count("dx")) continue;  // a NaN loss: PyTorch's gradients are NaN too
    y.backward(rc.at("g").to(dtype));
    {
      SCOPED_TRACE("dx");
      EXPECT_TRUE(test::all_close(x.grad(), test::to_vector(rc.at("dx")), rtol, atol));
    }
    if (probabilities) {
      SCOPED_TRACE("dtarget");
      EXPECT_TRUE(test::all_close(target.grad(), test::to_vector(rc.at("dtarget")), rtol, atol));
    }
  }
}

// float64: the same formulas summed in another order. The values are at most ~30 (a Sum over 7
// samples of weighted losses below 5), each a sum of at most 7 * 5 terms: a few hundred ulps of
// 2^-52 relative, well inside 1e-12, and 1e-13 absolute for gradients near 0.
TEST(LossOptionsReference, MatchesPyTorchInFloat64) {
  expect_matches_pytorch("loss_options.json", 26, kFloat64, 1e-12, 1e-13);
}

// float32 against PyTorch's float64 numbers: converting an input to float32 moves it by up to
// 2^-24 = 6e-8 of itself, and every value here is a sum of at most 7 * 5 = 35 terms, each a
// product of such inputs, weights and float32 roundings: about 35 * 6e-8 = 2e-6 of the largest
// term at worst, inside rtol 1e-5 (a factor 5 over that bound); atol 1e-5 covers gradients whose
// terms cancel to near 0.
TEST(LossOptionsReference, MatchesPyTorchInFloat32) {
  expect_matches_pytorch("loss_options.json", 26, kFloat32, 1e-5, 1e-5);
}

// Input of any rank (tests/data/loss_nd.json from make_loss_nd.py): (N, C, d1, ..., dk) with
// class indices (N, d1, ..., dk) for k = 1, 2, 3, and unbatched (C) with a 0-d index, each option
// and reduction. The same bounds as above: the largest value is a Sum of 15 positions' weighted
// losses (below 70), each a sum over C = 4 classes, so at most 15 * 4 = 60 terms summed in
// another order: under a thousand ulps of 2^-52 relative in float64 (inside 1e-12), and in
// float32 60 * 6e-8 = 4e-6 of the largest term (inside 1e-5).
TEST(LossNdReference, MatchesPyTorchInFloat64) {
  expect_matches_pytorch("loss_nd.json", 48, kFloat64, 1e-12, 1e-13);
}

TEST(LossNdReference, MatchesPyTorchInFloat32) {
  expect_matches_pytorch("loss_nd.json", 48, kFloat32, 1e-5, 1e-5);
}

// ---- Gradients by finite differences (float64) -------------------------------------------------

TEST(LossOptionsGrad, WeightedCrossEntropyAndNll) {
  const Tensor target = int64_tensor({2, -100, 0, 4, 1, 4});
  const Tensor weight = float64_tensor({0.5, 2.0, 1.25, 3.0, 0.75});
  for (Reduction r : kReductions) {
    SCOPED_TRACE(static_cast<int>(r));
    EXPECT_TRUE(
        gradcheck([&](const Inputs& in) { return cross_entropy(in[0], target, r, -100, weight); },
                  {uniform_input({6, 5}, -2, 2, 1)}));
    EXPECT_TRUE(
        gradcheck([&](const Inputs& in) { return nll_loss(in[0], target, r, -100, weight); },
                  {uniform_input({6, 5}, -3, 0, 2)}));
  }
}

TEST(LossOptionsGrad, LabelSmoothingWithAndWithoutWeight) {
  const Tensor target = int64_tensor({2, -100, 0, 4, 1, 4});
  const Tensor weight = float64_tensor({0.5, 2.0, 1.25, 3.0, 0.75});
  for (Reduction r : kReductions) {
    SCOPED_TRACE(static_cast<int>(r));
    for (const Tensor& w : {Tensor(), weight}) {
      EXPECT_TRUE(
          gradcheck([&](const Inputs& in) { return cross_entropy(in[0], target, r, -100, w, 0.3); },
                    {uniform_input({6, 5}, -2, 2, 3)}));
    }
  }
  // ignore_index a class, and label_smoothing 1 (the target is then the uniform distribution).
  EXPECT_TRUE(gradcheck(
      [&](const Inputs& in) {
        return cross_entropy(in[0], int64_tensor({1, 3, 3}), Reduction::Mean, 3, weight, 1.0);
      },
      {uniform_input({3, 5}, -2, 2, 4)}));
}

TEST(LossOptionsGrad, ProbabilityTargetsReachInputAndTarget) {
  const Tensor weight = float64_tensor({0.5, 2.0, 1.25, 3.0});
  for (Reduction r : kReductions) {
    SCOPED_TRACE(static_cast<int>(r));
    EXPECT_TRUE(gradcheck([&](const Inputs& in) { return cross_entropy(in[0], in[1], r); },
                          {uniform_input({5, 4}, -2, 2, 5), uniform_input({5, 4}, 0, 1, 6)}));
    // (N, C, d1, d2) with a weight and smoothing.
    EXPECT_TRUE(gradcheck(
        [&](const Inputs& in) { return cross_entropy(in[0], in[1], r, -100, weight, 0.2); },
        {uniform_input({2, 4, 3, 2}, -2, 2, 7), uniform_input({2, 4, 3, 2}, 0, 1, 8)}));
  }
}

// Input of any rank: (N, C, d1) and (N, C, d1, d2) with positions ignored, and unbatched (C).
TEST(LossNdGrad, ClassIndicesOfAnyRankWithEveryOption) {
  const Tensor weight = float64_tensor({0.5, 2.0, 1.25, 3.0});
  const Tensor target_3d = test::make_tensor({2, -100, 0, 3, 1, 3, 0, 2}, {2, 4}, kInt64);
  const Tensor target_4d =
      test::make_tensor({1, 3, -100, 0, 2, 2, 0, 1, 3, -100, 1, 0}, {2, 3, 2}, kInt64);
  const Tensor target_0d = test::make_tensor({3}, {}, kInt64);
  for (Reduction r : kReductions) {
    for (const Tensor& w : {Tensor(), weight}) {
      SCOPED_TRACE(std::to_string(static_cast<int>(r)) + (w.defined() ? " weighted" : ""));
      for (const auto& [shape, target_of_case] : std::vector<std::pair<Shape, Tensor>>{
               {{2, 4, 4}, target_3d}, {{2, 4, 3, 2}, target_4d}, {{4}, target_0d}}) {
        const Tensor& target = target_of_case;  // the lambdas capture it (clang 14: not a binding)
        SCOPED_TRACE(shape_str(shape));
        EXPECT_TRUE(
            gradcheck([&](const Inputs& in) { return cross_entropy(in[0], target, r, -100, w); },
                      {uniform_input(shape, -2, 2, 11)}));
        EXPECT_TRUE(gradcheck(
            [&](const Inputs& in) { return cross_entropy(in[0], target, r, -100, w, 0.2); },
            {uniform_input(shape, -2, 2, 12)}));
        EXPECT_TRUE(gradcheck([&](const Inputs& in) { return nll_loss(in[0], target, r, -100, w); },
                              {uniform_input(shape, -3, 0, 13)}));
        // Probabilities of the input's shape, with smoothing: the gradient reaches the target.
        EXPECT_TRUE(gradcheck(
            [&](const Inputs& in) { return cross_entropy(in[0], in[1], r, -100, w, 0.1); },
            {uniform_input(shape, -2, 2, 14), uniform_input(shape, 0, 1, 15)}));
      }
    }
  }
}

// ---- Properties that hold exactly ---------------------------------------------------------------

TEST(LossOptions, WeightOfOnesAndZeroSmoothingAreThePlainLoss) {
  const Tensor x = uniform_input({6, 5}, -3, 3, 9).detach();
  const Tensor target = int64_tensor({2, -100, 0, 4, 1, 4});
  const Tensor ones_weight = ones({5}, TensorOptions(kFloat64));
  for (Reduction r : kReductions) {
    SCOPED_TRACE(static_cast<int>(r));
    const std::vector<double> plain = test::to_vector(cross_entropy(x, target, r));
    EXPECT_TRUE(test::all_close(cross_entropy(x, target, r, -100, ones_weight), plain, 0, 0));
    EXPECT_TRUE(test::all_close(cross_entropy(x, target, r, -100, Tensor(), 0.0), plain, 0, 0));
    EXPECT_TRUE(test::all_close(nll_loss(x, target, r, -100, ones_weight),
                                test::to_vector(nll_loss(x, target, r)), 0, 0));
  }
}

TEST(LossOptions, WeightGetsNoGradientAndTotalWeightZeroIsNaN) {
  const Tensor x = uniform_input({3, 4}, -1, 1, 10);
  const Tensor weight = float64_tensor({0.0, 0.0, 1.0, 2.0}).requires_grad_();
  const Tensor target = int64_tensor({0, 1, 1});
  // Every counted sample has weight 0: 0 / 0, as PyTorch.
  EXPECT_TRUE(std::isnan(cross_entropy(x, target, Reduction::Mean, -100, weight).item<double>()));
  const Tensor loss = cross_entropy(x, int64_tensor({0, 2, 3}), Reduction::Sum, -100, weight, 0.1);
  loss.backward();
  EXPECT_TRUE(x.grad().defined());
  EXPECT_FALSE(weight.grad().defined());
}

// ---- Errors -------------------------------------------------------------------------------------

// Runs fn, expecting an ErrorType whose message holds every one of `parts`.
template <typename ErrorType, typename Fn>
void expect_error(Fn fn, const std::vector<std::string>& parts) {
  try {
    fn();
    ADD_FAILURE() << "expected an error";
  } catch (const ErrorType& e) {
    const std::string what = e.what();
    for (const std::string& part : parts)
      EXPECT_NE(what.find(part), std::string::npos) << "'" << part << "' not in: " << what;
  }
}

// The errors on bad input on the CPU are rows of the Losses misuse table
// (tests/misuse/test_misuse_nn_functions.cpp); this one needs a GPU.
TEST(LossOptionsErrors, ClassWeightOnAnotherDevice) {
  if (!cuda::is_available()) GTEST_SKIP() << "no CUDA device";
  const Tensor x = zeros({3, 4});
  const Tensor t = int64_tensor({0, 1, 2});
  const Tensor w = ones({4}).cuda();
  expect_error<DeviceError>([&] { cross_entropy(x, t, Reduction::Mean, -100, w); },
                            {"cross_entropy", "cpu", "cuda"});
  expect_error<DeviceError>([&] { nll_loss(x, t, Reduction::Mean, -100, w); },
                            {"nll_loss", "cpu", "cuda"});
  expect_error<DeviceError>(
      [&] {
        cross_entropy(x, zeros({3, 4}), Reduction::Mean, -100, w);
      },
      {"cross_entropy", "cpu", "cuda"});
}

}  // namespace
}  // namespace leangrad
