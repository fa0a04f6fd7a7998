"""PyTorch reference cases for index_select, gather and scatter_add (tests/autograd/test_indexing.cpp,
suite IndexingReference): float32 inputs "x" (and "src"), an int64 "index" with repeated entries,
the output "y", a random upstream gradient "g" and the gradients "dx" (and "dsrc"). Run with
Debian's python3-torch: /usr/bin/python3 tests/data/make_indexing.py
"""
import torch

from reference import write
from torch_cases import grad_case, leaf

torch.manual_seed(0)

cases = []
for dim in [0, 2]:
    x = leaf(4, 3, 5)
    index = torch.randint(0, x.shape[dim], (7,))
    cases.append(grad_case("index_select_dim%d" % dim, {"op": "index_select", "dim": dim},
                           {"x": x}, lambda x, dim=dim, index=index: x.index_select(dim, index),
                           extra={"index": index}))
for dim in [1, -1]:
    x = leaf(3, 4, 5)
    shape = [2, 6, 3] if dim == 1 else [2, 3, 8]
    index = torch.randint(0, x.shape[dim], shape)
    cases.append(grad_case("gather_dim%d" % dim, {"op": "gather", "dim": dim}, {"x": x},
                           lambda x, dim=dim, index=index: x.gather(dim, index),
                           extra={"index": index}))
for dim in [0, 1]:
    x = leaf(4, 5)
    # src of the index's shape: with a larger one, torch 1.13's backward raises (its gradient is
    # the index's shape), where leangrad's gives the part not read a zero gradient.
    shape = (8, 4) if dim == 0 else (3, 6)
    src = leaf(*shape)
    index = torch.randint(0, x.shape[dim], shape)
    cases.append(grad_case("scatter_add_dim%d" % dim, {"op": "scatter_add", "dim": dim},
                           {"x": x, "src": src},
                           lambda x, src, dim=dim, index=index: x.scatter_add(dim, index, src),
                           extra={"index": index}))

write("indexing.json", "make_indexing.py", cases)
