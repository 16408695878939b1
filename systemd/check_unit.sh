#!/usr/bin/env bash
# Checks a systemd unit the way CI does:
#   systemd-analyze verify UNIT                       must print nothing and succeed
#   systemd-analyze security --offline=yes UNIT       overall exposure must be <= MAX (0-10)
# Usage: check_unit.sh UNIT [MAX] [STAND_IN_BINARY]
# verify insists that ExecStart names an executable; when the installed binary is absent the
# check runs on a copy whose ExecStart points at STAND_IN_BINARY (default /bin/true).
# Fails, never skips, when systemd-analyze is missing (.ci/setup installs the systemd package).
set -uo pipefail

unit=$1
max=${2:-2.0}
stand_in=${3:-/bin/true}

if ! command -v systemd-analyze >/dev/null 2>&1; then
  echo "FAIL: systemd-analyze not found: install the systemd package (.ci/setup lists it)" >&2
  exit 1
fi
if [ ! -f "$unit" ]; then
  echo "FAIL: no unit file $unit" >&2
  exit 1
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
name=$(basename "$unit")
copy="$tmp/$name"
cp "$unit" "$copy"
exe=$(sed -n 's/^ExecStart=\([^ ]*\).*/\1/p' "$copy" | head -n1)
if [ ! -x "$exe" ]; then
  echo "note: $exe is not installed; verifying with ExecStart=$stand_in"
  sed -i "s|^ExecStart=$exe|ExecStart=$stand_in|" "$copy"
fi

status=0
echo "== systemd-analyze $(systemd-analyze --version | head -n1)"
verify_out=$(systemd-analyze verify "$copy" 2>&1)
verify_rc=$?
echo "== systemd-analyze verify: rc=$verify_rc"
if [ -n "$verify_out" ]; then
  echo "$verify_out"
fi
if [ "$verify_rc" -ne 0 ] || [ -n "$verify_out" ]; then
  echo "FAIL: systemd-analyze verify is not clean" >&2
  status=1
fi

security_out=$(systemd-analyze security --offline=yes "$copy" 2>&1)
security_rc=$?
echo "$security_out" | grep -E '✗|Overall' || true
exposure=$(echo "$security_out" | sed -n 's/.*Overall exposure level for [^:]*: \([0-9.]*\).*/\1/p')
echo "== exposure: ${exposure:-unknown} (max $max), rc=$security_rc"
if [ -z "$exposure" ]; then
  echo "FAIL: no overall exposure level in the output" >&2
  status=1
elif ! awk -v e="$exposure" -v m="$max" 'BEGIN { exit !(e <= m) }'; then
  echo "FAIL: exposure $exposure is above $max" >&2
  status=1
fi
# The tool's own gate agrees (its threshold is on a 0-100 scale).
threshold=$(awk -v m="$max" 'BEGIN { printf "%d", m * 10 }')
if ! systemd-analyze security --offline=yes --threshold="$threshold" "$copy" >/dev/null 2>&1; then
  echo "FAIL: systemd-analyze security --threshold=$threshold rejects the unit" >&2
  status=1
fi
exit $status
