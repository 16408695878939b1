#!/usr/bin/env python3
"""Runs `hubwatch estimate --json` on every model fixture (and on gpt2 with its checkpoint
header, and on gpt2's checkpoint under a model_type nobody models, estimated from its tensors)
and validates each output against schema/estimate.schema.json (JSON Schema 2020-12). A fixture of
an architecture not modelled yet must be refused with exit 2 and "unsupported architecture": it
is listed, not failed.

usage: validate_estimate_json.py HUBWATCH_BINARY REPO_ROOT
"""
import glob
import json
import os
import subprocess
import sys
import tempfile

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
    gpt2 = json.load(open(f"{root}/tests/fixtures/models/openai-community__gpt2.config.json"))
    gpt2["model_type"] = "gpt2_remote_code"
    custom = tempfile.NamedTemporaryFile("w", suffix=".json", delete=False)
    json.dump(gpt2, custom)
    custom.close()
    runs.append([custom.name, "--safetensors-header",
                 f"{root}/tests/fixtures/safetensors/gpt2.header.json"])
    failures = 0
    unmodelled = []
    for args in runs:
        out = subprocess.run([binary, "estimate", *args, "--json"], capture_output=True, text=True)
        if out.returncode == 2 and "unsupported architecture" in out.stderr:
            unmodelled.append(os.path.basename(args[0]))
            continue
        if out.returncode != 0:
            print(f"FAIL {args}: exit {out.returncode}: {out.stderr.strip()}")
            failures += 1
            continue
        errors = sorted(validator.iter_errors(json.loads(out.stdout)), key=lambda e: e.path)
        for e in errors[:5]:
            print(f"FAIL {args[0]}: {'/'.join(map(str, e.path))}: {e.message}")
        failures += bool(errors)
        if args[0] == custom.name and json.loads(out.stdout)["model"]["source"] != "checkpoint_tensors":
            print(f"FAIL {args}: not estimated from the checkpoint's tensors")
            failures += 1
    os.unlink(custom.name)
    print(f"{len(runs) - failures - len(unmodelled)} of {len(runs)} estimates valid; "
          f"{len(unmodelled)} fixtures of architectures not modelled yet: {', '.join(unmodelled)}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
