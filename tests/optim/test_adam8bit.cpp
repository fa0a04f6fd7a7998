// Adam8bit and its quantisation (optim/adam8bit.h, kernels/quantization_math.h): the maps'
// properties, agreement with float32 Adam on bitsandbytes' test shape, bit-exact state round trips,
// the memory it saves, and NaN/Inf gradients.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <iostream>
#include <limits>
#include <tuple>
#include <vector>

#include <leangrad/autograd/functions.h>
#include <leangrad/autograd/grad_mode.h>
#include <leangrad/core/generator.h>
#include <leangrad/core/memory.h>
#include <leangrad/kernels/creation.h>
#include <leangrad/optim/optim.h>
#include "optim_test_util.h"
#include "testing/float_sweep.h"
#include "testing/sanitized.h"
#include "testing/tensor_testing.h"

namespace leangrad {
namespace {

std::vector<float> map_of(bool is_signed) {
  std::vector<float> map;
  for (int c = 0; c < kernels::kQuantCodes; ++c)
    map.push_back(kernels::dynamic_map_value(c, is_signed));
  return map;
}

TEST(QuantizationMap, MonotonicWithExactZeroAndOne) {
  for (bool is_signed : {true, false}) {
    SCOPED_TRACE(is_signed ? "signed" : "unsigned");
    const std::vector<float> map = map_of(is_signed);
    for (int c = 1; c < kernels::kQuantCodes; ++c)
      EXPECT_LT(map[c - 1], map[c]) << "code " << c;
    EXPECT_EQ(map[is_signed ? 127 : 0], 0.0f);
    EXPECT_EQ(map[255], 1.0f);
    EXPECT_GE(map[0], is_signed ? -1.0f : 0.0f);
  }
  EXPECT_EQ(map_of(true)[0], -0.99296875f);  // bitsandbytes' signed map starts here
  EXPECT_EQ(map_of(true)[128], 5.5e-7f);
}

// The midpoint thresholds of a map (Note [Code search from a guess]).
std::vector<float> thresholds_of(const std::vector<float>& map) {
  std::vector<float> t;
  for (int c = 0; c + 1 < kernels::kQuantCodes; ++c)
    t.push_back(kernels::midpoint_threshold(map[c], map[c + 1]));
  return t;
}

TEST(QuantizationMap, NearestCodeSearch) {
  for (bool is_signed : {true, false}) {
    const std::vector<float> map = map_of(is_signed);
    for (int c = 0; c < kernels::kQuantCodes; ++c)
      ASSERT_EQ(kernels::quantize_nearest(map.data(), map[c]), c);
    // Brute force on a sweep of values: the chosen code is never farther than another.
    for (int i = -2000; i <= 2000; ++i) {
      const float x = std::sinh(i / 2000.0f * 3.0f) / std::sinh(3.0f) * (is_signed ? 1.0f : 0.5f) +
                      (is_signed ? 0.0f : 0.5f);
      const int code = kernels::quantize_nearest(map.data(), x);
      for (int c = 0; c < kernels::kQuantCodes; ++c)
        ASSERT_LE(std::fabs(map[code] - x), std::fabs(map[c] - x)) << "x " << x;
    }
  }
  const std::vector<float> thresholds = thresholds_of(map_of(true));
  EXPECT_EQ(kernels::quantize_state(thresholds.data(), 0.0f, kernels::inverse_absmax(0.0f), true),
            127);  // an all-zero block
  EXPECT_EQ(kernels::quantize_state(thresholds.data(), -5.0f, kernels::inverse_absmax(5.0f), true),
            0);
}

// Values outside the maps' domains, which a block reaches when its absmax is so small (a
// denormal) that 1 / absmax overflows: +-Inf get the end codes, as the values beyond +-1 do; NaN
// (0 times an infinite 1 / absmax) gets the code below that of 0 in the signed map and 0 in the
// unsigned one, from the guess of 0 settled by a comparison that NaN fails.
TEST(QuantizationMap, ValuesOutsideTheDomainGetDefinedCodes) {
  const std::vector<float> signed_thresholds = thresholds_of(map_of(true));
  const std::vector<float> unsigned_thresholds = thresholds_of(map_of(false));
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  auto code = [](const std::vector<float>& thresholds, float x, bool is_signed) {
    return static_cast<int>(kernels::quantize_state(thresholds.data(), x, 1.0f, is_signed));
  };
  EXPECT_EQ(code(signed_thresholds, inf, true), 255);
  EXPECT_EQ(code(signed_thresholds, 3e38f, true), 255);
  EXPECT_EQ(code(signed_thresholds, 1.0000001f, true), 255);
  EXPECT_EQ(code(signed_thresholds, -inf, true), 0);
  EXPECT_EQ(code(signed_thresholds, -3e38f, true), 0);
  EXPECT_EQ(code(signed_thresholds, nan, true), 126);
  EXPECT_EQ(code(unsigned_thresholds, inf, false), 255);
  EXPECT_EQ(code(unsigned_thresholds, 3e38f, false), 255);
  EXPECT_EQ(code(unsigned_thresholds, -1.0f, false), 0);
  EXPECT_EQ(code(unsigned_thresholds, nan, false), 0);
}

// quantize_state (a guess, one step each way against the midpoint thresholds) gives
// quantize_nearest's code for every float of the maps' domains: [-1, 1] signed, [0, 1] unsigned
// (3.2 billion floats). The proof has two parts:
//   1. quantize_nearest (Q) is monotone in x (the binary search's lo is, and so is the final
//      comparison of the two correctly rounded differences), so it equals the threshold rule
//      T(x) = #{c : x > thresholds[c]} everywhere iff it steps from c to c + 1 exactly between
//      thresholds[c] and the next float: checked at all 255 thresholds.
//   2. quantize_state's code F(x) is T(x), i.e. thresholds[F - 1] < x <= thresholds[F]: checked
//      for every float of the domain (two comparisons each, on every hardware thread); under a
//      sanitizer for every test::kSweepStride-th (testing/sanitized.h).
TEST(QuantizationMap, ThresholdSearchEqualsBinarySearch) {
  for (bool is_signed : {true, false}) {
    SCOPED_TRACE(is_signed ? "signed" : "unsigned");
    const std::vector<float> map = map_of(is_signed);
    const std::vector<float> thresholds = thresholds_of(map);
    for (int c = 0; c + 1 < kernels::kQuantCodes; ++c) {
      ASSERT_LT(map[c], thresholds[c]);
      ASSERT_LT(thresholds[c], map[c + 1]);
      ASSERT_EQ(kernels::quantize_nearest(map.data(), thresholds[c]), c);
      ASSERT_EQ(kernels::quantize_nearest(map.data(), std::nextafter(thresholds[c], 2.0f)), c + 1);
    }
    // Every float bit pattern of [0, 1] (0x00000000 .. 0x3f800000), and of [-1, 0) for signed.
    constexpr std::uint32_t kOneBits = 0x3f800000u;
    const std::uint32_t num_patterns = is_signed ? 2 * (kOneBits + 1) : kOneBits + 1;
    test::expect_float_sweep(
        num_patterns, 1, test::kSweepStride,
        [&](std::uint64_t k, std::uint64_t, test::SweepFailures& failures) {
          const std::uint32_t bits =
              k <= kOneBits ? static_cast<std::uint32_t>(k)
                            : static_cast<std::uint32_t>(k - kOneBits - 1) | 0x80000000u;
          const float x = std::bit_cast<float>(bits);
          const int f = kernels::quantize_state(thresholds.data(), x, 1.0f, is_signed);
          const bool above_lower = f == 0 || x > thresholds[f - 1];
          const bool below_upper = f == kernels::kQuantCodes - 1 || !(x > thresholds[f]);
          if (!(above_lower && below_upper)) failures.add(bits);
        });
  }
}

// The float values of quantised states: map[code] * absmax of the code's block.
Tensor dequantize(const Tensor& codes, const Tensor& absmax, bool is_signed) {
  const std::vector<float> map = map_of(is_signed);
  Tensor out = empty(codes.shape());
  const std::uint8_t* c = codes.data_ptr<std::uint8_t>();
  const float* a = absmax.data_ptr<float>();
  float* o = out.data_ptr<float>();
  for (std::int64_t i = 0; i < codes.numel(); ++i)
    o[i] = map[c[i]] * a[i / kernels::kQuantBlockSize];
  return out;
}

// bitsandbytes' test (tests/test_optim.py, test_optimizer8bit): 1024 x 4097 parameters, 50 steps
// of N(0, 0.01) gradients, the error of every step against float32 Adam. Two protocols:
//   - bitsandbytes': after each step float32 Adam takes Adam8bit's parameters AND dequantised
//     moments, so each step compares the two updates from the same state: < 6e-5 mean absolute,
//     < 6e-4 mean relative error. (With our shared update functor this error is 0 on the CPU:
//     it checks that dequantise -> update -> requantise loses nothing beyond the codes.)
//   - stricter: only the parameters are brought together, each optimizer keeps its own moments,
//     so each step shows the effect of the whole quantised state history on one update.
TEST(Adam8bit, MatchesFloat32AdamOnBitsandbytesShape) {
  manual_seed(0);
  Tensor p8 = (randn({1024, 4097}) * 0.1).requires_grad_(true);
  Tensor p_synced = p8.detach().clone().requires_grad_(true);  // bitsandbytes' protocol
  Tensor p_own = p8.detach().clone().requires_grad_(true);     // own moments
  optim::Adam8bit adam8({p8});
  optim::Adam adam_synced({p_synced});
  optim::Adam adam_own({p_own});
  double worst_synced = 0, sum_own_abs = 0, sum_own_rel = 0, worst_own_abs = 0;
  constexpr int kSteps = 50;
  auto errors = [&](const Tensor& p) {
    const Tensor err = (p - p8).abs();
    return std::make_pair(err.mean().item<double>(),
                          (err / (p.abs() + 1e-9)).mean().item<double>());
  };
  for (int step = 0; step < kSteps; ++step) {
    const Tensor g = randn({1024, 4097}) * 0.01;
    for (Tensor p : {p8, p_synced, p_own})
      p.set_grad(g);
    adam8.step();
    adam_synced.step();
    adam_own.step();
    NoGradGuard no_grad;
    const auto [synced_abs, synced_rel] = errors(p_synced);
    EXPECT_LT(synced_abs, 6e-5) << "step " << step;
    EXPECT_LT(synced_rel, 6e-4) << "step " << step;
    worst_synced = std::max({worst_synced, synced_abs, synced_rel});
    const auto [own_abs, own_rel] = errors(p_own);
    EXPECT_LT(own_abs, 6e-5) << "step " << step;
    worst_own_abs = std::max(worst_own_abs, own_abs);
    sum_own_abs += own_abs;
    sum_own_rel += own_rel;
    // Bring them back together.
    p_synced.copy_(p8);
    p_own.copy_(p8);
    const optim::ParamState& s8 = adam8.state(0);
    adam_synced.state_dict()[1].second.copy_(dequantize(s8.at("state1"), s8.at("absmax1"), true));
    adam_synced.state_dict()[2].second.copy_(dequantize(s8.at("state2"), s8.at("absmax2"), false));
  }
  std::cout << "[ Adam8bit ] vs Adam, " << kSteps << " steps: bitsandbytes' protocol worst error "
            << worst_synced << "; own moments: mean |err| " << sum_own_abs / kSteps
            << " (worst step " << worst_own_abs << "), mean relative err " << sum_own_rel / kSteps
            << "\n";
  // The mean relative error is dominated by parameters near 0 (|err| / (|p| + 1e-9)).
  EXPECT_LT(sum_own_rel / kSteps, 1.2e-3);
  EXPECT_EQ(adam8.skipped_nonfinite().item<std::int32_t>(), 0);
}

TEST(Adam8bit, StateBytesPerParameter) {
  const Shape shape = {1024, 4097};
  const double numel = 1024.0 * 4097.0;
  auto state_bytes = [&](auto make_optimizer) {
    Tensor p = zeros(shape).requires_grad_(true);
    p.set_grad(full(shape, 0.01));
    auto opt = make_optimizer(p);
    const std::int64_t before = memory::stats(kCPU).allocated;
    opt.step();
    return static_cast<double>(memory::stats(kCPU).allocated - before) / numel;
  };
  const double bytes8 = state_bytes([](const Tensor& p) { return optim::Adam8bit({p}); });
  const double bytes32 = state_bytes([](const Tensor& p) { return optim::Adam({p}); });
  std::cout << "[ Adam8bit ] state bytes per parameter: " << bytes8 << " (Adam: " << bytes32
            << ")\n";
  EXPECT_LE(bytes8, 2.05);
  EXPECT_GE(bytes32, 8.0);
}

TEST(Adam8bit, StateDictRoundTripIsBitExact) {
  manual_seed(1);
  // One quantised parameter (not a multiple of the block size) and one with float32 states.
  std::vector<Tensor> a = {randn({3, 1700}).requires_grad_(true), randn({10}).requires_grad_(true)};
  optim::Adam8bit opt_a(a, optim::Adam8bitOptions(1e-2).weight_decay(0.01));
  for (int s = 0; s < 4; ++s) {
    for (Tensor& p : a)
      p.set_grad(randn(p.shape()));
    opt_a.step();
  }
  NamedTensors saved;
  for (const auto& [name, t] : opt_a.state_dict())
    saved.emplace_back(name, t.clone());
  EXPECT_EQ(opt_a.state(0).at("state1").dtype(), kUInt8);
  EXPECT_EQ(opt_a.state(0).at("absmax1").shape(), (Shape{20}));
  EXPECT_TRUE(opt_a.state(1).contains("exp_avg"));
  std::vector<Tensor> b = {a[0].detach().clone().requires_grad_(true),
                           a[1].detach().clone().requires_grad_(true)};
  optim::Adam8bit opt_b(b, optim::Adam8bitOptions(1e-2).weight_decay(0.01));
  opt_b.load_state_dict(saved);
  const NamedTensors loaded = opt_b.state_dict();
  ASSERT_EQ(loaded.size(), saved.size());
  for (std::size_t i = 0; i < saved.size(); ++i)
    EXPECT_TRUE(test::bitwise_equal(saved[i].second, loaded[i].second)) << saved[i].first;
  for (int s = 0; s < 3; ++s) {
    for (std::size_t k = 0; k < a.size(); ++k) {
      const Tensor g = randn(a[k].shape());
      a[k].set_grad(g);
      b[k].set_grad(g.clone());
    }
    opt_a.step();
    opt_b.step();
  }
  for (std::size_t k = 0; k < a.size(); ++k)
    EXPECT_TRUE(test::bitwise_equal(a[k], b[k]));
  for (const auto& [name, t] : opt_a.state_dict()) {
    for (const auto& [name_b, t_b] : opt_b.state_dict())
      if (name_b == name) {
        EXPECT_TRUE(test::bitwise_equal(t, t_b)) << name;
      }
  }
}

TEST(Adam8bit, NonFiniteGradientsAreSkippedAndFlagged) {
  manual_seed(2);
  Tensor big = randn({5000}).requires_grad_(true);
  Tensor small = randn({100}).requires_grad_(true);
  optim::Adam8bit opt({big, small}, optim::Adam8bitOptions(0.1));
  const Tensor big0 = big.detach().clone();
  const Tensor small0 = small.detach().clone();
  Tensor gb = ones({5000});
  Tensor gs = ones({100});
  gb.data_ptr<float>()[7] = std::nanf("");
  gs.data_ptr<float>()[3] = INFINITY;
  big.set_grad(gb);
  small.set_grad(gs);
  opt.step();
  EXPECT_EQ(opt.skipped_nonfinite().item<std::int32_t>(), 1);
  EXPECT_EQ(big.data_ptr<float>()[7], big0.data_ptr<float>()[7]);
  EXPECT_EQ(small.data_ptr<float>()[3], small0.data_ptr<float>()[3]);
  EXPECT_NE(big.data_ptr<float>()[8], big0.data_ptr<float>()[8]);
  EXPECT_NE(small.data_ptr<float>()[4], small0.data_ptr<float>()[4]);
  for (const auto& [name, t] : opt.state_dict())
    if (t.dtype() == kFloat32) {
      EXPECT_TRUE(std::isfinite(t.abs().max().item<float>())) << name;
    }
  big.set_grad(ones({5000}));
  small.set_grad(ones({100}));
  opt.step();
  EXPECT_EQ(opt.skipped_nonfinite().item<std::int32_t>(), 0);
}

// A finite gradient whose square overflows float32 (1e30) is skipped as a NaN one is, on the
// 8-bit path and the small parameters' float32 one: before, its infinite second moment became the
// block's absmax and the next step turned all 256 parameters of the block NaN (0 * inf), and the
// state could not be loaded. The run equals, bit for bit, one whose spike is NaN instead.
TEST(Adam8bit, AGradientWhoseSquareOverflowsIsSkippedAsANonFiniteOne) {
  const auto run = [](float spike) {
    manual_seed(3);
    Tensor big = randn({512}).requires_grad_(true);
    Tensor small = randn({100}).requires_grad_(true);
    optim::Adam8bit opt({big, small}, optim::Adam8bitOptions(0.1).min_8bit_size(256));
    std::vector<std::int32_t> flags;
    for (int step = 0; step < 3; ++step) {
      Tensor gb = full({512}, 0.5);
      Tensor gs = full({100}, -0.25);
      if (step == 0) {
        gb.data_ptr<float>()[0] = spike;
        gs.data_ptr<float>()[1] = -spike;
      }
      big.set_grad(gb);
      small.set_grad(gs);
      opt.step();
      flags.push_back(opt.skipped_nonfinite().item<std::int32_t>());
    }
    return std::tuple{big.detach(), small.detach(), opt.state_dict(), flags};
  };
  const auto [big, small, state, flags] = run(1e30f);
  const auto [big_nan, small_nan, state_nan, flags_nan] = run(std::nanf(""));
  EXPECT_EQ(flags, (std::vector<std::int32_t>{1, 0, 0}));
  EXPECT_TRUE(std::isfinite(big.abs().max().item<float>()));
  EXPECT_TRUE(std::isfinite(small.abs().max().item<float>()));
  EXPECT_TRUE(test::bitwise_equal(big, big_nan));
  EXPECT_TRUE(test::bitwise_equal(small, small_nan));
  ASSERT_EQ(state.size(), state_nan.size());
  for (std::size_t i = 0; i < state.size(); ++i) {
    EXPECT_EQ(state[i].first, state_nan[i].first);
    EXPECT_TRUE(test::bitwise_equal(state[i].second, state_nan[i].second)) << state[i].first;
  }
  // The state loads into a fresh optimizer (a NaN or Inf state is refused).
  Tensor fresh = randn({512}).requires_grad_(true);
  Tensor fresh_small = randn({100}).requires_grad_(true);
  optim::Adam8bit again({fresh, fresh_small}, optim::Adam8bitOptions(0.1).min_8bit_size(256));
  EXPECT_NO_THROW(again.load_state_dict(state));
}

// A checkpoint whose moments are float32 (below the default min_8bit_size) loaded where they are
// 8-bit is refused naming the states this optimizer keeps: the shapes alone read the same.
TEST(Adam8bit, LoadingOtherOptionsStatesNamesTheOnesItKeeps) {
  manual_seed(4);
  Tensor p = randn({300}).requires_grad_(true);
  optim::Adam8bit saved_opt({p}, optim::Adam8bitOptions(0.1));
  p.set_grad(full({300}, 0.5));
  saved_opt.step();
  optim::Adam8bit other({p}, optim::Adam8bitOptions(0.1).min_8bit_size(256));
  try {
    other.load_state_dict(saved_opt.state_dict());
    ADD_FAILURE() << "float32 moments were loaded as 8-bit ones";
  } catch (const Error& e) {
    EXPECT_NE(e.message().find("this optimizer keeps '"), std::string::npos) << e.message();
    EXPECT_NE(e.message().find("other options"), std::string::npos) << e.message();
  }
}

}  // namespace
}  // namespace leangrad
