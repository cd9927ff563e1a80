"""How long `/health` takes while the relay redacts output made to be slow to redact.

    .venv/bin/python -m bench.output_health [--samples-every 0.01]

Starts a relay (local targets, in-memory state), runs tests/targets/out_crafted.py to its end (30
lines of ~60 KB of ``token=`` + hex), then reads the session's whole output, page after page, while
another client keeps asking `/health` on a keep-alive connection. Prints, as JSON, the time to read
the output, its pages, and the `/health` latencies during it (median, p99, max), and writes it to
bench/results/output_health.json. The relay and its targets are ended by PID.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import httpx

from .health import RESULTS, ROOT, end_tree, start_relay

SCRIPT = str(ROOT / "tests" / "targets" / "out_crafted.py")


def measure(url: str, every: float) -> dict[str, Any]:
    with httpx.Client(base_url=url, timeout=600) as api:
        sid = api.post("/sessions", json={}).json()["session_id"]
        api.post(f"/sessions/{sid}/launch", json={"script": SCRIPT}).raise_for_status()
        ended = api.post(f"/sessions/{sid}/wait", json={"timeout": 120}).json()
        assert ended["status"] == "terminated", ended
        latencies: list[float] = []
        ready, done = threading.Event(), threading.Event()

        def probe() -> None:
            with httpx.Client(base_url=url, timeout=600) as health:
                health.get("/health")  # the keep-alive connection, opened before the reading starts
                ready.set()
                while not done.is_set():
                    t0 = time.perf_counter()
                    health.get("/health").raise_for_status()
                    latencies.append((time.perf_counter() - t0) * 1000)
                    time.sleep(every)

        sampler = threading.Thread(target=probe)
        sampler.start()
        ready.wait(60)
        t0 = time.perf_counter()
        pages, chars, since = 0, 0, None
        while True:
            page = api.get(f"/sessions/{sid}/output", params={"limit": 1000, **({"since": since} if since else {})})
            page.raise_for_status()
            found = page.json()
            pages += 1
            chars += sum(len(o["text"]) for o in found["outputs"])
            since = found["cursor"]
            if not found["has_more"]:
                break
        took = time.perf_counter() - t0
        done.set()
        sampler.join()
        api.delete(f"/sessions/{sid}")
    ordered = sorted(latencies) or [0.0]
    return {
        "output": "30 lines of ~60 KB of token=<hex>, read whole",
        "read_seconds": round(took, 3),
        "pages": pages,
        "chars_answered": chars,
        "health_samples": len(latencies),
        "health_median_ms": round(statistics.median(ordered), 2),
        "health_p99_ms": round(ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))], 2),
        "health_max_ms": round(ordered[-1], 2),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--samples-every", type=float, default=0.01, help="seconds between /health calls")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="debugrelay-output-health-") as tmp:
        proc, url = start_relay(Path(tmp))
        try:
            result = measure(url, args.samples_every)
        finally:
            end_tree(proc)
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "output_health.json").write_text(json.dumps(result, indent=2))
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
