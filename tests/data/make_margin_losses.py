"""PyTorch 1.13's values and gradients of margin_ranking_loss, hinge_embedding_loss,
soft_margin_loss, multilabel_soft_margin_loss, cosine_similarity, pairwise_distance,
cosine_embedding_loss and triplet_margin_loss (tests/autograd/test_margin_losses.cpp), in
float64 and float32. Inputs include each loss's kinks, where the clamped term is exactly 0 (PyTorch
passes the gradient of the linear side there: its clamp's mask is input >= min), targets that
are neither 1 nor -1, logits out to +-800 (where multilabel_soft_margin_loss's logsigmoid stays
finite), the broadcasts PyTorch allows, weights and the reductions. soft_margin_loss's operand
products stay within +-80: past that PyTorch's log1p(exp) overflows to inf, where leangrad's
stays finite (tested without PyTorch). Each case holds the operands, "y", the fixed weights "w"
of sum(y * w), and the gradient "d<name>" of that sum for each operand PyTorch differentiates
(params "grad": the operands asked; none written where PyTorch gives None). The distances
include vectors of norm below eps and of 0 (cosine_similarity clamps each norm, passing the
gradient through), a distance of exactly 0 (the norm's gradient is 0 there), ties of the
infinity norm (the gradient split among them), and triplets where swap picks the other negative.
Run with Debian's python3-torch: /usr/bin/python3 tests/data/make_margin_losses.py
"""
import torch
import torch.nn.functional as F

from reference import write

cases = []


def case(name, fn, operands, params, grad=None):
    grad = list(operands) if grad is None else grad
    for dtype in (torch.float64, torch.float32):
        ts = {k: torch.tensor(v, dtype=dtype).requires_grad_(k in grad)
              for k, v in operands.items()}
        y = fn(**ts)
        w = torch.linspace(0.5, 1.5, y.numel(), dtype=dtype).reshape(y.shape)
        (y * w).sum().backward()
        suffix = "f64" if dtype == torch.float64 else "f32"
        tensors = {k: v.detach() for k, v in ts.items()}
        tensors.update({"y": y.detach(), "w": w})
        for k in grad:
            if ts[k].grad is not None:
                tensors["d" + k] = ts[k].grad
        cases.append({"name": f"{name}_{suffix}",
                      "params": dict(params, op=name.split(":")[0], grad=grad),
                      "tensors": tensors})


# margin_ranking_loss: kinks where -t * (a - b) + margin is exactly 0.
A = [[1.0, 2.0, -0.5, 3.0], [0.25, -1.0, 0.0, 7.0]]
B = [[1.0, 1.0, 0.5, -2.0], [0.75, -1.5, 0.0, 6.5]]
T = [[1.0, 1.0, -1.0, -1.0], [1.0, -1.0, 1.0, 0.5]]
for margin in (0.0, 0.5):
    case(f"margin_ranking_loss:margin{margin}",
         lambda a, b, t, m=margin: F.margin_ranking_loss(a, b, t, margin=m, reduction="none"),
         {"a": A, "b": B, "t": T}, {"margin": margin, "reduction": "none"})
case("margin_ranking_loss:broadcast_sum",
     lambda a, b, t: F.margin_ranking_loss(a, b, t, margin=0.25, reduction="sum"),
     {"a": [[1.0, -2.0, 0.5]], "b": [[0.75], [-1.0]], "t": [[1.0, -1.0, 1.0]]},
     {"margin": 0.25, "reduction": "sum"})

# hinge_embedding_loss: margin - x exactly 0, targets 1, -1, 0 and 0.5 (both terms).
X = [[0.0, 1.0, 2.5, -0.5], [3.0, 0.25, 1.0, 2.5], [-2.0, 0.7, 1e3, -1e3]]
HT = [[-1.0, -1.0, -1.0, -1.0], [1.0, 1.0, 0.0, 0.5], [-1.0, 1.0, -1.0, 1.0]]
for margin in (1.0, 2.5):
    case(f"hinge_embedding_loss:margin{margin}",
         lambda x, t, m=margin: F.hinge_embedding_loss(x, t, margin=m, reduction="none"),
         {"x": X, "t": HT}, {"margin": margin, "reduction": "none"})
