"""PyTorch reference cases for addmm, addmv, baddbmm, addbmm, tensordot, kron, diagonal, diag,
trace, cross, diff and cdist (tests/autograd/test_linalg_functions.cpp): float32 inputs "a", "b", "c",
the output "y", a random upstream gradient "g" and the gradients "d" + input. Run with Debian's
python3-torch: /usr/bin/python3 tests/data/make_linalg_functions.py
"""
import torch

from reference import write
from torch_cases import grad_case, leaf

torch.manual_seed(0)

cases = []


def case(name, params, inputs, fn):
    cases.append(grad_case(name, dict(params, op=name.split("__")[0]), inputs, fn))


case("addmm__scaled", {"beta": 0.5, "alpha": -2.0}, {"a": leaf(4), "b": leaf(3, 5), "c": leaf(5, 4)},
     lambda a, b, c: torch.addmm(a, b, c, beta=0.5, alpha=-2.0))
case("addmm__plain", {"beta": 1.0, "alpha": 1.0},
     {"a": leaf(3, 4), "b": leaf(3, 5), "c": leaf(5, 4)}, lambda a, b, c: torch.addmm(a, b, c))
case("addmv__scaled", {"beta": 2.0, "alpha": 0.25}, {"a": leaf(3), "b": leaf(3, 5), "c": leaf(5)},
     lambda a, b, c: torch.addmv(a, b, c, beta=2.0, alpha=0.25))
case("baddbmm__broadcast_input", {"beta": -1.0, "alpha": 1.5},
     {"a": leaf(3, 1), "b": leaf(2, 3, 5), "c": leaf(2, 5, 4)},
     lambda a, b, c: torch.baddbmm(a, b, c, beta=-1.0, alpha=1.5))
case("addbmm__scaled", {"beta": 0.5, "alpha": 2.0},
     {"a": leaf(3, 4), "b": leaf(2, 3, 5), "c": leaf(2, 5, 4)},
     lambda a, b, c: torch.addbmm(a, b, c, beta=0.5, alpha=2.0))
case("tensordot__dims", {"dims_a": [2, 0], "dims_b": [0, 1]},
     {"a": leaf(3, 4, 5), "b": leaf(5, 3, 2)}, lambda a, b: torch.tensordot(a, b, ([2, 0], [0, 1])))
case("tensordot__n", {"n": 1}, {"a": leaf(3, 4), "b": leaf(4, 5)},
     lambda a, b: torch.tensordot(a, b, 1))
case("kron__ranks_differ", {}, {"a": leaf(2, 3), "b": leaf(4, 2, 2)}, lambda a, b: torch.kron(a, b))
case("diagonal__offset_dims", {"offset": 1, "dim1": 2, "dim2": 0}, {"a": leaf(4, 3, 5)},
     lambda a: torch.diagonal(a, 1, 2, 0))
case("diagonal__below", {"offset": -2, "dim1": 0, "dim2": 1}, {"a": leaf(5, 4)},
     lambda a: torch.diagonal(a, -2))
case("diag__vector_above", {"k": 1}, {"a": leaf(3)}, lambda a: torch.diag(a, 1))
case("diag__vector_below", {"k": -2}, {"a": leaf(3)}, lambda a: torch.diag(a, -2))
case("diag__matrix", {"k": -1}, {"a": leaf(4, 3)}, lambda a: torch.diag(a, -1))
case("trace__rectangular", {}, {"a": leaf(3, 5)}, lambda a: torch.trace(a))
case("cross__dim0_broadcast", {"dim": 0}, {"a": leaf(3, 4), "b": leaf(3, 1)},
     lambda a, b: torch.linalg.cross(a, b, dim=0))
case("diff__twice", {"n": 2, "dim": 1}, {"a": leaf(3, 6)}, lambda a: torch.diff(a, n=2, dim=1))

for p in (2.0, 1.0, 3.0, float("inf")):
    name = "inf" if p == float("inf") else str(int(p))
    case("cdist__p" + name, {"p": "inf" if p == float("inf") else p},
         {"a": leaf(2, 4, 3), "b": leaf(5, 3)}, lambda a, b, p=p: torch.cdist(a, b, p=p))
# More than 25 rows: PyTorch's matrix-product form; a row of b equal to a row of a (distance 0,
# gradient 0 there).
a = leaf(30, 4)
b = torch.rand(6, 4) * 2 - 1
b[2] = a[7].detach()
case("cdist__p2_products", {"p": 2.0}, {"a": a, "b": b.requires_grad_()},
     lambda a, b: torch.cdist(a, b))

write("linalg_functions.json", "make_linalg_functions.py", cases)
