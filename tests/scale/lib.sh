# Shared helpers for tests/scale/scale.sh, compare.sh and wire.sh (source, do not run).
# Loopback only: fakehub on 127.0.0.1 (CDN on 127.0.0.2), hubwatch's API on 127.0.0.1.
# WIRE picks what the clients (hubwatch, the peer) talk to:
#   clear    fakehub's listeners: cleartext HTTP/1.1 (the default)
#   tls-h1   nghttpx fronts (TLS, ALPN http/1.1 only) on 127.0.0.1:FRONT_PORT (Hub) and
#            127.0.0.2:CDN_FRONT_PORT (CDN), certificates of a test CA (tests/hub/make_test_pki.sh)
#   tls-h2   the same fronts offering ALPN h2,http/1.1
# fakehub's control endpoints (/_fakehub/...) are always read on its own listener (CONTROL).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
BIN=${BIN:-$ROOT/build/bin}
REPOS=${REPOS:-10000}
CONCURRENCY=${CONCURRENCY:-32}      # poll.max_concurrent = hub.max_concurrent = peer workers
QUOTA=10000000                      # api / resolvers quotas: rate limits must not dominate
# Replay clock frozen (--speed 0) at the instant the last repo's first commit appears
# (synthetic.cc: commit c of repo r is dated 2025-01-01 + 60 r + 3600 c). With 10,000 repos:
# 2025-01-07T22:39:00Z; every repo exists, repos <= 9939 have commit 1, repos <= 9879 commit 2.
# Advancing 3000 s gives exactly 100 repos a new revision (9880..9929 get commit 2, 9940..9989
# get commit 1), each a config.json change (num_hidden_layers). Needs REPOS >= 160.
REPLAY_START=$(date -u -d "@$((1735689600 + 60 * (REPOS - 1)))" +%Y-%m-%dT%H:%M:%SZ)
ADVANCE_S=3000
EXPECT_CHANGED=100
STEP_TIMEOUT_S=${STEP_TIMEOUT_S:-900}  # every wait loop below gives up after this
# Fixed ports: hubwatch's HTTP cache (ETags) is keyed by URL, so a store ingested by one run
# (INGESTED_DB) keeps its validators only against a fakehub on the same origin.
FAKEHUB_PORT=${FAKEHUB_PORT:-18931}
CDN_PORT=${CDN_PORT:-18932}
WIRE=${WIRE:-clear}
FRONT_PORT=${FRONT_PORT:-18933}
CDN_FRONT_PORT=${CDN_FRONT_PORT:-18934}
case "$WIRE" in
  clear | tls-h1 | tls-h2) ;;
  *) echo "WIRE is clear, tls-h1 or tls-h2, not $WIRE" >&2; exit 2 ;;
esac

WORK=${WORK:-$(mktemp -d /tmp/hubwatch-scale.XXXXXX)}
mkdir -p "$WORK"
PIDS=()
FRONT_PIDS=()
cleanup() {
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null || true; done
}
trap cleanup EXIT

now() { date +%s.%N; }
load() { cut -d' ' -f1-3 /proc/loadavg; }
# utime + stime of a process, in seconds.
cpu_s() { awk -v hz="$(getconf CLK_TCK)" '{print ($14 + $15) / hz}' "/proc/$1/stat"; }
hwm_kib() { awk '/^VmHWM/ {print $2}' "/proc/$1/status"; }
rss_kib() { awk '/^VmRSS/ {print $2}' "/proc/$1/status"; }

