#!/usr/bin/env python3
"""Summarises a Chrome trace that leangrad wrote (profiler::Profile::chrome_trace, leangrad-train
--profile) as text: for each track (a CPU thread, and on CUDA each stream of the "CUDA device
time" process) how many spans it holds, how long it was busy (the union of its spans, so nested
spans count once) out of the traced time, and the names that took longest. On CUDA this shows
at a glance whether the copy stream or the compute stream set the pace of a step, which
tools/gpu-check.sh needs from a machine whose files it cannot open in Perfetto.

    leangrad-train --model srnet --device cuda --profile trace.json --profile-steps 2
    python3 tools/trace_summary.py trace.json [--top 5] [--require-cuda]

--require-cuda: exit 1 when the trace has no span on a CUDA stream's track.
"""
import argparse
import collections
import json
import sys

CPU_PID, CUDA_PID = 1, 2  # core/profiler.cpp's processes


def busy_us(spans):
    """The length of the union of [start, end) intervals."""
    total, end = 0.0, None
    for start, stop in sorted(spans):
        if end is None or start > end:
            total += stop - start
            end = stop
        elif stop > end:
            total += stop - end
            end = stop
    return total


def summarise(trace, top):
    events = trace["traceEvents"]
    names = {}
    for e in events:
        if e.get("ph") == "M" and e.get("name") == "thread_name":
            names[(e["pid"], e["tid"])] = e["args"]["name"]
    spans = [e for e in events if e.get("ph") == "X"]
    if not spans:
        return ["trace: no spans"], False
    first = min(e["ts"] for e in spans)
    last = max(e["ts"] + e["dur"] for e in spans)
    tracks = collections.defaultdict(list)
    for e in spans:
        tracks[(e["pid"], e["tid"])].append(e)
    lines = [f"trace: {len(spans)} spans on {len(tracks)} tracks over {(last - first) / 1000:.3f} ms"]
    for key in sorted(tracks):
        track = tracks[key]
        busy = busy_us([(e["ts"], e["ts"] + e["dur"]) for e in track])
        name = names.get(key, f"pid {key[0]} tid {key[1]}")
        plural = "" if len(track) == 1 else "s"
        lines.append(f"  {name}: {len(track)} span{plural}, busy {busy / 1000:.3f} ms "
                     f"({100 * busy / max(last - first, 1e-9):.0f}%)")
        by_name = collections.Counter()
        for e in track:
            by_name[e["name"]] += e["dur"]
        for span_name, us in by_name.most_common(top):
            lines.append(f"    {span_name}: {us / 1000:.3f} ms")
    has_cuda = any(pid == CUDA_PID for pid, _ in tracks)
    return lines, has_cuda


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("trace", help="a Chrome trace JSON written by leangrad's profiler")
    parser.add_argument("--top", type=int, default=5, help="names listed per track")
    parser.add_argument("--require-cuda", action="store_true",
                        help="exit 1 when no span lies on a CUDA stream's track")
    args = parser.parse_args()
    with open(args.trace) as f:
        lines, has_cuda = summarise(json.load(f), args.top)
    print("\n".join(lines))
    if args.require_cuda and not has_cuda:
        print("trace: no span on a CUDA stream's track", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
