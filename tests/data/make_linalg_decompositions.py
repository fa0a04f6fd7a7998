"""PyTorch 1.13's matrix decompositions and solvers (tests/autograd/test_linalg_decompositions.cpp).

Each case: its inputs (in the order params["inputs"] lists them), its outputs out0, out1, ..., and
the gradient d_<input> of sum_i sum(out_i * w_i) with respect to every floating input. params["fn"]
names the function and its arguments; the C++ runner computes the same outputs. Eigenvectors and
singular vectors are determined only up to sign, so those cases output V diag(c) V^T and
U diag(c) Vh for a fixed c instead of V, U and Vh (they do not depend on the signs).

params["kappa"] bounds how much the outputs and gradients amplify a relative change of the input
(the condition number, or |A| over the smallest eigenvalue gap); the test derives its tolerance
from it.

Run with Debian's python3-torch: /usr/bin/python3 tests/data/make_linalg_decompositions.py
"""
import torch

from reference import write

generator = torch.Generator().manual_seed(31)
cases = []


def randn(*shape, dtype=torch.float64):
    return torch.randn(*shape, generator=generator, dtype=dtype)


def well_conditioned(*shape, dtype=torch.float64):
    """A random (*, n, n) matrix plus 2 sqrt(n) I: condition numbers of a few units."""
    n = shape[-1]
    return randn(*shape, dtype=dtype) + 2 * n ** 0.5 * torch.eye(n, dtype=dtype)


def spd(*shape, dtype=torch.float64):
    m = randn(*shape, dtype=dtype)
    return m @ m.transpose(-2, -1) + shape[-1] * torch.eye(shape[-1], dtype=dtype)


def symmetric(*shape, dtype=torch.float64):
    m = randn(*shape, dtype=dtype)
    return m + m.transpose(-2, -1)


def cond(a):
    s = torch.linalg.svdvals(a.double())
    return float((s[..., 0] / s[..., -1]).max())


def eig_sensitivity(a):
    """|A| over the smallest gap between eigenvalues."""
    w = torch.linalg.eigvalsh(a.double())
    gaps = (w[..., 1:] - w[..., :-1]).min() if w.shape[-1] > 1 else torch.tensor(1.0)
    return float(w.abs().max() / gaps)


def sv_sensitivity(a):
    """|A| over the smallest gap between singular values (squared, as the gradient divides by
    s_j^2 - s_i^2) and the smallest singular value."""
    s = torch.linalg.svdvals(a.double())
    k = s.shape[-1]
    gap = (s[..., :-1] ** 2 - s[..., 1:] ** 2).min() / s[..., 0].max() if k > 1 else s.max()
    return float(s.max() / min(float(gap), float(s.min())))


def case(name, fn_name, inputs, fn, kappa, params=None, differentiable=True):
    """inputs: name -> tensor; fn(*inputs) -> tuple of tensors."""
    leaves = {k: (v.clone().requires_grad_() if differentiable and v.is_floating_point() else v)
              for k, v in inputs.items()}
    outs = fn(*leaves.values())
    tensors = dict(inputs)
    total = 0
    for i, out in enumerate(outs):
        tensors[f"out{i}"] = out.detach()
        if out.is_floating_point() and out.requires_grad:
            w = torch.linspace(-1, 2, out.numel(), dtype=out.dtype).reshape(out.shape)
            tensors[f"w{i}"] = w
            total = total + (out * w).sum()
    if differentiable:
        total.backward()
        for k, v in leaves.items():
            if v.requires_grad and v.grad is not None:
                tensors["d_" + k] = v.grad
    cases.append({"name": name,
                  "params": dict(params or {}, fn=fn_name, inputs=list(inputs.keys()),
                                 kappa=kappa),
                  "tensors": tensors})


def fixed_weights(k, dtype):
    return torch.linspace(0.5, 2.0, k, dtype=dtype)


# ---- LU ---------------------------------------------------------------------------------------
for shape in [(4, 4), (2, 3, 3)]:
    a = well_conditioned(*shape)
    case(f"lu_factor_{'x'.join(map(str, shape))}", "lu_factor", {"A": a},
         lambda a: torch.linalg.lu_factor(a), cond(a))
