#!/usr/bin/env python3
"""Draws a Chrome trace that leangrad wrote (profiler::Profile::chrome_trace, leangrad-train
--profile) as a PNG timeline: one band per track (each CPU thread, and on CUDA each stream of
the "CUDA device time" process), every span a bar at its nesting depth, coloured by category and
named where it is wide enough. What Perfetto shows when the file is opened there, as a picture
for documents and reviews.

    leangrad-train --model srnet --device cpu --profile trace.json --profile-steps 2
    python3 tools/plot_trace.py trace.json -o trace.png

Needs matplotlib (Debian: python3-matplotlib, installed by tools/bootstrap.sh).
"""
import argparse
import json

import matplotlib

matplotlib.use("Agg")  # no display needed
import matplotlib.patches as patches  # noqa: E402
import matplotlib.pyplot as plt  # noqa: E402

# The profiler's categories (core/profiler.h) and their colours.
COLOURS = {
    "user": "#bdbdbd",
    "op": "#4e79a7",
    "backward": "#f28e2b",
    "optimizer": "#59a14f",
    "dataloader": "#b07aa1",
    "copy": "#e15759",
    "collective": "#76b7b2",
}
ROW = 1.0  # height of one nesting level
GAP = 0.6  # between tracks


def depths(spans):
    """The nesting depth of each span of one track (spans nest, never partly overlap)."""
    order = sorted(range(len(spans)), key=lambda i: (spans[i]["ts"], -spans[i]["dur"]))
    result = [0] * len(spans)
    open_ends = []  # end times of the enclosing spans, innermost last
    for i in order:
        start = spans[i]["ts"]
        while open_ends and open_ends[-1] <= start:
            open_ends.pop()
        result[i] = len(open_ends)
        open_ends.append(start + spans[i]["dur"])
    return result


def positive_int(text):
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected an integer >= 1, got {text}")
    return value


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("trace", help="the Chrome trace JSON leangrad wrote")
    parser.add_argument("-o", "--output", default="trace.png", help="the PNG to write")
    parser.add_argument("--max-depth", type=positive_int, default=4,
                        help="nesting levels drawn per track (default 4)")
    parser.add_argument("--title", default=None, help="the picture's title (default: the file)")
    args = parser.parse_args()
    with open(args.trace) as f:
        doc = json.load(f)
    events = doc["traceEvents"] if isinstance(doc, dict) else doc

    names = {}  # (pid, tid) -> track name; pid -> process name
    process_names = {}
    tracks = {}
    for e in events:
        if e.get("ph") == "M" and e.get("name") == "thread_name":
            names[(e["pid"], e["tid"])] = e["args"]["name"]
        elif e.get("ph") == "M" and e.get("name") == "process_name":
            process_names[e["pid"]] = e["args"]["name"]
        elif e.get("ph") == "X":
            tracks.setdefault((e["pid"], e["tid"]), []).append(e)
    if not tracks:
        parser.error(f"{args.trace} holds no spans")
    start = min(e["ts"] for spans in tracks.values() for e in spans)
    end = max(e["ts"] + e["dur"] for spans in tracks.values() for e in spans)
    span_ms = (end - start) / 1000.0

    keys = sorted(tracks)
    levels = {k: min(args.max_depth, 1 + max(depths(tracks[k]))) for k in keys}
    height = sum(levels.values()) * ROW + GAP * (len(keys) - 1)
    figure, axes = plt.subplots(figsize=(14, 1.2 + 0.42 * height))
    top = height
    ticks, tick_labels = [], []
    for k in keys:
        spans = tracks[k]
        for e, d in zip(spans, depths(spans)):
            if d >= levels[k]:
                continue
            x = (e["ts"] - start) / 1000.0
            w = e["dur"] / 1000.0
            y = top - (d + 1) * ROW
            axes.add_patch(patches.Rectangle((x, y + 0.05), w, ROW - 0.1, linewidth=0,
                                             facecolor=COLOURS.get(e.get("cat"), "#9c755f")))
            if w > len(e["name"]) * span_ms / 260:  # room for the name
                axes.text(x + w / 2, y + ROW / 2, e["name"], ha="center", va="center",
                          fontsize=6.5, clip_on=True)
        ticks.append(top - levels[k] * ROW / 2)
        process = process_names.get(k[0], "")
        tick_labels.append(names.get(k, f"track {k[1]}") +
                           ("" if process in ("", "CPU threads") else f"\n({process})"))
        top -= levels[k] * ROW + GAP
    axes.set_xlim(0, span_ms)
    axes.set_ylim(0, height)
    axes.set_yticks(ticks)
    axes.set_yticklabels(tick_labels, fontsize=8)
    axes.set_xlabel("time since the first span began (ms)")
    count = sum(len(s) for s in tracks.values())
    axes.set_title(args.title or f"{args.trace}: {count} spans over {span_ms:.1f} ms "
                                 f"(deeper than {args.max_depth} levels not drawn)")
    legend = [patches.Patch(facecolor=c, label=name) for name, c in COLOURS.items()
              if any(e.get("cat") == name for s in tracks.values() for e in s)]
    if legend:  # none when no span has one of the profiler's categories
        axes.legend(handles=legend, loc="upper center", bbox_to_anchor=(0.5, -0.16),
                    fontsize="small", ncol=len(legend), frameon=False)
    axes.grid(axis="x", alpha=0.3)
    figure.tight_layout()
    figure.savefig(args.output, dpi=130)
    print(f"plot_trace: wrote {args.output} ({count} spans, {len(keys)} tracks, {span_ms:.1f} ms)")


if __name__ == "__main__":
    main()
