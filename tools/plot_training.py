#!/usr/bin/env python3
"""Draws the training curves of leangrad-train --log-jsonl files to a PNG: the loss of every
optimizer step (faint) with its moving average, and the test accuracy (or PSNR for srnet) at the
end of each epoch. Several files are drawn on the same axes, one colour each, to compare runs.

    leangrad-train --model cnn --epochs 3 --log-jsonl cnn.jsonl
    python3 tools/plot_training.py cnn.jsonl mlp.jsonl -o curves.png

Needs matplotlib (Debian: python3-matplotlib, installed by tools/bootstrap.sh).
"""
import argparse
import json
import sys

import matplotlib

matplotlib.use("Agg")  # no display needed
import matplotlib.pyplot as plt  # noqa: E402


def read_jsonl(path):
    steps, epochs = [], []
    with open(path) as f:
        for number, line in enumerate(f, 1):
            line = line.strip()
            if not line:
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError as e:
                sys.exit(f"plot_training: {path}:{number}: not a JSON line ({e})")
            (epochs if record.get("event") == "epoch" else steps).append(record)
    return steps, epochs


def moving_average(values, window):
    out, total = [], 0.0
    for i, v in enumerate(values):
        total += v
        if i >= window:
            total -= values[i - window]
        out.append(total / min(i + 1, window))
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("logs", nargs="+", help="--log-jsonl files of leangrad-train")
    parser.add_argument("-o", "--output", default="training.png", help="the PNG to write")
    parser.add_argument("--window", type=int, default=50, help="steps in the moving average")
    args = parser.parse_args()

    figure, (loss_axes, score_axes) = plt.subplots(1, 2, figsize=(12, 4.5))
    score_name = None
    for index, path in enumerate(args.logs):
        steps, epochs = read_jsonl(path)
        if not steps:
            sys.exit(f"plot_training: {path} has no step lines")
        colour = f"C{index}"
        x = [s["step"] for s in steps]
        loss = [s["loss"] for s in steps]
        loss_axes.plot(x, loss, color=colour, alpha=0.2, linewidth=0.8)
        loss_axes.plot(x, moving_average(loss, args.window), color=colour, label=path)
        for e in epochs:
            name = "accuracy" if "accuracy" in e else "psnr_db"
            score_name = score_name or name
        if epochs and score_name:
            scores = [e[score_name] * (100 if score_name == "accuracy" else 1) for e in epochs]
            score_axes.plot([e["step"] for e in epochs], scores, "o-", color=colour, label=path)
    loss_axes.set_xlabel("optimizer step")
    loss_axes.set_ylabel(f"training loss (moving average of {args.window} steps)")
    loss_axes.set_yscale("log")
    loss_axes.legend()
    loss_axes.grid(alpha=0.3)
    score_axes.set_xlabel("optimizer step (end of epoch)")
    score_axes.set_ylabel("test accuracy (%)" if score_name == "accuracy" else "test PSNR (dB)")
    score_axes.grid(alpha=0.3)
    if score_name:
        score_axes.legend()
    else:
        score_axes.text(0.5, 0.5, "no finished epoch yet", ha="center", transform=score_axes.transAxes)
    figure.tight_layout()
    figure.savefig(args.output, dpi=120)
    print(f"plot_training: wrote {args.output}")


if __name__ == "__main__":
    main()
