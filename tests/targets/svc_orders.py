"""A small HTTP service (the standard library's server, a thread per request): GET /orders/N answers
the order's total as JSON; POST /echo answers the body it was sent. Arguments: port, address."""

import json
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

PRICES = {"apple": 3, "pear": 5}


class Orders(BaseHTTPRequestHandler):
    def do_GET(self):
        order_id = int(self.path.rsplit("/", 1)[-1])
        items = ["apple"] * order_id + ["pear"]  # handler-line
        total = sum(PRICES[item] for item in items)
        self.answer(200, {"order": order_id, "total": total})

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", 0))).decode()
        self.answer(201, {"echo": body, "type": self.headers.get("Content-Type")})  # echo-line

    def answer(self, status, data):
        raw = json.dumps(data).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(raw)))
        self.end_headers()
        self.wfile.write(raw)

    def log_message(self, *args):
        print("served", self.path, flush=True)


if __name__ == "__main__":
    host = sys.argv[2] if len(sys.argv) > 2 else "0.0.0.0"  # a container is reached from outside it
    ThreadingHTTPServer((host, int(sys.argv[1])), Orders).serve_forever()
