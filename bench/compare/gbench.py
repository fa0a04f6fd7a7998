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


def both_sides(logs):
    """(runs, errors) of a run_both (bench/compare/common.sh) whose JSON is in the folder logs:
    runs maps 1 and 2 threads to (leangrad's rows, (LibTorch's rows, LibTorch's context)), as
    medians gives them; errors maps each run name to the error LibTorch reported instead of a
    time (an op it does not implement for a dtype)."""
    runs = {t: (medians(f"{logs}/leangrad-{t}.json")[0], medians(f"{logs}/libtorch-{t}.json"))
            for t in (1, 2)}
    errors = {}
    for t in (1, 2):
        with open(f"{logs}/libtorch-{t}.json") as f:
            for b in json.load(f)["benchmarks"]:
                if b.get("error_occurred"):
                    errors[b["run_name"].removesuffix("/real_time")] = b.get("error_message", "?")
    return runs, errors


DTYPES = [("F32", "float32"), ("F16", "float16"), ("BF16", "bfloat16")]


def print_dtype_table(runs, errors, family, work, dtypes=DTYPES):
    """A markdown row per work item, dtype and thread count of the benchmarks family/WORK_DTYPE
    (work: (WORK, label) pairs; dtypes: (DTYPE suffix, label) pairs): both times, leangrad's GB/s
    and LibTorch's time over leangrad's, "-" where LibTorch reported an error."""
    print("| op | dtype | threads | LibTorch ms | leangrad ms | leangrad GB/s "
          "| LibTorch / leangrad |")
    print("| --- | --- | ---: | ---: | ---: | ---: | ---: |")
    for name_part, label in work:
        for suffix, dtype in dtypes:
            name = f"{family}/{name_part}_{suffix}"
            for t in (1, 2):
                leangrad, (libtorch, _) = runs[t]
                lg = leangrad[name]
                lt = libtorch.get(name)
                lt_ok = lt is not None and name not in errors
                lt_ms = f"{lt['ms']:.1f}" if lt_ok else "-"
                ratio = f"{lt['ms'] / lg['ms']:.2f}" if lt_ok else "-"
                print(f"| {label} | {dtype} | {t} | {lt_ms} | {lg['ms']:.1f} | "
                      f"{gb_per_s(lg):.1f} | {ratio} |")
