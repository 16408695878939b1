#!/usr/bin/env python3
"""A webhook receiver on 127.0.0.1 for the crash-safety script.

usage: receiver.py LOG PORT_FILE [FAIL_PROBABILITY] [SEED]

Appends one JSON line per POST to LOG: {"path", "webhook_id", "status", "body"}. Answers 200,
or 500 with probability FAIL_PROBABILITY (at most twice per webhook-id, so retries converge in
a bounded time). Writes its port to PORT_FILE once listening. Loopback only.
"""
import http.server
import json
import os
import random
import sys
import threading

log_path, port_file = sys.argv[1], sys.argv[2]
fail_p = float(sys.argv[3]) if len(sys.argv) > 3 else 0.0
rng = random.Random(int(sys.argv[4]) if len(sys.argv) > 4 else None)
lock = threading.Lock()
failures = {}
log = open(log_path, "a", buffering=1)


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_POST(self):
        length = int(self.headers.get("Content-Length", "0"))
        body = self.rfile.read(length).decode("utf-8", "replace")
        webhook_id = self.headers.get("webhook-id", "")
        with lock:
            status = 200
            if fail_p > 0 and failures.get(webhook_id, 0) < 2 and rng.random() < fail_p:
                failures[webhook_id] = failures.get(webhook_id, 0) + 1
                status = 500
            log.write(json.dumps({"path": self.path, "webhook_id": webhook_id,
                                  "status": status, "body": body}) + "\n")
            log.flush()
        reply = b'{"ok": true}' if status == 200 else b'{"error": "injected"}'
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(reply)))
        self.end_headers()
        self.wfile.write(reply)

    def log_message(self, *args):
        pass


class Server(http.server.ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address):
        # A daemon killed mid-request resets its connections: expected here, not news.
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


server = Server(("127.0.0.1", 0), Handler)
with open(port_file + ".tmp", "w") as f:
    f.write(str(server.server_address[1]))
os.replace(port_file + ".tmp", port_file)
server.serve_forever()
