// Tests of instance_norm (autograd/nn_functions.cpp, Note [InstanceNorm is GroupNorm]) and of
// nn::InstanceNorm1d/2d/3d (nn/batch_norm.h): against PyTorch 1.13's values, gradients and
// running statistics (tests/data/instance_norm.json, written by make_instance_norm.py), against
// a per-slice normalization written here in float64, and by finite differences.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <leangrad/autograd/functions.h>
#include <leangrad/autograd/nn_functions.h>
#include <leangrad/core/creation.h>
#include <leangrad/kernels/creation.h>
#include <leangrad/nn/batch_norm.h>
#include "testing/gradcheck.h"
#include "testing/reference_data.h"
#include "testing/tensor_testing.h"

namespace leangrad {
namespace {

using test::all_close;
using test::to_vector;

// PyTorch's default float32 tolerances (torch.testing.assert_close): both sides normalize slices
// of at most 42 values in float32 with a few roundings per element; the statistics and gradients
// are sums over those slices.
constexpr double kRtolF32 = 1.3e-6;
constexpr double kAtolF32 = 1e-5;

TEST(InstanceNormReference, FunctionMatchesPyTorch) {
  int checked = 0;
  for (const test::ReferenceCase& rc : test::load_reference("instance_norm.json")) {
    if (rc.name.rfind("instance_norm_", 0) != 0) continue;
    SCOPED_TRACE(rc.name);
    std::map<std::string, Tensor> in;
    for (const char* key : {"x", "w", "b"}) {
      if (rc.tensors.count(key)) in[key] = rc.at(key).clone().requires_grad_();
    }
    const auto param = [&](const char* key) { return in.count(key) ? in.at(key) : Tensor(); };
    Tensor rm, rv;
    if (rc.params["running"].get<bool>()) {
      rm = rc.at("rm").clone();
      rv = rc.at("rv").clone();
    }
    const Tensor y = instance_norm(
        in["x"], rm, rv, param("w"), param("b"), rc.params["use_input_stats"].get<bool>(),
        rc.params["momentum"].get<double>(), rc.params["eps"].get<double>());
    EXPECT_TRUE(all_close(y, to_vector(rc.at("y")), kRtolF32, kAtolF32));
    if (rm.defined()) {
      EXPECT_TRUE(all_close(rm, to_vector(rc.at("rm_out")), kRtolF32, kAtolF32)) << "running_mean";
      EXPECT_TRUE(all_close(rv, to_vector(rc.at("rv_out")), kRtolF32, kAtolF32)) << "running_var";
    }
    y.backward(rc.at("g"));
    for (auto& [key, t] : in) {
      SCOPED_TRACE("d" + key);
      ASSERT_TRUE(t.grad().defined());
      EXPECT_TRUE(all_close(t.grad(), to_vector(rc.at("d" + key)), kRtolF32, kAtolF32));
    }
    ++checked;
  }
  EXPECT_EQ(checked, 5);
}

template <typename Module>
void expect_module_matches(const test::ReferenceCase& rc) {
  const nlohmann::json& p = rc.params;
  Module module(nn::InstanceNormOptions(p["num_features"].get<std::int64_t>())
                    .eps(p["eps"].get<double>())
                    .momentum(p["momentum"].get<double>())
                    .affine(p["affine"].get<bool>())
                    .track_running_stats(p["track_running_stats"].get<bool>()));
  std::string repr = p["repr"].get<std::string>();  // C++'s true and false for Python's
  for (const auto& [python, cpp] : {std::pair{"True", "true"}, std::pair{"False", "false"}}) {
    for (std::size_t at = repr.find(python); at != std::string::npos; at = repr.find(python)) {
      repr.replace(at, std::string(python).size(), cpp);
    }
  }
  std::ostringstream printed;
  printed << module;
  EXPECT_EQ(printed.str(), repr);
  if (module->weight.defined()) {
    NoGradGuard no_grad;
    module->weight.copy_(rc.at("w"));
    module->bias.copy_(rc.at("b"));
  }
  for (int step = 0; step < 3; ++step) {
    SCOPED_TRACE("step " + std::to_string(step));
    module->train(step < 2);
    const std::string s = std::to_string(step);
    const Tensor y = module(rc.at("x" + s));
    EXPECT_TRUE(all_close(y, to_vector(rc.at("y" + s)), kRtolF32, kAtolF32));
    if (module->running_mean.defined()) {
      EXPECT_TRUE(all_close(module->running_mean, to_vector(rc.at("rm" + s)), kRtolF32, kAtolF32));
      EXPECT_TRUE(all_close(module->running_var, to_vector(rc.at("rv" + s)), kRtolF32, kAtolF32));
      EXPECT_EQ(module->num_batches_tracked.template item<std::int64_t>(),
                static_cast<std::int64_t>(to_vector(rc.at("nbt" + s))[0]));
    }
  }
}

TEST(InstanceNormReference, ModulesMatchPyTorch) {
  int checked = 0;
  for (const test::ReferenceCase& rc : test::load_reference("instance_norm.json")) {
    if (rc.name.rfind("module_", 0) != 0) continue;
    SCOPED_TRACE(rc.name);
    const std::string op = rc.params["op"];
    if (op == "InstanceNorm1d") {
      expect_module_matches<nn::InstanceNorm1d>(rc);
    } else if (op == "InstanceNorm2d") {
      expect_module_matches<nn::InstanceNorm2d>(rc);
    } else {
      ASSERT_EQ(op, "InstanceNorm3d");
      expect_module_matches<nn::InstanceNorm3d>(rc);
    }
    ++checked;
  }
  EXPECT_EQ(checked, 5);
}

// Each (n, c) slice of a float64 input normalized by a loop written here: mean and biased
// variance in long double, then (x - mean) / sqrt(var + eps) w + b. float64 on both sides, a few
// roundings per element: within 64 u of max(1, |y|).
TEST(InstanceNorm, MatchesAPerSliceLoop) {
  const Shape shape{3, 4, 5, 6};
  const Tensor x = test::uniform_input(shape, -3.0, 5.0, 11).detach();
  const Tensor w = test::uniform_input({4}, 0.5, 1.5, 12).detach();
  const Tensor b = test::uniform_input({4}, -1.0, 1.0, 13).detach();
  const double eps = 1e-4;
  const std::vector<double> xv = to_vector(x), wv = to_vector(w), bv = to_vector(b);
  const std::size_t slice = 30;
  std::vector<double> want(xv.size());
  for (std::size_t s = 0; s < xv.size() / slice; ++s) {
    long double sum = 0, sq = 0;
    for (std::size_t i = 0; i < slice; ++i)
      sum += xv[s * slice + i];
    const long double mean = sum / slice;
    for (std::size_t i = 0; i < slice; ++i) {
      sq += (xv[s * slice + i] - mean) * (xv[s * slice + i] - mean);
    }
    const long double rstd = 1 / std::sqrt(sq / slice + eps);
    const std::size_t c = s % 4;
    for (std::size_t i = 0; i < slice; ++i) {
      want[s * slice + i] = static_cast<double>((xv[s * slice + i] - mean) * rstd * wv[c] + bv[c]);
    }
  }
  EXPECT_TRUE(all_close(instance_norm(x, Tensor(), Tensor(), w, b, true, 0.1, eps), want, 0,
                        64 * 0x1p-53 * 8));
}

TEST(InstanceNorm, FirstAndSecondDerivatives) {
  const Tensor x = test::uniform_input({2, 3, 4}, -2.0, 2.0, 21);
  const Tensor w = test::uniform_input({3}, 0.5, 1.5, 22);
  const Tensor b = test::uniform_input({3}, -1.0, 1.0, 23);
  const auto fn = [](const std::vector<Tensor>& in) {
    const Tensor y = instance_norm(in[0], Tensor(), Tensor(), in[1], in[2], true, 0.1, 1e-3);
    return y * y;
  };
  EXPECT_TRUE(test::gradcheck(fn, {x, w, b}));
  EXPECT_TRUE(test::gradgradcheck(fn, {x, w, b}));
}

TEST(InstanceNormModules, TakeTheirRanksAndKeepPyTorchsEntries) {
  nn::InstanceNorm2d plain(3);
  EXPECT_TRUE(plain->named_parameters().is_empty());
  EXPECT_TRUE(plain->state_dict().empty());
  // One spatial element per slice: nothing to normalize over in training, as PyTorch refuses.
  EXPECT_THROW(plain(ones({2, 3, 1, 1})), ShapeError);
  EXPECT_EQ(plain(randn({3, 4, 5})).shape(), Shape({3, 4, 5}));  // unbatched (C, H, W)
  EXPECT_THROW(plain(ones({1, 2, 3, 4, 5})), ShapeError);
  nn::InstanceNorm1d tracked(nn::InstanceNorm1dOptions(2).affine(true).track_running_stats(true));
  EXPECT_EQ(tracked->state_dict().size(), 5u);         // weight, bias and the three buffers
  EXPECT_THROW(tracked(ones({2, 3, 4})), ShapeError);  // 3 channels, 2 features
}

}  // namespace
}  // namespace leangrad
