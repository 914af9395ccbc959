#!/usr/bin/env bash
# The main job on its built-in default: install, build, then profile the
# reference workload (LeNet-5 on MNIST) for real, fit, plan and print the
# recommendation. About 3 minutes on a 2-core machine after the build.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh
exec ./build/trainplan demo "$@"
