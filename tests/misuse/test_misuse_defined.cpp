// The other half of the misuse suite: inputs that look wrong but have a defined result in
// PyTorch, which leangrad must give too. Empty tensors (the sum of nothing is 0, the mean NaN),
// NaN and infinities through reductions, elementwise ops, softmax, pooling and losses, gradients
// at kinks and singular points. Each row runs the op on the inputs of its case in
// tests/data/misuse.json (written by tests/data/make_misuse.py with PyTorch, which also checks
// that PyTorch raises where the misuse tables expect an error) and compares every output with
// PyTorch's: dtype, shape and values, NaN matching NaN. Below the table, the defined results
// that are leangrad's own (a failed load_state_dict changes nothing).
#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include <leangrad/autograd/functions.h>
#include <leangrad/autograd/nn_functions.h>
#include <leangrad/core/creation.h>
#include <leangrad/data/data.h>
#include <leangrad/kernels/creation.h>
#include <leangrad/nn/nn.h>
#include <leangrad/optim/optim.h>
#include "testing/reference_data.h"
#include "testing/tensor_testing.h"

namespace leangrad::test {

// A case of misuse.json: `run` computes the outputs from the case's inputs, under the names of
// the tensors PyTorch wrote ("y", "dx", ...).
struct DefinedCase {
  std::string name;
  std::function<NamedTensors(const ReferenceCase&)> run;
};

void PrintTo(const DefinedCase& defined, std::ostream* out) {
  *out << defined.name;
}

namespace {

const ReferenceCase& reference(const std::string& name) {
  static const std::vector<ReferenceCase> cases = load_reference("misuse.json");
  for (const ReferenceCase& c : cases)
    if (c.name == name) return c;
  LG_THROW(Error, "misuse.json has no case '", name, "' (run tests/data/make_misuse.py)");
}

// Outputs that depend on no input: y = f().
DefinedCase value(std::string name, std::function<Tensor()> f) {
  return {std::move(name), [f](const ReferenceCase&) { return NamedTensors{{"y", f()}}; }};
}
// y = f(x).
DefinedCase unary(std::string name, std::function<Tensor(const Tensor&)> f) {
  return {std::move(name), [f](const ReferenceCase& c) {
            return NamedTensors{{"y", f(c.at("x"))}};
          }};
}
// y = f(x, t).
DefinedCase binary(std::string name, std::function<Tensor(const Tensor&, const Tensor&)> f) {
  return {std::move(name), [f](const ReferenceCase& c) {
            return NamedTensors{{"y", f(c.at("x"), c.at("t"))}};
          }};
}
// y = f(x, t) with dx and dt: the gradients of y.sum().
DefinedCase binary_gradient(std::string name,
                            std::function<Tensor(const Tensor&, const Tensor&)> f) {
  return {std::move(name), [f](const ReferenceCase& c) {
            Tensor x = c.at("x").clone().requires_grad_();
            Tensor t = c.at("t").clone().requires_grad_();
            const Tensor y = f(x, t);
            y.sum().backward();
            return NamedTensors{{"y", y}, {"dx", x.grad()}, {"dt", t.grad()}};
          }};
}
// y = f(x) and dx, the gradient of y.sum().
DefinedCase summed_gradient(std::string name, std::function<Tensor(const Tensor&)> f) {
  return {std::move(name), [f](const ReferenceCase& c) {
            Tensor x = c.at("x").clone().requires_grad_();
            const Tensor y = f(x);
            y.sum().backward();
            return NamedTensors{{"y", y}, {"dx", x.grad()}};
          }};
}
// (values, indices) = f(x), LibTorch's max(dim) or min(dim), and dx, the gradient of
// values.sum().
DefinedCase dim_extremum_gradient(std::string name,
                                  std::function<std::tuple<Tensor, Tensor>(const Tensor&)> f) {
  return {std::move(name), [f](const ReferenceCase& c) {
            Tensor x = c.at("x").clone().requires_grad_();
            const auto [values, indices] = f(x);
            values.sum().backward();
            return NamedTensors{{"values", values}, {"indices", indices}, {"dx", x.grad()}};
          }};
}
// y = f(x) and dx = d y / d x.
DefinedCase gradient(std::string name, std::function<Tensor(const Tensor&)> f) {
  return {std::move(name), [f](const ReferenceCase& c) {
            Tensor x = c.at("x").clone().requires_grad_();
            const Tensor y = f(x);
            y.backward();
            return NamedTensors{{"y", y}, {"dx", x.grad()}};
          }};
}

std::vector<DefinedCase> defined_cases() {
  return {
      // Reductions over nothing, and over NaN and infinities.
      value("sum_of_empty", [] { return zeros({0}).sum(); }),
      value("sum_over_empty_dim",
            [] {
              return zeros({0, 3}).sum({0});
            }),
      value("sum_of_empty_int64", [] { return zeros({0}, kInt64).sum(); }),
      value("mean_of_empty", [] { return zeros({0}).mean(); }),
      value("mean_over_empty_dim",
            [] {
              return zeros({0, 3}).mean({0});
            }),
      value("amax_of_empty_rows",
            [] {
              return zeros({0, 3}).amax({1});
            }),
      value("argmax_of_empty_rows",
            [] {
              return zeros({0, 3}).argmax(1);
            }),
      unary("max_propagates_nan", [](const Tensor& x) { return x.max(); }),
      unary("argmax_picks_nan", [](const Tensor& x) { return x.argmax(); }),
      unary("amax_rows_with_nan", [](const Tensor& x) { return x.amax({1}); }),
      unary("sum_of_opposite_infinities", [](const Tensor& x) { return x.sum(); }),
      unary("mean_with_infinity", [](const Tensor& x) { return x.mean(); }),
      value("sum_of_0d", [] { return full({}, 3.0).sum(); }),
      // Elementwise ops at the edges of their domains.
      unary("relu_of_non_finite", [](const Tensor& x) { return x.relu(); }),
      unary("sigmoid_of_non_finite", [](const Tensor& x) { return x.sigmoid(); }),
      unary("tanh_of_non_finite", [](const Tensor& x) { return x.tanh(); }),
      unary("exp_of_non_finite", [](const Tensor& x) { return x.exp(); }),
      unary("log_at_domain_edges", [](const Tensor& x) { return x.log(); }),
      unary("sqrt_at_domain_edges", [](const Tensor& x) { return x.sqrt(); }),
      unary("div_by_zero", [](const Tensor& x) { return x / 0.0; }),
      binary("int64_div_by_zero", [](const Tensor& x, const Tensor& t) { return x / t; }),
      binary("pow_negative_and_fractional",
             [](const Tensor& x, const Tensor& t) { return pow(x, t); }),
      binary("maximum_propagates_nan",
             [](const Tensor& x, const Tensor& t) { return maximum(x, t); }),
      binary("eq_of_nan", [](const Tensor& x, const Tensor& t) { return eq(x, t); }),
      unary("where_keeps_nan",
            [](const Tensor& x) {
              return where(tensor<bool>({true, false}), x, zeros({2}));
            }),
      // Empty operands of the layer ops.
      value("matmul_inner_dim_zero",
            [] {
              return matmul(zeros({2, 0}), zeros({0, 3}));
            }),
      value("matmul_empty_batch",
            [] {
              return matmul(zeros({0, 2, 3}), zeros({3, 4}));
            }),
      value("cat_skips_legacy_empty",
            [] {
              return cat({zeros({0}), ones({2, 3})});
            }),
      value("softmax_over_empty_dim",
            [] {
              return softmax(zeros({2, 0}), 1);
            }),
      value("conv2d_empty_batch",
            [] {
              return conv2d(zeros({0, 1, 3, 3}), ones({2, 1, 2, 2}));
            }),
      value("group_norm_empty_batch",
            [] {
              return group_norm(zeros({0, 4, 2}), 2);
            }),
      value("group_norm_of_constant",
            [] {
              return group_norm(ones({1, 2, 3}), 1);
            }),
      value("arange_empty", [] { return arange(0, 0); }),
      value("arange_fractional_step", [] { return arange(0, 1, 0.3); }),
      value("softmax_of_0d", [] { return softmax(full({}, 2.0), 0); }),
      // Adaptive pooling to an output size of 0 (its zero gradient: test_adaptive_max_pool.cpp).
      value("adaptive_avg_pool2d_zero_output",
            [] {
              return adaptive_avg_pool2d(ones({2, 3, 5, 4}), {0, 2});
            }),
      value("adaptive_avg_pool2d_zero_output_unbatched",
            [] {
              return adaptive_avg_pool2d(ones({3, 5, 4}), {0, 0});
            }),
      value("adaptive_avg_pool2d_zero_output_empty_batch",
            [] {
              return adaptive_avg_pool2d(ones({0, 3, 5, 4}), {2, 0});
            }),
      value("adaptive_avg_pool2d_no_channels",
            [] {
              return adaptive_avg_pool2d(ones({2, 0, 5, 4}), {2, 2});
            }),
      value("adaptive_avg_pool2d_global_of_empty_plane",
            [] {
              return adaptive_avg_pool2d(ones({1, 3, 0, 5}), {1, 1});
            }),
      value("adaptive_max_pool2d_zero_output",
            [] {
              return adaptive_max_pool2d(ones({2, 3, 5, 4}), {2, 0});
            }),
      value("adaptive_max_pool2d_zero_output_indices",
            [] {
              return std::get<1>(adaptive_max_pool2d_with_indices(ones({2, 3, 5, 4}), {0, 0}));
            }),
      value("adaptive_max_pool2d_zero_output_empty_batch",
            [] {
              return adaptive_max_pool2d(ones({0, 3, 5, 4}), {0, 0});
            }),
      value("adaptive_max_pool1d_zero_output",
            [] {
              return adaptive_max_pool1d(ones({3, 5}), 0);
            }),
      value("fill_of_expanded",
            [] {
              const Tensor x = zeros({1, 2});
              x.expand({3, 2}).fill_(1.0);
              return x;
            }),
      // Softmax, pooling and losses over NaN and infinities.
      unary("softmax_with_minus_infinity", [](const Tensor& x) { return softmax(x, 0); }),
      unary("log_softmax_with_minus_infinity", [](const Tensor& x) { return log_softmax(x, 0); }),
      unary("softmax_all_minus_infinity", [](const Tensor& x) { return softmax(x, 0); }),
      unary("softmax_with_infinity", [](const Tensor& x) { return softmax(x, 0); }),
      unary("log_softmax_with_infinity", [](const Tensor& x) { return log_softmax(x, 0); }),
      unary("max_pool2d_propagates_nan",
            [](const Tensor& x) {
              return max_pool2d(x, {2, 2});
            }),
      unary("avg_pool2d_with_infinity",
            [](const Tensor& x) {
              return avg_pool2d(x, {2, 2});
            }),
      binary("cross_entropy_all_ignored_mean",
             [](const Tensor& x, const Tensor& t) { return cross_entropy(x, t); }),
      binary("cross_entropy_all_ignored_sum",
             [](const Tensor& x, const Tensor& t) { return cross_entropy(x, t, Reduction::Sum); }),
      binary("cross_entropy_empty_batch_mean",
             [](const Tensor& x, const Tensor& t) { return cross_entropy(x, t); }),
      binary("cross_entropy_empty_batch_sum",
             [](const Tensor& x, const Tensor& t) { return cross_entropy(x, t, Reduction::Sum); }),
      binary("cross_entropy_empty_spatial_none",
             [](const Tensor& x, const Tensor& t) { return cross_entropy(x, t, Reduction::None); }),
      binary("cross_entropy_empty_spatial_mean",
             [](const Tensor& x, const Tensor& t) { return cross_entropy(x, t); }),
      binary("cross_entropy_infinite_logit",
             [](const Tensor& x, const Tensor& t) { return cross_entropy(x, t, Reduction::None); }),
      value("mse_loss_of_empty", [] { return mse_loss(zeros({0}), zeros({0})); }),
      binary("l1_loss_with_nan", [](const Tensor& x, const Tensor& t) { return l1_loss(x, t); }),
      // Gradients at kinks and singular points.
      gradient("sqrt_gradient_at_zero", [](const Tensor& x) { return x.sqrt().sum(); }),
      gradient("abs_gradient_at_zero", [](const Tensor& x) { return x.abs().sum(); }),
      gradient("relu_gradient_at_zero", [](const Tensor& x) { return x.relu().sum(); }),
      gradient("max_gradient_split_among_ties", [](const Tensor& x) { return x.max(); }),
      gradient("log_gradient_at_zero", [](const Tensor& x) { return x.log().sum(); }),
      gradient("mean_gradient_of_empty", [](const Tensor& x) { return x.mean(); }),
      // Added by the review of the nn ops against PyTorch (2026-11-26).
      value("var_of_empty", [] { return zeros({0}).var(); }),
      value("var_over_empty_dim",
            [] {
              return zeros({0, 3}).var(0);
            }),
      value("std_of_empty", [] { return zeros({0}).std(); }),
      value("var_biased_of_empty", [] { return zeros({0}).var(false); }),
      gradient("max_gradient_goes_to_nan", [](const Tensor& x) { return x.max(); }),
      gradient("max_gradient_split_among_nans", [](const Tensor& x) { return x.max(); }),
      gradient("min_gradient_goes_to_nan", [](const Tensor& x) { return x.min(); }),
      gradient("relu_gradient_of_nan", [](const Tensor& x) { return x.relu().sum(); }),
      gradient("clamp_gradient_of_nan", [](const Tensor& x) { return x.clamp(-0.5, 0.5).sum(); }),
      gradient("clamp_min_gradient_of_nan", [](const Tensor& x) { return x.clamp_min(0.0).sum(); }),
      gradient("max_pool2d_gradient_to_last_nan",
               [](const Tensor& x) {
                 return max_pool2d(x, {2, 2}).sum();
               }),
      gradient("max_pool2d_gradient_to_last_nan_padded",
               [](const Tensor& x) {
                 return max_pool2d(x, {3, 3}, {1, 1}, {1, 1}).sum();
               }),
      binary_gradient("pow_gradients_at_zero",
                      [](const Tensor& x, const Tensor& t) { return pow(x, t); }),
      binary("promote_float16_times_0d_float32",
             [](const Tensor& x, const Tensor& t) { return x * t; }),
      binary("promote_float32_plus_0d_float64",
             [](const Tensor& x, const Tensor& t) { return x + t; }),
      binary("promote_bfloat16_times_0d_float16",
             [](const Tensor& x, const Tensor& t) { return x * t; }),
      binary("promote_int32_plus_0d_int64", [](const Tensor& x, const Tensor& t) { return x + t; }),
      binary("promote_uint8_plus_0d_int32", [](const Tensor& x, const Tensor& t) { return x + t; }),
      binary("promote_int64_plus_0d_float64",
             [](const Tensor& x, const Tensor& t) { return x + t; }),
      binary("promote_bool_plus_0d_int64", [](const Tensor& x, const Tensor& t) { return x + t; }),
      binary("promote_int32_div_0d_int64", [](const Tensor& x, const Tensor& t) { return x / t; }),
      binary("promote_0d_float64_plus_0d_int64",
             [](const Tensor& x, const Tensor& t) { return x + t; }),
      binary("promote_float16_maximum_0d_float64",
             [](const Tensor& x, const Tensor& t) { return maximum(x, t); }),
      binary("promote_float16_ge_0d_float64",
             [](const Tensor& x, const Tensor& t) { return ge(x, t); }),
      binary("promote_where_float16_0d_float32",
             [](const Tensor& x, const Tensor& t) {
               return where(tensor<bool>({true, false}), x, t);
             }),
      // Added by the numerics pass (2026-11-29): the three gradient rules of max and min, with
      // NaN and ties (leangrad/autograd/functions.h), and maximum / minimum's.
      binary_gradient("maximum_gradient_with_nan_and_ties",
                      [](const Tensor& x, const Tensor& t) { return maximum(x, t); }),
      binary_gradient("minimum_gradient_with_nan_and_ties",
                      [](const Tensor& x, const Tensor& t) { return minimum(x, t); }),
      binary_gradient("maximum_gradient_broadcast_with_nan",
                      [](const Tensor& x, const Tensor& t) { return maximum(x, t); }),
      summed_gradient("amax_gradient_nan_rows_and_ties",
                      [](const Tensor& x) { return x.amax({1}); }),
      summed_gradient("amax_gradient_over_dim0_keepdim_with_nan",
                      [](const Tensor& x) { return x.amax({0}, /*keepdim=*/true); }),
      summed_gradient("amax_gradient_over_all_with_nan", [](const Tensor& x) { return x.amax(); }),
      summed_gradient("amax_gradient_over_all_ties", [](const Tensor& x) { return x.amax(); }),
      summed_gradient("amax_gradient_of_infinities", [](const Tensor& x) { return x.amax({1}); }),
      summed_gradient("amin_gradient_nan_rows_and_ties",
                      [](const Tensor& x) { return x.amin({1}); }),
      dim_extremum_gradient("max_dim_gradient_to_first_nan_or_tie",
                            [](const Tensor& x) { return x.max(1); }),
      dim_extremum_gradient("max_dim0_keepdim_gradient_to_first_nan_or_tie",
                            [](const Tensor& x) { return x.max(0, /*keepdim=*/true); }),
      dim_extremum_gradient("min_dim_gradient_to_first_nan_or_tie",
                            [](const Tensor& x) { return x.min(1); }),
      {"backward_twice_without_saved_tensors",
       [](const ReferenceCase&) {
         const Tensor x = zeros({2}).requires_grad_();
         const Tensor y = (x + 1.0).sum();
         y.backward();
         y.backward();  // nothing was saved: allowed, and the gradients accumulate
         return NamedTensors{{"dx", x.grad()}};
       }},
      {"clip_grad_norm_with_nan",
       [](const ReferenceCase&) {
         const Tensor p = ones({2}).requires_grad_();
         p.set_grad(tensor<float>({std::numeric_limits<float>::quiet_NaN(), 1.0f}));
         const Tensor norm = optim::clip_grad_norm_({p}, 1.0);
         return NamedTensors{{"total_norm", norm}, {"grad", p.grad()}};
       }},
      {"clip_grad_norm_without_gradients",
       [](const ReferenceCase&) {
         return NamedTensors{
             {"total_norm", optim::clip_grad_norm_({ones({2}).requires_grad_()}, 1.0)}};
       }},
  };
}

class DefinedResult : public ::testing::TestWithParam<DefinedCase> {};

TEST_P(DefinedResult, MatchesPyTorch) {
  const ReferenceCase& expected = reference(GetParam().name);
  for (const auto& [name, actual] : GetParam().run(expected)) {
    SCOPED_TRACE(name);
    const Tensor& want = expected.at(name);
    ASSERT_TRUE(actual.defined());
    EXPECT_EQ(actual.dtype(), want.dtype());
    ASSERT_EQ(actual.shape(), want.shape());
    EXPECT_TRUE(all_close(actual, to_vector(want)));
  }
}

INSTANTIATE_TEST_SUITE_P(Misuse, DefinedResult, ::testing::ValuesIn(defined_cases()),
                         [](const ::testing::TestParamInfo<DefinedCase>& info) {
                           return info.param.name;
                         });

// Every case PyTorch wrote has a row, so the JSON and the table cannot drift apart.
TEST(DefinedResultTable, CoversEveryReferenceCase) {
  std::map<std::string, int> rows;
  for (const DefinedCase& defined : defined_cases())
    ++rows[defined.name];
  for (const ReferenceCase& c : load_reference("misuse.json")) {
    EXPECT_EQ(rows[c.name], 1) << "misuse.json case '" << c.name << "'";
  }
}

// ---- leangrad's own defined results -------------------------------------------------------------

// A state dict that does not fit changes nothing, even the entries that would fit (PyTorch
// copies those before it reports the others).
TEST(DefinedResult, FailedModuleLoadChangesNothing) {
  nn::Linear linear(3, 2);
  const std::vector<double> weight = to_vector(linear->weight);
  NamedTensors state = {{"weight", zeros({2, 3})}, {"bias", zeros({3})}};
  EXPECT_THROW(linear->load_state_dict(state), ShapeError);
  state = {{"weight", zeros({2, 3})}, {"bogus", zeros({1})}};
  EXPECT_THROW(linear->load_state_dict(state), Error);
  EXPECT_TRUE(all_close(linear->weight, weight));
}

// A step without gradients changes neither the parameters nor the optimizer.
TEST(DefinedResult, StepWithoutGradientsIsANoOp) {
  const Tensor p = ones({2}).requires_grad_();
  optim::Adam adam({p});
  adam.step();
  EXPECT_TRUE(all_close(p, {1, 1}));
  EXPECT_TRUE(adam.state_dict().size() == 2);  // the group's lr and weight_decay, no state
}

// A batch larger than the dataset is the whole dataset (the batch count was computed as
// n + batch_size - 1, which overflowed for batch_size near INT64_MAX).
TEST(DefinedResult, HugeBatchSizeGivesOneBatch) {
  data::DataLoader loader(
      data::TensorDataset(arange(10).reshape({10, 1}), arange(10, kInt64)),
      data::DataLoaderOptions().batch_size(std::numeric_limits<std::int64_t>::max()));
  EXPECT_EQ(loader.size(), 1);
  std::int64_t batches = 0;
  for (const auto& batch : loader) {
    EXPECT_EQ(batch.data.shape(), (Shape{10, 1}));
    ++batches;
  }
  EXPECT_EQ(batches, 1);
}

}  // namespace
}  // namespace leangrad::test
