#!/usr/bin/env python3
"""Safetensors fixtures shared with the reference implementation (tests/data_loading/test_safetensors.cpp).

1. Writes python_written.safetensors with the Python `safetensors` package (safetensors.numpy):
   one tensor of every dtype numpy has (numpy has no bfloat16), a 0-d and an empty tensor, and
   metadata. The C++ test reads it and checks every value.
2. Reads leangrad_written.safetensors (written by leangrad's save_safetensors: the C++ test
   `SafetensorsInterop.OurWriterMatchesCommittedFixture` regenerates it with
   LEANGRAD_WRITE_FIXTURES=1 and otherwise checks it is byte-identical to what the writer
   produces) with the reference parser, checks every tensor, the metadata and that every tensor
   starts at a multiple of its element size (what the reference writer guarantees and zero-copy
   readers need), and records the result in leangrad_written.check.json.

Run: pip install safetensors numpy && python3 tests/data/make_safetensors_fixture.py
"""
import hashlib
import json
import pathlib

import numpy as np
import safetensors
import safetensors.numpy

HERE = pathlib.Path(__file__).resolve().parent


def python_tensors():
    return {
        "f32": np.array([[-1.5, -0.5, 0.0], [0.25, 1.0, 3.5]], dtype=np.float32),
        "f64": np.array([0.1, -2.5, 1e300], dtype=np.float64),
        "f16": np.array([[0.5, -1.0], [65504.0, 6.103515625e-05]], dtype=np.float16),
        "i64": np.array([-(2**63), -1, 0, 2**63 - 1], dtype=np.int64),
        "i32": np.array([[-(2**31), -1], [7, 2**31 - 1]], dtype=np.int32),
        "u8": np.array([0, 1, 127, 128, 255], dtype=np.uint8),
        "bool": np.array([True, False, True]),
        "scalar": np.array(42.0, dtype=np.float32),
        "empty": np.zeros((0, 3), dtype=np.float32),
    }


PYTHON_METADATA = {"creator": "tests/data/make_safetensors_fixture.py", "framework": "numpy"}

# What leangrad's test writes (tests/data_loading/test_safetensors.cpp, leangrad_fixture_tensors).
LEANGRAD_METADATA = {"format": "pt", "writer": "leangrad"}


def leangrad_expected():
    t = python_tensors()
    return {
        "f32": t["f32"],
        "f64": t["f64"],
        "f16": t["f16"],
        "bf16": np.array([1.0, -2.0, 0.5, 3.0], dtype=np.float32),  # exact in bfloat16
        "i64": t["i64"],
        "i32": t["i32"],
        "u8": t["u8"],
        "bool": t["bool"],
        "scalar": t["scalar"],
        "empty": t["empty"],
        "f32_transposed": t["f32"].T.copy(),  # written from a non-contiguous view
    }


NUMPY_DTYPE = {"F32": np.float32, "F64": np.float64, "F16": np.float16, "I64": np.int64,
               "I32": np.int32, "U8": np.uint8, "BOOL": np.bool_}


def decode(entry):
    """A reference-parser entry as a numpy array (bfloat16 widened to float32)."""
    raw = bytes(entry["data"])
    if entry["dtype"] == "BF16":
        halves = np.frombuffer(raw, dtype="<u2").astype(np.uint32) << 16
        return halves.view(np.float32).reshape(entry["shape"])
    return np.frombuffer(raw, dtype=NUMPY_DTYPE[entry["dtype"]]).reshape(entry["shape"])


ELEMENT_BYTES = {"F64": 8, "I64": 8, "F32": 4, "I32": 4, "F16": 2, "BF16": 2, "U8": 1, "BOOL": 1}


def check_alignment(data):
    """Every tensor's first byte in the file is a multiple of its element size."""
    header_bytes = int.from_bytes(data[:8], "little")
    header = json.loads(data[8:8 + header_bytes])
    for name, entry in header.items():
        if name == "__metadata__":
            continue
        start = 8 + header_bytes + entry["data_offsets"][0]
        assert start % ELEMENT_BYTES[entry["dtype"]] == 0, (name, entry["dtype"], start)


def check_leangrad_file(path):
    data = path.read_bytes()
    entries = dict(safetensors.deserialize(data))  # the reference parser: validates the layout
    check_alignment(data)
    expected = leangrad_expected()
    assert set(entries) == set(expected), sorted(entries)
    for name, want in expected.items():
        got = decode(entries[name])
        assert got.shape == want.shape, (name, got.shape, want.shape)
        assert np.array_equal(got, want), (name, got, want)
    with safetensors.safe_open(str(path), framework="numpy") as f:
        assert f.metadata() == LEANGRAD_METADATA, f.metadata()
        # Everything numpy can hold also loads through the numpy front end.
        for name in expected:
            if name != "bf16":
                assert np.array_equal(f.get_tensor(name), expected[name]), name
    return {
        "checked_file": path.name,
        "sha256": hashlib.sha256(data).hexdigest(),
        "checked_by": "tests/data/make_safetensors_fixture.py",
        "safetensors_version": safetensors.__version__,
        "numpy_version": np.__version__,
        "tensors": sorted(expected),
        "metadata": LEANGRAD_METADATA,
        "aligned": True,
        "result": "ok",
    }


def main():
    safetensors.numpy.save_file(python_tensors(), str(HERE / "python_written.safetensors"),
                                metadata=PYTHON_METADATA)
    ours = HERE / "leangrad_written.safetensors"
    if ours.exists():
        report = check_leangrad_file(ours)
        (HERE / "leangrad_written.check.json").write_text(json.dumps(report, indent=2) + "\n")
        print("leangrad_written.safetensors: read back by safetensors", safetensors.__version__)
    else:
        print("leangrad_written.safetensors missing: run the C++ test with LEANGRAD_WRITE_FIXTURES=1")


if __name__ == "__main__":
    main()
