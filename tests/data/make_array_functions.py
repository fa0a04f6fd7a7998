"""PyTorch reference cases for the array functions of tests/autograd/test_array_functions.cpp: mv,
vdot, addr, chain_matmul, dist, pdist, renorm, vander, cholesky_inverse, lu_unpack, cov, corrcoef,
trapezoid, cumulative_trapezoid, combinations, diagflat, msort, select_scatter, slice_scatter,
diagonal_scatter, masked_scatter, the functional RNN cells, logspace, the signal windows, unique,
histogram, histogramdd and fill_diagonal_. Each
case lists its operands in params["inputs"]; the float ones that require grad have a reference
gradient "d_" + name for the random upstream gradient "g" of the output "y". Run with Debian's
python3-torch: /usr/bin/python3 tests/data/make_array_functions.py
"""
import torch

from reference import write
from torch_cases import op_case, op_outputs_case, uniform

torch.manual_seed(0)

cases = []


def case(name, op, inputs, fn, **params):
    cases.append(op_case(name, op, inputs, fn, **params))


# ---- Products, distances, norms ----
case("mv", "mv", {"a": uniform(3, 4), "b": uniform(4)}, torch.mv)
case("vdot", "vdot", {"a": uniform(5), "b": uniform(5)}, torch.vdot)
case("addr__scaled", "addr", {"a": uniform(3, 4), "b": uniform(3), "c": uniform(4)},
     lambda a, b, c: torch.addr(a, b, c, beta=0.5, alpha=-2.0), beta=0.5, alpha=-2.0)
case("addr__broadcast", "addr", {"a": uniform(4), "b": uniform(3), "c": uniform(4)},
     lambda a, b, c: torch.addr(a, b, c), beta=1.0, alpha=1.0)
case("chain_matmul", "chain_matmul", {"a": uniform(2, 3), "b": uniform(3, 4), "c": uniform(4, 2)},
     lambda a, b, c: torch.linalg.multi_dot([a, b, c]))
for p in (2.0, 1.0, 3.0, 0.5, float("inf")):
    label = "inf" if p == float("inf") else str(p).replace(".", "_")
    order = "inf" if p == float("inf") else p
    case("dist__p" + label, "dist", {"a": uniform(3, 4), "b": uniform(4)},
         lambda a, b, p=p: torch.dist(a, b, p), p=order)
    rows = uniform(5, 3, grad=False)
    rows[3] = rows[1]  # a distance of 0: gradient 0 there
    case("pdist__p" + label, "pdist", {"a": rows.requires_grad_()},
         lambda a, p=p: torch.pdist(a, p), p=order)
# p < 1 with one difference exactly 0: its gradient is 0 (PyTorch masks |x|^(p-1) there).
a = uniform(2, 3, grad=False)
b = uniform(2, 3, grad=False)
b[1, 2] = a[1, 2]
case("dist__p0_5_zero_difference", "dist", {"a": a.requires_grad_(), "b": b.requires_grad_()},
     lambda a, b: torch.dist(a, b, 0.5), p=0.5)
case("renorm__dim0", "renorm", {"a": uniform(3, 4, low=-2.0, high=2.0)},
     lambda a: torch.renorm(a, 2, 0, 1.5), p=2.0, dim=0, maxnorm=1.5)
case("renorm__p1_dim1", "renorm", {"a": uniform(3, 4, 2)},
     lambda a: torch.renorm(a, 1, 1, 1.0), p=1.0, dim=1, maxnorm=1.0)
# torch 1.13's vander has no working gradient (its cumprod writes in place): values only.
case("vander__decreasing", "vander", {"a": uniform(4, grad=False)}, lambda a: torch.vander(a, N=5),
     N=5, increasing=False)
case("vander__increasing", "vander", {"a": uniform(3, grad=False)},
     lambda a: torch.vander(a, increasing=True), increasing=True)

# ---- Factorizations ----
def spd_factor(n, upper=False):
    m = torch.rand(n, n) * 2 - 1
    L = torch.linalg.cholesky(m @ m.T / n + torch.eye(n))
    return (L.T if upper else L).contiguous().requires_grad_()


# PyTorch's gradient in the factor fills the triangle its potri does not read; leangrad's is the
# derivative of what the function reads (docs/api-notes.md): the reference keeps that triangle.
case("cholesky_inverse__lower", "cholesky_inverse", {"a": spd_factor(4)},
     lambda a: torch.cholesky_inverse(a), upper=False)
cases[-1]["tensors"]["d_a"] = cases[-1]["tensors"]["d_a"].tril()
case("cholesky_inverse__upper", "cholesky_inverse", {"a": spd_factor(3, upper=True)},
     lambda a: torch.cholesky_inverse(a, upper=True), upper=True)
