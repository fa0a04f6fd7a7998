#!/usr/bin/env python3
"""PyTorch counterpart of bench/gpu_optim.cpp: step time of torch.optim.Adam(fused=True) (and
foreach AdamW, SGD momentum, bitsandbytes' Adam8bit when installed) on GPT-2 small's parameter
list. Rows are named as gpu_optim's (the note names PyTorch's optimizer) and timed as the harness
does (compare/gpu_table.py); GB/s uses the same bytes per parameter.

    build/bench/gpu_optim && python3 bench/compare/optim_torch.py
"""
import torch

from gpu_table import GpuTable


def gpt2_small_shapes():
    shapes = [(50257, 768), (1024, 768)]
    for _ in range(12):
        shapes += [(768,), (768,), (768, 2304), (2304,), (768, 768), (768,), (768,), (768,),
                   (768, 3072), (3072,), (3072, 768), (768,)]
    return shapes + [(768,), (768,)]


def optimizer_row(bench, name, make, bytes_per_param, note):
    params = []
    for s in gpt2_small_shapes():
        p = (torch.randn(s, device="cuda") * 0.02).requires_grad_(True)
        p.grad = torch.randn(s, device="cuda") * 0.01
        params.append(p)
    total = sum(p.numel() for p in params)
    opt = make(params)
    bench.run(name, opt.step, bytes_=bytes_per_param * total,
              note=f"{total * 1e-6:.1f}M params, {note}")


def main():
    if not torch.cuda.is_available():
        print("no CUDA device: skipped")
        return
    bench = GpuTable("optim_torch")
    bench.note("GPT-2 small parameter list (124M parameters in their real shapes), one step per run")
    optimizer_row(bench, "Adam (fused)", lambda p: torch.optim.Adam(p, lr=1e-3, fused=True), 28.0,
                  "torch Adam(fused=True)")
    optimizer_row(bench, "AdamW (fused)", lambda p: torch.optim.AdamW(p, lr=1e-3, foreach=True),
                  28.0, "torch AdamW(foreach=True)")
    optimizer_row(bench, "SGD momentum (fused)",
                  lambda p: torch.optim.SGD(p, lr=1e-2, momentum=0.9, foreach=True), 20.0,
                  "torch SGD(foreach=True)")
    try:
        import bitsandbytes as bnb
        optimizer_row(bench, "Adam8bit (fused)", lambda p: bnb.optim.Adam8bit(p, lr=1e-3), 16.0,
                      "bitsandbytes Adam8bit")
    except ImportError:
        pass
    bench.finish()


if __name__ == "__main__":
    main()
