// CTC's forward-backward recursion (kernels/ctc.h).
#include <leangrad/kernels/ctc.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>

#include <leangrad/kernels/cpu/parallel_for.h>

namespace leangrad::kernels {

// Note [CTC by forward-backward]
// Sample n's labels l_1..l_S are extended to l' = (blank, l_1, blank, ..., l_S, blank), L = 2S + 1
// states. alpha_t(s), the log-probability of the alignments of t + 1 steps that end in state s,
// starts with alpha_0(0) = lp_0(blank), alpha_0(1) = lp_0(l_1) and goes on by
// alpha_t(s) = lp_t(l'_s) + logsumexp(alpha_{t-1}(s), alpha_{t-1}(s - 1), alpha_{t-1}(s - 2)),
// the last term only where l'_s is a label different from l'_{s-2} (a blank may be skipped
// between two different labels only). The loss is -logsumexp(alpha_{T-1}(L-1), alpha_{T-1}(L-2)),
// T the sample's input length. beta_t(s), the same from the end (beta_{T-1}(L-1) =
// lp_{T-1}(blank), beta_{T-1}(L-2) = lp_{T-1}(l_S)), makes alpha_t(s) + beta_t(s) - lp_t(l'_s)
// the log-probability of the alignments through state s at step t, so the derivative of the loss
// in lp_t(c) is -exp(logsumexp over s with l'_s = c of (alpha_t(s) + beta_t(s)) - lp_t(c) + loss).
// Everything runs in double, one sample per task: a logsumexp of up to three terms is one log
// and three exps around their maximum, and step t's sums over the states of each class are
// exps scaled by that step's largest alpha + beta, then one log per class. The gradient is kept
// from the forward pass (T N C doubles) and scaled by the upstream gradient in backward.

namespace {

constexpr double kNegInf = -std::numeric_limits<double>::infinity();

double log_sum(double a, double b) {
  const double m = std::max(a, b);
  if (m == kNegInf) return kNegInf;
  return m + std::log(std::exp(a - m) + std::exp(b - m));
}

double log_sum(double a, double b, double c) {
  const double m = std::max({a, b, c});
  if (m == kNegInf) return kNegInf;
  return m + std::log(std::exp(a - m) + std::exp(b - m) + std::exp(c - m));
}

// Sample n's loss, and its gradient into grad (only where it is not 0).
double one_sample(const CtcProblem& p, const double* lp, std::int64_t n, double* grad) {
  const std::int64_t n_batch = p.batch, classes = p.classes;
  const auto at = [&](std::int64_t t, std::int64_t c) {
    return lp[(t * n_batch + n) * classes + c];
  };
  const std::vector<std::int64_t>& labels = p.targets[static_cast<std::size_t>(n)];
  const std::int64_t steps = p.input_lengths[static_cast<std::size_t>(n)];
  const auto states = static_cast<std::int64_t>(2 * labels.size() + 1);
  if (steps == 0) return labels.empty() ? 0.0 : INFINITY;  // only an empty target fits no step
  std::vector<std::int64_t> label(static_cast<std::size_t>(states));
  std::vector<char> skips(label.size(), 0);  // state s may come from s - 2
  for (std::int64_t s = 0; s < states; ++s) {
    label[static_cast<std::size_t>(s)] =
        s % 2 == 0 ? p.blank : labels[static_cast<std::size_t>(s / 2)];
    skips[static_cast<std::size_t>(s)] =
        s % 2 == 1 && s >= 2 &&
        label[static_cast<std::size_t>(s)] != label[static_cast<std::size_t>(s - 2)];
  }
  std::vector<double> alpha(static_cast<std::size_t>(steps * states), kNegInf);
  std::vector<double> beta(alpha.size(), kNegInf);
  double* const a = alpha.data();
  double* const b = beta.data();
  a[0] = at(0, p.blank);
  if (states > 1) a[1] = at(0, label[1]);
  for (std::int64_t t = 1; t < steps; ++t) {
    const double* prev = a + (t - 1) * states;
    double* cur = a + t * states;
    for (std::int64_t s = 0; s < states; ++s) {
      const auto i = static_cast<std::size_t>(s);
      const double sum = skips[i] ? log_sum(prev[s], prev[s - 1], prev[s - 2])
                         : s >= 1 ? log_sum(prev[s], prev[s - 1])
                                  : prev[s];
      cur[s] = sum == kNegInf ? kNegInf : sum + at(t, label[i]);
    }
  }
  double* last = b + (steps - 1) * states;
  last[states - 1] = at(steps - 1, p.blank);
  if (states > 1) last[states - 2] = at(steps - 1, label[static_cast<std::size_t>(states - 2)]);
  for (std::int64_t t = steps - 2; t >= 0; --t) {
    const double* next = b + (t + 1) * states;
    double* cur = b + t * states;
    for (std::int64_t s = 0; s < states; ++s) {
      const auto i = static_cast<std::size_t>(s);
      const double sum = s + 2 < states && skips[i + 2] ? log_sum(next[s], next[s + 1], next[s + 2])
                         : s + 1 < states               ? log_sum(next[s], next[s + 1])
                                                        : next[s];
      cur[s] = sum == kNegInf ? kNegInf : sum + at(t, label[i]);
    }
  }
  const double* final_alpha = a + (steps - 1) * states;
  const double total = states > 1 ? log_sum(final_alpha[states - 1], final_alpha[states - 2])
                                  : final_alpha[states - 1];
  const double loss = -total;
  if (!std::isfinite(loss)) return loss;
  std::vector<double> through(static_cast<std::size_t>(classes));
  for (std::int64_t t = 0; t < steps; ++t) {
    const double* at_t = a + t * states;
    const double* bt_t = b + t * states;
    double top = kNegInf;
    for (std::int64_t s = 0; s < states; ++s)
      top = std::max(top, at_t[s] + bt_t[s]);
    std::fill(through.begin(), through.end(), 0.0);
    if (top != kNegInf) {
      for (std::int64_t s = 0; s < states; ++s)
        through[static_cast<std::size_t>(label[static_cast<std::size_t>(s)])] +=
            std::exp(at_t[s] + bt_t[s] - top);
    }
    double* g = grad + (t * n_batch + n) * classes;
    for (std::int64_t c = 0; c < classes; ++c) {
      const double sum = through[static_cast<std::size_t>(c)];
      g[c] = sum == 0.0 ? 0.0 : -std::exp(std::log(sum) + top - at(t, c) + loss);
    }
  }
  return loss;
}

}  // namespace

void ctc_forward_backward(const CtcProblem& p, const double* lp, std::vector<double>& losses,
                          std::vector<double>& grad) {
  losses.assign(static_cast<std::size_t>(p.batch), 0.0);
  grad.assign(static_cast<std::size_t>(p.steps * p.batch * p.classes), 0.0);
  // A sample is T L logsumexps and T (L + C) exps: one per task.
  cpu::parallel_for(p.batch, 1, [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t n = begin; n < end; ++n) {
      double loss = one_sample(p, lp, n, grad.data());
      if (!std::isfinite(loss)) {
        const std::int64_t steps = p.input_lengths[static_cast<std::size_t>(n)];
        const double fill = p.zero_infinity ? 0.0 : std::numeric_limits<double>::quiet_NaN();
        for (std::int64_t t = 0; t < steps; ++t)
          std::fill_n(grad.data() + (t * p.batch + n) * p.classes, p.classes, fill);
        if (p.zero_infinity) loss = 0.0;
      }
      losses[static_cast<std::size_t>(n)] = loss;
    }
  });
}

}  // namespace leangrad::kernels