a = well_conditioned(5, 5)
case("lu_5x5", "lu", {"A": a}, lambda a: torch.linalg.lu(a), cond(a))
a = torch.tensor([[0.0, 2.0, 1.0], [1.0, 1.0, 0.0], [3.0, 0.0, 1.0]], dtype=torch.float64)
case("lu_needs_pivots", "lu", {"A": a}, lambda a: torch.linalg.lu(a), cond(a))
for left in [True, False]:
    for adjoint in [False, True]:
        a = well_conditioned(2, 4, 4)
        lu, piv = torch.linalg.lu_factor(a)
        b = randn(2, 4, 3) if left else randn(2, 3, 4)
        case(f"lu_solve_left{int(left)}_adjoint{int(adjoint)}", "lu_solve",
             {"LU": lu, "pivots": piv, "B": b},
             lambda lu, piv, b: (torch.linalg.lu_solve(lu, piv, b, left=left, adjoint=adjoint),),
             cond(a) ** 2, {"left": left, "adjoint": adjoint})

# ---- Determinants, inverses, solves -----------------------------------------------------------
for shape in [(4, 4), (3, 2, 2), (1, 1)]:
    a = well_conditioned(*shape)
    case(f"det_{'x'.join(map(str, shape))}", "det", {"A": a}, lambda a: (torch.linalg.det(a),),
         cond(a))
# Rank 2 and rank 1 3x3: the gradient is the cofactor matrix (nonzero at rank n - 1, zero at
# rank n - 2). torch 1.13's is too.
u, v = randn(3, 2), randn(2, 3)
case("det_singular_rank2", "det", {"A": u @ v}, lambda a: (torch.linalg.det(a),), 10.0)
case("det_empty", "det", {"A": torch.zeros(0, 0, dtype=torch.float64)},
     lambda a: (torch.linalg.det(a),), 1.0)
a = well_conditioned(2, 3, 3)
a[0] = -a[0]  # a negative determinant
case("slogdet", "slogdet", {"A": a}, lambda a: torch.linalg.slogdet(a), cond(a))
a = spd(3, 3)
case("logdet", "logdet", {"A": a}, lambda a: (torch.logdet(a),), cond(a))
for shape in [(4, 4), (2, 3, 3)]:
    a = well_conditioned(*shape)
    case(f"inv_{'x'.join(map(str, shape))}", "inv", {"A": a}, lambda a: (torch.linalg.inv(a),),
         cond(a) ** 2)
a = well_conditioned(3, 3, dtype=torch.float32)
case("inv_float32", "inv", {"A": a}, lambda a: (torch.linalg.inv(a),), cond(a) ** 2)
a, b = well_conditioned(4, 4), randn(4, 2)
case("solve_matrix", "solve", {"A": a, "B": b}, lambda a, b: (torch.linalg.solve(a, b),),
     cond(a) ** 2)
a, b = well_conditioned(2, 4, 4), randn(2, 4)
case("solve_vectors", "solve", {"A": a, "B": b}, lambda a, b: (torch.linalg.solve(a, b),),
     cond(a) ** 2)
a, b = well_conditioned(3, 3), randn(2, 3, 2)
case("solve_broadcast", "solve", {"A": a, "B": b}, lambda a, b: (torch.linalg.solve(a, b),),
     cond(a) ** 2)
a, b = well_conditioned(3, 3), randn(2, 3)
case("solve_right", "solve", {"A": a, "B": b},
     lambda a, b: (torch.linalg.solve(a, b, left=False),), cond(a) ** 2, {"left": False})
for upper in [False, True]:
    for left in [True, False]:
        for unit in [False, True]:
            a = well_conditioned(2, 4, 4)
            b = randn(2, 4, 3) if left else randn(2, 3, 4)
            tri = a.triu() if upper else a.tril()
            case(f"solve_triangular_u{int(upper)}_l{int(left)}_unit{int(unit)}",
                 "solve_triangular", {"A": a, "B": b},
                 lambda a, b: (torch.linalg.solve_triangular(a, b, upper=upper, left=left,
                                                             unitriangular=unit),),
                 cond(tri) ** 2 * 100, {"upper": upper, "left": left, "unitriangular": unit})

