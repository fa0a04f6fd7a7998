"""PyTorch 1.13's conv_transpose3d (tests/nn/test_conv_transpose3d.cpp), float64: the output "y"
and the gradients of sum(y * w) for fixed weights "w" with respect to the input, the weight and
the bias, for a plain case, stride with padding and output_padding per dim, groups with dilation
and no bias, and an unbatched input.
Run with Debian's python3-torch: /usr/bin/python3 tests/data/make_conv_transpose3d.py
"""
import torch
import torch.nn.functional as F

from reference import write

cases = []
generator = torch.Generator().manual_seed(31)


def randn(*shape):
    return torch.randn(*shape, generator=generator, dtype=torch.float64)


CASES = [
    # name, x shape, weight shape, stride, padding, output_padding, groups, dilation, bias
    ("plain", (2, 3, 3, 4, 5), (3, 4, 2, 3, 2), [1, 1, 1], [0, 0, 0], [0, 0, 0], 1, [1, 1, 1],
     True),
    ("stride_padding_output_padding", (1, 4, 3, 3, 4), (4, 2, 3, 2, 4), [2, 3, 2], [1, 0, 1],
     [1, 2, 0], 1, [1, 1, 1], True),
    ("groups_dilation_no_bias", (2, 4, 4, 3, 3), (4, 3, 2, 3, 2), [2, 1, 3], [1, 2, 0],
     [0, 0, 2], 2, [2, 2, 1], False),
    ("deep_kernel_padding", (1, 2, 2, 2, 3), (2, 3, 4, 1, 2), [1, 2, 1], [2, 0, 1], [0, 1, 0], 1,
     [1, 1, 2], True),
    ("unbatched", (3, 2, 3, 2), (3, 2, 2, 2, 2), [2, 2, 2], [0, 1, 0], [1, 0, 0], 1, [1, 1, 1],
     True),
]
for name, xs, ws, stride, padding, output_padding, groups, dilation, with_bias in CASES:
    x = randn(*xs).requires_grad_()
    weight = randn(*ws).requires_grad_()
    bias = randn(ws[1] * groups).requires_grad_() if with_bias else None
    y = F.conv_transpose3d(x, weight, bias, stride, padding, output_padding, groups, dilation)
    w = torch.linspace(-1, 1, y.numel(), dtype=torch.float64).reshape(y.shape)
    (y * w).sum().backward()
    tensors = {"x": x.detach(), "weight": weight.detach(), "y": y.detach(), "w": w,
               "dx": x.grad, "dweight": weight.grad}
    if bias is not None:
        tensors.update({"bias": bias.detach(), "dbias": bias.grad})
    cases.append({"name": name, "params": {"stride": stride, "padding": padding,
                                           "output_padding": output_padding, "groups": groups,
                                           "dilation": dilation},
                  "tensors": tensors})

write("conv_transpose3d.json", "make_conv_transpose3d.py", cases)
