#!/usr/bin/env bash
# ctest's browser test (docs/WEB.md): starts `trainplan serve` on a free port,
# drives its page in headless chromium (page_test.mjs), stops the server.
# Usage: tests/browser/run_page_test.sh TRAINPLAN SAMPLES_CSV OUT_DIR [GPU_SAMPLES_CSV]
# GPU_SAMPLES_CSV: samples measured on a catalog GPU (the H200), moved to
# another on the Another GPU tab.
# Exit 77 (ctest: skipped) when chromium, node or tests/browser/node_modules
# is missing, saying which and how to install it.
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
trainplan="$1" samples="$2" out="$3" gpu_samples="${4:-}"
chromium="${TRAINPLAN_CHROMIUM:-/usr/bin/chromium}"
skip() { echo "SKIP: $1"; exit 77; }
[ -x "$chromium" ] || skip "no chromium at $chromium (install it with scripts/install-deps.sh or apt-get install chromium; TRAINPLAN_CHROMIUM names another)"
command -v node >/dev/null || skip "no node (scripts/install-deps.sh installs it; apt-get install nodejs npm)"
[ -d "$here/node_modules/puppeteer-core" ] || skip "no puppeteer-core in $here/node_modules (run: cd tests/browser && npm ci; scripts/install-deps.sh does)"
mkdir -p "$out"
log="$out/serve.log"
# A log left by an earlier run would give its port to the loop below, which
# can read the file before the new server's shell truncates it.
rm -f "$log"
# --max-fits 3: the page meets an id the server let go of (page_test.mjs).
"$trainplan" serve --host 127.0.0.1 --port 0 --max-fits 3 >"$log" 2>&1 &
server=$!
trap 'kill "$server" 2>/dev/null; wait "$server" 2>/dev/null' EXIT
url=""
for _ in $(seq 1 100); do
  url=$(grep -o 'http://127.0.0.1:[0-9]*' "$log" 2>/dev/null | head -1)
  [ -n "$url" ] && break
  kill -0 "$server" 2>/dev/null || { echo "trainplan serve exited:"; cat "$log"; exit 1; }
  sleep 0.1
done
[ -n "$url" ] || { echo "trainplan serve did not start listening:"; cat "$log"; exit 1; }
echo "server at $url"
node "$here/page_test.mjs" --url "$url/" --trainplan "$trainplan" --samples "$samples" --out "$out" \
  ${gpu_samples:+--gpu-samples "$gpu_samples"}
