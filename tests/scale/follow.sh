#!/usr/bin/env bash
# Follow rules at the scale of a large owner (issue 33): `hubwatch serve` with one rule,
# {"owner": "synthetic"}, over fakehub serving REPOS (default 2,000) repos of that owner in static
# mode with CHURN untracked changes a minute elsewhere on the Hub, the listing every LISTING_S
# (default 10) seconds. Measures, in one run:
#   1. adding the rule: the repos tracked, "tracked" events, advisories published (goal: 0),
#      the walk's listing requests against the Hub's pages of the owner (ceil(REPOS / 1000)),
#      the time until every repo is tracked and until every one is baselined (polled once);
#   2. NEW (default 3) repos the owner creates one after another (POST /_fakehub/repos/.../commit
#      on an id that does not exist): the time from the creation to the "tracked" event on
#      GET /api/v1/stream and to its baseline revision in the store (goal: LISTING_S + 5 s);
#   3. hubwatch's peak RSS.
# Writes $WORK/follow.txt. Env: BIN (build dir's bin), REPOS, LISTING_S, NEW, CHURN, WORK.
#
#   cmake --build build-rel --target hubwatch fakehub && BIN=build-rel/bin tests/scale/follow.sh
set -euo pipefail
REPOS=${REPOS:-2000}
LISTING_S=${LISTING_S:-10}
NEW=${NEW:-3}
CHURN=${CHURN:-300}
source "$(dirname "$0")/lib.sh"
FAKEHUB_ARGS="--mode static --churn $CHURN"
echo "work dir $WORK; load $(load); $REPOS repos of owner synthetic; listing every $LISTING_S s"
start_fakehub
echo "fakehub $HUB (pid $FAKEHUB_PID)"

printf 'follow-bench-admin-token\n' >"$WORK/admin"
python3 - "$WORK/follow.json" "$WORK/hubwatch.db" "$HUB" "$LISTING_S" "$QUOTA" "$WORK/admin" <<'PY'
import json, sys
path, store, hub, interval, quota, admin = sys.argv[1:]
json.dump({
    "store": store, "listen": "127.0.0.1:0", "admin_token_file": admin,
    "hub": {"endpoint": hub, "max_concurrent": 16},
    "follow": [{"owner": "synthetic", "max_repos": 100000}],
    "poll": {"hints": "listing", "interval_s": int(interval), "reconcile_interval_s": 21600,
             "max_concurrent": 16, "settle_window_s": 0, "api_quota": int(quota),
             "resolvers_quota": int(quota), "max_followed_repos": 100000},
    "log": {"level": "info"},
}, open(path, "w"), indent=1)
PY

fakehub_clear_log
start_hubwatch "$WORK/follow.json" "$WORK/follow.log"
T_START=$HW_T0
echo "hubwatch ready in $(echo "$HW_T_READY - $HW_T0" | bc) s (pid $HW_PID)"
curl -sN "$API/api/v1/stream" >"$WORK/stream.txt" &
PIDS+=("$!")

follows() { curl -sf -H "Authorization: Bearer follow-bench-admin-token" "$API/api/v1/follows"; }
tracked() { follows | python3 -c 'import json,sys; print(json.load(sys.stdin)["tracked"])'; }
deadline=$(( $(date +%s) + STEP_TIMEOUT_S ))
until (( $(tracked) >= REPOS )); do
  (( $(date +%s) < deadline )) || { echo "timeout: $(tracked) of $REPOS tracked" >&2; exit 1; }
  sleep 0.1
done
T_TRACKED=$(now)
wait_metric hubwatch_polls_total "$REPOS"
T_BASELINED=$(now)
sleep 1  # a poll's store write lands after its metrics
db() { sqlite3 -readonly "$WORK/hubwatch.db" "$1"; }
EVENTS=$(db "SELECT count(*) FROM follow_events WHERE kind = 'tracked'")
ADVISORIES=$(db "SELECT count(*) FROM advisories")
ONE_REVISION=$(db "SELECT count(*) FROM (SELECT repo FROM revisions GROUP BY repo HAVING count(*) = 1)")
WALK_REQUESTS=$(metric hubwatch_follow_requests_total)
OWNER_LISTINGS=$(curl -sf "$CONTROL/_fakehub/log" | python3 -c '
import json, sys
log = json.load(sys.stdin)
items = log if isinstance(log, list) else log.get("requests", [])
print(sum(1 for r in items if r.get("path") == "/api/models" and "author=synthetic" in r.get("query", "")))')
PAGES=$(( (REPOS + 999) / 1000 ))

# New repos of the owner, one at a time.
NEW_LINES=()
for i in $(seq "$NEW"); do
  id="synthetic/fresh-$i"
  t0=$(now)
  curl -sf -X POST "$CONTROL/_fakehub/repos/$id/commit" \
    -d '{"files": {"config.json": "{\"model_type\": \"llama\", \"hidden_size\": 64}"}}' >/dev/null
  until grep -q "\"repo\":\"$id\"" "$WORK/stream.txt"; do
    (( $(echo "$(now) - $t0 < $LISTING_S + 60" | bc) )) || { echo "timeout: $id" >&2; exit 1; }
    sleep 0.05
  done
  t1=$(now)
  until [[ "$(db "SELECT count(*) FROM revisions WHERE repo = '$id'")" == 1 ]]; do
    (( $(echo "$(now) - $t0 < $LISTING_S + 60" | bc) )) || { echo "timeout: $id baseline" >&2; exit 1; }
    sleep 0.05
  done
  t2=$(now)
  NEW_LINES+=("$(printf '%s: announced %.2f s, baselined %.2f s after its creation' \
    "$id" "$(echo "$t1 - $t0" | bc)" "$(echo "$t2 - $t0" | bc)")")
done
HWM=$(hwm_kib "$HW_PID")
NEW_ADVISORIES=$(db "SELECT count(*) FROM advisories")

{
  echo "follow.sh $(date -u +%FT%TZ): $REPOS repos of one owner, listing every $LISTING_S s, churn $CHURN/min"
  echo "machine: $(nproc) cores; load at the end $(load); binaries $BIN"
  printf 'ready %.2f s after start\n' "$(echo "$HW_T_READY - $T_START" | bc)"
  printf 'all %d tracked %.2f s after start; all baselined (polled once) %.2f s after start\n' \
    "$REPOS" "$(echo "$T_TRACKED - $T_START" | bc)" "$(echo "$T_BASELINED - $T_START" | bc)"
  echo "tracked events: $EVENTS; advisories: $ADVISORIES; repos with exactly one revision: $ONE_REVISION"
  echo "walk requests (hubwatch_follow_requests_total): $WALK_REQUESTS; the Hub's pages of the owner: $PAGES"
  echo "listing requests for author=synthetic over the whole run (walk + rounds): $OWNER_LISTINGS"
  for l in "${NEW_LINES[@]}"; do echo "$l"; done
  echo "advisories after the new repos: $NEW_ADVISORIES"
  echo "hubwatch peak RSS: $(( HWM / 1024 )) MiB"
} | tee "$WORK/follow.txt"
