// Misuse of the samplers (autograd/sampling_functions.h) and randperm (kernels/creation.h):
// probabilities outside [0, 1] or NaN, integral parameters, multinomial's rank, sizes and weights,
// normal's negative or NaN standard deviations and mismatched dtypes, randperm's negative n and
// dtypes too small for its indices. Tables of the misuse suite (tests/misuse/misuse_testing.h).
#include <cmath>
#include <limits>
#include <vector>

#include <leangrad/autograd/sampling_functions.h>
#include <leangrad/core/creation.h>
#include <leangrad/kernels/creation.h>
#include "misuse/misuse_testing.h"

namespace leangrad::test {
namespace {

Tensor values(std::vector<float> v) {
  const auto n = static_cast<std::int64_t>(v.size());
  return tensor(v, {n});
}

std::vector<MisuseCase> sampling_cases() {
  MisuseTable t;
  constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
  t.add("bernoulli_p_above_one", Raises::Error, {"bernoulli", "p in [0, 1]", "[3]", "float32"}, [] {
    bernoulli(values({0.5f, 1.5f, 0.0f}));
  });
  t.add("bernoulli_p_nan", Raises::Error, {"bernoulli", "no NaN"}, [&] {
    bernoulli(values({0.5f, kNaN}));
  });
  t.add("bernoulli_integral_p", Raises::DTypeError, {"bernoulli", "floating p", "int64"},
        [] { bernoulli(ones({2}, kInt64)); });
  t.add("bernoulli_scalar_p_negative", Raises::Error, {"bernoulli", "p in [0, 1]", "-0.5"},
        [] { bernoulli(ones({2}), -0.5); });
  t.add("multinomial_3d", Raises::ShapeError, {"multinomial", "1 or 2 dims", "[2, 2, 2]"}, [] {
    multinomial(ones({2, 2, 2}), 1);
  });
  t.add("multinomial_no_categories", Raises::ShapeError, {"multinomial", "no categories"}, [] {
    multinomial(ones({2, 0}), 1);
  });
  t.add("multinomial_zero_samples", Raises::Error, {"multinomial", "num_samples > 0", "got 0"},
        [] { multinomial(ones({3}), 0); });
  t.add("multinomial_too_many_without_replacement", Raises::Error,
        {"multinomial", "cannot draw 4 samples without replacement from 3 categories"},
        [] { multinomial(ones({3}), 4); });
  t.add("multinomial_negative_weight", Raises::Error, {"multinomial", "non-negative", "[3]"}, [] {
    multinomial(values({0.5f, -0.1f, 0.6f}), 1);
  });
  t.add("multinomial_infinite_weight", Raises::Error, {"multinomial", "finite"}, [] {
    multinomial(values({0.5f, std::numeric_limits<float>::infinity()}), 1, true);
  });
  t.add("multinomial_zero_row", Raises::Error, {"multinomial", "a positive weight"}, [] {
    multinomial(zeros({2, 3}), 1, true);
  });
  t.add("multinomial_too_few_positive", Raises::Error,
        {"multinomial", "as many positive weights", "num_samples 2"}, [] {
          multinomial(values({0.0f, 1.0f, 0.0f}), 2);
        });
  t.add("normal_negative_std", Raises::Error, {"normal", "std >= 0", "[2]"}, [] {
    normal(zeros({2}), values({1.0f, -1.0f}));
  });
  t.add("normal_nan_std", Raises::Error, {"normal", "std >= 0"}, [&] {
    normal(zeros({2}), values({kNaN, 1.0f}));
  });
  t.add("normal_dtypes_differ", Raises::DTypeError, {"normal", "one dtype", "float32", "float64"},
        [] { normal(zeros({2}), ones({2}, kFloat64)); });
  t.add("normal_shapes_do_not_broadcast", Raises::ShapeError, {"normal", "[2]", "[3]"},
        [] { normal(zeros({2}), ones({3})); });
  t.add("normal_negative_scalar_std", Raises::Error, {"normal", "std >= 0", "-2"},
        [] { normal(0.0, -2.0, {3}); });
  t.add("normal_integral_mean", Raises::DTypeError, {"normal", "floating mean", "int64"},
        [] { normal(ones({2}, kInt64), 1.0); });
  t.add("randperm_negative", Raises::Error, {"randperm", "n >= 0", "-1"}, [] { randperm(-1); });
  t.add("randperm_uint8_too_small", Raises::DTypeError, {"randperm", "uint8", "257"},
        [] { randperm(257, kUInt8); });
  return t.cases();
}
LG_MISUSE_SUITE(Sampling, sampling_cases());

}  // namespace
}  // namespace leangrad::test
