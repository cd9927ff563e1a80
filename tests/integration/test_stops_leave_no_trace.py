"""A stop changes nothing the program can see and lands where the program ran: values read at a stop, a
snapshot and a capture point leave no exception, warning or call of the program's code in it, its
sockets, imports and sys stay as they were, a line with a comprehension stops once per execution, and a
runaway recursion in a test pauses in the test's own code.

On real debugpy targets, on the relay's Python and on the other side of 3.12 (debugpy's line tracer up to
3.11, ``sys.monitoring`` from 3.12), over HTTP.
"""

from __future__ import annotations

import functools
import os
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.conftest import Sessions, line_of, ok, output_text, target

pytestmark = pytest.mark.integration

VALUES = target("same_values.py")
STATE = target("same_state.py")
SNAPSHOT = target("same_snapshot.py")
LINES = target("same_lines.py")
FOLDER = target("testrun")
RUNAWAY = target("testrun/check_runaway.py")
# the interpreter across 3.12 from the relay's: the other way debugpy watches lines
OTHER = "3.13" if sys.version_info < (3, 12) else "3.11"
PYTHONS = ["relay's", OTHER]


@functools.cache
def interpreter(version: str) -> str | None:
    """The real path of an installed ``python<version>``: on the PATH, else one pyenv installed (its shim
    runs only the versions pyenv has selected); None if there is none."""
    pyenv = Path(os.environ.get("PYENV_ROOT") or Path.home() / ".pyenv") / "versions"
    found = [shutil.which(f"python{version}"), *map(str, sorted(pyenv.glob(f"{version}*/bin/python{version}")))]
    for candidate in filter(None, found):
        run = subprocess.run(
            [candidate, "-c", "import sys; print(sys.executable)"], check=False, capture_output=True, text=True
        )
        if run.returncode == 0 and run.stdout.strip():
            return run.stdout.strip()
    return None


def python_of(which: str) -> dict[str, str]:
    """The launch's ``python`` for ``which`` (nothing for the relay's own); skips where it is not installed."""
    if which == "relay's":
        return {}
    found = interpreter(which)
    if found is None:
        pytest.skip(f"no python{which} here")
    return {"python": found}


def plain_run(*argv: str, python: str = sys.executable, cwd: str | None = None) -> Any:
    """The program run without the debugger, as its user would."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "DEBUGRELAY_"))}
    return subprocess.run([python, *argv], check=False, capture_output=True, text=True, cwd=cwd, env=env, timeout=300)


def settle(sessions: Sessions, sid: str) -> Any:
    """The session's next stop or its end, however long a loaded machine takes to reach it (bounded)."""
    for _ in range(8):
        status = sessions.wait(sid, 60)
        if status["status"] != "running":
            return status
    pytest.fail(f"{sid} neither stopped nor ended")


def run_through(api: httpx.Client, sessions: Sessions, sid: str) -> tuple[list[tuple[str, int]], Any]:
    """Continue from every stop to the end: (function, line) of each stop, and the end."""
    seen = []
    status = settle(sessions, sid)
    while status["status"] == "paused":
        seen.append((status["location"]["function"], status["location"]["line"]))
        ok(api.post(f"/sessions/{sid}/continue", json={}))
        status = settle(sessions, sid)
    return seen, status


# -- values read at a stop ----------------------------------------------------------------------------


def read_values_then_end(api: httpx.Client, sessions: Sessions, **launch: Any) -> tuple[str, str]:
    """Stop at ``values-read``, list the locals, evaluate and inspect each, continue: the program's stdout and
    stderr."""
    sid = sessions.create()
    sessions.bp(sid, VALUES, line_of(VALUES, "values-read"))
    sessions.launch(sid, VALUES, **launch)
    stop = settle(sessions, sid)
    assert stop["status"] == "paused", stop
    shown = {v["name"]: v["value"] for v in ok(api.get(f"/sessions/{sid}/variables"))["variables"]}
    assert "<cut" in shown["config"], shown  # too large to show whole: the printer stopped at its budget
    assert "name='orders'" in shown["lazy"], shown
    for expression in ("config", "config.sections", "lazy", "rows", "deep"):
        ok(api.post(f"/sessions/{sid}/evaluate", json={"expression": expression}))
        ok(api.post(f"/sessions/{sid}/object-inspect", json={"object_ref": expression}))
    ok(api.post(f"/sessions/{sid}/continue", json={}))
    end = settle(sessions, sid)
    assert (end["status"], end["exit_code"]) == ("terminated", 0), end
    return output_text(api, sid, "stdout"), output_text(api, sid, "stderr")


