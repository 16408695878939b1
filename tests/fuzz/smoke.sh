#!/usr/bin/env bash
# The CI fuzz smoke run: every libFuzzer target of tests/fuzz for its share of SECONDS_TOTAL,
# starting from its seed corpus. Prints executions per target; exits non-zero when any target
# crashes (sanitizer report, invariant, timeout, out of memory) or is missing.
#
#   tests/fuzz/smoke.sh BUILD_DIR [SECONDS_TOTAL]      (default 60)
#
# Seeds are read from tests/fuzz/corpus/<target>/ (the chat-template target also from
# tests/chat_template/corpus/templates/) and never written: new inputs go to a temporary
# corpus. Crashing inputs are saved as BUILD_DIR/fuzz-artifacts/<target>-crash-<sha1>.
set -u

if [[ $# -lt 1 ]]; then
  echo "usage: $0 BUILD_DIR [SECONDS_TOTAL]" >&2
  exit 2
fi
build=$(cd "$1" && pwd) || exit 2
total=${2:-60}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
targets=(safetensors_header gguf_header estimate_config tokenizer_diff hub_headers chat_template api_router config audit_references)
per=$((total / ${#targets[@]}))
((per < 1)) && per=1

work=$(mktemp -d "${TMPDIR:-/tmp}/hubwatch-fuzz.XXXXXX")
trap 'rm -rf "$work"' EXIT
artifacts=$build/fuzz-artifacts
mkdir -p "$artifacts"

status=0
printf '%-20s %10s %8s %7s %7s  %s\n' target executions exec/s cov ft result
for t in "${targets[@]}"; do
  bin=$build/bin/fuzz_$t
  if [[ ! -x $bin ]]; then
    printf '%-20s missing: %s (configure with -DHUBWATCH_FUZZ=ON, build hubwatch_fuzz)\n' "$t" "$bin"
    status=1
    continue
  fi
  seeds=("$here/corpus/$t")
  [[ $t == chat_template ]] && seeds+=("$here/../chat_template/corpus/templates")
  mkdir -p "$work/$t"
  log=$work/$t.log
  start=$(date +%s.%N)
  "$bin" -max_total_time="$per" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
    -artifact_prefix="$artifacts/$t-" "$work/$t" "${seeds[@]}" >"$log" 2>&1
  rc=$?
  end=$(date +%s.%N)
  execs=$(awk '/stat::number_of_executed_units:/ {print $2}' "$log" | tail -1)
  execs=${execs:-0}
  last=$(grep -E '^#[0-9]+' "$log" | tail -1)
  cov=$(sed -n 's/.* cov: \([0-9]*\).*/\1/p' <<<"$last")
  ft=$(sed -n 's/.* ft: \([0-9]*\).*/\1/p' <<<"$last")
  rate=$(awk -v n="$execs" -v a="$start" -v b="$end" 'BEGIN { printf "%d", n / (b - a) }')
  if [[ $rc -eq 0 ]]; then
    result=ok
  else
    result="CRASH (exit $rc)"
    status=1
  fi
  printf '%-20s %10s %8s %7s %7s  %s\n' "$t" "$execs" "$rate" "${cov:--}" "${ft:--}" "$result"
  if [[ $rc -ne 0 ]]; then
    grep -E 'ERROR|runtime error|invariant failed|SUMMARY|Test unit written|Base64' "$log" \
      | head -20 | sed 's/^/    /'
  fi
done
exit $status
