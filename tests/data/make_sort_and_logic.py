"""PyTorch reference cases for sort, argsort, topk, nan_to_num, normalize, all and any
(tests/autograd/test_sort_and_logic.cpp, suite SortAndLogicReference): input "x", the outputs
("values" and "indices", or "y"), and where the op has a gradient a random upstream gradient "g"
and "dx". Sorts run with stable=True (leangrad's sort is stable). Run with Debian's python3-torch:
/usr/bin/python3 tests/data/make_sort_and_logic.py
"""
import math

import torch
import torch.nn.functional as F

from reference import write

torch.manual_seed(0)

cases = []

# Ties (one decimal), NaN, the infinities and both zeros.
x = (torch.rand(4, 9) * 4 - 2).round(decimals=1)
x[0, 2] = math.nan
x[0, 5] = math.nan
x[1, 1] = math.inf
x[1, 7] = -math.inf
x[2, 0] = -0.0
x[2, 4] = 0.0
x[3, 3] = 0.0
x[3, 6] = -0.0


def sort_case(name, x, dim, descending):
    leaf = x.clone().requires_grad_()
    values, indices = torch.sort(leaf, dim=dim, descending=descending, stable=True)
    g = torch.randn(values.shape)
    values.backward(g)
    cases.append({"name": name, "params": {"op": "sort", "dim": dim, "descending": descending},
                  "tensors": {"x": x, "values": values.detach(), "indices": indices, "g": g,
                              "dx": leaf.grad}})


def topk_case(name, x, k, dim, largest):
    leaf = x.clone().requires_grad_()
    values, indices = torch.topk(leaf, k, dim=dim, largest=largest)
    g = torch.randn(values.shape)
    values.backward(g)
    cases.append({"name": name, "params": {"op": "topk", "k": k, "dim": dim, "largest": largest},
                  "tensors": {"x": x, "values": values.detach(), "indices": indices, "g": g,
                              "dx": leaf.grad}})


sort_case("sort_last_dim", x, -1, False)
sort_case("sort_last_dim_descending", x, 1, True)
sort_case("sort_dim_0", x, 0, False)
# topk among distinct values (torch's topk orders ties in no documented way).
distinct = torch.randperm(60).float().reshape(5, 12) / 7 - 4
distinct[1, 3] = math.nan
topk_case("topk_largest", distinct, 4, -1, True)
topk_case("topk_smallest_dim_0", distinct, 2, 0, False)
ints = torch.randint(-5, 5, (3, 10))
values, indices = torch.sort(ints, dim=1, stable=True)
cases.append({"name": "sort_int64", "params": {"op": "sort", "dim": 1, "descending": False},
              "tensors": {"x": ints, "values": values, "indices": indices}})

special = torch.tensor([[1.5, math.nan, math.inf, -math.inf, -2.0, 0.0]])
for dtype, name in [(torch.float32, "f32"), (torch.float16, "f16"), (torch.bfloat16, "bf16")]:
    s = special.to(dtype)
    cases.append({"name": "nan_to_num_defaults_" + name, "params": {"op": "nan_to_num"},
                  "tensors": {"x": s, "y": torch.nan_to_num(s)}})
cases.append({"name": "nan_to_num_given", "params": {"op": "nan_to_num", "nan": 7.0,
                                                     "posinf": 100.0, "neginf": -50.0},
              "tensors": {"x": special, "y": torch.nan_to_num(special, 7.0, 100.0, -50.0)}})

for name, p, dim in [("normalize_p2_dim1", 2.0, 1), ("normalize_p1_dim0", 1.0, 0)]:
    xn = torch.randn(4, 6)
    xn[2] = 0  # a row of zeros: the norm is taken at eps
    leaf = xn.clone().requires_grad_()
    y = F.normalize(leaf, p=p, dim=dim)
    g = torch.randn(y.shape)
    y.backward(g)
    cases.append({"name": name, "params": {"op": "normalize", "p": p, "dim": dim},
                  "tensors": {"x": xn, "y": y.detach(), "g": g, "dx": leaf.grad}})

logic = torch.tensor([[0.0, 1.0, math.nan, 0.0], [2.0, -1.0, 3.0, 4.0], [0.0, 0.0, 0.0, 0.0]])
for op in ["all", "any"]:
    fn = torch.all if op == "all" else torch.any
    cases.append({"name": op + "_dim1", "params": {"op": op, "dims": [1], "keepdim": False},
                  "tensors": {"x": logic, "y": fn(logic, dim=1)}})
    cases.append({"name": op + "_dim0_keepdim", "params": {"op": op, "dims": [0], "keepdim": True},
                  "tensors": {"x": logic, "y": fn(logic, dim=0, keepdim=True)}})
    cases.append({"name": op + "_everything", "params": {"op": op, "dims": [], "keepdim": False},
                  "tensors": {"x": logic, "y": fn(logic)}})

write("sort_and_logic.json", "make_sort_and_logic.py", cases)
