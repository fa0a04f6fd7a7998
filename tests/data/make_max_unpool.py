"""PyTorch 1.13's max_unpool1d/2d/3d (tests/nn/test_composed_layers.cpp, suite MaxUnpool),
float64: the pooled values "x" and their "indices" from max_pool*d(return_indices=True) of a
random input, the unpooled "y", a random upstream gradient "g" and "dx". Strides, padding, an
output_size one larger than the default, and an unbatched input.
Run with Debian's python3-torch: /usr/bin/python3 tests/data/make_max_unpool.py
"""
import torch
import torch.nn.functional as F

from reference import write

torch.manual_seed(21)
cases = []


def case(name, dims, shape, kernel, stride, padding, output_size=None):
    pool = {1: F.max_pool1d, 2: F.max_pool2d, 3: F.max_pool3d}[dims]
    unpool = {1: F.max_unpool1d, 2: F.max_unpool2d, 3: F.max_unpool3d}[dims]
    source = torch.randn(*shape, dtype=torch.float64)
    pooled, indices = pool(source, kernel, stride, padding, return_indices=True)
    x = pooled.clone().requires_grad_()
    y = unpool(x, indices, kernel, stride, padding, output_size)
    g = torch.randn(y.shape, dtype=torch.float64)
    y.backward(g)
    cases.append({"name": name,
                  "params": {"dims": dims, "kernel": kernel, "stride": stride, "padding": padding,
                             "output_size": output_size},
                  "tensors": {"x": x.detach(), "indices": indices, "y": y.detach(), "g": g,
                              "dx": x.grad}})


case("unpool1d", 1, (2, 3, 9), [2], [2], [0])
case("unpool1d_output_size", 1, (1, 2, 9), [3], [2], [1], output_size=[10])
case("unpool2d_stride_padding", 2, (2, 2, 7, 6), [3, 2], [2, 2], [1, 0])
case("unpool2d_unbatched", 2, (3, 4, 4), [2, 2], [2, 2], [0, 0])
case("unpool3d", 3, (1, 2, 4, 6, 4), [2, 2, 2], [2, 2, 2], [0, 0, 0])

write("max_unpool.json", "make_max_unpool.py", cases)
