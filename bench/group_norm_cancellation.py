#!/usr/bin/python3
"""How far GroupNorm's backward channel sums stray from the exact value when summed in float32,
against the worst-case bound tests/kernels/test_group_norm_vectorized.cpp allows (per channel of
HxW terms: (HxW + 8) u sum |dy (x - mean)|, plus the reference's double-precision error).

Two ways of forming sum dy (x - mean) in float32, summed left to right:
  uncentred  sum dy x and sum dy, then sum dy x - mean * sum dy (CUDA's kernel before
             2026-11-25, and PyTorch's);
  centred    sum dy (x - mean) directly (the CPU's vectorised kernel, and CUDA's since).
Prints, per case (N, C, HxW, G, mean in standard deviations), the worst ratio of error to bound
over the channels: above 1, the test fails. Needs numpy (Debian's python3-numpy).

    /usr/bin/python3 bench/group_norm_cancellation.py
"""
import numpy as np

U = 2.0**-24        # float32's unit roundoff
U_DOUBLE = 2.0**-53


def worst_ratios(batch, channels, spatial, groups, offset, rng):
    per_group = channels // groups
    x = (offset + rng.standard_normal((batch, channels, spatial))).astype(np.float32)
    dy = rng.standard_normal((batch, channels, spatial)).astype(np.float32)
    worst = {"uncentred": 0.0, "centred": 0.0}
    for n in range(batch):
        for g in range(groups):
            rows = slice(g * per_group, (g + 1) * per_group)
            mean = np.float32(x[n, rows].astype(np.float64).mean())
            for c in range(g * per_group, (g + 1) * per_group):
                xs, gs = x[n, c], dy[n, c]
                s_dy = s_dy_x = s_centred = np.float32(0)
                for xi, gi in zip(xs, gs):
                    s_dy = np.float32(s_dy + gi)
                    s_dy_x = np.float32(s_dy_x + np.float32(gi * xi))
                    s_centred = np.float32(s_centred + np.float32(gi * np.float32(xi - mean)))
                uncentred = np.float32(s_dy_x - np.float32(mean * s_dy))
                xd, gd, m = xs.astype(np.float64), gs.astype(np.float64), float(mean)
                exact = float(np.sum(gd * (xd - m)))
                bound = ((spatial + 8) * U * float(np.sum(np.abs(gd * (xd - m)))) +
                         (spatial + 8) * U_DOUBLE *
                         (float(np.sum(np.abs(gd * xd))) + abs(m) * float(np.sum(np.abs(gd)))))
                worst["uncentred"] = max(worst["uncentred"], abs(float(uncentred) - exact) / bound)
                worst["centred"] = max(worst["centred"], abs(float(s_centred) - exact) / bound)
    return worst


def main():
    rng = np.random.default_rng(0)
    print("case (N, C, HxW, G, mean/sd)    uncentred error/bound   centred error/bound")
    for case in [(2, 4, 300, 2, 8), (16, 32, 33, 8, 30), (8, 16, 33, 4, 1000),
                 (1, 2, 3000, 1, 1000)]:
        w = worst_ratios(*case, rng)
        print(f"{str(case):32} {w['uncentred']:12.3f} {w['centred']:21.3f}")


if __name__ == "__main__":
    main()
