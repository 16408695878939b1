#!/usr/bin/env python3
"""Validates OSV records against the official OSV JSON Schema (draft 2020-12).

usage: validate_osv.py SCHEMA (--command PROGRAM [ARGS...] | --dir DIR)
  --command: PROGRAM prints a JSON array of OSV records on stdout
  --dir:     every *.json file in DIR except all.json is one OSV record
Also checks what the schema cannot: ids unique, GIT events full-length shas or "0",
timestamps ending in Z, summaries of at most 120 characters.
"""
import glob
import json
import os
import re
import subprocess
import sys

import jsonschema

SHA = re.compile(r"^(0|[0-9a-f]{40})$")
TIME = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$")


def records(argv):
    if argv[0] == "--command":
        return json.loads(subprocess.run(argv[1:], check=True, capture_output=True, text=True).stdout)
    if argv[0] == "--dir":
        return [json.load(open(p)) for p in sorted(glob.glob(os.path.join(argv[1], "*.json")))
                if os.path.basename(p) != "all.json"]
    raise SystemExit(__doc__)


def main():
    schema = json.load(open(sys.argv[1]))
    validator = jsonschema.Draft202012Validator(schema, format_checker=jsonschema.FormatChecker())
    found = records(sys.argv[2:])
    failures, ids = 0, set()
    for r in found:
        problems = [f"{'/'.join(map(str, e.path))}: {e.message}" for e in validator.iter_errors(r)]
        if r.get("id") in ids:
            problems.append("duplicate id")
        ids.add(r.get("id"))
        for key in ("modified", "published"):
            if not TIME.match(r.get(key, "")):
                problems.append(f"{key} is not RFC 3339 UTC ending in Z")
        if len(r.get("summary", "")) > 120:
            problems.append("summary longer than 120 characters")
        for a in r.get("affected", []):
            for rng in a.get("ranges", []):
                for ev in rng.get("events", []):
                    for v in ev.values():
                        if rng.get("type") == "GIT" and not SHA.match(v):
                            problems.append(f"GIT event {v!r} is not a full sha or 0")
        for p in problems:
            print(f"FAIL {r.get('id')}: {p}")
        failures += bool(problems)
    print(f"{len(found) - failures} of {len(found)} advisories valid")
    return 1 if failures or not found else 0


if __name__ == "__main__":
    sys.exit(main())
