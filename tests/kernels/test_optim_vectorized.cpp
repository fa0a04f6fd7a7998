// The vectorised CPU optimizer steps (kernels/cpu/optim_vectorized.cpp, the launchers the library
// runs) against the reference loops (kernels/cpu/optim_reference.h), through the raw launchers:
// SGD, Adam/AdamW and RAdam over every option combination (float32, float64, float16 and
// bfloat16), Adam8bit over its options and edge
// blocks (all zero, a denormal absmax, NaN parameters) and its code table over every float; for
// several steps of lists of tensors of odd sizes (0, 1, below and above a vector, a block and the
// threading grain), with per-tensor learning rates and weight decays, GradScaler's gated and
// skipped steps, non-finite gradients, and 1 to 4 threads.
//
// The comparison is bitwise: both kernels run the same update functor, operation for operation,
// compiled without FMA contraction (Note [Vectorised optimizer steps]), and IEEE 754 rounds the
// vector forms of these operations exactly as the scalar ones on any machine. The one exception is
// NaN: when two operands are NaN, IEEE 754 does not say whose payload (and sign) the result
// carries, and a compiler may swap the operands of a commutative operation, so a NaN matches any
// NaN. For float16 and bfloat16 both kernels widen each value to float and round each result once
// with core/half.h's conversion (Note [Optimizers in half precision]), so the same holds for the
// 16-bit values.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <leangrad/core/parallel.h>
#include <leangrad/kernels/backend.h>
#include <leangrad/kernels/cpu/optim_reference.h>
#include <leangrad/kernels/cpu/quant_code_table.h>
#include <leangrad/kernels/cpu/quant_permute.h>
#include <leangrad/kernels/elementwise_math.h>
#include "testing/float_sweep.h"
#include "testing/sanitized.h"
#include "testing/thread_count.h"