# ---- Cholesky ---------------------------------------------------------------------------------
for upper in [False, True]:
    a = spd(2, 4, 4)
    case(f"cholesky_upper{int(upper)}", "cholesky", {"A": a},
         lambda a: (torch.linalg.cholesky(a, upper=upper),), cond(a) ** 2, {"upper": upper})
a = spd(4, 4)
case("cholesky_reads_lower", "cholesky", {"A": a.tril() + 7.0 * torch.ones(4, 4).triu(1).double()},
     lambda a: (torch.linalg.cholesky(a),), cond(a) ** 2, {"upper": False})
for upper in [False, True]:
    l = torch.linalg.cholesky(spd(3, 3))
    factor = l.transpose(-2, -1) if upper else l
    b = randn(3, 2)
    case(f"cholesky_solve_upper{int(upper)}", "cholesky_solve", {"B": b, "L": factor},
         lambda b, f: (torch.cholesky_solve(b, f, upper=upper),), cond(l) ** 4, {"upper": upper})

# ---- QR -------------------------------------------------------------------------------------
for shape, mode in [((5, 3), "reduced"), ((4, 4), "reduced"), ((3, 5), "reduced"),
                    ((2, 5, 3), "reduced"), ((4, 4), "complete"), ((3, 5), "complete")]:
    a = randn(*shape) + torch.eye(shape[-2], shape[-1], dtype=torch.float64) * 3
    case(f"qr_{mode}_{'x'.join(map(str, shape))}", "qr", {"A": a},
         lambda a: torch.linalg.qr(a, mode=mode), cond(a) ** 2, {"mode": mode})
a = randn(5, 3)
case("qr_complete_tall_values", "qr", {"A": a}, lambda a: torch.linalg.qr(a, mode="complete"),
     cond(a) ** 2, {"mode": "complete"}, differentiable=False)
case("qr_r", "qr", {"A": a}, lambda a: (torch.linalg.qr(a, mode="r")[1],), cond(a) ** 2,
     {"mode": "r"}, differentiable=False)


# ---- eigh -----------------------------------------------------------------------------------
def eigh_invariants(uplo):
    def fn(a):
        w, v = torch.linalg.eigh(a, UPLO=uplo)
        c = fixed_weights(w.shape[-1], a.dtype)
        return w, (v * c) @ v.transpose(-2, -1)
    return fn


for shape in [(4, 4), (2, 3, 3)]:
    a = symmetric(*shape)
    case(f"eigh_{'x'.join(map(str, shape))}", "eigh", {"A": a}, eigh_invariants("L"),
         eig_sensitivity(a) ** 2, {"UPLO": "L"})
a = symmetric(4, 4)
garbage = randn(4, 4)
case("eigh_upper", "eigh", {"A": a.triu() + garbage.tril(-1)}, eigh_invariants("U"),
     eig_sensitivity(a) ** 2, {"UPLO": "U"})
case("eigh_lower_reads_lower", "eigh", {"A": a.tril() + garbage.triu(1)}, eigh_invariants("L"),
     eig_sensitivity(a) ** 2, {"UPLO": "L"})
a = symmetric(5, 5)
case("eigvalsh", "eigvalsh", {"A": a}, lambda a: (torch.linalg.eigvalsh(a),), eig_sensitivity(a),
     {"UPLO": "L"})


# ---- SVD ------------------------------------------------------------------------------------
def svd_invariants(full):
    def fn(a):
        u, s, vh = torch.linalg.svd(a, full_matrices=full)
        k = s.shape[-1]
        c = fixed_weights(k, a.dtype)
        return s, (u[..., :, :k] * c) @ vh[..., :k, :]
    return fn


for shape in [(5, 3), (3, 5), (4, 4), (2, 4, 3)]:
    for full in [False, True]:
        a = randn(*shape)
        case(f"svd_full{int(full)}_{'x'.join(map(str, shape))}", "svd", {"A": a},
             svd_invariants(full), sv_sensitivity(a) ** 2, {"full_matrices": full})
a = randn(3, 6)
case("svdvals", "svdvals", {"A": a}, lambda a: (torch.linalg.svdvals(a),), sv_sensitivity(a))

