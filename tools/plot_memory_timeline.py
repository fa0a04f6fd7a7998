#!/usr/bin/env python3
"""Draws leangrad-train --memory-timeline JSON files as stacked-area PNGs: the memory allocated
over one training step by category (parameters, gradients, optimizer state, resident data, saved
activations, other temporaries), the peak marked, the forward passes shaded. Several files are
drawn side by side on one memory scale, each titled with the memory setting it was recorded under
(plain, --recompute, --save-on-cpu, ...).

    leangrad-train --model srnet --memory-timeline step.json --max-steps 5
    python3 tools/plot_memory_timeline.py step.json -o step.png
    python3 tools/plot_memory_timeline.py plain.json recompute.json -o compare.png

Needs matplotlib (Debian: python3-matplotlib, installed by tools/bootstrap.sh).
"""
import argparse
import json

import matplotlib

matplotlib.use("Agg")  # no display needed
import matplotlib.pyplot as plt  # noqa: E402

MIB = 1 << 20
REQUIRED = ("categories", "time_ms", "bytes", "marks", "peak")  # what draw() reads
LABELS = {
    "parameters": "parameters",
    "gradients": "gradients",
    "optimizer_state": "optimizer state",
    "resident_data": "resident data",
    "saved_activations": "saved activations",
    "other": "other temporaries",
}


def draw(axes, t, omit):
    """One timeline on `axes`; returns the height of its stack at the peak (MiB)."""
    time_ms = t["time_ms"]
    categories = [c for c in t["categories"] if c not in omit]
    series = [[b / MIB for b in t["bytes"][c]] for c in categories]
    omitted_at_peak = sum(t["peak"]["by_category"][c] for c in omit) / MIB
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
    axes.set_xlabel("time since the step began (ms)")
    axes.set_xlim(time_ms[0], time_ms[-1])
    axes.grid(alpha=0.3)
    return drawn_peak_mib


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("timelines", nargs="+", metavar="timeline",
                        help="JSON files leangrad-train --memory-timeline wrote (several: side "
                             "by side)")
    parser.add_argument("-o", "--output", default="memory_timeline.png", help="the PNG to write")
    parser.add_argument("--omit", action="append", default=[], metavar="CATEGORY",
                        help="leave a category out (resident_data: on the CPU the datasets dwarf "
                             "the step); the title says so")
    args = parser.parse_args()
    timelines = []
    for path in args.timelines:
        with open(path) as f:
            try:
                timeline = json.load(f)
            except json.JSONDecodeError as e:
                parser.error(f"{path} is not JSON ({e})")
        if not isinstance(timeline, dict) or any(key not in timeline for key in REQUIRED):
            parser.error(f"{path} is not a timeline of leangrad-train --memory-timeline (it "
                         f"needs {', '.join(REQUIRED)})")
        timelines.append(timeline)
    for t, path in zip(timelines, args.timelines):
        for c in args.omit:
            if c not in t["categories"]:
                parser.error(f"--omit {c}: the categories of {path} are {', '.join(t['categories'])}")

    count = len(timelines)
    figure, all_axes = plt.subplots(1, count, figsize=(11 if count == 1 else 6 * count, 5),
                                    sharey=True, squeeze=False)
    heights = []
    for axes, t, path in zip(all_axes[0], timelines, args.timelines):
        heights.append(draw(axes, t, args.omit))
        if count > 1:
            axes.set_title(f"{t.get('memory_setting', path)}: peak {t['peak']['bytes'] / MIB:.2f} MiB")
    all_axes[0][0].set_ylabel("allocated (MiB)")
    all_axes[0][0].set_ylim(0, max(heights) * 1.12)
    handles, labels = all_axes[0][0].get_legend_handles_labels()
    all_axes[0][0].legend(handles[::-1], labels[::-1], loc="upper right", fontsize="small")

    first = timelines[0]
    title = f"{first.get('model', '')} on {first.get('device', '')}, batch {first.get('batch_size', '')}: "
    if count == 1:
        setting = first.get("memory_setting")
        title += f"memory allocated during step {first.get('step', '')}"
        title += f" ({setting}; forward passes shaded)" if setting else " (forward passes shaded)"
    else:
        title += "memory allocated during one step, on one scale (forward passes shaded)"
    if args.omit:
        omitted = max(sum(t["peak"]["by_category"][c] for c in args.omit) for t in timelines) / MIB
        title += f"\nnot drawn: {', '.join(LABELS.get(c, c) for c in args.omit)} "
        title += f"(up to {omitted:.2f} MiB at a peak, included in the peaks' numbers)"
    if count == 1:
        all_axes[0][0].set_title(title)
    else:
        figure.suptitle(title)
    figure.tight_layout()
    figure.savefig(args.output, dpi=120)
    peaks = ", ".join(f"{t['peak']['bytes'] / MIB:.2f}" for t in timelines)
    print(f"plot_memory_timeline: wrote {args.output} (peak {peaks} MiB)")


if __name__ == "__main__":
    main()
