"""PyTorch 1.13's indexing by tensors (tests/autograd/test_advanced_indexing.cpp).

x[indices] for index lists mixing integer index tensors (int64, int32, 0-d, broadcasting), bool
and uint8 masks with integers, slices, None and Ellipsis (the indexed dims adjacent or not), with
the gradient of sum(x[indices] * w) with respect to x; and y[indices] = v on a copy of x, with the
gradient of sum(y * w) with respect to v (no position named twice: PyTorch leaves the winner
open). params["index"] spells the list: {"int": k}, {"slice": [start, stop, step]} (null: none),
{"none": true}, {"ellipsis": true}, {"tensor": name of a tensor of the case}; params["value"] is
"v" (the tensor v) or a number.

Run with Debian's python3-torch: /usr/bin/python3 tests/data/make_advanced_indexing.py
"""
import torch

from reference import write

generator = torch.Generator().manual_seed(7)
cases = []


def randn(*shape):
    return torch.randn(*shape, generator=generator, dtype=torch.float64)


def build(spec, tensors):
    out = []
    for entry in spec:
        if "int" in entry:
            out.append(entry["int"])
        elif "slice" in entry:
            out.append(slice(*entry["slice"]))
        elif "none" in entry:
            out.append(None)
        elif "ellipsis" in entry:
            out.append(Ellipsis)
        else:
            t = tensors[entry["tensor"]]
            # torch 1.13 takes no int32 index (2.x does): its reference is the int64 one.
            out.append(t.long() if t.dtype == torch.int32 else t)
    return tuple(out)


def index_case(name, x, spec, tensors):
    leaf = x.clone().requires_grad_()
    out = leaf[build(spec, tensors)]
    w = torch.linspace(-1, 2, out.numel(), dtype=torch.float64).reshape(out.shape)
    (out * w).sum().backward()
    cases.append({"name": name, "params": {"index": spec},
                  "tensors": dict(tensors, x=x, out=out.detach(), w=w, d_x=leaf.grad)})


def put_case(name, x, spec, tensors, value):
    y = x.clone()
    t = dict(tensors, x=x)
    if isinstance(value, float):
        y[build(spec, tensors)] = value
        t["put"] = y
        cases.append({"name": name, "params": {"index": spec, "value": value}, "tensors": t})
        return
    v = value.clone().requires_grad_()
    y[build(spec, tensors)] = v
    w = torch.linspace(-1, 2, y.numel(), dtype=torch.float64).reshape(y.shape)
    (y * w).sum().backward()
    t.update(v=value, put=y.detach(), w=w, d_v=v.grad)
    cases.append({"name": name, "params": {"index": spec, "value": "v"}, "tensors": t})


x = randn(5, 4, 3)
idx = torch.tensor([0, 4, -1, 2, 0])          # repeats: the gradient adds up
idx2 = torch.tensor([[3, 0], [1, 1]])
idx3 = torch.tensor([2, 0, 1, 1, 2])
mask = randn(5, 4) > 0
mask2 = randn(4, 3) > 0
index_case("rows", x, [{"tensor": "i"}], {"i": idx})
index_case("middle_2d", x, [{"slice": [None, None, None]}, {"tensor": "i"}], {"i": idx2})
index_case("separated", x, [{"tensor": "i"}, {"slice": [None, None, None]}, {"tensor": "j"}],
           {"i": idx, "j": idx3})
# Separated, the first after a None: the broadcast dims still go first.
index_case("separated_after_none", x,
           [{"none": True}, {"tensor": "i"}, {"slice": [None, None, None]}, {"tensor": "j"}],
           {"i": idx, "j": idx3})
index_case("mask_2d", x, [{"tensor": "m"}], {"m": mask})
index_case("int_then_mask", x, [{"int": 1}, {"tensor": "m"}], {"m": mask2})
index_case("none_index_ellipsis_int", x,
           [{"none": True}, {"tensor": "i"}, {"ellipsis": True}, {"int": 0}], {"i": idx})
index_case("broadcast_adjacent", x, [{"slice": [1, None, None]}, {"tensor": "a"}, {"tensor": "b"}],
           {"a": torch.tensor([[0], [3], [2]]), "b": torch.tensor([1, 2])})
index_case("ellipsis_last", x, [{"ellipsis": True}, {"tensor": "i"}], {"i": torch.tensor([2, -3])})
index_case("int32", x, [{"slice": [None, None, 2]}, {"tensor": "i"}],
           {"i": torch.tensor([3, 1, -4], dtype=torch.int32)})
index_case("uint8_mask", x, [{"tensor": "m"}], {"m": torch.tensor([1, 0, 0, 1, 1], dtype=torch.uint8)})
index_case("zero_dim_index", x, [{"slice": [None, None, None]}, {"tensor": "i"}],
           {"i": torch.tensor(2)})
index_case("slice_then_index", x, [{"slice": [1, 4, None]}, {"tensor": "i"}, {"int": -1}],
           {"i": torch.tensor([3, 3, 0])})
index_case("empty_mask", x, [{"tensor": "m"}], {"m": torch.zeros(5, dtype=torch.bool)})

put_case("put_mask_scalar", x, [{"tensor": "m"}], {"m": mask}, -7.5)
put_case("put_rows", x, [{"tensor": "i"}], {"i": torch.tensor([4, 1, -5])}, randn(4, 3))
put_case("put_middle", x, [{"slice": [None, None, None]}, {"tensor": "i"}],
         {"i": torch.tensor([[3, 0]])}, randn(5, 1, 2, 3))
put_case("put_separated", x, [{"tensor": "i"}, {"slice": [None, None, None]}, {"tensor": "j"}],
         {"i": torch.tensor([0, 2, 4]), "j": torch.tensor([2, 0, 1])}, randn(3, 4))
put_case("put_mask_rows", x, [{"tensor": "m"}], {"m": mask}, randn(3))
put_case("put_int_index", x, [{"int": 2}, {"slice": [None, None, None]}, {"tensor": "i"}],
         {"i": torch.tensor([1])}, randn(4, 1))

write("advanced_indexing.json", "make_advanced_indexing.py", cases)
