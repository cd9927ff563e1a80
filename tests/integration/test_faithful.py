"""The promise: a program under the debugger computes and prints what it would without it. A program with
types of its own (a ``__repr__`` that counts its calls, one that takes a lock the program holds),
generators and a generator expression, and a real library's test suite (``referencing``'s, as installed)
run plain and under the debugger with stops, evaluations, a snapshot, traces, logpoints and capture points:
the same output, exit code and pytest closing line. Real relay, real debugpy targets."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest
import referencing._core

from tests.conftest import Sessions, line_of, ok, target, until
from tests.integration.test_stops_leave_no_trace import PYTHONS, plain_run, python_of, settle

pytestmark = pytest.mark.integration

LEDGER = target("faithful/ledger.py")
LOGGED = "logpoint:"  # how the logpoints' messages start: they join the output, the program's lines do not
CORE = referencing._core.__file__
SUITE = [str(Path(CORE).parent / "tests" / f"test_{name}.py") for name in ("core", "jsonschema", "exceptions")]
SUITE_ENV = {"PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}  # the suite as its own project runs it: no plugin of ours


def line_with(path: str, text: str) -> int:
    """The number of the first line of ``path`` that holds ``text``."""
    for number, line in enumerate(Path(path).read_text().splitlines(), 1):
        if text in line:
            return number
    raise AssertionError(f"{text!r} not in {path}")


def program_output(api: httpx.Client, sid: str, stream: str) -> str:
    """What the program wrote to ``stream``, the logpoints' messages left out."""
    outputs = ok(api.get(f"/sessions/{sid}/output", params={"limit": 10000}))["outputs"]
    return "".join(o["text"] for o in outputs if o["type"] == stream and not o["text"].startswith(LOGGED))


def logged(api: httpx.Client, sid: str) -> list[str]:
    outputs = ok(api.get(f"/sessions/{sid}/output", params={"limit": 10000}))["outputs"]
    return [o["text"] for o in outputs if o["text"].startswith(LOGGED)]


def observe(api: httpx.Client, sessions: Sessions, sid: str, stop_at: tuple[str, int], reads: list[str]) -> None:
    """Three stops at ``stop_at`` (its breakpoint set before the launch: a fast program could end before one
    set while it runs), each read as an agent would (its locals, its stack, ``reads`` evaluated), a snapshot at
    the first; at the last the breakpoint goes, and the program runs to its end."""
    (breakpoint_id,) = [
        b["breakpoint_id"]
        for b in ok(api.get(f"/sessions/{sid}/breakpoints"))["breakpoints"]
        if b.get("line") == stop_at[1] and not b.get("log_message")
    ]
    for n in range(3):
        stop = settle(sessions, sid)
        assert (stop["status"], stop["location"]["line"]) == ("paused", stop_at[1]), stop
        ok(api.get(f"/sessions/{sid}/variables"))
        ok(api.get(f"/sessions/{sid}/stacktrace"))
        for expression in reads:
            ok(api.post(f"/sessions/{sid}/evaluate", json={"expression": expression}))
        if n == 0:
            ok(api.post(f"/sessions/{sid}/snapshots"), 201)
        if n == 2:  # pydevd sets its tracer again on every frame: a traced call in flight is still recorded
            ok(api.delete(f"/sessions/{sid}/breakpoints/{breakpoint_id}"))
        ok(api.post(f"/sessions/{sid}/continue", json={}))


def watched(
    api: httpx.Client, sessions: Sessions, sid: str, functions: list[str], capture: tuple[str, int], *, log: int
) -> None:
    """Traces on ``functions``, a capture point of every local at ``capture`` and a logpoint at line ``log``
    of the same file."""
    for function in functions:
        ok(api.post(f"/sessions/{sid}/traces", json={"function": function}), 201)
    body = {"file": capture[0], "line": capture[1], "expressions": ["locals"]}
    ok(api.post(f"/sessions/{sid}/captures", json=body), 201)
    sessions.bp(sid, capture[0], log, log_message=LOGGED + " line {__import__('sys')._getframe().f_lineno}")


