"""PyTorch 1.13's rearranging functions (tests/autograd/test_shape_functions.cpp).

hstack, vstack, dstack, column_stack, atleast_1d/2d/3d, tensor_split (sections and indices),
movedim, swapaxes, broadcast_tensors, fliplr, flipud, rot90, take_along_dim, diag_embed,
block_diag, cartesian_prod, tril_indices and triu_indices, isclose, isin, isposinf and isneginf:
each case's inputs and outputs, and for the differentiable ones the gradient of sum(out * w)
with respect to every floating input (float64).

Run with Debian's python3-torch: /usr/bin/python3 tests/data/make_shape_functions.py
"""
import torch

from reference import write

generator = torch.Generator().manual_seed(3)
cases = []


def randn(*shape):
    return torch.randn(*shape, generator=generator, dtype=torch.float64)


def case(name, inputs, fn, params=None, differentiable=True):
    """inputs: name -> tensor; fn(*inputs) -> tensor or list of tensors."""
    leaves = {k: (v.clone().requires_grad_() if differentiable and v.is_floating_point() else v)
              for k, v in inputs.items()}
    out = fn(*leaves.values())
    outs = out if isinstance(out, (list, tuple)) else [out]
    tensors = dict(inputs)
    for i, o in enumerate(outs):
        tensors[f"out{i}"] = o.detach()
    if differentiable and any(t.requires_grad for t in leaves.values()):
        total = 0
        for i, o in enumerate(outs):
            w = torch.linspace(-1, 1, o.numel(), dtype=torch.float64).reshape(o.shape)
            tensors[f"w{i}"] = w
            total = total + (o * w).sum()
        total.backward()
        for k, v in leaves.items():
            if v.requires_grad:
                tensors["d_" + k] = v.grad
    cases.append({"name": name,
                  "params": dict(params or {}, outputs=len(outs), inputs=list(inputs.keys())),
                  "tensors": tensors})


# stacks: mixed ranks
case("hstack_1d", {"a": randn(3), "b": randn(2), "c": randn(())}, lambda a, b, c: torch.hstack([a, b, c]))
case("hstack_2d", {"a": randn(2, 3), "b": randn(2, 1)}, lambda a, b: torch.hstack([a, b]))
case("vstack", {"a": randn(3), "b": randn(2, 3), "c": randn(3)}, lambda a, b, c: torch.vstack([a, b, c]))
case("dstack", {"a": randn(2, 3), "b": randn(2, 3, 2), "c": randn(2, 3)},
     lambda a, b, c: torch.dstack([a, b, c]))
case("dstack_1d", {"a": randn(3), "b": randn(3)}, lambda a, b: torch.dstack([a, b]))
case("column_stack", {"a": randn(3), "b": randn(3, 2), "c": randn(3)},
     lambda a, b, c: torch.column_stack([a, b, c]))
case("atleast", {"s": randn(()), "v": randn(4), "m": randn(2, 3)},
     lambda s, v, m: [torch.atleast_1d(s), torch.atleast_2d(s), torch.atleast_3d(s),
                      torch.atleast_2d(v), torch.atleast_3d(v), torch.atleast_3d(m)])
# tensor_split
case("tensor_split_sections", {"x": randn(7, 3)}, lambda x: list(torch.tensor_split(x, 3)),
     {"sections": 3, "dim": 0})
case("tensor_split_sections_more_than_size", {"x": randn(2, 3)},
     lambda x: list(torch.tensor_split(x, 4, dim=1)), {"sections": 4, "dim": 1})
case("tensor_split_indices", {"x": randn(3, 8)}, lambda x: list(torch.tensor_split(x, [1, 5, 5, 10], dim=1)),
     {"indices": [1, 5, 5, 10], "dim": 1})
case("tensor_split_indices_decreasing", {"x": randn(6)}, lambda x: list(torch.tensor_split(x, [4, 2])),
     {"indices": [4, 2], "dim": 0})
# moving dims
case("movedim", {"x": randn(2, 3, 4, 5)}, lambda x: torch.movedim(x, [0, 3], [2, 0]),
     {"source": [0, 3], "destination": [2, 0]})
case("movedim_one", {"x": randn(2, 3, 4)}, lambda x: torch.movedim(x, -1, 0),
     {"source": [-1], "destination": [0]})
case("swapaxes", {"x": randn(2, 3, 4)}, lambda x: torch.swapaxes(x, 0, -1))
case("broadcast_tensors", {"a": randn(3, 1), "b": randn(4), "c": randn(())},
     lambda a, b, c: list(torch.broadcast_tensors(a, b, c)))
