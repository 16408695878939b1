#!/usr/bin/env python3
"""Runs `hubwatch estimate --json` on every model fixture (and on gpt2 with its checkpoint
header) and validates each output against schema/estimate.schema.json (JSON Schema 2020-12).

usage: validate_estimate_json.py HUBWATCH_BINARY REPO_ROOT
"""
import glob
import json
import subprocess
import sys

import jsonschema


def main():
    binary, root = sys.argv[1], sys.argv[2]
    schema = json.load(open(f"{root}/schema/estimate.schema.json"))
    jsonschema.Draft202012Validator.check_schema(schema)
    validator = jsonschema.Draft202012Validator(schema)
    runs = [[c] for c in sorted(glob.glob(f"{root}/tests/fixtures/models/*.config.json"))]
    runs.append([f"{root}/tests/fixtures/models/openai-community__gpt2.config.json",
                 "--safetensors-header", f"{root}/tests/fixtures/safetensors/gpt2-perturbed.header.json",
                 "--preset", "seed", "--batch", "4"])
    failures = 0
    for args in runs:
        out = subprocess.run([binary, "estimate", *args, "--json"], capture_output=True, text=True)
        if out.returncode != 0:
            print(f"FAIL {args}: exit {out.returncode}: {out.stderr.strip()}")
            failures += 1
            continue
        errors = sorted(validator.iter_errors(json.loads(out.stdout)), key=lambda e: e.path)
        for e in errors[:5]:
            print(f"FAIL {args[0]}: {'/'.join(map(str, e.path))}: {e.message}")
        failures += bool(errors)
    print(f"{len(runs) - failures} of {len(runs)} estimates valid")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
