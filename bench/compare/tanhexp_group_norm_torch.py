#!/usr/bin/env python3
"""PyTorch counterpart of bench/gpu_tanhexp_group_norm.cpp: same kernels, same shapes, same table.

Rows: TanhExp forward and backward, eager (x * tanh(exp(x)), the composed formula: 3 kernels
forward, several backward) and torch.compile (one fused Triton kernel each way), on 2^24
elements in float32 and bfloat16; GroupNorm forward (F.group_norm) and backward
(torch.ops.aten.native_group_norm_backward with the saved mean/rstd, the kernel autograd runs)
at the shapes of the leangrad program. Timed with CUDA events over 20 calls after 3 warm-up
calls, rotating through 4 input sets (each larger than L2). GB/s counts the bytes the op must
move at least, as the C++ program does; "of HBM" is that over H100 HBM3's 3.35 TB/s.
Run both on the GPU machine:
  build/bench/gpu_tanhexp_group_norm && python3 bench/compare/tanhexp_group_norm_torch.py
"""
import torch
import torch.nn.functional as F

WARMUP_ITERS = 3
TIMED_ITERS = 20
BUFFERS = 4
HBM_BYTES_PER_SECOND = 3.35e12


def time_row(name, nbytes, fn):
    for i in range(WARMUP_ITERS):
        fn(i % BUFFERS)
    torch.cuda.synchronize()
    start = torch.cuda.Event(enable_timing=True)
    end = torch.cuda.Event(enable_timing=True)
    start.record()
    for i in range(TIMED_ITERS):
        fn(i % BUFFERS)
    end.record()
    end.synchronize()
    us = start.elapsed_time(end) * 1e3 / TIMED_ITERS
    gbps = nbytes / (us * 1e-6) / 1e9
    print(f"{name:<44} {us:10.1f} {gbps:10.1f} {gbps * 1e9 / HBM_BYTES_PER_SECOND:9.3f}")


def tanhexp_eager(x):
    return x * torch.tanh(torch.exp(x))


def tanhexp_grad(f, x, dy):
    x = x.detach().requires_grad_()
    (g,) = torch.autograd.grad(f(x), x, dy)
    return g


def tanhexp_rows(n, dtype):
    xs = [torch.randn(n, device="cuda", dtype=dtype) for _ in range(BUFFERS)]
    dys = [torch.randn(n, device="cuda", dtype=dtype) for _ in range(BUFFERS)]
    size = xs[0].element_size()
    tag = f"{str(dtype).replace('torch.', '')} n={n}"
    compiled = torch.compile(tanhexp_eager)
    for label, f in (("eager", tanhexp_eager), ("compile", compiled)):
        time_row(f"tanhexp fwd {label} {tag}", 2 * n * size, lambda i: f(xs[i]))
        time_row(f"tanhexp bwd {label} {tag}", 3 * n * size,
                 lambda i: tanhexp_grad(f, xs[i], dys[i]))


def group_norm_rows(shape, groups, dtype):
    xs = [torch.randn(shape, device="cuda", dtype=dtype) for _ in range(BUFFERS)]
    dys = [torch.randn(shape, device="cuda", dtype=dtype) for _ in range(BUFFERS)]
    w = torch.rand(shape[1], device="cuda", dtype=dtype)
    b = torch.randn(shape[1], device="cuda", dtype=dtype)
    numel = xs[0].numel()
    size = xs[0].element_size()
    n, c = shape[0], shape[1]
    hw = numel // (n * c)
    tag = f"{str(dtype).replace('torch.', '')} ({','.join(map(str, shape))}) G={groups}"
    time_row(f"group_norm fwd {tag}", 3 * numel * size,
             lambda i: F.group_norm(xs[i], groups, w, b, 1e-5))
    saved = [torch.ops.aten.native_group_norm(x, w, b, n, c, hw, groups, 1e-5) for x in xs]
    time_row(f"group_norm bwd {tag}", 5 * numel * size,
             lambda i: torch.ops.aten.native_group_norm_backward(
                 dys[i], xs[i], saved[i][1], saved[i][2], w, n, c, hw, groups,
                 [True, True, True]))


def main():
    if not torch.cuda.is_available():
        print("no CUDA device: skipped")
        return
    print(f"{'kernel':<44} {'us':>10} {'GB/s':>10} {'of HBM':>9}")
    tanhexp_rows(1 << 24, torch.float32)
    tanhexp_rows(1 << 24, torch.bfloat16)
    for shape, groups in (((16, 128, 64, 64), 32), ((2, 64, 256, 256), 4),
                          ((256, 512, 8, 8), 32)):
        group_norm_rows(shape, groups, torch.float32)
    group_norm_rows((16, 128, 64, 64), 32, torch.bfloat16)


if __name__ == "__main__":
    main()
