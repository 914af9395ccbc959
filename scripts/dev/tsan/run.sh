#!/usr/bin/env bash
# ThreadSanitizer on the server's connection front alone (src/server/deadline_server.cpp):
# slow clients from 127.0.0.1 fill its threads for 8 s while quick ones ask from
# 127.0.0.1 and 127.0.0.2. The whole suite under TSan takes over an hour to build here;
# this builds in seconds. httplib's compiled library is not instrumented, so what it
# reports of its own is suppressed; anything reported in our code fails the run.
#   scripts/dev/tsan/run.sh
set -euo pipefail
cd "$(dirname "$0")/../../.."
out=$(mktemp -d)
clang++ -std=c++20 -O1 -g -fsanitize=thread -Isrc scripts/dev/tsan/deadline_server_share.cpp \
  src/server/deadline_server.cpp -lcpp-httplib -lfmt -lpthread -o "$out/harness"
printf 'called_from_lib:libcpp-httplib.so.0.11\nrace:libcpp-httplib.so.0.11\n' > "$out/supp"
TSAN_OPTIONS="halt_on_error=1 report_signal_unsafe=0 suppressions=$out/supp" "$out/harness"
