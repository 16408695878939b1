#!/usr/bin/env bash
# Load test of the model page with wrk on loopback: google/gemma-2-9b-it with 20 revisions
# (page_server --history 18), every request an ETag miss (wrk sends no If-None-Match), no gzip.
# Two runs: every request rendered (--no-page-cache), then as `serve` runs, with the rendered
# page kept under its ETag. Not run by CI. Needs wrk (Debian: apt-get install wrk).
#
# usage: tests/page/bench_page.sh BUILD_DIR [DURATION_S] [CONNECTIONS] [THREADS]
set -euo pipefail
build=${1:?usage: bench_page.sh BUILD_DIR [DURATION_S] [CONNECTIONS] [THREADS]}
duration=${2:-10}
connections=${3:-32}
threads=${4:-1}
command -v wrk >/dev/null || { echo "bench_page.sh: wrk is not installed" >&2; exit 1; }
run() {
  local out server base
  out=$(mktemp)
  "$build/bin/page_server" --history 18 "$@" >"$out" &
  server=$!
  for _ in $(seq 300); do grep -q '^base ' "$out" && break; sleep 0.1; done
  base=$(awk '$1 == "base" {print $2}' "$out")
  if [ -z "$base" ]; then
    echo "bench_page.sh: the server did not start" >&2
    kill $server 2>/dev/null
    exit 1
  fi
  echo "=== page_server --history 18 $*"
  wrk -t"$threads" -c"$connections" -d"${duration}s" --latency "$base/models/google/gemma-2-9b-it"
  kill $server
  wait $server 2>/dev/null || true
  rm -f "$out"
}
run --no-page-cache
run
