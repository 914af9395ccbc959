#!/usr/bin/env bash
# The main job on its built-in default: install, build what the demo needs
# (the CLI and the reference trainer, not the tests), then profile the
# reference workload (LeNet-5 on MNIST) for real, fit, plan and print the
# recommendation.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh --demo
exec ./build/trainplan demo "$@"