# FAKEHUB_ARGS: the mode and anything else (default: replay, clock frozen at REPLAY_START).
# Sets HUB (what clients use), CONTROL (fakehub's own listener) and, with TLS, CA_FILE.
start_fakehub() {
  local args=(${FAKEHUB_ARGS:---mode replay --speed 0 --replay-start $REPLAY_START})
  if [[ "$WIRE" != clear ]]; then
    args+=(--public-hub-url "https://127.0.0.1:$FRONT_PORT"
           --public-cdn-url "https://127.0.0.2:$CDN_FRONT_PORT")
  fi
  "$BIN/fakehub" --synthetic "$REPOS" --host 127.0.0.1 --port "$FAKEHUB_PORT" \
    --cdn-host 127.0.0.2 --cdn-port "$CDN_PORT" "${args[@]}" \
    --api-quota "$QUOTA" --resolvers-quota "$QUOTA" >"$WORK/fakehub.out" 2>"$WORK/fakehub.err" &
  FAKEHUB_PID=$!
  PIDS+=("$FAKEHUB_PID")
  for _ in $(seq 600); do
    HUB=$(sed -n 's/^fakehub listening on //p' "$WORK/fakehub.out")
    CONTROL=$HUB
    [[ -n "$HUB" ]] && { [[ "$WIRE" == clear ]] || start_fronts; return; }
    kill -0 "$FAKEHUB_PID" 2>/dev/null || { cat "$WORK/fakehub.err" >&2; return 1; }
    sleep 0.1
  done
  echo "fakehub did not start" >&2
  return 1
}
# nghttpx before each listener (see WIRE above); access logs in $WORK/front-*.log.
start_fronts() {
  bash "$ROOT/tests/hub/make_test_pki.sh" "$WORK/pki"
  CA_FILE=$WORK/pki/ca.pem
  local alpn=h2,http/1.1
  [[ "$WIRE" == tls-h1 ]] && alpn=http/1.1
  local spec host port backend
  for spec in "127.0.0.1 $FRONT_PORT $FAKEHUB_PORT" "127.0.0.2 $CDN_FRONT_PORT $CDN_PORT"; do
    read -r host port backend <<<"$spec"
    nghttpx --conf=/dev/null --single-process --workers=1 --frontend="$host,$port" \
      --backend="$host,$backend" --npn-list="$alpn" --no-via --no-location-rewrite --no-ocsp \
      --accesslog-file="$WORK/front-$host.log" \
      --accesslog-format='$protocol_version $remote_port $tls_session_reused $method $path $status' \
      --errorlog-file="$WORK/front-$host.err" "$WORK/pki/loopback.key" "$WORK/pki/loopback.pem" &
    PIDS+=($!)
    FRONT_PIDS+=($!)
  done
  for spec in "127.0.0.1 $FRONT_PORT" "127.0.0.2 $CDN_FRONT_PORT"; do
    read -r host port <<<"$spec"
    for _ in $(seq 500); do  # any HTTP answer through the front will do
      curl -s -o /dev/null --cacert "$CA_FILE" "https://$host:$port/" && break
      sleep 0.01
    done
  done
  HUB=https://127.0.0.1:$FRONT_PORT
}
# The fronts' access logs: {protocols: {HTTP/2: n, ...}, connections: distinct client ports}.
front_summary() {
  [[ "$WIRE" == clear ]] && { echo "-"; return; }
  awk '{p[$1]++; c[$2]++} END {printf "protocols:"; for (k in p) printf "%s=%d,", k, p[k];
       n = 0; for (k in c) n++; printf "connections:%d\n", n}' "$WORK"/front-127.0.0.1.log
}
front_clear_log() { [[ "$WIRE" == clear ]] || : >"$WORK/front-127.0.0.1.log"; }
fakehub_clear_log() { curl -sf -X DELETE "$CONTROL/_fakehub/log" >/dev/null; front_clear_log; }
# Summary of fakehub's request log: {requests, body_bytes, by_endpoint, distinct_repos, ...}.
fakehub_log_summary() {
  curl -sf "$CONTROL/_fakehub/log" | python3 "$ROOT/tests/scale/log_summary.py"
}
advance_clock() {
  curl -sf -X POST -d "{\"advance_seconds\": $1}" "$CONTROL/_fakehub/clock" >/dev/null
}

# write_config FILE INTERVAL_S: HINTS (off, or listing with RECONCILE_S), REPO_IDS (a file of
# ids, one a line; default synthetic/model-NNNNN), LISTEN, HOOK_SECRET_FILE.
write_config() {
  python3 - "$1" "$2" "$WORK/hubwatch.db" "$HUB" "$REPOS" "$CONCURRENCY" "$QUOTA" \
    "${HINTS:-off}" "${RECONCILE_S:-21600}" "${REPO_IDS:-}" "${LISTEN:-127.0.0.1:0}" \
    "${HOOK_SECRET_FILE:-}" "${CA_FILE:-}" <<'PY'
import json, sys
path, interval, store, hub, repos, conc, quota, hints, reconcile, ids, listen, hook, ca = sys.argv[1:]
repo_ids = (open(ids).read().split() if ids else
            ["synthetic/model-%05d" % r for r in range(int(repos))])
poll = {"interval_s": int(interval), "max_concurrent": int(conc), "settle_window_s": 0,
        "api_quota": int(quota), "resolvers_quota": int(quota), "hints": hints}
if hints != "off":
    poll["reconcile_interval_s"] = max(int(reconcile), int(interval))
config = {
    "store": store,
    "listen": listen,
    "hub": {"endpoint": hub, "max_concurrent": int(conc)},
    "repos": [{"id": i} for i in repo_ids],
    "poll": poll,
    "log": {"level": "info"},
}
if hook:
    config["hub"]["webhook_secret_file"] = hook
if ca:
    config["hub"]["ca_file"] = ca
json.dump(config, open(path, "w"), indent=1)
PY
}

