#!/usr/bin/env python3
"""Draws a leangrad-train --memory-timeline JSON file as a stacked-area PNG: the memory allocated
over one training step by category (parameters, gradients, optimizer state, resident data, saved
activations, other temporaries), the peak marked, the forward passes shaded.

    leangrad-train --model srnet --memory-timeline step.json --max-steps 5
    python3 tools/plot_memory_timeline.py step.json -o step.png

Needs matplotlib (Debian: python3-matplotlib, installed by tools/bootstrap.sh).
"""
import argparse
import json

import matplotlib

matplotlib.use("Agg")  # no display needed
import matplotlib.pyplot as plt  # noqa: E402

MIB = 1 << 20
LABELS = {
    "parameters": "parameters",
    "gradients": "gradients",
    "optimizer_state": "optimizer state",
    "resident_data": "resident data",
    "saved_activations": "saved activations",
    "other": "other temporaries",
}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("timeline", help="the JSON file leangrad-train --memory-timeline wrote")
    parser.add_argument("-o", "--output", default="memory_timeline.png", help="the PNG to write")
    parser.add_argument("--omit", action="append", default=[], metavar="CATEGORY",
                        help="leave a category out (resident_data: on the CPU the datasets dwarf "
                             "the step); the title says so")
    args = parser.parse_args()
    with open(args.timeline) as f:
        t = json.load(f)

    time_ms = t["time_ms"]
    for c in args.omit:
        if c not in t["categories"]:
            parser.error(f"--omit {c}: the categories are {', '.join(t['categories'])}")
    categories = [c for c in t["categories"] if c not in args.omit]
    series = [[b / MIB for b in t["bytes"][c]] for c in categories]
    omitted_at_peak = sum(t["peak"]["by_category"][c] for c in args.omit) / MIB
    figure, axes = plt.subplots(figsize=(11, 5))
    # Steps, not slopes: memory changes at each event and stays until the next.
    axes.stackplot(time_ms, *series, labels=[LABELS.get(c, c) for c in categories], step="post",
                   alpha=0.85)
    # The total as an outline: a temporary that lives for microseconds is a spike too thin to fill.
    totals = [sum(values) for values in zip(*series)]
    axes.step(time_ms, totals, where="post", color="black", linewidth=0.6)
    forward_start = None
    for mark in t["marks"]:
        if mark["label"] == "forward":
            forward_start = mark["time_ms"]
        elif mark["label"] == "forward_end" and forward_start is not None:
            axes.axvspan(forward_start, mark["time_ms"], color="grey", alpha=0.12, linewidth=0)
            forward_start = None
    peak = t["peak"]
    peak_mib = peak["bytes"] / MIB
    drawn_peak_mib = peak_mib - omitted_at_peak  # the height of the stack at the peak
    axes.axvline(peak["time_ms"], color="black", linestyle="--", linewidth=1)
    axes.plot([peak["time_ms"]], [drawn_peak_mib], "o", color="black", markersize=4)
    axes.annotate(f"peak {peak_mib:.2f} MiB at {peak['time_ms']:.1f} ms",
                  xy=(peak["time_ms"], drawn_peak_mib), xytext=(8, -14),
                  textcoords="offset points")
    title = f"{t.get('model', '')} on {t.get('device', '')}, batch {t.get('batch_size', '')}: "
    title += f"memory allocated during step {t.get('step', '')} (forward passes shaded)"
    if args.omit:
        title += f"\nnot drawn: {', '.join(LABELS.get(c, c) for c in args.omit)} "
        title += f"({omitted_at_peak:.2f} MiB at the peak, included in the peak's number)"
    axes.set_title(title)
    axes.set_xlabel("time since the step began (ms)")
    axes.set_ylabel("allocated (MiB)")
    axes.set_xlim(time_ms[0], time_ms[-1])
    axes.set_ylim(0, drawn_peak_mib * 1.12)
    handles, labels = axes.get_legend_handles_labels()
    axes.legend(handles[::-1], labels[::-1], loc="upper left", fontsize="small")
    axes.grid(alpha=0.3)
    figure.tight_layout()
    figure.savefig(args.output, dpi=120)
    print(f"plot_memory_timeline: wrote {args.output} (peak {peak_mib:.2f} MiB)")


if __name__ == "__main__":
    main()
