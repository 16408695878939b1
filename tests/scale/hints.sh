#!/usr/bin/env bash
# Change hints at scale (issue 15, BENCHMARKS.md "Change hints"), side by side in one run over one
# fakehub: REPOS (10,000) tracked synthetic repos over OWNERS (1,000) owners, skewed as on the
# Hub; CHURN (300) untracked background changes a minute in the Hub-wide listing; static mode, so
# nothing tracked changes unless this script pushes a commit (POST /_fakehub/repos/.../commit).
#   1. ingest: every repo polled once, hints off
#   2. per-repo: hints off, interval LISTING_S: one full unchanged cycle (today's cost per interval)
#   3. hints: hints on, listing every LISTING_S, reconcile every RECONCILE_S with the schedule
#      spread over that window as in a steady state; WINDOWS listing intervals measured: requests
#      (fakehub's log), CPU, RSS
#   4. freshness by listing: PUSHES commits to tracked repos at once; seconds until each is stored
#   5. freshness by webhook: fakehub sends the Hub's webhook to hubwatch for each pushed commit
#   6. the @huggingface/hub peer at equal freshness: one cycle polling every repo (poll mode), and
#      one interval of its listing mode (listModels on the Hub-wide feed, then the moved repos)
# usage: tests/scale/hints.sh   (env: REPOS, OWNERS, CHURN, LISTING_S, RECONCILE_S, WINDOWS, BIN)
# Writes $WORK/hints.txt.
OWNERS=${OWNERS:-1000}
CHURN=${CHURN:-300}
LISTING_S=${LISTING_S:-60}
RECONCILE_S=${RECONCILE_S:-21600}
WINDOWS=${WINDOWS:-5}
PUSHES=${PUSHES:-5}
HW_PORT=${HW_PORT:-18941}
source "$(dirname "$0")/lib.sh"
HOOK_SECRET=hints-bench-webhook-secret
printf '%s\n' "$HOOK_SECRET" >"$WORK/hook.secret"
FAKEHUB_ARGS="--mode static --owners $OWNERS --churn $CHURN"
FAKEHUB_ARGS+=" --webhook http://127.0.0.1:$HW_PORT/api/v1/hub-webhooks --webhook-secret $HOOK_SECRET"
LISTEN=127.0.0.1:$HW_PORT
echo "work dir $WORK; load $(load); repos $REPOS over $OWNERS owners; churn $CHURN/min"
start_fakehub
echo "fakehub $HUB (pid $FAKEHUB_PID)"

# The tracked ids: every synthetic repo in the listing (the churn repos are not tracked).
python3 - "$HUB" >"$WORK/repo_ids.txt" <<'PY'
import json, re, sys, urllib.request
url = sys.argv[1] + "/api/models?sort=id&limit=1000&expand=sha"
while url:
    with urllib.request.urlopen(url) as r:
        for m in json.load(r):
            if not m["id"].startswith("churn-"):
                print(m["id"])
        link = re.search(r'<([^>]+)>;\s*rel="next"', r.headers.get("Link") or "")
        url = link.group(1) if link else None
PY
REPO_IDS=$WORK/repo_ids.txt
[[ $(wc -l <"$REPO_IDS") == "$REPOS" ]] || { echo "listed $(wc -l <"$REPO_IDS") repos" >&2; exit 1; }
echo "owners: $(cut -d/ -f1 "$REPO_IDS" | sort -u | wc -l), largest $(cut -d/ -f1 "$REPO_IDS" | sort | uniq -c | sort -rn | head -1)"

# 1. ingest, 2. today's per-repo cycle at the listing interval.
HINTS=off ingest
HINTS=off steady_cycle "$LISTING_S"
stop_hubwatch
PER_REPO_CPU=$(sed 's/.* cycle_cpu_s=\([^ ]*\).*/\1/' <<<"$STEADY")
PER_REPO_REQ=$(jq .requests "$WORK/steady.requests.json")

# 3. hints on, in a steady state: each repo's next reconcile somewhere in the window.
sqlite3 "$WORK/hubwatch.db" \
  "UPDATE repos SET next_poll_at = strftime('%s','now') + abs(random() % $RECONCILE_S)"
