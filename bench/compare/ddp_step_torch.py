# PyTorch's side of bench/ddp_step.cpp: the same cnn (tools/train_models.cpp), batch and
# optimizer, trained plain and under torch.nn.parallel.DistributedDataParallel over Gloo on the
# CPU, the three ways interleaved step by step; rank 0 prints the same step table. One rank per
# process, started like the C++ program:
#   bench/run_distributed.sh 2 /usr/bin/python3 bench/compare/ddp_step_torch.py [steps] [batch]
import os
import sys
import time

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F


def make_cnn():
    return nn.Sequential(
        nn.Conv2d(1, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),   # (N, 32, 14, 14)
        nn.Conv2d(32, 64, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),  # (N, 64, 7, 7)
        nn.Flatten(), nn.Linear(64 * 7 * 7, 128), nn.ReLU(), nn.Linear(128, 10))


def main():
    steps = int(sys.argv[1]) if len(sys.argv) > 1 else 30
    batch = int(sys.argv[2]) if len(sys.argv) > 2 else 32
    torch.set_num_threads(int(os.environ.get("OMP_NUM_THREADS", "1")))
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    torch.manual_seed(100 + rank)
    images = torch.randn(batch, 1, 28, 28)
    labels = torch.tensor([(i * 7 + rank) % 10 for i in range(batch)])

    def trainer(ddp, set_to_none):
        torch.manual_seed(7)
        model = make_cnn()
        if ddp:
            # gradient_as_bucket_view: leangrad's gradients are always views of the buckets.
            model = nn.parallel.DistributedDataParallel(model, gradient_as_bucket_view=True)
        return {"model": model, "opt": torch.optim.SGD(model.parameters(), lr=0.01),
                "set_to_none": set_to_none, "step": [], "backward": []}

    trainers = [trainer(False, True), trainer(True, True), trainer(True, False)]
    names = ["plain", "DDP, zero_grad()", "DDP, zero_grad(False)"]
    for i in range(steps + 3):
        for t in trainers:
            start = time.perf_counter()
            t["opt"].zero_grad(set_to_none=t["set_to_none"])
            loss = F.cross_entropy(t["model"](images), labels)
            backward_start = time.perf_counter()
            loss.backward()
            backward_end = time.perf_counter()
            t["opt"].step()
            if i >= 3:
                t["step"].append(time.perf_counter() - start)
                t["backward"].append(backward_end - backward_start)

    if rank == 0:
        def median(v):
            return sorted(v)[len(v) // 2]
        print(f"PyTorch {torch.__version__}, cnn, {dist.get_world_size()} rank(s), batch {batch} "
              f"per rank, {steps} steps (after 3 warm-up), threads {torch.get_num_threads()}")
        plain = median(trainers[0]["step"])
        print(f"\n{'step':<22} {'median (ms)':>12} {'min (ms)':>10} {'backward (ms)':>12} "
              f"{'overhead':>10}")
        for name, t in zip(names, trainers):
            m = median(t["step"])
            print(f"{name:<22} {m * 1e3:12.2f} {min(t['step']) * 1e3:10.2f} "
                  f"{median(t['backward']) * 1e3:12.2f} {(m - plain) / plain * 100:9.1f}%")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
