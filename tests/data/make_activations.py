"""PyTorch 1.13's values and gradients of the activation functions (tests/autograd/test_activations.cpp):
leaky_relu, elu, selu, silu, mish, gelu (exact and tanh), softplus, hardtanh, relu6, and erf,
expm1, log1p, in float64 and float32, on inputs that include each function's kinks (0,
softplus's threshold, hardtanh's bounds) and large magnitudes. Each case holds the input "x", the
output "y" and "dx", the gradient of sum(y * w) for the fixed weights "w" (so every element's
gradient is scaled differently and a wrong element cannot hide). The parameters are the
function's arguments.
Run with Debian's python3-torch: /usr/bin/python3 tests/data/make_activations.py
"""
import torch
import torch.nn.functional as F

from reference import write

cases = []

# Every function sees these, then its own kinks.
COMMON = [-30.0, -5.0, -1.5, -0.5, -1e-3, 0.0, 1e-3, 0.25, 1.0, 2.5, 7.0, 30.0]


def case(name, fn, extra=(), dtypes=(torch.float64, torch.float32), **params):
    for dtype in dtypes:
        values = sorted(set(COMMON + list(extra)))
        x = torch.tensor(values, dtype=dtype, requires_grad=True)
        w = torch.linspace(0.5, 1.5, len(values), dtype=dtype)
        y = fn(x)
        (y * w).sum().backward()
        suffix = "f64" if dtype == torch.float64 else "f32"
        cases.append({"name": f"{name}_{suffix}", "params": params,
                      "tensors": {"x": x.detach(), "w": w, "y": y.detach(),
                                  "dx": x.grad.detach()}})


case("leaky_relu", lambda x: F.leaky_relu(x), op="leaky_relu", negative_slope=0.01)
case("leaky_relu_0.2", lambda x: F.leaky_relu(x, 0.2), op="leaky_relu", negative_slope=0.2)
case("elu", lambda x: F.elu(x), extra=[-1e-9, -800.0], op="elu", alpha=1.0)
case("elu_0.5", lambda x: F.elu(x, 0.5), op="elu", alpha=0.5)
case("selu", lambda x: F.selu(x), op="selu")
case("silu", lambda x: F.silu(x), op="silu")
case("mish", lambda x: F.mish(x), op="mish")
case("gelu", lambda x: F.gelu(x), op="gelu", approximate="none")
case("gelu_tanh", lambda x: F.gelu(x, approximate="tanh"), op="gelu", approximate="tanh")
case("softplus", lambda x: F.softplus(x), extra=[20.0, 19.999, 20.001, -800.0, 800.0],
     op="softplus", beta=1.0, threshold=20.0)
case("softplus_beta2", lambda x: F.softplus(x, beta=2.0, threshold=10.0),
     extra=[5.0, 4.999, 5.001], op="softplus", beta=2.0, threshold=10.0)
case("hardtanh", lambda x: F.hardtanh(x), extra=[-1.0, 1.0], op="hardtanh", min_val=-1.0,
     max_val=1.0)
case("hardtanh_0_3", lambda x: F.hardtanh(x, 0.0, 3.0), extra=[3.0], op="hardtanh",
     min_val=0.0, max_val=3.0)
case("relu6", lambda x: F.relu6(x), extra=[6.0], op="relu6")
case("erf", torch.erf, extra=[1e-9, -4.0, 6.0], op="erf")
case("expm1", torch.expm1, extra=[1e-9, -1e-12, -800.0], op="expm1")
case("log1p", lambda x: torch.log1p(x.clamp_min(-0.999)), extra=[1e-9, -1e-12, -0.999],
     op="log1p_clamped")

write("activations.json", "make_activations.py", cases)
