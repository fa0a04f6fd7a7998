"""PyTorch 1.13's values and gradients of kl_div, poisson_nll_loss and gaussian_nll_loss
(tests/autograd/test_distribution_losses.cpp), per element (reduction none), in float64 and
float32. Inputs include each loss's special points: targets of exactly 0 (kl_div's xlogy, whose
target gradient PyTorch makes NaN; poisson's Stirling term, masked where target <= 1, exactly 1
included), negative targets (NaN), log-probabilities far out (-800, 50), rates of 0 with eps,
variances below eps (clamped, with the gradient passed straight through) and of 0, and each
broadcast the losses allow (input against target; var of the input's shape, with the last dim 1,
or without it). Each case holds the operands ("x", "t", and "var"), "y", the fixed weights "w"
of sum(y * w), and the gradients "dx", "dt" (and "dvar") of that sum; its params name the op and
its arguments. The reductions are cases too ("reduced": a 0-d y), batchmean included.
Run with Debian's python3-torch: /usr/bin/python3 tests/data/make_distribution_losses.py
"""
import warnings

import torch
import torch.nn.functional as F

from reference import write

warnings.simplefilter("ignore")  # kl_div's reduction="mean" warns that it is not batchmean
cases = []


def case(name, fn, operands, params):
    for dtype in (torch.float64, torch.float32):
        ts = {k: torch.tensor(v, dtype=dtype).requires_grad_() for k, v in operands.items()}
        y = fn(**ts)
        w = torch.linspace(0.5, 1.5, y.numel(), dtype=dtype).reshape(y.shape)
        (y * w).sum().backward()
        suffix = "f64" if dtype == torch.float64 else "f32"
        tensors = {k: v.detach() for k, v in ts.items()}
        tensors.update({"y": y.detach(), "w": w})
        for k, v in ts.items():
            tensors["d" + k] = v.grad
        cases.append({"name": f"{name}_{suffix}", "params": dict(params, op=name.split(":")[0]),
                      "tensors": tensors})


# kl_div: log-probabilities against probabilities, zeros (0 * log 0 = 0) and a negative target.
LP = [[-1.2, -0.4, -2.5, 0.0], [-800.0, -1e-3, -30.0, 50.0], [-0.7, -0.7, -3.0, -1.5]]
PT = [[0.3, 0.0, 0.2, 0.5], [0.0, 1.0, 1e-30, 0.25], [0.5, -0.1, 1e-3, 0.75]]
# The reductions without the NaN of the negative target.
PT_VALID = [[0.3, 0.0, 0.2, 0.5], [0.0, 1.0, 1e-30, 0.25], [0.5, 0.2, 1e-3, 0.75]]
for red in ("none", "sum", "mean", "batchmean"):
    case(f"kl_div:{red}", lambda x, t, red=red: F.kl_div(x, t, reduction=red),
         {"x": LP, "t": PT if red == "none" else PT_VALID}, {"reduction": red,
                                                             "log_target": False})
LT = [[-1.2, -800.0, 0.0, -0.5], [-3.0, -1e-3, 2.0, -30.0], [-0.7, -0.7, 0.3, -1.5]]
case("kl_div:log_target", lambda x, t: F.kl_div(x, t, reduction="none", log_target=True),
     {"x": LP, "t": LT}, {"reduction": "none", "log_target": True})
# Broadcasting both ways: a (4,) target against (3, 4) input, and a (3, 1) input against it.
case("kl_div:broadcast", lambda x, t: F.kl_div(x, t, reduction="none"),
     {"x": [[-1.0], [-0.2], [-2.0]], "t": [0.0, 0.1, 0.4, 0.5]},
     {"reduction": "none", "log_target": False})
case("kl_div:batchmean_broadcast", lambda x, t: F.kl_div(x, t, reduction="batchmean"),
     {"x": [[-1.0], [-0.2], [-2.0]], "t": [0.0, 0.1, 0.4, 0.5]},
     {"reduction": "batchmean", "log_target": False})
case("kl_div:batchmean_0d", lambda x, t: F.kl_div(x, t, reduction="batchmean"),
     {"x": -0.5, "t": 0.3}, {"reduction": "batchmean", "log_target": False})

