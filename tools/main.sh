#!/usr/bin/env bash
# README command (1): install, build and run leangrad's main job: leangrad-train, which trains the
# classic MLP on Fashion-MNIST (SGD, lr 0.1, batch 64, 10 epochs). Extra arguments go to the
# program, e.g. tools/main.sh --model cnn --optimizer adam --epochs 3 (see docs/training.md).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/bootstrap.sh"
cmake --build "$LEANGRAD_BUILD" --target leangrad-train
"$LEANGRAD_BUILD/tools/leangrad-train" "$@"
