"""PyTorch 1.13's adaptive_avg_pool2d (tests/nn/test_adaptive_pool.cpp): values and the gradient
of sum(y * w) for fixed weights w, in float64 and float32, for output sizes that divide the input,
that do not (overlapping windows), that exceed it, the global 1 x 1 pooling, and unbatched input.
Run with Debian's python3-torch: /usr/bin/python3 tests/data/make_adaptive_pool.py
"""
import torch
import torch.nn.functional as F

from reference import write

cases = []
SHAPES = [
    ("overlapping", (2, 3, 5, 7), (3, 2)),
    ("global", (2, 4, 7, 7), (1, 1)),
    ("divides", (1, 2, 8, 6), (4, 3)),
    ("larger_than_input", (1, 2, 3, 4), (5, 7)),
    ("unbatched", (3, 9, 5), (4, 3)),
    ("same_size", (1, 1, 4, 4), (4, 4)),
    ("one_row", (2, 2, 1, 6), (1, 4)),
]
generator = torch.Generator().manual_seed(7)
for name, shape, size in SHAPES:
    base = torch.randn(shape, generator=generator, dtype=torch.float64) * 3
    for dtype in (torch.float64, torch.float32):
        x = base.to(dtype).detach().clone().requires_grad_()
        y = F.adaptive_avg_pool2d(x, size)
        w = torch.linspace(0.5, 1.5, y.numel(), dtype=dtype).reshape(y.shape)
        (y * w).sum().backward()
        suffix = "f64" if dtype == torch.float64 else "f32"
        cases.append({"name": f"{name}_{suffix}", "params": {"output_size": list(size)},
                      "tensors": {"x": x.detach(), "y": y.detach(), "w": w, "dx": x.grad}})

write("adaptive_pool.json", "make_adaptive_pool.py", cases)