case("hinge_embedding_loss:broadcast_mean",
     lambda x, t: F.hinge_embedding_loss(x, t, reduction="mean"),
     {"x": X, "t": [1.0, -1.0, -1.0, 0.0]}, {"margin": 1.0, "reduction": "mean"})

# soft_margin_loss: products 0 and out to +-80; soft targets; a target broadcast to the input.
SX = [[0.0, 1.0, -1.0, 3.0], [-80.0, 80.0, 0.5, -17.0], [1e-3, -2.0, 40.0, -0.25]]
ST = [[1.0, -1.0, 1.0, -1.0], [1.0, 1.0, 0.3, -1.0], [-1.0, 1.0, -1.0, 2.0]]
case("soft_margin_loss", lambda x, t: F.soft_margin_loss(x, t, reduction="none"),
     {"x": SX, "t": ST}, {"reduction": "none"}, grad=["x"])
case("soft_margin_loss:broadcast_sum", lambda x, t: F.soft_margin_loss(x, t, reduction="sum"),
     {"x": SX, "t": [1.0, -1.0, -1.0, 1.0]}, {"reduction": "sum"}, grad=["x"])

# multilabel_soft_margin_loss: multi-hot and soft targets, logits out to +-800, a class weight.
MX = [[-800.0, -3.0, 0.0, 2.0], [0.5, 800.0, -30.0, 1e-3], [4.0, -0.7, 30.0, -1.2]]
MT = [[0.0, 1.0, 1.0, 0.0], [1.0, 1.0, 0.0, 0.5], [0.0, 0.25, 1.0, 1.0]]
for red in ("none", "mean", "sum"):
    case(f"multilabel_soft_margin_loss:{red}",
         lambda x, t, red=red: F.multilabel_soft_margin_loss(x, t, reduction=red),
         {"x": MX, "t": MT}, {"reduction": red})
case("multilabel_soft_margin_loss:weight",
     lambda x, t, weight: F.multilabel_soft_margin_loss(x, t, weight=weight, reduction="none"),
     {"x": MX, "t": MT, "weight": [0.5, 2.0, 1.0, 3.0]}, {"reduction": "none"})
case("multilabel_soft_margin_loss:unbatched",
     lambda x, t: F.multilabel_soft_margin_loss(x, t, reduction="none"),
     {"x": [1.5, -0.5, 0.0], "t": [1.0, 0.0, 1.0]}, {"reduction": "none"})
case("multilabel_soft_margin_loss:target_broadcast",
     lambda x, t: F.multilabel_soft_margin_loss(x, t, reduction="sum"),
     {"x": MX, "t": [1.0, 0.0, 1.0, 0.0]}, {"reduction": "sum"})

# cosine_similarity: a vector of norm 1e-10 (below eps), one of 0, large magnitudes, broadcasting.
CA = [[3.0, 4.0, 0.0], [1e-10, 0.0, 0.0], [0.0, 0.0, 0.0], [1e15, -2e15, 3e15]]
CB = [[1e-10, 0.0, 0.0], [3.0, 4.0, 0.0], [1.0, 2.0, 3.0], [-1.0, 0.5, 2.0]]
case("cosine_similarity:dim1", lambda a, b: F.cosine_similarity(a, b, dim=1),
     {"a": CA, "b": CB}, {"dim": 1, "eps": 1e-8, "reduction": "none"})
case("cosine_similarity:dim0_eps", lambda a, b: F.cosine_similarity(a, b, dim=0, eps=0.5),
     {"a": CA, "b": CB}, {"dim": 0, "eps": 0.5, "reduction": "none"})
case("cosine_similarity:broadcast", lambda a, b: F.cosine_similarity(a, b, dim=-1),
     {"a": CA, "b": [0.5, -1.0, 2.0]}, {"dim": -1, "eps": 1e-8, "reduction": "none"})