@pytest.mark.parametrize("python", PYTHONS)
def test_values_read_at_a_stop_leave_no_trace_in_the_program(
    api: httpx.Client, sessions: Sessions, python: str
) -> None:
    launch = python_of(python)
    plain = plain_run(VALUES, python=launch.get("python", sys.executable))
    assert plain.stdout.endswith("calls []\nunraisable []\n"), plain
    # no exception ignored in the program's unraisable hook, no debugger log in its stderr, no call of its
    # __getattr__ or __len__: what it prints is what it prints alone
    assert read_values_then_end(api, sessions, **launch) == (plain.stdout, plain.stderr)


def state_after_a_stop(api: httpx.Client, sessions: Sessions, **launch: Any) -> str:
    """Stop at ``state-read`` (a counted breakpoint), list the locals, continue: what the program printed."""
    sid = sessions.create()
    sessions.bp(sid, STATE, line_of(STATE, "state-read"), hit_condition=">= 1")
    sessions.launch(sid, STATE, **launch)
    stop = settle(sessions, sid)
    assert stop["status"] == "paused", stop
    assert {v["name"] for v in ok(api.get(f"/sessions/{sid}/variables"))["variables"]} >= {"client", "accepted"}
    ok(api.post(f"/sessions/{sid}/continue", json={}))
    end = settle(sessions, sid)
    assert (end["status"], end["exit_code"]) == ("terminated", 0), end
    return output_text(api, sid, "stdout")


@pytest.mark.parametrize("python", PYTHONS)
def test_a_stop_leaves_the_programs_sockets_imports_and_sys_as_they_were(
    api: httpx.Client, sessions: Sessions, python: str
) -> None:
    launch = python_of(python)
    plain = plain_run(STATE, python=launch.get("python", sys.executable))
    assert plain.stdout == "nodelay (0, 0)\nfinders []\nsys []\n", plain
    # the debugger's own sockets go without Nagle's delay, the program's keep it; the hook that patches
    # debugpy leaves the import machinery once it has; the relay's counts live in its own module
    assert state_after_a_stop(api, sessions, **launch) == plain.stdout


def evidence_then_end(api: httpx.Client, sessions: Sessions, **launch: Any) -> str:
    """A capture point of every local, a snapshot at a stop inside ``with guarded.lock``, then the end:
    both show the program's Order by its type and fields; what the program printed."""
    sid = sessions.create()
    body = {"file": SNAPSHOT, "line": line_of(SNAPSHOT, "capture-here"), "expressions": ["locals"]}
    point = ok(api.post(f"/sessions/{sid}/captures", json=body), 201)
    sessions.bp(sid, SNAPSHOT, line_of(SNAPSHOT, "snapshot-here"))
    sessions.launch(sid, SNAPSHOT, **launch)
    stop = settle(sessions, sid)
    assert stop["status"] == "paused", stop
    snapshot_id = ok(api.post(f"/sessions/{sid}/snapshots"), 201)["snapshot_id"]
    threads = ok(api.get(f"/sessions/{sid}/snapshots/{snapshot_id}"))["data"]["threads"]
    work = next(f for t in threads for f in t["frames"] if f["function"] == "work")
    order = work["locals"]["order"]
    assert order.startswith("<Order at 0x") and order.endswith(": n=3, items=['apple', 'apple', 'apple']>"), work
    assert work["locals"]["tally"].startswith("Counter({<Order at 0x"), work  # a library's container, read as data
    ok(api.post(f"/sessions/{sid}/continue", json={}))
    end = settle(sessions, sid)
    assert (end["status"], end["exit_code"]) == ("terminated", 0), end
    table = ok(api.get(f"/sessions/{sid}/captures/{point['capture_id']}"))
    (row,) = table["rows"]
    assert row[table["columns"].index("order")].startswith("<Order at 0x"), table
    return output_text(api, sid, "stdout")


@pytest.mark.parametrize("python", PYTHONS)
def test_a_snapshot_and_a_capture_point_run_none_of_the_programs_code(
    api: httpx.Client, sessions: Sessions, python: str
) -> None:
    launch = python_of(python)
    plain = plain_run(SNAPSHOT, python=launch.get("python", sys.executable))
    assert plain.stdout == "4\ncalls ['Guarded.lock']\n", plain
    # no call of Order.__repr__ for the values, nor of the property to find the lock the frame holds
    assert evidence_then_end(api, sessions, **launch) == plain.stdout


CONFIG_TESTS = """
class Config:
    def __init__(self):
        self.sections = {f"section{i}": [f"value {i}.{j} " + "x" * 200 for j in range(20)] for i in range(60)}


def test_has_no_sections():
    config = Config()
    assert len(config.sections) == 0


def test_has_section_99():
    config = Config()
    assert "section99" in config.sections
"""