# poisson_nll_loss: rates (log or not) with counts 0, 1 (the Stirling mask's edge), 2 and large.
LR = [[-800.0, -2.0, 0.0, 0.5], [1.0, 3.0, 30.0, -1e-3], [2.0, -0.3, 0.7, 1.5]]
C = [[0.0, 1.0, 2.0, 0.5], [1.0, 7.0, 1e3, 0.0], [3.0, 1.0 + 1e-6, 0.99, 25.0]]
R = [[0.0, 1e-9, 0.5, 1.0], [2.0, 7.0, 1e3, 3.0], [1e-3, 0.25, 4.0, 30.0]]
for log_input in (True, False):
    for full in (False, True):
        rates = LR if log_input else R
        case(f"poisson_nll_loss:log{int(log_input)}_full{int(full)}",
             lambda x, t, li=log_input, fu=full: F.poisson_nll_loss(
                 x, t, log_input=li, full=fu, reduction="none"),
             {"x": rates, "t": C}, {"log_input": log_input, "full": full, "eps": 1e-8,
                                    "reduction": "none"})
case("poisson_nll_loss:eps", lambda x, t: F.poisson_nll_loss(
         x, t, log_input=False, eps=0.25, reduction="none"),
     {"x": R, "t": C}, {"log_input": False, "full": False, "eps": 0.25, "reduction": "none"})
case("poisson_nll_loss:broadcast_sum", lambda x, t: F.poisson_nll_loss(
         x, t, full=True, reduction="sum"),
     {"x": [[0.5], [-1.0]], "t": [0.0, 1.0, 4.0]},
     {"log_input": True, "full": True, "eps": 1e-8, "reduction": "sum"})
case("poisson_nll_loss:mean", lambda x, t: F.poisson_nll_loss(x, t, reduction="mean"),
     {"x": LR, "t": C}, {"log_input": True, "full": False, "eps": 1e-8, "reduction": "mean"})

# gaussian_nll_loss: variances above, at, below eps and 0; each var shape PyTorch takes.
M = [[0.3, -1.2, 2.0, 0.0], [5.0, -0.5, 0.25, 1e3], [0.0, 0.1, -2.0, 1.0]]
Y = [[0.0, -1.0, 2.5, 0.0], [-5.0, 0.5, 0.25, 0.0], [1e-4, 0.1, 2.0, 1.5]]
V = [[1.0, 0.5, 1e-6, 1e-9], [2.0, 0.0, 3.0, 1e4], [1e-7, 0.7, 1.5, 0.25]]
for full in (False, True):
    case(f"gaussian_nll_loss:full{int(full)}", lambda x, t, var, fu=full: F.gaussian_nll_loss(
             x, t, var, full=fu, reduction="none"),
         {"x": M, "t": Y, "var": V}, {"full": full, "eps": 1e-6, "reduction": "none"})
case("gaussian_nll_loss:eps", lambda x, t, var: F.gaussian_nll_loss(
         x, t, var, eps=0.5, reduction="none"),
     {"x": M, "t": Y, "var": V}, {"full": False, "eps": 0.5, "reduction": "none"})
case("gaussian_nll_loss:var_last_dim_1", lambda x, t, var: F.gaussian_nll_loss(
         x, t, var, reduction="none"),
     {"x": M, "t": Y, "var": [[0.5], [1e-8], [2.0]]}, {"full": False, "eps": 1e-6,
                                                       "reduction": "none"})
case("gaussian_nll_loss:var_without_last_dim", lambda x, t, var: F.gaussian_nll_loss(
         x, t, var, reduction="sum"),
     {"x": M, "t": Y, "var": [0.5, 1e-8, 2.0]}, {"full": False, "eps": 1e-6, "reduction": "sum"})
case("gaussian_nll_loss:target_broadcast_mean", lambda x, t, var: F.gaussian_nll_loss(
         x, t, var, full=True, reduction="mean"),
     {"x": M, "t": [0.0, 1.0, -1.0, 2.0], "var": V}, {"full": True, "eps": 1e-6,
                                                      "reduction": "mean"})

write("distribution_losses.json", "make_distribution_losses.py", cases)
