"""PyTorch 1.13's adaptive_max_pool2d and adaptive_max_pool1d (tests/nn/test_adaptive_max_pool.cpp):
the values, the int64 indices and the gradient "dx" of sum(y * w) for fixed weights "w", in
float64, float32 and bfloat16, for output sizes that divide the input, that do not (overlapping
windows, so an element can be the maximum of two windows and gets both gradients), that exceed
it, the global 1 x 1 pooling, unbatched input, ties (small integers: the first maximum of a window
wins), NaNs (a NaN is the maximum: the last NaN of its window) and windows of -inf.
Run with Debian's python3-torch: /usr/bin/python3 tests/data/make_adaptive_max_pool.py
"""
import torch
import torch.nn.functional as F

from reference import write

cases = []
generator = torch.Generator().manual_seed(13)


def randn(shape):
    return torch.randn(shape, generator=generator, dtype=torch.float64) * 3


def small_integers(shape):
    return torch.randint(0, 3, shape, generator=generator).to(torch.float64)


def with_nans(shape):
    x = randn(shape)
    flat = x.view(-1)
    flat[1] = float("nan")
    flat[3] = float("nan")  # (0, 3) and (0, 1) share the first 2 x 2 window of a 4 x 6 plane
    flat[10] = float("nan")
    return x


def with_minus_inf(shape):
    x = randn(shape)
    x[..., :2, :] = float("-inf")  # whole windows of -inf: their first element is the index
    return x


SHAPES_2D = [
    ("overlapping", (2, 3, 5, 7), (3, 2), randn),
    ("global", (2, 2, 6, 5), (1, 1), randn),
    ("divides", (1, 2, 8, 6), (4, 3), randn),
    ("larger_than_input", (1, 2, 3, 4), (5, 7), randn),
    ("unbatched", (3, 9, 5), (4, 3), randn),
    ("same_size", (1, 1, 4, 4), (4, 4), randn),
    ("ties", (2, 2, 7, 9), (3, 4), small_integers),
    ("nans", (1, 2, 4, 6), (2, 3), with_nans),
    ("minus_inf", (1, 2, 4, 6), (2, 3), with_minus_inf),
]
SHAPES_1D = [
    ("overlapping_1d", (2, 3, 10), 4, randn),
    ("unbatched_1d", (3, 7), 5, randn),
    ("larger_than_input_1d", (2, 2, 3), 7, randn),
    ("ties_1d", (2, 3, 11), 3, small_integers),
]


def add(name, dims, base, size, dtype, suffix):
    x = base.to(dtype).detach().clone().requires_grad_()
    fn = F.adaptive_max_pool2d if dims == 2 else F.adaptive_max_pool1d
    y, indices = fn(x, size, return_indices=True)
    w = torch.linspace(0.5, 1.5, y.numel(), dtype=torch.float64).to(dtype).reshape(y.shape)
    (y * w).sum().backward()
    cases.append({"name": f"{name}_{suffix}",
                  "params": {"dims": dims, "output_size": list(size) if dims == 2 else [size]},
                  "tensors": {"x": x.detach(), "y": y.detach(), "indices": indices, "w": w,
                              "dx": x.grad}})


for dims, shapes in ((2, SHAPES_2D), (1, SHAPES_1D)):
    for name, shape, size, make in shapes:
        base = make(shape)
        for dtype, suffix in ((torch.float64, "f64"), (torch.float32, "f32")):
            add(name, dims, base, size, dtype, suffix)
# bfloat16 where no element gets two gradients (PyTorch adds them in bfloat16): values, indices
# and gradients are then exact.
add("divides", 2, small_integers((2, 3, 8, 6)), (4, 3), torch.bfloat16, "bf16")
add("ties_1d", 1, small_integers((2, 3, 12)), 4, torch.bfloat16, "bf16")

write("adaptive_max_pool.json", "make_adaptive_max_pool.py", cases)
