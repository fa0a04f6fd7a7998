"""PyTorch 1.13's values and gradients of the unary math functions (tests/autograd/test_unary_math.cpp):
sin, cos, rsqrt, reciprocal, log2, log10, sign, floor, ceil, round and trunc, in float64 and
float32, on inputs that include each function's special points: 0 and -0.0, halves (round takes
them to even), NaN and the infinities, the edges of the domains (log2, log10 and rsqrt of
negatives, reciprocal and rsqrt of 0) and large magnitudes. Each case holds the input "x", the
output "y" and "dx", the gradient of sum(y * w) for the fixed weights "w" (so every element's
gradient is scaled differently and a wrong element cannot hide), and the integral cases hold "x"
and "y" of int64 input.
Run with Debian's python3-torch: /usr/bin/python3 tests/data/make_unary_math.py
"""
import torch

from reference import write

cases = []

INF, NAN = float("inf"), float("nan")
COMMON = [-3.7, -1.0, -0.3, 1e-3, 0.25, 1.0, 2.0, 9.5, 100.0]
EDGES = {
    "sin": [0.0, -0.0, 3.141592653589793, 1e4, -2e5],
    "cos": [0.0, 1.5707963267948966, 1e4, -2e5],
    "rsqrt": [0.0, 1e-30, 1e30, 4.0],
    "reciprocal": [0.0, -0.0, 1e-30, -1e30, INF],
    "log2": [0.0, 8.0, 0.5, 1e-30, 1e30, INF],
    "log10": [0.0, 1000.0, 0.1, 1e-30, 1e30, INF],
    "sign": [0.0, -0.0, NAN, INF, -INF, 1e-40],
    "floor": [0.0, -0.0, -0.5, 0.5, 2.5, -2.5, 1e20, NAN, INF],
    "ceil": [0.0, -0.0, -0.5, 0.5, 2.5, -2.5, 1e20, NAN, -INF],
    "round": [0.0, -0.0, -0.5, 0.5, 1.5, 2.5, -2.5, 3.5, 4.5, -1.5, 0.49999997, 1e20, NAN, INF],
    "trunc": [0.0, -0.0, -0.5, 0.5, 2.5, -2.5, 1e20, NAN, INF],
}

for name, extra in EDGES.items():
    fn = getattr(torch, name)
    for dtype in (torch.float64, torch.float32):
        values = COMMON + extra
        x = torch.tensor(values, dtype=dtype, requires_grad=True)
        w = torch.linspace(0.5, 1.5, len(values), dtype=dtype)
        y = fn(x)
        (y * w).sum().backward()
        suffix = "f64" if dtype == torch.float64 else "f32"
        cases.append({"name": f"{name}_{suffix}", "params": {"op": name},
                      "tensors": {"x": x.detach(), "w": w, "y": y.detach(),
                                  "dx": x.grad.detach()}})

# Integral input: sign and the roundings keep int64; the others compute in float32.
ints = torch.tensor([-7, -1, 0, 1, 3, 1000], dtype=torch.int64)
for name in EDGES:
    xi = ints.clamp_min(1) if name in ("log2", "log10", "rsqrt") else ints
    cases.append({"name": f"{name}_int64", "params": {"op": name},
                  "tensors": {"x": xi, "y": getattr(torch, name)(xi)}})

write("unary_math.json", "make_unary_math.py", cases)
