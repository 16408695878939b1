#!/usr/bin/env bash
# End to end through the binaries: the fakehub executable serves the incident fixtures on
# loopback, `hubwatch poll-once` ingests every repo, a second poll finds nothing new, and every
# advisory `hubwatch advisories --export` writes is valid against the official OSV schema.
#
# usage: cli_end_to_end.sh HUBWATCH FAKEHUB REPO_ROOT
set -euo pipefail
hubwatch=$1 fakehub=$2 root=$3
work=$(mktemp -d)
trap 'kill $hub_pid 2>/dev/null || true; rm -rf "$work"' EXIT

"$fakehub" --fixtures "$root/tests/fixtures/hub" --port 0 --token hf_e2e >"$work/fakehub.out" 2>&1 &
hub_pid=$!
for _ in $(seq 50); do grep -q "listening on" "$work/fakehub.out" && break; sleep 0.1; done
endpoint=$(grep -o 'http://127\.0\.0\.1:[0-9]*' "$work/fakehub.out" | head -1)
[ -n "$endpoint" ] || { echo "fakehub did not start:"; cat "$work/fakehub.out"; exit 1; }

echo hf_e2e >"$work/token"
repos=$(cd "$root/tests/fixtures/hub" && ls -d */*/ | sed 's#/$##' | grep -v '^tools' |
        sed 's/.*/{"id": "&"}/' | paste -sd, -)
cat >"$work/hubwatch.json" <<JSON
{"store": "hubwatch.db", "hub": {"endpoint": "$endpoint", "token_file": "token"},
 "repos": [$repos], "poll": {"interval_s": 900}}
JSON

"$hubwatch" poll-once --config "$work/hubwatch.json" >"$work/first.txt" 2>"$work/first.log" || {
  echo "first poll failed:"; cat "$work/first.txt" "$work/first.log"; exit 1; }
cat "$work/first.txt"
grep -q "new revision" "$work/first.txt"
# A new process: the validators come from the store, so each unchanged repo is one 304.
"$hubwatch" poll-once --config "$work/hubwatch.json" --json >"$work/second.json" 2>/dev/null
python3 - "$work/second.json" <<'PY'
import json, sys
for r in json.load(open(sys.argv[1])):
    assert r["ok"] and not r["head_moved"], r
    assert r["requests"] == 1 and r["bytes_received"] <= 2048, r
print("second poll: every repo unchanged, 1 request and <= 2 KB each")
PY

"$hubwatch" advisories --config "$work/hubwatch.json" --export "$work/osv"
python3 "$root/tests/advisory/validate_osv.py" "$root/schema/osv-schema.json" --dir "$work/osv"
python3 - "$work/osv" <<'PY'
import json, os, sys
d = sys.argv[1]
listed = {e["id"] for e in json.load(open(os.path.join(d, "all.json")))}
files = {f[:-5] for f in os.listdir(d) if f.endswith(".json") and f != "all.json"}
assert listed == files and listed, (len(listed), len(files))
print(f"all.json lists the {len(files)} exported advisories")
PY
"$hubwatch" history google/gemma-2-9b-it --config "$work/hubwatch.json" >/dev/null
"$hubwatch" changes --config "$work/hubwatch.json" --kind config --json | python3 -c \
  'import json,sys; assert all(c["kind"] == "config" for c in json.load(sys.stdin))'
