"""PyTorch reference cases for the layer ops (tests/kernels/test_layers.cpp, suite LayersReference).

Each case holds float32 inputs, the upstream gradient "g", the output "y" and the input gradients
("dx", "dw", "db"). Run with Debian's python3-torch: /usr/bin/python3 tests/data/make_layers.py
"""
import torch
import torch.nn.functional as F

from reference import write
from torch_cases import grad_case, leaf

torch.manual_seed(0)


cases = []
# linear: x (2, 3, 5) @ w (4, 5)^T + b
cases.append(grad_case("linear", {}, {"x": leaf(2, 3, 5), "w": leaf(4, 5), "b": leaf(4)},
                       lambda x, w, b: F.linear(x, w, b)))
cases.append(grad_case("pixel_shuffle", {"r": 2}, {"x": leaf(2, 8, 3, 4)},
                       lambda x: F.pixel_shuffle(x, 2)))
cases.append(grad_case("pixel_unshuffle", {"r": 2}, {"x": leaf(2, 2, 6, 4)},
                       lambda x: F.pixel_unshuffle(x, 2)))
cases.append(grad_case("max_pool2d_k2", {"k": 2, "s": 2, "p": 0}, {"x": leaf(2, 3, 7, 6)},
                       lambda x: F.max_pool2d(x, 2)))
cases.append(grad_case("max_pool2d_k3s1p1", {"k": 3, "s": 1, "p": 1}, {"x": leaf(1, 2, 5, 6)},
                       lambda x: F.max_pool2d(x, 3, 1, 1)))
cases.append(grad_case("avg_pool2d_k3s2p1", {"k": 3, "s": 2, "p": 1}, {"x": leaf(2, 2, 7, 6)},
                       lambda x: F.avg_pool2d(x, 3, 2, 1)))
cases.append(grad_case("softmax_dim1", {"dim": 1}, {"x": leaf(3, 5, 4, low=-4, high=4)},
                       lambda x: F.softmax(x, 1)))
cases.append(grad_case("log_softmax_dim-1", {"dim": -1}, {"x": leaf(3, 5, 4, low=-4, high=4)},
                       lambda x: F.log_softmax(x, -1)))
target = torch.tensor([1, 0, 4, -100, 2, 3], dtype=torch.int64)
for reduction in ["mean", "sum", "none"]:
    cases.append(grad_case("cross_entropy_" + reduction,
                           {"reduction": reduction, "ignore_index": -100},
                           {"x": leaf(6, 5, low=-3, high=3)},
                           lambda x, r=reduction: F.cross_entropy(x, target, reduction=r),
                           {"target": target}))
    cases.append(grad_case("nll_loss_" + reduction, {"reduction": reduction, "ignore_index": -100},
                           {"x": leaf(6, 5, low=-3, high=0)},
                           lambda x, r=reduction: F.nll_loss(x, target, reduction=r),
                           {"target": target}))
    cases.append(grad_case("mse_loss_" + reduction, {"reduction": reduction},
                           {"x": leaf(3, 4), "t": leaf(3, 4)},
                           lambda x, t, r=reduction: F.mse_loss(x, t, reduction=r)))
    cases.append(grad_case("l1_loss_" + reduction, {"reduction": reduction},
                           {"x": leaf(3, 4), "t": leaf(3, 4)},
                           lambda x, t, r=reduction: F.l1_loss(x, t, reduction=r)))

write("layers.json", "make_layers.py", cases)
