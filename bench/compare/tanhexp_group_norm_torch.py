#!/usr/bin/env python3
"""PyTorch counterpart of bench/gpu_tanhexp_group_norm.cpp: same shapes, same rows, same table.

Rows (named as the leangrad rows they compare with; the note names PyTorch's implementation):
TanhExp forward and backward, eager (x * tanh(exp(x)), the composed formula: 3 kernels forward,
several backward) and torch.compile (one fused Triton kernel each way), on 2^24 elements in
float32 and bfloat16; GroupNorm forward (F.group_norm) and backward
(torch.ops.aten.native_group_norm_backward with the saved mean/rstd, the kernel autograd runs)
at the shapes of the leangrad program. Timed as the harness does (compare/gpu_table.py: L2
flushed before each run, CUDA events, median and min); GB/s counts the bytes the op must move at
least, as the C++ program does. Run both on the GPU machine:
  build/bench/gpu_tanhexp_group_norm && python3 bench/compare/tanhexp_group_norm_torch.py
"""
import torch
import torch.nn.functional as F

from gpu_table import GpuTable


def tanhexp_eager(x):
    return x * torch.tanh(torch.exp(x))


def tanhexp_grad(f, x, dy):
    x = x.detach().requires_grad_()
    (g,) = torch.autograd.grad(f(x), x, dy)
    return g


def tanhexp_rows(bench, n, dtype):
    x = torch.randn(n, device="cuda", dtype=dtype)
    dy = torch.randn(n, device="cuda", dtype=dtype)
    size = x.element_size()
    tag = f"{str(dtype).replace('torch.', '')} n={n}"
    compiled = torch.compile(tanhexp_eager)
    for label, f in (("torch eager", tanhexp_eager), ("torch.compile", compiled)):
        bench.run(f"tanhexp fwd {tag}", lambda: f(x), bytes_=2 * n * size, note=label)
        bench.run(f"tanhexp bwd {tag}", lambda: tanhexp_grad(f, x, dy), bytes_=3 * n * size,
                  note=label)


def group_norm_rows(bench, shape, groups, dtype):
    x = torch.randn(shape, device="cuda", dtype=dtype)
    dy = torch.randn(shape, device="cuda", dtype=dtype)
    w = torch.rand(shape[1], device="cuda", dtype=dtype)
    b = torch.randn(shape[1], device="cuda", dtype=dtype)
    nbytes = x.numel() * x.element_size()
    n, c = shape[0], shape[1]
    hw = x.numel() // (n * c)
    tag = f"{str(dtype).replace('torch.', '')} {tuple(shape)} G={groups}"
    bench.run(f"group_norm fwd {tag}", lambda: F.group_norm(x, groups, w, b, 1e-5),
              bytes_=3 * nbytes, note="torch F.group_norm")
    _, mean, rstd = torch.ops.aten.native_group_norm(x, w, b, n, c, hw, groups, 1e-5)
    bench.run(f"group_norm bwd {tag}",
              lambda: torch.ops.aten.native_group_norm_backward(
                  dy, x, mean, rstd, w, n, c, hw, groups, [True, True, True]),
              bytes_=5 * nbytes, note="torch native_group_norm_backward")


def main():
    if not torch.cuda.is_available():
        print("no CUDA device: skipped")
        return
    bench = GpuTable("tanhexp_group_norm_torch")
    tanhexp_rows(bench, 1 << 24, torch.float32)
    tanhexp_rows(bench, 1 << 24, torch.bfloat16)
    for shape, groups in (((16, 128, 64, 64), 32), ((2, 64, 256, 256), 4),
                          ((256, 512, 8, 8), 32)):
        group_norm_rows(bench, shape, groups, torch.float32)
    group_norm_rows(bench, (16, 128, 64, 64), 32, torch.bfloat16)
    bench.finish()


if __name__ == "__main__":
    main()
