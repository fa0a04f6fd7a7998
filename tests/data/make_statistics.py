"""PyTorch 1.13's products, running reductions, order statistics and searches
(tests/autograd/test_statistics.cpp).

prod, cumprod, logcumsumexp, cummax, cummin, median, nanmedian, kthvalue, quantile,
nanquantile, nansum, nanmean, aminmax, var_mean, std_mean, histc, unique_consecutive,
searchsorted and bucketize: each
case's inputs (in the order params["inputs"] lists them), its outputs out0, out1, ..., and for
the differentiable ones the gradient d_<input> of sum(out_i * w_i) over the floating outputs
with respect to every floating input it reaches (float64 unless the name says otherwise).
index_ties marks a case whose indices torch picks among equal elements (nanmedian of a row of
NaNs: its CPU kernel's choice, not the first NaN): the test checks that each index holds its value.

Run with Debian's python3-torch: /usr/bin/python3 tests/data/make_statistics.py
"""
import torch

from reference import write

generator = torch.Generator().manual_seed(11)
cases = []
inf, nan = float("inf"), float("nan")


def randn(*shape, dtype=torch.float64):
    return torch.randn(*shape, generator=generator, dtype=dtype)


def uniform(low, high, *shape):
    return torch.rand(*shape, generator=generator, dtype=torch.float64) * (high - low) + low


def case(name, inputs, fn, params=None, differentiable=True):
    """inputs: name -> tensor; fn(*inputs) -> tensor or tuple of tensors."""
    leaves = {k: (v.clone().requires_grad_() if differentiable and v.is_floating_point() else v)
              for k, v in inputs.items()}
    out = fn(*leaves.values())
    outs = list(out) if isinstance(out, (list, tuple)) else [out]
    tensors = dict(inputs)
    for i, o in enumerate(outs):
        tensors[f"out{i}"] = o.detach()
    if differentiable and any(t.requires_grad for t in leaves.values()):
        total = 0
        for i, o in enumerate(outs):
            if not o.is_floating_point():
                continue
            w = torch.linspace(-1, 2, o.numel(), dtype=o.dtype).reshape(o.shape)
            tensors[f"w{i}"] = w
            total = total + (o * w).sum()
        total.backward()
        for k, v in leaves.items():
            if v.requires_grad and v.grad is not None:
                tensors["d_" + k] = v.grad
    cases.append({"name": name,
                  "params": dict(params or {}, outputs=len(outs), inputs=list(inputs.keys())),
                  "tensors": tensors})


def signed(low, high, *shape):
    """|x| in [low, high) with random signs: factors of a product that stays O(1)."""
    sign = torch.where(torch.rand(*shape, generator=generator) < 0.5, -1.0, 1.0).double()
    return uniform(low, high, *shape) * sign


# ---- products ------------------------------------------------------------------------------------
case("prod_all", {"x": signed(0.5, 1.5, 3, 4)}, lambda x: torch.prod(x))
case("prod_dim1", {"x": signed(0.5, 1.5, 3, 5, 2)}, lambda x: torch.prod(x, 1), {"dim": 1})
case("prod_dim0_keepdim", {"x": signed(0.5, 1.5, 4, 3)}, lambda x: torch.prod(x, 0, keepdim=True),
     {"dim": 0, "keepdim": True})
# One zero in a row, two zeros in another: the gradient of each element is the product of the
# others, which x.prod() / x cannot give there.
zeros = signed(0.5, 1.5, 3, 5)
zeros[0, 2] = 0.0
zeros[1, 1] = 0.0
zeros[1, 3] = 0.0
case("prod_zeros_dim1", {"x": zeros}, lambda x: torch.prod(x, 1), {"dim": 1})
one_zero = signed(0.5, 1.5, 6)
one_zero[4] = 0.0
case("prod_all_one_zero", {"x": one_zero}, lambda x: torch.prod(x))
case("prod_int64", {"x": torch.tensor([[3, -2, 5], [7, 1, -1]])}, lambda x: torch.prod(x, 1),
     {"dim": 1}, differentiable=False)
case("prod_int32_all", {"x": torch.tensor([2, -3, 4, 5], dtype=torch.int32)},
     lambda x: torch.prod(x), differentiable=False)
case("prod_bool", {"x": torch.tensor([[True, True], [True, False]])}, lambda x: torch.prod(x, 1),
     {"dim": 1}, differentiable=False)
case("prod_float32", {"x": signed(0.5, 1.5, 4, 33).float()}, lambda x: torch.prod(x, 1),
     {"dim": 1})

