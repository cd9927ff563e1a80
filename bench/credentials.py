"""What a named credential costs a request: ``.venv/bin/python -m bench.credentials [--requests 3000]``.

Starts two relays (local targets, in-memory state): one guarded by the single ``DEBUGRELAY_TOKEN``, one by
a credentials file (an agent credential, its rate limit out of the way). Against each, over one
keep-alive ``http.client`` connection (the leanest client), asks ``GET /sessions`` (the gate, the rules
and the owner filter run) and ``GET /config`` (the credential check alone) ``--requests`` times after a
warm-up, and prints the median and p99 of each, in ms, as JSON. Measures and asserts nothing. Both relays
are ended by PID, also on Ctrl-C.
"""

from __future__ import annotations

import argparse
import http.client
import json
import statistics
import tempfile
import time
from pathlib import Path

from ._harness import Cleanup, Relay

TOKEN = "bench-token-0123456789abcdef"
CREDENTIALS = f"""
[[credentials]]
name = "bench-agent"
token = "{TOKEN}"
role = "agent"
requests_per_minute = 0
"""
PATHS = ("/sessions", "/config")


def timed(port: int, requests: int) -> dict[str, dict[str, float]]:
    conn = http.client.HTTPConnection("127.0.0.1", port)
    headers = {"Authorization": f"Bearer {TOKEN}"}

    def one(path: str) -> None:
        conn.request("GET", path, headers=headers)
        answer = conn.getresponse()
        answer.read()
        if answer.status != 200:
            raise RuntimeError(f"{path}: {answer.status}")

    for _ in range(300):
        one("/sessions")
    out = {}
    for path in PATHS:
        took = []
        for _ in range(requests):
            start = time.perf_counter()
            one(path)
            took.append(time.perf_counter() - start)
        took.sort()
        out[path] = {
            "median_ms": round(statistics.median(took) * 1e3, 3),
            "p99_ms": round(took[int(len(took) * 0.99)] * 1e3, 3),
        }
    conn.close()
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--requests", type=int, default=3000)
    args = parser.parse_args()
    cleanup = Cleanup()
    with cleanup.installed(), tempfile.TemporaryDirectory(prefix="debugrelay-bench-credentials-") as tmp:
        work = Path(tmp)
        file = work / "credentials.toml"
        file.write_text(CREDENTIALS)
        results = {}
        for name, env in (
            ("single_token", {"DEBUGRELAY_TOKEN": TOKEN}),
            ("credentials_file", {"DEBUGRELAY_CREDENTIALS": str(file)}),
        ):
            relay = Relay(work, cleanup, name, env=env)
            results[name] = timed(relay.port, args.requests)
            relay.stop()
        print(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
