#!/usr/bin/env bash
# 100,000 repos on one box (issue 33, BENCHMARKS.md "Issue 33: 100,000 repos on one box"):
# hubwatch serve over fakehub with REPOS (100,000) synthetic repos over OWNERS (10,000) owners,
# CHURN (300) untracked changes a minute in the Hub-wide listing, hints on (listing every
# LISTING_S), static mode (nothing tracked moves). Loopback only.
#   1. registered: a fresh store, the configuration written (every repo registered), the daemon
#      stopped at once: start-up time on a fresh store, bytes per repo with no history
#   2. ingest (skipped with INGESTED_DB): every repo polled once, hints off. fakehub serves
#      COMMITS (1) commit per repo and TENSORS (0) tensors, so one poll reads one revision and
#      no weights header: the fastest honest way to a store at the Hub's heads
#   3. the measured run, hints on, each repo's next reconcile spread over RECONCILE_S as in a
#      steady state: time to an answering API, WINDOWS listing intervals (requests per repo from
#      fakehub's log, CPU), a SIGHUP that changes one repo (signal to the "reloaded" line, and to
#      the API showing it), PAGES (1,000) page and API requests; VmHWM over all of it (the goal)
#   4. /metrics: size and series; wrk (32 connections, WRK_S s each) on the bounded routes; one
#      request each to the unpaged lists (/, /index.json, /api/v1/repos), last: they grow the heap
# usage: tests/scale/hub_scale.sh   (env: REPOS OWNERS CHURN LISTING_S RECONCILE_S WINDOWS
#        PAGES WRK_S COMMITS TENSORS SOURCE BIN WORK INGESTED_DB; INGESTED_DB=$WORK/ingested.db
#        reuses an ingest, its ids in $INGESTED_DB.ids; SOURCE=api measures the repos as the
#        API's, the configuration listing one; INGEST_ONLY=1 stops after the ingest)
# Writes $WORK/hub_scale.txt.
REPOS=${REPOS:-100000}
OWNERS=${OWNERS:-10000}
CHURN=${CHURN:-300}
LISTING_S=${LISTING_S:-60}
RECONCILE_S=${RECONCILE_S:-21600}
WINDOWS=${WINDOWS:-1}
PAGES=${PAGES:-1000}
WRK_S=${WRK_S:-5}
COMMITS=${COMMITS:-1}
TENSORS=${TENSORS:-0}
HW_PORT=${HW_PORT:-18951}
source "$(dirname "$0")/lib.sh"
FAKEHUB_ARGS="--mode static --owners $OWNERS --churn $CHURN"
FAKEHUB_ARGS+=" --synthetic-commits $COMMITS --synthetic-tensors $TENSORS"
echo "work dir $WORK; load $(load); repos $REPOS over $OWNERS owners; churn $CHURN/min"
t0=$(now)
start_fakehub
FAKEHUB_LINE="startup_s=$(echo "$(now) - $t0" | bc) vm_hwm_kib=$(hwm_kib "$FAKEHUB_PID")"
echo "fakehub $HUB (pid $FAKEHUB_PID): $FAKEHUB_LINE"

# The tracked ids: every synthetic repo in the listing (the churn repos are not tracked).
if [[ -n "${INGESTED_DB:-}" && -f "$INGESTED_DB.ids" ]]; then
  cp "$INGESTED_DB.ids" "$WORK/repo_ids.txt"
else
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
fi
REPO_IDS=$WORK/repo_ids.txt
[[ $(wc -l <"$REPO_IDS") == "$REPOS" ]] || { echo "listed $(wc -l <"$REPO_IDS") repos" >&2; exit 1; }

# file size of the store with its WAL folded in (the daemon stopped), and bytes per repo.
store_size() {
  sqlite3 "$1" "PRAGMA wal_checkpoint(TRUNCATE)" >/dev/null
  local bytes; bytes=$(stat -c %s "$1")
  echo "bytes=$bytes bytes_per_repo=$(echo "$bytes / $REPOS" | bc)" \
    "revisions=$(sqlite3 -readonly "$1" 'SELECT count(*) FROM revisions')"
}

