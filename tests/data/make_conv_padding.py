"""PyTorch 1.13's convolutions with padding="same" and "valid" (tests/nn/test_conv_padding.cpp),
float64: F.conv1d/conv2d/conv3d and the Conv modules' forward with their parameters, and the
gradients of the input, weight and bias under an upstream gradient "g". Odd and even kernels,
dilations that make the total padding odd (one more zero after than before), groups, and the
modules' reflect, replicate and circular padding modes with "same".
Run with Debian's python3-torch: /usr/bin/python3 tests/data/make_conv_padding.py
"""
import torch
import torch.nn.functional as F

from reference import write

torch.manual_seed(48)
cases = []
conv = {1: F.conv1d, 2: F.conv2d, 3: F.conv3d}
module = {1: torch.nn.Conv1d, 2: torch.nn.Conv2d, 3: torch.nn.Conv3d}


def case(name, dims, x_shape, c_out, kernel, padding, dilation=1, groups=1, mode=None):
    """mode None: the functional; otherwise the module with that padding_mode."""
    x = torch.randn(*x_shape, dtype=torch.float64, requires_grad=True)
    c_in = x_shape[1]
    kernel = kernel if isinstance(kernel, tuple) else (kernel,) * dims
    dilation = dilation if isinstance(dilation, tuple) else (dilation,) * dims
    if mode is None:
        w = torch.randn(c_out, c_in // groups, *kernel, dtype=torch.float64, requires_grad=True)
        b = torch.randn(c_out, dtype=torch.float64, requires_grad=True)
        y = conv[dims](x, w, b, 1, padding, dilation, groups)
    else:
        m = module[dims](c_in, c_out, kernel, padding=padding, dilation=dilation, groups=groups,
                         padding_mode=mode).double()
        w, b = m.weight, m.bias
        y = m(x)
    g = torch.randn_like(y)
    y.backward(g)
    cases.append({"name": name,
                  "params": {"dims": dims, "kernel": list(kernel), "padding": padding,
                             "dilation": list(dilation), "groups": groups,
                             "mode": mode or "functional"},
                  "tensors": {"x": x, "w": w, "b": b, "y": y, "g": g, "dx": x.grad, "dw": w.grad,
                              "db": b.grad}})


case("conv1d_same_odd_kernel", 1, (2, 3, 7), 4, 3, "same")
case("conv1d_same_even_kernel", 1, (2, 2, 6), 3, 4, "same")
case("conv1d_same_dilated_groups", 1, (1, 4, 9), 6, 2, "same", dilation=3, groups=2)
case("conv1d_valid", 1, (2, 3, 8), 2, 3, "valid", dilation=2)
case("conv2d_same_mixed_kernel", 2, (2, 3, 5, 6), 4, (2, 3), "same")
case("conv2d_same_even_dilated", 2, (1, 2, 7, 5), 3, (4, 2), "same", dilation=(1, 3))
case("conv2d_same_groups", 2, (2, 4, 4, 4), 4, 3, "same", groups=4)
case("conv2d_valid", 2, (1, 3, 6, 5), 2, (3, 2), "valid")
case("conv3d_same_even", 3, (1, 2, 4, 5, 3), 3, (2, 3, 4), "same")
case("conv3d_valid_dilated", 3, (1, 2, 5, 5, 4), 2, 2, "valid", dilation=(2, 1, 1))
case("conv1d_module_same_reflect", 1, (2, 3, 7), 2, 4, "same", mode="reflect")
case("conv2d_module_same_replicate", 2, (1, 2, 5, 6), 3, (2, 3), "same", dilation=(2, 1),
     mode="replicate")
case("conv2d_module_same_circular", 2, (2, 2, 4, 5), 2, 4, "same", mode="circular")
case("conv2d_module_same_zeros", 2, (1, 3, 5, 5), 2, (4, 1), "same", mode="zeros")
case("conv3d_module_same_reflect", 3, (1, 2, 4, 4, 5), 2, (3, 2, 2), "same", mode="reflect")
case("conv2d_module_valid_reflect", 2, (1, 2, 5, 6), 2, 3, "valid", mode="reflect")

write("conv_padding.json", "make_conv_padding.py", cases)
