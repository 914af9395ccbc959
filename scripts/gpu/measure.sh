#!/usr/bin/env bash
# Builds the libtorch executables against a PyTorch installation's (CUDA)
# libtorch and measures the reference workloads on its GPU in one run, for a
# machine lent for minutes: everything it measures lands in $OUT as it goes,
# so a run stopped early still returns what it had. See docs/lab/GPU.md.
#
#   OUT=/tmp/gpu scripts/gpu/measure.sh
#
# Inputs (environment):
#   OUT        where results go (default /tmp/trainplan-gpu)
#   CARRY      folder with include/ (nlohmann, CLI11) and datasets/{mnist,fashion-mnist}/*.gz
#              (default .gpu-carry; scripts/gpu/prepare-carry.sh makes it)
#   DEVICE     cuda (default) or cpu, to rehearse the script on a machine without a GPU
#   BIN_DIR    use executables already built there instead of building
#   QUICK=1    a few trials only (rehearsal)
#   SUITE      all (default), or repeatability: only time trials of two configurations per workload,
#              alternating unpinned and pinned to one CPU (taskset), six times each, to tell
#              per-process variation of the host-side step time from drift; or llm: transformer
#              training iterations (scripts/gpu/transformer-bench.py, LLM_BUDGET_S seconds, default
#              200), then the trainer's collectives (--backend none, gloo, nccl), the GEMM sweep and
#              one pass of time trials; or gpt: the GPT trainer's bf16 time trials on the GPU (three
#              shapes, micro-batches, accumulation, sequence lengths), its losses across layouts, two
#              ranks sharing the GPU, and repeats, until GPT_BUDGET_S (default 330) seconds have passed;
#              or gpt-large: GPU-bound GPT configurations (large micro-batches, a 32 x 2560 shape);
#              or tf32: fp32 training steps of the six reference networks with TF32 off, on for
#              convolutions, on for everything (scripts/gpu/tf32-bench.py, TF32_BUDGET_S, default 320)
#   NCCL_INCLUDE  directory with nccl.h (default: PyTorch's nvidia-nccl wheel when installed)
# Outputs in $OUT (each appended as it is measured):
#   env.txt          GPU, driver, torch, compiler
#   log.txt          what ran, with timings
#   timing.jsonl     time-only trials, each configuration twice: {"trial":{...}} then the trainer's lines
#   trials.jsonl     training trials (epochs with accuracy), same framing
#   gemm-bf16.csv, gemm-fp32.csv   trainplan-gemm-bench
#   transformer.csv, gemm.csv      SUITE=llm: transformer-bench.py
#   backends.jsonl   SUITE=llm: time trials through each collective backend, same framing
#   layers.csv       trainplan-layer-bench
#   losses.jsonl, gpt-timing.jsonl, gpt-shared.jsonl, gpt-timing-repeat.jsonl   SUITE=gpt, same framing
#                    (scripts/gpu/import-gpt.py makes grid CSVs of them)
#   tf32.csv         SUITE=tf32: network, batch, mode, repeat, median and spread of the step, peak memory
set -uo pipefail
OUT=${OUT:-/tmp/trainplan-gpu}
CARRY=${CARRY:-.gpu-carry}
DEVICE=${DEVICE:-cuda}
QUICK=${QUICK:-0}
mkdir -p "$OUT"
START=$(date +%s)
log() { echo "[$(( $(date +%s) - START ))s] $*" | tee -a "$OUT/log.txt" >&2; }

{
  nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.max.sm,clocks.max.mem,power.limit --format=csv 2>&1
  python3 -c 'import torch, sys; print("python", sys.version.split()[0], "torch", torch.__version__, "cuda", torch.version.cuda, "cxx11_abi", torch._C._GLIBCXX_USE_CXX11_ABI)' 2>&1
  cmake --version 2>&1 | head -1; c++ --version 2>&1 | head -1; nvcc --version 2>&1 | tail -1
  echo "cpus $(nproc)"; uname -srm
} > "$OUT/env.txt"
log "environment: $(head -2 "$OUT/env.txt" | tail -1)"

