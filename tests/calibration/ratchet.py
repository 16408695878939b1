#!/usr/bin/env python3
"""Rewrites tests/fixtures/calibration/guard.json from what the estimator achieves now.

usage: tests/calibration/ratchet.py BUILD_DIR

Runs `hubwatch calibrate --json` over the committed measurements and configs and records, for
every estimated run, the bound the CI guard (tests/estimator/calibration_test.cc) holds it to:
10%, or the |error| achieved now rounded up to a whole percent where that is larger. Run it when
an estimate improved (the guard asks for it) or after a reviewed change that moved estimates;
the diff of guard.json is the review.
"""
import json
import math
import os
import subprocess
import sys

FLOOR_PCT = 10
RATCHET_SLACK_PCT = 5


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    fixtures = os.path.join(root, "tests", "fixtures")
    out = subprocess.run(
        [os.path.join(sys.argv[1], "bin", "hubwatch"), "calibrate", "--json", "--measurements",
         os.path.join(fixtures, "calibration", "measured-memory.jsonl"), "--configs",
         os.path.join(fixtures, "models")],
        check=True, capture_output=True, text=True).stdout
    report = json.loads(out)
    bounds = {c["id"]: max(FLOOR_PCT, math.ceil(abs(c["error_pct"]))) for c in report["cases"]}
    guard = {
        "_about": "Written by tests/calibration/ratchet.py; read by "
                  "tests/estimator/calibration_test.cc. bounds: per measured run, the |error| "
                  "its estimate may not exceed (percent of the measurement).",
        "floor_pct": FLOOR_PCT,
        "ratchet_slack_pct": RATCHET_SLACK_PCT,
        "summary": report["summary"],
        "bounds": dict(sorted(bounds.items())),
    }
    path = os.path.join(fixtures, "calibration", "guard.json")
    with open(path, "w") as f:
        json.dump(guard, f, indent=2)
        f.write("\n")
    print(f"{path}: {len(bounds)} bounds, median |error| "
          f"{report['summary']['median_abs_error_pct']:.1f}%")


if __name__ == "__main__":
    main()
