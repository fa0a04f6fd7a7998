// gradcheck: the finite-difference gradient check every differentiable op is tested with, in
// float64 on the CPU, as torch.autograd.gradcheck and flashlight's Jacobian tests. It compares
// the vector-Jacobian product autograd computes, backward(v) for a random v, with central
// differences in float64 on the CPU:
//   Tensor x = test::uniform_input({3, 4}, 0.5, 2.0);  // float64, requires grad
//   EXPECT_TRUE(test::gradcheck([](const std::vector<Tensor>& in) { return in[0].log(); }, {x}));
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <vector>

#include <leangrad/core/tensor.h>

namespace leangrad::test {

using GradcheckFn = std::function<Tensor(const std::vector<Tensor>&)>;

// Checks the gradient of `fn(inputs)` (any output shape, float64) with respect to every input
// that requires grad, against central differences:
//   numerical[i] = sum_j v[j] * (fn(x + eps e_i)[j] - fn(x - eps e_i)[j]) / (2 eps)
//   pass when |analytical[i] - numerical[i]| <= atol + rtol * |numerical[i]|
// where v is a seeded random upstream gradient of fn's output shape and analytical is the
// .grad() that fn(inputs).backward(v) leaves on the input.
// - Inputs that require grad must be float64 CPU leaves. They may be non-contiguous (a
//   transposed or strided view): each element is perturbed in place through the input's own
//   strides. Inputs whose elements share memory (a stride 0, as after expand) are rejected: one
//   perturbation would move several elements.
// - Other inputs (integer or bool side inputs such as where's condition, float constants, or an
//   undefined Tensor() for "no bias") are passed through untouched, and must get no .grad().
// - fn must be deterministic, and its output must require grad and be float64.
// - Each input's .grad() is restored afterwards.
// The failure message names the input, the element's multi-index and both values.
::testing::AssertionResult gradcheck(const GradcheckFn& fn, const std::vector<Tensor>& inputs,
                                     double eps = 1e-6, double atol = 1e-5, double rtol = 1e-3);

// The second derivatives of `fn` in all its inputs at once: gradcheck of
//   sum_i (i + 1) * sum(d sum(fn(inputs)) / d inputs[i])
// (each input's first derivative weighted by its position, so that one input's derivative
// computed from another's shows). Every input must require grad.
::testing::AssertionResult gradgradcheck(const GradcheckFn& fn, const std::vector<Tensor>& inputs);

// Inputs for gradcheck: float64 CPU tensors requiring grad, with values drawn from a seeded
// std::mt19937_64 (independent of leangrad's kernels and generators).
// U[low, high) in each element.
Tensor uniform_input(const Shape& shape, double low = -1.0, double high = 1.0,
                     std::uint64_t seed = 0);
// |x| in U[min_abs, max_abs) with a random sign: kept away from a kink or pole at 0
// (abs, relu, division).
Tensor away_from_zero_input(const Shape& shape, double min_abs = 0.2, double max_abs = 1.0,
                            std::uint64_t seed = 0);

}  // namespace leangrad::test
