"""PyTorch reference data for TanhExp and GroupNorm (tests/kernels/test_tanhexp.cpp,
tests/kernels/test_group_norm.cpp). Run: /usr/bin/python3 tests/data/make_tanhexp_group_norm.py

TanhExp has no PyTorch op: it is written with the stable formula x * tanh(exp(min(x, 20)))
(tanh(e^20) == 1 in float64, so the clamp changes nothing) and its gradient comes from autograd.
The bfloat16 case is computed in float64 from the bfloat16 input and rounded once, as leangrad
computes 16-bit floats (in float, one rounding). GroupNorm is torch.nn.functional.group_norm,
with the gradients of x, weight and bias for a given upstream gradient g.
"""
import torch

from reference import write


def tanhexp(x):
    return x * torch.tanh(torch.exp(torch.clamp(x, max=20.0)))


def tanhexp_case(name, x, dtype):
    x64 = x.to(dtype).to(torch.float64).requires_grad_()
    g = torch.linspace(-1.5, 2.0, x.numel(), dtype=torch.float64).reshape(x.shape).to(dtype)
    y = tanhexp(x64)
    y.backward(g.to(torch.float64))
    return {"name": name, "params": {},
            "tensors": {"x": x64.detach().to(dtype), "g": g, "y": y.detach().to(dtype),
                        "dx": x64.grad.to(dtype)}}


def tanhexp_f32_case():
    # float32 all the way, as a user would write it in torch.
    x = torch.tensor([-1e4, -100.0, -20.0, -3.5, -1.0, -0.25, 0.0, 0.3, 1.0, 2.5, 4.0, 20.0,
                      88.0, 89.0, 1e4], dtype=torch.float32, requires_grad=True)
    g = torch.linspace(-1.5, 2.0, x.numel(), dtype=torch.float32)
    y = tanhexp(x)
    y.backward(g)
    return {"name": "tanhexp_f32", "params": {},
            "tensors": {"x": x.detach(), "g": g, "y": y.detach(), "dx": x.grad}}


def group_norm_case(name, shape, groups, affine, dtype=torch.float32, eps=1e-5):
    x = (torch.randn(shape, dtype=torch.float64) * 2.0 + 0.5).to(dtype).requires_grad_()
    channels = shape[1]
    tensors = {}
    w = b = None
    if affine:
        w = (torch.rand(channels, dtype=torch.float64) + 0.5).to(dtype).requires_grad_()
        b = torch.randn(channels, dtype=torch.float64).to(dtype).requires_grad_()
    y = torch.nn.functional.group_norm(x, groups, w, b, eps)
    g = torch.randn(shape, dtype=torch.float64).to(dtype)
    y.backward(g)
    tensors.update({"x": x.detach(), "g": g, "y": y.detach(), "dx": x.grad})
    if affine:
        tensors.update({"weight": w.detach(), "bias": b.detach(), "dweight": w.grad,
                        "dbias": b.grad})
    return {"name": name, "params": {"num_groups": groups, "eps": eps, "affine": affine},
            "tensors": tensors}


def main():
    torch.manual_seed(0)
    wide = torch.tensor([-1e4, -100.0, -20.0, -2.0, -0.5, 0.0, 0.5, 1.5, 3.0, 20.0, 88.0, 89.0])
    cases = [
        tanhexp_f32_case(),
        tanhexp_case("tanhexp_bf16", wide, torch.bfloat16),
        group_norm_case("group_norm_2d_affine", (2, 6, 5, 4), 3, True),
        group_norm_case("group_norm_1d_no_affine", (3, 4, 7), 2, False),
        group_norm_case("group_norm_one_group_eps", (2, 5, 3, 3), 1, True, eps=1e-3),
    ]
    write("tanhexp_group_norm.json", "make_tanhexp_group_norm.py", cases)


if __name__ == "__main__":
    main()
