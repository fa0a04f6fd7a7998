// CUDA against CPU for every optimizer and clip_grad_norm_, one table of cases: the same
// parameters and gradients on both devices, 12 steps (past RAdam's
// rectification threshold), parameters and float states compared (float32, float64, and float16
// with bfloat16 step by step); the same table through
// amp::GradScaler (steps skipped on the device, step counts kept there), and the scaler's own
// kernels (unscale_and_check_finite, update_scale). SKIPPED without a GPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include <leangrad/autograd/functions.h>
#include <leangrad/core/cuda.h>
#include <leangrad/core/generator.h>
#include <leangrad/kernels/creation.h>
#include <leangrad/kernels/ops.h>
#include <leangrad/optim/optim.h>
#include "optim/optim_test_util.h"
#include "testing/tensor_testing.h"

namespace leangrad {
namespace {

using MakeOptimizer = std::function<std::unique_ptr<optim::Optimizer>(std::vector<Tensor>)>;

struct OptimCase {
  std::string name;
  MakeOptimizer make;
};

// How GoogleTest prints a case (in test listings and failures).
void PrintTo(const OptimCase& c, std::ostream* out) {
  *out << c.name;
}

std::vector<optim::ParamGroup> two_groups(const std::vector<Tensor>& p) {
  return {optim::ParamGroup({p[0], p[1]}), optim::ParamGroup({p[2], p[3]}, 0.003, 0.05)};
}

std::vector<OptimCase> optim_cases() {
  return {
      {"sgd_nesterov",
       [](std::vector<Tensor> p) {
         return std::make_unique<optim::SGD>(
             two_groups(p),
             optim::SGDOptions(0.05).momentum(0.9).nesterov(true).weight_decay(0.01));
       }},
      {"sgd_plain",
       [](std::vector<Tensor> p) {
         return std::make_unique<optim::SGD>(p, optim::SGDOptions(0.05));
       }},
      {"adam_amsgrad",
       [](std::vector<Tensor> p) {
         return std::make_unique<optim::Adam>(
             two_groups(p), optim::AdamOptions(0.01).amsgrad(true).weight_decay(0.1));
       }},
      {"adamw",
       [](std::vector<Tensor> p) {
         return std::make_unique<optim::AdamW>(p, optim::AdamWOptions(0.01));
       }},
      {"radam",
       [](std::vector<Tensor> p) {
         return std::make_unique<optim::RAdam>(
             p, optim::RAdamOptions(0.01).betas({0.9, 0.99}).weight_decay(0.1));
       }},
      {"adam8bit",
       [](std::vector<Tensor> p) {
         return std::make_unique<optim::Adam8bit>(two_groups(p),
                                                  optim::Adam8bitOptions(0.01).weight_decay(0.01));
       }},
  };
}

// Shapes: quantised (not a multiple of 256 nor 4), quantised (exact blocks), float-state, tiny.
const std::vector<Shape> kShapes = {{300, 37}, {64, 256}, {1000}, {3}};

std::vector<Tensor> make_params(Device device) {
  manual_seed(21);
  std::vector<Tensor> params;
  for (const Shape& s : kShapes)
    params.push_back(randn(s).to(device).requires_grad_(true));
  return params;
}

class OptimCuda : public ::testing::TestWithParam<OptimCase> {};

// The two optimizers' state dicts name the same entries, and the float32 ones agree (uint8 codes
// may differ by one step).
void expect_states_close(const optim::Optimizer& cpu_opt, const optim::Optimizer& gpu_opt) {
  const NamedTensors cpu_state = cpu_opt.state_dict();
  const NamedTensors gpu_state = gpu_opt.state_dict();
  ASSERT_EQ(cpu_state.size(), gpu_state.size());
  for (std::size_t i = 0; i < cpu_state.size(); ++i) {
    SCOPED_TRACE(cpu_state[i].first);
    EXPECT_EQ(cpu_state[i].first, gpu_state[i].first);
    if (cpu_state[i].second.dtype() != kFloat32) continue;
    EXPECT_TRUE(
        test::all_close(gpu_state[i].second, test::to_vector(cpu_state[i].second), 1e-4, 1e-6));
  }
}

TEST_P(OptimCuda, MatchesCpu) {
  if (!cuda::is_available()) GTEST_SKIP() << "no CUDA device";
  std::vector<Tensor> cpu_params = make_params(kCPU);
  std::vector<Tensor> gpu_params = make_params(kCUDA);
  std::unique_ptr<optim::Optimizer> cpu_opt = GetParam().make(cpu_params);
  std::unique_ptr<optim::Optimizer> gpu_opt = GetParam().make(gpu_params);
  manual_seed(22);
  for (int step = 0; step < 12; ++step) {
    for (std::size_t k = 0; k < kShapes.size(); ++k) {
      const Tensor g = randn(kShapes[k]);
      cpu_params[k].set_grad(g);
      gpu_params[k].set_grad(g.to(kCUDA));
    }
    cpu_opt->step();
    gpu_opt->step();
  }
  for (std::size_t k = 0; k < kShapes.size(); ++k) {
    SCOPED_TRACE("param " + std::to_string(k));
    EXPECT_TRUE(
        test::all_close(gpu_params[k].detach(), test::to_vector(cpu_params[k]), 1e-4, 1e-5));
  }
  expect_states_close(*cpu_opt, *gpu_opt);
}

// sum_k (p[k] * g[k]).sum(): its gradient with respect to p[k] is g[k].
Tensor linear_loss(const std::vector<Tensor>& p, const std::vector<Tensor>& g) {
  Tensor loss = (p[0] * g[0]).sum();
  for (std::size_t k = 1; k < p.size(); ++k)
    loss = loss + (p[k] * g[k]).sum();
  return loss;
}

// Through amp::GradScaler: steps 3, 6 and 7 have an Inf in one gradient and are skipped on the
// device (the CUDA kernels count the skips and take the step from the device), the rest match
// the CPU's; step counts and scales are equal.
TEST_P(OptimCuda, GatedStepsMatchCpu) {
  if (!cuda::is_available()) GTEST_SKIP() << "no CUDA device";
  std::vector<Tensor> cpu_params = make_params(kCPU);
  std::vector<Tensor> gpu_params = make_params(kCUDA);
  std::unique_ptr<optim::Optimizer> cpu_opt = GetParam().make(cpu_params);
  std::unique_ptr<optim::Optimizer> gpu_opt = GetParam().make(gpu_params);
  amp::GradScaler cpu_scaler(amp::GradScalerOptions().growth_interval(3));
  amp::GradScaler gpu_scaler(amp::GradScalerOptions().growth_interval(3));
  manual_seed(24);
  for (int step = 1; step <= 12; ++step) {
    std::vector<Tensor> grads;
    for (const Shape& shape : kShapes)
      grads.push_back(randn(shape));
    if (step == 3 || step == 6 || step == 7)
      grads[1].data_ptr<float>()[step] = std::numeric_limits<float>::infinity();
    std::vector<Tensor> gpu_grads;
    for (const Tensor& g : grads)
      gpu_grads.push_back(g.to(kCUDA));
    cpu_opt->zero_grad();
    gpu_opt->zero_grad();
    cpu_scaler.scale(linear_loss(cpu_params, grads)).backward();
    gpu_scaler.scale(linear_loss(gpu_params, gpu_grads)).backward();
    cpu_scaler.step(*cpu_opt);
    gpu_scaler.step(*gpu_opt);
    cpu_scaler.update();
    gpu_scaler.update();
  }
  EXPECT_EQ(gpu_scaler.get_scale(), cpu_scaler.get_scale());
  for (std::size_t k = 0; k < kShapes.size(); ++k) {
    SCOPED_TRACE("param " + std::to_string(k));
    EXPECT_EQ(gpu_opt->state(k).step, 9);
    EXPECT_EQ(cpu_opt->state(k).step, 9);
    EXPECT_TRUE(
        test::all_close(gpu_params[k].detach(), test::to_vector(cpu_params[k]), 1e-4, 1e-5));
  }
  expect_states_close(*cpu_opt, *gpu_opt);
}

INSTANTIATE_TEST_SUITE_P(Optim, OptimCuda, ::testing::ValuesIn(optim_cases()),
                         [](const auto& info) { return info.param.name; });

// ---- float64 parameters ------------------------------------------------------------------------

// Three float64 parameters and a float32 one in each optimizer (so every step makes one launch
// per dtype), 12 steps on both devices. Both run the functors of kernels/optim_math.h in double
// (CUDA in 16-byte vectors of two doubles), the operations the same, except that nvcc may
// contract a multiply and an add into one FMA: an ulp of difference per operation, so a few ulps
// of the values' magnitude per step, carried on but not amplified (as tests/optim/
// test_optim_f64.cpp derives). After 12 steps: 12 * 16 ulps of max(1, |value|), about 1e-13,
// which a float64 path that ran in float32 (1e-7) could not meet. The float32 parameter keeps
// the float32 table's tolerance. Adam8bit refuses float64 parameters and is not in this table.
std::vector<OptimCase> float64_cases() {
  std::vector<OptimCase> cases;
  for (const OptimCase& c : optim_cases())
    if (c.name != "adam8bit") cases.push_back(c);
  return cases;
}

const std::vector<DType> kMixedDtypes = {kFloat64, kFloat32, kFloat64, kFloat64};

std::vector<Tensor> make_mixed_params(Device device,
                                      const std::vector<DType>& dtypes = kMixedDtypes) {
  manual_seed(25);
  std::vector<Tensor> params;
  for (std::size_t k = 0; k < kShapes.size(); ++k)
    params.push_back(randn(kShapes[k], dtypes[k]).to(device).requires_grad_(true));
  return params;
}

// Values of `gpu` within `steps` * 16 ulps (float64's, or float32's where `float32_accurate`) of
// max(1, |cpu|) of the CPU's (float64), or the float32 table's tolerance (float32).
::testing::AssertionResult close_after_steps(const Tensor& gpu, const Tensor& cpu, int steps,
                                             bool float32_accurate = false) {
  if (gpu.dtype() != cpu.dtype())
    return ::testing::AssertionFailure() << "dtypes " << gpu.dtype() << " and " << cpu.dtype();
  if (cpu.dtype() == kFloat32) return test::all_close(gpu, test::to_vector(cpu), 1e-4, 1e-5);
  double scale = 1.0;
  for (double v : test::to_vector(cpu))
    scale = std::max(scale, std::fabs(v));
  const double ulp = float32_accurate ? std::numeric_limits<float>::epsilon()
                                      : std::numeric_limits<double>::epsilon();
  return test::all_close(gpu, test::to_vector(cpu), 0.0, steps * 16.0 * ulp * scale);
}

class OptimCudaFloat64 : public ::testing::TestWithParam<OptimCase> {};

TEST_P(OptimCudaFloat64, MixedFloat32AndFloat64MatchCpu) {
  if (!cuda::is_available()) GTEST_SKIP() << "no CUDA device";
  constexpr int kSteps = 12;
  std::vector<Tensor> cpu_params = make_mixed_params(kCPU);
  std::vector<Tensor> gpu_params = make_mixed_params(kCUDA);
  std::unique_ptr<optim::Optimizer> cpu_opt = GetParam().make(cpu_params);
  std::unique_ptr<optim::Optimizer> gpu_opt = GetParam().make(gpu_params);
  manual_seed(26);
  for (int step = 0; step < kSteps; ++step) {
    for (std::size_t k = 0; k < kShapes.size(); ++k) {
      const Tensor g = randn(kShapes[k], kMixedDtypes[k]);
      cpu_params[k].set_grad(g);
      gpu_params[k].set_grad(g.to(kCUDA));
    }
    cpu_opt->step();
    gpu_opt->step();
  }
  for (std::size_t k = 0; k < kShapes.size(); ++k) {
    SCOPED_TRACE("param " + std::to_string(k));
    EXPECT_TRUE(close_after_steps(gpu_params[k].detach(), cpu_params[k].detach(), kSteps));
  }
  const NamedTensors cpu_state = cpu_opt->state_dict();
  const NamedTensors gpu_state = gpu_opt->state_dict();
  ASSERT_EQ(cpu_state.size(), gpu_state.size());
  for (std::size_t i = 0; i < cpu_state.size(); ++i) {
    SCOPED_TRACE(cpu_state[i].first);
    EXPECT_EQ(cpu_state[i].first, gpu_state[i].first);
    if (!is_floating(cpu_state[i].second.dtype()) || cpu_state[i].second.dim() == 0) continue;
    EXPECT_TRUE(close_after_steps(gpu_state[i].second, cpu_state[i].second, kSteps));
  }
}

INSTANTIATE_TEST_SUITE_P(Optim, OptimCudaFloat64, ::testing::ValuesIn(float64_cases()),
                         [](const auto& info) { return info.param.name; });

// ---- float16 and bfloat16 parameters ------------------------------------------------------------

// Each step of a float16 + bfloat16 mix on both devices from the same values (the GPU optimizer
// and parameters are reset to the CPU's before every step). Both widen to float and run the same
// functor (kernels/optim_math.h) in float, except that nvcc may contract a multiply and an add
// into an FMA, which skips one rounding (at most u = 2^-24 of the product). With fewer than
// K = 16 roundings along any value's path and every term of every sum at most S, the unrounded
// results differ by at most K u S; S is bounded by the scale of the step's values: each state is
// a convex combination of its old value and g (or g^2), the parameter moves by its update, so
// S <= 2 max(1, |old values|, |new values|, |g|, g^2) over the tensor. Each stored value then lies
// within one 16-bit spacing (a rounding boundary between the two) plus K u S of the CPU's
// (tests/optim/test_optim_half.cpp derives the same per element against double).
const std::vector<DType> kHalfDtypes = {kBFloat16, kFloat16, kBFloat16, kFloat16};

// The largest magnitude among the values of `tensors` (float16 or bfloat16), at least 1.
double scale_of(const std::vector<Tensor>& tensors) {
  double scale = 1.0;
  for (const Tensor& t : tensors)
    for (double v : test::to_vector(t))
      scale = std::max(scale, std::fabs(v));
  return scale;
}

// |gpu - cpu| <= one 16-bit spacing at the larger of the two + K u (2 scale) (see above).
::testing::AssertionResult within_16bit_rounding(const Tensor& gpu, const Tensor& cpu,
                                                 double scale) {
  if (gpu.dtype() != cpu.dtype() || gpu.numel() != cpu.numel())
    return ::testing::AssertionFailure() << "dtypes " << gpu.dtype() << " and " << cpu.dtype();
  const int mantissa_bits = cpu.dtype() == kFloat16 ? 10 : 7;
  const std::vector<double> a = test::to_vector(gpu.cpu());
  const std::vector<double> b = test::to_vector(cpu);
  for (std::size_t i = 0; i < a.size(); ++i) {
    const double larger = std::max(std::fabs(a[i]), std::fabs(b[i]));
    // The spacing of the 16-bit values at `larger` (float16 subnormals: 2^-24).
    const int exponent = larger > 0 ? std::ilogb(larger) : -24;
    const double spacing = std::ldexp(1.0, std::max(exponent - mantissa_bits, -24));
    const double bound = spacing + 16 * std::ldexp(2 * scale, -24);
    if (std::fabs(a[i] - b[i]) > bound) {
      return ::testing::AssertionFailure() << "element " << i << ": gpu " << a[i] << ", cpu "
                                           << b[i] << " (bound " << bound << ")";
    }
  }
  return ::testing::AssertionSuccess();
}

class OptimCudaHalf : public ::testing::TestWithParam<OptimCase> {};

TEST_P(OptimCudaHalf, EachStepWithinOneValueOfCpu) {
  if (!cuda::is_available()) GTEST_SKIP() << "no CUDA device";
  constexpr int kSteps = 8;  // past RAdam's rectification threshold with beta2 = 0.99
  std::vector<Tensor> cpu_params = make_mixed_params(kCPU, kHalfDtypes);
  std::vector<Tensor> gpu_params = make_mixed_params(kCUDA, kHalfDtypes);
  std::unique_ptr<optim::Optimizer> cpu_opt = GetParam().make(cpu_params);
  std::unique_ptr<optim::Optimizer> gpu_opt = GetParam().make(gpu_params);
  manual_seed(28);
  for (int step = 0; step < kSteps; ++step) {
    SCOPED_TRACE("step " + std::to_string(step + 1));
    gpu_opt->load_state_dict(cpu_opt->state_dict());
    for (std::size_t k = 0; k < kShapes.size(); ++k) {
      gpu_params[k].set_data(cpu_params[k].detach().to(kCUDA));
      const Tensor g = randn(kShapes[k]).to(kHalfDtypes[k]);
      cpu_params[k].set_grad(g);
      gpu_params[k].set_grad(g.to(kCUDA));
    }
    const NamedTensors before = cpu_opt->state_dict();
    std::vector<Tensor> params_before;
    for (const Tensor& p : cpu_params)
      params_before.push_back(p.detach().clone());
    cpu_opt->step();
    gpu_opt->step();
    for (std::size_t k = 0; k < kShapes.size(); ++k) {
      const double scale = scale_of({params_before[k], cpu_params[k].detach(), cpu_params[k].grad(),
                                     cpu_params[k].grad().square()});
      EXPECT_TRUE(within_16bit_rounding(gpu_params[k].detach(), cpu_params[k].detach(), scale))
          << "param " << k;
    }
    const NamedTensors cpu_state = cpu_opt->state_dict();
    const NamedTensors gpu_state = gpu_opt->state_dict();
    ASSERT_EQ(cpu_state.size(), gpu_state.size());
    for (std::size_t i = 0; i < cpu_state.size(); ++i) {
      const Tensor& value = cpu_state[i].second;
      if (value.dim() == 0) continue;  // steps, learning rates
      // The parameter whose state this is: the one of its shape and dtype.
      std::vector<Tensor> terms = {value};
      for (const auto& [name, old] : before)
        if (name == cpu_state[i].first) terms.push_back(old);
      for (const Tensor& p : cpu_params)
        if (p.shape() == value.shape() && p.dtype() == value.dtype())
          terms.push_back(p.grad().square()), terms.push_back(p.grad());
      EXPECT_TRUE(within_16bit_rounding(gpu_state[i].second, value, scale_of(terms)))
          << cpu_state[i].first;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Optim, OptimCudaHalf, ::testing::ValuesIn(float64_cases()),
                         [](const auto& info) { return info.param.name; });

// clip_grad_norm_ over float16 and bfloat16 gradients: a float32 norm on both devices (summed in
// float32 blocks on CUDA, in double on the CPU: float32-accurate, 16 float32 ulps) and clipped
// gradients within a 16-bit rounding of each other (the factors agree to 16 ulps; S = |g|).
TEST(OptimCudaClip, HalfGradientsMatchCpu) {
  if (!cuda::is_available()) GTEST_SKIP() << "no CUDA device";
  std::vector<Tensor> cpu_params = make_mixed_params(kCPU, kHalfDtypes);
  std::vector<Tensor> gpu_params = make_mixed_params(kCUDA, kHalfDtypes);
  manual_seed(29);
  for (std::size_t k = 0; k < kShapes.size(); ++k) {
    const Tensor g = randn(kShapes[k]).to(kHalfDtypes[k]);
    cpu_params[k].set_grad(g);
    gpu_params[k].set_grad(g.to(kCUDA));
  }
  const Tensor cpu_norm = optim::clip_grad_norm_(cpu_params, 1.0);
  const Tensor gpu_norm = optim::clip_grad_norm_(gpu_params, 1.0);
  EXPECT_EQ(gpu_norm.dtype(), kFloat32);
  const double expected = cpu_norm.item<float>();
  EXPECT_NEAR(gpu_norm.cpu().item<float>(), expected,
              16 * std::numeric_limits<float>::epsilon() * expected);
  for (std::size_t k = 0; k < kShapes.size(); ++k)
    EXPECT_TRUE(within_16bit_rounding(gpu_params[k].grad(), cpu_params[k].grad(),
                                      scale_of({cpu_params[k].grad()})))
        << "gradient " << k;
}

// clip_grad_norm_ over float64 gradients and over a float32 + float64 mix: a float64 norm on
// both devices (within 16 ulps: each sums |g|^p in double, in another order), the same
// gradients. In the mix the norm of the float32 gradients is a float32 value (CUDA sums it in
// float32 blocks, the CPU in double), so the norm and every clipped gradient are float32-accurate
// only: 16 float32 ulps then.
TEST(OptimCudaClip, Float64AndMixedGradientsMatchCpu) {
  if (!cuda::is_available()) GTEST_SKIP() << "no CUDA device";
  for (bool mixed : {false, true}) {
    for (double norm_type : {2.0, 1.0, 3.0, std::numeric_limits<double>::infinity()}) {
      SCOPED_TRACE(std::string(mixed ? "mixed" : "float64") + " norm_type " +
                   std::to_string(norm_type));
      const std::vector<DType> dtypes =
          mixed ? kMixedDtypes : std::vector<DType>(kShapes.size(), kFloat64);
      std::vector<Tensor> cpu_params = make_mixed_params(kCPU, dtypes);
      std::vector<Tensor> gpu_params = make_mixed_params(kCUDA, dtypes);
      manual_seed(27);
      for (std::size_t k = 0; k < kShapes.size(); ++k) {
        const Tensor g = randn(kShapes[k], dtypes[k]);
        cpu_params[k].set_grad(g);
        gpu_params[k].set_grad(g.to(kCUDA));
      }
      const Tensor cpu_norm = optim::clip_grad_norm_(cpu_params, 1.0, norm_type);
      const Tensor gpu_norm = optim::clip_grad_norm_(gpu_params, 1.0, norm_type);
      EXPECT_EQ(gpu_norm.dtype(), kFloat64);
      EXPECT_TRUE(close_after_steps(gpu_norm.cpu(), cpu_norm, 1, mixed));
      for (std::size_t k = 0; k < kShapes.size(); ++k)
        EXPECT_TRUE(close_after_steps(gpu_params[k].grad().cpu(), cpu_params[k].grad(), 1, mixed))
            << "gradient " << k;
    }
  }
}

TEST(OptimCudaClip, ClipGradNormMatchesCpu) {
  if (!cuda::is_available()) GTEST_SKIP() << "no CUDA device";
  for (double norm_type : {2.0, 1.0, 3.0, std::numeric_limits<double>::infinity()}) {
    SCOPED_TRACE("norm_type " + std::to_string(norm_type));
    std::vector<Tensor> cpu_params = make_params(kCPU);
    std::vector<Tensor> gpu_params = make_params(kCUDA);
    manual_seed(23);
    for (std::size_t k = 0; k < kShapes.size(); ++k) {
      const Tensor g = randn(kShapes[k]);
      cpu_params[k].set_grad(g);
      gpu_params[k].set_grad(g.to(kCUDA));
    }
    const Tensor cpu_norm = optim::clip_grad_norm_(cpu_params, 1.0, norm_type);
    const Tensor gpu_norm = optim::clip_grad_norm_(gpu_params, 1.0, norm_type);
    EXPECT_TRUE(gpu_norm.is_cuda());
    EXPECT_NEAR(gpu_norm.item<float>(), cpu_norm.item<float>(), 1e-4 * cpu_norm.item<float>());
    for (std::size_t k = 0; k < kShapes.size(); ++k)
      EXPECT_TRUE(
          test::all_close(gpu_params[k].grad(), test::to_vector(cpu_params[k].grad()), 1e-4, 1e-7));
  }
}

// A NaN gradient element makes the norm and every gradient NaN on both devices, for every norm
// type (the inf-norm's maximum keeps the NaN, and so does the clip factor: PyTorch's clamp); an
// Inf makes the norm Inf and the factor 0. The element sits past the first chunk of a tensor
// after the first, so the blocks' and the final reductions both carry it.
TEST(OptimCudaClip, NonFiniteGradientsGiveTheCpuResults) {
  if (!cuda::is_available()) GTEST_SKIP() << "no CUDA device";
  const double inf = std::numeric_limits<double>::infinity();
  for (double norm_type : {2.0, 1.0, 3.0, inf}) {
    for (double planted : {std::numeric_limits<double>::quiet_NaN(), -inf}) {
      SCOPED_TRACE("norm_type " + std::to_string(norm_type) + ", planted " +
                   std::to_string(planted));
      std::vector<Tensor> cpu_params = make_params(kCPU);
      std::vector<Tensor> gpu_params = make_params(kCUDA);
      manual_seed(29);
      for (std::size_t k = 0; k < kShapes.size(); ++k) {
        Tensor g = randn(kShapes[k]);
        if (k == 1) g.view({-1}).select(0, 9000).fill_(planted);
        cpu_params[k].set_grad(g);
        gpu_params[k].set_grad(g.to(kCUDA));
      }
      const float cpu_norm = optim::clip_grad_norm_(cpu_params, 1.0, norm_type).item<float>();
      const float gpu_norm = optim::clip_grad_norm_(gpu_params, 1.0, norm_type).item<float>();
      EXPECT_EQ(std::isnan(cpu_norm), std::isnan(planted));
      EXPECT_TRUE(std::isnan(gpu_norm) ? std::isnan(cpu_norm) : gpu_norm == cpu_norm)
          << "cuda " << gpu_norm << ", cpu " << cpu_norm;
      for (std::size_t k = 0; k < kShapes.size(); ++k)
        EXPECT_TRUE(
            test::all_close(gpu_params[k].grad(), test::to_vector(cpu_params[k].grad()), 0, 0));
    }
  }
}

// error_if_nonfinite on CUDA: the norm is read on the host between the two launches, so a NaN or
// Inf throws before the clip kernel runs and every gradient stays as it was, bit for bit; a
// finite norm clips as without the flag (bitwise the same norm and gradients).
TEST(OptimCudaClip, ErrorIfNonfiniteReadsTheNormBeforeClipping) {
  if (!cuda::is_available()) GTEST_SKIP() << "no CUDA device";
  const double inf = std::numeric_limits<double>::infinity();
  for (double norm_type : {2.0, inf}) {
    for (double planted : {std::numeric_limits<double>::quiet_NaN(), -inf, 7.0}) {
      SCOPED_TRACE("norm_type " + std::to_string(norm_type) + ", planted " +
                   std::to_string(planted));
      std::vector<Tensor> checked = make_params(kCUDA);
      std::vector<Tensor> plain = make_params(kCUDA);
      manual_seed(31);
      for (std::size_t k = 0; k < kShapes.size(); ++k) {
        Tensor g = randn(kShapes[k]);
        if (k == 1) g.view({-1}).select(0, 9000).fill_(planted);
        checked[k].set_grad(g.to(kCUDA));
        plain[k].set_grad(g.to(kCUDA));
      }
      const Tensor plain_norm = optim::clip_grad_norm_(plain, 1.0, norm_type);
      if (std::isfinite(planted)) {
        const Tensor norm = optim::clip_grad_norm_(checked, 1.0, norm_type, true);
        EXPECT_TRUE(norm.is_cuda());
        EXPECT_TRUE(test::bitwise_equal(norm, plain_norm));
        for (std::size_t k = 0; k < kShapes.size(); ++k)
          EXPECT_TRUE(test::bitwise_equal(checked[k].grad(), plain[k].grad()));
        continue;
      }
      std::vector<Tensor> before;
      for (const Tensor& p : checked)
        before.push_back(p.grad().clone());
      EXPECT_THROW(optim::clip_grad_norm_(checked, 1.0, norm_type, true), Error);
      for (std::size_t k = 0; k < kShapes.size(); ++k)
        EXPECT_TRUE(test::bitwise_equal(checked[k].grad(), before[k]));
    }
  }
}

// One multiplication per element on both devices: bitwise equal, for a power of two and for a
// scale whose reciprocal rounds; found_inf raised on both by an Inf, a NaN, or neither.
TEST(OptimCudaScaler, UnscaleMatchesCpu) {
  if (!cuda::is_available()) GTEST_SKIP() << "no CUDA device";
  for (const float scale : {65536.0f, 3.0f}) {
    for (const float bad : {0.0f, std::numeric_limits<float>::infinity(), std::nanf("")}) {
      SCOPED_TRACE("scale " + std::to_string(scale) + ", bad " + std::to_string(bad));
      manual_seed(25);
      std::vector<Tensor> cpu_grads, gpu_grads;
      for (const Shape& shape : kShapes) {
        cpu_grads.push_back(randn(shape) * 1000.0);
        gpu_grads.push_back(cpu_grads.back().to(kCUDA));
      }
      if (bad != 0.0f) {
        cpu_grads[0].data_ptr<float>()[7] = bad;
        gpu_grads[0] = cpu_grads[0].to(kCUDA);
      }
      const Tensor cpu_found = zeros({}, kInt32);
      const Tensor gpu_found = zeros({}, TensorOptions(kInt32).device(kCUDA));
      ops::unscale_and_check_finite(cpu_grads, full({}, scale), cpu_found);
      ops::unscale_and_check_finite(gpu_grads, full({}, scale).to(kCUDA), gpu_found);
      EXPECT_EQ(cpu_found.item<std::int32_t>(), bad != 0.0f ? 1 : 0);
      EXPECT_EQ(gpu_found.item<std::int32_t>(), cpu_found.item<std::int32_t>());
      for (std::size_t k = 0; k < kShapes.size(); ++k)
        EXPECT_TRUE(
            test::all_close(gpu_grads[k], test::to_vector(cpu_grads[k]), 0, 0));  // NaN = NaN
    }
  }
}

// torch._amp_update_scale_'s rule on both devices: the same scales and trackers, step by step.
TEST(OptimCudaScaler, UpdateScaleMatchesCpu) {
  if (!cuda::is_available()) GTEST_SKIP() << "no CUDA device";
  const Tensor cpu_scale = full({}, 1024.0);
  const Tensor cpu_tracker = zeros({}, kInt32);
  const Tensor gpu_scale = cpu_scale.to(kCUDA);
  const Tensor gpu_tracker = cpu_tracker.to(kCUDA);
  for (const int found : {0, 0, 1, 0, 0, 0, 1, 1, 0, 0}) {
    const Tensor cpu_found = full({}, found, kInt32);
    ops::update_scale(cpu_scale, cpu_tracker, cpu_found, 2.0, 0.5, 3);
    ops::update_scale(gpu_scale, gpu_tracker, cpu_found.to(kCUDA), 2.0, 0.5, 3);
    EXPECT_EQ(gpu_scale.item<float>(), cpu_scale.item<float>());
    EXPECT_EQ(gpu_tracker.item<std::int32_t>(), cpu_tracker.item<std::int32_t>());
  }
  // By hand, from 1024 with interval 3: two clean steps, Inf -> 512, three clean -> 1024,
  // Inf -> 512, Inf -> 256, two clean steps (tracker 2): 256.
  EXPECT_EQ(cpu_scale.item<float>(), 256.0f);
  EXPECT_EQ(cpu_tracker.item<std::int32_t>(), 2);
}

// One optimizer over a CPU and a CUDA parameter: an Inf in the CPU gradient alone skips the step
// on the GPU too (the flags are summed across devices, as PyTorch does).
TEST(OptimCudaScaler, InfOnOneDeviceSkipsEveryDevice) {
  if (!cuda::is_available()) GTEST_SKIP() << "no CUDA device";
  Tensor on_cpu = ones({4}).requires_grad_(true);
  Tensor on_gpu = ones({4}).to(kCUDA).requires_grad_(true);
  optim::Adam opt({on_cpu, on_gpu}, optim::AdamOptions(0.1));
  amp::GradScaler scaler;
  Tensor bad = ones({4});
  bad.data_ptr<float>()[2] = std::numeric_limits<float>::infinity();
  scaler.scale((on_cpu * bad).sum()).backward();
  scaler.scale((on_gpu * ones({4}).to(kCUDA)).sum()).backward();
  scaler.step(opt);
  scaler.update();
  EXPECT_TRUE(test::all_close(on_cpu.detach(), {1, 1, 1, 1}, 0, 0));
  EXPECT_TRUE(test::all_close(on_gpu.detach(), {1, 1, 1, 1}, 0, 0));
  EXPECT_EQ(opt.state(1).step, 0);
  EXPECT_EQ(scaler.get_scale(), 32768.0);
}

}  // namespace
}  // namespace leangrad
