// ctc_loss (autograd/ctc_loss.h).
#include <leangrad/autograd/ctc_loss.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include <leangrad/autograd/custom_function.h>
#include <leangrad/autograd/functions.h>
#include <leangrad/autograd/grad_mode.h>
#include <leangrad/autograd/nn_internal.h>
#include <leangrad/core/creation.h>
#include <leangrad/core/error.h>
#include <leangrad/core/profiler.h>

namespace leangrad {

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
// Both recursions run in double on the host, a sample at a time; the gradient is kept from the
// forward pass (T N C doubles) and scaled by the upstream gradient in backward.

namespace {

constexpr double kNegInf = -std::numeric_limits<double>::infinity();

double log_add(double a, double b) {
  if (a == kNegInf) return b;
  if (b == kNegInf) return a;
  const double m = std::max(a, b);
  return m + std::log1p(std::exp(-std::fabs(a - b)));
}

// Integral values of a tensor of at most 1 dim, on the host; `what` names it in the Error.
std::vector<std::int64_t> host_integers(const char* op, const char* what, const Tensor& t) {
  LG_CHECK(t.defined(), op, ": ", what, " is an undefined Tensor()");
  LG_CHECK_DTYPE(is_integral(t.dtype()), op, ": expected integral ", what, ", got ", t.dtype());
  const NoGradGuard no_grad;
  const Tensor values = t.to(Device::cpu()).to(kInt64).contiguous();
  const std::int64_t* v = values.data_ptr<std::int64_t>();
  return std::vector<std::int64_t>(v, v + values.numel());
}

struct CtcProblem {
  std::int64_t steps = 0, batch = 0, classes = 0, blank = 0;
  std::vector<std::int64_t> input_lengths, target_lengths;
  std::vector<std::vector<std::int64_t>> targets;  // per sample
  bool zero_infinity = false;
};

// The losses (N) and their gradients (T, N, C) in double.
void forward_backward(const CtcProblem& p, const std::vector<double>& lp,
                      std::vector<double>& losses, std::vector<double>& grad) {
  const std::int64_t n_batch = p.batch, classes = p.classes;
  const auto at = [&](std::int64_t t, std::int64_t n, std::int64_t c) {
    return lp[static_cast<std::size_t>((t * n_batch + n) * classes + c)];
  };
  losses.assign(static_cast<std::size_t>(n_batch), 0.0);
  grad.assign(lp.size(), 0.0);
  for (std::int64_t n = 0; n < n_batch; ++n) {
    const std::vector<std::int64_t>& labels = p.targets[static_cast<std::size_t>(n)];
    const std::int64_t steps = p.input_lengths[static_cast<std::size_t>(n)];
    const auto states = static_cast<std::int64_t>(2 * labels.size() + 1);
    const auto label = [&](std::int64_t s) {
      return s % 2 == 0 ? p.blank : labels[static_cast<std::size_t>(s / 2)];
    };
    const auto skips = [&](std::int64_t s) {  // may come from s - 2
      return s % 2 == 1 && s >= 2 && label(s) != label(s - 2);
    };
    if (steps == 0) {  // no step: only an empty target, with probability 1
      losses[static_cast<std::size_t>(n)] = labels.empty() ? 0.0 : INFINITY;
    } else {
      std::vector<double> alpha(static_cast<std::size_t>(steps * states), kNegInf);
      std::vector<double> beta(alpha.size(), kNegInf);
      const auto a = [&](std::int64_t t, std::int64_t s) -> double& {
        return alpha[static_cast<std::size_t>(t * states + s)];
      };
      const auto b = [&](std::int64_t t, std::int64_t s) -> double& {
        return beta[static_cast<std::size_t>(t * states + s)];
      };
      a(0, 0) = at(0, n, p.blank);
      if (states > 1) a(0, 1) = at(0, n, label(1));
      for (std::int64_t t = 1; t < steps; ++t) {
        for (std::int64_t s = 0; s < states; ++s) {
          double sum = a(t - 1, s);
          if (s >= 1) sum = log_add(sum, a(t - 1, s - 1));
          if (skips(s)) sum = log_add(sum, a(t - 1, s - 2));
          a(t, s) = sum == kNegInf ? kNegInf : sum + at(t, n, label(s));
        }
      }
      b(steps - 1, states - 1) = at(steps - 1, n, p.blank);
      if (states > 1) b(steps - 1, states - 2) = at(steps - 1, n, label(states - 2));
      for (std::int64_t t = steps - 2; t >= 0; --t) {
        for (std::int64_t s = 0; s < states; ++s) {
          double sum = b(t + 1, s);
          if (s + 1 < states) sum = log_add(sum, b(t + 1, s + 1));
          if (s + 2 < states && skips(s + 2)) sum = log_add(sum, b(t + 1, s + 2));
          b(t, s) = sum == kNegInf ? kNegInf : sum + at(t, n, label(s));
        }
      }
      double total = a(steps - 1, states - 1);
      if (states > 1) total = log_add(total, a(steps - 1, states - 2));
      const double loss = -total;
      losses[static_cast<std::size_t>(n)] = loss;
      if (std::isfinite(loss)) {
        std::vector<double> through(static_cast<std::size_t>(classes));
        for (std::int64_t t = 0; t < steps; ++t) {
          std::fill(through.begin(), through.end(), kNegInf);
          for (std::int64_t s = 0; s < states; ++s) {
            double& c = through[static_cast<std::size_t>(label(s))];
            c = log_add(c, a(t, s) + b(t, s));
          }
          for (std::int64_t c = 0; c < classes; ++c) {
            const double lc = through[static_cast<std::size_t>(c)];
            grad[static_cast<std::size_t>((t * n_batch + n) * classes + c)] =
                lc == kNegInf ? 0.0 : -std::exp(lc - at(t, n, c) + loss);
          }
        }
      }
    }
    double& loss = losses[static_cast<std::size_t>(n)];
    if (!std::isfinite(loss)) {
      if (p.zero_infinity) {
        loss = 0.0;  // its gradient stays 0
      } else {
        for (std::int64_t t = 0; t < steps; ++t)
          for (std::int64_t c = 0; c < classes; ++c)
            grad[static_cast<std::size_t>((t * n_batch + n) * classes + c)] =
                std::numeric_limits<double>::quiet_NaN();
      }
    }
  }
}

// One node: the (N) losses from log_probs (T, N, C), the gradient kept from forward.
struct CtcLosses : autograd::Function<CtcLosses> {
  static Tensor forward(autograd::Context* ctx, const Tensor& log_probs, const CtcProblem& p) {
    const Tensor host = log_probs.to(Device::cpu()).to(kFloat64).contiguous();
    const double* v = host.data_ptr<double>();
    const std::vector<double> lp(v, v + host.numel());
    std::vector<double> losses, grad;
    forward_backward(p, lp, losses, grad);
    ctx->saved_data["grad"] = tensor(grad, log_probs.shape());
    return tensor(losses, {p.batch}).to(log_probs.dtype()).to(log_probs.device());
  }
  static std::vector<Tensor> backward(autograd::Context* ctx, std::vector<Tensor> grads) {
    const auto& grad = std::any_cast<const Tensor&>(ctx->saved_data["grad"]);
    const Tensor& upstream = grads[0];  // (N)
    const Tensor scaled = mul(grad.to(upstream.dtype()).to(upstream.device()),
                              reshape(upstream, {1, upstream.size(0), 1}));
    return {scaled, Tensor()};
  }
};

}  // namespace

Tensor ctc_loss(const Tensor& log_probs_in, const Tensor& targets, const Tensor& input_lengths,
                const Tensor& target_lengths, std::int64_t blank, Reduction reduction,
                bool zero_infinity) {
  LG_PROFILE_OP(log_probs_in, targets);
  const char* op = "ctc_loss";
  autograd::check_floating_input(op, log_probs_in);
  LG_CHECK_SHAPE(log_probs_in.dim() == 2 || log_probs_in.dim() == 3, op,
                 ": expected log_probs (T, N, C) or unbatched (T, C), got shape ",
                 log_probs_in.shape());
  const bool batched = log_probs_in.dim() == 3;
  const Tensor log_probs = batched ? log_probs_in : unsqueeze(log_probs_in, 1);
  CtcProblem p;
  p.steps = log_probs.size(0);
  p.batch = log_probs.size(1);
  p.classes = log_probs.size(2);
  p.blank = blank;
  p.zero_infinity = zero_infinity;
  LG_CHECK(blank >= 0 && blank < p.classes, op, ": blank ", blank, " is not a class in [0, ",
           p.classes, ")");
  p.input_lengths = host_integers(op, "input_lengths", input_lengths);
  p.target_lengths = host_integers(op, "target_lengths", target_lengths);
  const auto n = static_cast<std::size_t>(p.batch);
  LG_CHECK_SHAPE(p.input_lengths.size() == n && p.target_lengths.size() == n, op, ": expected ",
                 p.batch, " input and target lengths for log_probs of shape ", log_probs_in.shape(),
                 ", got ", p.input_lengths.size(), " and ", p.target_lengths.size());
  const std::vector<std::int64_t> labels = host_integers(op, "targets", targets);
  // (N, S) padded, or every sample's labels one after another (1-d, or (S) unbatched).
  const bool padded = batched && targets.dim() == 2;
  LG_CHECK_SHAPE(padded || targets.dim() == 1, op, ": expected targets (N, S) or 1-d, got shape ",
                 targets.shape());
  LG_CHECK_SHAPE(!padded || targets.size(0) == p.batch, op, ": expected targets of ", p.batch,
                 " rows for log_probs of shape ", log_probs_in.shape(), ", got ", targets.shape());
  std::size_t next = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const std::int64_t in_len = p.input_lengths[i], tgt_len = p.target_lengths[i];
    LG_CHECK_SHAPE(in_len >= 0 && in_len <= p.steps, op, ": input length ", in_len, " of sample ",
                   i, " is not in [0, ", p.steps, "]");
    LG_CHECK_SHAPE(
        tgt_len >= 0 && (padded ? tgt_len <= targets.size(1)
                                : next + static_cast<std::size_t>(tgt_len) <= labels.size()),
        op, ": target length ", tgt_len, " of sample ", i, " runs past the targets (",
        targets.shape(), ")");
    const std::size_t start = padded ? i * static_cast<std::size_t>(targets.size(1)) : next;
    std::vector<std::int64_t> row(labels.begin() + static_cast<std::ptrdiff_t>(start),
                                  labels.begin() + static_cast<std::ptrdiff_t>(start + tgt_len));
    for (const std::int64_t c : row) {
      LG_CHECK(c >= 0 && c < p.classes && c != blank, op, ": label ", c, " of sample ", i,
               " is not a class in [0, ", p.classes, ") other than blank ", blank);
    }
    p.targets.push_back(std::move(row));
    if (!padded) next += static_cast<std::size_t>(tgt_len);
  }
  LG_CHECK_SHAPE(padded || next == labels.size(), op, ": the target lengths sum to ", next,
                 ", but the 1-d targets hold ", labels.size(), " labels");
  Tensor losses = CtcLosses::apply(log_probs, p);
  if (reduction == Reduction::Mean) {
    std::vector<double> divisors;
    for (const std::int64_t len : p.target_lengths)
      divisors.push_back(static_cast<double>(std::max<std::int64_t>(len, 1)));
    losses = div(losses, tensor(divisors, {p.batch}).to(losses.dtype()).to(losses.device()));
    return batched ? autograd::reduce_losses(losses, Reduction::Mean) : reshape(losses, {});
  }
  if (!batched) return reshape(losses, {});
  return autograd::reduce_losses(losses, reduction);
}

}  // namespace leangrad
