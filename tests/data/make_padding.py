"""PyTorch reference cases for pad's reflect, replicate and circular modes, Conv1d/Conv2d with a
padding_mode, and the padding modules (tests/nn/test_padding.cpp, suite PaddingReference).

Each case holds float32 input "x" (and a module's parameters "w", "b"), the output "y", a random
upstream gradient "g" and the gradients ("dx", "dw", "db"). Run with Debian's python3-torch:
/usr/bin/python3 tests/data/make_padding.py
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

from reference import write
from torch_cases import grad_case, leaf

torch.manual_seed(0)

cases = []


def pad_case(name, mode, pad, shape):
    cases.append(grad_case(name, {"op": "pad", "mode": mode, "pad": list(pad)}, {"x": leaf(*shape)},
                           lambda x: F.pad(x, pad, mode=mode)))


# ---- F.pad in each mode: 1, 2 and 3 padded dims, batched and unbatched, uneven amounts ----
pad_case("reflect__1d", "reflect", (2, 3), (2, 3, 5))
pad_case("reflect__2d", "reflect", (1, 2, 3, 0), (2, 3, 4, 5))
pad_case("reflect__2d_unbatched", "reflect", (2, 2, 1, 1), (2, 3, 4))
pad_case("reflect__3d", "reflect", (1, 0, 2, 1, 1, 2), (1, 2, 3, 4, 5))
pad_case("reflect__cut_left", "reflect", (-1, 3), (1, 2, 5))
pad_case("replicate__1d", "replicate", (3, 1), (2, 2, 4))
pad_case("replicate__2d", "replicate", (2, 3, 4, 1), (2, 2, 3, 3))
pad_case("replicate__3d", "replicate", (1, 2, 0, 1, 2, 1), (1, 2, 2, 3, 2))
pad_case("replicate__cut", "replicate", (-1, 3, 2, -1), (1, 2, 4, 5))
pad_case("circular__1d", "circular", (2, 3), (2, 3, 5))
pad_case("circular__2d", "circular", (1, 2, 3, 0), (2, 3, 4, 5))
pad_case("circular__3d", "circular", (1, 1, 2, 0, 1, 1), (1, 2, 2, 3, 4))
pad_case("circular__cut_left", "circular", (-1, 3), (1, 2, 5))


# ---- Conv1d / Conv2d with a padding_mode: the module's own weights travel with the case ----
def conv_case(name, module, shape):
    params = {"op": type(module).__name__, "padding_mode": module.padding_mode,
              "in_channels": module.in_channels, "out_channels": module.out_channels,
              "kernel_size": list(module.kernel_size), "stride": list(module.stride),
              "padding": list(module.padding), "dilation": list(module.dilation),
              "groups": module.groups}
    x = leaf(*shape)
    w = module.weight.detach().clone().requires_grad_()
    b = module.bias.detach().clone().requires_grad_()

    def forward(x, w, b):
        with torch.no_grad():
            module.weight.copy_(w)
            module.bias.copy_(b)
        y = module(x)
        return y

    # The module's parameters are its own leaves: read their gradients back as dw, db.
    y = forward(x, w, b)
    g = torch.randn(y.shape)
    y.backward(g)
    tensors = {"x": x, "w": w, "b": b, "y": y, "g": g, "dx": x.grad, "dw": module.weight.grad,
               "db": module.bias.grad}
    cases.append({"name": name, "params": params,
                  "tensors": {k: v.detach().clone() for k, v in tensors.items()}})


conv_case("conv2d__reflect", nn.Conv2d(3, 4, 3, padding=1, padding_mode="reflect"), (2, 3, 6, 5))
conv_case("conv2d__replicate_stride_2",
          nn.Conv2d(2, 4, (3, 5), stride=2, padding=(1, 2), padding_mode="replicate"), (2, 2, 7, 8))
conv_case("conv2d__circular_dilated_grouped",
          nn.Conv2d(4, 6, 3, padding=2, dilation=2, groups=2, padding_mode="circular"),
          (1, 4, 5, 6))
conv_case("conv1d__reflect", nn.Conv1d(3, 5, 3, padding=1, padding_mode="reflect"), (2, 3, 7))
conv_case("conv1d__circular", nn.Conv1d(2, 3, 5, padding=2, padding_mode="circular"), (2, 2, 6))


# ---- The modules ----
def module_case(name, module, shape):
    cases.append(grad_case(name, {"op": type(module).__name__, "repr": repr(module),
                                  "padding": list(module.padding),
                                  "value": float(getattr(module, "value", 0.0))},
                           {"x": leaf(*shape)}, module))


module_case("module__reflection_pad1d", nn.ReflectionPad1d((2, 1)), (2, 3, 4))
module_case("module__reflection_pad2d", nn.ReflectionPad2d(2), (1, 2, 4, 5))
module_case("module__reflection_pad3d", nn.ReflectionPad3d((1, 0, 1, 2, 0, 1)), (2, 3, 4, 3))
module_case("module__replication_pad1d", nn.ReplicationPad1d(3), (3, 4))
module_case("module__replication_pad2d", nn.ReplicationPad2d((1, 2, 0, 3)), (2, 2, 3, 3))
module_case("module__replication_pad3d", nn.ReplicationPad3d(1), (1, 2, 2, 2, 3))
module_case("module__zero_pad2d", nn.ZeroPad2d((1, 0, 2, 1)), (2, 3, 4))
module_case("module__constant_pad1d", nn.ConstantPad1d((2, 1), 3.5), (2, 3))
module_case("module__constant_pad2d", nn.ConstantPad2d(1, -1.5), (1, 2, 3, 3))
module_case("module__constant_pad3d", nn.ConstantPad3d((1, 0, 0, 1, 2, 0), 0.25), (1, 2, 2, 2))

write("padding.json", "make_padding.py", cases)
