#!/usr/bin/env bash
# Builds trainplan with AddressSanitizer and UndefinedBehaviorSanitizer into
# ./build-sanitize (without libtorch and the microbenchmarks, which the tests
# do not need) and runs its tests there. Any sanitizer report aborts its
# process and so fails its test.
#   scripts/sanitize.sh                 build everything, run every test (the parsers' fuzz tests included)
#   scripts/sanitize.sh -R fuzz         build, then pass the rest to ctest
#   scripts/sanitize.sh --fuzz-only     build the library and the fuzz driver only, run the fuzz tests
#                                       (what CI runs: the full suite compiles for most of an hour on 2 cores)
# clang++ compiles the instrumented build in about 60% of g++'s time (docs/lab/FUZZING.md);
# it is used where installed, g++ otherwise; CXX chooses another.
set -euo pipefail
cd "$(dirname "$0")/.."
here=$(pwd)
fuzz_only=0
if [ "${1:-}" = "--fuzz-only" ]; then
  fuzz_only=1
  shift
fi
cxx="${CXX:-}"
if [ -z "$cxx" ]; then
  cxx=c++
  # clang's sanitizer runtimes are a package of their own (libclang-rt-14-dev): without them it cannot link.
  if command -v clang++ >/dev/null && [ -f "$(clang++ -print-file-name=libclang_rt.asan-x86_64.a)" ]; then
    cxx=clang++
  fi
fi
# Line tables are enough for symbolized reports and compile faster than full debug information.
debug=-g
case "$("$cxx" --version)" in *clang*) debug=-gline-tables-only ;; esac
targets=()
tests=ON
if [ $fuzz_only -eq 1 ]; then
  targets=(--target trainplan_fuzz)
  tests=OFF
fi
cmake -S . -B build-sanitize -DCMAKE_CXX_COMPILER="$(command -v "$cxx")" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 $debug" -DTRAINPLAN_TESTS=$tests \
  -DTRAINPLAN_WITH_TORCH=OFF -DTRAINPLAN_MICROBENCH=OFF -DTRAINPLAN_SANITIZE=address,undefined >/dev/null
cmake --build build-sanitize -j"$(nproc)" ${targets[@]+"${targets[@]}"}
# check_initialization_order: the model and policy registries fill from static
# registrars, the pattern whose order across files ASan can check.
export ASAN_OPTIONS="check_initialization_order=1:detect_stack_use_after_return=0:${ASAN_OPTIONS:-}"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:${UBSAN_OPTIONS:-}"
[ -f scripts/sanitize-lsan.supp ] && export LSAN_OPTIONS="suppressions=$here/scripts/sanitize-lsan.supp:${LSAN_OPTIONS:-}"
if [ $fuzz_only -eq 1 ]; then
  ctest --test-dir build-sanitize --output-on-failure -j2 -L fuzz "$@"
else
  ctest --test-dir build-sanitize --output-on-failure -j2 "$@"
fi