case("fliplr_flipud", {"x": randn(3, 4, 2)}, lambda x: [torch.fliplr(x), torch.flipud(x)])
for k in (1, 2, 3, -1, 4, 6):
    case(f"rot90_k{k}", {"x": randn(2, 3, 4)}, lambda x, k=k: torch.rot90(x, k, [2, 0]),
         {"k": k, "dims": [2, 0]})
# take_along_dim
x = randn(3, 4)
idx = torch.argsort(x, dim=1)[:, :2]
case("take_along_dim", {"x": x, "idx": idx}, lambda x, i: torch.take_along_dim(x, i, dim=1), {"dim": 1})
case("take_along_dim_broadcast", {"x": randn(3, 1, 4), "idx": torch.tensor([[[0], [3]]])},
     lambda x, i: torch.take_along_dim(x, i, dim=2), {"dim": 2})
case("take_along_dim_flat", {"x": randn(2, 3), "idx": torch.tensor([5, 0, 2, 2])},
     lambda x, i: torch.take_along_dim(x, i))
# diag_embed
case("diag_embed", {"x": randn(2, 3)}, lambda x: torch.diag_embed(x), {"offset": 0, "dim1": -2, "dim2": -1})
case("diag_embed_offset", {"x": randn(2, 3)}, lambda x: torch.diag_embed(x, 1, 0, 2),
     {"offset": 1, "dim1": 0, "dim2": 2})
case("diag_embed_negative_offset", {"x": randn(3)}, lambda x: torch.diag_embed(x, -2, 1, 0),
     {"offset": -2, "dim1": 1, "dim2": 0})
# block_diag, cartesian_prod
case("block_diag", {"a": randn(2, 3), "b": randn(()), "c": randn(2), "d": randn(1, 2)},
     lambda a, b, c, d: torch.block_diag(a, b, c, d))
case("cartesian_prod", {"a": randn(3), "b": randn(2), "c": randn(2)},
     lambda a, b, c: torch.cartesian_prod(a, b, c))
case("cartesian_prod_one", {"a": randn(3)}, lambda a: torch.cartesian_prod(a))
# index lists
for row, col, off in ((4, 3, 0), (3, 5, 1), (5, 4, -2), (3, 3, 5), (3, 3, -5), (0, 3, 0)):
    cases.append({"name": f"tril_triu_indices_{row}_{col}_{off}",
                  "params": {"row": row, "col": col, "offset": off},
                  "tensors": {"tril": torch.tril_indices(row, col, off),
                              "triu": torch.triu_indices(row, col, off)}})
# predicates
inf, nan = float("inf"), float("nan")
a = torch.tensor([1.0, 1.0 + 1e-6, 1.0 + 1e-4, inf, inf, -inf, nan, nan, 0.0, 1e-9, 100.0])
b = torch.tensor([1.0, 1.0, 1.0, inf, -inf, -inf, nan, 1.0, 1e-9, 0.0, 100.001])
cases.append({"name": "isclose", "params": {}, "tensors": {
    "a": a, "b": b, "default": torch.isclose(a, b),
    "equal_nan": torch.isclose(a, b, equal_nan=True),
    "loose": torch.isclose(a, b, rtol=1e-3, atol=1e-6),
    "a64": a.double(), "b64": b.double(), "default64": torch.isclose(a.double(), b.double())}})
elements = torch.tensor([[1, 5, 3], [7, 2, 2]])
test = torch.tensor([2, 3, 9, 3])
cases.append({"name": "isin", "params": {}, "tensors": {
    "elements": elements, "test": test, "isin": torch.isin(elements, test),
    "invert": torch.isin(elements, test, invert=True),
    "felements": torch.tensor([0.5, nan, 2.0, -0.0]), "ftest": torch.tensor([2.0, nan, 0.0]),
    "fisin": torch.isin(torch.tensor([0.5, nan, 2.0, -0.0]), torch.tensor([2.0, nan, 0.0]))}})
v = torch.tensor([inf, -inf, nan, 0.0, 1e38])
cases.append({"name": "isposinf_isneginf", "params": {}, "tensors": {
    "x": v, "pos": torch.isposinf(v), "neg": torch.isneginf(v),
    "ints": torch.tensor([1, -1]), "ints_pos": torch.isposinf(torch.tensor([1, -1]))}})

write("shape_functions.json", "make_shape_functions.py", cases)