def summary(output: str) -> str:
    """pytest's closing counts, warnings included, without the time."""
    closing = re.findall(r"^=*\s*(\d+ \w+(?:, \d+ \w+)*) in [\d.]+s", output, re.MULTILINE)
    assert closing, output
    return str(closing[-1])


def test_a_pytest_run_read_at_each_failure_ends_as_it_ends_alone(
    api: httpx.Client, sessions: Sessions, tmp_path: Path
) -> None:
    suite = tmp_path / "test_config.py"
    suite.write_text(textwrap.dedent(CONFIG_TESTS))
    (tmp_path / "pytest.ini").write_text("[pytest]\naddopts = -p no:cacheprovider -p no:asyncio\n")
    plain = plain_run("-m", "pytest", "-q", str(suite), cwd=str(tmp_path))
    assert summary(plain.stdout) == "2 failed", plain.stdout
    sid = sessions.create()
    ok(api.post(f"/sessions/{sid}/launch", json={"module": "pytest", "args": ["-q", str(suite)], "cwd": str(tmp_path)}))
    status, stops = settle(sessions, sid), 0
    while status["status"] == "paused":
        stops += 1
        assert status["location"]["file"] == str(suite), status
        ok(api.get(f"/sessions/{sid}/variables"))
        assert "<cut" in ok(api.post(f"/sessions/{sid}/evaluate", json={"expression": "config"}))["result"]
        ok(api.post(f"/sessions/{sid}/continue", json={}))
        status = settle(sessions, sid)
    assert stops == 2, status
    # not "2 failed, 2 warnings": no PytestUnraisableExceptionWarning from the debugger's value printer
    assert summary(output_text(api, sid)) == "2 failed", output_text(api, sid)


# -- one execution of a line, one stop ----------------------------------------------------------------


def lines_then_end(api: httpx.Client, sessions: Sessions, **launch: Any) -> None:
    """Break on the generator expression and the nested comprehensions, log on the list comprehension:
    each stops (or logs) once per call of ``main``, in ``main``."""
    sid = sessions.create()
    marked = [line_of(LINES, m) for m in ("genexpr", "nested")]
    for line in marked:
        sessions.bp(sid, LINES, line)
    sessions.bp(sid, LINES, line_of(LINES, "listcomp"), log_message="squares in run {run}")
    sessions.launch(sid, LINES, **launch)
    seen, end = run_through(api, sessions, sid)
    assert seen == [("main", line) for line in marked] * 2  # not again in <genexpr>, <setcomp>, <dictcomp>
    assert (end["status"], end["exit_code"]) == ("terminated", 0), end
    assert re.findall(r"squares in run \d", output_text(api, sid)) == ["squares in run 0", "squares in run 1"]
    listed = ok(api.get(f"/sessions/{sid}/breakpoints"))["breakpoints"]
    hits = [b.get("hit_count", 0) for b in listed if not b.get("log_message")]
    assert hits == [2, 2]


@pytest.mark.parametrize("python", PYTHONS)
def test_a_line_with_a_comprehension_stops_once_per_execution(
    api: httpx.Client, sessions: Sessions, python: str
) -> None:
    lines_then_end(api, sessions, **python_of(python))


# -- a runaway recursion in a test --------------------------------------------------------------------


def runaway_stop(api: httpx.Client, sessions: Sessions, launch: dict[str, Any]) -> None:
    """The run's first stop is the RecursionError in the test's own ``depth``, its locals there."""
    sid = sessions.create()
    ok(api.post(f"/sessions/{sid}/launch", json={"cwd": FOLDER, **launch}))
    stop = settle(sessions, sid)
    assert stop["status"] == "paused", stop
    assert stop["exception"]["type"] == "RecursionError", stop
    # not debugpy's compiled tracer (pydevd_cython.pyx, a file not on disk, no locals), which overflowed too
    assert stop["location"]["file"] == RUNAWAY, stop
    assert (stop["location"]["function"], stop["location"]["line"]) == ("depth", line_of(RUNAWAY, "runaway"))
    names = {v["name"] for v in ok(api.get(f"/sessions/{sid}/variables"))["variables"]}
    assert names == {"node", "n"}
    assert ok(api.post(f"/sessions/{sid}/evaluate", json={"expression": "node"}))["result"] == "'root'"


@pytest.mark.parametrize("python", PYTHONS)
def test_a_runaway_recursion_in_a_unittest_test_stops_in_the_test(
    api: httpx.Client, sessions: Sessions, python: str
) -> None:
    runaway_stop(api, sessions, {"module": "unittest", "args": ["check_runaway"], **python_of(python)})


def test_a_runaway_recursion_in_a_pytest_test_stops_in_the_test(api: httpx.Client, sessions: Sessions) -> None:
    runaway_stop(api, sessions, {"module": "pytest", "args": ["-q", RUNAWAY]})