# ---- running reductions --------------------------------------------------------------------------
case("cumprod_dim1", {"x": signed(0.5, 1.5, 3, 6, 2)}, lambda x: torch.cumprod(x, 1), {"dim": 1})
case("cumprod_last", {"x": signed(0.5, 1.5, 4, 5)}, lambda x: torch.cumprod(x, -1), {"dim": -1})
cz = signed(0.5, 1.5, 4, 6)
cz[0, 2] = 0.0          # one zero
cz[1, 1] = 0.0          # two zeros
cz[1, 4] = 0.0
cz[2, 0] = 0.0          # a zero first
cz[3, 5] = 0.0          # a zero last
case("cumprod_zeros", {"x": cz}, lambda x: torch.cumprod(x, 1), {"dim": 1})
case("cumprod_int32", {"x": torch.tensor([[2, -3, 4], [1, 5, -6]], dtype=torch.int32)},
     lambda x: torch.cumprod(x, 1), {"dim": 1}, differentiable=False)
case("cumprod_bool", {"x": torch.tensor([True, True, False, True])}, lambda x: torch.cumprod(x, 0),
     {"dim": 0}, differentiable=False)
case("logcumsumexp_dim1", {"x": randn(3, 8) * 30}, lambda x: torch.logcumsumexp(x, 1), {"dim": 1})
case("logcumsumexp_dim0", {"x": randn(5, 3)}, lambda x: torch.logcumsumexp(x, 0), {"dim": 0})
case("logcumsumexp_specials",
     {"x": torch.tensor([[-inf, -inf, 1.0, -inf, 2.0], [1.0, inf, 2.0, inf, -inf],
                         [0.5, nan, 1.0, 2.0, 3.0], [1e300, 1e300, -1e300, 0.0, 1e300]],
                        dtype=torch.float64)},
     lambda x: torch.logcumsumexp(x, 1), {"dim": 1}, differentiable=False)
case("logcumsumexp_float32", {"x": (randn(4, 40) * 20).float()}, lambda x: torch.logcumsumexp(x, 1),
     {"dim": 1}, differentiable=False)
ties = torch.tensor([[1.0, 3.0, 3.0, 2.0, 3.0, 0.5], [-1.0, -2.0, -2.0, 4.0, -2.0, -3.0]],
                    dtype=torch.float64)
case("cummax_ties", {"x": ties}, lambda x: torch.cummax(x, 1), {"dim": 1})
case("cummin_ties", {"x": ties}, lambda x: torch.cummin(x, 1), {"dim": 1})
case("cummax_dim0", {"x": randn(6, 3)}, lambda x: torch.cummax(x, 0), {"dim": 0})
case("cummin_dim0", {"x": randn(6, 3)}, lambda x: torch.cummin(x, 0), {"dim": 0})
specials = torch.tensor([1.0, 3.0, nan, 2.0, nan, 5.0, -inf, inf], dtype=torch.float64)
case("cummax_nan", {"x": specials}, lambda x: torch.cummax(x, 0), {"dim": 0}, differentiable=False)
case("cummin_nan", {"x": specials}, lambda x: torch.cummin(x, 0), {"dim": 0}, differentiable=False)
case("cummax_int64", {"x": torch.tensor([[3, 1, 4, 4, 2], [-5, -9, 2, 6, 6]])},
     lambda x: torch.cummax(x, 1), {"dim": 1}, differentiable=False)
case("cummin_bool", {"x": torch.tensor([True, False, True, False])}, lambda x: torch.cummin(x, 0),
     {"dim": 0}, differentiable=False)

# ---- order statistics ----------------------------------------------------------------------------
# Random float64 values have no ties: every index is determined.
case("median_all_odd", {"x": randn(3, 5)}, lambda x: torch.median(x))
case("median_all_even", {"x": randn(4, 2)}, lambda x: torch.median(x))
# Ties at the median: the gradient is split among them.
case("median_all_ties", {"x": torch.tensor([2.0, 1.0, 2.0, 3.0, 2.0, 0.0], dtype=torch.float64)},
     lambda x: torch.median(x))
case("median_dim1", {"x": randn(4, 7)}, lambda x: torch.median(x, 1), {"dim": 1})
case("median_dim0_keepdim", {"x": randn(4, 3, 2)}, lambda x: torch.median(x, 0, keepdim=True),
     {"dim": 0, "keepdim": True})
