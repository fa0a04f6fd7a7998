"""The PyTorch side of the GPU bench harness (bench/gpu_harness.h), shared by compare/*_torch.py.

The same device description and limits (Note [Device limits] in bench/gpu_harness.cpp: keep the
two tables in step), the same timing (warm-up runs, then each timed run between two CUDA events
after a write of 2 x L2 bytes; median and min) and the same table, console and markdown, so a
leangrad row and its PyTorch row are measured and printed alike. Usage in a script:

    bench = GpuTable("layers_torch")          # parses --warmup N --runs N --markdown PATH
    bench.run("softmax (4096, 32000) dim -1", bytes_=4096 * 32000 * 8, fn=lambda: ...,
              note="torch F.softmax")
    bench.finish()
"""
import argparse
import statistics

import torch

# Note [Device limits]: (model word, other word or "", SM count or 0, label, HBM TB/s,
# dense TFLOP/s f32, tf32, bf16, f16), most specific first; vendor datasheets, sparsity halved.
KNOWN_DEVICES = [
    ("H100", "PCIe", 0, "H100 PCIe", 2.0, 51, 378, 756, 756),
    ("H100", "NVL", 0, "H100 NVL", 3.9, 60, 418, 835, 835),
    ("H100", "", 114, "H100 PCIe", 2.0, 51, 378, 756, 756),
    ("H100", "", 0, "H100 SXM", 3.35, 67, 495, 989, 989),
    ("H200", "NVL", 0, "H200 NVL", 4.8, 60, 418, 835, 835),
    ("H200", "", 0, "H200 SXM", 4.8, 67, 495, 989, 989),
]
LIMITS = ("HBM", "f32", "tf32", "bf16", "f16")
MIB = 1024.0 * 1024.0


def describe_device():
    """(summary lines, {limit name: bytes/s or FLOP/s}, L2 bytes) of the current device."""
    props = torch.cuda.get_device_properties(torch.cuda.current_device())
    words = props.name.split()
    l2 = getattr(props, "L2_cache_size", 0)
    lines = [f"device: {props.name} (sm_{props.major}{props.minor}), "
             f"{props.multi_processor_count} SMs, L2 {l2 / MIB:.1f} MiB, "
             f"{props.total_memory / MIB / 1024:.1f} GiB (torch {torch.__version__})"]
    for model, variant, sms, label, hbm, *tflops in KNOWN_DEVICES:
        if model in words and (not variant or variant in words) and (
                not sms or sms == props.multi_processor_count):
            limits = {"HBM": hbm * 1e12}
            limits.update({name: t * 1e12 for name, t in zip(LIMITS[1:], tflops)})
            lines.append(f"HBM bandwidth: {hbm:.2f} TB/s (vendor datasheet, {label})")
            lines.append("dense TFLOP/s: " + ", ".join(f"{n} {t:.0f}" for n, t in
                                                       zip(LIMITS[1:], tflops)) +
                         f" (vendor datasheet, {label})")
            return lines, limits, l2
    lines.append("HBM bandwidth: unknown (not in the table)")
    lines.append("dense TFLOP/s: unknown (not in the table)")
    return lines, {}, l2


class GpuTable:
    """Times rows and prints them in the harness's table format."""

    ROW = "{:<48} {:>10} {:>10} {:>15} {:>11} {:>10} {:>10}  {}{}{}"

    def __init__(self, program):
        parser = argparse.ArgumentParser(prog=program)
        parser.add_argument("--warmup", type=int, default=3)
        parser.add_argument("--runs", type=int, default=20)
        parser.add_argument("--markdown", default="")
        self.args = parser.parse_args()
        self.program = program
        self.lines, self.limits, l2 = describe_device()
        self.flush_buffer = torch.empty(max(2 * l2, 1), dtype=torch.uint8, device="cuda")
        self.lines.append(f"timing: {self.args.warmup} warm-up + {self.args.runs} timed runs per "
                          "row (median and min; rates from the median), L2 flushed before each "
                          f"run ({self.flush_buffer.numel() / MIB:.0f} MiB written) unless noted")
        self.rows = []
        for line in self.lines:
            print(line)

    def note(self, line):
        self.lines.append(line)
        print(line)

    def time(self, fn, flush_l2=True):
        """(median us, min us) of fn over the timed runs."""
        for _ in range(self.args.warmup):
            fn()
        starts = [torch.cuda.Event(enable_timing=True) for _ in range(self.args.runs)]
        ends = [torch.cuda.Event(enable_timing=True) for _ in range(self.args.runs)]
        for start, end in zip(starts, ends):
            if flush_l2:
                self.flush_buffer.zero_()
            start.record()
            fn()
            end.record()
        torch.cuda.synchronize()
        us = [1e3 * s.elapsed_time(e) for s, e in zip(starts, ends)]
        return statistics.median(us), min(us)

    def run(self, name, fn, bytes_=0.0, flops=0.0, precision="", check=None, note="",
            flush_l2=True):
        """Times fn and prints one row. bytes_: quoted against HBM; flops: against precision
        ("f32", "tf32", "bf16", "f16"). check: (max |diff|, max |ref|, tolerance) or None."""
        median, minimum = self.time(fn, flush_l2)
        self.add_row(name, median, minimum, bytes_, flops, precision, check, note)

    def add_row(self, name, median, minimum, bytes_=0.0, flops=0.0, precision="", check=None,
                note=""):
        """Prints a row timed elsewhere (see run)."""
        cells = [f"{median:.2f}", f"{minimum:.2f}", "-", "-", "-", "-", "-"]
        amount, limit = (bytes_, "HBM") if bytes_ else (flops, precision)
        if amount:
            per_second = amount / (median * 1e-6)
            cells[2] = (f"{per_second * 1e-9:.1f} GB/s" if limit == "HBM"
                        else f"{per_second * 1e-12:.1f} TFLOP/s")
            if self.limits.get(limit):
                cells[3] = f"{100 * per_second / self.limits[limit]:.1f}% {limit}"
        if check is not None:
            diff, ref, tolerance = check
            relative = diff / max(ref, 1e-30) if diff else 0.0
            cells[4:7] = [f"{diff:.2e}", f"{relative:.2e}",
                          "ok" if relative <= tolerance else f"FAILED (tol {tolerance:.0e})"]
        if not self.rows:
            print(self.ROW.format("kernel", "median us", "min us", "achieved", "of limit",
                                  "max|diff|", "/max|ref|", "check", "", ""))
        print(self.ROW.format(name, *cells, "  " if note else "", note), flush=True)
        self.rows.append((name, cells, note))

    def finish(self):
        """Appends the markdown section when --markdown was given."""
        if not self.args.markdown:
            return
        with open(self.args.markdown, "a", encoding="utf-8") as out:
            out.write(f"\n## {self.program}\n\n")
            out.writelines(f"- {line}\n" for line in self.lines)
            out.write("\n| kernel | median µs | min µs | achieved | of limit | max\\|diff\\| "
                      "| /max\\|ref\\| | check | note |\n")
            out.write("| --- | ---: | ---: | ---: | ---: | ---: | ---: | --- | --- |\n")
            for name, cells, note in self.rows:
                out.write("| " + " | ".join([name, *cells, note]) + " |\n")
        print(f"appended the table to {self.args.markdown}")
