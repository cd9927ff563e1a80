"""What a breakpoint costs inside the debugged program, on code no one here wrote: pyperformance's richards
and nbody (a bench dependency, from PyPI), each run plain, under debugpy alone (a raw DAP client sends the
same breakpoint) and under the relay, with no breakpoint, a false condition on the hot line, a hit count
never reached there, and the hot line's condition and hit count together. Local targets on this Python;
the program times itself, so start-up and attach are not counted.

``make bench-conditions`` (or ``.venv/bin/python -m bench.conditions [--runs N]``): prints seconds
(median of N runs) and the ratio relay / debugpy alone per case; every process it starts is ended."""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from ._dap import Dap
from ._harness import ROOT, Cleanup, Relay, free_port, kill_tree, until
from .overhead import _parse

DRIVE = str(ROOT / "bench" / "cond_drive.py")


def _benchmarks() -> Path:
    try:
        import pyperformance
    except ImportError as exc:
        raise SystemExit("pyperformance is not installed: make bench-conditions installs it") from exc
    return Path(pyperformance.__file__).parent / "data-files" / "benchmarks"


def _line(path: str, text: str) -> int:
    for number, line in enumerate(Path(path).read_text().splitlines(), 1):
        if line.strip() == text:
            return number
    raise LookupError(f"no line {text!r} in {path}")


def workloads() -> dict[str, dict[str, Any]]:
    """Each benchmark's file, its hot line, a condition that is never true there, and its size."""
    root = _benchmarks()
    richards = str(root / "bm_richards" / "run_benchmark.py")
    nbody = str(root / "bm_nbody" / "run_benchmark.py")
    return {
        "richards": {
            "file": richards,
            "line": _line(richards, "if t.isTaskHoldingOrWaiting():"),
            "condition": "t is None",
            "loops": "1",
        },
        "nbody": {"file": nbody, "line": _line(nbody, "dx = x1 - x2"), "condition": "m1 > 1e9", "loops": "15000"},
    }


def breakpoint_of(kind: str, work: dict[str, Any]) -> dict[str, Any] | None:
    """The breakpoint a case sets on the hot line (None: none at all), in DAP's words."""
    never = "100000000"  # a hit count the run never reaches: every run of the line is counted
    if kind == "none":
        return None
    if kind == "condition":
        return {"line": work["line"], "condition": work["condition"]}
    if kind == "hit_count":
        return {"line": work["line"], "hitCondition": never}
    if kind == "condition+hit_count":
        return {"line": work["line"], "condition": work["condition"], "hitCondition": never}
    raise ValueError(kind)


KINDS = ("none", "condition", "hit_count", "condition+hit_count")


def argv(work: dict[str, Any], name: str) -> list[str]:
    return [DRIVE, work["file"], name, work["loops"]]


def plain(work: dict[str, Any], name: str) -> float:
    done = subprocess.run([sys.executable, *argv(work, name)], capture_output=True, text=True, check=True, timeout=600)
    return _parse(done.stdout)[0]


def debugpy_alone(work: dict[str, Any], name: str, kind: str, workdir: Path, cleanup: Cleanup) -> float:
    """Stock debugpy, its breakpoint sent by a raw DAP client: the floor the relay is held to."""
    port = free_port()
    output = workdir / f"debugpy-{port}.out"
    out = output.open("wb")
    proc = subprocess.Popen(
        [sys.executable, "-m", "debugpy", "--listen", f"127.0.0.1:{port}", "--wait-for-client", *argv(work, name)],
        stdout=out,
        stderr=subprocess.STDOUT,
        env={k: v for k, v in os.environ.items() if k != "PYTHONPATH"},
    )
    done = cleanup.add(f"debugpy {port}", lambda: kill_tree(proc.pid))
    dap = Dap.ready("127.0.0.1", port)
    try:
        from debugrelay.dap import ATTACH_ARGS  # the same debugpy options as the relay's

        attach = dap.send("attach", {**ATTACH_ARGS, "justMyCode": False, "subProcess": False, "pathMappings": []})
        dap.event("initialized")
        bp = breakpoint_of(kind, work)
        dap.request("setBreakpoints", {"source": {"path": work["file"]}, "breakpoints": [bp] if bp else []})
        dap.request("setExceptionBreakpoints", {"filters": []})
        dap.request("configurationDone")
        dap.response(attach)
        # the program times itself; debugpy keeps its process until the client goes
        until(lambda: "workload_s" in output.read_text(errors="replace"), "the workload's timing", 900, every=0.05)
    finally:
        dap.close()
        done()
        out.close()
    return _parse(output.read_text())[0]


def under_relay(relay: Relay, work: dict[str, Any], name: str, kind: str) -> float:
    http = relay.http
    sid = relay.call("POST", "/sessions", json={})["session_id"]
    try:
        bp = breakpoint_of(kind, work)
        if bp is not None:
            body = {"source": {"path": work["file"]}, "line": bp["line"]}
            body.update(
                {k: v for k, v in (("condition", bp.get("condition")), ("hit_condition", bp.get("hitCondition"))) if v}
            )
            relay.call("POST", f"/sessions/{sid}/breakpoints", json=body)
        script, *args = argv(work, name)
        relay.call("POST", f"/sessions/{sid}/launch", json={"script": script, "args": args, "pool": False})
        while (status := relay.call("POST", f"/sessions/{sid}/wait", json={"timeout": 300}))["status"] == "running":
            pass
        if status["status"] != "terminated":
            raise RuntimeError(f"the {kind} breakpoint stopped the run: {status}")
        page = http.get(f"/sessions/{sid}/output", params={"limit": 1000}).json()
        return _parse("".join(line["text"] for line in page["outputs"]))[0]
    finally:
        http.delete(f"/sessions/{sid}")


def main(argv_: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--only", default="", help="comma-separated workloads (default: all)")
    args = parser.parse_args(argv_)
    chosen = workloads()
    if args.only:
        chosen = {k: v for k, v in chosen.items() if k in args.only.split(",")}
    cleanup = Cleanup()
    rows: list[list[str]] = []
    with cleanup.installed(), tempfile.TemporaryDirectory(prefix="bench-conditions-") as tmp:
        workdir = Path(tmp)
        relay = Relay(workdir, cleanup, "conditions")
        for name, work in chosen.items():
            base = statistics.median(plain(work, name) for _ in range(args.runs))
            for kind in KINDS:
                alone = statistics.median(debugpy_alone(work, name, kind, workdir, cleanup) for _ in range(args.runs))
                relayed = statistics.median(under_relay(relay, work, name, kind) for _ in range(args.runs))
                rows.append(
                    [
                        name,
                        kind,
                        f"{base:.3f}",
                        f"{alone:.3f}",
                        f"{relayed:.3f}",
                        f"{alone / base:.2f}",
                        f"{relayed / alone:.2f}",
                    ]
                )
                print("  ".join(rows[-1]), flush=True)
        relay.stop()
    head = ["workload", "breakpoint", "plain s", "debugpy s", "relay s", "debugpy/plain", "relay/debugpy"]
    widths = [max(len(r[i]) for r in [head, *rows]) for i in range(len(head))]
    print(
        f"\nPython {sys.version_info[0]}.{sys.version_info[1]}, local targets, median of {args.runs} runs "
        f"({time.strftime('%Y-%m-%d %H:%M')})"
    )
    for row in [head, *rows]:
        print("  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
