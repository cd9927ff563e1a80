"""Each launch starts from the documented defaults unless it says otherwise: a launch's ``stop_on_exception``,
environment and arguments are for its run only; the session's own exception breakpoints carry over, and the
answer says so. Over HTTP and MCP, on real debugpy targets, on the relay's Python and across 3.12."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.conftest import Sessions, line_of, ok, target
from tests.integration.test_mcp import stdio_agent
from tests.integration.test_stops_leave_no_trace import PYTHONS, python_of

pytestmark = pytest.mark.integration

FOLDER = target("testrun")
UNITS = target("testrun/check_units.py")
CRASH = target("crash.py")


def run_of(sessions: Sessions, sid: str, **body: Any) -> Any:
    """Launch ``body`` in ``sid`` and answer its first event."""
    ok(sessions.http.post(f"/sessions/{sid}/launch", json={"cwd": FOLDER, **body}))
    return sessions.wait(sid)


@pytest.mark.parametrize("python", PYTHONS)
def test_a_launch_that_said_none_leaves_the_next_launch_on_the_default(
    api: httpx.Client, sessions: Sessions, python: str
) -> None:
    units = {"module": "unittest", "args": ["check_units"], **python_of(python)}
    sid = sessions.create()
    quiet = run_of(sessions, sid, **units, stop_on_exception="none", env={"FRESH_MARK": "first-run"})
    assert quiet["status"] == "terminated", quiet

    again = ok(api.post(f"/sessions/{sid}/launch", json={"cwd": FOLDER, **units}))
    assert "each failing test" in again["stops_on"], again  # a test run's default: it stops at failures
    stop = sessions.wait(sid)
    assert stop["status"] == "paused", stop
    assert (stop["reason"], stop["location"]["line"]) == ("exception", line_of(UNITS, "unit-assert")), stop
    env = ok(api.post(f"/sessions/{sid}/evaluate", json={"expression": "__import__('os').environ.get('FRESH_MARK')"}))
    assert env["result"] == "None"  # the first launch's environment was its own
    assert not ok(api.get(f"/sessions/{sid}/exception-breakpoints")).get("carries_over")


def test_the_sessions_own_exception_breakpoints_carry_over_and_the_answer_says_so(
    api: httpx.Client, sessions: Sessions
) -> None:
    sid = sessions.create()
    ok(api.post(f"/sessions/{sid}/exception-breakpoints", json={"filters": []}))
    units = {"module": "unittest", "args": ["check_units"]}
    carried = ok(api.post(f"/sessions/{sid}/launch", json={"cwd": FOLDER, **units}))
    assert "carry over" in carried["stops_on"], carried
    assert sessions.wait(sid)["status"] == "terminated"

    # a launch's own word wins for its run, and the session's setting is back for the next
    told = run_of(sessions, sid, **units, stop_on_exception="uncaught")
    assert (told["status"], told["reason"]) == ("paused", "exception"), told
    assert run_of(sessions, sid, **units)["status"] == "terminated"
    assert ok(api.get(f"/sessions/{sid}/exception-breakpoints")) == {
        "filters": [],
        "exception_types": [],
        "carries_over": True,
    }


async def test_mcp_launch_that_said_none_leaves_the_next_on_uncaught(tmp_path: Path) -> None:
    async with stdio_agent(tmp_path) as agent:
        quiet = await agent.call("debug_launch", script=CRASH, stop_on_exception="none")
        assert (quiet["status"], quiet["exit_code"]) == ("terminated", 1), quiet

        again = await agent.call("debug_launch", script=CRASH)
        assert (again["status"], again["reason"]) == ("paused", "exception"), again
        assert again["location"]["line"] == line_of(CRASH, "raise-here")
        assert "carried_exception_breakpoints" not in again

        await agent.call("debug_set_exception_breakpoints", filters=[])
        carried = await agent.call("debug_launch", script=CRASH)
        assert carried["status"] == "terminated", carried
        assert carried["carried_exception_breakpoints"] == {"filters": [], "exception_types": []}, carried
        await agent.call("debug_disconnect", forget=True)
