#!/usr/bin/env bash
# The real wire, side by side (BENCHMARKS.md "The real wire: TLS and HTTP/2"): compare.sh once per
# wire - cleartext HTTP/1.1 to fakehub, TLS HTTP/1.1 and TLS h2 through nghttpx fronts - each
# with a fresh ingest and HW_CYCLES (default 3) unchanged cycles of hubwatch, then the
# @huggingface/hub peer over the same wire; then hub_bench_resolve over plain HTTP/1.1 and over
# TLS h2. One table at the end. Loopback only.
# usage: tests/scale/wire.sh   (env: REPOS, CONCURRENCY, BIN, WIRE_WORK, HW_CYCLES, BENCH_REQUESTS)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BIN=${BIN:-$ROOT/build/bin}
base=${WIRE_WORK:-$(mktemp -d /tmp/hubwatch-wire.XXXXXX)}
export HW_CYCLES=${HW_CYCLES:-3} BIN
echo "work dir $base"
for wire in clear tls-h1 tls-h2; do
  echo "=== $wire ($(date -u +%H:%M:%S), load $(cut -d' ' -f1-3 /proc/loadavg))"
  mkdir -p "$base/$wire"
  WIRE=$wire WORK=$base/$wire bash "$ROOT/tests/scale/compare.sh" >"$base/$wire/run.log" 2>&1 ||
    { tail -20 "$base/$wire/run.log"; exit 1; }
done
requests=${BENCH_REQUESTS:-20000}
for mode in clear tls; do
  echo "=== hub_bench_resolve $mode ($(date -u +%H:%M:%S))"
  flag=()
  [[ "$mode" == tls ]] && flag=(--tls)
  "$BIN/hub_bench_resolve" --requests "$requests" --concurrency 32 --idle 64 "${flag[@]}" \
    >"$base/bench-$mode.txt" 2>&1 || echo "hub_bench_resolve $mode: failures (see below)"
done
{
  echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ); $(nproc) cores; commit $(git -C "$ROOT" rev-parse --short HEAD)"
  printf "%-8s %-9s %22s %10s %26s %s\n" wire client "cycle cpu_s (median)" "wall_s" "vm_hwm_kib" "front"
  for wire in clear tls-h1 tls-h2; do
    f=$base/$wire/compare.txt
    cpus=$(sed -n 's/^hubwatch cycles cpu_s: \(.*\) vm_hwm_kib: \(.*\) (table.*/\1/p' "$f")
    hwms=$(sed -n 's/^hubwatch cycles cpu_s: \(.*\) vm_hwm_kib: \(.*\) (table.*/\2/p' "$f")
    hw=$(awk '$1 == "hubwatch" && NF == 6' "$f")
    peer=$(awk '$1 == "peer" && NF == 6' "$f")
    hw_front=$(sed -n 's/^hubwatch steady: .* front=\(.*\)$/\1/p' "$f" | tail -1)
    peer_front=$(sed -n 's/^peer steady: .* front=\(.*\)$/\1/p' "$f")
    printf "%-8s %-9s %22s %10s %26s %s\n" "$wire" hubwatch "$cpus" "$(awk '{print $2}' <<<"$hw")" "$hwms" "$hw_front"
    printf "%-8s %-9s %22s %10s %26s %s\n" "$wire" peer "$(awk '{print $3}' <<<"$peer")" "$(awk '{print $2}' <<<"$peer")" "$(awk '{print $4}' <<<"$peer")" "$peer_front"
  done
  for mode in clear tls; do echo "hub_bench_resolve $mode:"; sed 's/^/  /' "$base/bench-$mode.txt"; done
} | tee "$base/wire.txt"
