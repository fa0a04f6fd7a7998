"""PyTorch reference cases for the loss options (tests/kernels/test_loss_options.cpp).

cross_entropy and nll_loss with a class weight, label_smoothing and class-probability targets,
with every reduction and with ignored samples. Each case holds float64 inputs ("x", the target
"target" (int64 indices or float64 probabilities), the class weight "weight" when there is one),
the upstream gradient "g", the output "y" and the gradients "dx" (and "dtarget" for probability
targets, which PyTorch differentiates too). params: op, reduction, ignore_index, label_smoothing.
Run with Debian's python3-torch: /usr/bin/python3 tests/data/make_loss_options.py
"""
import torch
import torch.nn.functional as F

from reference import write
from torch_cases import class_loss_case, expect_error, leaf

torch.manual_seed(0)
torch.set_default_dtype(torch.float64)


def probabilities(*shape):
    """Rows of class probabilities along dim 1 (non-negative, summing to 1)."""
    return torch.softmax(torch.randn(*shape) * 2, dim=1).requires_grad_()


cases = []


def case(*args, **kwargs):
    cases.append(class_loss_case(*args, **kwargs))


C = 5
# Class indices: one sample ignored (-100), class 4 twice, class 3 never.
target = torch.tensor([1, 0, 4, -100, 2, 4, 0], dtype=torch.int64)
weight = torch.tensor([0.5, 2.0, 1.25, 3.0, 0.75])
for r in ["mean", "sum", "none"]:
    case("cross_entropy_weight_" + r, "cross_entropy", leaf(7, C, low=-3, high=3), target, weight,
         reduction=r)
    case("nll_loss_weight_" + r, "nll_loss",
         F.log_softmax(torch.randn(7, C) * 2, 1).detach().requires_grad_(), target, weight,
         reduction=r)
    case("cross_entropy_smoothing_" + r, "cross_entropy", leaf(7, C, low=-3, high=3), target,
         reduction=r, label_smoothing=0.1)
    case("cross_entropy_weight_smoothing_" + r, "cross_entropy", leaf(7, C, low=-3, high=3),
         target, weight, reduction=r, label_smoothing=0.25)
    case("cross_entropy_probabilities_" + r, "cross_entropy", leaf(6, C, low=-3, high=3),
         probabilities(6, C), reduction=r)
    case("cross_entropy_probabilities_weight_smoothing_" + r, "cross_entropy",
         leaf(6, C, low=-3, high=3), probabilities(6, C), weight, reduction=r,
         label_smoothing=0.2)
# An ignore_index that is a class (2), with weight and smoothing; label_smoothing 1 (uniform).
target_no_pad = torch.tensor([1, 0, 4, 2, 2, 4, 0], dtype=torch.int64)
case("cross_entropy_weight_smoothing_ignore_class", "cross_entropy", leaf(7, C, low=-3, high=3),
     target_no_pad, weight, ignore_index=2, label_smoothing=0.3)
case("cross_entropy_weight_smoothing_one", "cross_entropy", leaf(7, C, low=-3, high=3), target,
     weight, label_smoothing=1.0)
case("nll_loss_weight_ignore_class", "nll_loss",
     F.log_softmax(torch.randn(7, C), 1).detach().requires_grad_(), target_no_pad, weight,
     ignore_index=4)
# Probability targets over (N, C, d1, d2); a negative ignore_index other than -100 ignores nothing.
for r in ["mean", "none"]:
    case("cross_entropy_probabilities_spatial_" + r, "cross_entropy", leaf(2, 4, 3, 2, low=-2, high=2),
         probabilities(2, 4, 3, 2), torch.tensor([1.5, 0.25, 1.0, 2.0]), reduction=r,
         ignore_index=-1, label_smoothing=0.15)
# Under Mean, a total weight of 0 gives 0 / 0 = NaN (values only: no gradient is compared).
zero_weight = torch.tensor([0.0, 0.0, 1.0, 1.0, 1.0])
case("cross_entropy_zero_total_weight", "cross_entropy", leaf(3, C), torch.tensor([0, 1, -100]),
     zero_weight)
case("cross_entropy_zero_total_weight_smoothing", "cross_entropy", leaf(3, C),
     torch.tensor([0, 1, -100]), zero_weight, label_smoothing=0.1)
case("nll_loss_zero_total_weight", "nll_loss", leaf(3, C), torch.tensor([0, 1, -100]),
     zero_weight)


# PyTorch refuses these too (each is a row of the Losses misuse table, which expects an Error:
# tests/misuse/test_misuse_nn_functions.cpp).
x, t = torch.zeros(3, 4), torch.tensor([0, 1, 2])
expect_error("a weight of 3 for 4 classes", lambda: F.cross_entropy(x, t, weight=torch.ones(3)))
expect_error("a weight of shape (4, 1)", lambda: F.nll_loss(x, t, weight=torch.ones(4, 1)))
expect_error("a float64 weight for float32 input",
             lambda: F.cross_entropy(x.float(), t, weight=torch.ones(4, dtype=torch.float64)))
expect_error("label_smoothing 1.5", lambda: F.cross_entropy(x, t, label_smoothing=1.5))
expect_error("int64 probabilities", lambda: F.cross_entropy(x, torch.zeros(3, 4, dtype=torch.int64)))
expect_error("ignore_index 0 with probabilities",
             lambda: F.cross_entropy(x, torch.zeros(3, 4), ignore_index=0))
# Where leangrad is stricter (docs/api-notes.md): PyTorch 1.13 ignores a negative label_smoothing
# and promotes a probability target of another floating dtype.
F.cross_entropy(x, t, label_smoothing=-0.1)
F.cross_entropy(x.float(), torch.zeros(3, 4, dtype=torch.float64))

write("loss_options.json", "make_loss_options.py", cases)
