#!/usr/bin/env bash
# hubwatch against a peer on @huggingface/hub (peer/poller.mjs), one steady cycle each over the
# same fakehub (REPOS = 10,000 synthetic repos, nothing changed upstream), the same concurrency
# (CONCURRENCY: hubwatch's poll.max_concurrent and hub.max_concurrent = the peer's workers).
#   hubwatch: restarted over an ingested store with every repo due at once, interval 3600 s so
#             the cycle polls each repo exactly once; measured from ready to polls_total = REPOS
#   peer:     cycle 1 learns the heads (not measured), cycle 2 is the steady cycle; then the
#             replay clock moves 3000 s and cycle 3 must report 100 heads moved (a check)
# CPU: utime + stime from /proc/PID/stat; memory: VmHWM from /proc/PID/status (whole process);
# requests: fakehub's request log, cleared before each measured cycle.
# WIRE (lib.sh): clear, tls-h1 or tls-h2 - both hubwatch and the peer go through the same fronts
# (the peer trusts the test CA through NODE_EXTRA_CA_CERTS). HW_CYCLES: hubwatch's unchanged
# cycle is measured this many times (each a restart over the same store; default 1).
# usage: tests/scale/compare.sh   (env: INGESTED_DB from scale.sh saves the ingest; REPOS, ...)
source "$(dirname "$0")/lib.sh"
PEER=$ROOT/tests/scale/peer
if [[ ! -d "$PEER/node_modules/@huggingface/hub" ]]; then
  if [[ -d "$ROOT/tests/hub/js/node_modules/@huggingface/hub" ]]; then
    # Reuse the crosscheck's install of the same pinned version (2.17.5): ESM ignores NODE_PATH,
    # so run a copy of the poller next to a link to it, in the work dir (not in the tree).
    mkdir -p "$WORK/peer"
    cp "$PEER/poller.mjs" "$WORK/peer/"
    ln -sfn "$ROOT/tests/hub/js/node_modules" "$WORK/peer/node_modules"
    PEER=$WORK/peer
  else
    (cd "$PEER" && npm ci --no-audit --no-fund)
  fi
fi
echo "work dir $WORK; load $(load); repos $REPOS; concurrency $CONCURRENCY"
start_fakehub
echo "fakehub $HUB (pid $FAKEHUB_PID)"
if [[ -n "${INGESTED_DB:-}" ]]; then
  cp "$INGESTED_DB" "$WORK/hubwatch.db"
else
  ingest
fi

HW_STEADY=()
HW_CPUS=()
HW_HWMS=()
HW_WALLS=()
for _ in $(seq "${HW_CYCLES:-1}"); do
  steady_cycle 3600
  stop_hubwatch
  HW_STEADY+=("$STEADY front=$(front_summary)")
  HW_CPUS+=("$(sed 's/.* cycle_cpu_s=\([^ ]*\).*/\1/' <<<"$STEADY")")
  HW_HWMS+=("$(sed 's/.* vm_hwm_kib=\([^ ]*\).*/\1/' <<<"$STEADY")")
  HW_WALLS+=("$(sed 's/.* cycle_s=\([^ ]*\).*/\1/' <<<"$STEADY")")
done
HW_CPU=$(printf '%s\n' "${HW_CPUS[@]}" | sort -n | sed -n "$(( (${#HW_CPUS[@]} + 1) / 2 ))p")  # median
HW_HWM=$(printf '%s\n' "${HW_HWMS[@]}" | sort -n | tail -1)                                      # max
HW_REQ=$(jq .requests "$WORK/steady.requests.json")
HW_BYTES=$(jq .body_bytes "$WORK/steady.requests.json")

