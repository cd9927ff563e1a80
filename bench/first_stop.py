"""Launch -> first stop through the relay, beside the tools an agent would use instead; then launches with
a trace on a machine kept busy.

    .venv/bin/python -m bench.first_stop [--samples 5] [--busy-launches 50] [--busy-cold 0] [--python PATH]

A script that raises and a one-test pytest file whose test fails, each run: plain (``python script.py``:
to its traceback; ``pytest``: to its report), under ``pytest --pdb`` (to the ``(Pdb)`` prompt at the
failure), and through the relay (the launch request to the stop the wait returns), warm from the pool and
cold. Then one CPU-bound process per core and ``--busy-launches`` launches of a script with a function
traced from its start (then ``--busy-cold`` more without the pool), counting the launches that failed.
``--python``: the programs' interpreter (it needs pytest for the test parts; default the relay's). Prints
medians and writes bench/results/first_stop.json; every process started is ended.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from ._harness import Cleanup, Relay, kill_tree, until
from .run import RESULTS, expect, summary

SCRIPT = """\
def price(items):
    return sum(items)


total = price([1, 2, 3])
raise ValueError(f"total {total} is not 7")
"""
TEST = """\
def test_total():
    items = [1, 2, 3]
    assert sum(items) == 7
"""
TRACED = """\
def price(items):
    return sum(items)


for n in range(5):
    price(list(range(n)))
