#!/usr/bin/env bash
# ctest driver: starts the fakehub executable on loopback (port 0), runs crosscheck.mjs with the
# official @huggingface/hub client against it, stops fakehub. Fails, never skips, when Node or
# node_modules is missing.
# usage: run_crosscheck.sh FAKEHUB_BINARY FIXTURES_DIR
set -euo pipefail
fakehub=$1
fixtures=$2
here=$(cd "$(dirname "$0")" && pwd)

if ! command -v node >/dev/null; then
  echo "FAIL: node is not installed (.ci/setup installs nodejs)" >&2
  exit 1
fi
if [ ! -d "$here/node_modules/@huggingface/hub" ]; then
  echo "FAIL: $here/node_modules is missing: run 'npm ci --prefix $here' (.ci/setup does this)" >&2
  exit 1
fi

token=hf_jscrosscheck_token
out=$(mktemp)
"$fakehub" --fixtures "$fixtures" --host 127.0.0.1 --port 0 --cdn-host 127.0.0.2 \
  --token "$token:crosscheck" >"$out" 2>&1 &
pid=$!
trap 'kill $pid 2>/dev/null || true; wait $pid 2>/dev/null || true; rm -f "$out"' EXIT
for _ in $(seq 1 100); do
  grep -q "fakehub listening on" "$out" && break
  kill -0 $pid 2>/dev/null || { cat "$out" >&2; echo "FAIL: fakehub exited" >&2; exit 1; }
  sleep 0.1
done
url=$(sed -n 's/^fakehub listening on //p' "$out")
[ -n "$url" ] || { cat "$out" >&2; echo "FAIL: fakehub did not start" >&2; exit 1; }
node "$here/crosscheck.mjs" "$url" "$token"
