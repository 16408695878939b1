#!/usr/bin/env python3
"""Checks Standard Webhooks signatures with Python's hmac/base64: an implementation that shares
no code with hubwatch's. Input: a JSON file, a list of
  {"secret": "whsec_...", "id": ..., "timestamp": ..., "signature": ..., "body_hex": ...}
Exit 0 iff every entry verifies; prints one line per entry."""

import base64
import binascii
import hashlib
import hmac
import json
import sys


def expected(secret, msg_id, timestamp, body):
    assert secret.startswith("whsec_")
    key = base64.b64decode(secret[len("whsec_"):], validate=True)
    assert 24 <= len(key) <= 64, len(key)
    signed = msg_id.encode() + b"." + timestamp.encode() + b"." + body
    digest = hmac.new(key, signed, hashlib.sha256).digest()
    return "v1," + base64.b64encode(digest).decode()


def main():
    with open(sys.argv[1], encoding="utf-8") as f:
        entries = json.load(f)
    ok = True
    for i, e in enumerate(entries):
        body = binascii.unhexlify(e["body_hex"])
        want = expected(e["secret"], e["id"], e["timestamp"], body)
        good = any(hmac.compare_digest(want, s) for s in e["signature"].split(" "))
        good = good and "." not in e["id"] and e["timestamp"].isdigit()
        print(f"{i}: {'ok' if good else 'MISMATCH'} {e['id']} {e['timestamp']}")
        ok = ok and good
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
