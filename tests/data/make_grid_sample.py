"""PyTorch 1.13's F.grid_sample and F.affine_grid (tests/nn/test_grid_sample.cpp), float64: the
input "x", the grid "grid", an upstream gradient "g", the output "y" and the gradients "dx" and
"dgrid"; for affine_grid, theta, the grid and theta's gradient. Every mode and padding mode with
and without align_corners, points inside, on the edges and outside the input, grids that land
exactly on pixel centres (ties for nearest), 3-D volumes, and affine grids of both ranks.
Run with Debian's python3-torch: /usr/bin/python3 tests/data/make_grid_sample.py
"""
import torch
import torch.nn.functional as F

from reference import write

torch.manual_seed(52)
cases = []


def sample_case(name, x_shape, grid, mode, padding_mode, align_corners):
    x = torch.randn(*x_shape, dtype=torch.float64, requires_grad=True)
    grid = grid.clone().requires_grad_(True)
    y = F.grid_sample(x, grid, mode=mode, padding_mode=padding_mode,
                      align_corners=align_corners)
    g = torch.randn_like(y)
    y.backward(g)
    cases.append({"name": name,
                  "params": {"op": "grid_sample", "mode": mode, "padding_mode": padding_mode,
                             "align_corners": align_corners},
                  "tensors": {"x": x, "grid": grid, "g": g, "y": y, "dx": x.grad,
                              "dgrid": grid.grad}})


def grid2(n, h, w, low=-1.3, high=1.3):
    return torch.empty(n, h, w, 2, dtype=torch.float64).uniform_(low, high)


def grid3(n, d, h, w, low=-1.3, high=1.3):
    return torch.empty(n, d, h, w, 3, dtype=torch.float64).uniform_(low, high)


# Points on pixel centres (align_corners false: -1 + (2 i + 1) / size) and halfway between them.
centres = torch.tensor([-1 + (2 * i + 1) / 5 for i in range(5)], dtype=torch.float64)
halves = torch.tensor([-1 + 2 * i / 4 for i in range(5)], dtype=torch.float64)
on_grid = torch.stack(torch.meshgrid(centres, halves, indexing="xy"), -1).unsqueeze(0)

for mode in ("bilinear", "nearest", "bicubic"):
    for padding_mode in ("zeros", "border", "reflection"):
        for align_corners in (False, True):
            name = f"{mode}_{padding_mode}_{'corners' if align_corners else 'edges'}"
            sample_case(name, (2, 3, 4, 5), grid2(2, 3, 6), mode, padding_mode, align_corners)
    sample_case(f"{mode}_far_outside_reflection", (1, 2, 3, 4), grid2(1, 4, 3, -4.5, 4.5), mode,
                "reflection", False)
    sample_case(f"{mode}_on_centres", (1, 2, 5, 5), on_grid, mode, "zeros", False)
sample_case("bilinear_one_pixel_reflection", (1, 2, 1, 1), grid2(1, 2, 2), "bilinear",
            "reflection", True)
for mode in ("bilinear", "nearest"):
    for padding_mode in ("zeros", "border", "reflection"):
        for align_corners in (False, True):
            name = f"volume_{mode}_{padding_mode}_{'corners' if align_corners else 'edges'}"
            sample_case(name, (2, 2, 3, 4, 5), grid3(2, 2, 3, 2), mode, padding_mode,
                        align_corners)


def affine_case(name, size, align_corners):
    n, spatial = size[0], len(size) - 2
    theta = torch.randn(n, spatial, spatial + 1, dtype=torch.float64, requires_grad=True)
    grid = F.affine_grid(theta, size, align_corners=align_corners)
    g = torch.randn_like(grid)
    grid.backward(g)
    cases.append({"name": name,
                  "params": {"op": "affine_grid", "size": list(size),
                             "align_corners": align_corners},
                  "tensors": {"theta": theta, "grid": grid, "g": g, "dtheta": theta.grad}})


affine_case("affine_2d_edges", (2, 3, 4, 5), False)
affine_case("affine_2d_corners", (1, 1, 3, 1), True)
affine_case("affine_3d_edges", (2, 1, 2, 3, 4), False)
affine_case("affine_3d_corners", (1, 2, 3, 1, 2), True)

write("grid_sample.json", "make_grid_sample.py", cases)
