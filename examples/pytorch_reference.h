// Not part of the ported LibTorch programs: how ctest checks a port's model against PyTorch.
// tests/data/make_example_references.py (PyTorch 1.13) wrote the model's initial parameters
// (<prefix>.init.safetensors) and one batch with PyTorch's loss and gradients
// (<prefix>.reference.safetensors: "x", "y", "loss", "grad.<parameter name>"), in float64.
// matches_pytorch loads the parameters into the port's own model, computes the same loss on the
// same batch and compares the loss and every parameter's gradient.
//
// Tolerance: both libraries round each operation to float64 (unit roundoff u = 2^-53 = 1.1e-16)
// and sum in their own orders; the longest sum here has 1024 terms (a batch, or a 3x3x8 window
// times a 16x16 image), so each result differs by at most about 1024 u = 1.1e-13 relative to the
// sizes of its terms. 1e-10 relative to the largest value leaves a factor of 1000 for the few
// layers those errors pass through; any mistake in a forward or backward formula moves values
// by orders of magnitude more.
#pragma once

#include <leangrad/leangrad.h>

#include <algorithm>
#include <iostream>
#include <stdexcept>
#include <string>

namespace pytorch_reference {

constexpr double kTolerance = 1e-10;

inline const leangrad::Tensor& find(const leangrad::NamedTensors& tensors, const std::string& name,
                                    const std::string& file) {
  for (const auto& [key, value] : tensors)
    if (key == name) return value;
  throw std::runtime_error("no tensor '" + name + "' in " + file);
}

// Prints one line per compared tensor; true when all agree. `loss(output, y)` is the port's loss.
template <typename Model, typename Loss>
bool matches_pytorch(Model& model, const std::string& prefix, const Loss& loss) {
  model->to(leangrad::kFloat64);
  leangrad::load(model.ptr(), prefix + ".init.safetensors");
  const std::string file = prefix + ".reference.safetensors";
  const leangrad::NamedTensors reference = leangrad::load_safetensors(file);

  const leangrad::Tensor value =
      loss(model(find(reference, "x", file)), find(reference, "y", file));
  value.backward();

  bool ok = true;
  auto compare = [&](const std::string& what, const leangrad::Tensor& got,
                     const leangrad::Tensor& expected) {
    const double scale = std::max(1.0, expected.abs().max().template item<double>());
    const double error = (got - expected).abs().max().template item<double>();
    const bool close = got.sizes() == expected.sizes() && error <= kTolerance * scale;
    std::cout << (close ? "ok      " : "FAILED  ") << what << " against PyTorch (max error "
              << error << ", allowed " << kTolerance * scale << ")" << std::endl;
    ok &= close;
  };
  compare("loss", value.reshape({1}), find(reference, "loss", file));
  for (const auto& [name, parameter] : model->named_parameters())
    compare("gradient of " + name, parameter.grad(), find(reference, "grad." + name, file));
  return ok;
}

}  // namespace pytorch_reference
