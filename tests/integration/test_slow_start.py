"""A target whose debugger is slow to start (a loaded machine, a slow start-up hook): the launch waits while
its process lives, answers ``starting`` with what it waits for, and the program then stops as asked."""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import Relay, Sessions, ok, until
from tests.integration.test_pool import full

pytestmark = pytest.mark.integration

# held at start-up until the test opens the gate: longer than the relay's launch timeout, as long as the test wants
GATED_STARTUP = """\
import os, sys
args = [a for a in getattr(sys, "orig_argv", [])[1:] if not a.startswith("-X")]
if args[:2] == ["-m", "debugpy"]:  # the program's interpreter, not its keeper or debugpy's adapter
    with open(os.environ["GATE"]) as gate:  # a FIFO: opening it waits for the test to open its end
        gate.read()
"""


@pytest.fixture
def relay(tmp_path: Path) -> Iterator[Relay]:
    started = Relay(tmp_path, env={"DEBUGRELAY_LAUNCH_TIMEOUT": "2", "DEBUGRELAY_ALLOWED_ROOTS": str(tmp_path)})
    yield started
    started.stop()


@pytest.fixture
def gated(tmp_path: Path) -> tuple[Path, Path]:
    """(a folder whose sitecustomize holds the program's start, the FIFO that lets it go on)."""
    hooks = tmp_path / "hooks"
    hooks.mkdir()
    (hooks / "sitecustomize.py").write_text(GATED_STARTUP)
    gate = tmp_path / "gate"
    os.mkfifo(gate)
    return hooks, gate


def open_gate(gate: Path) -> None:
    with gate.open("w") as end:  # waits until the program has its end open: then it reads EOF and goes on
        end.write("go")


def test_a_debugger_slower_than_the_launch_timeout_answers_starting_then_stops(
    relay: Relay, tmp_path: Path, gated: tuple[Path, Path]
) -> None:
    hooks, gate = gated
    script = tmp_path / "main.py"
    script.write_text("print('ran')\n")
    sessions = Sessions(relay.http)
    sid = sessions.create()
    launch = {"pythonpath": [str(hooks)], "env": {"GATE": str(gate)}, "pool": False, "stop_on_entry": True}
    answer = sessions.launch(sid, str(script), **launch)
    assert answer["status"] == "launching", answer
    assert "debugger" in answer["starting"], answer
    assert ok(relay.http.get(f"/sessions/{sid}/status"))["starting"] == answer["starting"]
    opener = threading.Thread(target=open_gate, args=(gate,))
    opener.start()
    stop = sessions.wait(sid)
    opener.join()
    assert stop["status"] == "paused" and stop["reason"] == "entry", stop
    assert "starting" not in stop
    ok(relay.http.post(f"/sessions/{sid}/continue"))
    assert sessions.wait(sid)["status"] == "terminated"


def test_a_terminate_while_the_debugger_starts_ends_the_program(
    relay: Relay, tmp_path: Path, gated: tuple[Path, Path]
) -> None:
    hooks, gate = gated
    script = tmp_path / "main.py"
    script.write_text("print('ran')\n")
    sessions = Sessions(relay.http)
    sid = sessions.create()
    answer = sessions.launch(sid, str(script), pythonpath=[str(hooks)], env={"GATE": str(gate)}, pool=False)
    assert answer["status"] == "launching", answer
    ended = ok(relay.http.post(f"/sessions/{sid}/terminate"))
    assert ended["status"] == "terminated", ended
    assert "ran" not in "".join(o["text"] for o in ok(relay.http.get(f"/sessions/{sid}/output"))["outputs"])


@pytest.mark.parametrize("pool", [False, True], ids=["cold", "warm"])
def test_a_breakpoint_in_a_frozen_standard_module_stops(relay: Relay, tmp_path: Path, pool: bool) -> None:
    """Python 3.11+ freezes modules such as posixpath: their code never runs from the file a breakpoint
    names unless the interpreter is told not to (debugpy warns of it otherwise)."""
    import posixpath

    frozen = posixpath.__spec__ is not None and posixpath.__spec__.origin == "frozen"
    if not frozen:
        pytest.skip("this interpreter does not freeze posixpath")
    line = next(
        i for i, text in enumerate(Path(posixpath.__file__).read_text().splitlines(), 1) if "a = os.fspath(a)" in text
    )
    script = tmp_path / "main.py"
    script.write_text("import posixpath\nprint(posixpath.join('a', 'b'))\n")
    sessions = Sessions(relay.http)
    sid = sessions.create()
    sessions.bp(sid, posixpath.__file__, line)
    if pool:
        until(lambda: full(relay.http), "the pool to be full", seconds=180)
    sessions.launch(sid, str(script), pool=pool)
    stop = sessions.wait(sid)
    assert stop["status"] == "paused" and stop["location"]["function"] == "join", stop
