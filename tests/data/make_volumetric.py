"""PyTorch 1.13's 3-d layers (tests/nn/test_volumetric.cpp), float64: conv3d (strides, padding,
dilation, groups, no bias, unbatched, the Conv3d module with padding_mode reflect and circular),
max_pool3d with its indices (padding, dilation, ceil_mode, ties of small integers: the first
maximum in (d, h, w) order wins), avg_pool3d (count_include_pad, ceil_mode, divisor_override),
adaptive_avg_pool3d and adaptive_max_pool3d with indices (windows that overlap and outnumber the
input). Each case: the inputs, the output "y", fixed weights "w" and the gradients "d" + name of
sum(y * w).
Run with Debian's python3-torch: /usr/bin/python3 tests/data/make_volumetric.py
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

from reference import write

cases = []
generator = torch.Generator().manual_seed(23)


def randn(*shape):
    return torch.randn(*shape, generator=generator, dtype=torch.float64)


def small_integers(*shape):
    return torch.randint(0, 3, shape, generator=generator).to(torch.float64)


def finish(name, params, inputs, y, extra=None):
    w = torch.linspace(-1, 1, y.numel(), dtype=torch.float64).reshape(y.shape)
    (y * w).sum().backward()
    tensors = {k: v.detach() for k, v in inputs.items()}
    tensors.update({"y": y.detach(), "w": w})
    tensors.update(extra or {})
    for k, v in inputs.items():
        if v.requires_grad:
            tensors["d" + k] = v.grad
    cases.append({"name": name, "params": params, "tensors": tensors})


CONV = [
    # name, x shape, weight shape, stride, padding, dilation, groups, bias
    ("conv3d_plain", (2, 3, 5, 6, 7), (4, 3, 3, 3, 3), (1, 1, 1), (0, 0, 0), (1, 1, 1), 1, True),
    ("conv3d_strided_padded", (2, 2, 7, 6, 8), (3, 2, 3, 2, 3), (2, 1, 2), (1, 1, 0), (1, 1, 1),
     1, True),
    ("conv3d_dilated_groups_no_bias", (1, 4, 8, 7, 7), (6, 2, 2, 3, 2), (1, 2, 1), (1, 0, 1),
     (3, 1, 2), 2, False),
    ("conv3d_unbatched", (3, 4, 5, 5), (2, 3, 2, 2, 2), (1, 1, 1), (1, 1, 1), (1, 1, 1), 1, True),
]
for name, xs, ws, stride, padding, dilation, groups, with_bias in CONV:
    x = randn(*xs).requires_grad_()
    weight = randn(*ws).requires_grad_()
    inputs = {"x": x, "weight": weight}
    bias = None
    if with_bias:
        bias = randn(ws[0]).requires_grad_()
        inputs["bias"] = bias
    y = F.conv3d(x, weight, bias, stride, padding, dilation, groups)
    finish(name, {"op": "conv3d", "stride": list(stride), "padding": list(padding),
                  "dilation": list(dilation), "groups": groups}, inputs, y)

for mode in ["reflect", "circular"]:
    conv = nn.Conv3d(2, 3, (3, 2, 3), stride=(1, 2, 1), padding=(1, 1, 2),
                     padding_mode=mode).double()
    with torch.no_grad():
        conv.weight.copy_(randn(*conv.weight.shape))
        conv.bias.copy_(randn(*conv.bias.shape))
    x = randn(2, 2, 4, 5, 6).requires_grad_()
    y = conv(x)
    finish("conv3d_module_" + mode, {"op": "conv3d_module", "padding_mode": mode},
           {"x": x}, y, {"weight": conv.weight.detach(), "bias": conv.bias.detach()})
    cases[-1]["tensors"]["dweight"] = conv.weight.grad
    cases[-1]["tensors"]["dbias"] = conv.bias.grad

MAX = [
    # name, shape, kernel, stride, padding, dilation, ceil_mode, values
    ("max_pool3d_plain", (2, 3, 6, 6, 7), (2, 2, 2), None, (0, 0, 0), (1, 1, 1), False, randn),
    ("max_pool3d_padded_dilated_ceil", (1, 2, 7, 8, 9), (3, 2, 3), (2, 2, 1), (1, 1, 1),
     (2, 1, 2), True, randn),
    ("max_pool3d_ties_unbatched", (2, 6, 7, 8), (3, 3, 2), (2, 2, 2), (1, 1, 1), (1, 1, 1),
     False, small_integers),
]
for name, shape, k, s, p, d, ceil, values in MAX:
    x = values(*shape).requires_grad_()
    y, indices = F.max_pool3d(x, k, s, p, d, ceil_mode=ceil, return_indices=True)
    finish(name, {"op": "max_pool3d", "kernel": list(k), "stride": list(s or (0, 0, 0)),
                  "padding": list(p), "dilation": list(d), "ceil_mode": ceil},
           {"x": x}, y, {"indices": indices})

AVG = [
    # name, shape, kernel, stride, padding, ceil_mode, count_include_pad, divisor_override
    ("avg_pool3d_plain", (2, 3, 6, 6, 7), (2, 3, 2), None, (0, 0, 0), False, True, None),
    ("avg_pool3d_padded_excluded_ceil", (1, 2, 7, 8, 9), (3, 2, 3), (2, 2, 2), (1, 1, 1), True,
     False, None),
    ("avg_pool3d_included_ceil", (1, 2, 7, 8, 9), (3, 2, 3), (2, 2, 2), (1, 1, 1), True, True,
     None),
    ("avg_pool3d_divisor_override_unbatched", (2, 5, 6, 7), (2, 2, 3), (1, 2, 2), (1, 1, 1),
     False, True, 5),
]
for name, shape, k, s, p, ceil, include, divisor in AVG:
    x = randn(*shape).requires_grad_()
    y = F.avg_pool3d(x, k, s, p, ceil_mode=ceil, count_include_pad=include,
                     divisor_override=divisor)
    finish(name, {"op": "avg_pool3d", "kernel": list(k), "stride": list(s or (0, 0, 0)),
                  "padding": list(p), "ceil_mode": ceil, "count_include_pad": include,
                  "divisor_override": divisor}, {"x": x}, y)

ADAPTIVE = [
    ("adaptive_overlapping", (2, 3, 7, 5, 9), (3, 2, 4), randn),
    ("adaptive_global", (2, 2, 3, 4, 5), (1, 1, 1), randn),
    ("adaptive_larger_unbatched", (2, 3, 2, 4), (5, 3, 6), randn),
    ("adaptive_ties", (1, 2, 6, 6, 6), (2, 3, 2), small_integers),
]
for name, shape, size, values in ADAPTIVE:
    x = values(*shape).requires_grad_()
    finish("avg_" + name, {"op": "adaptive_avg_pool3d", "output_size": list(size)}, {"x": x},
           F.adaptive_avg_pool3d(x, size))
    x = x.detach().clone().requires_grad_()
    y, indices = F.adaptive_max_pool3d(x, size, return_indices=True)
    finish("max_" + name, {"op": "adaptive_max_pool3d", "output_size": list(size)}, {"x": x},
           y, {"indices": indices})

# ceil_mode windows that start inside the input where the floor's count leaves none along W
# (and D): torch rounds toward -inf and pools one window there. (Its avg_pool3d refuses an input
# smaller than the kernel; its avg_pool1d and 2d, and leangrad's avg_pool3d, pool it.)
x = randn(2, 2, 3, 4, 3).requires_grad_()
y, indices = F.max_pool3d(x, (4, 2, 4), (2, 2, 2), (0, 1, 0), (1, 1, 1), ceil_mode=True,
                          return_indices=True)
finish("max_pool3d_ceil_short", {"op": "max_pool3d", "kernel": [4, 2, 4], "stride": [2, 2, 2],
                                 "padding": [0, 1, 0], "dilation": [1, 1, 1], "ceil_mode": True},
       {"x": x}, y, {"indices": indices})

write("volumetric.json", "make_volumetric.py", cases)
