// ctc_loss (autograd/ctc_loss.h).
#include <leangrad/autograd/ctc_loss.h>

#include <algorithm>
#include <vector>

#include <leangrad/autograd/custom_function.h>
#include <leangrad/autograd/functions.h>
#include <leangrad/autograd/grad_mode.h>
#include <leangrad/autograd/nn_internal.h>
#include <leangrad/core/creation.h>
#include <leangrad/core/error.h>
#include <leangrad/core/profiler.h>
#include <leangrad/kernels/ctc.h>

namespace leangrad {

// The recursions are kernels/ctc.cpp's (Note [CTC by forward-backward] there), on the host in
// double; this file checks the arguments and makes them one autograd node.

namespace {

using kernels::CtcProblem;

// Integral values of a tensor of at most 1 dim, on the host; `what` names it in the Error.
std::vector<std::int64_t> host_integers(const char* op, const char* what, const Tensor& t) {
  LG_CHECK(t.defined(), op, ": ", what, " is an undefined Tensor()");
  LG_CHECK_DTYPE(is_integral(t.dtype()), op, ": expected integral ", what, ", got ", t.dtype());
  const NoGradGuard no_grad;
  const Tensor values = t.to(Device::cpu()).to(kInt64).contiguous();
  const std::int64_t* v = values.data_ptr<std::int64_t>();
  return std::vector<std::int64_t>(v, v + values.numel());
}

// One node: the (N) losses from log_probs (T, N, C), the gradient kept from forward.
struct CtcLosses : autograd::Function<CtcLosses> {
  static Tensor forward(autograd::Context* ctx, const Tensor& log_probs, const CtcProblem& p) {
    const Tensor host = log_probs.to(Device::cpu()).to(kFloat64).contiguous();
    std::vector<double> losses, grad;
    kernels::ctc_forward_backward(p, host.data_ptr<double>(), losses, grad);
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
  const std::vector<std::int64_t> lengths = host_integers(op, "target_lengths", target_lengths);
  const auto n = static_cast<std::size_t>(p.batch);
  LG_CHECK_SHAPE(p.input_lengths.size() == n && lengths.size() == n, op, ": expected ", p.batch,
                 " input and target lengths for log_probs of shape ", log_probs_in.shape(),
                 ", got ", p.input_lengths.size(), " and ", lengths.size());
  const std::vector<std::int64_t> labels = host_integers(op, "targets", targets);
  // (N, S) padded, or every sample's labels one after another (1-d, or (S) unbatched).
  const bool padded = batched && targets.dim() == 2;
  LG_CHECK_SHAPE(padded || targets.dim() == 1, op, ": expected targets (N, S) or 1-d, got shape ",
                 targets.shape());
  LG_CHECK_SHAPE(!padded || targets.size(0) == p.batch, op, ": expected targets of ", p.batch,
                 " rows for log_probs of shape ", log_probs_in.shape(), ", got ", targets.shape());
  std::size_t next = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const std::int64_t in_len = p.input_lengths[i], tgt_len = lengths[i];
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
    for (const std::int64_t len : lengths)
      divisors.push_back(static_cast<double>(std::max<std::int64_t>(len, 1)));
    losses = div(losses, tensor(divisors, {p.batch}).to(losses.dtype()).to(losses.device()));
    return batched ? autograd::reduce_losses(losses, Reduction::Mean) : reshape(losses, {});
  }
  if (!batched) return reshape(losses, {});
  return autograd::reduce_losses(losses, reduction);
}

}  // namespace leangrad