# 1. registered: the start writes every repo; stopped as soon as the API answers.
rm -f "$WORK"/hubwatch.db*
write_config "$WORK/register.json" 3600
start_hubwatch "$WORK/register.json" "$WORK/register.log"
REG_POLLS=$(metric hubwatch_polls_total)
REG_HWM=$(hwm_kib "$HW_PID")
stop_hubwatch
REGISTERED="startup_s=$(echo "$HW_T_READY - $HW_T0" | bc) vm_hwm_kib=$REG_HWM polls=$REG_POLLS"
REGISTERED+=" $(store_size "$WORK/hubwatch.db")"
echo "registered: $REGISTERED"

# 2. ingest (or the cached store).
if [[ -n "${INGESTED_DB:-}" ]]; then
  cp "$INGESTED_DB" "$WORK/hubwatch.db"
  INGEST="skipped (INGESTED_DB=$INGESTED_DB)"
else
  HINTS=off ingest
  cp "$WORK/hubwatch.db" "$WORK/ingested.db"
  cp "$REPO_IDS" "$WORK/ingested.db.ids"
fi
INGESTED_SIZE=$(store_size "$WORK/hubwatch.db")
echo "ingested store: $INGESTED_SIZE"
[[ -n "${INGEST_ONLY:-}" ]] && { echo "ingest: $INGEST" >"$WORK/hub_scale.txt"; exit 0; }

# 3. the measured run: a steady state of hints (each repo's reconcile somewhere in the window).
# SOURCE=api: the repos are the API's (source "api" in the store) and the configuration lists
# only the first, the one the reload changes.
sqlite3 "$WORK/hubwatch.db" \
  "UPDATE repos SET next_poll_at = strftime('%s','now') + abs(random() % $RECONCILE_S)"
CONFIG_IDS=$REPO_IDS
if [[ "${SOURCE:-config}" == api ]]; then
  sqlite3 "$WORK/hubwatch.db" "UPDATE repos SET source = 'api'"
  head -1 "$REPO_IDS" >"$WORK/config_ids.txt"
  CONFIG_IDS=$WORK/config_ids.txt
fi
LISTEN=127.0.0.1:$HW_PORT HINTS=listing REPO_IDS=$CONFIG_IDS write_config "$WORK/hints.json" \
  "$LISTING_S"
API=http://127.0.0.1:$HW_PORT
t0=$(now)
"$BIN/hubwatch" serve --config "$WORK/hints.json" 2>"$WORK/hints.log" &
HW_PID=$!
PIDS+=("$HW_PID")
until curl -sf -o /dev/null "$API/readyz"; do
  kill -0 "$HW_PID" 2>/dev/null || { tail "$WORK/hints.log" >&2; exit 1; }
  (( $(echo "$(now) - $t0 < $STEP_TIMEOUT_S" | bc) )) || { echo "no API" >&2; exit 1; }
  sleep 0.02
done
READY_S=$(echo "$(now) - $t0" | bc)
START="ready_s=$READY_S cpu_s=$(cpu_s "$HW_PID") vm_hwm_kib=$(hwm_kib "$HW_PID")"
echo "start: $START"

