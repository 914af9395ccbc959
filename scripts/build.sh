#!/usr/bin/env bash
# Configures and builds trainplan into ./build (Release).
#   scripts/build.sh          every target: the CLI, the trainer, tests, microbenchmarks
#   scripts/build.sh --demo   only what `trainplan demo` runs: the CLI and the trainer
# Other arguments go to cmake's configure step.
set -euo pipefail
cd "$(dirname "$0")/.."
target=()
if [ "${1:-}" = "--demo" ]; then
  shift
  target=(--target demo)
fi
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release "$@" >/dev/null
cmake --build build -j"$(nproc)" "${target[@]}"