# pairwise_distance: x1 - x2 + eps exactly 0 in the second row; p 1, 2, 3 and infinity.
PA = [[1.0, -2.0, 0.5], [0.0, 0.0, 0.0], [3.0, 0.25, -1.0]]
PB = [[0.0, 1.0, 0.5], [1e-6, 1e-6, 1e-6], [-1.0, 0.25, 2.0]]
for p in (1.0, 2.0, 3.0):
    case(f"pairwise_distance:p{p}", lambda a, b, p=p: F.pairwise_distance(a, b, p=p),
         {"a": PA, "b": PB}, {"p": p, "eps": 1e-6, "keepdim": False, "reduction": "none"})
# Infinity norm with eps 0: ties of |x1 - x2| in the first and third rows split the gradient.
case("pairwise_distance:inf", lambda a, b: F.pairwise_distance(a, b, p=float("inf"), eps=0.0),
     {"a": [[1.0, -1.0, 0.5], [0.0, 2.0, 0.0], [3.0, -3.0, 3.0]], "b": [[0.0] * 3] * 3},
     {"p": "inf", "eps": 0.0, "keepdim": False, "reduction": "none"})
case("pairwise_distance:broadcast_keepdim",
     lambda a, b: F.pairwise_distance(a, b, p=2.0, eps=0.1, keepdim=True),
     {"a": PA, "b": [0.5, -0.5, 1.0]}, {"p": 2.0, "eps": 0.1, "keepdim": True,
                                          "reduction": "none"})

# cosine_embedding_loss: targets 1, -1 and 0, a zero vector (the 1e-12 floor), margins.
EA = [[3.0, 4.0, 0.0], [0.0, 0.0, 0.0], [1.0, 2.0, 3.0], [-1.0, 0.5, 2.0]]
EB = [[1.0, 0.0, 0.0], [3.0, 4.0, 0.0], [1.0, 2.0, 2.9], [1.0, -0.5, -2.0]]
ET = [1.0, -1.0, -1.0, 0.0]
for margin in (0.0, 0.5):
    case(f"cosine_embedding_loss:margin{margin}",
         lambda a, b, t, m=margin: F.cosine_embedding_loss(a, b, t, margin=m, reduction="none"),
         {"a": EA, "b": EB, "t": ET}, {"margin": margin, "reduction": "none"})
case("cosine_embedding_loss:unbatched", lambda a, b, t: F.cosine_embedding_loss(
         a, b, t, margin=-0.2, reduction="sum"),
     {"a": [1.0, 2.0, -1.0], "b": [0.5, -1.0, 3.0], "t": -1.0},
     {"margin": -0.2, "reduction": "sum"})

# triplet_margin_loss: swap picking d(positive, negative) in the second row; p 2 and 1.
TA = [[0.0, 0.0, 0.0], [1.0, 1.0, 0.0], [2.0, -1.0, 0.5]]
TP = [[1.0, 0.0, 0.0], [0.0, 3.0, 0.0], [2.5, -1.0, 0.0]]
TN = [[0.0, 2.0, 0.0], [0.0, 2.0, 0.5], [0.0, 0.0, 0.0]]
for p, swap, margin in ((2.0, False, 1.0), (2.0, True, 1.0), (1.0, True, 2.0)):
    case(f"triplet_margin_loss:p{p}_swap{int(swap)}",
         lambda a, b, n, p=p, swap=swap, margin=margin: F.triplet_margin_loss(
             a, b, n, margin=margin, p=p, swap=swap, reduction="none"),
         {"a": TA, "b": TP, "n": TN}, {"margin": margin, "p": p, "eps": 1e-6, "swap": swap,
                                       "reduction": "none"})
case("triplet_margin_loss:broadcast_mean", lambda a, b, n: F.triplet_margin_loss(
         a, b, n, margin=0.5, reduction="mean"),
     {"a": TA, "b": [[1.0, 0.5, 0.0]], "n": TN}, {"margin": 0.5, "p": 2.0, "eps": 1e-6,
                                                  "swap": False, "reduction": "mean"})

write("margin_losses.json", "make_margin_losses.py", cases)
