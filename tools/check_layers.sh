#!/usr/bin/env bash
# The library's layers (the folders of leangrad/) and which may include which, written down as
# data and checked on every #include <leangrad/...> of the library's sources. The test suite runs
# it (ctest -R layers), so .ci/run fails on an upward include, naming the file and line. The
# library includes its own headers only by that full path (never #include "..."), so a consumer's
# file of the same name cannot stand in for one of them.
#
#   core <- kernels <- autograd <- data, nn, optim <- offload <- distributed <- tools, tests, bench
#   (nn may include data; offload and distributed include nn: they act on modules; offload
#   includes optim: ParameterOffload::step runs an optimizer; distributed includes offload:
#   plan_memory makes the ranks agree on one memory plan; and optim: ZeroRedundancyOptimizer is
#   an optimizer)
#
# A layer includes only the layers listed for it (and itself). Besides, the backend contract and
# the launchers (kernels/backend.h, kernels/cpu/, kernels/cuda/) are private to kernels/: every
# other layer reaches a kernel through kernels/ops.h.
#   tools/check_layers.sh [source root]
set -euo pipefail
root="${1:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}"

declare -A allowed=(
  [core]=""
  [kernels]="core"
  [autograd]="core kernels"
  [data]="core kernels autograd"
  [nn]="core kernels autograd data"            # Module::save and load write safetensors
  [optim]="core kernels autograd"
  [offload]="core kernels autograd data nn optim"  # act on modules; ParameterOffload::step runs an optimizer
  [distributed]="core kernels autograd data nn optim offload"  # DDP wraps an nn::Module; ZeroRedundancyOptimizer is an optimizer; plan_memory: one memory plan
)
private_to_kernels='^kernels/(backend\.h|backend_launchers\.inc|cpu/|cuda/)'

violations=0
report() {
  echo "$1:$2: $3" >&2
  violations=$((violations + 1))
}

for layer in "${!allowed[@]}"; do
  [ -d "$root/leangrad/$layer" ] || continue
  while IFS= read -r match; do
    file="${match%%:*}"
    rest="${match#*:}"
    line="${rest%%:*}"
    target="$(sed -E 's@^[^<]*#[[:space:]]*include[[:space:]]+<leangrad/([^>]+)>.*$@\1@' <<<"${rest#*:}")"
    to="${target%%/*}"
    [[ "$target" == */* ]] || continue  # a same-folder include
    [ -n "${allowed[$to]+x}" ] || continue  # not a layer (a system or third-party header)
    if [ "$to" != "$layer" ] && [[ " ${allowed[$layer]} " != *" $to "* ]]; then
      report "leangrad/$file" "$line" "$layer/ may not include $target (allowed: ${allowed[$layer]:-nothing})"
    elif [ "$layer" != kernels ] && [[ "$target" =~ $private_to_kernels ]]; then
      report "leangrad/$file" "$line" "$target is private to kernels/ (use kernels/ops.h)"
    fi
  done < <(cd "$root/leangrad" && grep -rnE '^[[:space:]]*#[[:space:]]*include[[:space:]]+<leangrad/' "$layer" \
             --include='*.h' --include='*.cpp' --include='*.cu' --include='*.cuh' \
             --include='*.inc' || true)
done

while IFS= read -r match; do
  file="${match%%:*}"
  rest="${match#*:}"
  report "leangrad/$file" "${rest%%:*}" "include the library's headers as <leangrad/...>, not \"...\""
done < <(cd "$root/leangrad" && grep -rnE '^[[:space:]]*#[[:space:]]*include[[:space:]]+"' . \
           --include='*.h' --include='*.cpp' --include='*.cu' --include='*.cuh' --include='*.inc' |
         sed 's@^\./@@' || true)

if ((violations > 0)); then
  echo "check_layers: $violations include(s) break the layering (see the table at the top of" \
       "tools/check_layers.sh)" >&2
  exit 1
fi
echo "check_layers: every include of ${!allowed[*]} follows the layering"
