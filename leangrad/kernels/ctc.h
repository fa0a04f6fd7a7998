// CTC's forward-backward recursion (autograd/ctc_loss.h), on the host in double: each sample's
// loss and the loss's derivative in log_probs, the samples split across threads (parallel_for).
// autograd/ctc_loss.cpp checks the arguments and copies log_probs to the host first.
#pragma once

#include <cstdint>
#include <vector>

namespace leangrad::kernels {

struct CtcProblem {
  std::int64_t steps = 0, batch = 0, classes = 0, blank = 0;
  std::vector<std::int64_t> input_lengths;         // per sample, each in [0, steps]
  std::vector<std::vector<std::int64_t>> targets;  // per sample, labels in [0, classes), not blank
  bool zero_infinity = false;
};

// lp: (steps, batch, classes) log-probabilities, row-major. Fills losses (batch) and grad (steps,
// batch, classes): an impossible target's loss is inf with NaN gradients over its input steps,
// or 0 with zero gradients under zero_infinity; steps past a sample's input length get 0.
void ctc_forward_backward(const CtcProblem& p, const double* lp, std::vector<double>& losses,
                          std::vector<double>& grad);

}  // namespace leangrad::kernels
