#!/usr/bin/env python3
"""Draws the training curves of leangrad-train --log-jsonl files to a PNG: the loss of every
optimizer step (faint) with its moving average, and the test accuracy (or PSNR for srnet) at the
end of each epoch. Several files are drawn on the same axes, one colour each, to compare runs.

    leangrad-train --model cnn --epochs 3 --log-jsonl cnn.jsonl
    python3 tools/plot_training.py cnn.jsonl mlp.jsonl -o curves.png

Needs matplotlib (Debian: python3-matplotlib, installed by tools/bootstrap.sh).
"""
import argparse
import collections
import json
import math
import sys

import matplotlib

matplotlib.use("Agg")  # no display needed
import matplotlib.pyplot as plt  # noqa: E402


def number(value):
    """A logged loss or score as a float: leangrad-train writes a value that is not finite (a
    diverged run's NaN or infinity) as null, which JSON has in their place; it becomes NaN, a gap
    in the curve."""
    return float(value) if isinstance(value, (int, float)) else math.nan


def read_jsonl(path):
    steps, epochs = [], []
    with open(path) as f:
        for line_number, line in enumerate(f, 1):
            line = line.strip()
            if not line:
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError as e:
                sys.exit(f"plot_training: {path}:{line_number}: not a JSON line ({e})")
            if not isinstance(record, dict) or "step" not in record:
                sys.exit(f"plot_training: {path}:{line_number}: not a record of leangrad-train "
                         '--log-jsonl (an object with a "step")')
            (epochs if record.get("event") == "epoch" else steps).append(record)
    return steps, epochs


def moving_average(values, window):
    """The mean of the finite values among the last `window` (fewer at the start); NaN where
    there are none, so a stretch of NaN losses is a gap and the average resumes after it."""
    out, recent = [], collections.deque()
    total, count = 0.0, 0
    for v in values:
        recent.append(v)
        if math.isfinite(v):
            total += v
            count += 1
        if len(recent) > window:
            old = recent.popleft()
            if math.isfinite(old):
                total -= old
                count -= 1
        out.append(total / count if count else math.nan)
    return out


def positive_int(text):
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected an integer >= 1, got {text}")
    return value


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("logs", nargs="+", help="--log-jsonl files of leangrad-train")
    parser.add_argument("-o", "--output", default="training.png", help="the PNG to write")
    parser.add_argument("--window", type=positive_int, default=50,
                        help="steps in the moving average")
    args = parser.parse_args()

    runs = []
    for path in args.logs:
        steps, epochs = read_jsonl(path)
        if not steps:
            sys.exit(f"plot_training: {path} has no step lines")
        runs.append((path, steps, epochs))
    # The score axis holds one kind of score: the classifiers' accuracy or srnet's PSNR.
    score_names = {}
    for path, _, epochs in runs:
        for e in epochs:
            name = "accuracy" if "accuracy" in e else "psnr_db"
            score_names.setdefault(name, path)
    if len(score_names) > 1:
        sys.exit(f"plot_training: {score_names['accuracy']} has a test accuracy and "
                 f"{score_names['psnr_db']} a test PSNR: they cannot share the score axis "
                 "(draw them apart)")
    score_name = next(iter(score_names), None)

    figure, (loss_axes, score_axes) = plt.subplots(1, 2, figsize=(12, 4.5))
    for index, (path, steps, epochs) in enumerate(runs):
        colour = f"C{index}"
        x = [s["step"] for s in steps]
        loss = [number(s.get("loss")) for s in steps]
        not_finite = sum(1 for v in loss if not math.isfinite(v))
        if not_finite:
            print(f"plot_training: {path}: {not_finite} of {len(loss)} steps have no finite loss "
                  "(null: the run diverged); they are gaps in the curve", file=sys.stderr)
        loss_axes.plot(x, loss, color=colour, alpha=0.2, linewidth=0.8)
        loss_axes.plot(x, moving_average(loss, args.window), color=colour, label=path)
        if epochs and score_name:
            scores = [number(e.get(score_name)) * (100 if score_name == "accuracy" else 1)
                      for e in epochs]
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