case("median_nan_rows",
     {"x": torch.tensor([[1.0, nan, 2.0, nan], [4.0, 3.0, 2.0, 1.0], [nan, 0.0, 5.0, 6.0]],
                        dtype=torch.float64)},
     lambda x: torch.median(x, 1), {"dim": 1}, differentiable=False)
case("median_all_nan", {"x": torch.tensor([1.0, nan, 2.0], dtype=torch.float64)},
     lambda x: torch.median(x), differentiable=False)
case("median_int64", {"x": torch.tensor([[5, -3, 9, 1], [2, 8, 7, 0]])}, lambda x: torch.median(x, 1),
     {"dim": 1}, differentiable=False)
case("nanmedian_dim1",
     {"x": torch.tensor([[1.0, nan, 2.0, nan, 7.0], [4.0, 3.0, 2.0, 1.0, 0.0],
                         [nan, nan, nan, nan, nan], [nan, 9.0, 5.0, 6.0, nan]],
                        dtype=torch.float64)},
     lambda x: torch.nanmedian(x, 1), {"dim": 1, "index_ties": True}, differentiable=False)
case("nanmedian_all", {"x": torch.tensor([[3.0, nan], [1.0, 2.0], [nan, 7.0]], dtype=torch.float64)},
     lambda x: torch.nanmedian(x))
case("nanmedian_grad", {"x": randn(3, 6)}, lambda x: torch.nanmedian(x, 1), {"dim": 1})
case("kthvalue_dim1", {"x": randn(4, 6)}, lambda x: torch.kthvalue(x, 2, 1), {"k": 2, "dim": 1})
case("kthvalue_dim0_keepdim", {"x": randn(5, 3)}, lambda x: torch.kthvalue(x, 5, 0, keepdim=True),
     {"k": 5, "dim": 0, "keepdim": True})
case("kthvalue_int32", {"x": torch.tensor([[9, 2, 7, 4], [1, 0, 3, 8]], dtype=torch.int32)},
     lambda x: torch.kthvalue(x, 3, 1), {"k": 3, "dim": 1}, differentiable=False)

# ---- quantiles -----------------------------------------------------------------------------------
for mode in ("linear", "lower", "higher", "nearest", "midpoint"):
    qs = torch.tensor([0.0, 0.1, 0.25, 0.5, 0.625, 0.9, 1.0], dtype=torch.float64)
    case(f"quantile_{mode}", {"x": randn(3, 9), "q": qs},
         lambda x, q, mode=mode: torch.quantile(x, q, dim=1, interpolation=mode),
         {"dim": 1, "interpolation": mode})
    # float32: the ranks and the lerp in float32, bit for bit.
    case(f"quantile_{mode}_float32", {"x": randn(4, 11, dtype=torch.float32),
                                      "q": qs.float()},
         lambda x, q, mode=mode: torch.quantile(x, q, dim=1, interpolation=mode),
         {"dim": 1, "interpolation": mode}, differentiable=False)
case("quantile_scalar_all", {"x": randn(5, 4)}, lambda x: torch.quantile(x, 0.3), {"q": 0.3})
case("quantile_scalar_dim0_keepdim", {"x": randn(6, 2, 3)},
     lambda x: torch.quantile(x, 0.8, dim=0, keepdim=True), {"q": 0.8, "dim": 0, "keepdim": True})
case("quantile_vector_keepdim", {"x": randn(2, 5, 3), "q": torch.tensor([0.2, 0.7], dtype=torch.float64)},
     lambda x, q: torch.quantile(x, q, dim=1, keepdim=True), {"dim": 1, "keepdim": True})
case("quantile_scalar_float32", {"x": randn(7, 13, dtype=torch.float32)},
     lambda x: torch.quantile(x, 0.3, dim=1), {"q": 0.3, "dim": 1}, differentiable=False)
nan_rows = torch.tensor([[1.0, nan, 3.0, 2.0, 5.0], [4.0, 3.0, 2.0, 1.0, 0.0],
                         [nan, nan, nan, nan, nan], [nan, 9.0, 5.0, 6.0, nan]], dtype=torch.float64)
case("quantile_nan", {"x": nan_rows, "q": torch.tensor([0.3, 0.5], dtype=torch.float64)},
     lambda x, q: torch.quantile(x, q, dim=1), {"dim": 1}, differentiable=False)
case("nanquantile", {"x": nan_rows, "q": torch.tensor([0.0, 0.3, 0.5, 1.0], dtype=torch.float64)},
     lambda x, q: torch.nanquantile(x, q, dim=1), {"dim": 1}, differentiable=False)
