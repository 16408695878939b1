"""Summarises fakehub's /_fakehub/log (JSON on stdin): request counts and body bytes, per endpoint."""
import collections
import json
import re
import sys

log = json.load(sys.stdin)
kinds = collections.Counter()
kind_bytes = collections.Counter()
statuses = collections.Counter()
repos = set()
for r in log:
    p = r["path"]
    m = re.match(r"^/api/models/([^/]+/[^/]+)(/([a-z-]+))?", p)
    if m:
        repos.add(m.group(1))
        kind = "api:" + (m.group(3) or "info")
    elif r["server"] == "cdn":
        kind = "cdn"
    else:
        kind = "hub:" + (p.split("/")[3] if p.count("/") >= 3 else p)
    kinds[kind] += 1
    kind_bytes[kind] += r["bytes"]
    statuses[r["status"]] += 1
print(json.dumps({
    "requests": len(log),
    "body_bytes": sum(r["bytes"] for r in log),
    "distinct_repos": len(repos),
    "connections": len({(r["server"], r["connection"]) for r in log}),
    "by_endpoint": {k: {"requests": kinds[k], "body_bytes": kind_bytes[k]} for k in sorted(kinds)},
    "statuses": {str(k): v for k, v in sorted(statuses.items())},
    "if_none_match": sum(1 for r in log if r["if_none_match"]),
}))
