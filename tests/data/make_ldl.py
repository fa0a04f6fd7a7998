"""PyTorch reference cases for tests/autograd/test_ldl.cpp: torch.linalg.ldl_factor,
ldl_factor_ex and ldl_solve (LAPACK's sytrf and sytrs through PyTorch 1.13) on symmetric
indefinite matrices: random ones of several sizes (a batch, float32), ones whose diagonal is
small against the rest so that Bunch-Kaufman takes 2 x 2 pivots and swaps, a zero diagonal, a
1 x 1, and a batch whose second matrix is singular (ldl_factor_ex's info). Each case holds "a"
and the outputs "ld" and "pivots" (and "info"); the solve cases "b" (batch dims broadcast) and
"x". Matrices of up to 64 columns, which sytrf factors unblocked (sytf2), as leangrad does.
Run with Debian's python3-torch: /usr/bin/python3 tests/data/make_ldl.py
"""
import torch

from reference import write
from torch_cases import op_outputs_case

torch.manual_seed(0)

cases = []


def symmetric(*shape, dtype=torch.float64, diagonal_scale=1.0):
    """A random symmetric matrix (or batch), its diagonal scaled by diagonal_scale."""
    a = torch.randn(*shape, dtype=dtype)
    a = a + a.transpose(-2, -1)
    n = shape[-1]
    eye = torch.eye(n, dtype=dtype)
    return a * (1 - eye) + a * eye * diagonal_scale


def add_factor(name, a):
    ld, pivots, info = torch.linalg.ldl_factor_ex(a)
    assert (info == 0).all(), name
    cases.append(op_outputs_case(name, "ldl_factor", {"a": a}, {"ld": ld, "pivots": pivots}))
    return ld, pivots


for name, a in (
    ("random_6", symmetric(6, 6)),
    ("random_33", symmetric(33, 33)),
    ("small_diagonal_12", symmetric(12, 12, diagonal_scale=0.05)),
    ("zero_diagonal_7", symmetric(7, 7, diagonal_scale=0.0)),
    ("one_by_one", torch.tensor([[-2.5]], dtype=torch.float64)),
    ("swap_2", torch.tensor([[0.0, 1.0], [1.0, 0.0]], dtype=torch.float64)),
    ("batch_2x3_5", symmetric(2, 3, 5, 5, diagonal_scale=0.2)),
    ("random_9_f32", symmetric(9, 9, dtype=torch.float32, diagonal_scale=0.1)),
):
    add_factor("ldl_factor__" + name, a)

# Pivots of each kind must appear: a 2 x 2 block (negative pivots) and a 1 x 1 swap.
kinds = set()
for case in cases:
    p = case["tensors"]["pivots"].reshape(-1, case["tensors"]["pivots"].shape[-1])
    for row in p:
        for k, v in enumerate(row.tolist()):
            kinds.add("2x2" if v < 0 else ("swap" if v != k + 1 else "plain"))
assert kinds == {"2x2", "swap", "plain"}, kinds

# A batch whose second matrix is singular: D has a zero pivot (info 2 for [[1, 1], [1, 1]]'s).
good = symmetric(2, 2)
singular = torch.tensor([[1.0, 1.0], [1.0, 1.0]], dtype=torch.float64)
batch = torch.stack([good, singular])
ld, pivots, info = torch.linalg.ldl_factor_ex(batch)
assert info.tolist()[1] != 0
cases.append(op_outputs_case("ldl_factor_ex__singular", "ldl_factor_ex", {"a": batch},
                             {"ld": ld, "pivots": pivots, "info": info}))

# ldl_solve: one matrix, several right-hand sides; batch dims of B broadcast against LD's.
for name, a, b_shape in (
    ("small_diagonal_12", symmetric(12, 12, diagonal_scale=0.05), (12, 3)),
    ("broadcast_b", symmetric(1, 6, 6, diagonal_scale=0.1), (4, 6, 2)),
    ("broadcast_ld", symmetric(3, 5, 5, diagonal_scale=0.1), (5, 1)),
    ("f32", symmetric(8, 8, dtype=torch.float32, diagonal_scale=0.1), (8, 2)),
):
    # test_ldl.cpp compares X with PyTorch's at 1e4 n u, which holds for condition numbers
    # below 1e3.
    assert torch.linalg.cond(a.double()).max() < 1e3, name
    ld, pivots = torch.linalg.ldl_factor(a)
    b = torch.randn(*b_shape, dtype=a.dtype)
    # PyTorch 1.13's ldl_solve crashes (SIGSEGV) when LD's batch of 1 broadcasts against B's: it
    # gets LD and pivots expanded by hand; leangrad's test broadcasts.
    batch = torch.broadcast_shapes(ld.shape[:-2], b.shape[:-2])
    x = torch.linalg.ldl_solve(ld.expand(*batch, *ld.shape[-2:]).contiguous(),
                               pivots.expand(*batch, pivots.shape[-1]).contiguous(), b)
    cases.append(op_outputs_case("ldl_solve__" + name, "ldl_solve",
                                 {"a": a, "ld": ld, "pivots": pivots, "b": b}, {"x": x}))

write("ldl.json", "make_ldl.py", cases)
print(len(cases), "cases")
