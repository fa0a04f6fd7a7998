"""PyTorch counterpart of bench/gpu_optim.cpp: step time of torch.optim.Adam(fused=True) (and
foreach AdamW, SGD momentum) on GPT-2 small's parameter list, in the same table format.

    python3 bench/compare/optim_torch.py
"""
import torch

HBM_GBPS = 3350.0
WARMUP, ITERS = 3, 20


def gpt2_small_shapes():
    shapes = [(50257, 768), (1024, 768)]
    for _ in range(12):
        shapes += [(768,), (768,), (768, 2304), (2304,), (768, 768), (768,), (768,), (768,),
                   (768, 3072), (3072,), (3072, 768), (768,)]
    return shapes + [(768,), (768,)]


def time_optimizer(name, make, bytes_per_param):
    params = []
    for s in gpt2_small_shapes():
        p = (torch.randn(s, device="cuda") * 0.02).requires_grad_(True)
        p.grad = torch.randn(s, device="cuda") * 0.01
        params.append(p)
    total = sum(p.numel() for p in params)
    opt = make(params)
    for _ in range(WARMUP):
        opt.step()
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(ITERS):
        opt.step()
    stop.record()
    stop.synchronize()
    ms = start.elapsed_time(stop) / ITERS
    gbps = bytes_per_param * total / ms * 1e-6
    print(f"{name:<22} {total * 1e-6:6.1f}M params {ms:9.3f} ms {gbps:9.1f} GB/s "
          f"{100 * gbps / HBM_GBPS:6.1f}%")


def main():
    if not torch.cuda.is_available():
        print("no CUDA device: skipped")
        return
    print(f"GPT-2 small parameter list, {ITERS} steps after {WARMUP} warm-up (torch {torch.__version__})")
    print(f"{'optimizer':<22} {'params':>13} {'time/step':>12} {'bandwidth':>14} {'of HBM':>7}")
    time_optimizer("torch Adam (fused)", lambda p: torch.optim.Adam(p, lr=1e-3, fused=True), 28.0)
    time_optimizer("torch AdamW (foreach)", lambda p: torch.optim.AdamW(p, lr=1e-3, foreach=True),
                   28.0)
    time_optimizer("torch SGD mom. (foreach)",
                   lambda p: torch.optim.SGD(p, lr=1e-2, momentum=0.9, foreach=True), 20.0)
    try:
        import bitsandbytes as bnb
        time_optimizer("bnb Adam8bit", lambda p: bnb.optim.Adam8bit(p, lr=1e-3), 16.0)
    except ImportError:
        pass


if __name__ == "__main__":
    main()
