"""PyTorch reference cases for interpolate over 3-D (N, C, L) and 5-D (N, C, D, H, W) inputs:
linear, trilinear, and nearest, nearest-exact and area at both ranks, and nn.Upsample with them
(tests/nn/test_interpolate_nd.cpp, suite InterpolateNdReference): float32 input "x", the output
"y", a random upstream gradient "g" and the input gradient "dx". Run with Debian's python3-torch:
/usr/bin/python3 tests/data/make_interpolate_nd.py
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

from reference import write
from torch_cases import grad_case, leaf

torch.manual_seed(0)

cases = []


def case(name, shape, mode, size=None, scale_factor=None, align_corners=None):
    params = {"mode": mode, "size": size, "scale_factor": scale_factor,
              "align_corners": align_corners}
    cases.append(grad_case(name, params, {"x": leaf(*shape, low=-2, high=3)},
                           lambda x: F.interpolate(x, size=size, scale_factor=scale_factor,
                                                   mode=mode, align_corners=align_corners)))


# linear (N, C, L): up and down, by size and by factor, both corner rules, an unchanged length.
case("linear_up_size", (2, 3, 5), "linear", size=[9])
case("linear_up_size_corners", (2, 3, 5), "linear", size=[9], align_corners=True)
case("linear_down_size", (1, 2, 11), "linear", size=[4])
case("linear_scale", (2, 2, 4), "linear", scale_factor=[2.5])
case("linear_scale_corners", (1, 3, 6), "linear", scale_factor=[0.6], align_corners=True)
case("linear_same_size", (1, 2, 7), "linear", size=[7])
# the other modes over (N, C, L).
case("nearest_1d_up", (2, 2, 5), "nearest", size=[12])
case("nearest_1d_scale", (1, 3, 7), "nearest", scale_factor=[0.5])
case("nearest_exact_1d", (2, 1, 6), "nearest-exact", size=[10])
case("area_1d", (1, 2, 11), "area", size=[4])
# trilinear (N, C, D, H, W): every axis resized, by size and factor, corners, one axis unchanged,
# a single plane of depth.
case("trilinear_up_size", (2, 2, 3, 4, 5), "trilinear", size=[5, 6, 7])
case("trilinear_up_size_corners", (1, 2, 3, 4, 5), "trilinear", size=[5, 6, 7],
     align_corners=True)
case("trilinear_down_size", (1, 2, 7, 6, 8), "trilinear", size=[3, 4, 3])
case("trilinear_scale", (1, 3, 2, 3, 4), "trilinear", scale_factor=[2.0, 1.5, 2.5])
case("trilinear_scale_corners", (2, 1, 4, 3, 3), "trilinear", scale_factor=[1.5, 2.0, 0.7],
     align_corners=True)
case("trilinear_same_depth", (1, 2, 4, 3, 5), "trilinear", size=[4, 6, 2])
case("trilinear_single_plane", (1, 1, 1, 3, 4), "trilinear", size=[3, 5, 6])
# the other modes over (N, C, D, H, W).
case("nearest_3d_up", (2, 2, 2, 3, 4), "nearest", size=[4, 5, 6])
case("nearest_3d_scale", (1, 2, 5, 4, 6), "nearest", scale_factor=[0.5, 1.5, 0.7])
case("nearest_exact_3d", (1, 2, 3, 5, 4), "nearest-exact", size=[5, 3, 7])
case("area_3d", (1, 2, 7, 6, 5), "area", size=[3, 4, 2])

# nn.Upsample over both ranks: the module's forward is F.interpolate's.
modules = [
    ("module_linear", (2, 2, 6), nn.Upsample(scale_factor=1.5, mode="linear"),
     {"mode": "linear", "scale_factor": [1.5], "align_corners": None}),
    ("module_trilinear_corners", (1, 2, 2, 3, 3),
     nn.Upsample(size=(4, 5, 6), mode="trilinear", align_corners=True),
     {"mode": "trilinear", "size": [4, 5, 6], "align_corners": True}),
    ("module_nearest_3d", (1, 1, 2, 3, 4), nn.Upsample(scale_factor=2.0, mode="nearest"),
     {"mode": "nearest", "scale_factor": [2.0], "align_corners": None}),
]
for name, shape, module, params in modules:
    params = {"size": None, "scale_factor": None, **params}
    cases.append(grad_case(name, params, {"x": leaf(*shape, low=-2, high=3)}, module))

write("interpolate_nd.json", "make_interpolate_nd.py", cases)