namespace leangrad {
namespace {

using kernels::AdamUpdate;
using kernels::RAdamUpdate;
using kernels::SgdUpdate;

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

// Sizes of the tensors of one launch: empty, one element, around a vector (8 and 16 floats), a
// quantisation block (256) and the threading grain (kernels::cpu::kElementwiseGrain, 32768).
// Under a sanitizer (testing/sanitized.h) a third of the elements, with every kind of size still
// there: each tail, several blocks, and a tensor that two chunks of the parallel loop share.
const std::vector<std::int64_t> kSizes =
    test::kSanitized ? std::vector<std::int64_t>{0, 1, 7, 17, 255, 257, 4099, 32769}
                     : std::vector<std::int64_t>{0, 1, 7, 17, 255, 257, 1000, 4099, 32767, 70001};

// Same bits, or both NaN (see the top of the file).
bool same_value(float a, float b) {
  return std::bit_cast<std::uint32_t>(a) == std::bit_cast<std::uint32_t>(b) ||
         (std::isnan(a) && std::isnan(b));
}
bool same_value(double a, double b) {
  return std::bit_cast<std::uint64_t>(a) == std::bit_cast<std::uint64_t>(b) ||
         (std::isnan(a) && std::isnan(b));
}
template <typename H>
requires kernels::is_half_type_v<H>
bool same_value(H a, H b) {
  return a.bits == b.bits ||
         (std::isnan(static_cast<float>(a)) && std::isnan(static_cast<float>(b)));
}

template <typename T>
::testing::AssertionResult same_values(const std::vector<T>& fast, const std::vector<T>& reference,
                                       const std::string& what) {
  for (std::size_t i = 0; i < fast.size(); ++i) {
    bool same;
    if constexpr (std::is_floating_point_v<T> || kernels::is_half_type_v<T>) {
      same = same_value(fast[i], reference[i]);
    } else {
      same = fast[i] == reference[i];
    }
    if (!same) {
      if constexpr (kernels::is_half_type_v<T>) {
        return ::testing::AssertionFailure()
               << what << "[" << i << "]: vectorised " << static_cast<float>(fast[i]) << " (bits "
               << fast[i].bits << "), reference " << static_cast<float>(reference[i]) << " (bits "
               << reference[i].bits << ")";
      } else {
        return ::testing::AssertionFailure() << what << "[" << i << "]: vectorised " << +fast[i]
                                             << ", reference " << +reference[i];
      }
    }
  }
  return ::testing::AssertionSuccess();
}

// What happens in one run of steps: which steps GradScaler skips (found_inf set), at which steps
// some gradient elements are NaN or +-Inf, and which tensors count their skipped steps on the
// "device" (StepArgs::skipped; Note [Gated step]): every other tensor, when gated.
struct StepPlan {
  int steps = 6;
  std::vector<int> skipped_steps;
  std::vector<int> nonfinite_steps;
  bool gated = false;
};

// `steps` plain steps.
StepPlan plain_steps(int steps) {
  StepPlan plan;
  plan.steps = steps;
  return plan;
}

bool contains(const std::vector<int>& v, int x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

// Fresh gradients for one step: N(0, scale^2) (drawn in opmath_t<T>, then rounded to T), with
// NaN, +Inf and -Inf at a few places when `nonfinite`.
template <typename T>
void fill_gradient(std::vector<T>& g, std::mt19937& rng, opmath_t<T> scale, bool nonfinite) {
  using G = opmath_t<T>;
  std::normal_distribution<G> normal(G(0), scale);
  for (T& x : g)
    x = static_cast<T>(normal(rng));
  if (nonfinite && !g.empty()) {
    g[0] = static_cast<T>(std::numeric_limits<G>::quiet_NaN());
    g[g.size() / 2] = static_cast<T>(std::numeric_limits<G>::infinity());
    g[g.size() - 1] = static_cast<T>(-std::numeric_limits<G>::infinity());
  }
}

// ---- SGD, Adam/AdamW, RAdam ------------------------------------------------------------------

// The streams of one tensor (Note [Optimizer streams]; an empty stream is null) and its skip count.
template <typename T>
struct TensorStreams {
  std::vector<std::vector<T>> data;
  std::int32_t skipped = 0;
};

// A launcher as the backend declares it, with the flag of the optimizers that have one.
template <typename Update>
using Launcher = std::function<void(const Update&, const std::vector<kernels::OptimTensor<Update>>&,
                                    const int*, int*)>;

// Initial streams: parameters N(0, 1) (some exactly 0), states of a few steps' size; `present`
// has bit k set when stream k exists.
template <typename T>
std::vector<TensorStreams<T>> make_streams(int num_streams, unsigned present, std::uint32_t seed) {
  using G = opmath_t<T>;  // drawn in float for the 16-bit types, then rounded
  std::mt19937 rng(seed);
  std::normal_distribution<G> normal(G(0), G(1));
  std::vector<TensorStreams<T>> tensors(kSizes.size());
  for (std::size_t t = 0; t < kSizes.size(); ++t) {
    tensors[t].data.resize(static_cast<std::size_t>(num_streams));
    for (int k = 0; k < num_streams; ++k) {
      if ((present >> k & 1u) == 0 || k == kernels::kGradSlot) continue;
      std::vector<T>& s = tensors[t].data[static_cast<std::size_t>(k)];
      s.resize(static_cast<std::size_t>(kSizes[t]));
      for (T& x : s)
        x = static_cast<T>(k == kernels::kParamSlot ? normal(rng)
                           : k == 3 || k == 4 ? G(1e-4) * std::fabs(normal(rng))  // moments >= 0
                                              : G(0.05) * normal(rng));
      if (k == kernels::kParamSlot && !s.empty()) s[s.size() / 3] = static_cast<T>(G(0));
    }
    if ((present >> kernels::kGradSlot & 1u) != 0)
      tensors[t].data[kernels::kGradSlot].resize(static_cast<std::size_t>(kSizes[t]));
  }
  return tensors;
}

// Runs plan.steps steps of `update` with the vectorised launcher and the reference on equal
// copies of the same streams and gradients, and checks every stream, skip count and flag after
// each step. Tensor t has learning rate lr (1 + t / 10) and, on every third tensor, weight decay 0
// (so one launch mixes tensors with and without it).
template <typename Update>
void expect_vectorised_equals_reference(const Update& update, unsigned present, double lr,
                                        double weight_decay, const StepPlan& plan,
                                        const Launcher<Update>& vectorised,
                                        const Launcher<Update>& reference) {
  constexpr int kStreams = Update::kNumStreams;
  using T = typename Update::Scalar;
  std::vector<TensorStreams<T>> fast = make_streams<T>(kStreams, present, 1234);
  std::vector<TensorStreams<T>> slow = fast;
  std::mt19937 rng(99);
  for (int step = 1; step <= plan.steps; ++step) {
    SCOPED_TRACE("step " + std::to_string(step));
    const bool nonfinite = contains(plan.nonfinite_steps, step);
    for (std::size_t t = 0; t < fast.size(); ++t) {
      std::vector<T>& g = fast[t].data[kernels::kGradSlot];
      fill_gradient(g, rng, opmath_t<T>(0.1), nonfinite);
      slow[t].data[kernels::kGradSlot] = g;
    }
    auto launch_list = [&](std::vector<TensorStreams<T>>& streams) {
      std::vector<kernels::OptimTensor<Update>> list;
      for (std::size_t t = 0; t < streams.size(); ++t) {
        kernels::OptimTensor<Update> e{};
        for (int k = 0; k < kStreams; ++k) {
          std::vector<T>& s = streams[t].data[static_cast<std::size_t>(k)];
          e.data[k] = (present >> k & 1u) != 0 ? s.data() : nullptr;
        }
        e.numel = kSizes[t];
        const double tensor_lr = lr * (1.0 + static_cast<double>(t) / 10.0);
        const double tensor_wd = t % 3 == 0 ? 0.0 : weight_decay;
        e.scalars = update.scalars_at(tensor_lr, tensor_wd, step);
        e.step_args = {0.0, 0.0, 0, nullptr};
        if (plan.gated && t % 2 == 0)
          e.step_args = {tensor_lr, tensor_wd, step, &streams[t].skipped};
        list.push_back(e);
      }
      return list;
    };
    const int found_inf = contains(plan.skipped_steps, step) ? 1 : 0;
    int fast_flag = 0;
    int slow_flag = 0;
    vectorised(update, launch_list(fast), plan.gated ? &found_inf : nullptr, &fast_flag);
    reference(update, launch_list(slow), plan.gated ? &found_inf : nullptr, &slow_flag);
    EXPECT_EQ(fast_flag, slow_flag) << "skipped_nonfinite";
    for (std::size_t t = 0; t < fast.size(); ++t) {
      EXPECT_EQ(fast[t].skipped, slow[t].skipped) << "skip count of tensor " << t;
      for (int k = 0; k < kStreams; ++k) {
        const std::string what = "tensor " + std::to_string(t) + " stream " + std::to_string(k);
        ASSERT_TRUE(same_values(fast[t].data[static_cast<std::size_t>(k)],
                                slow[t].data[static_cast<std::size_t>(k)], what));
      }
    }
  }
}

template <typename T>
const Launcher<kernels::SgdUpdateOf<T>> kSgd =
    [](const kernels::SgdUpdateOf<T>& u, const auto& list, const int* found_inf, int*) {
      kernels::cpu::sgd_step(u, list, found_inf);
    };
template <typename T>
const Launcher<kernels::SgdUpdateOf<T>> kSgdReference =
    [](const kernels::SgdUpdateOf<T>& u, const auto& list, const int* found_inf, int*) {
      kernels::cpu::reference::sgd_step(u, list, found_inf);
    };
template <typename T>
const Launcher<kernels::AdamUpdateOf<T>> kAdam =
    [](const kernels::AdamUpdateOf<T>& u, const auto& list, const int* found_inf, int* flag) {
      kernels::cpu::adam_step(u, list, found_inf, flag);
    };
template <typename T>
const Launcher<kernels::AdamUpdateOf<T>> kAdamReference =
    [](const kernels::AdamUpdateOf<T>& u, const auto& list, const int* found_inf, int* flag) {
      kernels::cpu::reference::adam_step(u, list, found_inf, flag);
    };
template <typename T>
const Launcher<kernels::RAdamUpdateOf<T>> kRAdam =
    [](const kernels::RAdamUpdateOf<T>& u, const auto& list, const int* found_inf, int*) {
      kernels::cpu::radam_step(u, list, found_inf);
    };
template <typename T>
const Launcher<kernels::RAdamUpdateOf<T>> kRAdamReference =
    [](const kernels::RAdamUpdateOf<T>& u, const auto& list, const int* found_inf, int*) {
      kernels::cpu::reference::radam_step(u, list, found_inf);
    };

// The plans every option combination runs: plain steps; steps with NaN/Inf gradients; gated
// steps, two of them skipped (one the first), with non-finite gradients on a skipped step.
std::vector<std::pair<std::string, StepPlan>> step_plans() {
  StepPlan nonfinite = plain_steps(4);
  nonfinite.nonfinite_steps = {2};
  StepPlan gated = plain_steps(7);
  gated.skipped_steps = {1, 4};
  gated.nonfinite_steps = {4};
  gated.gated = true;
  return {{"plain", plain_steps(6)}, {"nonfinite", nonfinite}, {"gated", gated}};
}

template <typename T>
void sgd_equals_reference() {
  for (const auto& [plan_name, plan] : step_plans()) {
    for (double momentum : {0.0, 0.9}) {
      for (bool nesterov : {false, true}) {
        if (nesterov && momentum == 0.0) continue;  // refused by optim::SGD
        for (double dampening : {0.0, 0.25}) {
          if (nesterov && dampening != 0.0) continue;
          for (double weight_decay : {0.0, 0.1}) {
            for (bool maximize : {false, true}) {
              SCOPED_TRACE(plan_name + " momentum " + std::to_string(momentum) + " nesterov " +
                           std::to_string(nesterov) + " dampening " + std::to_string(dampening) +
                           " weight_decay " + std::to_string(weight_decay) + " maximize " +
                           std::to_string(maximize));
              const auto update =
                  kernels::SgdUpdateOf<T>::make(momentum, dampening, nesterov, maximize);
              expect_vectorised_equals_reference(update, momentum != 0.0 ? 0b111u : 0b011u, 0.05,
                                                 weight_decay, plan, kSgd<T>, kSgdReference<T>);
            }
          }
        }
      }
    }
  }
}

TEST(OptimVectorized, SgdEqualsReference) {
  sgd_equals_reference<float>();
}
TEST(OptimVectorized, SgdEqualsReferenceFloat64) {
  sgd_equals_reference<double>();
}
TEST(OptimVectorized, SgdEqualsReferenceFloat16) {
  sgd_equals_reference<Half>();
}
TEST(OptimVectorized, SgdEqualsReferenceBFloat16) {
  sgd_equals_reference<BFloat16>();
}

template <typename T>
void adam_equals_reference() {
  for (const auto& [plan_name, plan] : step_plans()) {
    for (bool amsgrad : {false, true}) {
      for (bool decoupled : {false, true}) {
        for (bool skip_nonfinite : {false, true}) {
          for (double weight_decay : {0.0, 0.01}) {
            for (bool maximize : {false, true}) {
              SCOPED_TRACE(plan_name + " amsgrad " + std::to_string(amsgrad) + " decoupled " +
                           std::to_string(decoupled) + " skip_nonfinite " +
                           std::to_string(skip_nonfinite) + " weight_decay " +
                           std::to_string(weight_decay) + " maximize " + std::to_string(maximize));
              const auto update = kernels::AdamUpdateOf<T>::make(
                  0.9, 0.999, 1e-8, amsgrad, decoupled, skip_nonfinite, maximize);
              expect_vectorised_equals_reference(update, amsgrad ? 0b11111u : 0b01111u, 1e-3,
                                                 weight_decay, plan, kAdam<T>, kAdamReference<T>);
            }
          }
        }
      }
    }
  }
}

TEST(OptimVectorized, AdamAndAdamWEqualReference) {
  adam_equals_reference<float>();
}
TEST(OptimVectorized, AdamAndAdamWEqualReferenceFloat64) {
  adam_equals_reference<double>();
}
TEST(OptimVectorized, AdamAndAdamWEqualReferenceFloat16) {
  adam_equals_reference<Half>();
}
TEST(OptimVectorized, AdamAndAdamWEqualReferenceBFloat16) {
  adam_equals_reference<BFloat16>();
}

// Steps 1 to 9 with beta2 = 0.999: the first five are not rectified (rho_t <= 5), the rest are.
template <typename T>
void radam_equals_reference() {
  const auto update = kernels::RAdamUpdateOf<T>::make(0.9, 0.999, 1e-8);
  ASSERT_FALSE(update.scalars_at(1e-3, 0.0, 5).rectified);
  ASSERT_TRUE(update.scalars_at(1e-3, 0.0, 6).rectified);
  for (auto [plan_name, plan] : step_plans()) {
    plan.steps = 9;
    for (double weight_decay : {0.0, 0.01}) {
      SCOPED_TRACE(plan_name + " weight_decay " + std::to_string(weight_decay));
      expect_vectorised_equals_reference(update, 0b1111u, 1e-3, weight_decay, plan, kRAdam<T>,
                                         kRAdamReference<T>);
    }
  }
}

TEST(OptimVectorized, RAdamEqualsReferenceBeforeAndAfterRectification) {
  radam_equals_reference<float>();
}
TEST(OptimVectorized, RAdamEqualsReferenceBeforeAndAfterRectificationFloat64) {
  radam_equals_reference<double>();
}
TEST(OptimVectorized, RAdamEqualsReferenceBeforeAndAfterRectificationFloat16) {
  radam_equals_reference<Half>();
}
TEST(OptimVectorized, RAdamEqualsReferenceBeforeAndAfterRectificationBFloat16) {
  radam_equals_reference<BFloat16>();
}

// Every part of a thread's range: the same results whatever the number of threads (so wherever
// the ranges cut the tensors).
TEST(OptimVectorized, AdamEqualsReferenceOnAnyThreadCount) {
  const AdamUpdate update = AdamUpdate::make(0.9, 0.999, 1e-8, false, true, false);
  for (int threads : {1, 2, 3, 4}) {
    SCOPED_TRACE("threads " + std::to_string(threads));
    const ThreadCount guard(threads);
    expect_vectorised_equals_reference(update, 0b01111u, 1e-3, 0.01, plain_steps(2), kAdam<float>,
                                       kAdamReference<float>);
    expect_vectorised_equals_reference(
        kernels::AdamUpdateOf<double>::make(0.9, 0.999, 1e-8, false, true, false), 0b01111u, 1e-3,
        0.01, plain_steps(2), kAdam<double>, kAdamReference<double>);
    expect_vectorised_equals_reference(
        kernels::AdamUpdateOf<BFloat16>::make(0.9, 0.999, 1e-8, false, true, false), 0b01111u, 1e-3,
        0.01, plain_steps(2), kAdam<BFloat16>, kAdamReference<BFloat16>);
  }
}

// A list whose states do not match its options (amsgrad without max_exp_avg_sq; SGD with a
// buffer and no momentum), which optim/ never builds, gets the reference's results.
TEST(OptimVectorized, StatesThatDoNotMatchTheOptionsGetTheReferenceResults) {
  expect_vectorised_equals_reference(AdamUpdate::make(0.9, 0.999, 1e-8, true, false, false),
                                     0b01111u, 1e-3, 0.0, plain_steps(2), kAdam<float>,
                                     kAdamReference<float>);
  expect_vectorised_equals_reference(SgdUpdate{0.0f, 1.0f, false}, 0b111u, 0.1, 0.0, plain_steps(2),
                                     kSgd<float>, kSgdReference<float>);
  expect_vectorised_equals_reference(kernels::SgdUpdateOf<double>{0.0, 1.0, false}, 0b111u, 0.1,
                                     0.0, plain_steps(2), kSgd<double>, kSgdReference<double>);
}

// ---- Adam8bit --------------------------------------------------------------------------------

// The code table (Note [Code table]) gives quantize_state's code for every one of the 2^32
// floats, in both maps: every bucket, the clamped ones (tiny, huge, infinite), -0 and NaN. Under a
// sanitizer every test::kSweepStride-th float: 17 million a map.
TEST(QuantCodeTable, GivesQuantizeStateCodeForEveryFloat) {
  const kernels::cpu::QuantMaps& maps = kernels::cpu::quant_maps();
  for (const bool is_signed : {true, false}) {
    SCOPED_TRACE(is_signed ? "signed" : "unsigned");
    const float* thresholds =
        is_signed ? maps.signed_thresholds.data() : maps.unsigned_thresholds.data();
    const kernels::cpu::QuantCodeTable::View table =
        (is_signed ? kernels::cpu::signed_code_table() : kernels::cpu::unsigned_code_table())
            .view();
    test::expect_float_sweep(
        std::uint64_t{1} << 32, 1, test::kSweepStride,
        [&](std::uint64_t k, std::uint64_t, test::SweepFailures& failures) {
          const float x = std::bit_cast<float>(static_cast<std::uint32_t>(k));
          if (table.code(x, 1.0f) != kernels::quantize_state(thresholds, x, 1.0f, is_signed))
            failures.add(static_cast<std::uint32_t>(k));
        });
  }
}

// One quantised parameter: parameter, gradient, codes, absmax per block, skip count.
struct QuantizedTensor {
  std::vector<float> param, grad;
  std::vector<std::uint8_t> state1, state2;
  std::vector<float> absmax1, absmax2;
  std::int32_t skipped = 0;
};

// Random codes and absmax, and three special blocks where the tensor has them: block 1 all zero
// (absmax 0), block 2 with moments so small that 1 / absmax overflows (normalised values of
// +-Inf and NaN), block 3 with NaN parameters (with L2 weight decay, NaN moments).
std::vector<QuantizedTensor> make_quantized(std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::uniform_int_distribution<int> code(0, 255);
  std::vector<QuantizedTensor> tensors(kSizes.size());
  for (std::size_t t = 0; t < kSizes.size(); ++t) {
    QuantizedTensor& q = tensors[t];
    const auto n = static_cast<std::size_t>(kSizes[t]);
    const std::size_t blocks = (n + kernels::kQuantBlockSize - 1) / kernels::kQuantBlockSize;
    q.param.resize(n);
    q.grad.resize(n);
    q.state1.resize(n);
    q.state2.resize(n);
    for (std::size_t i = 0; i < n; ++i) {
      q.param[i] = normal(rng);
      q.state1[i] = static_cast<std::uint8_t>(code(rng));
      q.state2[i] = static_cast<std::uint8_t>(code(rng));
    }
    for (std::size_t b = 0; b < blocks; ++b) {
      q.absmax1.push_back(0.05f * std::fabs(normal(rng)));
      q.absmax2.push_back(1e-4f * std::fabs(normal(rng)));
    }
    auto block = [&](std::size_t b) {
      const std::size_t begin = b * kernels::kQuantBlockSize;
      return std::pair{begin, std::min(n, begin + kernels::kQuantBlockSize)};
    };
    if (blocks > 1) {
      q.absmax1[1] = q.absmax2[1] = 0.0f;
      const auto [begin, end] = block(1);
      for (std::size_t i = begin; i < end; ++i) {
        q.state1[i] = 127;  // the codes of 0
        q.state2[i] = 0;
      }
    }
    if (blocks > 2) {
      q.absmax1[2] = 1e-44f;  // denormal: 1 / absmax is +Inf
      q.absmax2[2] = 1e-44f;
    }
    if (blocks > 3) {
      const auto [begin, end] = block(3);
      for (std::size_t i = begin; i < end; i += 5)
        q.param[i] = kNaN;
    }
  }
  return tensors;
}

void expect_adam8bit_equals_reference(const AdamUpdate& update, double weight_decay,
                                      const StepPlan& plan) {
  std::vector<QuantizedTensor> fast = make_quantized(4321);
  std::vector<QuantizedTensor> slow = fast;
  std::mt19937 rng(7);
  for (int step = 1; step <= plan.steps; ++step) {
    SCOPED_TRACE("step " + std::to_string(step));
    const bool nonfinite = contains(plan.nonfinite_steps, step);
    for (std::size_t t = 0; t < fast.size(); ++t) {
      fill_gradient(fast[t].grad, rng, 0.1f, nonfinite);
      // Block 2's gradients are 0 from here on: its moments decay from their tiny values.
      for (std::size_t i = 2 * kernels::kQuantBlockSize;
           i < std::min(fast[t].grad.size(), 3 * std::size_t{kernels::kQuantBlockSize}); ++i)
        fast[t].grad[i] = 0.0f;
      slow[t].grad = fast[t].grad;
    }
    auto launch_list = [&](std::vector<QuantizedTensor>& tensors) {
      std::vector<kernels::Adam8bitTensor> list;
      for (std::size_t t = 0; t < tensors.size(); ++t) {
        QuantizedTensor& q = tensors[t];
        const double lr = 1e-3 * (1.0 + static_cast<double>(t) / 10.0);
        const double wd = t % 3 == 0 ? 0.0 : weight_decay;
        kernels::StepArgs args{0.0, 0.0, 0, nullptr};
        if (plan.gated && t % 2 == 0) args = {lr, wd, step, &q.skipped};
        list.push_back({q.param.data(), q.grad.data(), q.state1.data(), q.state2.data(),
                        q.absmax1.data(), q.absmax2.data(), kSizes[t],
                        update.scalars_at(lr, wd, step), args});
      }
      return list;
    };
    const int found_inf = contains(plan.skipped_steps, step) ? 1 : 0;
    int fast_flag = 0;
    int slow_flag = 0;
    kernels::cpu::adam8bit_step(update, launch_list(fast), plan.gated ? &found_inf : nullptr,
                                &fast_flag);
    kernels::cpu::reference::adam8bit_step(update, launch_list(slow),
                                           plan.gated ? &found_inf : nullptr, &slow_flag);
    EXPECT_EQ(fast_flag, slow_flag) << "skipped_nonfinite";
    for (std::size_t t = 0; t < fast.size(); ++t) {
      const std::string name = "tensor " + std::to_string(t) + " ";
      EXPECT_EQ(fast[t].skipped, slow[t].skipped) << name << "skip count";
      ASSERT_TRUE(same_values(fast[t].param, slow[t].param, name + "param"));
      ASSERT_TRUE(same_values(fast[t].state1, slow[t].state1, name + "state1"));
      ASSERT_TRUE(same_values(fast[t].state2, slow[t].state2, name + "state2"));
      ASSERT_TRUE(same_values(fast[t].absmax1, slow[t].absmax1, name + "absmax1"));
      ASSERT_TRUE(same_values(fast[t].absmax2, slow[t].absmax2, name + "absmax2"));
    }
  }
}

// Both Adam8bit kernels on a CPU with AVX-512 VBMI: the byte permutes (the default there) and
// the code tables every other CPU runs (Note [Choosing the permutes at run time]).
class PermuteGuard {
 public:
  explicit PermuteGuard(bool allowed) { kernels::cpu::set_quant_permute_allowed(allowed); }
  ~PermuteGuard() { kernels::cpu::set_quant_permute_allowed(true); }
  PermuteGuard(const PermuteGuard&) = delete;
  PermuteGuard& operator=(const PermuteGuard&) = delete;
};

TEST(OptimVectorized, Adam8bitCodeTableKernelEqualsReference) {
  if (!kernels::cpu::quant_permute_supported())
    GTEST_SKIP() << "this CPU runs the code tables in Adam8bitEqualsReference already";
  const PermuteGuard guard(false);
  ASSERT_FALSE(kernels::cpu::quant_permute_supported());
  for (const auto& [plan_name, plan] : step_plans()) {
    SCOPED_TRACE(plan_name);
    expect_adam8bit_equals_reference(AdamUpdate::make(0.9, 0.999, 1e-8, false, true, true), 0.01,
                                     plan);
  }
}

TEST(OptimVectorized, Adam8bitEqualsReference) {
  for (const auto& [plan_name, plan] : step_plans()) {
    for (bool decoupled : {false, true}) {
      for (bool skip_nonfinite : {true, false}) {
        for (double weight_decay : {0.0, 0.01}) {
          SCOPED_TRACE(plan_name + " decoupled " + std::to_string(decoupled) + " skip_nonfinite " +
                       std::to_string(skip_nonfinite) + " weight_decay " +
                       std::to_string(weight_decay));
          expect_adam8bit_equals_reference(
              AdamUpdate::make(0.9, 0.999, 1e-8, false, decoupled, skip_nonfinite), weight_decay,
              plan);
        }
      }
    }
  }
  for (int threads : {1, 3}) {
    SCOPED_TRACE("threads " + std::to_string(threads));
    const ThreadCount guard(threads);
    expect_adam8bit_equals_reference(AdamUpdate::make(0.9, 0.999, 1e-8, false, false, true), 0.0,
                                     plain_steps(2));
  }
}

}  // namespace
}  // namespace leangrad
