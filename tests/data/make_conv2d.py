"""PyTorch reference data for conv2d (tests/data/conv2d.json), read by tests/kernels/test_conv.cpp.

Each case: input x, weight w, bias b (absent for no-bias cases), an upstream gradient grad_y,
the forward output y and the three gradients dx, dw, db, all float32. Run with /usr/bin/python3.
"""
import torch

import reference

CASES = [
    # name, x shape, w shape, bias, stride, padding, dilation, groups
    ("stride2_pad1", (2, 3, 9, 8), (4, 3, 3, 3), True, (2, 2), (1, 1), (1, 1), 1),
    ("dilation2", (1, 4, 10, 11), (5, 4, 3, 3), True, (1, 1), (2, 1), (2, 2), 1),
    ("groups2", (2, 6, 7, 7), (4, 3, 3, 3), True, (1, 1), (1, 1), (1, 1), 2),
    ("depthwise_nobias", (2, 4, 6, 5), (4, 1, 3, 3), False, (1, 2), (1, 0), (1, 1), 4),
    ("k7_stride3", (1, 3, 16, 13), (2, 3, 7, 7), True, (3, 3), (3, 2), (1, 1), 1),
]


def main():
    torch.manual_seed(0)
    cases = []
    for name, xs, ws, has_bias, stride, padding, dilation, groups in CASES:
        x = torch.rand(xs, dtype=torch.float32) * 2 - 1
        w = torch.rand(ws, dtype=torch.float32) * 2 - 1
        b = torch.rand(ws[0], dtype=torch.float32) * 2 - 1 if has_bias else None
        x.requires_grad_(True)
        w.requires_grad_(True)
        if b is not None:
            b.requires_grad_(True)
        y = torch.nn.functional.conv2d(x, w, b, stride, padding, dilation, groups)
        grad_y = torch.rand(y.shape, dtype=torch.float32) * 2 - 1
        y.backward(grad_y)
        tensors = {"x": x, "w": w, "grad_y": grad_y, "y": y, "dx": x.grad, "dw": w.grad}
        if b is not None:
            tensors["b"] = b
            tensors["db"] = b.grad
        cases.append({
            "name": name,
            "params": {"stride": list(stride), "padding": list(padding),
                       "dilation": list(dilation), "groups": groups},
            "tensors": tensors,
        })
    reference.write("conv2d.json", "make_conv2d.py", cases)


if __name__ == "__main__":
    main()
