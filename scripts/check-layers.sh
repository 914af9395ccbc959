#!/usr/bin/env bash
# Fails when a source file includes a header from a layer above its own.
#
# The layer order is read from the fenced ```layers block in
# docs/ARCHITECTURE.md, highest layer first, one rank per line. A file in
# src/<layer>/ may include headers of its own layer and of any layer on a
# lower line; layers on the same line may not include each other. A folder
# under src/ that the block does not name is an error too, so a new folder
# must be placed in the order before it can be used.
# Usage: scripts/check-layers.sh   (exit 0: clean; 1: violations, listed)
set -euo pipefail
cd "$(dirname "$0")/.."
order=$(awk '/^```layers/{on=1;next} /^```/{on=0} on' docs/ARCHITECTURE.md)
if [ -z "$order" ]; then
  echo "check-layers: no \`\`\`layers block in docs/ARCHITECTURE.md" >&2
  exit 1
fi
declare -A rank
n=$(printf '%s\n' "$order" | wc -l)
i=0
while read -r line; do
  for layer in $line; do rank[$layer]=$((n - i)); done
  i=$((i + 1))
done <<< "$order"
bad=0
for dir in src/*/; do
  layer=$(basename "$dir")
  if [ -z "${rank[$layer]:-}" ]; then
    echo "src/$layer/: folder not placed in docs/ARCHITECTURE.md's layer order"
    bad=1
  fi
done
while IFS=: read -r file lineno text; do
  own=$(echo "$file" | cut -d/ -f2)
  dep=$(echo "$text" | sed -E 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"([a-z_]+)\/.*/\1/')
  [ "$dep" = "$own" ] && continue
  [ -z "${rank[$own]:-}" ] && continue
  if [ -z "${rank[$dep]:-}" ]; then
    echo "$file:$lineno: includes \"$dep/...\", a folder outside the layer order"
    bad=1
  elif [ "${rank[$dep]}" -ge "${rank[$own]}" ]; then
    echo "$file:$lineno: layer '$own' includes '$dep', which is not below it: ${text#*#include }"
    bad=1
  fi
done < <(grep -rnE '^[[:space:]]*#[[:space:]]*include[[:space:]]*"[a-z_]+/' src --include='*.h' --include='*.cpp')
if [ $bad -ne 0 ]; then
  echo "check-layers: FAILED (order in docs/ARCHITECTURE.md)" >&2
  exit 1
fi
echo "check-layers: ${#rank[@]} layers, no include goes upward"
