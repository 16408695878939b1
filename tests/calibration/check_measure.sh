#!/usr/bin/env bash
# The GPU measurement script's logic without a GPU: every case it would run becomes a record in
# the published runs' format that `hubwatch calibrate` reads and estimates (none skipped).
# usage: tests/calibration/check_measure.sh HUBWATCH_BINARY
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=$(mktemp /tmp/hubwatch-measure.XXXXXX.jsonl)
trap 'rm -f "$out"' EXIT
python3 "$here/measure.py" --dry-run --out "$out"
"$1" calibrate --json --measurements "$out" --configs "$here/../fixtures/models" |
  python3 -c '
import json, sys
r = json.load(sys.stdin)
assert not r["skipped"], r["skipped"]
assert len(r["cases"]) == 26, len(r["cases"])
print("check_measure: %d records estimated" % len(r["cases"]))'
