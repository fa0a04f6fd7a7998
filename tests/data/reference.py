"""Shared writer for the PyTorch reference data in tests/data (see tests/testing/reference_data.h).

Each make_<op>.py builds cases with torch (Debian's python3-torch, run as /usr/bin/python3) and
calls write(); the C++ tests load the JSON with test::load_reference. The case builders that
several scripts share are in torch_cases.py.
"""
import json
import math
import os

import torch


def number_json(v):
    """JSON has no NaN or infinity: those are written as the strings "nan", "inf", "-inf"."""
    return v if math.isfinite(v) else str(v)


def tensor_json(t):
    t = t.detach().cpu()
    dtype = str(t.dtype).replace("torch.", "")
    data = t.reshape(-1).to(torch.float64 if t.is_floating_point() else torch.int64).tolist()
    return {"dtype": dtype, "shape": list(t.shape), "data": [number_json(v) for v in data]}


def write(filename, generator, cases):
    """cases: list of dicts {"name": str, "params": dict, "tensors": {name: torch.Tensor}}."""
    out = {
        "generator": generator,
        "torch_version": torch.__version__,
        "cases": [
            {"name": c["name"], "params": c.get("params", {}),
             "tensors": {k: tensor_json(v) for k, v in c["tensors"].items()}}
            for c in cases
        ],
    }
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), filename)
    with open(path, "w") as f:
        json.dump(out, f, indent=None, separators=(",", ":"))
        f.write("\n")
    print(f"wrote {path} ({len(cases)} cases)")
