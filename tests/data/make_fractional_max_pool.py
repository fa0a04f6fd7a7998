"""PyTorch 1.13's fractional_max_pool2d / fractional_max_pool3d (tests/nn/test_fractional_max_pool.cpp),
with the random samples given (_random_samples, one draw in [0, 1) per batch, channel and spatial
dim), so the windows are fixed: the input "x", the "samples", the output "y", the "indices", a
random upstream gradient "g" and "dx". output_size and output_ratio, an unbatched input, a
float32 case (PyTorch places the windows in the input's dtype) and ties.
Run with Debian's python3-torch: /usr/bin/python3 tests/data/make_fractional_max_pool.py
"""
import torch
import torch.nn.functional as F

from reference import write

torch.manual_seed(47)
cases = []


def case(name, dims, shape, kernel, output_size=None, output_ratio=None, dtype=torch.float64,
         rounded=False, samples=None):
    pool = {2: F.fractional_max_pool2d, 3: F.fractional_max_pool3d}[dims]
    source = torch.randn(*shape, dtype=dtype)
    if rounded:  # few distinct values: windows with tied maxima
        source = (source * 2).round()
    x = source.requires_grad_()
    batch = shape[0] if len(shape) == dims + 2 else 1
    channels = shape[-dims - 1]
    if samples is None:
        samples = torch.rand(batch, channels, dims, dtype=dtype)
    y, indices = pool(x, kernel, output_size=output_size, output_ratio=output_ratio,
                      return_indices=True, _random_samples=samples)
    g = torch.randn(y.shape, dtype=dtype)
    y.backward(g)
    cases.append({"name": name,
                  "params": {"dims": dims, "kernel": kernel, "output_size": output_size,
                             "output_ratio": output_ratio},
                  "tensors": {"x": x.detach(), "samples": samples, "y": y.detach(),
                              "indices": indices, "g": g, "dx": x.grad}})


case("pool2d_output_size", 2, (2, 3, 9, 11), [2, 3], output_size=[4, 5])
case("pool2d_output_ratio", 2, (2, 2, 10, 13), [2, 2], output_ratio=[0.5, 0.6])
case("pool2d_unbatched", 2, (3, 8, 8), [3, 3], output_size=[3, 3])
case("pool2d_float32", 2, (2, 4, 17, 23), [3, 2], output_size=[6, 9], dtype=torch.float32)
case("pool2d_ties", 2, (1, 3, 12, 12), [3, 3], output_size=[5, 5], rounded=True)
case("pool2d_one_output", 2, (1, 2, 5, 6), [2, 2], output_size=[1, 1])
case("pool3d_output_size", 3, (1, 2, 7, 8, 6), [2, 2, 2], output_size=[3, 4, 3])
case("pool3d_output_ratio", 3, (2, 2, 6, 9, 8), [2, 3, 2], output_ratio=[0.5, 0.5, 0.75])
case("pool3d_unbatched", 3, (2, 5, 6, 7), [2, 2, 3], output_size=[3, 3, 2])
case("pool3d_float32", 3, (1, 3, 11, 9, 10), [3, 2, 2], output_size=[4, 5, 6],
     dtype=torch.float32)

# Samples whose float32 window starts differ from those worked out in double: 12 -> 7 with
# kernel 2 puts a float32 sample of 0.6 (0.60000002384) at starts 0 1 3 4 6 8 10, where double
# arithmetic gives 0 1 3 5 6 8 10 (and 0.19999999 likewise).
case("pool2d_float32_window_rounding", 2, (1, 2, 12, 12), [2, 2], output_size=[7, 7],
     dtype=torch.float32,
     samples=torch.tensor([[[0.6, 0.19999999], [0.19999999, 0.6]]], dtype=torch.float32))

write("fractional_max_pool.json", "make_fractional_max_pool.py", cases)
