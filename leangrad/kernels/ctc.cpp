// CTC's forward-backward recursion (kernels/ctc.h).
#include <leangrad/kernels/ctc.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <vector>

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
// from the forward pass (T N C doubles) and scaled by the upstream gradient in backward. Each
// sample runs the same recursions in scaled probabilities first (Note [CTC by scaled
// probabilities]), and in log space only where those leave double's range.

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

// Sample n's loss, and its gradient into grad (only where it is not 0), in log space.
double log_space_sample(const CtcProblem& p, const double* lp, std::int64_t n, double* grad) {
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

// Note [CTC by scaled probabilities]
// The recursions of Note [CTC by forward-backward] run in probabilities, each step's vector
// divided by its sum (Graves et al., 2006, section 4.1): alpha_t(s) = alpha-hat_t(s) e^(A_t)
// with alpha-hat summing to 1, and the step's emissions taken as e_t(c) = exp(lp_t(c) - m_t), m_t
// the largest lp_t over the sample's classes, so that the largest is 1 and A_t adds m_t and the
// log of the step's sum. beta'_t(s) = beta_t(s) / e_t(l'_s) (without step t's emission) runs
// the same way from the end, normalised likewise. Then the probability of the target is
// e^(A_(T-1)) (alpha-hat_(T-1)(L-1) + alpha-hat_(T-1)(L-2)), and the occupation of class c at
// step t, the loss's derivative in lp_t(c) with its sign changed, is
//   gamma_t(c) = sum over s with l'_s = c of alpha-hat_t(s) beta'-hat_t(s) / Z_t,
// Z_t the same sum over every s: the scales cancel. What was T L logsumexps of up to three
// terms (four libm calls each) and T (L + C) exps for the gradient is T (S + 1) exps and a few
// passes of additions and products over the states, which the compiler runs in SIMD lanes.
// Every quantity is a sum of products of non-negative numbers, each rounded relatively, so the
// result is as accurate as log space's. Double's range ends the method where a sum falls below
// kSmallestSum (a step whose emissions are all below e^-575 of its largest class's, against mass
// the previous step put elsewhere; alpha-hat and beta'-hat that barely overlap; an impossible
// target): parts then lost below double's smallest normal number would be more than a rounding
// of the sum, and the sample is done again in log space (log_space_sample), as is one whose
// log-probabilities are not all finite. Above it, anything lost is below 10^-58 of the sum.
constexpr double kSmallestSum = 1e-250;

// Divides v[0, n) by its sum and returns the sum.
double normalise(double* v, std::int64_t n) {
  double sum = 0.0;
  for (std::int64_t i = 0; i < n; ++i)
    sum += v[i];
  if (sum >= kSmallestSum) {
    const double inverse = 1.0 / sum;
    for (std::int64_t i = 0; i < n; ++i)
      v[i] *= inverse;
  }
  return sum;
}

// Sample n's loss into *loss and its gradient into grad, in scaled probabilities; false (grad
// possibly written in part) where a sum left double's normal range.
bool scaled_sample(const CtcProblem& p, const double* lp, std::int64_t n, double* grad,
                   double* loss) {
  const std::int64_t n_batch = p.batch, classes = p.classes;
  const std::vector<std::int64_t>& labels = p.targets[static_cast<std::size_t>(n)];
  const std::int64_t steps = p.input_lengths[static_cast<std::size_t>(n)];
  const auto states = static_cast<std::int64_t>(2 * labels.size() + 1);
  if (steps == 0) return false;
  std::vector<std::int64_t> label(static_cast<std::size_t>(states));
  std::vector<double> skip(label.size(), 0.0);  // 1 where state s may come from s - 2
  std::vector<char> used(static_cast<std::size_t>(classes), 0);
  for (std::int64_t s = 0; s < states; ++s) {
    const auto i = static_cast<std::size_t>(s);
    label[i] = s % 2 == 0 ? p.blank : labels[i / 2];
    used[static_cast<std::size_t>(label[i])] = 1;
    if (s % 2 == 1 && s >= 2 && label[i] != label[i - 2]) skip[i] = 1.0;
  }
  // Each step's emissions per state, e_t(l'_s), and the log of its scale, m_t.
  std::vector<double> emission(static_cast<std::size_t>(steps * states));
  std::vector<double> by_class(static_cast<std::size_t>(classes), 0.0);
  double log_scale = 0.0;  // A_t, the sum of the m_t and of the logs of the steps' sums
  for (std::int64_t t = 0; t < steps; ++t) {
    const double* row = lp + (t * n_batch + n) * classes;
    double top = -std::numeric_limits<double>::infinity();
    for (std::int64_t c = 0; c < classes; ++c) {
      if (!used[static_cast<std::size_t>(c)]) continue;
      if (!std::isfinite(row[c])) return false;
      top = std::max(top, row[c]);
    }
    for (std::int64_t c = 0; c < classes; ++c)
      if (used[static_cast<std::size_t>(c)])
        by_class[static_cast<std::size_t>(c)] = std::exp(row[c] - top);
    double* e = emission.data() + t * states;
    for (std::int64_t s = 0; s < states; ++s)
      e[s] = by_class[static_cast<std::size_t>(label[static_cast<std::size_t>(s)])];
    log_scale += top;
  }
  std::vector<double> alpha(static_cast<std::size_t>(steps * states), 0.0);
  double* const a = alpha.data();
  a[0] = emission[0];
  if (states > 1) a[1] = emission[1];
  double sum = normalise(a, states);
  if (!(sum >= kSmallestSum)) return false;
  log_scale += std::log(sum);
  for (std::int64_t t = 1; t < steps; ++t) {
    const double* prev = a + (t - 1) * states;
    const double* e = emission.data() + t * states;
    double* cur = a + t * states;
    cur[0] = prev[0] * e[0];
    if (states > 1) cur[1] = (prev[1] + prev[0]) * e[1];
    for (std::int64_t s = 2; s < states; ++s)
      cur[s] = (prev[s] + prev[s - 1] + skip[static_cast<std::size_t>(s)] * prev[s - 2]) * e[s];
    sum = normalise(cur, states);
    if (!(sum >= kSmallestSum)) return false;
    log_scale += std::log(sum);
  }
  const double* final_alpha = a + (steps - 1) * states;
  // Half of `ends` is Z_(T-1) below, which is checked.
  const double ends = final_alpha[states - 1] + (states > 1 ? final_alpha[states - 2] : 0.0);
  *loss = -(log_scale + std::log(ends));
  // beta'-hat from the end, and each step's occupations from it and alpha-hat.
  std::vector<double> beta(static_cast<std::size_t>(states), 0.0);
  std::vector<double> carried(beta.size());
  std::vector<double> through(static_cast<std::size_t>(classes));
  beta[static_cast<std::size_t>(states - 1)] = 1.0;
  if (states > 1) beta[static_cast<std::size_t>(states - 2)] = 1.0;
  for (std::int64_t t = steps - 1; t >= 0; --t) {
    if (t < steps - 1) {
      // beta'_t(s) = sum over the states s' that s may go to of e_(t+1)(l'_s') beta'_(t+1)(s').
      const double* e = emission.data() + (t + 1) * states;
      for (std::int64_t s = 0; s < states; ++s)
        carried[static_cast<std::size_t>(s)] = beta[static_cast<std::size_t>(s)] * e[s];
      for (std::int64_t s = 0; s + 2 < states; ++s) {
        const auto i = static_cast<std::size_t>(s);
        beta[i] = carried[i] + carried[i + 1] + skip[i + 2] * carried[i + 2];
      }
      for (std::int64_t s = std::max<std::int64_t>(states - 2, 0); s < states; ++s) {
        const auto i = static_cast<std::size_t>(s);
        beta[i] = carried[i] + (s + 1 < states ? carried[i + 1] : 0.0);
      }
    }
    if (!(normalise(beta.data(), states) >= kSmallestSum)) return false;
    const double* at_t = a + t * states;
    std::fill(through.begin(), through.end(), 0.0);
    double z = 0.0;
    for (std::int64_t s = 0; s < states; ++s) {
      const double w = at_t[s] * beta[static_cast<std::size_t>(s)];
      through[static_cast<std::size_t>(label[static_cast<std::size_t>(s)])] += w;
      z += w;
    }
    if (!(z >= kSmallestSum)) return false;
    double* g = grad + (t * n_batch + n) * classes;
    for (std::int64_t c = 0; c < classes; ++c)
      g[c] =
          used[static_cast<std::size_t>(c)] ? 0.0 - through[static_cast<std::size_t>(c)] / z : 0.0;
  }
  return true;
}

}  // namespace

void ctc_forward_backward(const CtcProblem& p, const double* lp, std::vector<double>& losses,
                          std::vector<double>& grad) {
  losses.assign(static_cast<std::size_t>(p.batch), 0.0);
  grad.assign(static_cast<std::size_t>(p.steps * p.batch * p.classes), 0.0);
  // A sample is T (S + 1) exps and a few passes over T L states: one per task.
  cpu::parallel_for(p.batch, 1, [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t n = begin; n < end; ++n) {
      double loss = 0.0;
      if (!scaled_sample(p, lp, n, grad.data(), &loss))
        loss = log_space_sample(p, lp, n, grad.data());
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
