"""PyTorch 1.13's interpolate with antialias=True and with recompute_scale_factor
(tests/nn/test_interpolate_antialias.cpp): the input "x", the output "y", a random upstream
gradient "g" and "dx". Bilinear and bicubic antialiased downscaling by size and by
scale_factor, an upscale, align_corners, a float32 case; recompute_scale_factor in nearest,
bilinear and bicubic, with and without antialias.
Run with Debian's python3-torch: /usr/bin/python3 tests/data/make_interpolate_antialias.py
"""
import torch
import torch.nn.functional as F

from reference import write

torch.manual_seed(49)
cases = []


def case(name, shape, mode, size=None, scale_factor=None, align_corners=None,
         recompute_scale_factor=None, antialias=False, dtype=torch.float64):
    x = torch.randn(*shape, dtype=dtype, requires_grad=True)
    y = F.interpolate(x, size=size, scale_factor=scale_factor, mode=mode,
                      align_corners=align_corners, recompute_scale_factor=recompute_scale_factor,
                      antialias=antialias)
    g = torch.randn(y.shape, dtype=dtype)
    y.backward(g)
    cases.append({"name": name,
                  "params": {"mode": mode, "size": size, "scale_factor": scale_factor,
                             "align_corners": align_corners,
                             "recompute_scale_factor": recompute_scale_factor,
                             "antialias": antialias},
                  "tensors": {"x": x.detach(), "y": y.detach(), "g": g, "dx": x.grad}})


case("bilinear_aa_down", (2, 3, 20, 17), "bilinear", size=[7, 9], antialias=True)
case("bicubic_aa_down", (1, 2, 23, 19), "bicubic", size=[5, 6], antialias=True)
case("bilinear_aa_up_and_down", (1, 2, 9, 24), "bilinear", size=[14, 10], antialias=True)
case("bicubic_aa_up", (1, 2, 6, 7), "bicubic", size=[13, 11], antialias=True)
case("bilinear_aa_align_corners", (1, 2, 21, 16), "bilinear", size=[6, 5], align_corners=True,
     antialias=True)
case("bicubic_aa_align_corners", (1, 1, 18, 22), "bicubic", size=[7, 8], align_corners=True,
     antialias=True)
case("bilinear_aa_scale_factor", (2, 2, 19, 23), "bilinear", scale_factor=[0.37, 0.3],
     antialias=True)
case("bilinear_aa_scale_factor_recomputed", (2, 2, 19, 23), "bilinear",
     scale_factor=[0.37, 0.3], recompute_scale_factor=True, antialias=True)
case("bicubic_aa_one_axis", (1, 3, 16, 12), "bicubic", size=[16, 5], antialias=True)
case("bilinear_aa_float32", (2, 3, 31, 27), "bilinear", size=[10, 8], antialias=True,
     dtype=torch.float32)
case("bicubic_aa_float32", (1, 3, 29, 30), "bicubic", size=[9, 11], antialias=True,
     dtype=torch.float32)
case("nearest_scale_factor_recomputed", (1, 2, 10, 9), "nearest", scale_factor=[1.7, 0.45],
     recompute_scale_factor=True)
case("bilinear_scale_factor_recomputed", (1, 2, 10, 9), "bilinear", scale_factor=[1.7, 0.45],
     recompute_scale_factor=True)
case("bicubic_scale_factor_kept", (1, 2, 10, 9), "bicubic", scale_factor=[1.7, 0.45],
     recompute_scale_factor=False)

# A scale_factor that keeps both sizes (5 x 1.1 -> 5, 4 x 1.1 -> 4) but not the step: torch
# resamples (antialiased, and plain bicubic's forward; its plain bicubic backward copies the
# gradient instead, which does not match that forward: values only there).
case("bilinear_aa_size_kept_by_scale", (1, 2, 5, 4), "bilinear", scale_factor=[1.1, 1.1],
     antialias=True)
case("bicubic_aa_size_kept_by_scale", (1, 2, 5, 4), "bicubic", scale_factor=[1.1, 1.1],
     antialias=True)
case("bicubic_size_kept_by_scale", (1, 2, 5, 4), "bicubic", scale_factor=[1.1, 1.1])
cases[-1]["params"]["values_only"] = True

write("interpolate_antialias.json", "make_interpolate_antialias.py", cases)
