"""PyTorch 1.13's values and gradients of the activation functions (tests/autograd/test_activations.cpp):
leaky_relu, elu, selu, silu, mish, gelu (exact and tanh), softplus, hardtanh, relu6, hardswish,
hardsigmoid, logsigmoid, softsign, tanhshrink, celu, softshrink, hardshrink, threshold, and erf,
expm1, log1p, in float64 and float32, on inputs that include each function's kinks (0,
softplus's threshold, hardtanh's bounds) and large magnitudes. Each case holds the input "x", the
output "y" and "dx", the gradient of sum(y * w) for the fixed weights "w" (so every element's
gradient is scaled differently and a wrong element cannot hide). The parameters are the
function's arguments. prelu and glu cases hold inputs with dims, a random upstream gradient "g"
and the gradient of every input ("dx", "dweight").
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

# Session 42's activations. hardswish's gradient at -3 is the middle piece's (-1/2), at 3 the
# right side's (1: PyTorch's vectorised kernel, which computes these 16 elements; its scalar tail
# takes 3/2 there); hardsigmoid's is 0 at both; the shrinks' at +-lambda 0; threshold's at the
# threshold 0.
case("hardswish", F.hardswish, extra=[-3.0, 3.0, -2.999, 2.999], op="hardswish")
case("hardsigmoid", F.hardsigmoid, extra=[-3.0, 3.0, -2.999, 2.999], op="hardsigmoid")
case("logsigmoid", F.logsigmoid, extra=[-800.0, 800.0, -1e-9], op="log_sigmoid")
case("softsign", F.softsign, extra=[1e6, -1e6], op="softsign")
case("tanhshrink", F.tanhshrink, extra=[1e-4, -0.01], op="tanhshrink")
case("celu", F.celu, extra=[-800.0], op="celu", alpha=1.0)
case("celu_0.5", lambda x: F.celu(x, 0.5), op="celu", alpha=0.5)
case("softshrink", F.softshrink, extra=[0.5, -0.5], op="softshrink", lambd=0.5)
case("softshrink_2", lambda x: F.softshrink(x, 2.0), extra=[2.0, -2.0], op="softshrink", lambd=2.0)
case("hardshrink", F.hardshrink, extra=[0.5, -0.5], op="hardshrink", lambd=0.5)
case("threshold", lambda x: F.threshold(x, 0.25, -2.0), extra=[0.25], op="threshold",
     threshold=0.25, value=-2.0)

# prelu (one weight, and one per channel) and glu: inputs with dims, gradients of every input.
torch.manual_seed(0)
for name, x_shape, w_shape in [("prelu_channels", (2, 3, 4), (3,)), ("prelu_single", (5, 2), (1,)),
                               ("prelu_channels_2d", (4, 3), (3,))]:
    x = (torch.rand(*x_shape) * 4 - 2).requires_grad_()
    weight = (torch.rand(*w_shape) - 0.5).requires_grad_()
    y = F.prelu(x, weight)
    g = torch.randn(y.shape)
    y.backward(g)
    cases.append({"name": name, "params": {"op": "prelu"},
                  "tensors": {"x": x.detach(), "weight": weight.detach(), "y": y.detach(), "g": g,
                              "dx": x.grad, "dweight": weight.grad}})
for name, x_shape, dim in [("glu_dim_1", (2, 6, 3), 1), ("glu_last", (3, 4), -1)]:
    x = (torch.rand(*x_shape) * 6 - 3).requires_grad_()
    y = F.glu(x, dim)
    g = torch.randn(y.shape)
    y.backward(g)
    cases.append({"name": name, "params": {"op": "glu", "dim": dim},
                  "tensors": {"x": x.detach(), "y": y.detach(), "g": g, "dx": x.grad}})

write("activations.json", "make_activations.py", cases)
