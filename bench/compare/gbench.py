"""Google Benchmark's JSON output (--benchmark_out_format=json), as the bench/compare scripts read
it: the shell scripts run leangrad's and LibTorch's benchmark programs with the same benchmark
names and put this folder on PYTHONPATH for their tables."""
import json

UNIT_MS = {"ns": 1e-6, "us": 1e-3, "ms": 1.0, "s": 1e3}


def medians(path):
    """(rows, context) of one run: rows maps each benchmark's run name (without "/real_time") to
    its median aggregate, or to its one run when there were no repetitions, as the JSON entry with
    "ms" added (its time in milliseconds); its counters keep their names ("bytes_per_second",
    "GFLOP/s", ...). context is the run's context (the programs add torch_version, cpu_gemm...)."""
    with open(path) as f:
        doc = json.load(f)
    rows = {}
    for b in doc["benchmarks"]:
        if b.get("run_type") == "aggregate" and b.get("aggregate_name") != "median":
            continue
        name = b["run_name"].removesuffix("/real_time")
        rows[name] = dict(b, ms=b["real_time"] * UNIT_MS[b["time_unit"]])
    return rows, doc["context"]


def gb_per_s(row):
    """The row's bytes_per_second counter in GB/s."""
    return row["bytes_per_second"] / 1e9
