// Reference values computed by PyTorch and committed as data (tests/data/<op>.json, each beside
// the script that wrote it, tests/data/make_<op>.py, run with Debian's python3-torch).
// File format:
//   {"generator": "make_x.py", "torch_version": "1.13.1",
//    "cases": [{"name": "stride2", "params": {...},
//               "tensors": {"x": {"dtype": "float32", "shape": [2, 3], "data": [...]}, ...}}]}
// Values are written with enough digits to round-trip exactly in their dtype; NaN and the
// infinities, which JSON cannot hold, as the strings "nan", "inf" and "-inf".
#pragma once

#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include <leangrad/autograd/nn_functions.h>
#include <leangrad/core/tensor.h>

namespace leangrad::test {

struct ReferenceCase {
  std::string name;
  nlohmann::json params;                  // op arguments (stride, padding, eps, ...)
  std::map<std::string, Tensor> tensors;  // inputs and expected outputs, CPU tensors
  const Tensor& at(const std::string& key) const;
};

// Loads LEANGRAD_TEST_DATA_DIR/<file>; throws Error naming the file if it is missing or malformed.
std::vector<ReferenceCase> load_reference(const std::string& file);

// A case's inputs in the order params["inputs"] lists them, those with a reference gradient
// (a tensor "d_<name>") cloned as leaves that require grad; `differentiable` when any has one.
struct ReferenceInputs {
  std::vector<std::string> names;
  std::vector<Tensor> tensors;
  bool differentiable = false;
};
ReferenceInputs reference_inputs(const ReferenceCase& c);
// When `in` is differentiable: back-propagates the case's upstream gradient "g" from y (the
// case's op of in's tensors) and expects each input's gradient to match its "d_<name>" within
// `ulps` units of roundoff (matches_within_roundoff, testing/tensor_testing.h).
void expect_reference_gradients(const ReferenceCase& c, const ReferenceInputs& in, const Tensor& y,
                                double ulps);

// A reduction as the cases spell it: "none", "mean" or "sum" (anything else throws Error).
Reduction reduction_named(const std::string& name);

}  // namespace leangrad::test
