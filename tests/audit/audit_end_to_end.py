#!/usr/bin/env python3
"""hubwatch audit end to end, through the binaries.

fakehub serves the incident fixtures and their derivatives on loopback; `hubwatch serve` ingests
every repo and checks the followed repo's derivatives. Then a source tree pins every stored
revision of every repo three times - in Python, in a YAML config and in a shell command line -
and floats on some, and `hubwatch audit` judges it:
  - against the store (--config) and against the running server (--server): the same answers;
  - every advisory affecting a pinned sha is reported, none that does not, where "affects" is
    computed here, independently, from each advisory's OSV range and the repo's history as the
    API lists it (introduced <= sha < fixed, in history order);
  - an untracked derivative is reported with the upstream fixes the server says it lags on;
  - --sarif validates against the official SARIF 2.1.0 schema;
  - the exit status follows --fail-on; --fix rewrites the affected pins' literals only, after
    which the same tree has nothing affected.

usage: audit_end_to_end.py HUBWATCH FAKEHUB REPO_ROOT
"""
import json
import os
import pathlib
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request

import jsonschema

HUBWATCH, FAKEHUB, ROOT = sys.argv[1], sys.argv[2], pathlib.Path(sys.argv[3])
FOLLOWED = "meta-llama/Meta-Llama-3-8B-Instruct"
DERIVATIVE = "fernhollow-quants/Meta-Llama-3-8B-Instruct-GGUF"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def get(url):
    with urllib.request.urlopen(url, timeout=10) as r:
        return json.load(r)


def wait_for(what, check, seconds=120):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            if check():
                return
        except OSError:
            pass
        time.sleep(0.2)  # polling a separate process's progress
    sys.exit(f"timed out waiting for {what}")


def audit(*args, expect=None):
    r = subprocess.run([HUBWATCH, "audit", *args], capture_output=True, text=True)
    if expect is not None and r.returncode != expect:
        sys.exit(f"audit {' '.join(args)}: exit {r.returncode}, wanted {expect}\n{r.stderr}")
    return r


