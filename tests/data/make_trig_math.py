"""PyTorch 1.13's values and gradients of the trigonometric and hyperbolic functions, exp2, atan2
and round(decimals) (tests/autograd/test_trig_math.cpp).
- unary: tan, asin, acos, atan, sinh, cosh, asinh, acosh, atanh and exp2 in float64 and float32
  on inputs that include each one's special points: 0 and -0.0, the edges of the domains
  (asin(+-1), asin(2), atanh(+-1), acosh(1), acosh(0.5)), overflow (sinh, cosh, exp2), NaN and the
  infinities. "x", "w" (fixed weights), "y" and "dx", the gradient of sum(y * w); and int64 input
  ("x", "y" in float32).
- atan2: every pair of special values (signed zeros, +-1, the infinities, NaN) elementwise, a
  broadcast (3, 1) x (4,) case with its two gradients, and int64 operands (float32 result).
- round(decimals): float64, float32 and bfloat16 for decimals 1, 2, 3, 5, -1, -2, 40 (10^40 is
  inf in float32), 400 and -400 (inf in every dtype: NaN results), on halves and values whose
  decimal form is not exact. PyTorch's CPU kernel refuses float16 and integral input.
Run with Debian's python3-torch: /usr/bin/python3 tests/data/make_trig_math.py
"""
import torch

from reference import write

cases = []

INF, NAN = float("inf"), float("nan")
UNARY = {
    "tan": [-1.5, -0.7, 0.0, -0.0, 0.3, 1.2, 1.5707963267948966, 3.0, 100.0, 1e4, INF, NAN],
    "asin": [-1.0, -0.999, -0.5, -0.0, 0.0, 0.1, 0.7, 0.999, 1.0, 2.0, -2.0, INF, NAN],
    "acos": [-1.0, -0.999, -0.5, -0.0, 0.0, 0.1, 0.7, 0.999, 1.0, 2.0, -2.0, INF, NAN],
    "atan": [-1e30, -100.0, -1.0, -0.3, 0.0, -0.0, 0.5, 1.0, 3.0, 1e30, INF, -INF, NAN],
    "sinh": [-20.0, -3.0, -1.0, -1e-5, 0.0, -0.0, 1e-5, 0.5, 2.0, 10.0, 80.0, 100.0, 800.0, INF,
             -INF, NAN],
    "cosh": [-20.0, -3.0, -1.0, -1e-5, 0.0, -0.0, 1e-5, 0.5, 2.0, 10.0, 80.0, 100.0, 800.0, INF,
             -INF, NAN],
    "asinh": [-1e30, -100.0, -1.0, -1e-5, 0.0, -0.0, 0.5, 3.0, 1e10, INF, -INF, NAN],
    "acosh": [0.5, 0.0, -1.0, -2.0, 1.0, 1.0001, 1.5, 10.0, 1e10, INF, NAN],
    "atanh": [-1.0, -0.999, -0.5, -0.0, 0.0, 1e-5, 0.5, 0.9, 1.0, 2.0, -2.0, NAN],
    "exp2": [-1100.0, -150.0, -10.0, -1.0, -0.5, 0.0, 0.5, 1.0, 10.0, 127.5, 128.0, 1100.0, -INF,
             INF, NAN],
}

for name, values in UNARY.items():
    fn = getattr(torch, name)
    for dtype in (torch.float64, torch.float32):
        x = torch.tensor(values, dtype=dtype, requires_grad=True)
        w = torch.linspace(0.5, 1.5, len(values), dtype=dtype)
        y = fn(x)
        (y * w).sum().backward()
        suffix = "f64" if dtype == torch.float64 else "f32"
        cases.append({"name": f"{name}_{suffix}", "params": {"op": name},
                      "tensors": {"x": x.detach(), "w": w, "y": y.detach(),
                                  "dx": x.grad.detach()}})
    xi = torch.tensor([-3, -1, 0, 1, 2, 7], dtype=torch.int64)
    cases.append({"name": f"{name}_int64", "params": {"op": name},
                  "tensors": {"x": xi, "y": fn(xi)}})

# atan2: every pair of special values, elementwise (a_i, b_i).
SPECIAL = [0.0, -0.0, 1.0, -1.0, 2.5, -0.3, INF, -INF, NAN]
pairs = [(a, b) for a in SPECIAL for b in SPECIAL]
for dtype in (torch.float64, torch.float32):
    a = torch.tensor([p[0] for p in pairs], dtype=dtype, requires_grad=True)
    b = torch.tensor([p[1] for p in pairs], dtype=dtype, requires_grad=True)
    w = torch.linspace(0.5, 1.5, len(pairs), dtype=dtype)
    y = torch.atan2(a, b)
    (y * w).sum().backward()
    suffix = "f64" if dtype == torch.float64 else "f32"
    cases.append({"name": f"atan2_special_{suffix}", "params": {"op": "atan2"},
                  "tensors": {"a": a.detach(), "b": b.detach(), "w": w, "y": y.detach(),
                              "da": a.grad, "db": b.grad}})
    # Broadcasting: (3, 1) with (4,), finite values, so the summed gradients are finite.
    g = torch.Generator().manual_seed(11)
    a = (torch.randn(3, 1, generator=g, dtype=torch.float64) * 2).to(dtype).requires_grad_()
    b = (torch.randn(4, generator=g, dtype=torch.float64) * 2).to(dtype).requires_grad_()
    y = torch.atan2(a, b)
    w = torch.linspace(0.5, 1.5, y.numel(), dtype=dtype).reshape(y.shape)
    (y * w).sum().backward()
    cases.append({"name": f"atan2_broadcast_{suffix}", "params": {"op": "atan2"},
                  "tensors": {"a": a.detach(), "b": b.detach(), "w": w, "y": y.detach(),
                              "da": a.grad, "db": b.grad}})
ai = torch.tensor([-3, 0, 0, 2, 5], dtype=torch.int64)
bi = torch.tensor([1, 0, -4, -2, 0], dtype=torch.int64)
cases.append({"name": "atan2_int64", "params": {"op": "atan2"},
              "tensors": {"a": ai, "b": bi, "y": torch.atan2(ai, bi)}})

# round(decimals).
ROUND = [1.234567, -2.5, 0.125, 0.135, 2.675, -0.0, 0.0, 1e30, -1e-30, 123456.789, 0.5, 1.5, 15.0,
         25.0, 35.0, -45.0, 0.05, 0.005, 5e-6, 9.995, NAN, INF, -INF]
for decimals in (1, 2, 3, 5, -1, -2, 40, 400, -400):
    for dtype, suffix in ((torch.float64, "f64"), (torch.float32, "f32"), (torch.bfloat16, "bf16")):
        x = torch.tensor(ROUND, dtype=dtype)
        y = torch.round(x, decimals=decimals)
        cases.append({"name": f"round_decimals_{decimals}_{suffix}".replace("-", "minus"),
                      "params": {"op": "round", "decimals": decimals},
                      "tensors": {"x": x, "y": y}})

write("trig_math.json", "make_trig_math.py", cases)
