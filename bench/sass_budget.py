#!/usr/bin/env python3
"""Instructions per element of a CUDA kernel's main loop, counted in its SASS.

A memory-bound kernel keeps up with HBM only while the SM can issue its instructions faster than
the data arrives: on an H100 SXM, 132 SMs x 4 schedulers x 1.98 GHz = 33.4 T thread-instructions
per second against 3.35 TB/s, about 10 instructions per byte moved. This script reads a kernel's
machine code (cuobjdump -sass, from the CUDA toolkit or Triton's wheel), finds its main loop
(the backward branch around the widest global load), drops the slow paths the loop branches
around (a `@P BRA` over a CALL: division and exp range fix-ups that normal inputs never take) and
prints the instructions of one iteration, per element, next to the budget for the bytes each
element moves. docs/kernels.md quotes its output.

  bench/sass_budget.py OBJECT [--match SUBSTRING ...] [--bytes-per-element B]
      [--elements N] [--whole-function | --loop-containing OPCODE] [--cuobjdump PATH]
      [--instructions-per-byte 10]

Each kernel whose demangled name contains every SUBSTRING is reported. The elements per
iteration are the widest load's bytes divided by the element size (--element-bytes, default
from the kernel's template arguments: float 4, double 8, Half/BFloat16 2), or --elements. A
kernel whose loop the compiler unrolled completely (Adam8bit's four quant blocks per warp) is
counted whole with --whole-function, --elements being what one thread handles.
"""
import argparse
import re
import shutil
import subprocess
import sys

INSTRUCTION = re.compile(r"/\*([0-9a-f]{4,})\*/\s+(@!?U?P\w+\s+)?([A-Z][A-Z0-9_.]*)([^;]*);")
BRANCH_TARGET = re.compile(r"BRA\s+(?:`\()?(0x[0-9a-f]+)")
ELEMENT_BYTES = {"float": 4, "double": 8, "leangrad::Half": 2, "leangrad::BFloat16": 2}


def demangle(name):
    try:
        return subprocess.run(["c++filt", name], capture_output=True, text=True).stdout.strip()
    except FileNotFoundError:
        return name


def functions(sass):
    """(mangled name, [(address, predicate, opcode, operands)]) for each function."""
    current, body = None, []
    for line in sass.splitlines():
        header = re.search(r"Function : (\S+)", line)
        if header:
            if current:
                yield current, body
            current, body = header.group(1), []
            continue
        match = INSTRUCTION.search(line)
        if match and current:
            body.append((int(match.group(1), 16), (match.group(2) or "").strip(), match.group(3),
                         match.group(4)))
    if current:
        yield current, body


def load_bytes(opcode):
    if not opcode.startswith("LDG"):
        return 0
    width = re.search(r"\.(128|64|U16|S16|16|U8|S8|8|32)\b", opcode)
    bits = {"128": 128, "64": 64, "32": 32, "16": 16, "U16": 16, "S16": 16, "8": 8, "U8": 8,
            "S8": 8}
    return bits[width.group(1)] // 8 if width else 4


def main_loop(body, containing=None):
    """(first, last) indices of the innermost backward branch's loop around the widest load, or
    around an instruction whose opcode starts with `containing` (e.g. HMMA: a GEMM's k-loop)."""
    index_of = {address: i for i, (address, _, _, _) in enumerate(body)}
    loops = []
    for i, (address, _, opcode, operands) in enumerate(body):
        if opcode.startswith("BRA"):
            target = BRANCH_TARGET.search(opcode + operands)
            if target and int(target.group(1), 16) <= address:
                loops.append((index_of.get(int(target.group(1), 16), 0), i))
    if containing:
        around = [(first, last) for first, last in loops
                  if any(body[k][2].startswith(containing) for k in range(first, last + 1))]
        best = min(around, key=lambda loop: loop[1] - loop[0], default=None)
        return best, 0
    best, best_width = None, -1
    for first, last in loops:
        width = max((load_bytes(body[k][2]) for k in range(first, last + 1)), default=0)
        if width > best_width or (width == best_width and best and last - first < best[1] - best[0]):
            best, best_width = (first, last), width
    return best, best_width


def fast_path_count(body, first, last):
    """Instructions from first to last, without regions a predicated forward branch jumps over
    when that region holds a CALL (a slow path)."""
    index_of = {address: i for i, (address, _, _, _) in enumerate(body)}
    count, k = 0, first
    while k <= last:
        address, predicate, opcode, operands = body[k]
        count += 1
        target = BRANCH_TARGET.search(opcode + operands) if opcode.startswith("BRA") else None
        if predicate and target:
            j = index_of.get(int(target.group(1), 16))
            if j is not None and k < j <= last + 1 and any(
                    body[m][2].startswith("CALL") for m in range(k + 1, j)):
                k = j
                continue
        k += 1
    return count


def element_bytes(name):
    args = re.search(r"<([^<>]*)>", name)
    first = args.group(1).split(",")[0].strip() if args else ""
    return ELEMENT_BYTES.get(first, 4)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("object")
    parser.add_argument("--match", action="append", default=[])
    parser.add_argument("--bytes-per-element", type=float,
                        help="bytes the kernel moves per element (for the budget column)")
    parser.add_argument("--element-bytes", type=int)
    parser.add_argument("--elements", type=int, help="elements one iteration (or thread) handles")
    parser.add_argument("--loop-containing", metavar="OPCODE",
                        help="the innermost loop holding this opcode (HMMA for a GEMM's k-loop)")
    parser.add_argument("--whole-function", action="store_true",
                        help="count the whole function (fast path), not its main loop")
    parser.add_argument("--instructions-per-byte", type=float, default=10.0)
    parser.add_argument("--cuobjdump", default=shutil.which("cuobjdump") or "cuobjdump")
    args = parser.parse_args()
    sass = subprocess.run([args.cuobjdump, "-sass", args.object], capture_output=True, text=True,
                          check=True).stdout
    print(f"{'kernel':78} {'loop':>5} {'elems':>5} {'per elem':>8} {'budget':>7}")
    for mangled, body in functions(sass):
        name = demangle(mangled)
        if not all(m in name for m in args.match):
            continue
        if args.whole_function:
            loop, width = (0, len(body) - 1), 0
        else:
            loop, width = main_loop(body, args.loop_containing)
        if loop is None:
            print(f"{name[:78]:78} no loop found")
            continue
        instructions = fast_path_count(body, *loop)
        elements = args.elements or max(1, width // (args.element_bytes or element_bytes(name)))
        per_element = instructions / elements
        budget = ""
        if args.bytes_per_element:
            budget = f"{args.bytes_per_element * args.instructions_per_byte:7.0f}"
        short = re.sub(r"leangrad::kernels::cuda::\(anonymous namespace\)::", "", name)
        print(f"{short[:78]:78} {instructions:5d} {elements:5d} {per_element:8.1f} {budget}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