# ---- Built on the decompositions ----------------------------------------------------------------
inf = float("inf")
for ord_ in [1, -1, 2, -2, inf, -inf, "fro", "nuc"]:
    a = randn(2, 4, 3)
    name = {inf: "inf", -inf: "neginf"}.get(ord_, str(ord_)).replace("-", "neg")
    case(f"matrix_norm_{name}", "matrix_norm", {"A": a},
         lambda a: (torch.linalg.matrix_norm(a, ord=ord_),), sv_sensitivity(a) ** 2,
         {"ord": ord_ if isinstance(ord_, str) else str(ord_)})
a = randn(3, 2, 4)
case("matrix_norm_dims_keepdim", "matrix_norm", {"A": a},
     lambda a: (torch.linalg.matrix_norm(a, ord=2, dim=(2, 0), keepdim=True),),
     sv_sensitivity(a.permute(1, 2, 0)) ** 2, {"ord": "2", "dim": [2, 0], "keepdim": True})
for p in [2, -2, 1, inf, "fro", "nuc"]:
    a = well_conditioned(3, 3)
    name = {inf: "inf"}.get(p, str(p)).replace("-", "neg")
    # torch 1.13 cannot differentiate cond outside the 2-norms (its inverse is written in
    # place); the C++ test checks those gradients by finite differences.
    case(f"cond_{name}", "cond", {"A": a}, lambda a: (torch.linalg.cond(a, p),),
         cond(a) ** 3 * 10, {"p": p if isinstance(p, str) else str(p)},
         differentiable=p in (2, -2))
for shape in [(5, 3), (3, 5), (2, 4, 4)]:
    a = randn(*shape)
    case(f"pinv_{'x'.join(map(str, shape))}", "pinv", {"A": a}, lambda a: (torch.linalg.pinv(a),),
         cond(a) ** 3 * 10)
a = spd(4, 4)
case("pinv_hermitian", "pinv", {"A": a}, lambda a: (torch.linalg.pinv(a, hermitian=True),),
     cond(a) ** 3 * 10, {"hermitian": True})
# Rank 2 of 4: the cutoff drops the two zero singular values (values only: the pseudo-inverse is
# not differentiable where the rank changes).
low_rank = randn(4, 2) @ randn(2, 4)
case("pinv_rank_deficient", "pinv", {"A": low_rank},
     lambda a: (torch.linalg.pinv(a, atol=1e-8),), 1000.0, {"atol": 1e-8}, differentiable=False)
case("matrix_rank", "matrix_rank", {"A": torch.stack([low_rank, randn(4, 4)])},
     lambda a: (torch.linalg.matrix_rank(a),), 1.0, differentiable=False)
case("matrix_rank_hermitian", "matrix_rank", {"A": low_rank @ low_rank.t()},
     lambda a: (torch.linalg.matrix_rank(a, hermitian=True),), 1.0, {"hermitian": True},
     differentiable=False)
for n in [3, 0, -2, 1]:
    a = well_conditioned(2, 3, 3) * 0.5
    case(f"matrix_power_{n}".replace("-", "neg"), "matrix_power", {"A": a},
         lambda a: (torch.linalg.matrix_power(a, n),), cond(a) ** 4 * 10, {"n": n})
x, b, c, d, y = randn(4), randn(4, 7), randn(7, 2), randn(2, 6), randn(6)
case("multi_dot_vector_ends", "multi_dot", {"x": x, "B": b, "C": c, "D": d, "y": y},
     lambda *t: (torch.linalg.multi_dot(t),), 10.0)
b, c, d, e = randn(5, 30), randn(30, 2), randn(2, 40), randn(40, 3)
case("multi_dot_matrices", "multi_dot", {"B": b, "C": c, "D": d, "E": e},
     lambda *t: (torch.linalg.multi_dot(t),), 10.0)

for name, shape_a, shape_b, driver in [("tall", (6, 3), (6, 2), "gelsy"),
                                       ("tall_gelsd", (6, 3), (6, 2), "gelsd"),
                                       ("wide", (3, 5), (3, 2), "gelsy"),
                                       ("batch_broadcast", (2, 5, 3), (1, 5, 4), "gelss"),
                                       ("vectors", (2, 5, 3), (2, 5), "gelsd"),
                                       ("gels", (5, 3), (5, 1), "gels")]:
    a, b = randn(*shape_a), randn(*shape_b)
    case(f"lstsq_{name}", "lstsq", {"A": a, "B": b},
         lambda a, b: tuple(torch.linalg.lstsq(a, b, driver=driver)), cond(a) ** 3 * 10,
         {"driver": driver}, differentiable=name != "vectors")  # torch 1.13's backward fails
