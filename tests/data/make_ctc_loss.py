"""PyTorch 1.13's ctc_loss (tests/autograd/test_ctc_loss.cpp), float64: logits "x" through
log_softmax over the classes, the loss "y", fixed weights "w" of sum(y * w) and its gradient "dx"
with respect to the logits (PyTorch's gradient with respect to log_probs adds exp(log_probs),
which log_softmax's backward cancels; the logits' gradient is the function's). Padded and 1-d
targets, every reduction, blanks other than 0, repeated labels (a blank must sit between them),
input lengths shorter than the input, targets no alignment fits, with and without
zero_infinity (without it the loss is inf and no gradient is written), longer sequences, and a
target whose only alignment is 800 nats below the likeliest classes (found in log space).
Run with Debian's python3-torch: /usr/bin/python3 tests/data/make_ctc_loss.py
"""
import torch
import torch.nn.functional as F

from reference import write

torch.manual_seed(17)
cases = []


def case(name, x, targets, input_lengths, target_lengths, blank=0, reduction="mean",
         zero_infinity=False, differentiate=True):
    x = x.clone().requires_grad_()
    y = F.ctc_loss(F.log_softmax(x, x.dim() - 1), targets, input_lengths, target_lengths,
                   blank=blank, reduction=reduction, zero_infinity=zero_infinity)
    w = torch.linspace(0.5, 1.5, y.numel(), dtype=torch.float64).reshape(y.shape)
    tensors = {"x": x.detach(), "targets": targets, "input_lengths": input_lengths,
               "target_lengths": target_lengths, "y": y.detach(), "w": w}
    if differentiate:
        (y * w).sum().backward()
        tensors["dx"] = x.grad
    cases.append({"name": name, "params": {"blank": blank, "reduction": reduction,
                                           "zero_infinity": zero_infinity},
                  "tensors": tensors})


def logits(*shape):
    return torch.randn(*shape, dtype=torch.float64) * 2


T, N, C = 12, 4, 6
padded = torch.tensor([[1, 2, 2, 3, 0], [4, 4, 4, 0, 0], [5, 1, 3, 2, 5], [2, 0, 0, 0, 0]])
case("padded_mean", logits(T, N, C), padded, torch.tensor([12, 10, 12, 7]),
     torch.tensor([4, 3, 5, 1]))
case("padded_none", logits(T, N, C), padded, torch.tensor([12, 9, 11, 3]),
     torch.tensor([4, 2, 5, 0]), reduction="none")
flat = torch.tensor([1, 2, 1, 3, 3, 0, 2, 1, 2])  # lengths 3, 4, 2; labels avoid blank 4
case("flat_sum_blank_last", logits(10, 3, 5), flat, torch.tensor([10, 8, 5]),
     torch.tensor([3, 4, 2]), blank=4, reduction="sum")
# Sample 1 needs 3 steps for labels (1, 1) and has 2: impossible.
impossible = torch.tensor([[2, 3], [1, 1]])
case("impossible_zero_infinity", logits(5, 2, 4), impossible, torch.tensor([5, 2]),
     torch.tensor([2, 2]), reduction="none", zero_infinity=True)
case("impossible_inf", logits(5, 2, 4), impossible, torch.tensor([5, 2]),
     torch.tensor([2, 2]), reduction="none", differentiate=False)
case("unbatched", logits(7, 5), torch.tensor([3, 1, 4]), torch.tensor(7), torch.tensor(3))

# Longer sequences than the cases above (the scaled recursion's many steps).
case("long_sequences", logits(30, 3, 8), torch.randint(1, 8, (3, 9)), torch.tensor([30, 27, 24]),
     torch.tensor([9, 7, 8]), reduction="none")
# Sample 0's only alignment (1, 2) takes label 1 at step 0, 800 nats below the other classes:
# its probability is below double's range in any scaled form, so the loss is found in log space
# (Note [CTC by scaled probabilities]); sample 1 beside it is an ordinary one.
extreme = logits(2, 2, 4)
extreme[0, 0] = torch.tensor([0.0, -800.0, 0.0, 0.0], dtype=torch.float64)
case("underflow_in_log_space", extreme, torch.tensor([[1, 2], [3, 0]]), torch.tensor([2, 2]),
     torch.tensor([2, 1]), reduction="none")

write("ctc_loss.json", "make_ctc_loss.py", cases)
