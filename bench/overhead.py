"""Debuggee overhead: a CPU-bound program's wall time under the relay (a breakpoint set, never hit)
against the same program run plain, per Python (the host's for local targets, the target image's for
containers). The program times itself, so start-up and attach are not counted."""

from __future__ import annotations

import re
import statistics
import subprocess
import sys
from typing import Any

from ._harness import ROOT, Relay, line_of

WORKLOAD = str(ROOT / "bench" / "workload.py")
NEVER_LINE = line_of("bench-never-hit", WORKLOAD)
_TIMED = re.compile(r"workload_s ([0-9.]+) python (\d+\.\d+)")


def _parse(text: str) -> tuple[float, str]:
    found = _TIMED.search(text)
    if found is None:
        raise RuntimeError(f"the workload printed no timing: {text[-500:]!r}")
    return float(found.group(1)), found.group(2)


def plain_local() -> tuple[float, str]:
    out = subprocess.run([sys.executable, WORKLOAD], capture_output=True, text=True, check=True, timeout=300)
    return _parse(out.stdout)


def plain_container(image: str) -> tuple[float, str]:
    import docker

    client = docker.from_env()
    try:
        folder = str(ROOT / "bench")
        out = client.containers.run(
            image,
            ["python", WORKLOAD],
            volumes={folder: {"bind": folder, "mode": "ro"}},
            user="10001:10001",
            network_disabled=True,
            remove=True,
        )
        return _parse(out.decode())
    finally:
        client.close()


def under_relay(relay: Relay, launcher: str) -> tuple[float, str]:
    http = relay.http
    sid = http.post("/sessions", json={}).json()["session_id"]
    try:
        http.post(f"/sessions/{sid}/breakpoints", json={"source": {"path": WORKLOAD}, "line": NEVER_LINE})
        launched = http.post(f"/sessions/{sid}/launch", json={"script": WORKLOAD, "launcher": launcher, "pool": False})
        if launched.status_code != 200:
            raise RuntimeError(f"launch: {launched.text[:300]}")
        status = http.post(f"/sessions/{sid}/wait", json={"timeout": 300}).json()
        if status.get("status") != "terminated":
            raise RuntimeError(f"the workload did not run to its end: {status}")
        page = http.get(f"/sessions/{sid}/output").json()
        return _parse("".join(line["text"] for line in page["outputs"]))
    finally:
        http.delete(f"/sessions/{sid}")


def measure(relay: Relay, launcher: str, runs: int, image: str | None = None) -> dict[str, Any]:
    """Median wall time of ``runs`` runs each way, and their ratio."""
    plain, debugged, python = [], [], ""
    for _ in range(runs):
        seconds, python = plain_container(image) if image else plain_local()
        plain.append(seconds)
        seconds, python = under_relay(relay, launcher)
        debugged.append(seconds)
    p, d = statistics.median(plain), statistics.median(debugged)
    return {
        "python": python,
        "image": image,
        "plain_s": round(p, 3),
        "debugged_s": round(d, 3),
        "ratio": round(d / p, 2),
        "runs": runs,
    }