wait_metric hubwatch_listing_rounds_total 1           # the first round sets the watermark
sleep 2
fakehub_clear_log
c0=$(cpu_s "$HW_PID"); t0=$(now); p0=$(metric hubwatch_polls_total)
l0=$(metric hubwatch_listing_requests_total); r0=$(metric hubwatch_hub_requests_total)
sleep $((WINDOWS * LISTING_S))
c1=$(cpu_s "$HW_PID"); t1=$(now); p1=$(metric hubwatch_polls_total)
l1=$(metric hubwatch_listing_requests_total); r1=$(metric hubwatch_hub_requests_total)
fakehub_log_summary >"$WORK/hints.requests.json"
REQ=$(jq .requests "$WORK/hints.requests.json")
MODE=$(curl -sf "$API/metrics" | awk '/^hubwatch_listing_mode\{/ && $2 == 1 {print $1}')
LISTING="seconds=$(echo "$t1 - $t0" | bc) intervals=$WINDOWS fakehub_requests=$REQ"
LISTING+=" hub_requests_metric=$((r1 - r0)) listing_requests=$((l1 - l0)) polls=$((p1 - p0))"
LISTING+=" cpu_s=$(echo "$c1 - $c0" | bc) mode=$MODE"
LISTING+=" requests_per_repo_per_interval=$(echo "scale=5; $REQ / $WINDOWS / $REPOS" | bc)"
LISTING+=" vm_rss_kib=$(rss_kib "$HW_PID") vm_hwm_kib=$(hwm_kib "$HW_PID") load=\"$(load)\""
echo "listing: $LISTING"

# SIGHUP with one repo changed (a pin added to the first repo).
PINNED=$(head -1 "$REPO_IDS")
python3 - "$WORK/hints.json" "$PINNED" <<'PY'
import json, sys
path, repo = sys.argv[1:]
c = json.load(open(path))
for r in c["repos"]:
    if r["id"] == repo:
        r["pins"] = ["0123456789abcdef0123456789abcdef01234567"]
json.dump(c, open(path, "w"), indent=1)
PY
before=$(grep -c 'reloaded:' "$WORK/hints.log" || true)
c0=$(cpu_s "$HW_PID"); t0=$(now)
kill -HUP "$HW_PID"
until (( $(grep -c 'reloaded:' "$WORK/hints.log" || true) > before )); do
  (( $(echo "$(now) - $t0 < $STEP_TIMEOUT_S" | bc) )) || { echo "no reload" >&2; exit 1; }
  sleep 0.01
done
t_log=$(now)
PIN_JQ='.pins | map(.pin) | index("0123456789abcdef0123456789abcdef01234567")'
until curl -sf "$API/api/v1/repos/$PINNED" | jq -e "$PIN_JQ" >/dev/null; do
  (( $(echo "$(now) - $t0 < $STEP_TIMEOUT_S" | bc) )) || { echo "pin not shown" >&2; exit 1; }
  sleep 0.01
done
t_api=$(now)
RELOAD="to_log_s=$(echo "$t_log - $t0" | bc) to_api_s=$(echo "$t_api - $t0" | bc)"
RELOAD+=" cpu_s=$(echo "$(cpu_s "$HW_PID") - $c0" | bc) vm_hwm_kib=$(hwm_kib "$HW_PID")"
echo "reload: $RELOAD ($(grep 'reloaded:' "$WORK/hints.log" | tail -1 | cut -c1-120))"

# PAGES requests over the bounded pages and API routes, 8 at once, ids spread over the list.
: >"$WORK/pages.curl"
for ((i = 0; i < PAGES; i++)); do
  id=$(sed -n "$(( (i * 7919) % REPOS + 1 ))p" "$REPO_IDS")
  case $((i % 4)) in
    0) u=/models/$id ;;
    1) u=/api/v1/repos/$id ;;
    2) u=/api/v1/repos/$id/changes ;;
    3) u="/changes?repo=$id" ;;
  esac
  printf 'url = "%s%s"\noutput = /dev/null\nwrite-out = "%%{http_code}\\n"\n' "$API" "$u" \
    >>"$WORK/pages.curl"
