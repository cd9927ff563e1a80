"""Programs that start processes in a container target: the children live in the target's container and
are debugged in the same session; with child debugging off the program still runs to its end."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from tests.conftest import Sessions, line_of, ok, output_text, target

POOL = target("proc_pool.py")
RUN = target("proc_run.py")
CHILD = target("proc_child.py")


@pytest.mark.parametrize("method", ["fork", "spawn"])
def test_a_pool_worker_in_a_container_stops_reads_and_continues(
    docker_client: Any, api: httpx.Client, sessions: Sessions, method: str
) -> None:
    sid = sessions.create()
    sessions.bp(sid, POOL, line_of(POOL, "worker-line"))
    sessions.launch(sid, POOL, args=[method], launcher="docker", debug_subprocesses=True)
    inputs = []
    while (status := sessions.wait(sid, timeout=120))["status"] == "paused":
        assert status["location"]["file"] == POOL and status["process"], status
        inputs.append(int(ok(api.post(f"/sessions/{sid}/evaluate", json={"expression": "n"}))["result"]))
        ok(api.post(f"/sessions/{sid}/continue"))
    assert status["status"] == "terminated" and status["exit_code"] == 0, status
    assert sorted(inputs) == [0, 1, 2, 3]
    assert output_text(api, sid, "stdout").endswith("squares [0, 1, 4, 9]\nPOOL-END\n")


def test_a_python_child_in_a_container_stops_at_its_breakpoint(
    docker_client: Any, api: httpx.Client, sessions: Sessions
) -> None:
    sid = sessions.create()
    sessions.bp(sid, CHILD, line_of(CHILD, "child-line"))
    sessions.launch(sid, RUN, launcher="docker", debug_subprocesses=True)
    stop = sessions.wait(sid, timeout=120)
    assert stop["status"] == "paused" and stop["location"]["file"] == CHILD, stop
    assert ok(api.post(f"/sessions/{sid}/evaluate", json={"expression": "n"}))["result"] == "7"
    ok(api.post(f"/sessions/{sid}/continue"))
    end = sessions.wait(sid, timeout=120)
    assert end["status"] == "terminated" and end["exit_code"] == 0, end
    assert output_text(api, sid, "stdout") == "child squared 49\nRUN-END 0\n"


def test_a_pool_in_a_container_without_child_debugging_runs_to_its_end(
    docker_client: Any, api: httpx.Client, sessions: Sessions
) -> None:
    sid = sessions.create()
    sessions.bp(sid, POOL, line_of(POOL, "worker-line"))
    sessions.launch(sid, POOL, args=["fork"], launcher="docker", debug_subprocesses=False)
    end = sessions.wait(sid, timeout=120)
    assert end["status"] == "terminated" and end["exit_code"] == 0, end
    assert "debug_subprocesses" in end["undebugged_note"]
    assert output_text(api, sid, "stdout") == "squares [0, 1, 4, 9]\nPOOL-END\n"
