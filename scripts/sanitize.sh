#!/usr/bin/env bash
# Builds trainplan with AddressSanitizer and UndefinedBehaviorSanitizer into
# ./build-sanitize (without libtorch and the microbenchmarks, which the tests
# do not need) and runs every test there, the parsers' fuzz tests included.
# Any sanitizer report aborts its process and so fails its test.
#   scripts/sanitize.sh                 build and run everything
#   scripts/sanitize.sh -R fuzz         build, then pass the rest to ctest
set -euo pipefail
cd "$(dirname "$0")/.."
here=$(pwd)
cmake -S . -B build-sanitize -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g" \
  -DTRAINPLAN_WITH_TORCH=OFF -DTRAINPLAN_MICROBENCH=OFF -DTRAINPLAN_SANITIZE=address,undefined >/dev/null
cmake --build build-sanitize -j"$(nproc)"
# check_initialization_order: the model and policy registries fill from static
# registrars, the pattern whose order across files ASan can check.
export ASAN_OPTIONS="check_initialization_order=1:detect_stack_use_after_return=0:${ASAN_OPTIONS:-}"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:${UBSAN_OPTIONS:-}"
[ -f scripts/sanitize-lsan.supp ] && export LSAN_OPTIONS="suppressions=$here/scripts/sanitize-lsan.supp:${LSAN_OPTIONS:-}"
ctest --test-dir build-sanitize --output-on-failure -j2 "$@"