# Rank 2 of 3 columns: the minimum-norm solution, no residuals (values only).
a = randn(6, 2) @ randn(2, 3)
case("lstsq_rank_deficient", "lstsq", {"A": a, "B": randn(6, 2)},
     lambda a, b: tuple(torch.linalg.lstsq(a, b, driver="gelsd")), 1e4, {"driver": "gelsd"},
     differentiable=False)
for name, scale in [("small", 0.1), ("scaled", 4.0)]:
    a = randn(3, 3) * scale
    case(f"matrix_exp_{name}", "matrix_exp", {"A": a}, lambda a: (torch.linalg.matrix_exp(a),),
         float(torch.linalg.matrix_norm(a, 1)) ** 2 * 100 + 100)
# Two norms in one batch: each matrix its own number of squarings.
a = torch.stack([randn(4, 4) * 0.05, randn(4, 4) * 3.0])
case("matrix_exp_batch", "matrix_exp", {"A": a}, lambda a: (torch.linalg.matrix_exp(a),),
     float(torch.linalg.matrix_norm(a, 1).max()) ** 2 * 100 + 100)
a = randn(3, 3, dtype=torch.float32)
case("matrix_exp_float32", "matrix_exp", {"A": a}, lambda a: (torch.linalg.matrix_exp(a),),
     float(torch.linalg.matrix_norm(a, 1)) ** 2 * 100 + 100)

x = randn(3, 4, 5)
case("vector_norm_inf_dims", "vector_norm", {"x": x},
     lambda x: (torch.linalg.vector_norm(x, ord=inf, dim=(0, 2)),), 1.0,
     {"ord": "inf", "dim": [0, 2]})
case("vector_norm_3_keepdim", "vector_norm", {"x": x},
     lambda x: (torch.linalg.vector_norm(x, ord=3, dim=1, keepdim=True),), 1.0,
     {"ord": "3", "dim": [1], "keepdim": True})
case("norm_default", "norm", {"x": x}, lambda x: (torch.linalg.norm(x),), 1.0)
a = randn(4, 3)
case("norm_matrix_ord_2", "norm", {"x": a}, lambda a: (torch.linalg.norm(a, ord=2),),
     sv_sensitivity(a) ** 2, {"ord": "2"})
case("norm_vector_ord_1", "norm", {"x": x}, lambda x: (torch.linalg.norm(x, ord=1, dim=-1),), 1.0,
     {"ord": "1", "dim": [-1]})
case("norm_nuc_dims", "norm", {"x": x}, lambda x: (torch.linalg.norm(x, ord="nuc", dim=(0, 1)),),
     sv_sensitivity(x.permute(2, 0, 1)) ** 2, {"ord": "nuc", "dim": [0, 1]})

a = well_conditioned(6, 6).reshape(2, 3, 6)
case("tensorinv_ind2", "tensorinv", {"A": a}, lambda a: (torch.linalg.tensorinv(a, ind=2),),
     cond(a.reshape(6, 6)) ** 2, {"ind": 2})
a = well_conditioned(6, 6).reshape(6, 2, 3)
b = randn(6)
case("tensorsolve", "tensorsolve", {"A": a, "B": b},
     lambda a, b: (torch.linalg.tensorsolve(a, b),), cond(a.reshape(6, 6)) ** 2)
a2 = well_conditioned(6, 6).reshape(2, 3, 6).permute(2, 0, 1).contiguous()  # (6, 2, 3)
b2 = randn(2, 3)
case("tensorsolve_dims", "tensorsolve", {"A": a2, "B": b2},
     lambda a, b: (torch.linalg.tensorsolve(a, b, dims=(0,)),), 100.0, {"dims": [0]})

write("linalg_decompositions.json", "make_linalg_decompositions.py", cases)
print(len(cases), "cases")