def main():
    work = pathlib.Path(tempfile.mkdtemp())
    procs = []
    try:
        hub_out = open(work / "fakehub.out", "w")
        procs.append(subprocess.Popen(
            [FAKEHUB, "--fixtures", ROOT / "tests/fixtures/hub", "--fixtures",
             ROOT / "tests/fixtures/hub-derivatives", "--port", "0", "--token", "hf_audit"],
            stdout=hub_out, stderr=subprocess.STDOUT))
        endpoint = []
        wait_for("fakehub", lambda: endpoint.extend(re.findall(
            r"http://127\.0\.0\.1:\d+", (work / "fakehub.out").read_text())[:1]) or endpoint)
        repos = sorted(str(p.relative_to(ROOT / "tests/fixtures/hub"))
                       for p in (ROOT / "tests/fixtures/hub").glob("*/*") if p.is_dir()
                       and not str(p).endswith("tools"))
        repos = [r for r in repos if not r.startswith("tools/")]
        (work / "token").write_text("hf_audit\n")
        port = free_port()
        api = f"http://127.0.0.1:{port}"
        config = work / "hubwatch.json"
        config.write_text(json.dumps({
            "store": "hubwatch.db", "hub": {"endpoint": endpoint[0], "token_file": "token"},
            "repos": [{"id": r, **({"derivatives": True} if r == FOLLOWED else {})}
                      for r in repos],
            "poll": {"interval_s": 900, "settle_window_s": 0, "derivatives_interval_s": 1},
            "listen": f"127.0.0.1:{port}"}))
        procs.append(subprocess.Popen([HUBWATCH, "serve", "--config", config],
                                      stdout=open(work / "serve.out", "w"),
                                      stderr=subprocess.STDOUT))

        def ingested():
            listed = get(f"{api}/api/v1/repos")["repos"]
            return len(listed) == len(repos) and all(r["last_polled_at"] for r in listed)
        wait_for("every repo polled", ingested)

        def derivatives_checked():
            d = get(f"{api}/api/v1/repos/{FOLLOWED}/derivatives")["derivatives"]
            return any(e["id"] == DERIVATIVE and e["checked_at"] for e in d)
        wait_for("the derivatives checked", derivatives_checked)

        # Independently: which advisories affect each revision, from the ranges and history.
        history, expected = {}, {}
        for repo in repos:
            revs = get(f"{api}/api/v1/repos/{repo}/revisions?limit=1000")["revisions"]
            order = [r["sha"] for r in reversed(revs) if not r.get("rewritten_away")]
            history[repo] = order
            position = {sha: i for i, sha in enumerate(order)}
            advisories = get(f"{api}/api/v1/advisories?repo={repo}&limit=1000")["advisories"]
            for sha in order:
                expected[(repo, sha)] = set()
            for a in advisories:
                if a.get("withdrawn"):
                    continue
                osv = get(f"{api}/v1/vulns/{a['id']}")
                events = osv["affected"][0]["ranges"][0]["events"]
                introduced = next(e["introduced"] for e in events if "introduced" in e)
                fixed = next(e["fixed"] for e in events if "fixed" in e)
                start = 0 if introduced == "0" else position.get(introduced, 0)
                for sha in order:
                    if start <= position[sha] < position[fixed]:
                        expected[(repo, sha)].add(a["id"])
        pinned = sum(1 for v in expected.values() if v)
        assert pinned > 0, "no revision is affected by anything: the check would be empty"

        tree = work / "tree"
        for i, (repo, sha) in enumerate(sorted(expected)):
            d = tree / f"pin{i:03d}"
            d.mkdir(parents=True)
            (d / "train.py").write_text(
                "from transformers import AutoModelForCausalLM\n"
                f'model = AutoModelForCausalLM.from_pretrained("{repo}", revision="{sha}")\n')
            (d / "config.yaml").write_text(f"model_name_or_path: {repo}\nrevision: {sha}\n")
            (d / "fetch.sh").write_text(f"huggingface-cli download {repo} --revision {sha}\n")
        (tree / "float.py").write_text(
            "from transformers import AutoTokenizer\n"
            f'tok = AutoTokenizer.from_pretrained("{repos[0]}")\n'
            f'q = AutoTokenizer.from_pretrained("{DERIVATIVE}")\n'
            'x = AutoTokenizer.from_pretrained("nobody-tracks/this-model")\n')

        local = json.loads(audit(str(tree), "--config", str(config), "--json",
                                 "--since", "2000-01-01").stdout)
        remote = json.loads(audit(str(tree), "--server", api, "--json",
                                  "--since", "2000-01-01").stdout)
        for doc in (local, remote):
            doc["summary"].pop("judged_by")
        assert local == remote, "the store and the server answer differently"

        found = {}
        languages = {}
        for ref in local["references"]:
            if ref["revision_kind"] != "full-sha":
                continue
            key = (ref["repo"], ref["revision"])
            ids = {a["id"] for a in ref["advisories"]}
            assert ids == expected[key], (ref["file"], key, ids ^ expected[key])
            assert ref["verdict"] == ("affected" if ids else "current"), ref
            found.setdefault(key, []).append(ref["file"].rsplit("/", 1)[-1])
        for key in expected:
            assert sorted(found.get(key, [])) == ["config.yaml", "fetch.sh", "train.py"], \
                (key, found.get(key))
        by_file = {r["file"]: r for r in local["references"] if r["file"] == "float.py"}
        floats = [r for r in local["references"] if r["file"] == "float.py"]
        verdicts = {r["repo"]: r for r in floats}
        assert verdicts[repos[0]]["verdict"] in ("received", "floating"), verdicts[repos[0]]
        assert verdicts["nobody-tracks/this-model"]["verdict"] == "not-tracked"
        lagging_now = {a["id"] for e in get(f"{api}/api/v1/repos/{FOLLOWED}/derivatives")[
            "derivatives"] if e["id"] == DERIVATIVE for a in e["advisories"]
            if a["status"] == "lagging"}
        d = verdicts[DERIVATIVE]
        assert {a["id"] for a in d["derivative"]["lagging"]} == lagging_now, d
        assert d["verdict"] == ("lagging-derivative" if lagging_now else "not-tracked"), d
        del by_file

        sarif = json.loads(audit(str(tree), "--config", str(config), "--sarif").stdout)
        schema = json.loads((ROOT / "tests/fixtures/audit/sarif/sarif-schema-2.1.0.json")
                            .read_text())
        jsonschema.validate(sarif, schema)
        results = sarif["runs"][0]["results"]
        assert len(results) == sum(1 for r in local["references"] if r["verdict"] != "current")

        worst = local["summary"]["worst"]
        audit(str(tree), "--config", str(config), "--fail-on", worst, expect=1)
        if worst != "breaking":
            audit(str(tree), "--config", str(config), "--fail-on", "breaking", expect=0)
        audit(str(tree), "--config", str(config), "--fail-on", "nonsense", expect=2)
        audit(str(work / "missing"), "--config", str(config), expect=2)

        fixed = work / "fixed"
        shutil.copytree(tree, fixed)
        before = (fixed / "float.py").read_text()
        audit(str(fixed), "--config", str(config), "--fix")
        after = json.loads(audit(str(fixed), "--config", str(config), "--json").stdout)
        assert (fixed / "float.py").read_text() == before, "--fix touched a floating reference"
        for ref in after["references"]:
            if ref["revision_kind"] == "full-sha":
                assert ref["verdict"] == "current", ref
        changed = [p for p in fixed.rglob("*") if p.is_file()
                   and p.read_text() != (tree / p.relative_to(fixed)).read_text()]
        affected_files = {r["file"] for r in local["references"] if r["verdict"] == "affected"}
        assert {str(p.relative_to(fixed)) for p in changed} == affected_files
        print(f"audit: {len(expected)} revisions of {len(repos)} repos pinned in Python, YAML "
              f"and shell; {pinned} with advisories; store and server agree; SARIF valid; "
              f"--fix rewrote {len(changed)} files")
    finally:
        for p in reversed(procs):
            p.terminate()
            p.wait()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
