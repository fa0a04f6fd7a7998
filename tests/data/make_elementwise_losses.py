"""PyTorch 1.13's values and gradients of binary_cross_entropy, binary_cross_entropy_with_logits,
smooth_l1_loss and huber_loss (tests/autograd/test_elementwise_losses.cpp), per element
(reduction none), in float64 and float32. Inputs include each loss's special points: probabilities
of exactly 0 and 1 and within 1e-7 of them (where PyTorch clamps the logs at -100 and the input
gradient's denominator at 1e-12), soft targets, logits out to +-800 (where exp overflows),
differences of exactly +-beta and 0, and broadcast weights. Each case holds "x", "t", the
optional "weight" and "pos_weight", "y", the fixed weights "w" of sum(y * w), and the gradients
"dx" and "dt" of that sum.
Run with Debian's python3-torch: /usr/bin/python3 tests/data/make_elementwise_losses.py
"""
import torch
import torch.nn.functional as F

from reference import write

cases = []


def case(name, fn, x, t, extra=None, params=None):
    extra = extra or {}
    for dtype in (torch.float64, torch.float32):
        xs = torch.tensor(x, dtype=dtype).requires_grad_()
        ts = torch.tensor(t, dtype=dtype).requires_grad_()
        ex = {k: torch.tensor(v, dtype=dtype) for k, v in extra.items()}
        y = fn(xs, ts, **ex)
        w = torch.linspace(0.5, 1.5, y.numel(), dtype=dtype).reshape(y.shape)
        (y * w).sum().backward()
        suffix = "f64" if dtype == torch.float64 else "f32"
        tensors = {"x": xs.detach(), "t": ts.detach(), "y": y.detach(), "w": w,
                   "dx": xs.grad, "dt": ts.grad}
        tensors.update(ex)
        cases.append({"name": f"{name}_{suffix}", "params": dict(params or {}, op=name.split(":")[0]),
                      "tensors": tensors})


P = [[0.0, 1e-30, 1e-7, 0.3], [0.5, 0.9, 1 - 1e-7, 1.0], [0.25, 0.75, 0.6, 0.01]]
T = [[0.0, 1.0, 0.0, 0.4], [1.0, 0.2, 1.0, 1.0], [0.25, 0.0, 0.6, 1.0]]
case("bce", lambda x, t: F.binary_cross_entropy(x, t, reduction="none"), P, T)
case("bce:weight", lambda x, t, weight: F.binary_cross_entropy(x, t, weight, reduction="none"),
     P, T, {"weight": [0.5, 2.0, 1.0, 3.0]})

L = [[-800.0, -30.0, -3.0, -1e-3], [0.0, 0.5, 3.0, 30.0], [800.0, -0.7, 1.2, 17.0]]
case("bce_with_logits", lambda x, t: F.binary_cross_entropy_with_logits(x, t, reduction="none"),
     L, T)
case("bce_with_logits:weights",
     lambda x, t, weight, pos_weight: F.binary_cross_entropy_with_logits(
         x, t, weight, reduction="none", pos_weight=pos_weight),
     L, T, {"weight": [[0.5], [2.0], [1.5]], "pos_weight": [2.0, 0.5, 3.0, 1.0]})

D = [[-3.0, -1.0, -0.5, 0.0], [0.25, 0.5, 1.0, 7.0], [-1e-3, 2.0, -2.0, 0.999]]
Z = [[0.0] * 4] * 3
case("smooth_l1", lambda x, t: F.smooth_l1_loss(x, t, reduction="none", beta=1.0), D, Z,
     params={"beta": 1.0})
case("smooth_l1:half", lambda x, t: F.smooth_l1_loss(x, t, reduction="none", beta=0.5), D,
     [[0.5, 0.0, 0.0, 0.25]] * 3, params={"beta": 0.5})
# beta 0 is l1; PyTorch's gradient at a zero difference is not sign(0) there, so none is 0.
case("smooth_l1:zero", lambda x, t: F.smooth_l1_loss(x, t, reduction="none", beta=0.0),
     [[-3.0, -1.0, 0.5, 2.0]], [[0.0, 0.5, 0.0, -1.0]], params={"beta": 0.0})
case("huber", lambda x, t: F.huber_loss(x, t, reduction="none", delta=1.0), D, Z,
     params={"delta": 1.0})
case("huber:2.5", lambda x, t: F.huber_loss(x, t, reduction="none", delta=2.5), D,
     [[0.5, 0.0, -2.0, 0.25]] * 3, params={"delta": 2.5})

write("elementwise_losses.json", "make_elementwise_losses.py", cases)