case("nanquantile_scalar_all", {"x": nan_rows}, lambda x: torch.nanquantile(x, 0.4), {"q": 0.4},
     differentiable=False)
# Ties: torch sorts, and its (stable) sort sends each rank's gradient to the k-th of the equal
# elements in position order; leangrad selects instead and must pick the same ones.
case("quantile_ties", {"x": torch.tensor([[5.0, 5.0, 5.0, 1.0, 5.0], [2.0, 1.0, 2.0, 2.0, 1.0]],
                                         dtype=torch.float64),
                       "q": torch.tensor([0.5, 0.3, 0.85], dtype=torch.float64)},
     lambda x, q: torch.quantile(x, q, dim=1), {"dim": 1})
case("nanquantile_ties", {"x": torch.tensor([[5.0, nan, 5.0, 1.0, 5.0, nan]], dtype=torch.float64),
                          "q": torch.tensor([0.3, 0.9], dtype=torch.float64)},
     lambda x, q: torch.nanquantile(x, q, dim=1), {"dim": 1})
case("quantile_scalar_ties_nan", {"x": torch.tensor([[5.0, nan, 5.0, 1.0, 5.0, nan]],
                                                   dtype=torch.float64)},
     lambda x: torch.quantile(x, 0.3, dim=1), {"q": 0.3, "dim": 1})

# ---- skipping NaN, pairs -------------------------------------------------------------------------
with_nan = randn(4, 5)
with_nan[0, 1] = nan
with_nan[2, 3] = nan
with_nan[2, 4] = nan
case("nansum_dim1", {"x": with_nan}, lambda x: torch.nansum(x, 1), {"dims": [1]})
case("nansum_all", {"x": with_nan}, lambda x: torch.nansum(x), {"dims": []})
case("nanmean_dim0_keepdim", {"x": with_nan}, lambda x: torch.nanmean(x, 0, keepdim=True),
     {"dims": [0], "keepdim": True})
case("nanmean_all_nan_row", {"x": torch.tensor([[nan, nan], [1.0, nan]], dtype=torch.float64)},
     lambda x: torch.nanmean(x, 1), {"dims": [1]}, differentiable=False)
case("nansum_int64", {"x": torch.tensor([[1, 2], [3, 4]])}, lambda x: torch.nansum(x, 0),
     {"dims": [0]}, differentiable=False)
case("aminmax_all", {"x": randn(3, 4)}, lambda x: torch.aminmax(x), differentiable=False)
case("aminmax_dim1_keepdim", {"x": torch.tensor([[1.0, nan, 2.0], [3.0, -1.0, 3.0]],
                                                dtype=torch.float64)},
     lambda x: torch.aminmax(x, dim=1, keepdim=True), {"dim": 1, "keepdim": True},
     differentiable=False)
case("aminmax_int32", {"x": torch.tensor([[5, -2, 9], [0, 0, 1]], dtype=torch.int32)},
     lambda x: torch.aminmax(x, dim=0), {"dim": 0}, differentiable=False)
case("var_mean_dim1", {"x": randn(3, 6)}, lambda x: torch.var_mean(x, 1), {"dims": [1]})
case("var_mean_biased_all", {"x": randn(4, 3)}, lambda x: torch.var_mean(x, unbiased=False),
     {"dims": [], "unbiased": False})
case("std_mean_dims_keepdim", {"x": randn(2, 3, 4)},
     lambda x: torch.std_mean(x, [0, 2], keepdim=True), {"dims": [0, 2], "keepdim": True})

# ---- searching ---------------------------------------------------------------------------------
seq = torch.tensor([-2.0, -0.5, 0.0, 0.0, 1.5, 3.0, 3.0, 3.0, 7.0], dtype=torch.float64)
probes = torch.tensor([[-3.0, -2.0, 0.0, 0.1], [3.0, 7.0, 8.0, nan], [-inf, inf, 1.5, -0.0]],
                      dtype=torch.float64)
case("searchsorted_1d", {"sorted": seq, "values": probes},
     lambda s, v: (torch.searchsorted(s, v), torch.searchsorted(s, v, right=True)),
     differentiable=False)
rows = torch.sort(randn(3, 6), dim=1).values
rows[2, 5] = nan  # NaN at a row's end, where sorting puts it
row_probes = torch.cat([rows[:, 1:3], randn(3, 4), torch.full((3, 1), nan, dtype=torch.float64)], 1)
case("searchsorted_rows", {"sorted": rows, "values": row_probes},
     lambda s, v: (torch.searchsorted(s, v), torch.searchsorted(s, v, side="right")),
     differentiable=False)
