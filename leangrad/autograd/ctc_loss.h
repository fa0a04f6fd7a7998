// The connectionist temporal classification loss, as torch.nn.functional.ctc_loss: the negative
// log-likelihood of each target sequence summed over every alignment of it to the input's steps
// (blanks between and around its labels, repeats merged), by the forward-backward recursion of
// Graves et al. 2006 in log space (Note [CTC by forward-backward] in kernels/ctc.cpp).
//   Tensor loss = ctc_loss(log_softmax(logits, 2), targets, input_lengths, target_lengths);
#pragma once

#include <cstdint>

#include <leangrad/autograd/nn_functions.h>
#include <leangrad/core/tensor.h>

namespace leangrad {

// log_probs (T, N, C) (log-probabilities over C classes, blank among them) or unbatched (T, C);
// targets (N, S) padded or 1-d (the N sequences one after another), or (S) unbatched, integral,
// each label in [0, C) and not blank; input_lengths and target_lengths (N) (0-d unbatched),
// integral, on any device (read on the host). Reduction::None gives (N) losses, Sum their sum,
// Mean the mean of each loss divided by its target length (at least 1), as PyTorch's.
// zero_infinity: an impossible target (no alignment fits its input length) gives 0 and a zero
// gradient instead of inf. The gradient is that of the loss as a function of log_probs (where
// PyTorch's adds exp(log_probs), which only a log_softmax before it cancels; the two agree on
// the gradient of the logits). Computed in double on the host, whatever the device, the samples
// split across threads; not differentiable twice, as PyTorch's.
Tensor ctc_loss(const Tensor& log_probs, const Tensor& targets, const Tensor& input_lengths,
                const Tensor& target_lengths, std::int64_t blank = 0,
                Reduction reduction = Reduction::Mean, bool zero_infinity = false);

}  // namespace leangrad
