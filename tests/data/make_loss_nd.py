"""PyTorch reference cases for cross_entropy and nll_loss on input of any rank
(tests/kernels/test_loss_options.cpp, LossNdReference): input (N, C, d1, ..., dk) with class
indices (N, d1, ..., dk), and unbatched input (C,) with a 0-d class index, each with a class
weight, ignore_index, label_smoothing, class-probability targets (the input's shape) and every
reduction. The cases hold what make_loss_options.py's hold: float64 inputs "x", the target
"target" (int64 indices or float64 probabilities), the class weight "weight" when there is one,
the upstream gradient "g", the output "y" (its shape is compared too: None gives the target's
shape) and the gradients "dx" (and "dtarget" for probability targets). params: op, reduction,
ignore_index, label_smoothing.
Run with Debian's python3-torch: /usr/bin/python3 tests/data/make_loss_nd.py
"""
import torch
import torch.nn.functional as F

from reference import write
from torch_cases import class_loss_case, expect_error, leaf

torch.manual_seed(0)
torch.set_default_dtype(torch.float64)

cases = []
C = 4
WEIGHT = torch.tensor([0.5, 2.0, 1.25, 3.0])


def logits(*shape):
    return leaf(*shape, low=-3, high=3)


def log_probabilities(*shape):
    class_dim = 0 if len(shape) == 1 else 1
    return F.log_softmax(torch.randn(*shape) * 2, class_dim).detach().requires_grad_()


def probabilities(*shape):
    """Class probabilities along the class dim (non-negative, summing to 1)."""
    class_dim = 0 if len(shape) == 1 else 1
    return torch.softmax(torch.randn(*shape) * 2, dim=class_dim).requires_grad_()


def class_indices(shape, ignored=(), ignore_index=-100):
    """Classes in [0, C), with the flat positions in `ignored` set to ignore_index."""
    t = torch.randint(0, C, shape)
    flat = t.view(-1)
    for i in ignored:
        flat[i] = ignore_index
    return t


def case(*args, **kwargs):
    cases.append(class_loss_case(*args, **kwargs))


# (N, C, d1) and (N, C, d1, d2): two positions ignored (-100), each option, each reduction.
for rank, shape in [("3d", (3, C, 5)), ("4d", (2, C, 3, 2))]:
    target_shape = (shape[0],) + shape[2:]
    for r in ["mean", "sum", "none"]:
        case(f"cross_entropy_{rank}_{r}", "cross_entropy", logits(*shape),
             class_indices(target_shape, ignored=(1, 4)), reduction=r)
        case(f"cross_entropy_{rank}_weight_{r}", "cross_entropy", logits(*shape),
             class_indices(target_shape, ignored=(1, 4)), WEIGHT, reduction=r)
        case(f"nll_loss_{rank}_weight_{r}", "nll_loss", log_probabilities(*shape),
             class_indices(target_shape, ignored=(0, 5)), WEIGHT, reduction=r)
        case(f"cross_entropy_{rank}_weight_smoothing_{r}", "cross_entropy", logits(*shape),
             class_indices(target_shape, ignored=(2,)), WEIGHT, reduction=r,
             label_smoothing=0.2)
        case(f"cross_entropy_{rank}_probabilities_{r}", "cross_entropy", logits(*shape),
             probabilities(*shape), WEIGHT, reduction=r, label_smoothing=0.1)
# An ignore_index that is a class (2) in (N, C, d1, d2, d3), with weight and smoothing.
case("cross_entropy_5d_ignore_class_weight_smoothing_none", "cross_entropy",
     logits(2, C, 2, 3, 2), class_indices((2, 2, 3, 2)), WEIGHT, reduction="none",
     ignore_index=2, label_smoothing=0.3)
case("nll_loss_5d_ignore_class_mean", "nll_loss", log_probabilities(2, C, 2, 3, 2),
     class_indices((2, 2, 3, 2)), reduction="mean", ignore_index=2)

# Unbatched: input (C,) with a 0-d class index, or (C,) probabilities.
for r in ["mean", "sum", "none"]:
    case(f"cross_entropy_unbatched_{r}", "cross_entropy", logits(C), torch.tensor(2), reduction=r)
    case(f"cross_entropy_unbatched_weight_smoothing_{r}", "cross_entropy", logits(C),
         torch.tensor(3), WEIGHT, reduction=r, label_smoothing=0.25)
    case(f"nll_loss_unbatched_weight_{r}", "nll_loss", log_probabilities(C), torch.tensor(1),
         WEIGHT, reduction=r)
    case(f"cross_entropy_unbatched_probabilities_{r}", "cross_entropy", logits(C),
         probabilities(C), WEIGHT, reduction=r, label_smoothing=0.1)
    # An ignored 0-d target: 0 under None and Sum, 0 / 0 = NaN under Mean (values only).
    case(f"cross_entropy_unbatched_ignored_{r}", "cross_entropy", logits(C), torch.tensor(-100),
         reduction=r)
# Every position ignored in (N, C, d1): Mean is 0 / 0 = NaN, as with rows.
case("cross_entropy_3d_all_ignored_mean", "cross_entropy", logits(2, C, 3),
     torch.full((2, 3), -100), WEIGHT)


# PyTorch refuses these too (rows of the Losses misuse table expect an Error:
# tests/misuse/test_misuse_nn_functions.cpp).
long = torch.int64
expect_error("target (2, 4) for input (2, 4, 3)",
             lambda: F.cross_entropy(torch.zeros(2, 4, 3), torch.zeros(2, 4, dtype=long)))
expect_error("target (2, 6) for input (2, 4, 3, 2)",
             lambda: F.nll_loss(torch.zeros(2, 4, 3, 2), torch.zeros(2, 6, dtype=long)))
expect_error("target (1,) for unbatched input (4,)",
             lambda: F.cross_entropy(torch.zeros(4), torch.tensor([1])))
expect_error("a float target (2, 3) for input (2, 4, 3)",
             lambda: F.cross_entropy(torch.zeros(2, 4, 3), torch.zeros(2, 3)))

write("loss_nd.json", "make_loss_nd.py", cases)