"""
PYTEST_ARGS = ["-p", "no:cacheprovider"]  # nothing written into the bench's folder but what it made


def timed_run(argv: list[str], cwd: Path) -> float:
    """Milliseconds until ``argv`` ends."""
    start = time.perf_counter()
    subprocess.run(argv, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    return (time.perf_counter() - start) * 1000


def pdb_prompt(python: str, cwd: Path, cleanup: Cleanup) -> float:
    """Milliseconds until ``pytest --pdb`` shows its prompt at the failure (then it is told to quit)."""
    start = time.perf_counter()
    proc = subprocess.Popen(
        [python, "-m", "pytest", *PYTEST_ARGS, "--pdb", "test_total.py"],
        cwd=cwd,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    done = cleanup.add("pytest --pdb", lambda: kill_tree(proc.pid))
    assert proc.stdout is not None
    assert proc.stdin is not None
    seen = b""
    while b"(Pdb)" not in seen:
        chunk = os.read(proc.stdout.fileno(), 65536)
        if not chunk:
            raise RuntimeError(f"pytest --pdb ended without a prompt: {seen[-500:]!r}")
        seen += chunk
    elapsed = (time.perf_counter() - start) * 1000
    proc.stdin.write(b"q\n")
    proc.stdin.close()
    proc.wait(60)
    done()
    return elapsed


def relay_first_stop(relay: Relay, launch: dict[str, Any], *, pool: bool, check: bool = True) -> float:
    """Milliseconds from the launch request to the first stop the wait returns (the pool full and idle first)."""
    if pool:
        until(lambda: relay.pool_ready("local"), "the pool to be full and idle", 300)
    http = relay.http
    sid = expect(http.post("/sessions", json={}))["session_id"]
    start = time.perf_counter()
    expect(http.post(f"/sessions/{sid}/launch", json={**launch, "pool": pool}))
    status = expect(http.post(f"/sessions/{sid}/wait", json={"timeout": 300}))
    elapsed = (time.perf_counter() - start) * 1000
    if status["status"] != "paused":
        raise RuntimeError(f"no stop: {status}")
    warm = bool(expect(http.get(f"/sessions/{sid}"))["target"].get("pooled"))
    expect(http.delete(f"/sessions/{sid}"))
    if check and warm != pool:
        raise RuntimeError(f"asked for a {'warm' if pool else 'cold'} target, got the other")
    return elapsed


def busy(cleanup: Cleanup) -> list[subprocess.Popen[bytes]]:
    """One CPU-bound process per core, ended with the bench."""
    spinners = []
    for _ in range(os.cpu_count() or 1):
        proc = subprocess.Popen([sys.executable, "-c", "while True: pass"])
        cleanup.add("a busy process", lambda pid=proc.pid: kill_tree(pid))
        spinners.append(proc)
    return spinners


def traced_launches(relay: Relay, script: Path, python: str, count: int, *, pool: bool = True) -> dict[str, Any]:
    """``count`` launches of ``script`` with a function traced from its start, one after another, each to its
    end: failures (a launch refused, a session failed or not ended), warm and cold, and the times."""
    http = relay.http
    times, failures, warm, starting = [], [], 0, 0
    for n in range(count):
        sid = expect(http.post("/sessions", json={}))["session_id"]
        expect(http.post(f"/sessions/{sid}/traces", json={"function": f"{script}:price"}))
        start = time.perf_counter()
        launch = {"script": str(script), "python": python, "pool": pool}
        answer = http.post(f"/sessions/{sid}/launch", json=launch)
        if answer.status_code >= 300:
            failures.append({"launch": n, "status": answer.status_code, "answer": answer.text[:500]})
            http.delete(f"/sessions/{sid}")
            continue
        starting += answer.json().get("starting") is not None
        status = expect(http.post(f"/sessions/{sid}/wait", json={"timeout": 300}))
        times.append((time.perf_counter() - start) * 1000)
        if status["status"] != "terminated" or status.get("exit_code") != 0:
            failures.append({"launch": n, "status": status})
        warm += bool(expect(http.get(f"/sessions/{sid}"))["target"].get("pooled"))
        expect(http.delete(f"/sessions/{sid}"))
    return {
        "launches": count,
        "failed": len(failures),
        "failures": failures[:5],
        "warm": warm,
        "answered_starting": starting,
        "ms": summary(times) if times else None,
    }


def has_pytest(python: str) -> bool:
    return subprocess.run([python, "-c", "import pytest"], capture_output=True, check=False).returncode == 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.first_stop", description=__doc__.split("\n\n")[0])
    parser.add_argument("--samples", type=int, default=5, help="samples per tool and mode")
    parser.add_argument("--busy-launches", type=int, default=50, help="traced launches on the busy machine")
    parser.add_argument("--busy-cold", type=int, default=0, help="then as many cold (pool: false) ones")
    parser.add_argument("--python", default=sys.executable, help="the programs' interpreter")
    args = parser.parse_args(argv)
    python = args.python
    version = subprocess.run(
        [python, "-c", "import sys; print('%d.%d' % sys.version_info[:2])"], capture_output=True, text=True, check=True
    ).stdout.strip()
    result: dict[str, Any] = {"python": version, "samples": args.samples, "cores": os.cpu_count()}
    cleanup = Cleanup()
    with cleanup.installed(), tempfile.TemporaryDirectory(prefix="debugrelay-bench-") as tmp:
        work = Path(tmp)
        project = work / "project"
        project.mkdir()
        (project / "raises.py").write_text(SCRIPT)
        (project / "test_total.py").write_text(TEST)
        (project / "traced.py").write_text(TRACED)
        tests = has_pytest(python)
        n = args.samples
        plain: dict[str, Any] = {"script": summary([timed_run([python, "raises.py"], project) for _ in range(n)])}
        if tests:
            pytest_argv = [python, "-m", "pytest", *PYTEST_ARGS, "test_total.py"]
            plain["pytest"] = summary([timed_run(pytest_argv, project) for _ in range(n)])
            plain["pytest --pdb"] = summary([pdb_prompt(python, project, cleanup) for _ in range(n)])
        result["plain"] = plain
        relay = Relay(work, cleanup, "first-stop", {"DEBUGRELAY_ALLOWED_ROOTS": str(work)})
        script = {"script": str(project / "raises.py"), "python": python, "stop_on_exception": "uncaught"}
        test = {"test": "test_total.py::test_total", "cwd": str(project), "python": python, "args": PYTEST_ARGS}
        kinds = {"script": script, **({"failing test": test} if tests else {})}
        for launch in kinds.values():  # the pool keeps targets for an interpreter (a test run's) once one used it
            relay_first_stop(relay, launch, pool=True, check=False)
        result["relay"] = {
            kind: {
                "warm": summary([relay_first_stop(relay, launch, pool=True) for _ in range(n)]),
                "cold": summary([relay_first_stop(relay, launch, pool=False) for _ in range(n)]),
            }
            for kind, launch in kinds.items()
        }
        if args.busy_launches:
            spinners = busy(cleanup)
            result["busy"] = traced_launches(relay, project / "traced.py", python, args.busy_launches)
            if args.busy_cold:
                cold = traced_launches(relay, project / "traced.py", python, args.busy_cold, pool=False)
                result["busy cold"] = cold
            for proc in spinners:
                kill_tree(proc.pid)
        relay.stop()
    report(result)
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "first_stop.json").write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=2))
    return 0


def report(result: dict[str, Any]) -> None:
    """The medians, one line each, on stderr."""
    out = sys.stderr
    print(f"Python {result['python']}, {result['cores']} cores: launch -> first stop, median ms", file=out)
    for tool, stats in result["plain"].items():
        print(f"  plain {tool:14} {stats['median']:8.0f}", file=out)
    for kind, modes in result["relay"].items():
        warm, cold = modes["warm"]["median"], modes["cold"]["median"]
        print(f"  relay {kind:14} {warm:8.0f} warm {cold:8.0f} cold", file=out)
    for part in ("busy", "busy cold"):
        busy = result.get(part)
        if busy:
            ms = busy["ms"]["median"] if busy["ms"] else float("nan")
            print(
                f"  {part} machine: {busy['launches']} traced launches, {busy['failed']} failed, {busy['warm']} warm,"
                f" {busy['answered_starting']} answered 'starting', median {ms:.0f} ms to the end",
                file=out,
            )


if __name__ == "__main__":
    sys.exit(main())