done
t0=$(now)
curl -s --parallel --parallel-max 8 -K "$WORK/pages.curl" >"$WORK/pages.codes"
PAGES_LINE="requests=$PAGES seconds=$(echo "$(now) - $t0" | bc)"
PAGES_LINE+=" statuses=$(sort "$WORK/pages.codes" | uniq -c | awk '{print $2 "x" $1}' | paste -sd,)"
PAGES_LINE+=" vm_hwm_kib=$(hwm_kib "$HW_PID")"
echo "pages: $PAGES_LINE"
GOAL_HWM=$(hwm_kib "$HW_PID")

# 4. /metrics, wrk on the bounded routes, the unpaged lists once each.
curl -sf "$API/metrics" >"$WORK/metrics.txt"
METRICS="bytes=$(wc -c <"$WORK/metrics.txt") series=$(grep -vc '^#' "$WORK/metrics.txt")"
METRICS+=" families=$(grep -c '^# TYPE' "$WORK/metrics.txt")"
METRICS+=" repo_labels=$(grep -c 'repo=' "$WORK/metrics.txt" || true)"
echo "metrics: $METRICS"
WRK_ID=$(sed -n "$((REPOS / 2))p" "$REPO_IDS")
: >"$WORK/wrk.txt"
for u in /readyz /metrics "/models/$WRK_ID" "/api/v1/repos/$WRK_ID" /changes \
         "/api/v1/advisories?limit=100"; do
  out=$(wrk -t2 -c32 -d"${WRK_S}s" --latency "$API$u")
  p99=$(awk '$1 == "99%" {print $2}' <<<"$out")
  p50=$(awk '$1 == "50%" {print $2}' <<<"$out")
  rps=$(awk '/^Requests\/sec/ {print $2}' <<<"$out")
  errs=$(awk '/Non-2xx|Socket errors/ {print}' <<<"$out" | paste -sd' ')
  echo "wrk $u: p50=$p50 p99=$p99 req_s=$rps ${errs:+($errs)}" | tee -a "$WORK/wrk.txt"
done
echo "vm_hwm after wrk: $(hwm_kib "$HW_PID") KiB" | tee -a "$WORK/wrk.txt"
: >"$WORK/unpaged.txt"
for u in /api/v1/repos /index.json /; do
  out=$(curl -s -o /dev/null --max-time 300 -w '%{http_code} %{time_total} %{size_download}' \
    "$API$u")
  echo "unpaged $u: status/seconds/bytes=$out vm_hwm_kib=$(hwm_kib "$HW_PID")" \
    | tee -a "$WORK/unpaged.txt"
done
FAKEHUB_END="cpu_s=$(cpu_s "$FAKEHUB_PID") vm_hwm_kib=$(hwm_kib "$FAKEHUB_PID")"
stop_hubwatch

{
  echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ) checkout: $(git -C "$ROOT" rev-parse --short HEAD)" \
    "binary: $BIN/hubwatch ($(stat -c %y "$BIN/hubwatch" | cut -c1-19))"
  echo "machine: $(nproc) cores, $(awk '/MemTotal/ {print int($2 / 1024)}' /proc/meminfo) MiB"
  echo "repos: $REPOS owners: $OWNERS churn: $CHURN/min listing: ${LISTING_S}s" \
    "reconcile: ${RECONCILE_S}s commits: $COMMITS tensors: $TENSORS source: ${SOURCE:-config}"
  echo "fakehub: $FAKEHUB_LINE; at the end $FAKEHUB_END"
  echo "registered: $REGISTERED"
  echo "ingest: $INGEST"
  echo "ingested store: $INGESTED_SIZE"
  echo "start: $START"
  echo "listing: $LISTING"
  echo "reload: $RELOAD"
  echo "pages: $PAGES_LINE"
  echo "metrics: $METRICS"
  cat "$WORK/wrk.txt" "$WORK/unpaged.txt"
  echo "goal peak RSS (start, listing, reload, pages): $GOAL_HWM KiB" \
    "= $(echo "scale=1; $GOAL_HWM / 1024" | bc) MiB"
} | tee "$WORK/hub_scale.txt"
