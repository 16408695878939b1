#!/usr/bin/env bash
# Crash safety of `hubwatch serve`: fakehub replays the bundled fixture history while
# two daemons track every repo against it - a clean one, and one killed with SIGKILL KILLS times
# at random moments (during ingestion and webhook delivery) and restarted each time. Both
# deliver webhooks to one receiver on 127.0.0.1 that fails some deliveries with 500. When the
# replay has ended and both outboxes are drained, both stop (SIGTERM) and compare_stores.py
# checks the killed store against the clean one (same revisions, changes and advisory ids, no
# duplicates) and the receiver's log (each advisory delivered exactly once after dedupe by
# webhook-id, none missing).
#
# usage: tests/crash/kill_serve.sh BUILD_DIR KILLS [REPLAY_SECONDS]
#   REPLAY_SECONDS  how long the replay lasts (default: max(15, 2 * KILLS))
#   CRASH_SEED=N    replays a run's random choices (printed at the start)
#   CRASH_KEEP=1    keeps the scratch directory
# Loopback only. Exit status 0: no difference; 1: a difference or a failure (printed).
set -euo pipefail
if [ $# -lt 2 ]; then sed -n '11,15p' "$0" | sed 's/^# \{0,1\}//'; exit 2; fi
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build=$(cd "$1" && pwd)
kills=$2
seconds=${3:-$(( 2 * kills > 15 ? 2 * kills : 15 ))}
seed=${CRASH_SEED:-$(( (RANDOM << 15) | RANDOM ))}
RANDOM=$seed
hubwatch=$build/bin/hubwatch fakehub=$build/bin/fakehub
for b in "$hubwatch" "$fakehub"; do
  [ -x "$b" ] || { echo "crash: $b is missing (build the hubwatch and fakehub targets)"; exit 1; }
done
echo "crash: $kills kills over a ${seconds}s replay, seed $seed"

fixtures=$root/tests/fixtures/hub
read -r first last < <(python3 "$root/tests/fixtures/hub/tools/replay_span.py" "$fixtures")
speed=$(( (last - first) / seconds + 1 ))

work=$(mktemp -d /tmp/hubwatch-crash.XXXXXX)
hub_pid="" receiver_pid="" clean_pid="" killed_pid=""
stop() {  # stop PID SIGNAL: signals one process this script started and reaps it
  if [ -n "$1" ]; then kill "-$2" "$1" 2>/dev/null || true; wait "$1" 2>/dev/null || true; fi
}
cleanup() {
  stop "$killed_pid" KILL; stop "$clean_pid" KILL; stop "$receiver_pid" TERM; stop "$hub_pid" TERM
  if [ "${CRASH_KEEP:-0}" = 1 ]; then echo "crash: kept $work"; else rm -rf "$work"; fi
}
trap cleanup EXIT
fail() {
  echo "crash: FAILED: $*"
  for f in "$work"/killed.log "$work"/clean.log; do
    [ -f "$f" ] && { echo "--- tail of $f"; tail -n 20 "$f"; }
  done
  exit 1
}

"$fakehub" --fixtures "$fixtures" --mode replay --speed "$speed" --port 0 --token hf_crash \
  --api-quota 10000000 --resolvers-quota 10000000 >"$work/fakehub.out" 2>&1 &
hub_pid=$!
python3 "$here/receiver.py" "$work/receiver.jsonl" "$work/receiver.port" 0.2 "$seed" &
receiver_pid=$!
for _ in $(seq 100); do
  grep -q "listening on" "$work/fakehub.out" && [ -s "$work/receiver.port" ] && break
  sleep 0.1
done
endpoint=$(grep -o 'http://127\.0\.0\.1:[0-9]*' "$work/fakehub.out" | head -1)
[ -n "$endpoint" ] || fail "fakehub did not start: $(cat "$work/fakehub.out")"
[ -s "$work/receiver.port" ] || fail "the receiver did not start"
receiver="http://127.0.0.1:$(cat "$work/receiver.port")"

echo hf_crash >"$work/token"
echo whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw >"$work/hook.secret"
repos=$(cd "$fixtures" && ls -d */*/ | sed 's#/$##' | grep -v '^tools' |
        sed 's/.*/{"id": "&"}/' | paste -sd, -)
for run in clean killed; do
  cat >"$work/$run.json" <<JSON
{"store": "$run.db", "hub": {"endpoint": "$endpoint", "token_file": "token"},
 "repos": [$repos],
 "poll": {"interval_s": 1, "settle_window_s": 0, "api_quota": 10000000, "resolvers_quota": 10000000},
 "listen": "127.0.0.1:0",
 "subscriptions": [{"url": "$receiver/$run", "secret_file": "hook.secret", "min_impact": "cosmetic",
                    "backfill": true}],
 "webhooks": {"allow_private_targets": true, "timeout_s": 5}}
JSON
done

"$hubwatch" serve --config "$work/clean.json" >>"$work/clean.log" 2>&1 &
clean_pid=$!
start_killed() {
  echo "=== start" >>"$work/killed.log"
  "$hubwatch" serve --config "$work/killed.json" >>"$work/killed.log" 2>&1 &
  killed_pid=$!
}
rand_ms() { echo $(( $1 + RANDOM % ($2 - $1 + 1) )); }  # uniform in [$1, $2]
sleep_ms() { sleep "$(printf '%d.%03d' $(( $1 / 1000 )) $(( $1 % 1000 )))"; }

# Half the kills come soon after a start (the catch-up poll and the pending deliveries), the
# others anywhere in a window sized so that the kills span the replay.
long_ms=$(( 4000 * seconds / kills - 800 )); [ "$long_ms" -gt 1000 ] || long_ms=1000
start_killed
for i in $(seq "$kills"); do
  if (( RANDOM % 2 )); then delay=$(rand_ms 30 800); else delay=$(rand_ms 30 "$long_ms"); fi
  sleep_ms "$delay"
  kill -0 "$clean_pid" 2>/dev/null || fail "the clean daemon exited"
  kill -0 "$killed_pid" 2>/dev/null || fail "the killed daemon exited on its own before kill $i"
  kill -KILL "$killed_pid"; wait "$killed_pid" 2>/dev/null || true
  echo "=== SIGKILL $i after ${delay}ms" >>"$work/killed.log"
  sleep_ms "$(rand_ms 0 400)"  # down for a while: commits pile up
  start_killed
done
echo "crash: $kills kills done; waiting for the replay to end and the outboxes to drain"

clock() {
  curl -sf "$endpoint/_fakehub/clock" | python3 -c '
import json, sys
from datetime import datetime, timezone
now = json.load(sys.stdin)["now"][:19]
print(int(datetime.strptime(now, "%Y-%m-%dT%H:%M:%S").replace(tzinfo=timezone.utc).timestamp()))'
}
state() {  # revisions changes advisories undelivered-outbox-rows of a store
  python3 - "$1" <<'PY'
import sqlite3, sys
try:
    db = sqlite3.connect(f"file:{sys.argv[1]}?mode=ro", uri=True, timeout=5)
    print(*db.execute("SELECT (SELECT count(*) FROM revisions), (SELECT count(*) FROM changes), "
                      "(SELECT count(*) FROM advisories), "
                      "(SELECT count(*) FROM outbox WHERE state != 'delivered')").fetchone())
except sqlite3.Error as e:
    print("error", e)
PY
}
deadline=$(( SECONDS + seconds + 120 ))
while [ "$(clock)" -le "$last" ]; do
  [ $SECONDS -lt $deadline ] || fail "the replay did not end"
  sleep 0.5
done
sleep 3  # a few polls past the last commit
stable=0 previous=""
while [ $SECONDS -lt $deadline ]; do
  kill -0 "$killed_pid" 2>/dev/null || fail "the killed daemon exited on its own"
  c=$(state "$work/clean.db") k=$(state "$work/killed.db")
  if [ "$c" = "$k" ] && [ "${c##* }" = 0 ] && [ "$c" = "$previous" ]; then
    stable=$(( stable + 1 )); [ $stable -ge 2 ] && break
  else
    stable=0
  fi
  previous=$c
  sleep 1
done
echo "crash: clean (revisions changes advisories undelivered): $c; killed: $k"

kill -TERM "$clean_pid" "$killed_pid"
wait "$clean_pid" || fail "the clean daemon exited with status $? on SIGTERM"
clean_pid=""
wait "$killed_pid" || fail "the killed daemon exited with status $? on SIGTERM"
killed_pid=""
status=0
python3 "$here/compare_stores.py" "$work/clean.db" "$work/killed.db" "$work/receiver.jsonl" \
  /clean /killed || status=1
# The CLI reads the killed store like the clean one.
for cmd in "changes --json" "advisories --json"; do
  a=$("$hubwatch" $cmd --config "$work/clean.json" | python3 -c 'import json,sys; print(len(json.load(sys.stdin)))')
  b=$("$hubwatch" $cmd --config "$work/killed.json" | python3 -c 'import json,sys; print(len(json.load(sys.stdin)))')
  [ "$a" = "$b" ] || { echo "crash: hubwatch $cmd: $a rows clean, $b killed"; status=1; }
done
[ $status = 0 ] && echo "crash: PASSED ($kills kills, seed $seed, ${SECONDS}s)" || fail "differences above (seed $seed)"
