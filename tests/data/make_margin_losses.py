"""PyTorch 1.13's values and gradients of margin_ranking_loss, hinge_embedding_loss,
soft_margin_loss and multilabel_soft_margin_loss (tests/autograd/test_margin_losses.cpp), in
float64 and float32. Inputs include each loss's kinks, where the clamped term is exactly 0 (PyTorch
passes the gradient of the linear side there: its clamp's mask is input >= min), targets that
are neither 1 nor -1, logits out to +-800 (where multilabel_soft_margin_loss's logsigmoid stays
finite), the broadcasts PyTorch allows, weights and the reductions. soft_margin_loss's operand
products stay within +-80: past that PyTorch's log1p(exp) overflows to inf, where leangrad's
stays finite (tested without PyTorch). Each case holds the operands, "y", the fixed weights "w"
of sum(y * w), and the gradient "d<name>" of that sum for each operand PyTorch differentiates
(params "grad": the operands asked; none written where PyTorch gives None).
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

write("margin_losses.json", "make_margin_losses.py", cases)
