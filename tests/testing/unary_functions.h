// The differentiable unary functions of autograd/functions.h by their PyTorch names ("sin",
// "asinh", ...), for the tests that read torch's values of them from a reference file by name
// (test_unary_math.cpp, test_trig_math.cpp).
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <string>

#include <leangrad/autograd/functions.h>

namespace leangrad::test {

using UnaryFn = std::function<Tensor(const Tensor&)>;

// The function named `op`; a test failure (and the identity) for a name it does not know.
inline UnaryFn unary_function_named(const std::string& op) {
  if (op == "sin") return [](const Tensor& x) { return sin(x); };
  if (op == "cos") return [](const Tensor& x) { return cos(x); };
  if (op == "tan") return [](const Tensor& x) { return tan(x); };
  if (op == "asin") return [](const Tensor& x) { return asin(x); };
  if (op == "acos") return [](const Tensor& x) { return acos(x); };
  if (op == "atan") return [](const Tensor& x) { return atan(x); };
  if (op == "sinh") return [](const Tensor& x) { return sinh(x); };
  if (op == "cosh") return [](const Tensor& x) { return cosh(x); };
  if (op == "asinh") return [](const Tensor& x) { return asinh(x); };
  if (op == "acosh") return [](const Tensor& x) { return acosh(x); };
  if (op == "atanh") return [](const Tensor& x) { return atanh(x); };
  if (op == "exp2") return [](const Tensor& x) { return exp2(x); };
  if (op == "rsqrt") return [](const Tensor& x) { return rsqrt(x); };
  if (op == "reciprocal") return [](const Tensor& x) { return reciprocal(x); };
  if (op == "log2") return [](const Tensor& x) { return log2(x); };
  if (op == "log10") return [](const Tensor& x) { return log10(x); };
  if (op == "sign") return [](const Tensor& x) { return sign(x); };
  if (op == "floor") return [](const Tensor& x) { return floor(x); };
  if (op == "ceil") return [](const Tensor& x) { return ceil(x); };
  if (op == "round") return [](const Tensor& x) { return round(x); };
  if (op == "trunc") return [](const Tensor& x) { return trunc(x); };
  ADD_FAILURE() << "the reference data names a unary function the tests do not know: " << op;
  return [](const Tensor& x) { return x; };
}

}  // namespace leangrad::test