HINTS=listing write_config "$WORK/hints.json" "$LISTING_S"
start_hubwatch "$WORK/hints.json" "$WORK/hints.log"
wait_metric hubwatch_listing_rounds_total 1          # the first round sets the watermark
sleep 2
fakehub_clear_log
c0=$(cpu_s "$HW_PID"); t0=$(now); p0=$(metric hubwatch_polls_total)
l0=$(metric hubwatch_listing_requests_total)
sleep $((WINDOWS * LISTING_S))
c1=$(cpu_s "$HW_PID"); t1=$(now); p1=$(metric hubwatch_polls_total)
l1=$(metric hubwatch_listing_requests_total)
fakehub_log_summary >"$WORK/hints.requests.json"
HINT_REQ=$(jq .requests "$WORK/hints.requests.json")
HINT_CPU=$(echo "$c1 - $c0" | bc)
MODE=$(curl -sf "$API/metrics" | awk '/^hubwatch_listing_mode\{/ && $2 == 1 {print $1}')
RATE=$(metric hubwatch_listing_feed_rate)
HINTS_LINE="seconds=$(echo "$t1 - $t0" | bc) intervals=$WINDOWS requests=$HINT_REQ"
HINTS_LINE+=" listing_requests=$((l1 - l0)) polls=$((p1 - p0)) cpu_s=$HINT_CPU"
HINTS_LINE+=" vm_rss_kib=$(rss_kib "$HW_PID") vm_hwm_kib=$(hwm_kib "$HW_PID") mode=$MODE feed_rate~$RATE"
HINTS_LINE+=" requests_per_interval=$(echo "scale=1; $HINT_REQ / $WINDOWS" | bc)"
HINTS_LINE+=" requests_per_repo_per_interval=$(echo "scale=5; $HINT_REQ / $WINDOWS / $REPOS" | bc)"
HINTS_LINE+=" load=\"$(load)\""
echo "hints: $HINTS_LINE"

# 4./5. freshness: push commits to PUSHES tracked repos; seconds until each revision is stored.
push_and_time() {  # push_and_time LABEL: pushes to PUSHES repos, prints the latencies
  local picks; picks=$(shuf -n "$PUSHES" --random-source=<(yes) "$REPO_IDS")
  local -A before pushed_at
  for id in $picks; do
    before[$id]=$(curl -sf "$API/api/v1/repos/$id/revisions?limit=1000" | jq '.revisions | length')
    curl -sf -X POST -d "{\"title\": \"$1 bench\", \"files\": {\"config.json\": \"{\\\"architectures\\\": [\\\"LlamaForCausalLM\\\"], \\\"model_type\\\": \\\"llama\\\", \\\"hidden_size\\\": 256, \\\"num_hidden_layers\\\": 9, \\\"vocab_size\\\": 1024, \\\"rope_theta\\\": $RANDOM}\\n\"}}" \
      "$HUB/_fakehub/repos/$id/commit" >/dev/null
    pushed_at[$id]=$(now)
  done
  local out="" deadline=$(( $(date +%s) + 3 * LISTING_S + 30 ))
  for id in $picks; do
    while (( $(curl -sf "$API/api/v1/repos/$id/revisions?limit=1000" | jq '.revisions | length') <= ${before[$id]} )); do
      (( $(date +%s) < deadline )) || { echo "timeout: $id not stored" >&2; exit 1; }
      sleep 0.05
    done
    out+=" $(echo "$(now) - ${pushed_at[$id]}" | bc | xargs printf '%.2f')"
  done
  echo "$out"
}
LISTING_LAT=$(push_and_time listing)
MISSES=$(metric hubwatch_hint_misses_total)
echo "listing freshness (s):$LISTING_LAT misses=$MISSES"
stop_hubwatch

HOOK_SECRET_FILE=$WORK/hook.secret HINTS=listing write_config "$WORK/hook.json" "$LISTING_S"
start_hubwatch "$WORK/hook.json" "$WORK/hook.log"
wait_metric hubwatch_listing_rounds_total 1
HOOK_LAT=$(push_and_time webhook)
HOOKS=$(metric hubwatch_hints_used_total)
echo "webhook freshness (s):$HOOK_LAT hints_used=$HOOKS misses=$(metric hubwatch_hint_misses_total)"
stop_hubwatch

# 6. the peer: poll mode (every repo each interval), then listing mode, over the same fakehub.
PEER=$ROOT/tests/scale/peer
if [[ ! -d "$PEER/node_modules/@huggingface/hub" ]]; then
  mkdir -p "$WORK/peer"
  cp "$PEER/poller.mjs" "$WORK/peer/"
  ln -sfn "$ROOT/tests/hub/js/node_modules" "$WORK/peer/node_modules"
  PEER=$WORK/peer