cases[-1]["tensors"]["d_a"] = cases[-1]["tensors"]["d_a"].triu()
for rows, cols in ((4, 4), (3, 5), (5, 3)):
    lu, pivots = torch.linalg.lu_factor(torch.rand(rows, cols) * 2 - 1)
    case(f"lu_unpack__{rows}x{cols}", "lu_unpack",
         {"a": lu.requires_grad_(), "pivots": pivots},
         lambda a, pivots: torch.cat([t.flatten() for t in torch.lu_unpack(a, pivots)]))

# ---- Covariance, integration ----
case("cov__plain", "cov", {"a": uniform(3, 6)}, lambda a: torch.cov(a), correction=1)
case("cov__weights", "cov",
     {"a": uniform(3, 6), "fweights": torch.tensor([1, 2, 0, 3, 1, 1]),
      "aweights": uniform(6, low=0.2, high=2.0)},
     lambda a, f, w: torch.cov(a, correction=1, fweights=f, aweights=w), correction=1)
case("cov__aweights_correction0", "cov", {"a": uniform(2, 5), "aweights": uniform(5, low=0.5)},
     lambda a, w: torch.cov(a, correction=0, aweights=w), correction=0)
case("cov__vector", "cov", {"a": uniform(7)}, lambda a: torch.cov(a), correction=1)
case("corrcoef", "corrcoef", {"a": uniform(3, 6)}, torch.corrcoef)
case("trapezoid__dx", "trapezoid", {"a": uniform(3, 5)},
     lambda a: torch.trapezoid(a, dx=0.5, dim=1), dx=0.5, dim=1)
case("trapezoid__x", "trapezoid",
     {"a": uniform(4, 3), "x": torch.tensor([0.0, 0.5, 1.5, 1.75]).requires_grad_()},
     lambda a, x: torch.trapezoid(a, x, dim=0), dim=0)
case("trapezoid__x_broadcast", "trapezoid", {"a": uniform(2, 4), "x": uniform(1, 4)},
     lambda a, x: torch.trapezoid(a, x), dim=-1)
case("cumulative_trapezoid__dx", "cumulative_trapezoid", {"a": uniform(3, 5)},
     lambda a: torch.cumulative_trapezoid(a, dx=2.0), dx=2.0, dim=-1)
case("cumulative_trapezoid__x", "cumulative_trapezoid",
     {"a": uniform(2, 4), "x": torch.tensor([0.0, 1.0, 3.0, 3.5]).requires_grad_()},
     lambda a, x: torch.cumulative_trapezoid(a, x), dim=-1)

# ---- Rearranging ----
case("combinations__r2", "combinations", {"a": uniform(4)},
     lambda a: torch.combinations(a), r=2, with_replacement=False)
case("combinations__r3", "combinations", {"a": uniform(5)},
     lambda a: torch.combinations(a, r=3), r=3, with_replacement=False)
case("combinations__replacement", "combinations", {"a": uniform(3)},
     lambda a: torch.combinations(a, r=2, with_replacement=True), r=2, with_replacement=True)
case("diagflat__above", "diagflat", {"a": uniform(2, 2)}, lambda a: torch.diagflat(a, 1),
     offset=1)
case("diagflat__below", "diagflat", {"a": uniform(3)}, lambda a: torch.diagflat(a, -2), offset=-2)
case("msort", "msort", {"a": uniform(4, 3)}, torch.msort)
case("select_scatter", "select_scatter", {"a": uniform(3, 4), "b": uniform(3)},
     lambda a, b: torch.select_scatter(a, b, 1, -2), dim=1, index=-2)
case("slice_scatter__step", "slice_scatter", {"a": uniform(5, 3), "b": uniform(2, 3)},
     lambda a, b: torch.slice_scatter(a, b, dim=0, start=1, step=2), dim=0, start=1, step=2)
case("slice_scatter__end", "slice_scatter", {"a": uniform(2, 6), "b": uniform(2, 2)},
     lambda a, b: torch.slice_scatter(a, b, dim=1, start=2, end=4, step=1), dim=1, start=2, end=4,
     step=1)
case("diagonal_scatter__offset", "diagonal_scatter", {"a": uniform(3, 4), "b": uniform(3)},
     lambda a, b: torch.diagonal_scatter(a, b, 1), offset=1, dim1=0, dim2=1)
case("diagonal_scatter__dims", "diagonal_scatter", {"a": uniform(2, 3, 3), "b": uniform(3, 2)},
     lambda a, b: torch.diagonal_scatter(a, b, 0, 0, 2), offset=0, dim1=0, dim2=2)
