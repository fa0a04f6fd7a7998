// Misuse of the samplers (autograd/sampling_functions.h) and randperm (kernels/creation.h):
// probabilities outside [0, 1] or NaN, integral parameters, multinomial's rank, sizes and weights,
// normal's negative or NaN standard deviations and mismatched dtypes, randperm's negative n and
// dtypes too small for its indices; the in-place fills' parameters and targets, and
// gumbel_softmax's tau, logits and dim; poisson's negative, infinite or integral rates, binomial's
// fractional counts, probabilities outside [0, 1] and mismatched operands. Tables of the misuse
// suite (tests/misuse/misuse_testing.h).
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
  // The in-place fills (Tensor::uniform_, ...) and gumbel_softmax: each message names the op,
  // the parameter and self's shape and dtype.
  t.add("uniform_into_int64", Raises::DTypeError, {"uniform_", "floating tensor", "int64", "[2]"},
        [] { zeros({2}, kInt64).uniform_(); });
  t.add("uniform_from_above_to", Raises::Error,
        {"uniform_", "from <= to", "from 2", "[2]", "float32"},
        [] { zeros({2}).uniform_(2.0, 1.0); });
  t.add("uniform_beyond_float16", Raises::Error, {"uniform_", "dtype's range", "float16"},
        [] { zeros({2}, kFloat16).uniform_(0.0, 1e6); });
  t.add("uniform_infinite", Raises::Error, {"uniform_", "finite"},
        [] { zeros({2}).uniform_(0.0, std::numeric_limits<double>::infinity()); });
  t.add("normal_in_place_negative_std", Raises::Error, {"normal_", "std >= 0", "-1", "[3]"},
        [] { zeros({3}).normal_(0.0, -1.0); });
  t.add("normal_in_place_nan_mean", Raises::Error, {"normal_", "finite mean"},
        [&] { zeros({3}).normal_(kNaN, 1.0); });
  t.add("exponential_negative_rate", Raises::Error, {"exponential_", "lambd >= 0", "got -1", "[3]"},
        [] { zeros({3}).exponential_(-1.0); });
  t.add("exponential_nan_rate", Raises::Error, {"exponential_", "lambd >= 0", "got nan"},
        [] { zeros({3}).exponential_(std::numeric_limits<double>::quiet_NaN()); });
  t.add("exponential_into_int32", Raises::DTypeError, {"exponential_", "floating", "int32"},
        [] { zeros({3}, kInt32).exponential_(); });
  t.add("geometric_p_one", Raises::Error, {"geometric_", "p in (0, 1)", "got 1"},
        [] { zeros({3}).geometric_(1.0); });
  t.add("geometric_into_bool", Raises::DTypeError, {"geometric_", "bool"},
        [] { zeros({3}, kBool).geometric_(0.5); });
  t.add("cauchy_zero_sigma", Raises::Error, {"cauchy_", "sigma > 0", "got median 0, sigma 0"},
        [] { zeros({3}).cauchy_(0.0, 0.0); });
  t.add("log_normal_zero_std", Raises::Error, {"log_normal_", "std > 0", "float64"},
        [] { zeros({3}, kFloat64).log_normal_(1.0, 0.0); });
  t.add("bernoulli_in_place_p_above_one", Raises::Error, {"bernoulli_", "p in [0, 1]", "1.5"},
        [] { zeros({3}).bernoulli_(1.5); });
  t.add("bernoulli_in_place_p_does_not_broadcast", Raises::ShapeError,
        {"bernoulli_", "[4]", "does not broadcast", "[2, 3]"}, [] {
          zeros({2, 3}).bernoulli_(full({4}, 0.5));
        });
  t.add("bernoulli_in_place_p_too_large", Raises::ShapeError, {"bernoulli_", "[2, 3]", "[3]"}, [] {
    zeros({3}).bernoulli_(full({2, 3}, 0.5));
  });
  t.add("bernoulli_in_place_integral_p", Raises::DTypeError, {"bernoulli_", "floating p", "int64"},
        [] { zeros({3}).bernoulli_(ones({3}, kInt64)); });
  t.add("random_empty_range", Raises::Error, {"random_", "from < to", "from 5, to 5"},
        [] { zeros({3}).random_(5, 5); });
  t.add("random_beyond_uint8", Raises::Error, {"random_", "[0, 299]", "uint8", "[0, 255]"},
        [] { zeros({3}, kUInt8).random_(0, 300); });
  t.add("random_negative_into_uint8", Raises::Error, {"random_", "[-1, 4]", "[0, 255]"},
        [] { zeros({3}, kUInt8).random_(-1, 5); });
  t.add("random_beyond_float32", Raises::Error, {"random_", "float32", "[-16777216, 16777216]"},
        [] { zeros({3}).random_(0, (std::int64_t{1} << 24) + 2); });
  t.add("random_range_too_wide", Raises::Error, {"random_", "more than 2^53 values", "int64"},
        [] { zeros({3}, kInt64).random_(-(std::int64_t{1} << 60), std::int64_t{1} << 60); });
  t.add("random_leaf_requiring_grad", Raises::Error,
        {"random_", "in-place operation on a leaf tensor that requires grad"},
        [] { zeros({3}).requires_grad_().random_(4); });
  t.add("gumbel_softmax_zero_tau", Raises::Error, {"gumbel_softmax", "tau > 0", "got 0", "[2, 3]"},
        [] {
          gumbel_softmax(zeros({2, 3}), 0.0);
        });
  t.add("gumbel_softmax_integral_logits", Raises::DTypeError,
        {"gumbel_softmax", "floating logits", "int64"}, [] {
          gumbel_softmax(zeros({2, 3}, kInt64));
        });
  t.add("gumbel_softmax_dim_out_of_range", Raises::ShapeError,
        {"gumbel_softmax", "dimension 2", "2-d"}, [] {
          gumbel_softmax(zeros({2, 3}), 1.0, false, 2);
        });
  t.add("randperm_negative", Raises::Error, {"randperm", "n >= 0", "-1"}, [] { randperm(-1); });
  t.add("randperm_uint8_too_small", Raises::DTypeError, {"randperm", "uint8", "257"},
        [] { randperm(257, kUInt8); });
  // ---- poisson and binomial ----
  constexpr float kInf = std::numeric_limits<float>::infinity();
  t.add("poisson_negative_rate", Raises::Error, {"poisson", "rate >= 0 and finite", "[2]"}, [] {
    poisson(values({1.0f, -0.5f}));
  });
  t.add("poisson_infinite_rate", Raises::Error, {"poisson", "finite"},
        [&] { poisson(values({kInf})); });
  t.add("poisson_integral", Raises::DTypeError, {"poisson", "floating rates", "int64"},
        [] { poisson(zeros({2}, kInt64)); });
  t.add("binomial_fractional_count", Raises::Error,
        {"binomial", "non-negative integer", "[1]", "float32"},
        [] { binomial(values({2.5f}), values({0.5f})); });
  t.add("binomial_prob_above_one", Raises::Error, {"binomial", "prob in [0, 1]"},
        [] { binomial(values({2.0f}), values({1.5f})); });
  t.add("binomial_dtypes", Raises::DTypeError, {"binomial", "float32", "float64"},
        [] { binomial(values({2.0f}), zeros({1}, kFloat64)); });
  t.add("binomial_shapes", Raises::ShapeError, {"binomial", "[2]", "[3]"}, [] {
    binomial(values({2.0f, 3.0f}), values({0.1f, 0.2f, 0.3f}));
  });
  return t.cases();
}
LG_MISUSE_SUITE(Sampling, sampling_cases());

}  // namespace
}  // namespace leangrad::test
