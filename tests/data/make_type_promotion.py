"""PyTorch 1.13's type promotion for tests/autograd/test_type_promotion.cpp: torch.result_type of
every pair of leangrad's dtypes (both operands with dims, and the second a 0-d tensor), of each
dtype with an integral and a non-integral Python number, and torch.can_cast of every pair. Written
as one case whose params hold the tables (dtype names). Run with Debian's python3-torch:
/usr/bin/python3 tests/data/make_type_promotion.py
"""
import torch

from reference import write

DTYPES = [torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.int64, torch.int32,
          torch.uint8, torch.bool]


def name(dtype):
    return str(dtype).replace("torch.", "")


both_dims, with_zero_dim, with_int, with_float, can_cast = [], [], [], [], []
for a in DTYPES:
    x = torch.ones(2, dtype=a)
    with_int.append(name(torch.result_type(x, 2)))
    with_float.append(name(torch.result_type(x, 2.5)))
    for b in DTYPES:
        both_dims.append(name(torch.result_type(x, torch.ones(2, dtype=b))))
        with_zero_dim.append(name(torch.result_type(x, torch.ones((), dtype=b))))
        can_cast.append(torch.can_cast(a, b))

write("type_promotion.json", "make_type_promotion.py",
      [{"name": "tables",
        "params": {"dtypes": [name(d) for d in DTYPES], "both_dims": both_dims,
                   "with_zero_dim": with_zero_dim, "with_int": with_int,
                   "with_float": with_float, "can_cast": can_cast},
        "tensors": {}}])