fi
run_peer() {  # run_peer MODE: cycle 1 learns the heads, cycle 2 (after LISTING_S) is measured
  local out=$WORK/peer-$1.out
  rm -f "$WORK/peer.in"; mkfifo "$WORK/peer.in"
  PEER_IDS=$REPO_IDS HF_ENDPOINT=$HUB node "$PEER/poller.mjs" --mode "$1" "$REPOS" "$CONCURRENCY" 2 \
    <"$WORK/peer.in" >"$out" 2>"$WORK/peer-$1.err" &
  local pid=$!
  PIDS+=("$pid")
  exec 3>"$WORK/peer.in"
  local deadline=$(( $(date +%s) + STEP_TIMEOUT_S ))
  while (( $(wc -l <"$out") < 2 )); do
    (( $(date +%s) < deadline )) && kill -0 "$pid" 2>/dev/null || { cat "$WORK/peer-$1.err" >&2; exit 1; }
    sleep 0.1
  done
  sleep "$LISTING_S"                               # the churn of one interval
  fakehub_clear_log
  echo go >&3
  while (( $(wc -l <"$out") < 3 )); do
    (( $(date +%s) < deadline )) && kill -0 "$pid" 2>/dev/null || { cat "$WORK/peer-$1.err" >&2; exit 1; }
    sleep 0.1
  done
  exec 3>&-
  wait "$pid" || true
  echo "$(sed -n 3p "$out") fakehub_requests=$(fakehub_log_summary | jq .requests)"
}
PEER_POLL=$(run_peer poll)
echo "peer poll: $PEER_POLL"
PEER_LIST=$(run_peer listing)
echo "peer listing: $PEER_LIST"

ratio() { echo "scale=1; $1 / $2" | bc; }
P_CPU=$(jq -r .cpu_s <<<"${PEER_POLL%% fakehub*}"); P_HWM=$(jq -r .vm_hwm_kib <<<"${PEER_POLL%% fakehub*}")
L_CPU=$(jq -r .cpu_s <<<"${PEER_LIST%% fakehub*}"); L_HWM=$(jq -r .vm_hwm_kib <<<"${PEER_LIST%% fakehub*}")
HW_CPU_INTERVAL=$(echo "scale=4; $HINT_CPU / $WINDOWS" | bc)
HW_RSS=$(sed 's/.* vm_hwm_kib=\([^ ]*\).*/\1/' <<<"$HINTS_LINE")
{
  echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "machine: $(nproc) cores, $(awk '/MemTotal/ {print int($2 / 1024)}' /proc/meminfo) MiB; node $(node --version)"
  echo "repos: $REPOS owners: $OWNERS churn: $CHURN/min listing: ${LISTING_S}s reconcile: ${RECONCILE_S}s"
  echo "ingest: $INGEST"
  echo "per-repo cycle (hints off): $STEADY"
  echo "hints: $HINTS_LINE"
  echo "listing freshness (s):$LISTING_LAT misses=$MISSES"
  echo "webhook freshness (s):$HOOK_LAT"
  echo "peer poll cycle: $PEER_POLL"
  echo "peer listing interval: $PEER_LIST"
  printf "%-28s %12s %12s %12s\n" "per ${LISTING_S} s interval" "requests" "cpu_s" "vm_hwm_kib"
  printf "%-28s %12s %12s %12s\n" "hubwatch, hints off" "$PER_REPO_REQ" "$PER_REPO_CPU" "-"
  printf "%-28s %12s %12s %12s\n" "hubwatch, hints" "$(echo "scale=1; $HINT_REQ / $WINDOWS" | bc)" "$HW_CPU_INTERVAL" "$HW_RSS"
  printf "%-28s %12s %12s %12s\n" "peer, poll" "$(sed 's/.*fakehub_requests=//' <<<"$PEER_POLL")" "$P_CPU" "$P_HWM"
  printf "%-28s %12s %12s %12s\n" "peer, listing" "$(sed 's/.*fakehub_requests=//' <<<"$PEER_LIST")" "$L_CPU" "$L_HWM"
  echo "cpu: hints off / hints = $(ratio "$PER_REPO_CPU" "$HW_CPU_INTERVAL")x;" \
    "peer poll / hints = $(ratio "$P_CPU" "$HW_CPU_INTERVAL")x;" \
    "peer listing / hints = $(ratio "$L_CPU" "$HW_CPU_INTERVAL")x"
  echo "memory: peer poll / hints = $(ratio "$P_HWM" "$HW_RSS")x;" \
    "peer listing / hints = $(ratio "$L_HWM" "$HW_RSS")x"
} | tee "$WORK/hints.txt"