def debugged_ledger(api: httpx.Client, sessions: Sessions, **launch: Any) -> tuple[str, str, int]:
    sid = sessions.create()
    functions = [f"{LEDGER}:{name}" for name in ("apply", "transactions", "fee")]
    watched(api, sessions, sid, functions, (LEDGER, line_of(LEDGER, "apply-here")), log=line_of(LEDGER, "append-here"))
    stop_at = (LEDGER, line_of(LEDGER, "fee-here"))
    sessions.bp(sid, *stop_at)
    sessions.launch(sid, LEDGER, **launch)
    observe(api, sessions, sid, stop_at, ["amount * rate", "divmod(amount, 7)"])
    end = settle(sessions, sid)
    assert end["status"] == "terminated", end
    traced = {t["qualname"]: t["calls"] for t in ok(api.get(f"/sessions/{sid}/traces"))["traces"]}
    assert traced == {"apply": 300, "transactions": 1, "fee": 300}, traced  # Accounts read without their __repr__
    assert len(logged(api, sid)) == 300
    return program_output(api, sid, "stdout"), program_output(api, sid, "stderr"), end["exit_code"]


@pytest.mark.parametrize("python", PYTHONS)
def test_a_program_prints_and_exits_as_it_would_without_the_debugger(
    api: httpx.Client, sessions: Sessions, python: str
) -> None:
    launch = python_of(python)
    plain = plain_run(LEDGER, python=launch.get("python", sys.executable))
    assert (plain.stderr, plain.returncode) == ("reprs 0\n", 3), plain
    assert debugged_ledger(api, sessions, **launch) == (plain.stdout, plain.stderr, plain.returncode)


def closing_line(output: str) -> str:
    """pytest's closing line, its time left out."""
    found = re.findall(r"^=*\s*(\d+ \w+(?:, \d+ \w+)*) in [\d.]+s", output, re.MULTILINE)
    assert found, output
    return str(found[-1])


def without_times(output: str) -> str:
    return re.sub(r" in [\d.]+s", " in Ns", output)


def test_a_librarys_test_suite_passes_the_same_under_the_debugger(
    api: httpx.Client, sessions: Sessions, tmp_path: Path
) -> None:
    args = ["-q", "-p", "no:cacheprovider", "-c", os.devnull, "--rootdir", str(tmp_path), *SUITE]
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "DEBUGRELAY_"))}
    plain = subprocess.run(
        [sys.executable, "-m", "pytest", *args],
        check=False,
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={**env, **SUITE_ENV},
        timeout=300,
    )
    assert plain.returncode == 0 and "passed" in closing_line(plain.stdout), plain.stdout

    sid = sessions.create()
    functions = [f"{CORE}:{name}" for name in ("Resolver.lookup", "Resolver.dynamic_scope", "Registry.crawl")]
    capture = (CORE, line_with(CORE, 'if fragment.startswith("/"):'))
    watched(api, sessions, sid, functions, capture, log=line_with(CORE, "if fragment:"))
    launch = {"module": "pytest", "args": args, "cwd": str(tmp_path), "env": SUITE_ENV}
    stop_at = (CORE, line_with(CORE, 'if ref.startswith("#"):'))
    sessions.bp(sid, *stop_at)
    ok(sessions.http.post(f"/sessions/{sid}/launch", json=launch))
    observe(api, sessions, sid, stop_at, ["ref", "len(ref)"])
    end = settle(sessions, sid)
    assert end["status"] == "terminated", end
    assert logged(api, sid), "the logpoint never wrote"

    stdout = program_output(api, sid, "stdout")
    assert closing_line(stdout) == closing_line(plain.stdout)
    assert without_times(stdout) == without_times(plain.stdout)
    assert (program_output(api, sid, "stderr"), end["exit_code"]) == (plain.stderr, plain.returncode)


@pytest.mark.parametrize("python", PYTHONS)
def test_a_logpoint_logs_every_run_while_its_files_breakpoints_change(
    api: httpx.Client, sessions: Sessions, tmp_path: Path, python: str
) -> None:
    """A running loop's logpoint prints once per iteration, none missed, while other breakpoints of its file
    come and go (debugpy replaces a file's breakpoints by removing them all, then adding each back)."""
    ticker, stop = target("faithful/ticker.py"), tmp_path / "stop"
    sid = sessions.create()
    sessions.bp(sid, ticker, line_of(ticker, "tick-here"), log_message=LOGGED + " {n}")
    sessions.launch(sid, ticker, args=[str(stop)], **python_of(python))
    until(lambda: logged(api, sid), "the logpoint's first line")
    for _ in range(20):
        extra = sessions.bp(sid, ticker, line_with(ticker, "time.sleep"), condition="False")["breakpoint_id"]
        ok(api.delete(f"/sessions/{sid}/breakpoints/{extra}"))
    stop.touch()
    end = settle(sessions, sid)
    assert end["status"] == "terminated", end
    ticks = int(program_output(api, sid, "stdout").split()[-1])
    assert [int(line.split()[-1]) for line in logged(api, sid)] == list(range(ticks))
