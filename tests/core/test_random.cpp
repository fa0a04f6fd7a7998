// Randomness: Philox against the published known-answer vectors (Random123), the statistics of
// rand/randn, reproducibility under manual_seed, generator state replay, and a thread's own
// default generators under DefaultGeneratorsGuard.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <thread>
#include <utility>
#include <vector>

#include <leangrad/autograd/functions.h>
#include <leangrad/core/generator.h>
#include <leangrad/core/half.h>
#include <leangrad/core/philox.h>
#include <leangrad/kernels/cpu/double_polynomials.h>
#include <leangrad/kernels/creation.h>
#include <leangrad/kernels/ops.h>
#include <leangrad/kernels/random_math.h>
#include "testing/avx512_copies.h"
#include "testing/tensor_testing.h"
#include "testing/thread_count.h"

namespace leangrad {
namespace {

TEST(Random, PhiloxMatchesRandom123KnownAnswers) {
  // Known-answer vectors of Philox4x32-10 from the Random123 distribution (kat_vectors).
  const philox::Block zeros_out = philox::philox4x32_10(philox::Block{{0, 0, 0, 0}}, 0, 0);
  EXPECT_EQ(zeros_out.x[0], 0x6627e8d5u);
  EXPECT_EQ(zeros_out.x[1], 0xe169c58du);
  EXPECT_EQ(zeros_out.x[2], 0xbc57ac4cu);
  EXPECT_EQ(zeros_out.x[3], 0x9b00dbd8u);
  const philox::Block ones_out =
      philox::philox4x32_10(philox::Block{{0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu}},
                            0xffffffffu, 0xffffffffu);
  EXPECT_EQ(ones_out.x[0], 0x408f276du);
  EXPECT_EQ(ones_out.x[1], 0x41c83b0eu);
  EXPECT_EQ(ones_out.x[2], 0xa20bc7c6u);
  EXPECT_EQ(ones_out.x[3], 0x6d5451fdu);
  const philox::Block pi_out =
      philox::philox4x32_10(philox::Block{{0x243f6a88u, 0x85a308d3u, 0x13198a2eu, 0x03707344u}},
                            0xa4093822u, 0x299f31d0u);
  EXPECT_EQ(pi_out.x[0], 0xd16cfe09u);
  EXPECT_EQ(pi_out.x[1], 0x94fdccebu);
  EXPECT_EQ(pi_out.x[2], 0x5001e420u);
  EXPECT_EQ(pi_out.x[3], 0x24126ea1u);
}

struct Moments {
  double mean = 0, variance = 0, min = INFINITY, max = -INFINITY;
};
Moments moments(const Tensor& t) {
  const auto v = test::to_vector(t);
  Moments m;
  for (double x : v) {
    m.mean += x;
    m.min = std::min(m.min, x);
    m.max = std::max(m.max, x);
  }
  m.mean /= static_cast<double>(v.size());
  for (double x : v)
    m.variance += (x - m.mean) * (x - m.mean);
  m.variance /= static_cast<double>(v.size());
  return m;
}

TEST(Random, UniformStatistics) {
  manual_seed(1);
  for (DType dtype : {kFloat32, kFloat64, kFloat16, kBFloat16}) {
    SCOPED_TRACE(dtype_name(dtype));
    const Moments m = moments(rand({1 << 20}, dtype));
    // Standard error of the mean: sqrt(1/12 / 2^20) ~ 2.8e-4.
    EXPECT_NEAR(m.mean, 0.5, 2e-3);
    EXPECT_NEAR(m.variance, 1.0 / 12.0, 2e-3);
    EXPECT_GE(m.min, 0.0);
    EXPECT_LT(m.max, 1.0);
  }
}

// A 16-bit uniform takes as many bits of its word as the dtype holds (11 for float16, 8 for
// bfloat16, as PyTorch's): every value is k * 2^-digits, so none rounds up to 1 (with 24 bits,
// about one float16 in 2^12 and one bfloat16 in 2^9 did, and -log(1 - rand) was inf). In 2^22
// draws the largest value, 1 - 2^-digits, comes up (about 2^11 and 2^14 times).
TEST(Random, SixteenBitUniformsAreBelowOneOnTheirOwnGrid) {
  manual_seed(3);
  for (const auto& [dtype, digits] : {std::pair{kFloat16, 11}, std::pair{kBFloat16, 8}}) {
    SCOPED_TRACE(dtype_name(dtype));
    const double scale = std::ldexp(1.0, digits);
    double largest = 0;
    std::int64_t off_grid = 0;
    for (const double v : test::to_vector(rand({1 << 22}, dtype))) {
      largest = std::max(largest, v);
      if (v * scale != std::floor(v * scale)) ++off_grid;
    }
    EXPECT_EQ(off_grid, 0);
    EXPECT_EQ(largest, 1.0 - 1.0 / scale);
  }
}

TEST(Random, NormalStatistics) {
  manual_seed(2);
  for (DType dtype : {kFloat32, kFloat64}) {
    SCOPED_TRACE(dtype_name(dtype));
    Tensor x = randn({1 << 20}, dtype);
    const Moments m = moments(x);
    EXPECT_NEAR(m.mean, 0.0, 5e-3);
    EXPECT_NEAR(m.variance, 1.0, 5e-3);
    const double within_one_sigma = (x.abs().lt(1.0)).to(kFloat64).mean().item<double>();
    EXPECT_NEAR(within_one_sigma, 0.682689, 3e-3);
  }
}

TEST(Random, ManualSeedReproducesAndCallsAdvance) {
  manual_seed(123);
  const auto first = test::to_vector(randn({1000}));
  const auto second = test::to_vector(randn({1000}));
  manual_seed(123);
  EXPECT_EQ(test::to_vector(randn({1000})), first);
  EXPECT_EQ(test::to_vector(randn({1000})), second);
  EXPECT_NE(first, second);
}

TEST(Random, GeneratorStateReplaysExactly) {
  Generator& gen = default_generator(Device::cpu());
  manual_seed(7);
  rand({33});
  const Generator::State saved = gen.state();
  const auto a = test::to_vector(rand({257}, kFloat64));
  gen.set_state(saved);
  EXPECT_EQ(test::to_vector(rand({257}, kFloat64)), a);
}

TEST(Random, ElementsDoNotDependOnLayoutOrThreads) {
  // Element i in row-major order is the same whether the target is contiguous or a transposed
  // view, and whatever the number of threads. 512 x 512 values: enough for the kernels to split
  // the work between threads (their grains are 8192 values).
  std::vector<double> uniform_one_thread, normal_one_thread;
  for (int threads : {1, 4}) {
    const ThreadCount guard(threads);
    Generator gen(99);
    Tensor contiguous = empty({512, 512});
    ops::uniform_(contiguous, -1, 1, gen);
    Generator gen2(99);
    Tensor transposed = empty({512, 512}).transpose(0, 1);
    ops::uniform_(transposed, -1, 1, gen2);
    EXPECT_EQ(test::to_vector(contiguous), test::to_vector(transposed)) << threads << " threads";
    Generator gen3(5);
    Tensor normal = empty({512, 512});
    ops::normal_(normal, 0, 1, gen3);
    if (threads == 1) {
      uniform_one_thread = test::to_vector(contiguous);
      normal_one_thread = test::to_vector(normal);
    } else {
      EXPECT_EQ(test::to_vector(contiguous), uniform_one_thread);
      EXPECT_EQ(test::to_vector(normal), normal_one_thread);
    }
  }
  Generator gen(99);
  EXPECT_THROW(ops::uniform_(empty({2}, kInt32), 0, 1, gen), DTypeError);
  EXPECT_THROW(ops::normal_(empty({2}), 0, -1, gen), Error);
}

// A 32-bit or 16-bit float dtype's value of the definition's double, as the kernels convert it
// (static_cast: to float, then to the 16-bit type).
double rounded_to(DType dtype, double value) {
  const auto f = static_cast<float>(value);
  if (dtype == kFloat16) return static_cast<float>(Half(f));
  if (dtype == kBFloat16) return static_cast<float>(BFloat16(f));
  return f;
}

// The spacing of dtype's values at |v| (a 16-bit dtype's smallest subnormal's below its normal
// range): an upper bound on the distance between the roundings of two values on either side of a
// rounding boundary of that binade.
double spacing(DType dtype, double v) {
  const int mantissa_bits = dtype == kFloat16 ? 10 : dtype == kBFloat16 ? 7 : 23;
  const int min_exponent = dtype == kFloat16 ? -14 : -126;
  int exponent = 0;
  std::frexp(v, &exponent);  // |v| in [2^(exponent - 1), 2^exponent)
  return std::ldexp(1.0, std::max(exponent - 1, min_exponent) - mantissa_bits);
}

// How far the CPU's normal_ may be from normal_at: the CPU takes the Box-Muller pair's log, sin and
// cos from its own polynomials (kernels/cpu/double_polynomials.h, within kLogDoubleMaxUlps and
// kSinCosDoubleMaxUlps), the definition from the C library (glibc's: within 1 ulp). With
// u = 2^-52 (an ulp's largest relative size), z = sqrt(-2 log u1) cos|sin(angle) differs by at
// most e |z|: log's two errors halved by the square root, both square roots' roundings, sin's or
// cos's two errors and both products' roundings. Then mean + std z rounds on each side, and
// std |z| <= |want - mean| + u |want|. A 32-bit or 16-bit dtype rounds each side once more (to
// float and then to the dtype): one spacing of the dtype at the larger of the two, both roundings
// together (a float's half ulp and a 16-bit type's half spacing, per side).
double normal_bound(DType dtype, double got, double want, double mean) {
  constexpr double u = 0x1p-52;
  const double e = ((kernels::cpu::kLogDoubleMaxUlps + 1) / 2 + 1 +
                    (kernels::cpu::kSinCosDoubleMaxUlps + 1) + 1) *
                   u;
  const double in_double = e * (std::fabs(want - mean) + u * std::fabs(want)) + u * std::fabs(want);
  if (dtype == kFloat64) return in_double;
  const double larger = std::max(std::fabs(got), std::fabs(want));
  return in_double + spacing(dtype, larger) * (dtype == kFloat32 ? 1.0 : 1.0 + 0x1p-13);
}

// The fills are random_math.h's definition, element by element: the CPU kernels compute a batch of
// Philox blocks at a time in SIMD lanes (Note [Random fills in lanes] in kernels/cpu/random.cpp),
// and each element must still be uniform_at's, bit for bit, and normal_at's within normal_bound.
// The bound is what the math allows; in fact the two differ only where the definition's double
// lies within a few ulps of a rounding boundary of the dtype (about 1 in 10^8 elements of a 32-bit
// or 16-bit dtype), and the test allows 4 such elements in all. Sizes that end inside a block, a
// batch (16 blocks) and a task, and counters whose 64 bits carry into the upper word (the second
// of Philox's counter words) within the fill.
TEST(Random, FillsAreTheirDefinitionAtEveryElement) {
  const ThreadCount guard(2);
  constexpr std::uint64_t kSeed = 0x0123456789abcdefull;
  constexpr double kMean = 0.5, kStd = 2.0;
  std::int64_t normal_elements_off_definition = 0;  // of 32-bit and 16-bit dtypes
  for (const std::uint64_t offset : {std::uint64_t{0}, (std::uint64_t{1} << 32) - 37}) {
    for (const std::int64_t numel : {1, 3, 5, 63, 64, 65, 127, 129, 100003}) {
      for (DType dtype : {kFloat32, kFloat64, kFloat16, kBFloat16}) {
        SCOPED_TRACE(testing::Message()
                     << dtype_name(dtype) << ", " << numel << " elements, offset " << offset);
        Generator gen(kSeed);
        gen.set_state({kSeed, offset});
        Tensor uniform = empty({numel}, TensorOptions(dtype));
        ops::uniform_(uniform, -2.0, 3.0, gen);
        gen.set_state({kSeed, offset});
        Tensor normal = empty({numel}, TensorOptions(dtype));
        ops::normal_(normal, kMean, kStd, gen);
        const auto uniform_values = test::to_vector(uniform);
        const auto normal_values = test::to_vector(normal);
        std::vector<double> want_uniform;
        std::int64_t normal_failures = 0;
        for (std::int64_t i = 0; i < numel; ++i) {
          double want_normal = 0;
          if (dtype == kFloat64) {
            want_uniform.push_back(random_math::uniform_at<double>(i, kSeed, offset, -2.0, 5.0));
            want_normal = random_math::normal_at<double>(i, kSeed, offset, kMean, kStd);
          } else {
            const double u = dtype == kFloat16
                                 ? random_math::uniform_at<Half>(i, kSeed, offset, -2.0, 5.0)
                             : dtype == kBFloat16
                                 ? random_math::uniform_at<BFloat16>(i, kSeed, offset, -2.0, 5.0)
                                 : random_math::uniform_at<float>(i, kSeed, offset, -2.0, 5.0);
            want_uniform.push_back(rounded_to(dtype, u));
            want_normal =
                rounded_to(dtype, random_math::normal_at<float>(i, kSeed, offset, kMean, kStd));
            if (normal_values[i] != want_normal) ++normal_elements_off_definition;
          }
          const double got = normal_values[i];
          if (!(std::fabs(got - want_normal) <= normal_bound(dtype, got, want_normal, kMean)) &&
              normal_failures++ < 3) {
            ADD_FAILURE() << "normal_ element " << i << ": " << got << ", the definition's "
                          << want_normal;
          }
        }
        EXPECT_EQ(uniform_values, want_uniform);
        EXPECT_EQ(normal_failures, 0);
      }
    }
  }
  EXPECT_LE(normal_elements_off_definition, 4);
}

// normal_'s Box-Muller runs in an AVX-512 copy where the CPU has it (Note [AVX-512 at run time] in
// kernels/cpu/avx512.h): both copies give the same bits (on a CPU without AVX-512 both runs take
// the one copy).
TEST(Random, NormalsAreTheSameInBothCopies) {
  std::vector<std::vector<double>> fills;
  for (const bool wide : {false, true}) {
    const Avx512Copies copies(wide);
    for (DType dtype : {kFloat32, kFloat64}) {
      Generator gen(77);
      Tensor t = empty({4099}, TensorOptions(dtype));
      ops::normal_(t, -1.0, 3.0, gen);
      fills.push_back(test::to_vector(t));
    }
  }
  EXPECT_EQ(fills[0], fills[2]) << "float32";
  EXPECT_EQ(fills[1], fills[3]) << "float64";
}

// Under the guard the thread draws from generators seeded with the guard's seed; the process's
// generators are neither used nor moved, and other threads keep drawing from them.
TEST(Random, DefaultGeneratorsGuardGivesTheThreadGeneratorsOfItsOwn) {
  manual_seed(8);
  const Generator::State process_before = default_generator(Device::cpu()).state();
  std::vector<double> guarded, nested, after_nested, reseeded, other_thread;
  {
    const DefaultGeneratorsGuard guard(21);
    // Another thread, meanwhile, draws from the process's generators.
    std::thread([&] { other_thread = test::to_vector(rand({5}, kFloat64)); }).join();
    guarded = test::to_vector(randn({6}, kFloat64));
    {
      const DefaultGeneratorsGuard inner(22);
      nested = test::to_vector(randn({6}, kFloat64));
    }
    after_nested = test::to_vector(randn({6}, kFloat64));  // the outer guard's stream goes on
    const RngSnapshot snapshot = snapshot_rng();
    const auto replayed = test::to_vector(randn({6}, kFloat64));
    restore_rng(snapshot);
    EXPECT_EQ(test::to_vector(randn({6}, kFloat64)), replayed);
    manual_seed(21);  // seeds the guard's generators only
    reseeded = test::to_vector(randn({6}, kFloat64));
  }
  auto draws = [](std::uint64_t seed, int skip) {
    Generator gen(seed);
    Tensor t = empty({6}, kFloat64);
    for (int i = 0; i <= skip; ++i)
      ops::normal_(t, 0, 1, gen);
    return test::to_vector(t);
  };
  EXPECT_EQ(guarded, draws(21, 0));
  EXPECT_EQ(nested, draws(22, 0));
  EXPECT_EQ(after_nested, draws(21, 1));
  EXPECT_EQ(reseeded, guarded);
  // The process's generator moved only by the other thread's draw, and was never reseeded.
  Generator process(8);
  Tensor expected = empty({5}, kFloat64);
  ops::uniform_(expected, 0, 1, process);
  EXPECT_EQ(other_thread, test::to_vector(expected));
  const Generator::State process_after = default_generator(Device::cpu()).state();
  EXPECT_EQ(process_after.seed, process_before.seed);
  EXPECT_EQ(process_after.offset, process.state().offset);
}

}  // namespace
}  // namespace leangrad
