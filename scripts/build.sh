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
# Configure's own lines are many; the project's (what it builds and why
# not: no libtorch, no gloo) are shown.
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release "$@" | { grep -E '^-- trainplan:' || true; }
# ${a[@]+...}: an empty array under set -u, as bash before 4.4 needs it.
cmake --build build -j"$(nproc)" ${target[@]+"${target[@]}"}
