"""PyTorch reference cases for interpolate's bicubic, nearest-exact and area modes and nn.Upsample
with them (tests/nn/test_interpolate_modes.cpp, suite InterpolateModesReference): float32 input "x",
the output "y", a random upstream gradient "g" and the input gradient "dx". Run with Debian's
python3-torch: /usr/bin/python3 tests/data/make_interpolate_modes.py
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


# bicubic: up and down, by size and by factor, both corner rules, one axis of equal size, a plane
# of one row, and a plane of the output's size (copied).
case("bicubic_up_size", (2, 3, 4, 5), "bicubic", size=[7, 9])
case("bicubic_up_size_corners", (2, 3, 4, 5), "bicubic", size=[7, 9], align_corners=True)
case("bicubic_down_size", (1, 2, 9, 8), "bicubic", size=[4, 3])
case("bicubic_scale_2", (1, 2, 3, 4), "bicubic", scale_factor=[2.0, 2.0])
case("bicubic_scale_uneven_corners", (2, 1, 5, 4), "bicubic", scale_factor=[1.7, 2.5],
     align_corners=True)
case("bicubic_one_equal_axis", (1, 2, 6, 5), "bicubic", size=[6, 11])
case("bicubic_single_row", (1, 1, 1, 6), "bicubic", size=[3, 10])
case("bicubic_same_size", (1, 2, 4, 4), "bicubic", size=[4, 4])
# nearest-exact: up, down, by factor.
case("nearest_exact_up", (2, 2, 3, 5), "nearest-exact", size=[7, 8])
case("nearest_exact_down", (1, 3, 9, 7), "nearest-exact", size=[4, 3])
case("nearest_exact_scale", (1, 1, 4, 6), "nearest-exact", scale_factor=[1.5, 0.5])

# nn.Upsample with the new modes: the module's forward is F.interpolate's.
up = nn.Upsample(scale_factor=2.0, mode="bicubic", align_corners=True)
cases.append(grad_case("module_bicubic_corners", {"mode": "bicubic", "size": None,
                                                  "scale_factor": [2.0, 2.0],
                                                  "align_corners": True},
                       {"x": leaf(1, 2, 3, 3, low=-2, high=3)}, up))

# area (adaptive average pooling to the output size): down, up, by factor, and the module.
case("area_down_size", (1, 2, 9, 8), "area", size=[4, 3])
case("area_up_size", (2, 2, 3, 5), "area", size=[7, 8])
case("area_scale", (1, 3, 10, 7), "area", scale_factor=[0.5, 0.4])
down = nn.Upsample(scale_factor=0.5, mode="area")
cases.append(grad_case("module_area", {"mode": "area", "size": None, "scale_factor": [0.5, 0.5],
                                       "align_corners": None},
                       {"x": leaf(1, 2, 6, 5, low=-2, high=3)}, down))

write("interpolate_modes.json", "make_interpolate_modes.py", cases)