unsorted = torch.tensor([[3.0, -1.0, 2.0, 2.0, 0.5], [9.0, 8.0, 7.0, 6.0, 5.0]], dtype=torch.float64)
order = torch.argsort(unsorted, dim=1)
case("searchsorted_sorter", {"sorted": unsorted, "values": torch.tensor([[2.0, -5.0, 10.0], [6.5, 5.0, 9.0]], dtype=torch.float64), "sorter": order},
     lambda s, v, o: (torch.searchsorted(s, v, sorter=o), torch.searchsorted(s, v, right=True, sorter=o)),
     differentiable=False)
case("searchsorted_int_float", {"sorted": torch.tensor([1, 3, 5, 7]),
                                "values": torch.tensor([0.5, 3.0, 3.5, 8.0], dtype=torch.float64)},
     lambda s, v: (torch.searchsorted(s, v), torch.searchsorted(s, v, right=True, out_int32=True)),
     differentiable=False)
case("searchsorted_float32", {"sorted": torch.tensor([0.1, 0.2, 0.3], dtype=torch.float32),
                              "values": torch.tensor([0.1, 0.2, 0.30000001], dtype=torch.float32)},
     lambda s, v: (torch.searchsorted(s, v), torch.searchsorted(s, v, right=True)),
     differentiable=False)
case("bucketize", {"values": torch.tensor([[1.0, 5.0, 3.0], [7.0, 0.0, 3.5]], dtype=torch.float64),
                   "boundaries": torch.tensor([1.0, 3.0, 5.0, 7.0], dtype=torch.float64)},
     lambda v, b: (torch.bucketize(v, b), torch.bucketize(v, b, right=True, out_int32=True)),
     differentiable=False)

# ---- histograms ----------------------------------------------------------------------------------
hist = torch.cat([randn(50), torch.tensor([3.0, -3.0, 0.0], dtype=torch.float64)])
case("histc_data_range", {"x": hist}, lambda x: torch.histc(x, bins=7), {"bins": 7},
     differentiable=False)
case("histc_given_range", {"x": hist}, lambda x: torch.histc(x, bins=6, min=-1.5, max=3.0),
     {"bins": 6, "min": -1.5, "max": 3.0}, differentiable=False)
case("histc_float32", {"x": (randn(200) * 3).float()},
     lambda x: torch.histc(x, bins=10, min=-2.2, max=4.1), {"bins": 10, "min": -2.2, "max": 4.1},
     differentiable=False)
case("histc_one_value", {"x": torch.tensor([2.0, 2.0], dtype=torch.float64)},
     lambda x: torch.histc(x, bins=4), {"bins": 4}, differentiable=False)
# min == max other than 0: the data's range, as with the default 0 and 0.
case("histc_equal_range", {"x": torch.tensor([4.0, 1.0, 3.0, 2.0], dtype=torch.float64)},
     lambda x: torch.histc(x, bins=3, min=7.0, max=7.0), {"bins": 3, "min": 7.0, "max": 7.0},
     differentiable=False)

# ---- runs of equal elements ---------------------------------------------------------------------
def unique_runs(x, dim=None):
    return torch.unique_consecutive(x, return_inverse=True, return_counts=True, dim=dim)


case("unique_consecutive_flat",
     {"x": torch.tensor([[1.0, 1.0, 2.0, 2.0, 3.0], [1.0, 1.0, nan, nan, 2.0]], dtype=torch.float64)},
     lambda x: unique_runs(x), differentiable=False)
case("unique_consecutive_dim1", {"x": torch.tensor([[1, 1, 2, 2, 3, 3], [0, 0, 5, 5, 0, 1]])},
     lambda x: unique_runs(x, 1), {"dim": 1}, differentiable=False)
case("unique_consecutive_dim0", {"x": torch.tensor([[1, 2], [1, 2], [3, 4], [1, 2]])},
     lambda x: unique_runs(x, 0), {"dim": 0}, differentiable=False)
case("unique_consecutive_empty", {"x": torch.zeros(0, dtype=torch.float64)},
     lambda x: unique_runs(x), differentiable=False)
case("unique_consecutive_scalar", {"x": torch.tensor(5.0, dtype=torch.float64)},
     lambda x: unique_runs(x), differentiable=False)

write("statistics.json", "make_statistics.py", cases)
