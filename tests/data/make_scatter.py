"""PyTorch 1.13's scatters (tests/autograd/test_scatter.cpp).

scatter (a src or a value, with or without reduce), scatter_reduce (sum, prod, mean, amax, amin,
with and without include_self), index_copy, index_reduce and index_put_ with accumulate: each
case's inputs (in the order params["inputs"] lists them), its output out0, and for the
differentiable ones the gradient d_<input> of sum(out0 * w0) with respect to every floating input
not listed in params["no_grad"]. Cases whose index names a place twice are values only where
torch's gradient is not the gradient of its result (scatter and index_copy give every competing
element the gradient, not only the one written; the test checks those by finite differences).

Run with Debian's python3-torch: /usr/bin/python3 tests/data/make_scatter.py
"""
import warnings

import torch

from reference import write
from torch_cases import weighted_case

warnings.filterwarnings("ignore", message=".*is in beta.*")

generator = torch.Generator().manual_seed(23)
cases = []
nan = float("nan")


def randn(*shape, dtype=torch.float64):
    return torch.randn(*shape, generator=generator, dtype=dtype)


def randint(high, *shape):
    return torch.randint(0, high, shape, generator=generator)


def distinct_rows(high, rows, count):
    """(rows, count) indices, each row distinct values in [0, high): no place named twice."""
    return torch.stack([torch.randperm(high, generator=generator)[:count] for _ in range(rows)])


def case(*args, **kwargs):
    cases.append(weighted_case(*args, **kwargs))


# ---- scatter -------------------------------------------------------------------------------------
case("scatter_src_dim0", {"x": randn(5, 3), "index": distinct_rows(5, 3, 4).t().contiguous(),
                          "src": randn(4, 3)},
     lambda x, i, s: torch.scatter(x, 0, i, s), {"dim": 0})
case("scatter_src_dim1", {"x": randn(3, 6), "index": distinct_rows(6, 3, 4), "src": randn(3, 4)},
     lambda x, i, s: torch.scatter(x, 1, i, s), {"dim": 1})
# src larger than the index: only its leading block is read (torch 1.13 cannot differentiate this;
# the test checks the gradient's shape and zeros itself).
case("scatter_src_larger", {"x": randn(3, 6), "index": distinct_rows(6, 3, 2), "src": randn(4, 5)},
     lambda x, i, s: torch.scatter(x, 1, i, s), {"dim": 1}, differentiable=False)
# A place named twice along a line: torch's CPU loop writes in index order, the last one stays.
case("scatter_repeats", {"x": randn(2, 4), "index": torch.tensor([[1, 3, 1, 1], [0, 0, 2, 0]]),
                         "src": randn(2, 4)},
     lambda x, i, s: torch.scatter(x, 1, i, s), {"dim": 1}, differentiable=False)
case("scatter_value", {"x": randn(4, 5), "index": distinct_rows(4, 5, 2).t().contiguous()},
     lambda x, i: torch.scatter(x, 0, i, 2.5), {"dim": 0, "value": 2.5})
case("scatter_int64", {"x": torch.arange(12).reshape(3, 4), "index": torch.tensor([[2], [0], [3]]),
                       "src": torch.tensor([[-7], [8], [9]])},
     lambda x, i, s: torch.scatter(x, 1, i, s), {"dim": 1}, differentiable=False)
case("scatter_bool", {"x": torch.tensor([True, False, True, False]), "index": torch.tensor([3, 0]),
                      "src": torch.tensor([True, False])},
     lambda x, i, s: torch.scatter(x, 0, i, s), {"dim": 0}, differentiable=False)
case("scatter_with_add", {"x": randn(3, 4),
                          "index": torch.tensor([[0, 0, 3], [1, 2, 1], [3, 3, 3]]),
                          "src": randn(3, 3)},
     lambda x, i, s: torch.scatter(x, 1, i, s, reduce="add"), {"dim": 1, "reduce": "add"},
     differentiable=False)
case("scatter_with_multiply", {"x": randn(3, 4),
                               "index": torch.tensor([[0, 0, 3], [1, 2, 1], [3, 3, 3]]),
                               "src": randn(3, 3)},
     lambda x, i, s: torch.scatter(x, 1, i, s, reduce="multiply"), {"dim": 1, "reduce": "multiply"},
     differentiable=False)
case("scatter_value_with_multiply", {"x": randn(2, 5), "index": torch.tensor([[4, 4], [0, 2]])},
     lambda x, i: torch.scatter(x, 1, i, 3.0, reduce="multiply"),
     {"dim": 1, "value": 3.0, "reduce": "multiply"}, differentiable=False)