# --- data -------------------------------------------------------------------
DATA=/tmp/trainplan-datasets
for ds in mnist fashion-mnist; do
  mkdir -p "$DATA/$ds"
  for gz in "$CARRY/datasets/$ds"/*.gz; do
    [ -f "$gz" ] && gunzip -c "$gz" > "$DATA/$ds/$(basename "${gz%.gz}")"
  done
done
export TRAINPLAN_DATA_DIR=$DATA
log "datasets: $(ls "$DATA"/* | wc -l) files"

# --- transformer training (before the build: it needs none) ------------------
if [ "${SUITE:-all}" = llm ]; then
  budget=${LLM_BUDGET_S:-200}
  log "transformer bench (budget ${budget} s)"
  timeout $((budget + 120)) python3 scripts/gpu/transformer-bench.py --out "$OUT" --device "$DEVICE" \
    --budget-s "$budget" $([ "$QUICK" = 1 ] && echo --quick) 2>>"$OUT/log.txt" || log "transformer bench exited $?"
  log "transformer bench: $(($(wc -l <"$OUT/transformer.csv") - 1)) configurations"
fi

# --- TF32 on the six reference networks (no build needed) -------------------
if [ "${SUITE:-all}" = tf32 ]; then
  budget=${TF32_BUDGET_S:-320}
  log "tf32 bench (budget ${budget} s)"
  timeout $((budget + 90)) python3 scripts/gpu/tf32-bench.py --out "$OUT" --device "$DEVICE" \
    --budget-s "$budget" $([ "$QUICK" = 1 ] && echo --quick) 2>>"$OUT/log.txt" || log "tf32 bench exited $?"
  log "tf32 bench: $(($(wc -l <"$OUT/tf32.csv") - 1)) rows"
  exit 0
fi

# --- build ------------------------------------------------------------------
NCCL_INCLUDE=${NCCL_INCLUDE:-$(python3 -c 'import nvidia.nccl, os; print(os.path.join(list(nvidia.nccl.__path__)[0], "include"))' 2>/dev/null)}
build_with_cmake() {
  local prefix nccl=()
  prefix=$(python3 -c 'import torch; print(torch.utils.cmake_prefix_path)') || return 1
  [ -n "$NCCL_INCLUDE" ] && [ -f "$NCCL_INCLUDE/nccl.h" ] && nccl=(-DTRAINPLAN_NCCL_INCLUDE="$NCCL_INCLUDE")
  cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DTRAINPLAN_TRAINER_ONLY=ON "${nccl[@]}" "$@" \
    -DCMAKE_PREFIX_PATH="$prefix" -DTRAINPLAN_EXTRA_INCLUDE="$PWD/$CARRY/include" >"$OUT/build.txt" 2>&1 &&
    cmake --build build-gpu -j "$(nproc)" >>"$OUT/build.txt" 2>&1
}
# Without CMake's Torch config: the compiler on the installation's headers and
# libraries (libtorch_cuda linked even though nothing names its symbols, or
# CUDA is never registered).
build_direct() {
  local tp abi flags libs gloo=""
  tp=$(python3 -c 'import torch, os; print(os.path.dirname(torch.__file__))') || return 1
  abi=$(python3 -c 'import torch; print(int(torch._C._GLIBCXX_USE_CXX11_ABI))')
  [ -f "$tp/include/gloo/allreduce.h" ] && gloo="-DUSE_C10D_GLOO -DTRAINPLAN_WITH_GLOO"
  flags="-O2 -std=c++20 -D_GLIBCXX_USE_CXX11_ABI=$abi -Isrc -I$tp/include -I$tp/include/torch/csrc/api/include -I$CARRY/include"
  libs="-L$tp/lib -Wl,-rpath,$tp/lib -Wl,--no-as-needed -ltorch_cuda -lc10_cuda -Wl,--as-needed -ltorch -ltorch_cpu -lc10"
  mkdir -p build-gpu
  c++ $flags $gloo -DTRAINPLAN_SOURCE_DATA_DIR=\"$DATA\" src/train/*.cpp -o build-gpu/trainplan-train $libs >>"$OUT/build.txt" 2>&1 &
  c++ $flags src/train/gemm_bench/main.cpp -o build-gpu/trainplan-gemm-bench $libs >>"$OUT/build.txt" 2>&1 &
  c++ $flags src/train/layer_bench/main.cpp -o build-gpu/trainplan-layer-bench $libs >>"$OUT/build.txt" 2>&1 &
  wait
  [ -x build-gpu/trainplan-train ]
}
if [ -n "${BIN_DIR:-}" ]; then
  BIN=$BIN_DIR
else
  log "building with CMake"
  if build_with_cmake; then
    log "built with CMake ($(grep -o 'with NCCL[^)]*)' "$OUT/build.txt" | head -1 || echo 'no NCCL'))"
  elif cp "$OUT/build.txt" "$OUT/build-nccl-failed.txt" && rm -rf build-gpu && build_with_cmake -DTRAINPLAN_WITH_NCCL=OFF; then
    log "built with CMake without NCCL (the NCCL build's errors: build-nccl-failed.txt)"
  elif cp "$OUT/build.txt" "$OUT/build-plain-failed.txt" && rm -rf build-gpu &&
    build_with_cmake -DTRAINPLAN_WITH_NCCL=OFF -DTRAINPLAN_CUDA_MEMORY_STATS=OFF; then
    log "built with CMake without NCCL and without the CUDA allocator's statistics (errors: build-*-failed.txt)"
  else
    log "CMake build failed (tail of build.txt below); building directly"
    tail -15 "$OUT/build.txt" | tee -a "$OUT/log.txt" >&2
    build_direct && log "built directly" || { log "direct build failed"; tail -30 "$OUT/build.txt" >&2; exit 1; }
  fi
  BIN=build-gpu
fi

# --- trials -----------------------------------------------------------------
# run_trial FILE WORKLOAD BATCH EPOCHS [trainer flags...]: one framed trial.
run_trial() {
  local file=$1 wl=$2 b=$3 e=$4
  shift 4
  local t0 rc
  t0=$(date +%s.%N)
  echo "{\"trial\":{\"workload\":\"$wl\",\"batch\":$b,\"workers\":1,\"epochs\":$e,\"flags\":\"$*\",\"pin\":\"${PIN:-}\"}}" >>"$OUT/$file"
  timeout 120 ${PIN:-} "$BIN/trainplan-train" --workload "$wl" --batch "$b" --epochs "$e" --device "$DEVICE" "$@" \
    >>"$OUT/$file" 2>>"$OUT/log.txt"
  rc=$?
  echo "{\"trial_end\":{\"rc\":$rc,\"wall_s\":$(awk "BEGIN{print $(date +%s.%N) - $t0}")}}" >>"$OUT/$file"
  [ $rc -eq 0 ] || log "trial $wl b=$b e=$e $* exited $rc"
}

if [ "${SUITE:-all}" = repeatability ]; then
  log "repeatability: alternating unpinned and pinned time trials"
  for i in 1 2 3 4 5 6; do
    for wl in lenet-mnist mlp-fashion; do
      for b in 64 512; do
        run_trial repeat.jsonl "$wl" "$b" 1 --time-only --warmup-steps 20 --min-steps 50 --max-steps 1000
        PIN="taskset -c 2" run_trial repeat.jsonl "$wl" "$b" 1 --time-only --warmup-steps 20 --min-steps 50 --max-steps 1000
      done
    done
    log "round $i done"
  done
  log "done"
  exit 0
fi

if [ "${SUITE:-all}" = llm ]; then
  log "collective backends: none, gloo, nccl (one worker: the group's own overhead)"
  for rep in 1 2; do
    for backend in auto gloo nccl; do
      for b in 64 1024; do
        run_trial backends.jsonl lenet-mnist "$b" 1 --time-only --warmup-steps 20 --min-steps 50 --max-steps 1000 \
          --backend "$backend" --master-port $((29600 + rep))
      done
    done
  done
  log "gemm bench"
  if [ "$DEVICE" = cuda ]; then
    timeout 90 "$BIN/trainplan-gemm-bench" --device cuda --dtype bf16 -o "$OUT/gemm-bf16.csv" 2>>"$OUT/log.txt" ||
      log "gemm bf16 exited $?"
  fi
  log "time-only trials (one pass)"
  for wl in lenet-mnist mlp-fashion; do
    for b in 16 64 256 1024; do
      run_trial timing.jsonl "$wl" "$b" 1 --time-only --warmup-steps 20 --min-steps 50 --max-steps 1000
    done
  done
  log "done"
  exit 0
fi

# run_gpt FILE RANKS [trainer flags...]: one framed GPT trial of RANKS processes
# sharing this machine's GPU(s); rank 0's output is kept, the others' errors go
# to the log.
run_gpt() {
  local file=$1 ranks=$2 t0 rc=0 k pids=()
  shift 2
  t0=$(date +%s.%N)
  echo "{\"trial\":{\"workload\":\"gpt\",\"ranks\":$ranks,\"flags\":\"$*\"}}" >>"$OUT/$file"
  local store
  store=$(mktemp -u /tmp/gpt-store.XXXXXX)
  for ((k = ranks - 1; k >= 0; k--)); do
    if [ "$k" = 0 ]; then
      timeout "${GPT_TRIAL_S:-150}" "$BIN/trainplan-train" --workload gpt --device "$DEVICE" --rank 0 \
        --store-path "$store" --corpus "$CORPUS" "$@" >>"$OUT/$file" 2>>"$OUT/log.txt" || rc=$?
    else
      timeout "${GPT_TRIAL_S:-150}" "$BIN/trainplan-train" --workload gpt --device "$DEVICE" --rank "$k" \
        --store-path "$store" --corpus "$CORPUS" "$@" >/dev/null 2>>"$OUT/log.txt" &
      pids+=($!)
    fi
  done
  for k in "${pids[@]}"; do wait "$k" || rc=$?; done
  rm -f "$store"
  echo "{\"trial_end\":{\"rc\":$rc,\"wall_s\":$(awk "BEGIN{print $(date +%s.%N) - $t0}")}}" >>"$OUT/$file"
  [ $rc -eq 0 ] || log "gpt trial ($ranks ranks) $* exited $rc"
}

# gpt_setup DEFAULT_BUDGET_S: what both GPT suites share: the corpus (Debian's
# licence texts, else the carried copy), the budget left() checks (GPT_BUDGET_S,
# default DEFAULT_BUDGET_S, seconds since the script started) and the time
# trials' flags.
gpt_setup() {
  CORPUS=${CORPUS:-/usr/share/common-licenses}
  [ -d "$CORPUS" ] || [ -f "$CORPUS" ] || CORPUS=$CARRY/corpus
  budget=${GPT_BUDGET_S:-$1}
  timed=(--time-only --precision bf16 --warmup-iterations 3 --min-iterations 10 --max-iterations 30 --threads 8)
}
left() { [ $(( $(date +%s) - START )) -lt "$budget" ]; }

if [ "${SUITE:-all}" = gpt-large ]; then
  # GPU-bound GPT configurations (large micro-batches and a 2.7B-like shape), to
  # add to SUITE=gpt's grid; until GPT_BUDGET_S (default 200) seconds have passed.
  gpt_setup 200
  if [ "$QUICK" = 1 ]; then
    big=(--layers 2 --hidden 128 --heads 4 --seq 64 --vocab 512); wide=(--layers 2 --hidden 160 --heads 4 --seq 64 --vocab 512)
    deep=(--layers 1 --hidden 256 --heads 8 --seq 64 --vocab 512); small=(--layers 2 --hidden 64 --heads 4 --seq 32 --vocab 512)
  else
    big=(--layers 24 --hidden 2048 --heads 16 --seq 2048 --vocab 50304)
    wide=(--layers 32 --hidden 2560 --heads 32 --seq 2048 --vocab 50304)
    deep=(--layers 8 --hidden 4096 --heads 32 --seq 2048 --vocab 50304)
    small=(--layers 24 --hidden 1024 --heads 16 --seq 1024 --vocab 50304)
  fi
  log "gpt-large: ${big[*]} and ${wide[*]}"
  left && run_gpt gpt-large.jsonl 1 "${big[@]}" --micro-batch 8 --global-batch 8 "${timed[@]}"
  left && run_gpt gpt-large.jsonl 1 "${big[@]}" --micro-batch 4 --global-batch 16 "${timed[@]}"
  for mb in 1 2 4; do left && run_gpt gpt-large.jsonl 1 "${wide[@]}" --micro-batch "$mb" --global-batch "$mb" "${timed[@]}"; done
  left && run_gpt gpt-large.jsonl 1 "${deep[@]}" --micro-batch 8 --global-batch 8 "${timed[@]}"
  left && run_gpt gpt-large.jsonl 1 "${small[@]}" --micro-batch 32 --global-batch 32 "${timed[@]}"
  log "done"
  exit 0
fi

if [ "${SUITE:-all}" = gpt ]; then
  # The GPT trainer on the GPU: a grid of single-GPU time trials in bf16 (shapes,
  # micro-batches, accumulation, sequence lengths), the same layouts over Gloo
  # between ranks that share the GPU, losses of one layout against others, and
  # repeats; in order of value, each stage skipped once GPT_BUDGET_S has passed.
  gpt_setup 330
  if [ "$QUICK" = 1 ]; then
    S1=(--layers 2 --hidden 64 --heads 4 --seq 32 --vocab 512); S2=(--layers 2 --hidden 128 --heads 4 --seq 64 --vocab 512)
    S3=(--layers 1 --hidden 256 --heads 8 --seq 64 --vocab 512); MBS="1 2 4"
  else
    S1=(--layers 24 --hidden 1024 --heads 16 --seq 1024 --vocab 50304)
    S2=(--layers 24 --hidden 2048 --heads 16 --seq 2048 --vocab 50304)
    S3=(--layers 8 --hidden 4096 --heads 32 --seq 2048 --vocab 50304); MBS="1 2 4 8 16"
  fi
  log "gpt: losses of tp1 against tp2, pp2, dp2 (fp32, 4 iterations, ranks sharing the device)"
  small=(--layers 4 --hidden 64 --heads 4 --seq 32 --micro-batch 2 --global-batch 8 --iterations 4 --seed 5)
  run_gpt losses.jsonl 1 "${small[@]}"
  run_gpt losses.jsonl 2 --tp 2 "${small[@]}"
  run_gpt losses.jsonl 2 --pp 2 "${small[@]}"
  run_gpt losses.jsonl 2 --dp 2 "${small[@]}"
  run_gpt losses.jsonl 1 "${small[@]}" --precision bf16
  log "gpt: shape 1 (${S1[*]}), micro-batches $MBS"
  for mb in $MBS; do left && run_gpt gpt-timing.jsonl 1 "${S1[@]}" --micro-batch "$mb" --global-batch "$mb" "${timed[@]}"; done
  left && run_gpt gpt-timing.jsonl 1 "${S1[@]}" --micro-batch 4 --global-batch 16 "${timed[@]}"
  left && run_gpt gpt-timing.jsonl 1 "${S1[@]}" --micro-batch 1 --global-batch 8 "${timed[@]}"
  log "gpt: shape 2 (${S2[*]})"
  for mb in 1 2 4; do left && run_gpt gpt-timing.jsonl 1 "${S2[@]}" --micro-batch "$mb" --global-batch "$mb" "${timed[@]}"; done
  left && run_gpt gpt-timing.jsonl 1 "${S2[@]}" --micro-batch 2 --global-batch 8 "${timed[@]}"
  log "gpt: shape 3 (${S3[*]})"
  for mb in 1 2 4; do left && run_gpt gpt-timing.jsonl 1 "${S3[@]}" --micro-batch "$mb" --global-batch "$mb" "${timed[@]}"; done
  log "gpt: sequence length at 8192 tokens (shape 1's layers and width)"
  if [ "$QUICK" != 1 ]; then
    for sm in "512 16" "2048 4" "4096 2"; do
      set -- $sm
      left && run_gpt gpt-timing.jsonl 1 --layers 24 --hidden 1024 --heads 16 --seq "$1" --vocab 50304 \
        --micro-batch "$2" --global-batch "$2" "${timed[@]}"
    done
  fi
  log "gpt: two ranks sharing the GPU through Gloo (host copies), shape 1 at micro-batch 4"
  for lay in "--tp 2" "--pp 2" "--dp 2"; do
    left && run_gpt gpt-shared.jsonl 2 $lay "${S1[@]}" --micro-batch 4 --global-batch 16 "${timed[@]}"
  done
  log "gpt: repeats of shape 1"
  for mb in 1 4 16; do left && run_gpt gpt-timing-repeat.jsonl 1 "${S1[@]}" --micro-batch "$mb" --global-batch "$mb" "${timed[@]}"; done
  log "done"
  exit 0
fi

if [ "$QUICK" = 1 ]; then
  BATCHES="64 256"; EPOCHS="1 2"; SUBSET="--train-subset 6000 --test-subset 1000"
else
  BATCHES="16 32 64 128 256 512 1024"; EPOCHS="1 5"; SUBSET=""
fi

log "time-only trials (each configuration twice)"
for rep in 1 2; do
  for wl in lenet-mnist mlp-fashion; do
    for b in $BATCHES; do
      run_trial timing.jsonl "$wl" "$b" 1 --time-only --warmup-steps 20 --min-steps 50 --max-steps 1000 $SUBSET
    done
  done
  log "time-only pass $rep done"
done

log "training trials: lenet-mnist"
for b in $BATCHES; do for e in $EPOCHS; do run_trial trials.jsonl lenet-mnist "$b" "$e" $SUBSET; done; done

log "gemm bench"
if [ "$DEVICE" = cuda ]; then
  timeout 90 "$BIN/trainplan-gemm-bench" --device cuda --dtype bf16 -o "$OUT/gemm-bf16.csv" 2>>"$OUT/log.txt" ||
    log "gemm bf16 exited $?"
  timeout 60 "$BIN/trainplan-gemm-bench" --device cuda --dtype fp32 --tokens 512,2048,8192 --hidden 1024,4096 \
    -o "$OUT/gemm-fp32.csv" 2>>"$OUT/log.txt" || log "gemm fp32 exited $?"
else
  timeout 60 "$BIN/trainplan-gemm-bench" --tokens 256 --hidden 512 --tp 1 --square 256 --min-batch-ms 5 \
    -o "$OUT/gemm-fp32.csv" 2>>"$OUT/log.txt" || log "gemm exited $?"
fi

log "training trials: mlp-fashion"
for b in $BATCHES; do for e in $EPOCHS; do run_trial trials.jsonl mlp-fashion "$b" "$e" $SUBSET; done; done

log "layer bench"
timeout 60 "$BIN/trainplan-layer-bench" --device "$DEVICE" --layers $([ "$QUICK" = 1 ] && echo 20 || echo 300) \
  -o "$OUT/layers.csv" 2>>"$OUT/log.txt" || log "layer bench exited $?"
log "done"
