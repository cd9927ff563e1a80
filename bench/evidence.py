"""What seed 002's evidence costs the program and the agent.

    .venv/bin/python -m bench.evidence

- A capture point at a loop (100 rows) against the same loop run unpaused under the debugger, and
  against the 100 stop/read/continue round trips it replaces: the program's own wall time, and the
  agent's time for the whole collection.
- How long a snapshot pauses a running program: a thread pool blocked on a queue, and a deadlock
  (every thread in C, woken by the relay's signal). Medians of a few runs. Prints JSON.
"""

from __future__ import annotations

import json
import re
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from ._harness import ROOT, Cleanup, Relay, line_of, until

LOOP = str(ROOT / "tests" / "targets" / "ev_loop.py")
POOL = str(ROOT / "tests" / "targets" / "ev_pool.py")
DEADLOCK = str(ROOT / "tests" / "targets" / "ev_deadlock.py")
STEPS = 100
RUNS = 5


def _output(relay: Relay, sid: str) -> str:
    found = relay.call("GET", f"/sessions/{sid}/output", params={"limit": 10000})["outputs"]
    return "".join(o["text"] for o in found)


def _elapsed(relay: Relay, sid: str) -> float:
    text = until(lambda: re.search(r"elapsed=([0-9.]+)", _output(relay, sid)), "the loop to finish")
    return float(text.group(1)) * 1000


def _at_entry(relay: Relay) -> str:
    sid: str = relay.call("POST", "/sessions", json={})["session_id"]
    relay.call("POST", f"/sessions/{sid}/launch", json={"script": LOOP, "args": [str(STEPS)], "stop_on_entry": True})
    relay.call("POST", f"/sessions/{sid}/wait", json={"timeout": 30})
    return sid


def loop_runs(relay: Relay) -> dict[str, Any]:
    line = line_of("loop-body", LOOP)
    plain, captured, stepped, capture_agent, stepped_agent = [], [], [], [], []
    for _ in range(RUNS):
        sid = _at_entry(relay)
        relay.call("POST", f"/sessions/{sid}/continue", json={})
        plain.append(_elapsed(relay, sid))
        relay.call("DELETE", f"/sessions/{sid}")

        sid = _at_entry(relay)
        started = time.perf_counter()
        point = relay.call(
            "POST", f"/sessions/{sid}/captures", json={"file": LOOP, "line": line, "expressions": ["i", "total"]}
        )
        relay.call("POST", f"/sessions/{sid}/continue", json={})
        captured.append(_elapsed(relay, sid))
        rows = relay.call("GET", f"/sessions/{sid}/captures/{point['capture_id']}")
        capture_agent.append((time.perf_counter() - started) * 1000)
        assert rows["total"] == STEPS, rows
        relay.call("DELETE", f"/sessions/{sid}")

        sid = _at_entry(relay)
        started = time.perf_counter()
        relay.call("POST", f"/sessions/{sid}/breakpoints", json={"file": LOOP, "line": line})
        for _ in range(STEPS):
            relay.call("POST", f"/sessions/{sid}/continue", json={"wait": 30})
            relay.call("POST", f"/sessions/{sid}/evaluate", json={"expression": "(i, total)"})
        relay.call("DELETE", f"/sessions/{sid}/breakpoints/bp_1")
        relay.call("POST", f"/sessions/{sid}/continue", json={})
        stepped.append(_elapsed(relay, sid))
        stepped_agent.append((time.perf_counter() - started) * 1000)
        relay.call("DELETE", f"/sessions/{sid}")
    med = statistics.median
    return {
        "steps": STEPS,
        "program_ms_unpaused": round(med(plain), 2),
        "program_ms_with_capture_point": round(med(captured), 2),
        "program_ms_with_100_stops": round(med(stepped), 2),
        "agent_ms_capture_point": round(med(capture_agent), 1),
        "agent_ms_100_round_trips": round(med(stepped_agent), 1),
        "agent_calls": {"capture_point": 3, "round_trips": 2 * STEPS + 3},
    }


def snapshot_pauses(relay: Relay, script: str) -> dict[str, Any]:
    sid: str = relay.call("POST", "/sessions", json={})["session_id"]
    relay.call("POST", f"/sessions/{sid}/launch", json={"script": script})
    until(lambda: "started" in _output(relay, sid), "the program to start")
    paused, sizes, calls = [], [], []
    for _ in range(RUNS):
        started = time.perf_counter()
        snap = relay.call("POST", f"/sessions/{sid}/snapshots")
        calls.append((time.perf_counter() - started) * 1000)
        paused.append(snap["paused_ms"])
        sizes.append(snap["size_bytes"])
    relay.call("DELETE", f"/sessions/{sid}")
    return {
        "paused_ms_median": round(statistics.median(paused), 1),
        "call_ms_median": round(statistics.median(calls), 1),
        "snapshot_bytes": int(statistics.median(sizes)),
    }


def measure() -> dict[str, Any]:
    cleanup = Cleanup()
    with cleanup.installed(), tempfile.TemporaryDirectory(prefix="bench-evidence-") as tmp:
        relay = Relay(Path(tmp), cleanup, "evidence")
        try:
            return {
                "capture_point": loop_runs(relay),
                "snapshot_thread_pool": snapshot_pauses(relay, POOL),
                "snapshot_deadlock": snapshot_pauses(relay, DEADLOCK),
            }
        finally:
            relay.stop()


if __name__ == "__main__":
    print(json.dumps(measure(), indent=2))