# ---- scatter_reduce ------------------------------------------------------------------------------
# (3, 5) inputs, each row's 6 src elements landing on 5 places, some twice or three times, some
# not at all; random float64 values have no ties, so amax and amin are differentiable.
reduce_index = torch.tensor([[0, 2, 0, 4, 2, 0], [1, 1, 1, 3, 3, 4], [4, 0, 2, 2, 4, 1]])
for reduce in ["sum", "prod", "mean", "amax", "amin"]:
    for include_self in [True, False]:
        name = f"scatter_reduce_{reduce}_{'self' if include_self else 'noself'}"
        case(name, {"x": randn(3, 5), "index": reduce_index, "src": randn(3, 6)},
             lambda x, i, s, r=reduce, inc=include_self: torch.scatter_reduce(
                 x, 1, i, s, r, include_self=inc),
             {"dim": 1, "reduce": reduce, "include_self": include_self})
# Along dim 0 of a (4, 3, 2) input, the index smaller in the other dims.
case("scatter_reduce_dim0_mean", {"x": randn(4, 3, 2), "index": randint(4, 5, 2, 2),
                                  "src": randn(5, 2, 2)},
     lambda x, i, s: torch.scatter_reduce(x, 0, i, s, "mean"), {"dim": 0, "reduce": "mean",
                                                                "include_self": True})
case("scatter_reduce_dim2_amax", {"x": randn(2, 3, 4), "index": randint(4, 2, 3, 5),
                                  "src": randn(2, 3, 5)},
     lambda x, i, s: torch.scatter_reduce(x, 2, i, s, "amax", include_self=False),
     {"dim": 2, "reduce": "amax", "include_self": False})
# Products with zeros: place 0 of row 0 holds one zero factor, place 2 of row 1 two, place 1 of
# row 2 a zero only in input (include_self). The first derivatives are the products of the others.
zx = randn(3, 4)
zx[2, 1] = 0.0
zs = randn(3, 5)
zs[0, 1] = 0.0
zs[1, 0] = 0.0
zs[1, 3] = 0.0
zero_index = torch.tensor([[0, 0, 3, 0, 1], [2, 1, 1, 2, 2], [1, 1, 0, 3, 3]])
for include_self in [True, False]:
    case(f"scatter_reduce_prod_zeros_{'self' if include_self else 'noself'}",
         {"x": zx, "index": zero_index, "src": zs},
         lambda x, i, s, inc=include_self: torch.scatter_reduce(x, 1, i, s, "prod",
                                                                include_self=inc),
         {"dim": 1, "reduce": "prod", "include_self": include_self})
case("scatter_reduce_float32_sum", {"x": randn(3, 5).float(), "index": reduce_index,
                                    "src": randn(3, 6).float()},
     lambda x, i, s: torch.scatter_reduce(x, 1, i, s, "sum"), {"dim": 1, "reduce": "sum",
                                                               "include_self": True})
case("scatter_reduce_nan_amax",
     {"x": torch.tensor([[1.0, nan, 3.0, 0.0]], dtype=torch.float64),
      "index": torch.tensor([[0, 0, 1, 2, 3]]),
      "src": torch.tensor([[nan, 5.0, 2.0, -1.0, 4.0]], dtype=torch.float64)},
     lambda x, i, s: torch.scatter_reduce(x, 1, i, s, "amax"), {"dim": 1, "reduce": "amax",
                                                                "include_self": True},
     differentiable=False)
case("scatter_reduce_nan_amin_noself",
     {"x": torch.tensor([[1.0, nan, 3.0, 0.0]], dtype=torch.float64),
      "index": torch.tensor([[0, 0, 1, 2, 3]]),
      "src": torch.tensor([[nan, 5.0, 2.0, -1.0, 4.0]], dtype=torch.float64)},
     lambda x, i, s: torch.scatter_reduce(x, 1, i, s, "amin", include_self=False),
     {"dim": 1, "reduce": "amin", "include_self": False}, differentiable=False)
