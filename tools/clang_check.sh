#!/usr/bin/env bash
# Syntax-check C++ files with clang, the sanitizer builds' compiler, before CI does.
#
# The main build uses gcc 12 and the ASan/TSan/fuzz builds use Debian's clang 14, which rejects a
# few things gcc accepts (a lambda capturing a structured binding, for one). Those would only fail
# late in CI; this catches them in seconds. Each .cpp is checked with its own flags from
# build/compile_commands.json, as the sanitizer builds configure it (no CUDA, clang's OpenMP);
# each header is checked on its own, which also proves it includes what it uses.
#
#   tools/clang_check.sh                 # the files changed against HEAD, plus untracked ones
#   tools/clang_check.sh REF             # the files changed since REF (e.g. HEAD~3)
#   tools/clang_check.sh -- FILE...      # the named files
#
# Needs a configured build/ (tools/test.sh --quick makes one). Exit status 1 if any file fails.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
build=${LEANGRAD_BUILD_DIR:-build}
clang=${CLANGXX:-clang++}

if [[ ! -f "$build/compile_commands.json" ]]; then
  echo "clang_check: $build/compile_commands.json not found; configure first (tools/test.sh --quick)" >&2
  exit 2
fi
command -v "$clang" >/dev/null || { echo "clang_check: $clang not found (tools/sanitize.sh installs it)" >&2; exit 2; }

if [[ "${1:-}" == "--" ]]; then
  shift
  files=("$@")
else
  ref=${1:-HEAD}
  mapfile -t files < <({ git diff --name-only "$ref" --; git ls-files --others --exclude-standard; } |
                       sort -u)
fi

# The test target's precompiled header is a gcc .gch beside cmake_pch.hxx; clang must read the
# header as text, so it gets a copy under a name with no .gch beside it.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

python3 - "$root" "$build" "$clang" "$tmp" "${files[@]}" <<'EOF'
import json, os, shlex, subprocess, sys

root, build, clang, tmp, *files = sys.argv[1:]
entries = {os.path.realpath(e["file"]): e for e in json.load(open(f"{build}/compile_commands.json"))}
library_flags = None  # the flags a header is checked with: those of a leangrad/ source
for path, e in entries.items():
    if path.startswith(os.path.join(root, "leangrad") + os.sep):
        library_flags = e
        break

def clang_args(entry, source, as_header=False):
    args = shlex.split(entry["command"])[1:]
    out, skip = [], False
    for a in args:
        if skip:
            skip = False
            continue
        if a in ("-o", "-c"):
            skip = a == "-o"
            continue
        if a == entry["file"] or os.path.realpath(a) == os.path.realpath(entry["file"]):
            continue
        if a == "-Winvalid-pch":
            continue
        if a == "-fopenmp":
            a = "-fopenmp=libomp"
        if a == "-DLEANGRAD_WITH_CUDA=1":
            a = "-DLEANGRAD_WITH_CUDA=0"  # as the sanitizer builds (LEANGRAD_WITH_CUDA=OFF)
        if a.endswith("cmake_pch.hxx"):
            copy = os.path.join(tmp, "pch_" + str(abs(hash(a))) + ".hxx")
            if not os.path.exists(copy):
                with open(a) as src, open(copy, "w") as dst:
                    dst.write(src.read())
            a = copy
        out.append(a)
    lang = ["-x", "c++-header"] if as_header else []
    return [clang, "-fsyntax-only", *out, *lang, source]

failed = checked = 0
for f in files:
    path = os.path.realpath(os.path.join(root, f))
    if not os.path.exists(path) or not f.endswith((".cpp", ".h")):
        continue
    if f.endswith(".cpp"):
        entry = entries.get(path)
        if entry is None:
            print(f"skip {f} (not in {build}/compile_commands.json: not built in this configuration)")
            continue
        cmd = clang_args(entry, path)
    else:
        if library_flags is None:
            continue
        cmd = clang_args(library_flags, path, as_header=True)
        cmd.insert(2, f"-I{root}/tests")
    checked += 1
    r = subprocess.run(cmd, cwd=entries.get(path, library_flags)["directory"],
                       capture_output=True, text=True)
    if r.returncode != 0:
        failed += 1
        print(f"FAIL {f}")
        print("\n".join(r.stderr.splitlines()[:30]))
    else:
        print(f"ok   {f}")
print(f"clang_check: {checked} checked, {failed} failed")
sys.exit(1 if failed else 0)
EOF
