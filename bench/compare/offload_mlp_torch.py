#!/usr/bin/env python3
"""PyTorch counterpart of bench/offload_mlp.cpp: same MLP, same step, same table.

An MLP of 24 layers (x @ W + b, then tanh; W is (4096, 4096)), batch 256, float32 with TF32 off;
one step = forward, sum, backward (no optimizer), gradients set to None first. Modes:
  plain                    autograd as is
  save_on_cpu              torch.autograd.graph.save_on_cpu(pin_memory=True): every saved tensor,
                           the weights included, copied to pinned memory (synchronously) and back
  save_on_cpu_keep_params  the same hooks, but parameters are saved as they are
  checkpoint               torch.utils.checkpoint.checkpoint around each layer (use_reentrant=False)
Timed as the harness does (compare/gpu_table.py; no L2 flush: a step moves gigabytes). The note
column: peak MiB is torch.cuda.max_memory_allocated over the steps; activations MiB is
memory_allocated after the forward minus before it. The check is the largest gradient difference
from plain (0: bitwise equal).
Run both on the GPU machine:  build/bench/offload_mlp && python3 bench/compare/offload_mlp_torch.py
"""
import math

import torch
import torch.utils.checkpoint

from gpu_table import GpuTable

LAYERS = 24
WIDTH = 4096
BATCH = 256
TOLERANCE = 1e-6  # on max |dgrad| / max |grad|, as offload_mlp.cpp
MIB = 1024.0 * 1024.0


class Mlp:
    def __init__(self, device):
        torch.manual_seed(0)
        scale = 1.0 / math.sqrt(WIDTH)
        self.weights = [(torch.randn(WIDTH, WIDTH) * scale).to(device).requires_grad_()
                        for _ in range(LAYERS)]
        self.biases = [torch.zeros(WIDTH, device=device).requires_grad_() for _ in range(LAYERS)]

    def layer(self, i, x):  # (B, width) -> (B, width)
        return torch.tanh(x @ self.weights[i] + self.biases[i])

    def parameters(self):
        return self.weights + self.biases


def save_on_cpu_keeping(params):
    """save_on_cpu's pack/unpack, but the given parameters are saved as they are."""
    kept = {p.data_ptr() for p in params}

    def pack(t):
        if t.data_ptr() in kept or not t.is_cuda:
            return (None, t)
        host = torch.empty(t.size(), dtype=t.dtype, layout=t.layout, pin_memory=True)
        host.copy_(t)
        return (t.device, host)

    def unpack(packed):
        device, t = packed
        return t if device is None else t.to(device, non_blocking=True)

    return torch.autograd.graph.saved_tensors_hooks(pack, unpack)


def forward_loss(mlp, x, mode):
    if mode == "checkpoint":
        for i in range(LAYERS):
            x = torch.utils.checkpoint.checkpoint(mlp.layer, i, x, use_reentrant=False)
        return x.sum()
    for i in range(LAYERS):
        x = mlp.layer(i, x)
    return x.sum()


def step(mlp, x, mode):
    """One step; returns the bytes the forward allocated and still holds at its end."""
    for p in mlp.parameters():
        p.grad = None
    before = torch.cuda.memory_allocated()
    if mode == "save_on_cpu":
        with torch.autograd.graph.save_on_cpu(pin_memory=True):
            loss = forward_loss(mlp, x, mode)
    elif mode == "save_on_cpu_keep_params":
        with save_on_cpu_keeping(mlp.parameters()):
            loss = forward_loss(mlp, x, mode)
    else:
        loss = forward_loss(mlp, x, mode)
    resident = torch.cuda.memory_allocated() - before
    loss.backward()
    return resident


def gradients(mlp):
    return [p.grad.clone() for p in mlp.parameters()]


def main():
    if not torch.cuda.is_available():
        print("no CUDA device: skipped")
        return
    torch.backends.cuda.matmul.allow_tf32 = False
    device = torch.device("cuda")
    mlp = Mlp(device)
    torch.manual_seed(1)
    x = torch.randn(BATCH, WIDTH).to(device)

    step(mlp, x, "plain")
    reference = gradients(mlp)

    bench = GpuTable("offload_mlp_torch")
    bench.note(f"MLP {LAYERS} x {WIDTH}, batch {BATCH}, float32 (TF32 off); one row = one "
               "training step (forward, sum, backward), L2 not flushed")
    for mode in ("plain", "save_on_cpu", "save_on_cpu_keep_params", "checkpoint"):
        step(mlp, x, mode)
        grads = gradients(mlp)
        check = (max((g - r).abs().max().item() for g, r in zip(grads, reference)),
                 max(r.abs().max().item() for r in reference), TOLERANCE)
        # Peak over the warm-up and timed steps: every step allocates the same.
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
        resident = [0]

        def one_step():
            resident[0] = step(mlp, x, mode)

        median, minimum = bench.time(one_step, flush_l2=False)
        peak_mib = torch.cuda.max_memory_allocated() / MIB
        bench.add_row(mode, median, minimum, check=check,
                      note=f"peak {peak_mib:.1f} MiB, activations {resident[0] / MIB:.1f} MiB")
    bench.finish()


if __name__ == "__main__":
    main()
