"""PyTorch 1.13's unfold and fold (tests/nn/test_fold.cpp), float64: the input "x", the output
"y", a random upstream gradient "g" and the input gradient "dx", for batched and unbatched input,
kernels of other sizes per dim, dilation, padding and stride per dim, overlapping and disjoint
blocks.
Run with Debian's python3-torch: /usr/bin/python3 tests/data/make_fold.py
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

from reference import write
from torch_cases import grad_case

torch.manual_seed(3)

cases = []


def leaf(*shape):
    return torch.randn(*shape, dtype=torch.float64).requires_grad_()


UNFOLD = [
    # name, input shape, kernel_size, dilation, padding, stride
    ("unfold_plain", (2, 3, 5, 6), (2, 3), (1, 1), (0, 0), (1, 1)),
    ("unfold_padding_stride", (1, 2, 6, 5), (3, 3), (1, 1), (1, 2), (2, 1)),
    ("unfold_dilation", (2, 2, 7, 7), (2, 2), (2, 3), (1, 0), (1, 2)),
    ("unfold_unbatched", (3, 4, 4), (2, 2), (1, 1), (0, 0), (2, 2)),
]
for name, shape, k, d, p, s in UNFOLD:
    params = {"kernel_size": k, "dilation": d, "padding": p, "stride": s, "output_size": None}
    cases.append(grad_case(name, params, {"x": leaf(*shape)},
                           lambda x: F.unfold(x, k, dilation=d, padding=p, stride=s)))

FOLD = [
    # name, output_size, input shape, kernel_size, dilation, padding, stride
    ("fold_overlapping", (5, 6), (2, 3 * 6, 16), (2, 3), (1, 1), (0, 0), (1, 1)),
    ("fold_padding_stride", (6, 5), (1, 2 * 9, 21), (3, 3), (1, 1), (1, 2), (2, 1)),
    ("fold_dilation", (7, 7), (2, 2 * 4, 14), (2, 2), (2, 3), (1, 0), (1, 2)),
    ("fold_disjoint_unbatched", (4, 4), (3 * 4, 4), (2, 2), (1, 1), (0, 0), (2, 2)),
]
for name, out, shape, k, d, p, s in FOLD:
    params = {"kernel_size": k, "dilation": d, "padding": p, "stride": s, "output_size": out}
    cases.append(grad_case(name, params, {"x": leaf(*shape)},
                           lambda x: F.fold(x, out, k, dilation=d, padding=p, stride=s)))

write("fold.json", "make_fold.py", cases)
