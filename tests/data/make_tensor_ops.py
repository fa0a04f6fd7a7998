"""PyTorch reference cases for flip, roll, repeat, tril, triu, pad, one_hot, cumsum, logsumexp and
norm (tests/autograd/test_tensor_ops.cpp, suite TensorOpsReference): float32 input "x", the output
"y", and where the op has a gradient a random upstream gradient "g" and "dx". Run with Debian's
python3-torch: /usr/bin/python3 tests/data/make_tensor_ops.py
"""
import math

import torch
import torch.nn.functional as F

from reference import write
from torch_cases import grad_case, leaf

torch.manual_seed(0)

cases = []


def case(name, params, x, fn):
    cases.append(grad_case(name, dict(params, op=name.split("__")[0]), {"x": x}, fn))


case("flip__dims_0_2", {"dims": [0, 2]}, leaf(3, 4, 5), lambda x: x.flip([0, 2]))
case("roll__two_dims", {"shifts": [2, -1], "dims": [0, 1]}, leaf(4, 5),
     lambda x: x.roll([2, -1], [0, 1]))
case("roll__flattened", {"shifts": [7], "dims": []}, leaf(3, 4), lambda x: x.roll(7))
case("repeat__leading_dim", {"repeats": [2, 1, 3]}, leaf(2, 3), lambda x: x.repeat(2, 1, 3))
case("tril__diagonal_1", {"diagonal": 1}, leaf(4, 5), lambda x: x.tril(1))
case("triu__batched_diagonal_minus_1", {"diagonal": -1}, leaf(2, 4, 3), lambda x: x.triu(-1))
case("pad__cut_and_grow", {"pad": [1, 2, -1, 1], "value": 0.5}, leaf(2, 3, 4),
     lambda x: F.pad(x, [1, 2, -1, 1], value=0.5))
case("cumsum__dim_1", {"dim": 1}, leaf(3, 4, 5), lambda x: x.cumsum(1))
case("cumsum__last_dim", {"dim": -1}, leaf(3, 40), lambda x: x.cumsum(-1))
case("logsumexp__dim_1", {"dims": [1], "keepdim": False}, leaf(3, 4, 5, low=-30, high=30),
     lambda x: x.logsumexp([1]))
case("logsumexp__dims_0_2_keepdim", {"dims": [0, 2], "keepdim": True}, leaf(3, 4, 5),
     lambda x: x.logsumexp([0, 2], keepdim=True))
case("norm__p2_dim_1", {"p": 2.0, "dims": [1], "keepdim": False}, leaf(3, 4, 5),
     lambda x: torch.linalg.vector_norm(x, 2, [1]))
case("norm__p1_all", {"p": 1.0, "dims": [], "keepdim": False}, leaf(3, 4),
     lambda x: torch.linalg.vector_norm(x, 1))
# JSON has no infinity: p = inf is the string "inf", as reference.py writes values.
case("norm__pinf_dim_0", {"p": "inf", "dims": [0], "keepdim": False}, leaf(5, 3),
     lambda x: torch.linalg.vector_norm(x, math.inf, [0]))
case("norm__p3_last_keepdim", {"p": 3.0, "dims": [-1], "keepdim": True}, leaf(4, 6),
     lambda x: torch.linalg.vector_norm(x, 3, [-1], keepdim=True))
# A row of zeros: PyTorch's gradient there is 0.
zero_row = torch.rand(3, 4) - 0.5
zero_row[1] = 0
case("norm__p2_zero_row", {"p": 2.0, "dims": [1], "keepdim": False},
     zero_row.requires_grad_(), lambda x: torch.linalg.vector_norm(x, 2, [1]))

# Forward only.
x = torch.tensor([[0.0, -math.inf, 1.0], [-math.inf, -math.inf, -math.inf],
                  [math.inf, 2.0, 3.0], [math.nan, 0.0, 1.0], [100.0, 100.0, 90.0]])
cases.append({"name": "logsumexp__infinities", "params": {"op": "logsumexp", "dims": [1],
                                                          "keepdim": False},
              "tensors": {"x": x, "y": x.logsumexp(1)}})
# Over an empty dim: the log of an empty sum, -inf.
for name, shape, dims, keepdim in [("logsumexp__empty_dim", (0, 3), [0], False),
                                   ("logsumexp__empty_all_dims", (0, 3), [0, 1], False),
                                   ("logsumexp__empty_last_keepdim", (2, 0), [1], True),
                                   ("logsumexp__kept_dim_empty", (0, 3), [1], False)]:
    x = torch.zeros(shape)
    cases.append({"name": name, "params": {"op": "logsumexp", "dims": dims, "keepdim": keepdim},
                  "tensors": {"x": x, "y": x.logsumexp(dims, keepdim=keepdim)}})
x = torch.randn(3, 5)
cases.append({"name": "norm__p0", "params": {"op": "norm", "p": 0.0, "dims": [1],
                                             "keepdim": False},
              "tensors": {"x": x.masked_fill(x > 0.5, 0), "y": torch.linalg.vector_norm(
                  x.masked_fill(x > 0.5, 0), 0, [1])}})
indices = torch.tensor([[3, 0, 1], [1, 1, 2]])
cases.append({"name": "one_hot__five_classes", "params": {"op": "one_hot", "num_classes": 5},
              "tensors": {"x": indices, "y": F.one_hot(indices, 5)}})
cases.append({"name": "one_hot__inferred", "params": {"op": "one_hot", "num_classes": -1},
              "tensors": {"x": indices, "y": F.one_hot(indices)}})

write("tensor_ops.json", "make_tensor_ops.py", cases)
