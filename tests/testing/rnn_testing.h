// Helpers of the recurrent modules' reference tests (tests/nn/test_rnn.cpp,
// tests/nn/test_packed_sequence.cpp): the derived bound, loading PyTorch's parameters into a
// module, and the cases' loss. The cases come from tests/data/make_rnn.py and
// make_packed_sequence.py, which share their layout: "p.<name>" parameters, "w.<output>" weights,
// "d.<input>" gradients.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include <leangrad/autograd/functions.h>
#include <leangrad/autograd/grad_mode.h>
#include <leangrad/nn/module.h>
#include "testing/reference_data.h"
#include "testing/tensor_testing.h"
#include "testing/within_bound.h"

namespace leangrad::test {

// A step is a sum of at most n products (n the larger of input_size and hidden_size, biases
// included) followed by gates that do not enlarge an error (|sigmoid'| <= 1/4, |tanh'| <= 1): at
// most n u of rounding a step, carried into later steps and layers by the recurrent weights
// (0.6 N(0, 1) entries over at most 5 hidden features, gains of order 1 here). Over T steps and
// L layers that is of order n T L u relative to the values; the factor 64 covers the gains, the
// backward pass (the same sums transposed) and the products of gate values.
inline double bound_units(const nlohmann::json& p, std::int64_t steps) {
  const std::int64_t n =
      std::max(p.at("input_size").get<std::int64_t>(), p.at("hidden_size").get<std::int64_t>());
  const std::int64_t layers = p.contains("num_layers") ? p.at("num_layers").get<std::int64_t>() : 1;
  return 64.0 * static_cast<double>(n * steps * layers);
}

inline void expect_close(const Tensor& got, const Tensor& want, double units,
                         const std::string& what) {
  EXPECT_TRUE(within_bound(got, want,
                           units * math_unit_roundoff(want.dtype()) * std::max(1.0, max_abs(want))))
      << what;
}

// The module's parameters in float64, copied from the case by PyTorch's names, which must be
// the module's names in the module's order.
inline void load_parameters(nn::Module& module, const ReferenceCase& c) {
  module.to(kFloat64);
  std::vector<std::string> names;
  NoGradGuard no_grad;
  for (auto& item : module.named_parameters()) {
    names.push_back(item.key());
    item.value().copy_(c.at("p." + item.key()));
  }
  EXPECT_EQ(names, c.params.at("parameter_names").get<std::vector<std::string>>());
}

// sum(output * w.output) + sum(h_n * w.h_n) (+ sum(c_n * w.c_n)), the case's loss.
inline Tensor case_loss(const ReferenceCase& c, const Tensor& output, const Tensor& h_n,
                        const Tensor& c_n) {
  Tensor loss = sum(mul(h_n, c.at("w.h_n")));
  if (output.defined()) loss = add(loss, sum(mul(output, c.at("w.output"))));
  if (c_n.defined()) loss = add(loss, sum(mul(c_n, c.at("w.c_n"))));
  return loss;
}

// The case's initial state `key` as a leaf that requires grad, or undefined.
inline Tensor state_leaf(const ReferenceCase& c, const std::string& key) {
  return c.tensors.count(key) ? c.at(key).clone().requires_grad_() : Tensor();
}

}  // namespace leangrad::test