case("diagonal_scatter__below", "diagonal_scatter", {"a": uniform(4, 3), "b": uniform(2)},
     lambda a, b: torch.diagonal_scatter(a, b, -2), offset=-2, dim1=0, dim2=1)
case("masked_scatter", "masked_scatter",
     {"a": uniform(2, 3), "mask": torch.tensor([True, False, True]), "b": uniform(7)},
     torch.masked_scatter)

# ---- The functional RNN cells ----
def cell_inputs(gates, bias=True):
    inputs = {"x": uniform(3, 4), "h": uniform(3, 5)}
    inputs["w_ih"] = uniform(gates * 5, 4)
    inputs["w_hh"] = uniform(gates * 5, 5)
    if bias:
        inputs["b_ih"] = uniform(gates * 5)
        inputs["b_hh"] = uniform(gates * 5)
    return inputs


lstm = cell_inputs(4)
lstm = {"x": lstm["x"], "h": lstm["h"], "c": uniform(3, 5), **{k: lstm[k] for k in
                                                              ("w_ih", "w_hh", "b_ih", "b_hh")}}
case("lstm_cell", "lstm_cell", lstm,
     lambda x, h, c, w_ih, w_hh, b_ih, b_hh: torch.cat(
         [t.flatten() for t in torch.lstm_cell(x, (h, c), w_ih, w_hh, b_ih, b_hh)]))
case("gru_cell", "gru_cell", cell_inputs(3), torch.gru_cell)
case("gru_cell__no_bias", "gru_cell", cell_inputs(3, bias=False), torch.gru_cell)
case("rnn_tanh_cell", "rnn_tanh_cell", cell_inputs(1), torch.rnn_tanh_cell)
case("rnn_relu_cell", "rnn_relu_cell", cell_inputs(1), torch.rnn_relu_cell)

# ---- logspace and the windows (no operands) ----
for dtype in (torch.float64, torch.float32):
    label = "f64" if dtype == torch.float64 else "f32"
    case("logspace__" + label, "logspace", {},
         lambda: torch.logspace(-2.0, 3.0, 11, base=10.0, dtype=dtype),
         start=-2.0, end=3.0, steps=11, base=10.0, dtype=label)
    case("logspace__base2_" + label, "logspace", {},
         lambda: torch.logspace(1.0, -3.5, 6, base=2.0, dtype=dtype),
         start=1.0, end=-3.5, steps=6, base=2.0, dtype=label)
    for length in (0, 1, 2, 7, 8):
        for periodic in (True, False):
            suffix = f"{length}_{'periodic' if periodic else 'symmetric'}_{label}"
            for window in ("hann", "hamming", "blackman", "bartlett", "kaiser"):
                fn = getattr(torch, window + "_window")
                case(f"{window}_window__{suffix}", window + "_window", {},
                     lambda fn=fn: fn(length, periodic=periodic, dtype=dtype),
                     length=length, periodic=periodic, dtype=label)
    case("hamming_window__alpha_beta_" + label, "hamming_window", {},
         lambda: torch.hamming_window(9, periodic=False, alpha=0.6, beta=0.3, dtype=dtype),
         length=9, periodic=False, alpha=0.6, beta=0.3, dtype=label)
    case("kaiser_window__beta_" + label, "kaiser_window", {},
         lambda: torch.kaiser_window(9, periodic=True, beta=4.5, dtype=dtype),
         length=9, periodic=True, beta=4.5, dtype=label)

# ---- The deprecated norms (differentiable) ----
case("nuclear_norm", "nuclear_norm", {"a": uniform(3, 4)}, lambda a: torch.nuclear_norm(a))
case("nuclear_norm__dims_keepdim", "nuclear_norm", {"a": uniform(2, 3, 4)},
     lambda a: torch.nuclear_norm(a, dim=(0, 2), keepdim=True), dim=[0, 2], keepdim=True)
case("frobenius_norm", "frobenius_norm", {"a": uniform(3, 4)}, lambda a: torch.frobenius_norm(a))
case("frobenius_norm__dims", "frobenius_norm", {"a": uniform(2, 3, 4)},
     lambda a: torch.frobenius_norm(a, dim=(0, 2)), dim=[0, 2], keepdim=False)


# ---- Results of several tensors, not differentiable: unique, histogram, fill_diagonal_ ----
# (histogramdd at the end)
def outputs_case(name, op, inputs, outputs, **params):
    cases.append(op_outputs_case(name, op, inputs, outputs, **params))


ints = torch.randint(0, 5, (3, 4))
out, inverse, counts = torch.unique(ints, return_inverse=True, return_counts=True)
outputs_case("unique__int64", "unique", {"a": ints},
             {"y": out, "inverse": inverse, "counts": counts})