# Integral reductions: a floored mean of negative sums, uint8 sums wrapping modulo 256, int32
# products wrapping modulo 2^32, and bool's sum (or) and prod (and).
int_index = torch.tensor([0, 0, 0, 1, 1, 3])
for include_self in [True, False]:
    suffix = "self" if include_self else "noself"
    case(f"scatter_reduce_int64_mean_{suffix}",
         {"x": torch.tensor([1, 2, 3, 4]), "index": int_index,
          "src": torch.tensor([-7, -8, 2, 5, -3, 9])},
         lambda x, i, s, inc=include_self: torch.scatter_reduce(x, 0, i, s, "mean",
                                                                include_self=inc),
         {"dim": 0, "reduce": "mean", "include_self": include_self}, differentiable=False)
    case(f"scatter_reduce_uint8_sum_{suffix}",
         {"x": torch.tensor([200, 100, 7, 255], dtype=torch.uint8), "index": int_index,
          "src": torch.tensor([100, 90, 80, 250, 3, 1], dtype=torch.uint8)},
         lambda x, i, s, inc=include_self: torch.scatter_reduce(x, 0, i, s, "sum",
                                                                include_self=inc),
         {"dim": 0, "reduce": "sum", "include_self": include_self}, differentiable=False)
    case(f"scatter_reduce_int32_prod_{suffix}",
         {"x": torch.tensor([70000, -3, 5, 6], dtype=torch.int32), "index": int_index,
          "src": torch.tensor([90000, 11, -2, 7, 100000, 2], dtype=torch.int32)},
         lambda x, i, s, inc=include_self: torch.scatter_reduce(x, 0, i, s, "prod",
                                                                include_self=inc),
         {"dim": 0, "reduce": "prod", "include_self": include_self}, differentiable=False)
    case(f"scatter_reduce_int64_amin_{suffix}",
         {"x": torch.tensor([5, -2, 7, 1]), "index": int_index,
          "src": torch.tensor([9, 6, 8, -4, 3, 2])},
         lambda x, i, s, inc=include_self: torch.scatter_reduce(x, 0, i, s, "amin",
                                                                include_self=inc),
         {"dim": 0, "reduce": "amin", "include_self": include_self}, differentiable=False)
    for reduce in ["sum", "prod", "amax", "amin"]:
        case(f"scatter_reduce_bool_{reduce}_{suffix}",
             {"x": torch.tensor([True, False, True, False]), "index": int_index,
              "src": torch.tensor([True, False, False, True, False, False])},
             lambda x, i, s, r=reduce, inc=include_self: torch.scatter_reduce(
                 x, 0, i, s, r, include_self=inc),
             {"dim": 0, "reduce": reduce, "include_self": include_self}, differentiable=False)

# ---- index_copy, index_reduce, index_put_ with accumulate ----------------------------------------
case("index_copy_dim0", {"x": randn(5, 3), "index": torch.tensor([4, 0, 2]), "source": randn(3, 3)},
     lambda x, i, s: x.index_copy(0, i, s), {"dim": 0})
case("index_copy_dim1", {"x": randn(2, 4, 3), "index": torch.tensor([3, 1]),
                         "source": randn(2, 2, 3)},
     lambda x, i, s: x.index_copy(1, i, s), {"dim": 1})
case("index_copy_repeats", {"x": randn(4, 2), "index": torch.tensor([1, 3, 1]),
                            "source": randn(3, 2)},
     lambda x, i, s: x.index_copy(0, i, s), {"dim": 0}, differentiable=False)
for reduce in ["prod", "mean", "amax", "amin"]:
    for include_self in [True, False]:
        case(f"index_reduce_{reduce}_{'self' if include_self else 'noself'}",
             {"x": randn(4, 3), "index": torch.tensor([2, 0, 2, 2, 3]), "source": randn(5, 3)},
             lambda x, i, s, r=reduce, inc=include_self: x.index_reduce(0, i, s, r,
                                                                        include_self=inc),
             {"dim": 0, "reduce": reduce, "include_self": include_self})
case("index_put_accumulate", {"x": randn(5, 3), "index": torch.tensor([4, 0, 4, 1, 4]),
                              "value": randn(5, 3)},
     lambda x, i, v: x.clone().index_put_((i,), v, accumulate=True), no_grad=("x",))
case("index_put_accumulate_pairs", {"x": randn(3, 4), "rows": torch.tensor([0, 2, 0, 0]),
                                    "cols": torch.tensor([1, 3, 1, 1]), "value": randn(4)},
     lambda x, r, c, v: x.clone().index_put_((r, c), v, accumulate=True), no_grad=("x",))
case("index_put_accumulate_mask", {"x": randn(3, 4), "mask": randn(3, 4) > 0},
     lambda x, m: x.clone().index_put_((m,), torch.tensor(1.5, dtype=torch.float64),
                                       accumulate=True),
     differentiable=False)
case("index_put_accumulate_int64", {"x": torch.arange(6), "index": torch.tensor([5, 5, 0]),
                                    "value": torch.tensor([10, 20, -3])},
     lambda x, i, v: x.clone().index_put_((i,), v, accumulate=True), differentiable=False)

write("scatter.json", "make_scatter.py", cases)
