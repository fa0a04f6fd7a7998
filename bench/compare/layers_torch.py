#!/usr/bin/env python3
"""PyTorch counterpart of bench/gpu_layers.cpp: the same kernels, shapes, rows and table.

Each row is named as the leangrad row it compares with (the note names PyTorch's function) and
timed as the harness does (compare/gpu_table.py: L2 flushed before each run, CUDA events, median
and min); GB/s counts the bytes touched (inputs read once, outputs written once, the same byte
counts as gpu_layers). Run on the GPU machine:
  build/bench/gpu_layers && python3 bench/compare/layers_torch.py
"""
import torch
import torch.nn.functional as F

from gpu_table import GpuTable


def main():
    if not torch.cuda.is_available():
        print("no CUDA device: skipped")
        return
    bench = GpuTable("layers_torch")
    dev = "cuda"
    for n, c in [(64, 10), (256, 1000), (4096, 32000)]:
        nb = n * c * 4
        x = torch.randn(n, c, device=dev)
        t = torch.randint(0, c, (n,), device=dev)
        bench.run(f"cross_entropy fwd {(n, c)}", lambda: F.cross_entropy(x, t, reduction="none"),
                  bytes_=nb, note="torch F.cross_entropy")
        xg = x.clone().requires_grad_()
        bench.run(f"cross_entropy fwd+bwd {(n, c)}",
                  lambda: torch.autograd.grad(F.cross_entropy(xg, t), xg), bytes_=3 * nb,
                  note="torch F.cross_entropy + autograd")
    for shape in [(64, 32, 28, 28), (64, 64, 14, 14)]:
        numel = shape[0] * shape[1] * shape[2] * shape[3]
        x = torch.randn(*shape, device=dev)
        bench.run(f"max_pool2d k2 {shape}", lambda: F.max_pool2d_with_indices(x, 2),
                  bytes_=numel * (4 + 1 + 2), note="torch F.max_pool2d_with_indices")
        bench.run(f"avg_pool2d k2 {shape}", lambda: F.avg_pool2d(x, 2), bytes_=numel * 5,
                  note="torch F.avg_pool2d")
    shape = (16, 256, 96, 96)
    numel = 16 * 256 * 96 * 96
    x = torch.randn(*shape, device=dev)
    bench.run(f"pixel_shuffle r2 {shape}", lambda: F.pixel_shuffle(x, 2), bytes_=numel * 8,
              note="torch F.pixel_shuffle")
    bench.run(f"dropout p0.5 {shape}", lambda: torch.native_dropout(x, 0.5, True),
              bytes_=numel * 9, note="torch native_dropout")
    x = torch.randn(4096, 32000, device=dev)
    bench.run("softmax (4096, 32000) dim -1", lambda: F.softmax(x, -1), bytes_=4096 * 32000 * 8,
              note="torch F.softmax")
    for shape in [(8192, 1024), (4096, 4096)]:
        nb = shape[0] * shape[1] * 4
        x = torch.randn(*shape, device=dev)
        w, b = torch.randn(shape[1], device=dev), torch.randn(shape[1], device=dev)
        bench.run(f"layer_norm fwd {shape}", lambda: F.layer_norm(x, shape[1:], w, b, 1e-5),
                  bytes_=2 * nb, note="torch F.layer_norm")
        xg, wg, bg = (t.clone().requires_grad_() for t in (x, w, b))
        dy = torch.randn(*shape, device=dev)
        bench.run(f"layer_norm fwd+bwd {shape}",
                  lambda: torch.autograd.grad(F.layer_norm(xg, shape[1:], wg, bg, 1e-5),
                                              (xg, wg, bg), dy),
                  bytes_=5 * nb, note="torch F.layer_norm + autograd")
    for shape in [(32, 256, 56, 56), (4096, 4096)]:
        nb = 4
        for d in shape:
            nb *= d
        x = torch.randn(*shape, device=dev)
        w, b = torch.randn(shape[1], device=dev), torch.randn(shape[1], device=dev)
        bench.run(f"batch_norm fwd {shape}",
                  lambda: F.batch_norm(x, None, None, w, b, training=True, eps=1e-5),
                  bytes_=3 * nb, note="torch F.batch_norm, training")
        xg, wg, bg = (t.clone().requires_grad_() for t in (x, w, b))
        dy = torch.randn(*shape, device=dev)
        bench.run(f"batch_norm fwd+bwd {shape}",
                  lambda: torch.autograd.grad(
                      F.batch_norm(xg, None, None, wg, bg, training=True, eps=1e-5),
                      (xg, wg, bg), dy),
                  bytes_=8 * nb, note="torch F.batch_norm + autograd")
    a, w, b = (torch.randn(64, 3136, device=dev), torch.randn(128, 3136, device=dev),
               torch.randn(128, device=dev))
    bench.run("linear 3136->128 batch 64", lambda: F.linear(a, w, b),
              bytes_=(64 * 3136 + 128 * 3136 + 64 * 128) * 4, note="torch F.linear")
    bench.finish()


if __name__ == "__main__":
    torch.backends.cuda.matmul.allow_tf32 = False
    main()
