"""PyTorch's conv2d on the same GPU, shapes and precisions as bench/gpu_conv.cpp, same table.

Forward, input gradient (dgrad) and weight gradient (wgrad) of 3x3 pad-1 convolutions through
torch.nn.grad / torch.ops (cuDNN underneath, cudnn.benchmark off as leangrad's heuristic choice),
timed with CUDA events over 20 runs after 3 warm-up runs. Run with PyTorch 2.x on the GPU machine:
    python bench/compare/conv_torch.py
"""
import torch

WARMUP, TIMED = 3, 20
SHAPES = [("sr_96", 16, 64, 96, 96, 64), ("sr_192", 16, 64, 192, 192, 64),
          ("fmnist_conv1", 64, 1, 28, 28, 32), ("fmnist_conv2", 64, 32, 14, 14, 64)]
PRECISIONS = [("f32", torch.float32, False, 67.0), ("tf32", torch.float32, True, 495.0),
              ("bf16", torch.bfloat16, False, 989.0)]


def time_ms(fn):
    for _ in range(WARMUP):
        fn()
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(TIMED):
        fn()
    stop.record()
    stop.synchronize()
    return start.elapsed_time(stop) / TIMED


def main():
    if not torch.cuda.is_available():
        print("conv_torch: no CUDA device: skipped")
        return
    torch.backends.cudnn.benchmark = False
    print(f"{'shape':<13} {'prec':<5} {'op':<6} {'impl':<7} {'ms':>9} {'TFLOP/s':>9} {'of_H100':>8}")
    for name, n, c_in, h, w, c_out in SHAPES:
        for prec, dtype, tf32, limit in PRECISIONS:
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
                ms = time_ms(fn)
                tflops = flops / (ms * 1e-3) * 1e-12
                print(f"{name:<13} {prec:<5} {op:<6} {'torch':<7} {ms:9.3f} {tflops:9.1f} "
                      f"{100 * tflops / limit:7.1f}%")


if __name__ == "__main__":
    main()
