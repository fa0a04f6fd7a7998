"""PyTorch reference cases for lerp, addcmul, addcdiv, logaddexp, index_add, index_fill, tile,
repeat_interleave, meshgrid, nonzero, masked_select, count_nonzero and bincount (tests/autograd/test_arithmetic_indexing.cpp): float32 inputs, the
output "y", a random upstream gradient "g" and the gradients "d" + input. Run with Debian's
python3-torch: /usr/bin/python3 tests/data/make_arithmetic_indexing.py
"""
import math

import torch

from reference import write
from torch_cases import grad_case, leaf

torch.manual_seed(0)

cases = []


def case(name, params, inputs, fn, extra=None):
    cases.append(grad_case(name, dict(params, op=name.split("__")[0]), inputs, fn, extra))


case("lerp__scalar_small", {"weight": 0.3}, {"a": leaf(3, 4), "b": leaf(3, 4)},
     lambda a, b: torch.lerp(a, b, 0.3))
case("lerp__scalar_large", {"weight": 0.75}, {"a": leaf(3, 4), "b": leaf(4)},
     lambda a, b: torch.lerp(a, b, 0.75))
case("lerp__tensor_weight", {}, {"a": leaf(3, 4), "b": leaf(3, 4), "w": leaf(3, 1, low=-0.5,
                                                                            high=1.5)},
     lambda a, b, w: torch.lerp(a, b, w))
case("addcmul__broadcast", {"value": 0.5}, {"a": leaf(3, 4), "b": leaf(4), "c": leaf(3, 1)},
     lambda a, b, c: torch.addcmul(a, b, c, value=0.5))
case("addcdiv__broadcast", {"value": -2.0},
     {"a": leaf(3, 4), "b": leaf(3, 4), "c": leaf(4, low=0.5, high=2.0)},
     lambda a, b, c: torch.addcdiv(a, b, c, value=-2.0))
case("logaddexp__broadcast", {}, {"a": leaf(3, 4, low=-30, high=30), "b": leaf(4, low=-30,
                                                                                high=30)},
     lambda a, b: torch.logaddexp(a, b))
index = torch.tensor([4, 0, 4, 2])
case("index_add__dim1_repeated", {"dim": 1, "alpha": 1.0}, {"a": leaf(3, 5), "b": leaf(3, 4)},
     lambda a, b: a.index_add(1, index, b), {"index": index})
index0 = torch.tensor([1, 0])
case("index_add__dim0_alpha", {"dim": 0, "alpha": -0.5}, {"a": leaf(3, 2, 2), "b": leaf(2, 2, 2)},
     lambda a, b: a.index_add(0, index0, b, alpha=-0.5), {"index": index0})
case("index_fill__dim_minus1", {"dim": -1, "value": 2.5}, {"a": leaf(2, 3, 4)},
     lambda a: a.index_fill(-1, torch.tensor([3, 1, 3]), 2.5),
     {"index": torch.tensor([3, 1, 3])})
case("tile__short_reps", {"reps": [2]}, {"a": leaf(2, 3)}, lambda a: a.tile((2,)))
case("tile__long_reps", {"reps": [2, 1, 3]}, {"a": leaf(2, 3)}, lambda a: a.tile((2, 1, 3)))
case("repeat_interleave__dim1", {"repeats": 3, "dim": 1}, {"a": leaf(2, 3)},
     lambda a: a.repeat_interleave(3, dim=1))
case("repeat_interleave__flat", {"repeats": 2}, {"a": leaf(2, 3)},
     lambda a: a.repeat_interleave(2))
for indexing in ("ij", "xy"):
    case("meshgrid__" + indexing, {"indexing": indexing},
         {"a": leaf(3), "b": leaf(2), "c": leaf(4)},
         lambda a, b, c, indexing=indexing: torch.stack(
             [g * (i + 1) for i, g in enumerate(torch.meshgrid(a, b, c, indexing=indexing))]))

# Forward only: logaddexp at infinities and NaN.
a = torch.tensor([math.inf, -math.inf, math.inf, -math.inf, math.nan, 1.0, 0.0])
b = torch.tensor([math.inf, -math.inf, -math.inf, 3.0, 1.0, math.nan, 100.0])
cases.append({"name": "logaddexp__special", "params": {"op": "logaddexp"},
              "tensors": {"a": a, "b": b, "y": torch.logaddexp(a, b)}})

mask = torch.rand(4) > 0.5
mask[0], mask[1] = True, False
case("masked_select__broadcast", {}, {"a": leaf(3, 4)}, lambda a: torch.masked_select(a, mask),
     {"mask": mask})

# Forward only: nonzero (NaN is non-zero) and count_nonzero.
x = torch.tensor([[0.0, 1.5, 0.0], [math.nan, 0.0, -2.0]])
cases.append({"name": "nonzero__2d", "params": {"op": "nonzero"},
              "tensors": {"a": x, "y": torch.nonzero(x)}})
x = (torch.rand(2, 3, 4) > 0.6).float()
cases.append({"name": "nonzero__3d", "params": {"op": "nonzero"},
              "tensors": {"a": x, "y": torch.nonzero(x)}})
x = torch.tensor([True, False, True, True])
cases.append({"name": "nonzero__bool_1d", "params": {"op": "nonzero"},
              "tensors": {"a": x, "y": torch.nonzero(x)}})
x = torch.tensor(3.0)
cases.append({"name": "nonzero__0d", "params": {"op": "nonzero"},
              "tensors": {"a": x, "y": torch.nonzero(x)}})
x = torch.zeros(2, 3)
cases.append({"name": "nonzero__none", "params": {"op": "nonzero"},
              "tensors": {"a": x, "y": torch.nonzero(x)}})
x = torch.tensor([[0.0, 1.0, 2.0], [0.0, 0.0, 3.0]])
cases.append({"name": "count_nonzero__dim1", "params": {"op": "count_nonzero", "dims": [1]},
              "tensors": {"a": x, "y": torch.count_nonzero(x, dim=1)}})
cases.append({"name": "count_nonzero__all", "params": {"op": "count_nonzero", "dims": []},
              "tensors": {"a": x, "y": torch.count_nonzero(x)}})

x = torch.tensor([4, 0, 2, 2, 7, 2])
w = torch.rand(6)
cases.append({"name": "bincount__plain", "params": {"op": "bincount", "minlength": 0},
              "tensors": {"a": x, "y": torch.bincount(x)}})
cases.append({"name": "bincount__weights_minlength", "params": {"op": "bincount", "minlength": 10},
              "tensors": {"a": x, "weights": w, "y": torch.bincount(x, w, minlength=10)}})
cases.append({"name": "bincount__empty", "params": {"op": "bincount", "minlength": 3},
              "tensors": {"a": torch.tensor([], dtype=torch.long),
                          "y": torch.bincount(torch.tensor([], dtype=torch.long), minlength=3)}})

# index_fill wraps negative indices (its index_add refuses them); last, so that the random
# inputs of the cases above stay as they were.
case("index_fill__negative_indices", {"dim": 1, "value": -4.0}, {"a": leaf(3, 5)},
     lambda a: a.index_fill(1, torch.tensor([-1, 0, -5]), -4.0),
     {"index": torch.tensor([-1, 0, -5])})

write("arithmetic_indexing.json", "make_arithmetic_indexing.py", cases)