start_hubwatch() {  # start_hubwatch CONFIG LOG
  HW_T0=$(now)
  "$BIN/hubwatch" serve --config "$1" 2>"$2" &
  HW_PID=$!
  PIDS+=("$HW_PID")
  for _ in $(seq $((STEP_TIMEOUT_S * 10))); do
    API=$(sed -n 's/.*API on \(127\.0\.0\.1:[0-9]*\).*/\1/p' "$2" | head -1)
    [[ -n "$API" ]] && { API=http://$API; HW_T_READY=$(now); return 0; }
    kill -0 "$HW_PID" 2>/dev/null || { tail "$2" >&2; return 1; }
    sleep 0.1
  done
  return 1
}
stop_hubwatch() {
  kill -TERM "$HW_PID"
  wait "$HW_PID" || true
}
metric() {  # metric NAME -> sum of every series of NAME (0 when absent)
  curl -sf "$API/metrics" | awk -v n="$1" '$1 == n || index($1, n "{") == 1 {s += $NF} END {printf "%.0f\n", s}'
}
# wait_metric NAME TARGET: polls /metrics every 0.1 s until NAME >= TARGET (bounded).
wait_metric() {
  local deadline=$(( $(date +%s) + STEP_TIMEOUT_S ))
  while (( $(metric "$1") < $2 )); do
    (( $(date +%s) < deadline )) || { echo "timeout waiting for $1 >= $2" >&2; return 1; }
    sleep 0.1
  done
}

# Forces a full cycle at the next start: every repo due now (the store is not open: daemon stopped).
reset_schedule() { sqlite3 "$WORK/hubwatch.db" "UPDATE repos SET next_poll_at = 0"; }
max_seq() { sqlite3 -readonly "$WORK/hubwatch.db" "SELECT coalesce(max(seq), 0) FROM advisories"; }

# ingest: a fresh store, interval 3600 s so each repo is polled exactly once; every repo is due at
# once (never polled). Ends when polls_total reaches REPOS. Prints one line of key=value.
ingest() {
  rm -f "$WORK"/hubwatch.db*
  write_config "$WORK/ingest.json" 3600
  fakehub_clear_log
  local load0; load0=$(load)
  start_hubwatch "$WORK/ingest.json" "$WORK/ingest.log"
  local cpu_ready; cpu_ready=$(cpu_s "$HW_PID")
  wait_metric hubwatch_polls_total "$REPOS"
  local t1 cpu1 hwm revs adv reqs rx
  t1=$(now); cpu1=$(cpu_s "$HW_PID"); hwm=$(hwm_kib "$HW_PID")
  revs=$(metric hubwatch_revisions_ingested_total); adv=$(metric hubwatch_advisories_published_total)
  reqs=$(metric hubwatch_hub_requests_total); rx=$(metric hubwatch_hub_bytes_received_total)
  stop_hubwatch
  fakehub_log_summary >"$WORK/ingest.requests.json"
  INGEST="startup_s=$(echo "$HW_T_READY - $HW_T0" | bc) startup_cpu_s=$cpu_ready"
  INGEST+=" cycle_s=$(echo "$t1 - $HW_T_READY" | bc) cycle_cpu_s=$(echo "$cpu1 - $cpu_ready" | bc)"
  INGEST+=" vm_hwm_kib=$hwm revisions=$revs advisories=$adv hub_requests=$reqs bytes_received=$rx"
  INGEST+=" load_before=\"$load0\" load_after=\"$(load)\""
  echo "ingest: $INGEST"
}

# steady_cycle INTERVAL_S: restarts hubwatch over the ingested store with every repo due at once,
# and measures until polls_total reaches REPOS. Leaves hubwatch running (HW_PID, API).
steady_cycle() {
  reset_schedule
  write_config "$WORK/steady.json" "$1"
  fakehub_clear_log
  local load0; load0=$(load)
  start_hubwatch "$WORK/steady.json" "$WORK/steady.log"
  local cpu_ready; cpu_ready=$(cpu_s "$HW_PID")
  wait_metric hubwatch_polls_total "$REPOS"
  local t1 cpu1 hwm reqs rx tx
  t1=$(now); cpu1=$(cpu_s "$HW_PID"); hwm=$(hwm_kib "$HW_PID")
  reqs=$(metric hubwatch_hub_requests_total); rx=$(metric hubwatch_hub_bytes_received_total)
  tx=$(metric hubwatch_hub_bytes_sent_total)
  fakehub_log_summary >"$WORK/steady.requests.json"
  STEADY="startup_s=$(echo "$HW_T_READY - $HW_T0" | bc) startup_cpu_s=$cpu_ready"
  STEADY+=" cycle_s=$(echo "$t1 - $HW_T_READY" | bc) cycle_cpu_s=$(echo "$cpu1 - $cpu_ready" | bc)"
  STEADY+=" process_cpu_s=$cpu1 vm_hwm_kib=$hwm hub_requests=$reqs"
  STEADY+=" bytes_received=$rx bytes_sent=$tx"
  STEADY+=" requests_per_repo=$(echo "scale=3; $reqs / $REPOS" | bc)"
  STEADY+=" bytes_received_per_repo=$(echo "scale=1; $rx / $REPOS" | bc)"
  STEADY+=" bytes_sent_per_repo=$(echo "scale=1; $tx / $REPOS" | bc)"
  STEADY+=" fakehub=$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print("requests:%d,body_bytes:%d,distinct_repos:%d,connections:%d,if_none_match:%d,statuses:%s" % (d["requests"], d["body_bytes"], d["distinct_repos"], d["connections"], d["if_none_match"], "/".join(k+"x"+str(v) for k,v in d["statuses"].items())))' "$WORK/steady.requests.json")"
  STEADY+=" load_before=\"$load0\" load_after=\"$(load)\""
  echo "steady: $STEADY"
}
