"""PyTorch reference cases for tests/autograd/test_householder_and_ex.cpp: torch.geqrf,
torch.linalg.householder_product (values and gradients), and the _ex variants of
torch.linalg (cholesky_ex, inv_ex, solve_ex, lu_factor_ex) over batches that hold a matrix the
factorization fails on. Matrices are random with condition numbers below 10. Each case lists its
operands in params["inputs"]; those with a reference gradient "d_" + name have it for the random
upstream gradient "g" of the output "y". Run with Debian's python3-torch:
/usr/bin/python3 tests/data/make_householder_and_ex.py
"""
import torch

from reference import write
from torch_cases import op_outputs_case

torch.manual_seed(0)

cases = []


def well_conditioned(*shape, dtype=torch.float64):
    """A random matrix (or batch) with singular values in [1, 3]."""
    m, n = shape[-2], shape[-1]
    k = min(m, n)
    u, _ = torch.linalg.qr(torch.randn(*shape[:-2], m, k, dtype=dtype))
    v, _ = torch.linalg.qr(torch.randn(*shape[:-2], n, k, dtype=dtype))
    s = torch.rand(*shape[:-2], k, dtype=dtype) * 2 + 1
    return (u * s.unsqueeze(-2)) @ v.transpose(-2, -1)


def add_case(name, op, inputs, outputs, **params):
    cases.append(op_outputs_case(name, op, inputs, outputs, **params))


for shape, dtype in (((5, 3), torch.float64), ((3, 5), torch.float64), ((4, 4), torch.float32),
                     ((2, 4, 3), torch.float64)):
    a = well_conditioned(*shape, dtype=dtype)
    packed, tau = torch.geqrf(a)
    label = "x".join(map(str, shape)) + ("_f32" if dtype == torch.float32 else "")
    add_case("geqrf__" + label, "geqrf", {"a": a}, {"y": packed, "tau": tau})

# householder_product of geqrf's output is Q; its gradient in both operands.
for shape, k in (((5, 3), 3), ((4, 4), 4), ((2, 5, 3), 2)):
    a = well_conditioned(*shape)
    packed, tau = torch.geqrf(a)
    tau = tau[..., :k].contiguous()
    packed = packed.requires_grad_()
    tau = tau.requires_grad_()
    y = torch.linalg.householder_product(packed, tau)
    g = torch.randn(y.shape, dtype=y.dtype)
    y.backward(g)
    add_case("householder_product__" + "x".join(map(str, shape)) + f"_k{k}",
             "householder_product", {"a": packed, "tau": tau},
             {"y": y, "g": g, "d_a": packed.grad, "d_tau": tau.grad})

# The _ex variants: the second matrix of each batch fails.
spd = well_conditioned(3, 3)
spd = spd @ spd.T
not_pd = torch.diag(torch.tensor([2.0, -1.0, 3.0], dtype=torch.float64))
batch = torch.stack([spd, not_pd, spd + torch.eye(3, dtype=torch.float64)])
L, info = torch.linalg.cholesky_ex(batch)
add_case("cholesky_ex", "cholesky_ex", {"a": batch}, {"y": L, "info": info}, upper=False)
U, info = torch.linalg.cholesky_ex(batch, upper=True)
add_case("cholesky_ex__upper", "cholesky_ex", {"a": batch}, {"y": U, "info": info}, upper=True)

square = well_conditioned(3, 3)
singular = square.clone()
singular[:, 2] = singular[:, 0] * 2  # column 2 a multiple of column 0: U[2, 2] is exactly 0
singular[:, 0] = torch.tensor([1.0, 2.0, 4.0], dtype=torch.float64)
singular[:, 2] = singular[:, 0] * 0.5
batch = torch.stack([square, singular])
inverse, info = torch.linalg.inv_ex(batch)
add_case("inv_ex", "inv_ex", {"a": batch}, {"y": inverse, "info": info})
b = torch.randn(2, 3, 2, dtype=torch.float64)
x, info = torch.linalg.solve_ex(batch, b)
add_case("solve_ex", "solve_ex", {"a": batch, "b": b}, {"y": x, "info": info})
lu, pivots, info = torch.linalg.lu_factor_ex(batch)
add_case("lu_factor_ex", "lu_factor_ex", {"a": batch}, {"y": lu, "pivots": pivots, "info": info})

write("householder_and_ex.json", "make_householder_and_ex.py", cases)