# The peer, driven through a fifo: one line on stdin starts each cycle after the first.
mkfifo "$WORK/peer.in"
HF_ENDPOINT=$HUB env ${CA_FILE:+NODE_EXTRA_CA_CERTS=$CA_FILE} node "$PEER/poller.mjs" "$REPOS" "$CONCURRENCY" 3 <"$WORK/peer.in" >"$WORK/peer.out" 2>"$WORK/peer.err" &
PEER_PID=$!
PIDS+=("$PEER_PID")
exec 3>"$WORK/peer.in"
peer_line() {  # peer_line N: waits (bounded) for the peer's Nth output line
  local deadline=$(( $(date +%s) + STEP_TIMEOUT_S ))
  while (( $(wc -l <"$WORK/peer.out") < $1 )); do
    kill -0 "$PEER_PID" 2>/dev/null || { cat "$WORK/peer.err" >&2; exit 1; }
    (( $(date +%s) < deadline )) || { echo "peer timeout" >&2; exit 1; }
    sleep 0.1
  done
  sed -n "$1p" "$WORK/peer.out"
}
echo "peer cycle 1 (learns heads): $(peer_line 1)"
peer_line 2 >/dev/null                     # {"waiting": 2}
fakehub_clear_log
PEER_LOAD0=$(load)
echo go >&3
PEER2=$(peer_line 3)
PEER_LOAD1=$(load)
fakehub_log_summary >"$WORK/peer.requests.json"
PEER_FRONT=$(front_summary)
echo "peer cycle 2 (steady): $PEER2 load_before=\"$PEER_LOAD0\" load_after=\"$PEER_LOAD1\" front=$PEER_FRONT"
peer_line 4 >/dev/null
advance_clock "$ADVANCE_S"
echo go >&3
PEER3=$(peer_line 5)
echo "peer cycle 3 (after 1% change): $PEER3"
exec 3>&-
wait "$PEER_PID" || true

P_CPU=$(jq .cpu_s <<<"$PEER2"); P_HWM=$(jq .vm_hwm_kib <<<"$PEER2"); P_WALL=$(jq .wall_s <<<"$PEER2")
P_REQ=$(jq .requests "$WORK/peer.requests.json"); P_BYTES=$(jq .body_bytes "$WORK/peer.requests.json")
HW_WALL=$(printf '%s\n' "${HW_WALLS[@]}" | sort -n | sed -n "$(( (${#HW_WALLS[@]} + 1) / 2 ))p")
{
  echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "machine: $(nproc) cores, $(awk '/MemTotal/ {print int($2 / 1024)}' /proc/meminfo) MiB; node $(node --version)"
  echo "repos: $REPOS concurrency: $CONCURRENCY wire: $WIRE"
  for s in "${HW_STEADY[@]}"; do echo "hubwatch steady: $s"; done
  echo "hubwatch cycles cpu_s: ${HW_CPUS[*]} vm_hwm_kib: ${HW_HWMS[*]} (table: median cpu, max hwm)"
  echo "peer steady: $PEER2 load_before=\"$PEER_LOAD0\" load_after=\"$PEER_LOAD1\" front=$PEER_FRONT"
  echo "peer after change: $PEER3"
  printf "%-10s %10s %10s %12s %10s %14s\n" "" "wall_s" "cpu_s" "vm_hwm_kib" "requests" "body_bytes"
  printf "%-10s %10s %10s %12s %10s %14s\n" hubwatch "$HW_WALL" "$HW_CPU" "$HW_HWM" "$HW_REQ" "$HW_BYTES"
  printf "%-10s %10s %10s %12s %10s %14s\n" peer "$P_WALL" "$P_CPU" "$P_HWM" "$P_REQ" "$P_BYTES"
  ratio() { if [[ "$(echo "$2 > 0" | bc)" == 1 ]]; then echo "scale=2; $1 / $2" | bc; else echo "-"; fi; }
  printf "%-10s %10s %10s %12s %10s %14s\n" "peer/hw" "$(ratio "$P_WALL" "$HW_WALL")" \
    "$(ratio "$P_CPU" "$HW_CPU")" "$(ratio "$P_HWM" "$HW_HWM")" "$(ratio "$P_REQ" "$HW_REQ")" \
    "$(ratio "$P_BYTES" "$HW_BYTES")"
} | tee "$WORK/compare.txt"
