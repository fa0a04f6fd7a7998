"""PyTorch 1.13's nn.CrossMapLRN2d forward (tests/nn/test_cross_map_lrn2d.cpp), float64: the input
"x" and the output "y". Odd and even sizes, fewer channels than the window, size 1. Only the
forward: PyTorch's hand-written backward of this layer is not its forward's derivative (this
script checks that it disagrees with finite differences of the forward, so the C++ test checks
the gradient by finite differences instead).
Run with Debian's python3-torch: /usr/bin/python3 tests/data/make_cross_map_lrn2d.py
"""
import torch

from reference import write

torch.manual_seed(50)
cases = []


def case(name, shape, size, alpha, beta, k):
    x = torch.randn(*shape, dtype=torch.float64)
    y = torch.nn.CrossMapLRN2d(size, alpha=alpha, beta=beta, k=k)(x)
    cases.append({"name": name, "params": {"size": size, "alpha": alpha, "beta": beta, "k": k},
                  "tensors": {"x": x, "y": y}})


case("size5", (2, 9, 3, 4), 5, 0.5, 0.75, 1.0)
case("size4_even", (1, 7, 4, 3), 4, 0.3, 0.6, 2.0)
case("size3_two_channels", (2, 2, 3, 3), 3, 1.0, 0.75, 1.0)
case("size1", (1, 4, 2, 5), 1, 0.2, 0.5, 1.5)
case("size6_defaults", (2, 12, 2, 2), 6, 1e-4, 0.75, 1.0)

# PyTorch's backward against central differences of its own forward (size 5, 9 channels).
x = torch.randn(1, 9, 2, 2, dtype=torch.float64, requires_grad=True)
layer = torch.nn.CrossMapLRN2d(5, alpha=0.5)
g = torch.randn(1, 9, 2, 2, dtype=torch.float64)
layer(x).backward(g)
numeric = torch.zeros_like(x)
for i in range(x.numel()):
    step = torch.zeros(x.numel(), dtype=torch.float64)
    step[i] = 1e-6
    step = step.view_as(x)
    numeric.view(-1)[i] = ((layer(x.detach() + step) - layer(x.detach() - step)) * g).sum() / 2e-6
print("PyTorch's CrossMapLRN2d backward against finite differences of its forward: max |diff|",
      (numeric - x.grad).abs().max().item())

write("cross_map_lrn2d.json", "make_cross_map_lrn2d.py", cases)