floats = torch.tensor([2.5, -1.0, 2.5, 0.0, -0.0, 7.0, -1.0, 2.5])
out, inverse, counts = torch.unique(floats, return_inverse=True, return_counts=True)
outputs_case("unique__float", "unique", {"a": floats},
             {"y": out, "inverse": inverse, "counts": counts})
rows = torch.tensor([[1, 2, 3], [1, 2, 3], [0, 5, 1], [1, 1, 9], [0, 5, 1]])
for dim in (0, 1):
    out, inverse, counts = torch.unique(rows, dim=dim, return_inverse=True, return_counts=True)
    outputs_case(f"unique_dim__{dim}", "unique_dim", {"a": rows},
                 {"y": out, "inverse": inverse, "counts": counts}, dim=dim)
planes = torch.randint(0, 2, (2, 3, 4)).float()
out, inverse, counts = torch.unique(planes, dim=2, return_inverse=True, return_counts=True)
outputs_case("unique_dim__3d", "unique_dim", {"a": planes},
             {"y": out, "inverse": inverse, "counts": counts}, dim=2)
data = torch.tensor([1.0, 2.0, 1.0, 4.0, 2.5, -1.0, 0.0])
hist, edges = torch.histogram(data, bins=4, range=(0.0, 4.0))
outputs_case("histogram__range", "histogram", {"a": data}, {"y": hist, "edges": edges},
             bins=4, range=[0.0, 4.0], density=False)
samples = torch.randn(200, dtype=torch.float64)
hist, edges = torch.histogram(samples, bins=7)
outputs_case("histogram__data_range_f64", "histogram", {"a": samples},
             {"y": hist, "edges": edges}, bins=7, density=False)
weights = torch.rand(200, dtype=torch.float64)
hist, edges = torch.histogram(samples, bins=5, weight=weights, density=True)
outputs_case("histogram__weight_density", "histogram", {"a": samples, "weight": weights},
             {"y": hist, "edges": edges}, bins=5, density=True)
given = torch.tensor([-2.0, -0.5, 0.0, 1.0, 3.0], dtype=torch.float64)
hist, edges = torch.histogram(samples, bins=given, weight=weights)
outputs_case("histogram__edges", "histogram", {"a": samples, "bin_edges": given, "weight": weights},
             {"y": hist, "edges": edges}, density=False)
for shape, wrap in (((3, 4), False), ((7, 3), True), ((7, 3), False), ((3, 3, 3), False)):
    t = torch.rand(*shape)
    filled = t.clone().fill_diagonal_(-2.5, wrap=wrap)
    outputs_case(f"fill_diagonal__{'x'.join(map(str, shape))}_{'wrap' if wrap else 'nowrap'}",
                 "fill_diagonal_", {"a": t}, {"y": filled}, value=-2.5, wrap=wrap)

# ---- histogramdd: points (..., D), bins per dim, the edges of each ----
def histogramdd_case(name, points, bins, range=None, weight=None, density=False):
    hist, edges = torch.histogramdd(points, bins=bins, range=range, weight=weight,
                                    density=density)
    inputs = {"a": points}
    if weight is not None:
        inputs["weight"] = weight
    if isinstance(bins, list) and isinstance(bins[0], torch.Tensor):
        inputs.update({f"bins{d}": b for d, b in enumerate(bins)})
        params = dict(edges_given=True)
    else:
        params = dict(bins=bins, edges_given=False)
    if range is not None:
        params["range"] = list(range)
    outputs = {"y": hist}
    outputs.update({f"edges{d}": e for d, e in enumerate(edges)})
    outputs_case("histogramdd__" + name, "histogramdd", inputs, outputs, density=density,
                 dims=len(edges), **params)


cloud = torch.randn(300, 2, dtype=torch.float64)
histogramdd_case("data_range_2d", cloud, [4, 3])
histogramdd_case("range_weight_density", cloud, [5, 2], range=[-1.0, 1.0, -2.0, 0.5],
                 weight=torch.rand(300, dtype=torch.float64), density=True)
histogramdd_case("int_bins_3d_batched", torch.rand(4, 25, 3), 3)
histogramdd_case("given_edges", cloud,
                 [torch.tensor([-3.0, -1.0, 0.0, 0.5, 3.0], dtype=torch.float64),
                  torch.tensor([-1.0, 1.0], dtype=torch.float64)],
                 weight=torch.rand(300, dtype=torch.float64))
histogramdd_case("equal_coordinates_1d", torch.full((6, 1), 2.0), [3])

write("array_functions.json", "make_array_functions.py", cases)
