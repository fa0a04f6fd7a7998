"""PyTorch 1.13's multi_margin_loss, multilabel_margin_loss and
triplet_margin_with_distance_loss (tests/autograd/test_multi_margin_losses.cpp), float64: the
operands, "y", fixed weights "w" of sum(y * w), and the gradient "d<name>" of that sum for each
floating operand. multi_margin_loss with p 1 and 2, margins, a class weight, every reduction and
an unbatched input; multilabel_margin_loss with index rows ended by -1 early, at once and not at
all, and a repeated index; the triplet loss with the default distance, with swap, and with a
cosine distance.
Run with Debian's python3-torch: /usr/bin/python3 tests/data/make_multi_margin_losses.py
"""
import torch
import torch.nn.functional as F

from reference import write

torch.manual_seed(5)
cases = []


def case(name, fn, floating, other, params):
    ts = {k: v.clone().requires_grad_() for k, v in floating.items()}
    y = fn(**ts, **other)
    w = torch.linspace(0.5, 1.5, y.numel(), dtype=torch.float64).reshape(y.shape)
    (y * w).sum().backward()
    tensors = {k: v.detach() for k, v in ts.items()}
    tensors.update(other)
    tensors.update({"y": y.detach(), "w": w})
    for k, v in ts.items():
        tensors["d" + k] = v.grad
    cases.append({"name": name, "params": dict(params, op=name.split(":")[0]),
                  "tensors": tensors})


def randn(*shape):
    return torch.randn(*shape, dtype=torch.float64)


X = randn(4, 5)
Y = torch.tensor([0, 3, 4, 3])
W = torch.tensor([0.5, 1.0, 2.0, 1.5, 0.25], dtype=torch.float64)
for p, margin, reduction, weighted in ((1, 1.0, "mean", False), (2, 0.5, "sum", True),
                                      (1, 2.0, "none", True), (2, 1.0, "none", False)):
    other = {"target": Y}
    if weighted:
        other["weight"] = W
    case(f"multi_margin_loss:p{p}_m{margin}_{reduction}_{'w' if weighted else 'nw'}",
         lambda x, target, weight=None, p=p, margin=margin, reduction=reduction:
         F.multi_margin_loss(x, target, p=p, margin=margin, weight=weight, reduction=reduction),
         {"x": X}, other, {"p": p, "margin": margin, "reduction": reduction})
case("multi_margin_loss:unbatched",
     lambda x, target: F.multi_margin_loss(x, target, reduction="none"),
     {"x": randn(6)}, {"target": torch.tensor(2)}, {"p": 1, "margin": 1.0, "reduction": "none"})

T = torch.tensor([[3, 0, -1, 1, 2], [-1, 1, 2, 3, 4], [4, 2, 0, 1, 3], [1, 1, -1, 0, 0]])
for reduction in ("mean", "none"):
    case(f"multilabel_margin_loss:{reduction}",
         lambda x, target, reduction=reduction:
         F.multilabel_margin_loss(x, target, reduction=reduction),
         {"x": randn(4, 5)}, {"target": T}, {"reduction": reduction})
case("multilabel_margin_loss:unbatched",
     lambda x, target: F.multilabel_margin_loss(x, target, reduction="none"),
     {"x": randn(4)}, {"target": torch.tensor([2, 0, -1, 3])}, {"reduction": "none"})

A, P, N = randn(5, 3), randn(5, 3), randn(5, 3)
case("triplet_margin_with_distance_loss:default",
     lambda a, p, n: F.triplet_margin_with_distance_loss(a, p, n, reduction="none"),
     {"a": A, "p": P, "n": N}, {}, {"distance": "pairwise", "margin": 1.0, "swap": False,
                                     "reduction": "none"})
case("triplet_margin_with_distance_loss:swap",
     lambda a, p, n: F.triplet_margin_with_distance_loss(a, p, n, margin=2.0, swap=True,
                                                         reduction="mean"),
     {"a": A, "p": P, "n": N}, {}, {"distance": "pairwise", "margin": 2.0, "swap": True,
                                     "reduction": "mean"})
case("triplet_margin_with_distance_loss:cosine",
     lambda a, p, n: F.triplet_margin_with_distance_loss(
         a, p, n, distance_function=lambda u, v: 1.0 - F.cosine_similarity(u, v), margin=0.5,
         reduction="sum"),
     {"a": A, "p": P, "n": N}, {}, {"distance": "cosine", "margin": 0.5, "swap": False,
                                     "reduction": "sum"})

write("multi_margin_losses.json", "make_multi_margin_losses.py", cases)
