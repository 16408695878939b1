#!/usr/bin/env python3
"""Checks that no source file includes a header from a higher layer.

The layers, bottom to top (a folder may include its own headers and those of any lower layer;
folders on one line are peers and must not include each other):

    estimator/base
    estimator/formats
    estimator
    tracker/hub | tracker/chat_template
    tracker/diff
    tracker/derivatives
    tracker/advisory
    tracker/store
    tracker/pipeline
    daemon/config
    daemon/audit
    daemon/service
    daemon/schedule
    daemon/page
    daemon/api
    daemon/subscriptions
    daemon/app
    daemon            (the CLI: main.cc, cmd_*.cc)

The README's "### Layers" table must list the same layers in the same order.

Usage: check_layers.py [REPO_ROOT] | --self-test. Exit 0 when clean; otherwise one line per offending include
(file:line: layer A includes B, which is above it) and exit 1.
"""
import os
import pathlib
import re
import sys

import checker_main

LAYERS = [
    ["estimator/base"],
    ["estimator/formats"],
    ["estimator"],
    ["tracker/hub", "tracker/chat_template"],
    ["tracker/diff"],
    ["tracker/derivatives"],
    ["tracker/advisory"],
    ["tracker/store"],
    ["tracker/pipeline"],
    ["daemon/config"],
    ["daemon/audit"],
    ["daemon/service"],
    ["daemon/schedule"],
    ["daemon/page"],
    ["daemon/api"],
    ["daemon/subscriptions"],
    ["daemon/app"],
    ["daemon"],
]
RANK = {folder: rank for rank, peers in enumerate(LAYERS) for folder in peers}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')


def layer_of(path: str):
    """The deepest layer folder that holds `path` (a repository-relative path), or None."""
    parts = path.split("/")
    for n in range(len(parts) - 1, 0, -1):
        folder = "/".join(parts[:n])
        if folder in RANK:
            return folder
    return None


def check(root: pathlib.Path):
    problems = []
    for top in ("estimator", "tracker", "daemon"):
        for source in sorted((root / top).rglob("*")):
            if source.suffix not in (".h", ".cc"):
                continue
            rel = source.relative_to(root).as_posix()
            own = layer_of(rel)
            for number, line in enumerate(source.read_text(errors="replace").splitlines(), 1):
                m = INCLUDE.match(line)
                if not m:
                    continue
                target = m.group(1)
                if "/" not in target or target.startswith("."):
                    target = os.path.normpath((pathlib.PurePosixPath(rel).parent / target).as_posix())
                theirs = layer_of(target)
                if theirs is None or theirs == own:
                    continue
                if RANK[theirs] >= RANK[own]:
                    relation = "a peer" if RANK[theirs] == RANK[own] else "above it"
                    problems.append(f"{rel}:{number}: {own} includes {m.group(1)} ({theirs}, "
                                    f"{relation})")
    problems += readme_disagreements(root)
    return problems


def readme_disagreements(root: pathlib.Path):
    """The README's layer table ("### Layers": one row per layer, its folders in backticks) must
    list LAYERS in the same order."""
    readme = root / "README.md"
    if not readme.exists():
        return []
    text = readme.read_text(errors="replace")
    start = text.find("### Layers")
    if start < 0:
        return ["README.md: no \"### Layers\" section"]
    rows = []
    for line in text[start:].splitlines()[1:]:
        if line.startswith("#"):
            break
        if line.startswith("| `"):
            rows.append(re.findall(r"`([^`]+)`", line.split("|")[1]))
    if rows != LAYERS:
        return [f"README.md: the layer table lists {rows}, the checker {LAYERS}"]
    return []


def make_bad_tree(root: pathlib.Path):
    """An include that runs up a layer and one between peers, by either spelling (repository
    path or a path relative to the including file), among allowed ones."""
    files = {
        "estimator/base/ok.h": '#include "estimator/base/other.h"\n#include <vector>\n',
        "tracker/store/up.cc": '#include "daemon/api/router.h"\n',
        "tracker/hub/peer.cc": '#include "tracker/chat_template/value.h"\n',
        "daemon/service/rel.cc": '#include "../app/service.h"\n#include "metrics.h"\n',
        "daemon/app/down.cc": '#include "daemon/service/metrics.h"\n#include "estimator/x.h"\n',
    }
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)


if __name__ == "__main__":
    sys.exit(checker_main.run(check, make_bad_tree, ["tracker/store/up.cc:1",
                                                     "tracker/hub/peer.cc:1",
                                                     "daemon/service/rel.cc:1"]))
