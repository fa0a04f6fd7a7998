// amp::GradScaler on the CPU: the scale's growth and backoff against a sequence computed by hand;
// a step with an Inf/NaN gradient skipped on every parameter with its step count, for every
// optimizer, against optimizers that only ever saw the clean steps; unscale_ before
// clip_grad_norm_, and scaled training, against unscaled runs; no host synchronisation in a whole
// scaled step (core/host_sync.h); the state dicts. Scaling by a power of two is exact in float32
// (barring overflow and subnormals, which these small models never reach: every value stays
// within 1e-6..1e4), so the scaled runs are compared BITWISE with the unscaled ones.
// CUDA parity: tests/optim/test_optim_cuda.cpp. Misuse: tests/misuse/test_misuse_optim.cpp.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include <leangrad/autograd/functions.h>
#include <leangrad/autograd/grad_mode.h>
#include <leangrad/autograd/nn_functions.h>
#include <leangrad/core/cuda.h>
#include <leangrad/core/generator.h>
#include <leangrad/core/host_sync.h>
#include <leangrad/kernels/creation.h>
#include <leangrad/optim/optim.h>
#include "optim/optim_test_util.h"
#include "testing/tensor_testing.h"

namespace leangrad {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

// A linear "loss" whose gradient with respect to p[k] is exactly g[k]: sum_k (p[k] * g[k]).sum().
Tensor linear_loss(const std::vector<Tensor>& p, const std::vector<Tensor>& g) {
  Tensor loss = (p[0] * g[0]).sum();
  for (std::size_t k = 1; k < p.size(); ++k)
    loss = loss + (p[k] * g[k]).sum();
  return loss;
}

// One scaled step of `opt` whose true gradients are g.
void scaled_step(amp::GradScaler& scaler, optim::Optimizer& opt, const std::vector<Tensor>& p,
                 const std::vector<Tensor>& g) {
  opt.zero_grad();
  scaler.scale(linear_loss(p, g)).backward();
  scaler.step(opt);
  scaler.update();
}

std::vector<Tensor> copies(const std::vector<Tensor>& tensors) {
  std::vector<Tensor> out;
  for (const Tensor& t : tensors)
    out.push_back(t.detach().clone().requires_grad_(true));
  return out;
}

// Every parameter and state tensor (state dict entries but the step counts) bitwise equal.
void expect_same(const std::vector<Tensor>& pa, const optim::Optimizer& a,
                 const std::vector<Tensor>& pb, const optim::Optimizer& b) {
  for (std::size_t k = 0; k < pa.size(); ++k)
    EXPECT_TRUE(test::bitwise_equal(pa[k].detach(), pb[k].detach())) << "parameter " << k;
  const NamedTensors sa = a.state_dict();
  const NamedTensors sb = b.state_dict();
  ASSERT_EQ(sa.size(), sb.size());
  for (std::size_t i = 0; i < sa.size(); ++i) {
    EXPECT_EQ(sa[i].first, sb[i].first);
    EXPECT_TRUE(test::bitwise_equal(sa[i].second, sb[i].second)) << sa[i].first;
  }
}

// ---- The scale -------------------------------------------------------------------------------

// growth_interval 3 from 1024: three clean steps double the scale, an Inf halves it and restarts
// the count. Scales and trackers worked out by hand from torch._amp_update_scale_'s rule.
TEST(GradScaler, ScaleSequenceGrowsAndBacksOffAsComputedByHand) {
  Tensor p = zeros({3}).requires_grad_(true);
  optim::SGD opt({p}, optim::SGDOptions(0.1));
  amp::GradScaler scaler(amp::GradScalerOptions().init_scale(1024.0).growth_interval(3));
  const std::vector<bool> inf = {false, false, false, true,  false, false,
                                 true,  true,  false, false, false, false};
  const std::vector<double> scales = {1024, 1024, 2048, 1024, 1024, 1024,
                                      512,  256,  256,  256,  512,  512};
  const std::vector<int> trackers = {1, 2, 0, 0, 1, 2, 0, 0, 1, 2, 0, 1};
  for (std::size_t s = 0; s < inf.size(); ++s) {
    SCOPED_TRACE("step " + std::to_string(s + 1));
    const Tensor g = test::make_tensor({1, inf[s] ? kInf : 2, 3}, {3});
    scaled_step(scaler, opt, {p}, {g});
    EXPECT_EQ(scaler.get_scale(), scales[s]);
    const NamedTensors state = scaler.state_dict();
    EXPECT_EQ(state[4].first, "_growth_tracker");
    EXPECT_EQ(state[4].second.item<std::int32_t>(), trackers[s]);
  }
  // 9 of the 12 steps were clean: SGD moved p by 9 * 0.1 * g.
  EXPECT_EQ(opt.state(0).step, 9);
  EXPECT_TRUE(test::all_close(p.detach(), {-0.9, -1.8, -2.7}, 1e-6, 0));
}

// A scale whose growth would overflow float32 stays (as PyTorch), and the tracker restarts.
TEST(GradScaler, GrowthThatWouldOverflowKeepsTheScale) {
  Tensor p = zeros({2}).requires_grad_(true);
  optim::SGD opt({p}, optim::SGDOptions(0.1));
  const double largest_power = std::ldexp(1.0, 127);
  amp::GradScaler scaler(amp::GradScalerOptions().init_scale(largest_power).growth_interval(1));
  scaled_step(scaler, opt, {p}, {test::make_tensor({0, 0}, {2})});
  EXPECT_EQ(scaler.get_scale(), largest_power);
  EXPECT_EQ(scaler.state_dict()[4].second.item<std::int32_t>(), 0);
}

TEST(GradScaler, UpdateWithANewScaleSetsIt) {
  Tensor p = zeros({2}).requires_grad_(true);
  optim::Adam opt({p});
  amp::GradScaler scaler;
  EXPECT_EQ(scaler.get_scale(), 65536.0);  // init_scale before the first scale()
  scaler.scale(linear_loss({p}, {ones({2})})).backward();
  scaler.step(opt);
  scaler.update(8.0);
  EXPECT_EQ(scaler.get_scale(), 8.0);
  EXPECT_EQ(scaler.state_dict()[4].second.item<std::int32_t>(), 0);  // the tracker is kept
}

// ---- Skipped steps, for every optimizer -----------------------------------------------------

struct ScalerCase {
  std::string name;
  std::function<std::unique_ptr<optim::Optimizer>(std::vector<Tensor>)> make;
};

void PrintTo(const ScalerCase& c, std::ostream* out) {
  *out << c.name;
}

std::vector<ScalerCase> scaler_cases() {
  return {
      {"adam",
       [](std::vector<Tensor> p) {
         return std::make_unique<optim::Adam>(p, optim::AdamOptions(0.01).weight_decay(0.1));
       }},
      {"adam_amsgrad",
       [](std::vector<Tensor> p) {
         return std::make_unique<optim::Adam>(p, optim::AdamOptions(0.01).amsgrad(true));
       }},
      {"adamw",
       [](std::vector<Tensor> p) {
         return std::make_unique<optim::AdamW>(p, optim::AdamWOptions(0.01));
       }},
      {"sgd_momentum_dampening",
       [](std::vector<Tensor> p) {
         return std::make_unique<optim::SGD>(
             p, optim::SGDOptions(0.05).momentum(0.9).dampening(0.3).weight_decay(0.01));
       }},
      // betas (0.9, 0.9): rho_t passes 5 at step 6, so rectified steps are covered too.
      {"radam",
       [](std::vector<Tensor> p) {
         return std::make_unique<optim::RAdam>(
             p, optim::RAdamOptions(0.01).betas({0.9, 0.9}).weight_decay(0.1));
       }},
      // The first parameter (5120 elements) has 8-bit states, the second float32 ones.
      {"adam8bit",
       [](std::vector<Tensor> p) {
         return std::make_unique<optim::Adam8bit>(p,
                                                  optim::Adam8bitOptions(0.01).weight_decay(0.01));
       }},
  };
}

const std::vector<Shape> kShapes = {{64, 80}, {7}};

std::vector<Tensor> random_tensors(std::uint64_t seed) {
  manual_seed(seed);
  std::vector<Tensor> out;
  for (const Shape& s : kShapes)
    out.push_back(randn(s));
  return out;
}

// The true gradients with an Inf or NaN in one element of the second parameter's.
std::vector<Tensor> poisoned(std::uint64_t seed, float bad) {
  std::vector<Tensor> g = random_tensors(seed);
  g[1].data_ptr<float>()[3] = bad;
  return g;
}

class SkippedStep : public ::testing::TestWithParam<ScalerCase> {};

// The first step meets an Inf: nothing changes, the count stays 0 and the scale halves; the next
// clean step then equals a fresh optimizer's first step (bias corrections at t = 1, SGD's buffer
// started from the gradient).
TEST_P(SkippedStep, InfSkipsEveryParameterAndTheNextStepIsTheFirst) {
  std::vector<Tensor> p = copies(random_tensors(1));
  std::vector<Tensor> ref = copies(p);
  const std::vector<Tensor> initial = copies(p);
  std::unique_ptr<optim::Optimizer> opt = GetParam().make(p);
  std::unique_ptr<optim::Optimizer> ref_opt = GetParam().make(ref);
  amp::GradScaler scaler;

  scaled_step(scaler, *opt, p, poisoned(2, kInf));
  for (std::size_t k = 0; k < p.size(); ++k) {
    EXPECT_TRUE(test::bitwise_equal(p[k].detach(), initial[k].detach())) << "parameter " << k;
    EXPECT_EQ(opt->state(k).step, 0);
  }
  EXPECT_EQ(scaler.get_scale(), 32768.0);

  const std::vector<Tensor> g = random_tensors(3);
  scaled_step(scaler, *opt, p, g);
  for (std::size_t k = 0; k < ref.size(); ++k)
    ref[k].set_grad(g[k]);
  ref_opt->step();
  for (std::size_t k = 0; k < p.size(); ++k)
    EXPECT_EQ(opt->state(k).step, 1);
  expect_same(p, *opt, ref, *ref_opt);
}

// Clean and poisoned (Inf, NaN) steps interleaved equal the clean steps alone: states are
// bitwise unchanged by each skipped step, and every later step uses the count of steps taken.
TEST_P(SkippedStep, InterleavedSkipsEqualTheCleanStepsAlone) {
  std::vector<Tensor> p = copies(random_tensors(4));
  std::vector<Tensor> ref = copies(p);
  std::unique_ptr<optim::Optimizer> opt = GetParam().make(p);
  std::unique_ptr<optim::Optimizer> ref_opt = GetParam().make(ref);
  amp::GradScaler scaler(amp::GradScalerOptions().growth_interval(2));
  const std::string pattern = "c i c c n i c c c c";  // c clean, i Inf, n NaN
  std::uint64_t seed = 10;
  std::int64_t clean = 0;
  for (char kind : pattern) {
    if (kind == ' ') continue;
    SCOPED_TRACE(std::string("step ") + kind + " after " + std::to_string(clean) + " clean");
    ++seed;
    if (kind == 'c') {
      const std::vector<Tensor> g = random_tensors(seed);
      scaled_step(scaler, *opt, p, g);
      for (std::size_t k = 0; k < ref.size(); ++k)
        ref[k].set_grad(g[k]);
      ref_opt->step();
      ++clean;
    } else {
      const NamedTensors before = opt->state_dict();
      std::vector<NamedTensors::value_type> saved;
      for (const auto& [name, t] : before)
        saved.emplace_back(name, t.clone());
      scaled_step(scaler, *opt, p, poisoned(seed, kind == 'i' ? kInf : std::nanf("")));
      const NamedTensors after = opt->state_dict();
      ASSERT_EQ(after.size(), saved.size());
      for (std::size_t i = 0; i < saved.size(); ++i)
        EXPECT_TRUE(test::bitwise_equal(after[i].second, saved[i].second)) << saved[i].first;
    }
    expect_same(p, *opt, ref, *ref_opt);
    EXPECT_EQ(opt->state(0).step, clean);
  }
}

// After skipped steps the optimizer's state dict holds the steps taken; a fresh optimizer that
// loads it (dropping the skip counts) continues exactly as the scaled one.
TEST_P(SkippedStep, StateDictAfterSkipsContinuesBitExactly) {
  std::vector<Tensor> p = copies(random_tensors(5));
  std::unique_ptr<optim::Optimizer> opt = GetParam().make(p);
  amp::GradScaler scaler;
  scaled_step(scaler, *opt, p, random_tensors(6));
  scaled_step(scaler, *opt, p, poisoned(7, kInf));
  scaled_step(scaler, *opt, p, random_tensors(8));
  std::vector<Tensor> q = copies(p);
  std::unique_ptr<optim::Optimizer> loaded = GetParam().make(q);
  NamedTensors saved;
  for (const auto& [name, t] : opt->state_dict())
    saved.emplace_back(name, t.clone());
  EXPECT_EQ(saved[0].first, "state.0.step");
  EXPECT_EQ(saved[0].second.item<std::int64_t>(), 2);
  loaded->load_state_dict(saved);
  for (std::uint64_t seed = 20; seed < 23; ++seed) {
    const std::vector<Tensor> g = random_tensors(seed);
    scaled_step(scaler, *opt, p, g);
    for (std::size_t k = 0; k < q.size(); ++k)
      q[k].set_grad(g[k]);
    loaded->step();
  }
  expect_same(p, *opt, q, *loaded);
  // And once loaded, opt itself (skip counts dropped) goes on as loaded does.
  opt->load_state_dict(loaded->state_dict());
  const std::vector<Tensor> g = random_tensors(30);
  for (std::size_t k = 0; k < q.size(); ++k) {
    p[k].set_grad(g[k]);
    q[k].set_grad(g[k]);
  }
  opt->step();
  loaded->step();
  expect_same(p, *opt, q, *loaded);
}

INSTANTIATE_TEST_SUITE_P(GradScaler, SkippedStep, ::testing::ValuesIn(scaler_cases()),
                         [](const auto& info) { return info.param.name; });

// ---- Against unscaled runs: an MLP ----------------------------------------------------------

constexpr std::int64_t kBatch = 32, kInputs = 16, kHidden = 32, kClasses = 4;

struct Mlp {
  std::vector<Tensor> params;  // w1 (kInputs, kHidden), b1, w2 (kHidden, kClasses), b2
  Tensor forward_loss(const Tensor& x, const Tensor& target) const {
    const Tensor hidden = (matmul(x, params[0]) + params[1]).relu();
    return cross_entropy(matmul(hidden, params[2]) + params[3], target);
  }
};

Mlp make_mlp(Device device = kCPU) {
  manual_seed(40);
  Mlp mlp;
  mlp.params = {randn({kInputs, kHidden}) * 0.25, zeros({kHidden}),
                randn({kHidden, kClasses}) * 0.2, zeros({kClasses})};
  for (Tensor& p : mlp.params)
    p = p.to(device).requires_grad_(true);
  return mlp;
}

struct Batch {
  Tensor x;       // (B, kInputs)
  Tensor target;  // (B,) int64
};

std::vector<Batch> make_batches(int n, Device device = kCPU) {
  manual_seed(41);
  const Tensor teacher = randn({kInputs, kClasses});
  std::vector<Batch> out;
  for (int i = 0; i < n; ++i) {
    const Tensor x = randn({kBatch, kInputs});
    out.push_back({x.to(device), matmul(x, teacher).argmax(1).to(device)});
  }
  return out;
}

// unscale_ then clip_grad_norm_ clips the true gradients: the same norm and gradients as
// clipping after an unscaled backward, bitwise.
TEST(GradScaler, UnscaleThenClipEqualsClipOfTheUnscaledGradients) {
  const Batch batch = make_batches(1)[0];
  Mlp scaled = make_mlp();
  Mlp plain = make_mlp();
  optim::Adam opt(scaled.params);
  amp::GradScaler scaler;
  scaler.scale(scaled.forward_loss(batch.x, batch.target)).backward();
  scaler.unscale_(opt);
  const Tensor norm = optim::clip_grad_norm_(scaled.params, 0.5);
  plain.forward_loss(batch.x, batch.target).backward();
  const Tensor plain_norm = optim::clip_grad_norm_(plain.params, 0.5);
  EXPECT_GT(plain_norm.item<float>(), 0.5f);  // the clip did scale the gradients down
  EXPECT_TRUE(test::bitwise_equal(norm, plain_norm));
  for (std::size_t k = 0; k < plain.params.size(); ++k)
    EXPECT_TRUE(test::bitwise_equal(scaled.params[k].grad(), plain.params[k].grad())) << k;
  scaler.step(opt);  // uses the unscaled, clipped gradients; no second unscale
  scaler.update();
}

// Five Adam steps with the scaler (default 2^16, growing every 2 steps) equal five without it,
// bitwise: every scaled gradient is exactly 2^k times the true one.
TEST(GradScaler, ScaledTrainingEqualsUnscaledTraining) {
  const std::vector<Batch> batches = make_batches(5);
  Mlp scaled = make_mlp();
  Mlp plain = make_mlp();
  optim::Adam scaled_opt(scaled.params, optim::AdamOptions(1e-2));
  optim::Adam plain_opt(plain.params, optim::AdamOptions(1e-2));
  amp::GradScaler scaler(amp::GradScalerOptions().growth_interval(2));
  for (const Batch& batch : batches) {
    scaled_opt.zero_grad();
    scaler.scale(scaled.forward_loss(batch.x, batch.target)).backward();
    scaler.step(scaled_opt);
    scaler.update();
    plain_opt.zero_grad();
    plain.forward_loss(batch.x, batch.target).backward();
    plain_opt.step();
  }
  EXPECT_EQ(scaler.get_scale(), 65536.0 * 4);  // grown twice: the scaled path really ran
  expect_same(scaled.params, scaled_opt, plain.params, plain_opt);
}

// ---- No host synchronisation ----------------------------------------------------------------

TEST(GradScaler, HostSyncCountSeesItemAndGetScale) {
  const std::uint64_t before = host_sync_count();
  (void)ones({}).item<float>();
  EXPECT_EQ(host_sync_count(), before + 1);
  amp::GradScaler scaler;
  (void)scaler.scale(ones({}));
  (void)scaler.get_scale();  // reads the scale tensor
  EXPECT_EQ(host_sync_count(), before + 2);
}

// A whole scaled step: scale, backward, unscale_, clip_grad_norm_, step, update, with clean and
// Inf gradients, never reads a value on the host: three steps on `device`, the second with an Inf
// loss, leave host_sync_count() as it was.
void expect_scaled_steps_do_not_sync(Device device) {
  const std::vector<Batch> batches = make_batches(3, device);
  Mlp mlp = make_mlp(device);
  optim::Adam opt(mlp.params, optim::AdamOptions(1e-3));
  amp::GradScaler scaler;
  if (device.is_cuda())
    cuda::synchronize();  // the batches' copies are done; from here on nothing waits
  const std::uint64_t before = host_sync_count();
  for (int s = 0; s < 3; ++s) {
    opt.zero_grad();
    Tensor loss = mlp.forward_loss(batches[s].x, batches[s].target);
    if (s == 1) loss = loss * std::numeric_limits<double>::infinity();
    scaler.scale(loss).backward();
    scaler.unscale_(opt);
    optim::clip_grad_norm_(mlp.params, 1.0);
    scaler.step(opt);
    scaler.update();
  }
  EXPECT_EQ(host_sync_count(), before);
  EXPECT_EQ(opt.state(0).step, 2);  // the Inf step was skipped (this reads the device)
  EXPECT_EQ(scaler.get_scale(), 32768.0);
}

TEST(GradScaler, AScaledStepDoesNotSyncTheHost) {
  expect_scaled_steps_do_not_sync(kCPU);
}

// The same on CUDA: the flags, the scale and the step counts never leave the GPU. (CUDA graph
// capture of the step would prove it further, but core/cuda.h has no capture API yet.)
TEST(GradScaler, AScaledStepDoesNotSyncTheHostOnCuda) {
  if (!cuda::is_available()) GTEST_SKIP() << "no CUDA device";
  expect_scaled_steps_do_not_sync(kCUDA);
}

// ---- Edges -------------------------------------------------------------------------------------

// No parameter has a gradient: step does nothing, update counts a clean step.
TEST(GradScaler, StepWithoutGradientsDoesNothing) {
  Tensor p = ones({2}).requires_grad_(true);
  optim::Adam opt({p});
  amp::GradScaler scaler(amp::GradScalerOptions().growth_interval(1));
  (void)scaler.scale(ones({}));
  scaler.step(opt);
  scaler.update();
  EXPECT_TRUE(test::all_close(p.detach(), {1, 1}, 0, 0));
  EXPECT_EQ(opt.state(0).step, 0);
  EXPECT_EQ(scaler.get_scale(), 131072.0);
}

TEST(GradScaler, DisabledPassesThrough) {
  Tensor p = zeros({2}).requires_grad_(true);
  optim::SGD opt({p}, optim::SGDOptions(1.0));
  amp::GradScaler scaler(amp::GradScalerOptions().enabled(false));
  const Tensor loss = linear_loss({p}, {test::make_tensor({1, 2}, {2})});
  const Tensor scaled = scaler.scale(loss);
  EXPECT_EQ(&scaled.impl(), &loss.impl());  // the loss itself
  scaled.backward();
  scaler.unscale_(opt);
  scaler.step(opt);  // optimizer.step()
  scaler.update();
  EXPECT_TRUE(test::all_close(p.detach(), {-1, -2}, 0, 0));
  EXPECT_EQ(scaler.get_scale(), 1.0);
  EXPECT_FALSE(scaler.is_enabled());
  EXPECT_TRUE(scaler.state_dict().empty());
}

// PyTorch's keys and dtypes; a loaded scaler (before its first scale(), and after) goes on as
// the saved one.
TEST(GradScaler, StateDictRoundTrip) {
  Tensor p = zeros({3}).requires_grad_(true);
  optim::SGD opt({p}, optim::SGDOptions(0.1));
  amp::GradScaler scaler(amp::GradScalerOptions().init_scale(256.0).growth_interval(3));
  for (float bad : {1.0f, kInf, 1.0f, 1.0f})
    scaled_step(scaler, opt, {p}, {test::make_tensor({bad, 1, 1}, {3})});
  const NamedTensors state = scaler.state_dict();
  const std::vector<std::string> keys = {"scale", "growth_factor", "backoff_factor",
                                         "growth_interval", "_growth_tracker"};
  const std::vector<DType> dtypes = {kFloat32, kFloat64, kFloat64, kInt64, kInt32};
  ASSERT_EQ(state.size(), keys.size());
  for (std::size_t i = 0; i < keys.size(); ++i) {
    EXPECT_EQ(state[i].first, keys[i]);
    EXPECT_EQ(state[i].second.dtype(), dtypes[i]) << keys[i];
    EXPECT_EQ(state[i].second.dim(), 0) << keys[i];
  }
  EXPECT_EQ(state[0].second.item<float>(), 128.0f);
  EXPECT_EQ(state[3].second.item<std::int64_t>(), 3);
  EXPECT_EQ(state[4].second.item<std::int32_t>(), 2);

  amp::GradScaler fresh;  // loads before its first scale()
  fresh.load_state_dict(state);
  amp::GradScaler used(amp::GradScalerOptions().init_scale(2.0));
  (void)used.scale(ones({}));  // loads into existing tensors
  used.load_state_dict(state);
  EXPECT_EQ(fresh.get_scale(), 128.0);
  EXPECT_EQ(fresh.get_growth_interval(), 3);
  for (amp::GradScaler* loaded : {&fresh, &used}) {
    Tensor q = zeros({3}).requires_grad_(true);
    optim::SGD q_opt({q}, optim::SGDOptions(0.1));
    scaled_step(*loaded, q_opt, {q}, {ones({3})});  // the third clean step in a row: grows
    EXPECT_EQ(loaded->get_scale(), 256.0);
  }
}

}  // namespace
}  // namespace leangrad
