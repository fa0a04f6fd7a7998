"""PyTorch 1.13's lp_pool1d, lp_pool2d, local_response_norm, bilinear and channel_shuffle, and
nn.Softmax2d (tests/nn/test_composed_layers.cpp), float64: the operands, "y", a random upstream
gradient "g" and the gradient "d<name>" of each operand (channel_shuffle: values only, PyTorch
1.13 has no derivative for it). LP pools with p 2 and 3 (positive inputs, where every window's
sum is positive), strides and ceil_mode; local_response_norm over 3, 4 and 5 dims with odd and
even sizes; bilinear with one and two leading dims, with and without a bias; channel_shuffle of
3 and 4 dims.
Run with Debian's python3-torch: /usr/bin/python3 tests/data/make_composed_layers.py
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

from reference import write

torch.manual_seed(9)
cases = []


def case(name, fn, operands, params, differentiable=True):
    ts = {k: v.clone().requires_grad_(differentiable) for k, v in operands.items()}
    y = fn(**ts)
    tensors = {k: v.detach() for k, v in ts.items()}
    tensors["y"] = y.detach()
    if differentiable:
        g = torch.randn(y.shape, dtype=torch.float64)
        y.backward(g)
        tensors["g"] = g
        for k, v in ts.items():
            tensors["d" + k] = v.grad
    cases.append({"name": name, "params": dict(params, op=name.split(":")[0]),
                  "tensors": tensors})


def randn(*shape):
    return torch.randn(*shape, dtype=torch.float64)


def positive(*shape):
    return torch.rand(*shape, dtype=torch.float64) + 0.1


case("lp_pool1d:p2", lambda x: F.lp_pool1d(x, 2.0, 3), {"x": positive(2, 3, 9)},
     {"norm_type": 2.0, "kernel": [3], "stride": [3], "ceil_mode": False})
case("lp_pool1d:p3_stride_ceil", lambda x: F.lp_pool1d(x, 3.0, 2, stride=3, ceil_mode=True),
     {"x": positive(1, 2, 8)}, {"norm_type": 3.0, "kernel": [2], "stride": [3], "ceil_mode": True})
case("lp_pool2d:p2", lambda x: F.lp_pool2d(x, 2.0, 2), {"x": positive(2, 2, 6, 5)},
     {"norm_type": 2.0, "kernel": [2, 2], "stride": [2, 2], "ceil_mode": False})
case("lp_pool2d:p3_rect", lambda x: F.lp_pool2d(x, 3.0, (2, 3), stride=(1, 2)),
     {"x": positive(1, 3, 5, 7)}, {"norm_type": 3.0, "kernel": [2, 3], "stride": [1, 2],
                                   "ceil_mode": False})
for dims, size in (((2, 5, 4), 3), ((2, 6, 3, 4), 4), ((1, 4, 2, 3, 2), 5)):
    case(f"local_response_norm:{len(dims)}d_size{size}",
         lambda x, size=size: F.local_response_norm(x, size, alpha=0.3, beta=0.8, k=1.5),
         {"x": randn(*dims)}, {"size": size, "alpha": 0.3, "beta": 0.8, "k": 1.5})
case("bilinear:bias", lambda a, b, w, bias: F.bilinear(a, b, w, bias),
     {"a": randn(4, 3), "b": randn(4, 5), "w": randn(2, 3, 5), "bias": randn(2)}, {})
case("bilinear:two_leading_dims", lambda a, b, w: F.bilinear(a, b, w),
     {"a": randn(2, 3, 4), "b": randn(2, 3, 2), "w": randn(3, 4, 2)}, {})
# PyTorch 1.13 has no derivative for channel_shuffle: values only (the test checks leangrad's
# gradient by finite differences).
case("channel_shuffle:3d", lambda x: F.channel_shuffle(x, 3), {"x": randn(2, 6, 4)},
     {"groups": 3}, differentiable=False)
case("channel_shuffle:4d", lambda x: F.channel_shuffle(x, 2), {"x": randn(1, 8, 2, 3)},
     {"groups": 2}, differentiable=False)
case("softmax2d:", lambda x: nn.Softmax2d()(x), {"x": randn(2, 4, 3, 2)}, {})

write("composed_layers.json", "make_composed_layers.py", cases)
