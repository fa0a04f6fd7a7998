"""PyTorch 1.13's 1-d poolings (tests/nn/test_pool1d.cpp): max_pool1d (with its indices),
avg_pool1d and adaptive_avg_pool1d, in float64: the values and the gradient "dx" of sum(y * w)
for fixed weights "w", over strides, padding, dilation, ceil_mode, count_include_pad, windows that
overlap, output sizes that do not divide the input or exceed it, unbatched input and ties (small
integers: the first maximum of a window wins).
Run with Debian's python3-torch: /usr/bin/python3 tests/data/make_pool1d.py
"""
import torch
import torch.nn.functional as F

from reference import write

cases = []
generator = torch.Generator().manual_seed(17)


def randn(*shape):
    return torch.randn(*shape, generator=generator, dtype=torch.float64) * 2


def small_integers(*shape):
    return torch.randint(0, 3, shape, generator=generator).to(torch.float64)


MAX = [
    # name, shape, kernel, stride, padding, dilation, ceil_mode, values
    ("max_default_stride", (2, 3, 10), 3, None, 0, 1, False, randn),
    ("max_overlapping_padded", (2, 2, 11), 4, 2, 2, 1, False, randn),
    ("max_dilated_ceil", (1, 3, 13), 3, 2, 1, 2, True, randn),
    ("max_unbatched", (3, 9), 2, 1, 1, 1, False, randn),
    ("max_ties", (2, 2, 12), 3, 2, 1, 1, True, small_integers),
]
for name, shape, k, s, p, d, ceil, values in MAX:
    x = values(*shape).requires_grad_()
    y, indices = F.max_pool1d(x, k, stride=s, padding=p, dilation=d, ceil_mode=ceil,
                              return_indices=True)
    w = torch.linspace(-1, 1, y.numel(), dtype=torch.float64).reshape(y.shape)
    (y * w).sum().backward()
    cases.append({"name": name, "params": {"op": "max_pool1d", "kernel": k, "stride": s or 0,
                                           "padding": p, "dilation": d, "ceil_mode": ceil},
                  "tensors": {"x": x.detach(), "y": y.detach(), "indices": indices, "w": w,
                              "dx": x.grad}})

AVG = [
    # name, shape, kernel, stride, padding, ceil_mode, count_include_pad
    ("avg_default_stride", (2, 3, 10), 3, None, 0, False, True),
    ("avg_padded_excluded", (2, 2, 11), 4, 2, 2, False, False),
    ("avg_ceil_included", (1, 3, 12), 5, 3, 2, True, True),
    ("avg_ceil_excluded_unbatched", (3, 9), 4, 3, 1, True, False),
]
for name, shape, k, s, p, ceil, include in AVG:
    x = randn(*shape).requires_grad_()
    y = F.avg_pool1d(x, k, stride=s, padding=p, ceil_mode=ceil, count_include_pad=include)
    w = torch.linspace(-1, 1, y.numel(), dtype=torch.float64).reshape(y.shape)
    (y * w).sum().backward()
    cases.append({"name": name, "params": {"op": "avg_pool1d", "kernel": k, "stride": s or 0,
                                           "padding": p, "ceil_mode": ceil,
                                           "count_include_pad": include},
                  "tensors": {"x": x.detach(), "y": y.detach(), "w": w, "dx": x.grad}})

ADAPTIVE = [
    ("adaptive_overlapping", (2, 3, 10), 4),
    ("adaptive_global", (2, 2, 7), 1),
    ("adaptive_larger_than_input", (1, 2, 3), 7),
    ("adaptive_unbatched", (3, 11), 5),
]
for name, shape, size in ADAPTIVE:
    x = randn(*shape).requires_grad_()
    y = F.adaptive_avg_pool1d(x, size)
    w = torch.linspace(-1, 1, y.numel(), dtype=torch.float64).reshape(y.shape)
    (y * w).sum().backward()
    cases.append({"name": name, "params": {"op": "adaptive_avg_pool1d", "output_size": size},
                  "tensors": {"x": x.detach(), "y": y.detach(), "w": w, "dx": x.grad}})

# A ceil_mode window that starts inside the input where the floor's count leaves none
# (L + 2 padding - dilation (kernel - 1) - 1 < 0): torch rounds toward -inf and pools one window.
SHORT = [
    # name, op, shape, kernel, stride, padding, dilation
    ("max_ceil_short", "max_pool1d", (1, 2, 3), 4, 2, 0, 1),
    ("max_ceil_short_dilated", "max_pool1d", (2, 2, 7), 4, 2, 1, 3),
    ("avg_ceil_short", "avg_pool1d", (1, 2, 3), 4, 2, 0, 1),
]
for name, op, shape, k, s, p, d in SHORT:
    x = randn(*shape).requires_grad_()
    if op == "max_pool1d":
        y, indices = F.max_pool1d(x, k, stride=s, padding=p, dilation=d, ceil_mode=True,
                                  return_indices=True)
        params = {"op": op, "kernel": k, "stride": s, "padding": p, "dilation": d,
                  "ceil_mode": True}
        extra = {"indices": indices}
    else:
        y = F.avg_pool1d(x, k, stride=s, padding=p, ceil_mode=True, count_include_pad=True)
        params = {"op": op, "kernel": k, "stride": s, "padding": p, "ceil_mode": True,
                  "count_include_pad": True}
        extra = {}
    w = torch.linspace(-1, 1, y.numel(), dtype=torch.float64).reshape(y.shape)
    (y * w).sum().backward()
    cases.append({"name": name, "params": params,
                  "tensors": dict({"x": x.detach(), "y": y.detach(), "w": w, "dx": x.grad},
                                  **extra)})

write("pool1d.json", "make_pool1d.py", cases)
