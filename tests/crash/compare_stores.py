#!/usr/bin/env python3
"""Compares the store of a run killed many times with the store of a clean run of the same
replay, and checks the webhook receiver's log against the killed run's advisories.

usage: compare_stores.py CLEAN_DB KILLED_DB RECEIVER_LOG CLEAN_PATH KILLED_PATH

Fields that legitimately differ between two runs are left out: when a row was written
(first_seen_at, created_at, updated_at, ...), advisory seqs across repos (their order within a
repo is compared), published/modified/ingested_at, and attempt bookkeeping. Exit status 1 and a
list of differences on any mismatch.
"""
import collections
import json
import sqlite3
import sys

TIME_KEYS = {"published", "modified", "ingested_at", "settled_at"}


def strip_osv(text):
    osv = json.loads(text)
    for k in TIME_KEYS:
        osv.pop(k, None)
    osv.get("database_specific", {}).pop("ingested_at", None)
    osv.get("database_specific", {}).pop("settled_at", None)
    # Whether a commit is history (found by its repo's first catch-up) races with the replay
    # clock: a commit the Hub shows while one run's first poll is under way and after the
    # other's is history in one and news in the other. Crash safety of the flag itself is
    # PipelineTest.CrashBetweenFetchAndCommitLosesAndRepeatsNothing's.
    osv.get("database_specific", {}).pop("backfill", None)
    return json.dumps(osv, sort_keys=True)


def rows(db, sql):
    return [tuple(r) for r in db.execute(sql).fetchall()]


def snapshot(path):
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    s = {}
    s["repos"] = rows(db, "SELECT id, refs, state, renamed_to FROM repos")
    s["ref_heads"] = rows(db, "SELECT repo, ref, sha FROM ref_heads")
    s["revisions"] = rows(db, "SELECT repo, sha, parents, authored_at, title, message, authors, "
                              "refs, ingest_order, rewritten_away FROM revisions")
    s["manifests"] = rows(db, "SELECT repo, sha, path, oid, size, lfs_sha256 FROM manifests")
    s["blobs"] = rows(db, "SELECT oid, length(content), hex(substr(content, 1, 64)) FROM blobs")
    s["safetensors_headers"] = rows(db, "SELECT sha256, count, elements FROM safetensors_headers")
    s["changes"] = rows(db, "SELECT repo, sha, ordinal, kind, impact, path, summary, details "
                            "FROM changes")
    s["estimates"] = rows(db, "SELECT repo, sha, estimate, params_total, params_active, "
                              "kv_bytes_per_token, parameter_delta FROM estimates")
    s["advisories"] = [
        (a, repo, sha, kind, c_sha, ordinal, strip_osv(osv), withdrawn)
        for a, repo, sha, kind, c_sha, ordinal, osv, withdrawn in rows(
            db, "SELECT a.id, a.repo, a.sha, a.kind, c.sha, c.ordinal, a.osv, a.withdrawn "
                "FROM advisories a LEFT JOIN changes c ON c.id = a.change_id")]
    s["advisory_order"] = rows(db, "SELECT repo, group_concat(id, ' ') FROM "
                                   "(SELECT repo, id FROM advisories ORDER BY repo, seq) "
                                   "GROUP BY repo")
    s["held_advisories"] = rows(db, "SELECT id FROM held_advisories")
    s["outbox"] = rows(db, "SELECT advisory_id, target, state FROM outbox")
    s["subscriptions"] = rows(db, "SELECT url, repos, kinds, min_impact, source, disabled_at "
                                  "FROM subscriptions")
    s["_seqs"] = rows(db, "SELECT seq FROM advisories")
    s["_integrity"] = rows(db, "PRAGMA integrity_check")
    s["_fk"] = rows(db, "PRAGMA foreign_key_check")
    db.close()
    return s


def short(row):
    text = repr(row)
    return text if len(text) < 240 else text[:240] + "..."


def main():
    clean_db, killed_db, receiver_log, clean_path, killed_path = sys.argv[1:6]
    clean, killed = snapshot(clean_db), snapshot(killed_db)
    # A killed run's subscription urls name its own receiver path; compare them as one.
    for s, p in ((clean, clean_path), (killed, killed_path)):
        s["subscriptions"] = [(row[0].replace(p, "/RUN"),) + row[1:] for row in s["subscriptions"]]
    problems = []
    for name in ("_integrity",):
        for label, s in (("clean", clean), ("killed", killed)):
            if s[name] != [("ok",)]:
                problems.append(f"{label} store: integrity_check {s[name]}")
    for label, s in (("clean", clean), ("killed", killed)):
        if s["_fk"]:
            problems.append(f"{label} store: foreign_key_check {s['_fk'][:5]}")
        seqs = [q for (q,) in s["_seqs"]]
        if len(set(seqs)) != len(seqs):
            problems.append(f"{label} store: duplicate advisory seqs")
    for table in sorted(k for k in clean if not k.startswith("_")):
        a, b = collections.Counter(clean[table]), collections.Counter(killed[table])
        dups = [r for r, n in b.items() if n > 1]
        for r in dups:
            problems.append(f"{table}: duplicate row in the killed store: {short(r)}")
        for r in sorted(a - b, key=repr):
            problems.append(f"{table}: only in the clean store: {short(r)}")
        for r in sorted(b - a, key=repr):
            problems.append(f"{table}: only in the killed store: {short(r)}")
    for label, s in (("clean", clean), ("killed", killed)):
        pending = [r for r in s["outbox"] if r[2] != "delivered"]
        for r in pending:
            problems.append(f"{label} outbox row not delivered: {short(r)}")
    if not clean["advisories"]:
        problems.append("the clean run published no advisory: nothing was compared")

    # The receiver: deduped by webhook-id, each advisory exactly once, none missing.
    hooks = [json.loads(line) for line in open(receiver_log) if line.strip()]
    for label, s, path in (("clean", clean, clean_path), ("killed", killed, killed_path)):
        by_webhook = {}
        posts = 0
        for h in hooks:
            if h["path"] != path or h["status"] != 200:
                continue
            posts += 1
            advisory = json.loads(h["body"])["id"]
            if by_webhook.setdefault(h["webhook_id"], advisory) != advisory:
                problems.append(f"{label} receiver: webhook-id {h['webhook_id']} carried "
                                f"{by_webhook[h['webhook_id']]} and {advisory}")
        counts = collections.Counter(by_webhook.values())
        expected = {r[0] for r in s["advisories"]}
        for a, n in counts.items():
            if n != 1:
                problems.append(f"{label} receiver: {a} delivered under {n} webhook-ids")
        for a in sorted(expected - counts.keys()):
            problems.append(f"{label} receiver: {a} never delivered")
        for a in sorted(counts.keys() - expected):
            problems.append(f"{label} receiver: {a} delivered but not in the store")
        print(f"crash: {label}: {len(expected)} advisories, {posts} accepted POSTs, "
              f"{len(by_webhook)} distinct webhook-ids")

    print(f"crash: compared {len(clean['revisions'])} revisions, {len(clean['changes'])} changes, "
          f"{len(clean['advisories'])} advisories, {len(clean['outbox'])} outbox rows")
    if problems:
        print(f"crash: {len(problems)} differences:")
        for p in problems[:200]:
            print("  " + p)
        return 1
    print("crash: the killed store matches the clean one")
    return 0


if __name__ == "__main__":
    sys.exit(main())
