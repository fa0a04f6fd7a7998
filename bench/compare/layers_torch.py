#!/usr/bin/env python3
"""PyTorch counterpart of bench/gpu_layers.cpp: the same kernels, shapes and table.

Times each op with CUDA events over rotating input buffers larger than L2 (so every launch reads
from HBM), after warm-up. Columns: ms per call, GB/s of bytes touched (inputs read once, outputs
written once, the same byte counts as gpu_layers), and the fraction of H100 HBM3 (3.35 TB/s).
Run on the GPU machine:  build/bench/gpu_layers && python3 bench/compare/layers_torch.py
"""
import torch
import torch.nn.functional as F

HBM_GBPS = 3350.0
L2_BYTES = 50 * 1024 * 1024
WARMUP, ITERS = 5, 50


def rotating(make, nbytes):
    copies = max(2, (2 * L2_BYTES) // max(nbytes, 1) + 1)
    return [make() for _ in range(copies)]


def time_op(name, make_args, fn, nbytes):
    args = rotating(make_args, nbytes)
    for i in range(WARMUP):
        fn(*args[i % len(args)])
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for i in range(ITERS):
        fn(*args[i % len(args)])
    end.record()
    torch.cuda.synchronize()
    ms = start.elapsed_time(end) / ITERS
    gbps = nbytes / ms * 1e-6
    print(f"{name:<44} {ms:9.4f} ms {gbps:9.1f} GB/s {gbps / HBM_GBPS:7.1%}")


def main():
    if not torch.cuda.is_available():
        print("no CUDA device: skipped")
        return
    dev = "cuda"
    print(f"{'kernel':<44} {'time':>12} {'bandwidth':>14} {'of HBM':>7}")
    for n, c in [(64, 10), (256, 1000), (4096, 32000)]:
        nb = n * c * 4
        time_op(f"cross_entropy fwd ({n}, {c})",
                lambda: (torch.randn(n, c, device=dev), torch.randint(0, c, (n,), device=dev)),
                lambda x, t: F.cross_entropy(x, t, reduction="none"), nb)
        x0 = torch.randn(n, c, device=dev, requires_grad=True)
        t0 = torch.randint(0, c, (n,), device=dev)
        time_op(f"cross_entropy fwd+bwd ({n}, {c})", lambda: (x0, t0),
                lambda x, t: torch.autograd.grad(F.cross_entropy(x, t), x), 3 * nb)
    for shape in [(64, 32, 28, 28), (64, 64, 14, 14)]:
        numel = shape[0] * shape[1] * shape[2] * shape[3]
        time_op(f"max_pool2d k2 {shape}", lambda: (torch.randn(*shape, device=dev),),
                lambda x: F.max_pool2d_with_indices(x, 2), numel * (4 + 1 + 2))
        time_op(f"avg_pool2d k2 {shape}", lambda: (torch.randn(*shape, device=dev),),
                lambda x: F.avg_pool2d(x, 2), numel * 5)
    shape = (16, 256, 96, 96)
    numel = 16 * 256 * 96 * 96
    time_op(f"pixel_shuffle r2 {shape}", lambda: (torch.randn(*shape, device=dev),),
            lambda x: F.pixel_shuffle(x, 2), numel * 8)
    time_op(f"dropout p0.5 {shape}", lambda: (torch.randn(*shape, device=dev),),
            lambda x: torch.native_dropout(x, 0.5, True), numel * 9)
    time_op("softmax (4096, 32000) dim -1", lambda: (torch.randn(4096, 32000, device=dev),),
            lambda x: F.softmax(x, -1), 4096 * 32000 * 8)
    time_op("linear 3136->128 batch 64",
            lambda: (torch.randn(64, 3136, device=dev), torch.randn(128, 3136, device=dev),
                     torch.randn(128, device=dev)),
            F.linear, (64 * 3136 + 128 * 3136 + 64 * 128) * 4)


if __name__ == "__main__":
    torch.backends.cuda.matmul.allow_tf32 = False
    main()
