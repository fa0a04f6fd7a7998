// Loader for the PyTorch reference data in tests/data.
#include "testing/reference_data.h"

#include <gtest/gtest.h>

#include <fstream>
#include <limits>

#include <leangrad/core/creation.h>
#include <leangrad/core/error.h>
#include "testing/tensor_testing.h"

namespace leangrad::test {

namespace {

DType dtype_from_name(const std::string& name) {
  for (DType t : {kFloat32, kFloat64, kFloat16, kBFloat16, kInt64, kInt32, kUInt8, kBool}) {
    if (name == dtype_name(t)) return t;
  }
  LG_THROW(DTypeError, "reference data: unknown dtype '", name, "'");
}

// A number, or one of the strings "nan", "inf", "-inf" that stand for what JSON cannot hold.
double number_from_json(const nlohmann::json& j) {
  if (j.is_number()) return j.get<double>();
  const std::string text = j.get<std::string>();
  if (text == "nan") return std::numeric_limits<double>::quiet_NaN();
  if (text == "inf") return std::numeric_limits<double>::infinity();
  if (text == "-inf") return -std::numeric_limits<double>::infinity();
  LG_THROW(Error, "reference data: '", text, "' is not a number");
}

Tensor tensor_from_json(const nlohmann::json& j) {
  const Shape shape = j.at("shape").get<Shape>();
  std::vector<double> data;
  for (const nlohmann::json& value : j.at("data"))
    data.push_back(number_from_json(value));
  LG_CHECK(static_cast<std::int64_t>(data.size()) == shape_numel(shape),
           "reference data: ", data.size(), " values for shape ", shape);
  // Exact for every float32 / int value: the JSON holds them with full precision.
  return tensor(data, shape.empty() ? Shape{1} : shape)
      .reshape(shape)
      .to(dtype_from_name(j.at("dtype").get<std::string>()));
}

}  // namespace

const Tensor& ReferenceCase::at(const std::string& key) const {
  auto it = tensors.find(key);
  LG_CHECK(it != tensors.end(), "reference case '", name, "' has no tensor '", key, "'");
  return it->second;
}

std::vector<ReferenceCase> load_reference(const std::string& file) {
  const std::string path = std::string(LEANGRAD_TEST_DATA_DIR) + "/" + file;
  std::ifstream in(path);
  LG_CHECK(in.good(), "reference data: cannot open ", path);
  nlohmann::json root;
  try {
    in >> root;
  } catch (const nlohmann::json::exception& e) {
    LG_THROW(Error, "reference data: ", path, " is not valid JSON: ", e.what());
  }
  std::vector<ReferenceCase> cases;
  for (const auto& c : root.at("cases")) {
    ReferenceCase rc;
    rc.name = c.at("name").get<std::string>();
    rc.params = c.value("params", nlohmann::json::object());
    for (const auto& [key, value] : c.at("tensors").items()) {
      rc.tensors.emplace(key, tensor_from_json(value));
    }
    cases.push_back(std::move(rc));
  }
  return cases;
}

ReferenceInputs reference_inputs(const ReferenceCase& c) {
  ReferenceInputs in;
  in.names = c.params.at("inputs").get<std::vector<std::string>>();
  for (const std::string& input_name : in.names) {
    const Tensor& t = c.at(input_name);
    const bool grad = c.tensors.count("d_" + input_name) > 0;
    in.differentiable = in.differentiable || grad;
    in.tensors.push_back(grad ? t.clone().requires_grad_() : t);
  }
  return in;
}

void expect_reference_gradients(const ReferenceCase& c, const ReferenceInputs& in, const Tensor& y,
                                double ulps) {
  if (!in.differentiable) return;
  y.backward(c.at("g"));
  for (std::size_t i = 0; i < in.names.size(); ++i) {
    if (c.tensors.count("d_" + in.names[i]) == 0) continue;
    SCOPED_TRACE("d_" + in.names[i]);
    ASSERT_TRUE(in.tensors[i].grad().defined());
    EXPECT_TRUE(matches_within_roundoff(in.tensors[i].grad(), c.at("d_" + in.names[i]), {},
                                        RoundoffMatch{.ulps = ulps}));
  }
}

Reduction reduction_named(const std::string& name) {
  if (name == "none") return Reduction::None;
  if (name == "mean") return Reduction::Mean;
  LG_CHECK(name == "sum", "reference case: unknown reduction '", name, "'");
  return Reduction::Sum;
}

}  // namespace leangrad::test
