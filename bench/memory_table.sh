#!/usr/bin/env bash
# The memory-technique table (issue 16, docs/training.md "The memory-technique table"): srnet
# trained for the same number of optimizer steps with each technique alone and all together,
# printed as a markdown table of peak memory and median step time (each also as a ratio to the
# baseline), the last epoch's training loss and the test PSNR.
#
#   bench/memory_table.sh [--train PATH] [--device cpu|cuda] [--width N] [--blocks N]
#                         [--batch-size N] [--steps N] [--threads N] [--data DIR] [--work DIR]
#
# Every row is one leangrad-train process (so no row inherits another's cached memory) with
# --limit-train steps * batch, one epoch, --optimizer adam, --seed 0; its --log-json record gives
# the numbers. Rows:
#   baseline          --precision f32
#   recompute         --recompute (each residual block recomputed in backward)
#   accumulate 4      --accumulate 4 --batch-size batch/4 (the same examples per step)
#   bf16              --precision bf16 (autocast)
#   adam8bit          --optimizer adam8bit
#   save-on-cpu       --save-on-cpu (CUDA only: on the CPU there is nothing to move)
#   offload-params    --offload-params (CUDA only; not in "all together": issue 16's table is the
#                     reference's techniques, this row is offload::ParameterOffload's cost)
#   all together      every one of the above at once
# Peak memory is the allocator's peak during training (allocated: what tensors held; reserved:
# what the caching allocator took from the system, cached free blocks and rounding included) less
# the resident data (what was allocated before the first step beside the parameters: on the CPU,
# the datasets). At small sizes reserved is dominated by the allocator's segment sizes; allocated
# is exact. On the CPU times are indicative; on a GPU they count.
set -euo pipefail

train=""
device=cpu
width=16
blocks=2
batch=32
steps=16
threads=0
data=/usr/share/datasets/fashion-mnist
work=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    --train) train="$2"; shift 2 ;;
    --device) device="$2"; shift 2 ;;
    --width) width="$2"; shift 2 ;;
    --blocks) blocks="$2"; shift 2 ;;
    --batch-size) batch="$2"; shift 2 ;;
    --steps) steps="$2"; shift 2 ;;
    --threads) threads="$2"; shift 2 ;;
    --data) data="$2"; shift 2 ;;
    --work) work="$2"; shift 2 ;;
    -h|--help) sed -n '2,22p' "$0"; exit 0 ;;
    *) echo "memory_table.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
  esac
done
root="$(cd "$(dirname "$0")/.." && pwd)"
[[ -n "$train" ]] || train="$root/build/tools/leangrad-train"
[[ -x "$train" ]] || { echo "memory_table.sh: no leangrad-train at '$train' (--train)" >&2; exit 1; }
if (( batch % 4 != 0 || batch < 4 )); then
  echo "memory_table.sh: --batch-size must be a multiple of 4 (accumulate 4 splits it)" >&2
  exit 2
fi
[[ -n "$work" ]] || work="$(mktemp -d)"
mkdir -p "$work"

# The value of "key": N in a --log-json file (pretty-printed by nlohmann::json, one key a line);
# the last occurrence (the last epoch's "loss").
json_number() {
  grep -o "\"$2\": [-0-9.eE+]*" "$1" | tail -n 1 | sed 's/.*: //'
}

rows=()
names=()
add_row() {  # name, then leangrad-train options
  names+=("$1")
  shift
  rows+=("$*")
}
quarter=$((batch / 4))
adam=(--optimizer adam)
add_row "baseline" --batch-size "$batch" "${adam[@]}"
add_row "recompute" --batch-size "$batch" "${adam[@]}" --recompute
add_row "accumulate 4" --batch-size "$quarter" "${adam[@]}" --accumulate 4
add_row "bf16" --batch-size "$batch" "${adam[@]}" --precision bf16
add_row "adam8bit" --batch-size "$batch" --optimizer adam8bit
all=(--batch-size "$quarter" --accumulate 4 --recompute --precision bf16 --optimizer adam8bit)
if [[ "$device" == cuda ]]; then
  add_row "save-on-cpu" --batch-size "$batch" "${adam[@]}" --save-on-cpu
  add_row "offload-params" --batch-size "$batch" "${adam[@]}" --offload-params
  all+=(--save-on-cpu)
fi
add_row "all together" "${all[@]}"

common=(--model srnet --width "$width" --blocks "$blocks" --device "$device" --epochs 1
        --seed 0 --limit-train $((steps * batch)) --limit-test 500
        --data "$data")
(( threads > 0 )) && common+=(--threads "$threads")

echo "| technique | peak allocated (MiB) | vs baseline | peak reserved (MiB) | vs baseline | step (ms, median) | vs baseline | train loss | test PSNR (dB) |"
echo "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
base_alloc=""
base_reserved=""
base_ms=""
for i in "${!rows[@]}"; do
  log="$work/row$i.json"
  # shellcheck disable=SC2086 # the row's options are words
  if ! "$train" "${common[@]}" ${rows[$i]} --log-json "$log" > "$work/row$i.out" 2>&1; then
    echo "memory_table.sh: '${names[$i]}' failed; its output:" >&2
    cat "$work/row$i.out" >&2
    exit 1
  fi
  resident=$(json_number "$log" resident_data)
  alloc=$(( $(json_number "$log" peak_allocated) - resident ))
  reserved=$(( $(json_number "$log" peak_reserved) - resident ))
  ms=$(json_number "$log" median)
  loss=$(json_number "$log" loss)
  psnr=$(json_number "$log" psnr_db)
  [[ -n "$base_alloc" ]] || { base_alloc=$alloc; base_reserved=$reserved; base_ms=$ms; }
  awk -v name="${names[$i]}" -v a="$alloc" -v ba="$base_alloc" -v r="$reserved" \
      -v br="$base_reserved" -v ms="$ms" -v bms="$base_ms" -v loss="$loss" -v psnr="$psnr" 'BEGIN {
    printf "| %s | %.1f | %+.0f%% | %.1f | %+.0f%% | %.1f | %.2fx | %.4f | %.2f |\n", name,
           a / 1048576, 100 * (a / ba - 1), r / 1048576, 100 * (r / br - 1), ms, ms / bms,
           loss, psnr
  }'
done
echo
echo "srnet width $width, $blocks blocks, batch $batch, $steps optimizer steps, adam, on $device;" \
     "the logs of each row are in $work"
