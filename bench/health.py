"""How long `/health` takes while the relay serves the largest request it accepts.

    .venv/bin/python bench/health.py [--samples-every 0.01]

Starts a relay (local targets, in-memory state) and a program paused at its first line with the
project folder as its working directory, then sends the largest breakpoint request the relay takes
(``MAX_BREAKPOINTS_PER_REQUEST`` function breakpoints, every one looked up in the project's sources)
while another client keeps asking `/health` on a keep-alive connection. Prints the `/health`
latencies (median, p99, max) during the request and the request's own time, as JSON, and writes it
to bench/results/health.json. The relay and its targets are ended by PID.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import httpx
import psutil

from debugrelay.models import limits

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = str(ROOT / "tests" / "targets" / "basic.py")
RESULTS = ROOT / "bench" / "results"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def start_relay(workdir: Path) -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    env = {**os.environ, "DEBUGRELAY_STATE_DIR": str(workdir / "state"), "DEBUGRELAY_POOL_SIZE": "0"}
    with (workdir / "relay.log").open("wb") as log:
        proc = subprocess.Popen(
            [sys.executable, "-m", "debugrelay.cli", "serve", "--port", str(port)], env=env, stdout=log, stderr=log
        )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"{url}/health").status_code == 200:
                return proc, url
        except httpx.TransportError:
            time.sleep(0.05)
    proc.kill()
    raise SystemExit(f"the relay did not start: {(workdir / 'relay.log').read_text()}")


def end_tree(proc: subprocess.Popen[bytes]) -> None:
    try:
        family = [psutil.Process(proc.pid), *psutil.Process(proc.pid).children(recursive=True)]
    except psutil.NoSuchProcess:
        return
    for member in family:
        with contextlib.suppress(psutil.NoSuchProcess):
            member.kill()
    proc.wait(10)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--samples-every", type=float, default=0.01, help="seconds between /health calls")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="debugrelay-health-") as tmp:
        proc, url = start_relay(Path(tmp))
        try:
            result = measure(url, args.samples_every)
        finally:
            end_tree(proc)
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "health.json").write_text(json.dumps(result, indent=2))
    print(json.dumps(result, indent=2))


def measure(url: str, every: float) -> dict[str, Any]:
    json_headers = {"Content-Type": "application/json"}
    with httpx.Client(base_url=url, timeout=300, headers=json_headers) as api:
        sid = api.post("/sessions", json={}).json()["session_id"]
        launch = {"script": SCRIPT, "cwd": str(ROOT), "stop_on_entry": True}
        api.post(f"/sessions/{sid}/launch", json=launch).raise_for_status()
        api.post(f"/sessions/{sid}/wait", json={"timeout": 30}).raise_for_status()
        names = [{"function": f"no_such_function_{i}"} for i in range(limits.MAX_BREAKPOINTS_PER_REQUEST)]
        latencies: list[float] = []
        done = threading.Event()

        def probe() -> None:
            with httpx.Client(base_url=url, timeout=30) as health:
                health.get("/health")  # the keep-alive connection, opened before the request starts
                while not done.is_set():
                    t0 = time.perf_counter()
                    health.get("/health").raise_for_status()
                    latencies.append((time.perf_counter() - t0) * 1000)
                    time.sleep(every)

        sampler = threading.Thread(target=probe)
        sampler.start()
        t0 = time.perf_counter()
        answer = api.post(f"/sessions/{sid}/breakpoints", json=names)
        took = time.perf_counter() - t0
        done.set()
        sampler.join()
        answer.raise_for_status()
        api.delete(f"/sessions/{sid}")
    ordered = sorted(latencies)
    return {
        "request": f"{len(names)} function breakpoints, looked up under {ROOT}",
        "request_seconds": round(took, 3),
        "answer_bytes": len(answer.content),
        "health_samples": len(ordered),
        "health_median_ms": round(statistics.median(ordered), 2),
        "health_p99_ms": round(ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))], 2),
        "health_max_ms": round(ordered[-1], 2),
    }


if __name__ == "__main__":
    main()
