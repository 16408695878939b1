#!/usr/bin/env bash
# Scale benchmark (issue 7, BENCHMARKS.md "Scale and a peer"): hubwatch serve over fakehub with
# REPOS (10,000) synthetic repos, loopback only.
#   1. ingest: fresh store, every repo due at once, polled once (interval 3600 s)
#   2. steady: restart with interval_s 10, every repo due at once (schedule reset in the stopped
#      store), nothing changed upstream: one full unchanged cycle
#   3. steady window: the next 10 s of the interval-10 schedule (each repo once per interval)
#   4. 1% change: fakehub's replay clock moves 3000 s, giving 100 repos a new revision; time until
#      the API serves an advisory for every one of them
# usage: tests/scale/scale.sh   (env: REPOS, CONCURRENCY, BIN, WORK, INGESTED_DB)
# Writes $WORK/results.txt and $WORK/ingested.db (reused by compare.sh via INGESTED_DB).
source "$(dirname "$0")/lib.sh"
echo "work dir $WORK; load $(load); repos $REPOS; concurrency $CONCURRENCY"
start_fakehub
echo "fakehub $HUB (pid $FAKEHUB_PID)"

if [[ -n "${INGESTED_DB:-}" ]]; then
  cp "$INGESTED_DB" "$WORK/hubwatch.db"
  INGEST="skipped (INGESTED_DB=$INGESTED_DB)"
else
  ingest
  cp "$WORK/hubwatch.db" "$WORK/ingested.db"
fi

steady_cycle 10

# 3. steady window: a clean 10 s window once the forced cycle is over.
sleep 2
fakehub_clear_log
p0=$(metric hubwatch_polls_total); r0=$(metric hubwatch_hub_requests_total); c0=$(cpu_s "$HW_PID"); t0=$(now)
sleep 10
p1=$(metric hubwatch_polls_total); r1=$(metric hubwatch_hub_requests_total); c1=$(cpu_s "$HW_PID"); t1=$(now)
fakehub_log_summary >"$WORK/window.requests.json"
WINDOW="seconds=$(echo "$t1 - $t0" | bc) polls=$((p1 - p0)) hub_requests=$((r1 - r0)) cpu_s=$(echo "$c1 - $c0" | bc)"
WINDOW+=" fakehub_requests=$(jq .requests "$WORK/window.requests.json") distinct_repos=$(jq .distinct_repos "$WORK/window.requests.json") vm_rss_kib=$(rss_kib "$HW_PID") load=\"$(load)\""
echo "window: $WINDOW"

# 4. 1% of repos get a new revision.
seq0=$(max_seq); revs0=$(metric hubwatch_revisions_ingested_total); c0=$(cpu_s "$HW_PID")
advance_clock "$ADVANCE_S"
t0=$(now)
deadline=$(( $(date +%s) + STEP_TIMEOUT_S ))
while :; do
  # every advisory after seq0, paged (bounded: at most 100 pages)
  after=$seq0; : >"$WORK/new-advisories.jsonl"
  for _ in $(seq 100); do
    page=$(curl -sf "$API/api/v1/advisories?after=$after&limit=1000")
    jq -c '.advisories[] | {repo, kind, seq}' <<<"$page" >>"$WORK/new-advisories.jsonl"
    after=$(jq -r '.next_after // empty' <<<"$page")
    [[ -z "$after" ]] && break
  done
  repos_advised=$(jq -r .repo "$WORK/new-advisories.jsonl" | sort -u | wc -l)
  (( repos_advised >= EXPECT_CHANGED )) && break
  (( $(date +%s) < deadline )) || { echo "timeout: $repos_advised repos advised" >&2; exit 1; }
  sleep 0.2
done
t1=$(now)
CHANGE="repos=$EXPECT_CHANGED seconds_to_all_stored=$(echo "$t1 - $t0" | bc)"
CHANGE+=" advisories=$(wc -l <"$WORK/new-advisories.jsonl") repos_advised=$repos_advised"
CHANGE+=" revisions=$(( $(metric hubwatch_revisions_ingested_total) - revs0 )) cpu_s=$(echo "$(cpu_s "$HW_PID") - $c0" | bc)"
CHANGE+=" kinds=$(jq -r .kind "$WORK/new-advisories.jsonl" | sort | uniq -c | awk '{print $2 ":" $1}' | paste -sd,)"
CHANGE+=" vm_hwm_kib=$(hwm_kib "$HW_PID") load=\"$(load)\""
echo "change: $CHANGE"
stop_hubwatch

{
  echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "machine: $(nproc) cores, $(awk '/MemTotal/ {print int($2 / 1024)}' /proc/meminfo) MiB, $(uname -r)"
  echo "repos: $REPOS concurrency: $CONCURRENCY"
  echo "ingest: $INGEST"
  echo "steady: $STEADY"
  echo "window: $WINDOW"
  echo "change: $CHANGE"
  echo "fakehub_cpu_s: $(cpu_s "$FAKEHUB_PID")"
} | tee "$WORK/results.txt"
