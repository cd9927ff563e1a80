"""How long the tools take to start, as a user meets them: ``debugrelay mcp`` until it answers ``initialize``,
and whole CLI commands (``--help``, and ``status`` against a running relay).

    .venv/bin/python -m bench.startup [--runs 7]

MCP ready: ``debugrelay mcp`` is started (the relay's services in its own process, in-memory state; and
forwarding to a running relay with ``--url``), sent ``initialize`` on stdin as a client sends it, and timed
from the start of the process to the answer's line on stdout. CLI: each command is run as a whole process
until it exits. Prints min, median and max of each in milliseconds, and the median CPU time the process
used (by the answer, for MCP), as JSON and writes
bench/results/startup.json. Everything started here is ended by PID.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import select
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import psutil

from bench._harness import ROOT, Cleanup, Relay

DEBUGRELAY = str(Path(sys.executable).parent / "debugrelay")  # the installed command, as a user runs it
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "bench", "version": "0"},
    },
}
ANSWER_WAIT = 120.0  # seconds an MCP server may take to answer before the run counts as failed


def mcp_ready(args: list[str], env: dict[str, str]) -> tuple[float, float]:
    """Seconds from starting ``debugrelay mcp ARGS`` to its answer to ``initialize``, and the CPU seconds it
    had used by then (less hostage to a busy machine); then it is ended."""
    started = time.perf_counter()
    proc = subprocess.Popen(
        [DEBUGRELAY, "mcp", *args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=env,
        cwd=ROOT,
    )
    try:
        assert proc.stdin is not None
        assert proc.stdout is not None
        proc.stdin.write(json.dumps(INITIALIZE).encode() + b"\n")
        proc.stdin.flush()
        ready, _, _ = select.select([proc.stdout], [], [], ANSWER_WAIT)
        if not ready:
            raise TimeoutError("debugrelay mcp did not answer initialize")
        line = proc.stdout.readline()
        took = time.perf_counter() - started
        used = psutil.Process(proc.pid).cpu_times()
        if b'"id":1' not in line.replace(b" ", b""):
            raise RuntimeError(f"not an answer to initialize: {line[:200]!r}")
        return took, used.user + used.system
    finally:
        proc.stdin.close()  # type: ignore[union-attr]  # the client leaves: the server ends
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def command(argv: list[str], env: dict[str, str]) -> tuple[float, float]:
    """Seconds a whole ``debugrelay`` command takes, from start to exit, and the CPU seconds it used."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    subprocess.run([DEBUGRELAY, *argv], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    took = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return took, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def figures(samples: list[tuple[float, float]]) -> dict[str, float]:
    """min, median and max of the wall times; the median CPU time."""
    ms = sorted(wall * 1000 for wall, _ in samples)
    cpu = statistics.median(cpu * 1000 for _, cpu in samples)
    return {
        "min_ms": round(ms[0], 1),
        "median_ms": round(statistics.median(ms), 1),
        "max_ms": round(ms[-1], 1),
        "cpu_median_ms": round(cpu, 1),
    }


def measure(runs: int) -> dict[str, Any]:
    base = {k: v for k, v in os.environ.items() if not k.startswith("DEBUGRELAY_")}
    with tempfile.TemporaryDirectory(prefix="bench-startup-") as tmp, Cleanup().installed() as cleanup:
        work = Path(tmp)
        relay = Relay(work, cleanup, "startup")
        client = {**base, "DEBUGRELAY_URL": relay.url}
        embedded = {**base, "DEBUGRELAY_STATE_DIR": str(work / "state-mcp")}
        cases = {
            "mcp_ready": lambda: mcp_ready([], embedded),
            "mcp_ready_url": lambda: mcp_ready(["--url", relay.url], base),
            "cli_help": lambda: command(["--help"], base),
            "cli_status": lambda: command(["sessions"], client),
        }
        results: dict[str, Any] = {}
        for name, case in cases.items():
            case()  # warm-up: the file cache, compiled bytecode
            results[name] = figures([case() for _ in range(runs)])
        relay.stop()
    return {"runs": runs, "load_1min": os.getloadavg()[0], **results}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    result = measure(args.runs)
    text = json.dumps(result, indent=2)
    print(text)
    out = ROOT / "bench" / "results"
    out.mkdir(exist_ok=True)
    (out / "startup.json").write_text(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
