"""PyTorch 1.13's remainder, fmod, floor_divide and bitwise ops (tests/autograd/test_rounding_division.cpp).

remainder, fmod and floor_divide of every sign combination, fractions, zeros, infinities and
NaN in float32 and float64, of integers in int64, int32 and uint8 (no zero divisors: PyTorch
raises ZeroDivisionError there, leangrad defines x % 0 == x, tested apart), with scalar
divisors and a scalar dividend; the gradients of sum(remainder(a, b) * w) and of fmod's in
float64 away from the jumps; bitwise and, or, xor and not of int64, int32, uint8 and bool, with
broadcasting and integer scalars.

Run with Debian's python3-torch: /usr/bin/python3 tests/data/make_rounding_division.py
"""
import torch

from reference import write

cases = []
inf, nan = float("inf"), float("nan")

# Dividends and divisors of every sign, fractions, exact multiples, signed zeros and the specials.
A = [5.5, -5.5, 5.5, -5.5, 7.0, -7.0, 0.0, -0.0, 3.0, -1.0, 1e10, 2.5, inf, nan, 1.0, -3.75]
B = [2.0, 2.0, -2.0, -2.0, 3.5, 3.5, 3.0, 3.0, 0.0, inf, 3.0, -inf, 2.0, 2.0, nan, 0.5]

for dtype in (torch.float32, torch.float64):
    a = torch.tensor(A, dtype=dtype)
    b = torch.tensor(B, dtype=dtype)
    name = str(dtype).replace("torch.", "")
    tensors = {"a": a, "b": b,
               "remainder": torch.remainder(a, b), "fmod": torch.fmod(a, b),
               "floor_divide": torch.floor_divide(a, b),
               "remainder_scalar": torch.remainder(a, -2.5), "fmod_scalar": torch.fmod(a, -2.5),
               "floor_divide_scalar": torch.floor_divide(a, -2.5),
               "scalar_remainder": torch.remainder(7.5, b)}
    cases.append({"name": "floating_" + name, "params": {}, "tensors": tensors})

for dtype in (torch.int64, torch.int32, torch.uint8):
    name = str(dtype).replace("torch.", "")
    if dtype == torch.uint8:
        a = torch.tensor([7, 8, 9, 250, 0, 255, 13, 100], dtype=dtype)
        b = torch.tensor([3, 4, 2, 7, 5, 16, 13, 255], dtype=dtype)
    else:
        a = torch.tensor([7, -7, 7, -7, 0, 6, -6, 1, -1, 100, -2147483648 if dtype == torch.int32
                          else -4503599627370497, 13], dtype=dtype)  # exact in a double
        b = torch.tensor([3, 3, -3, -3, 5, -3, 3, -5, 5, 7, 3, -4], dtype=dtype)
    tensors = {"a": a, "b": b,
               "remainder": torch.remainder(a, b), "fmod": torch.fmod(a, b),
               "floor_divide": torch.floor_divide(a, b),
               "remainder_scalar": torch.remainder(a, 3), "fmod_scalar": torch.fmod(a, 3),
               "floor_divide_scalar": torch.floor_divide(a, 3)}
    cases.append({"name": "integral_" + name, "params": {}, "tensors": tensors})

# Gradients in float64, away from the jumps of the rounding.
generator = torch.Generator().manual_seed(5)
a = (torch.rand(3, 4, generator=generator, dtype=torch.float64) * 20 - 10).requires_grad_()
b = (torch.rand(4, generator=generator, dtype=torch.float64) * 6 + 0.5)
b = (b * torch.tensor([1.0, -1.0, 1.0, -1.0], dtype=torch.float64)).requires_grad_()
w = torch.linspace(-1, 2, 12, dtype=torch.float64).reshape(3, 4)
tensors = {"a": a.detach(), "b": b.detach(), "w": w}
for op in ("remainder", "fmod"):
    a.grad = None
    b.grad = None
    (getattr(torch, op)(a, b) * w).sum().backward()
    tensors["d_a_" + op] = a.grad.clone()
    tensors["d_b_" + op] = b.grad.clone()
cases.append({"name": "gradients", "params": {}, "tensors": tensors})

# Bitwise ops.
for dtype in (torch.int64, torch.int32, torch.uint8, torch.bool):
    name = str(dtype).replace("torch.", "")
    if dtype == torch.bool:
        a = torch.tensor([[True, False], [True, True]])
        b = torch.tensor([True, False])
    elif dtype == torch.uint8:
        a = torch.tensor([[0, 255], [170, 15]], dtype=dtype)
        b = torch.tensor([85, 240], dtype=dtype)
    else:
        a = torch.tensor([[0, -1], [12345, -98765]], dtype=dtype)
        b = torch.tensor([-6, 1023], dtype=dtype)
    tensors = {"a": a, "b": b,
               "bitwise_and": torch.bitwise_and(a, b), "bitwise_or": torch.bitwise_or(a, b),
               "bitwise_xor": torch.bitwise_xor(a, b), "bitwise_not": torch.bitwise_not(a),
               "bitwise_and_scalar": torch.bitwise_and(a, 6),
               "bitwise_or_scalar": torch.bitwise_or(a, 6),
               "bitwise_xor_scalar": torch.bitwise_xor(a, 6)}
    cases.append({"name": "bitwise_" + name, "params": {}, "tensors": tensors})

write("rounding_division.json", "make_rounding_division.py", cases)
