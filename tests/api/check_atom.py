#!/usr/bin/env python3
"""Checks an Atom 1.0 feed (RFC 4287) for what the API tests rely on.

usage: check_atom.py FEED.xml ENTRIES
Well-formed XML; a feed element in the Atom namespace with exactly one id, title and updated,
an author, a self link; ENTRIES entries, each with one id (an IRI with a scheme, unique), title
and updated, dates in RFC 3339 form, and text content. Exits 1 with the reason otherwise.
"""
import re
import sys
import xml.etree.ElementTree as ET

A = "{http://www.w3.org/2005/Atom}"
DATE = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$")
IRI = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:\S+$")


def one(parent, name, where):
    found = parent.findall(A + name)
    if len(found) != 1:
        sys.exit(f"{where}: {len(found)} <{name}> elements, want 1")
    return found[0]


def main():
    root = ET.parse(sys.argv[1]).getroot()
    if root.tag != A + "feed":
        sys.exit(f"root is {root.tag}, not an Atom feed")
    for name in ("id", "title", "updated"):
        one(root, name, "feed")
    if not DATE.match(one(root, "updated", "feed").text or ""):
        sys.exit("feed updated is not RFC 3339")
    if not IRI.match(one(root, "id", "feed").text or ""):
        sys.exit("feed id is not an IRI")
    if not root.findall(A + "author"):
        sys.exit("feed has no author")
    if not [l for l in root.findall(A + "link") if l.get("rel") == "self" and l.get("href")]:
        sys.exit("feed has no self link")
    entries = root.findall(A + "entry")
    if len(entries) != int(sys.argv[2]):
        sys.exit(f"{len(entries)} entries, want {sys.argv[2]}")
    ids = set()
    for i, e in enumerate(entries):
        where = f"entry {i}"
        eid = one(e, "id", where).text or ""
        if not IRI.match(eid) or eid in ids:
            sys.exit(f"{where}: id {eid!r} is not a unique IRI")
        ids.add(eid)
        if not (one(e, "title", where).text or "").strip():
            sys.exit(f"{where}: empty title")
        for name in ("updated", "published"):
            for d in e.findall(A + name):
                if not DATE.match(d.text or ""):
                    sys.exit(f"{where}: {name} {d.text!r} is not RFC 3339")
        one(e, "updated", where)
        content = one(e, "content", where)
        if content.get("type") not in ("text", "html", "xhtml"):
            sys.exit(f"{where}: content type {content.get('type')!r}")
        if not [l for l in e.findall(A + "link") if l.get("rel") == "alternate"]:
            sys.exit(f"{where}: no alternate link")
    print(f"ok: {len(entries)} entries")


if __name__ == "__main__":
    main()
