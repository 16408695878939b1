#!/usr/bin/env bash
# Load test of the HTTP API with wrk on loopback: the pinned badge and a revisions page.
# Not run by CI. Needs wrk (Debian: apt-get install wrk).
#
# usage: tests/api/bench_api.sh BUILD_DIR [DURATION_S] [CONNECTIONS] [THREADS]
#   e.g. tests/api/bench_api.sh build 10 64 2
set -euo pipefail
build=${1:?usage: bench_api.sh BUILD_DIR [DURATION_S] [CONNECTIONS] [THREADS]}
duration=${2:-10}
connections=${3:-64}
threads=${4:-2}
command -v wrk >/dev/null || { echo "bench_api.sh: wrk is not installed" >&2; exit 1; }

out=$(mktemp)
"$build/bin/api_bench_server" >"$out" &
server=$!
trap 'kill $server 2>/dev/null; wait $server 2>/dev/null; rm -f "$out"' EXIT
for _ in $(seq 100); do grep -q '^revisions ' "$out" && break; sleep 0.1; done
grep -q '^revisions ' "$out" || { echo "bench_api.sh: the server did not start" >&2; exit 1; }

for name in badge revisions; do
  url=$(awk -v n="$name" '$1 == n {print $2}' "$out")
  result=$(wrk -t"$threads" -c"$connections" -d"${duration}s" --latency "$url")
  rps=$(awk '/^Requests\/sec:/ {print $2}' <<<"$result")
  p50=$(awk '$1 == "50%" {print $2}' <<<"$result")
  p99=$(awk '$1 == "99%" {print $2}' <<<"$result")
  errors=$(awk '/Non-2xx|Socket errors/ {print}' <<<"$result")
  printf '%-10s %10s req/s   p50 %8s   p99 %8s   %s\n' "$name" "$rps" "$p50" "$p99" "${errors:-no errors}"
done
