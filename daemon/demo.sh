#!/usr/bin/env bash
# hubwatch's main job on the bundled replay hub: fakehub replays the incident fixtures' history
# (about a year of upstream commits in ~90 seconds) and `hubwatch serve` tracks every repo,
# logging revisions, changes and advisories as they arrive. Ctrl-C stops both cleanly.
#
# usage: daemon/demo.sh [--until-idle] [--seconds N]
#   --until-idle  run the replay to its end, then stop and print a summary
#   --seconds N   how long the replay lasts (default 90)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${HUBWATCH_BUILD_DIR:-$root/build}
until_idle=0 seconds=90
while [ $# -gt 0 ]; do
  case $1 in
    --until-idle) until_idle=1 ;;
    --seconds) seconds=$2; shift ;;
    -h|--help) sed -n '2,8p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "demo: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
  shift
done

# Builds if needed (a no-op when up to date).
if [ ! -f "$build/build.ninja" ]; then cmake -S "$root" -B "$build" -G Ninja >/dev/null; fi
cmake --build "$build" --target hubwatch fakehub >/dev/null

fixtures=$root/tests/fixtures/hub
read -r first last < <(python3 "$root/tests/fixtures/hub/tools/replay_span.py" "$fixtures")
speed=$(( (last - first) / seconds + 1 ))

work=$(mktemp -d /tmp/hubwatch-demo.XXXXXX)
hub_pid="" serve_pid=""
cleanup() {
  if [ -n "$serve_pid" ]; then kill -TERM "$serve_pid" 2>/dev/null || true; wait "$serve_pid" 2>/dev/null || true; fi
  if [ -n "$hub_pid" ]; then kill "$hub_pid" 2>/dev/null || true; wait "$hub_pid" 2>/dev/null || true; fi
}
trap cleanup EXIT
trap 'echo; echo "demo: stopping"; exit 0' INT TERM

"$build/bin/fakehub" --fixtures "$fixtures" --fixtures "$root/tests/fixtures/hub-derivatives" --mode replay --speed "$speed" --port 0 \
  --token hf_demo >"$work/fakehub.out" 2>&1 &
hub_pid=$!
for _ in $(seq 100); do grep -q "listening on" "$work/fakehub.out" && break; sleep 0.1; done
endpoint=$(grep -o 'http://127\.0\.0\.1:[0-9]*' "$work/fakehub.out" | head -1)
[ -n "$endpoint" ] || { cat "$work/fakehub.out"; exit 1; }

echo hf_demo >"$work/token"
head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$work/admin.token"
api_port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
api="http://127.0.0.1:$api_port"
repos=$(cd "$fixtures" && ls -d */*/ | sed 's#/$##' | grep -v '^tools' |
        sed 's/.*/{"id": "&"}/' | paste -sd, -)
# Two repos follow their derivatives (tests/fixtures/hub-derivatives: fine-tunes, an adapter, a
# GGUF quantization and a merge that copied upstream's files before or after its fixes).
for followed in meta-llama/Meta-Llama-3-8B-Instruct meta-llama/Llama-3.1-8B-Instruct; do
  repos=${repos/"{\"id\": \"$followed\"}"/"{\"id\": \"$followed\", \"derivatives\": true}"}
done
cat >"$work/hubwatch.json" <<JSON
{"store": "hubwatch.db", "hub": {"endpoint": "$endpoint", "token_file": "token"},
 "repos": [$repos], "poll": {"interval_s": 3, "settle_window_s": 0, "derivatives_interval_s": 5},
 "listen": "127.0.0.1:$api_port", "admin_token_file": "admin.token"}
JSON

config=$work/hubwatch.json
echo "demo: fakehub replays $(( (last - first) / 86400 )) days of Hub history at ${speed}x on $endpoint"
echo "demo: hubwatch serve --config $config   (Ctrl-C stops)"
echo "demo: open $api/ in a browser: every tracked model's page (e.g. $api/models/google/gemma-2-9b-it)"
echo "demo: in another shell, try (README's \"Your questions\" starts from this export):"
echo "  export API=$api CONFIG=$config"
echo "  curl -s $api/api/v1/repos"
echo "  curl -s '$api/api/v1/repos/meta-llama/Meta-Llama-3-8B-Instruct/changes?kind=config'"
echo "  curl -s $api/api/v1/advisories/feed.atom"
echo "  curl -sN $api/api/v1/stream                     # advisories as they are published"
echo "  curl -s $api/api/v1/repos/deepseek-ai/DeepSeek-R1-Distill-Qwen-7B/badge"
echo "  curl -s $api/api/v1/repos/meta-llama/Meta-Llama-3-8B-Instruct/derivatives"
echo "  $build/bin/hubwatch derivatives meta-llama/Meta-Llama-3-8B-Instruct --config $config"
echo "  curl -s -X POST $api/v1/query -d '{\"package\": {\"name\": \"mistralai/Mistral-7B-Instruct-v0.3\"}}'"
echo "  curl -s -H \"Authorization: Bearer \$(cat $work/admin.token)\" $api/api/v1/subscriptions"
echo "  $build/bin/hubwatch changes --config $config --kind chat_template"
echo "  $build/bin/hubwatch history meta-llama/Meta-Llama-3-8B-Instruct --config $config"

"$build/bin/hubwatch" serve --config "$config" &
serve_pid=$!

if [ "$until_idle" = 0 ]; then
  wait "$serve_pid"
  exit 0
fi
# Until the replay clock has passed the last commit, plus a few polls.
while :; do
  now=$(curl -s "$endpoint/_fakehub/clock" | python3 -c '
import json, sys
from datetime import datetime, timezone
now = json.load(sys.stdin)["now"][:19]
print(int(datetime.strptime(now, "%Y-%m-%dT%H:%M:%S").replace(tzinfo=timezone.utc).timestamp()))')
  [ "$now" -gt "$last" ] && break
  kill -0 "$serve_pid" 2>/dev/null || { echo "demo: hubwatch serve exited early"; exit 1; }
  sleep 1
done
sleep 8
kill -TERM "$serve_pid"
wait "$serve_pid"
serve_pid=""
echo
echo "demo: summary"
"$build/bin/hubwatch" changes --config "$config" --json | python3 -c '
import collections, json, sys
changes = json.load(sys.stdin)
repos = {c["repo"] for c in changes}
print(f"  {len(changes)} changes in {len(repos)} repos")
print("  by kind:   " + ", ".join(f"{k} {n}" for k, n in collections.Counter(c["kind"] for c in changes).most_common()))
print("  by impact: " + ", ".join(f"{k} {n}" for k, n in collections.Counter(c["impact"] for c in changes).most_common()))'
"$build/bin/hubwatch" advisories --config "$config" --export "$work/osv" | sed 's/^/  /'
echo "  derivatives of meta-llama/Meta-Llama-3-8B-Instruct:"
"$build/bin/hubwatch" derivatives meta-llama/Meta-Llama-3-8B-Instruct --config "$config" | sed 's/^/    /'
echo "  store: $work/hubwatch.db"
