#!/usr/bin/env bash
# README command (1): install, build and run leangrad's main job (the demo until leangrad-train
# lands). Extra arguments go to the program, e.g. tools/main.sh --device cpu --steps 100.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/bootstrap.sh"
cmake --build "$LEANGRAD_BUILD" --target leangrad-demo
"$LEANGRAD_BUILD/tools/leangrad-demo" "$@"
