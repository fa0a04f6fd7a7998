#!/usr/bin/env python3
"""PyTorch's conv2d on the same GPU, shapes and precisions as bench/gpu_conv.cpp, same table.

Forward, input gradient (dgrad) and weight gradient (wgrad) of 3x3 pad-1 convolutions through
torch.nn.grad / torch.ops (cuDNN underneath, cudnn.benchmark off as leangrad's heuristic choice).
Rows are named as gpu_conv's with the implementation "torch" last (gpu_conv: "ours", "cudnn");
timed as the harness does (compare/gpu_table.py: L2 flushed before each run, CUDA events, median
and min). Run with PyTorch 2.x on the GPU machine:
    build/bench/gpu_conv && python3 bench/compare/conv_torch.py
"""
import torch

from gpu_table import GpuTable

SHAPES = [("sr_96", 16, 64, 96, 96, 64), ("sr_192", 16, 64, 192, 192, 64),
          ("fmnist_conv1", 64, 1, 28, 28, 32), ("fmnist_conv2", 64, 32, 14, 14, 64)]
PRECISIONS = [("f32", torch.float32, False), ("tf32", torch.float32, True),
              ("bf16", torch.bfloat16, False)]


def main():
    if not torch.cuda.is_available():
        print("no CUDA device: skipped")
        return
    torch.backends.cudnn.benchmark = False
    bench = GpuTable("conv_torch")
    bench.note("3x3 pad-1 conv2d; torch = torch.nn.functional.conv2d / torch.nn.grad (cuDNN)")
    for name, n, c_in, h, w, c_out in SHAPES:
        for prec, dtype, tf32 in PRECISIONS:
            torch.backends.cuda.matmul.allow_tf32 = tf32
            torch.backends.cudnn.allow_tf32 = tf32
            x = torch.randn(n, c_in, h, w, device="cuda", dtype=dtype)
            wt = torch.randn(c_out, c_in, 3, 3, device="cuda", dtype=dtype) * 0.1
            dy = torch.randn(n, c_out, h, w, device="cuda", dtype=dtype)
            flops = 2.0 * n * c_out * h * w * c_in * 9
            fns = {
                "fwd": lambda: torch.nn.functional.conv2d(x, wt, None, 1, 1),
                "dgrad": lambda: torch.nn.grad.conv2d_input(x.shape, wt, dy, 1, 1),
                "wgrad": lambda: torch.nn.grad.conv2d_weight(x, wt.shape, dy, 1, 1),
            }
            for op, fn in fns.items():
                bench.run(f"{name} {prec} {op} torch", fn, flops=flops, precision=prec)
    bench.finish()


if __name__ == "__main__":
    main()
