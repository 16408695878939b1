#!/usr/bin/env bash
# Load test of the model page with wrk on loopback: google/gemma-2-9b-it with 20 revisions
# (page_server --history 18), every request an ETag miss (wrk sends no If-None-Match), no gzip.
# Not run by CI. Needs wrk (Debian: apt-get install wrk).
#
# usage: tests/page/bench_page.sh BUILD_DIR [DURATION_S] [CONNECTIONS] [THREADS]
set -euo pipefail
build=${1:?usage: bench_page.sh BUILD_DIR [DURATION_S] [CONNECTIONS] [THREADS]}
duration=${2:-10}
connections=${3:-32}
threads=${4:-1}
command -v wrk >/dev/null || { echo "bench_page.sh: wrk is not installed" >&2; exit 1; }
out=$(mktemp)
"$build/bin/page_server" --history 18 >"$out" &
server=$!
trap 'kill $server 2>/dev/null; wait $server 2>/dev/null; rm -f "$out"' EXIT
for _ in $(seq 300); do grep -q '^base ' "$out" && break; sleep 0.1; done
base=$(awk '$1 == "base" {print $2}' "$out")
[ -n "$base" ] || { echo "bench_page.sh: the server did not start" >&2; exit 1; }
wrk -t"$threads" -c"$connections" -d"${duration}s" --latency "$base/models/google/gemma-2-9b-it"
