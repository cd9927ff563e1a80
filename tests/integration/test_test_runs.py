"""Agents debug through tests: a failing test pauses at its own assert, over HTTP and MCP, on real debugpy."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.conftest import Relay, Sessions, error_of, line_of, ok, output_text, target
from tests.integration.test_mcp import stdio_agent

pytestmark = pytest.mark.integration

FOLDER = target("testrun")
CART = target("testrun/check_cart.py")
UNITS = target("testrun/check_units.py")


def launch(sessions: Sessions, **body: Any) -> tuple[str, Any]:
    sid = sessions.create()
    answer = ok(sessions.http.post(f"/sessions/{sid}/launch", json={"cwd": FOLDER, **body}))
    return sid, answer


def next_stop(sessions: Sessions, sid: str) -> Any:
    ok(sessions.http.post(f"/sessions/{sid}/continue", json={}))
    return sessions.wait(sid)


def local_names(api: httpx.Client, sid: str) -> tuple[set[str], Any]:
    found = ok(api.get(f"/sessions/{sid}/variables"))
    return {v["name"] for v in found["variables"]}, found


def outcome_counts(output: str) -> dict[str, int]:
    """The counts on pytest's closing line, without its warnings count."""
    closing = re.findall(r"^=*\s*(\d+ \w+(?:, \d+ \w+)*) in [\d.]+s", output, re.MULTILINE)
    assert closing, output
    counts = {word: int(n) for n, word in re.findall(r"(\d+) (\w+)", closing[-1])}
    return {word: n for word, n in counts.items() if not word.startswith("warning")}


def test_a_failing_pytest_test_stops_at_its_assert_by_default(api: httpx.Client, sessions: Sessions) -> None:
    sid, launched = launch(sessions, module="pytest", args=["-q", CART])
    assert "each failing test" in launched["stops_on"], launched

    # skips, pytest.raises, xfail and passing tests never pause: the first stop is the real failure
    stop = sessions.wait(sid)
    assert stop["status"] == "paused", stop
    assert stop["reason"] == "exception"
    assert stop["location"] == {"file": CART, "line": line_of(CART, "total-assert"), "function": "test_total"}
    assert stop["exception"]["type"] == "AssertionError"
    assert stop["exception"]["message"].startswith("assert 4 == 5"), stop  # the message pytest builds
    names, found = local_names(api, sid)
    assert names == {"cart", "expected"}, found  # the test's locals, alive, without @py_assert*
    assert found["hidden"] >= 2, found
    assert ok(api.post(f"/sessions/{sid}/evaluate", json={"expression": "cart.items"}))["result"] == (
        "{'apple': 2, 'pear': 3}"
    )

    fixture = next_stop(sessions, sid)  # an error in a fixture pauses in the fixture
    assert fixture["exception"]["type"] == "KeyError", fixture
    assert fixture["location"]["line"] == line_of(CART, "fixture-error"), fixture
    gave_up = next_stop(sessions, sid)  # pytest.fail pauses in the test that called it, not in pytest
    assert gave_up["location"] == {"file": CART, "line": line_of(CART, "gives-up"), "function": "test_gives_up"}
    assert gave_up["exception"]["message"] == "no pears"

    end = next_stop(sessions, sid)  # pytest's closing sys.exit(1) is the exit, not a stop
    assert end["status"] == "terminated", end
    assert end["exit_code"] == 1
    # pytest's own tally; a warning the run happens to raise (the environment's, not the tests') is not counted
    assert outcome_counts(output_text(api, sid)) == {"failed": 2, "passed": 2, "skipped": 1, "xfailed": 1, "error": 1}


def test_a_run_narrowed_to_one_test_by_node_id(api: httpx.Client, sessions: Sessions) -> None:
    sid, launched = launch(sessions, test=f"{CART}::test_total", args=["-q"])
    assert launched["status"] in ("launching", "running", "paused"), launched
    stop = sessions.wait(sid)
    assert stop["location"]["function"] == "test_total", stop
    end = next_stop(sessions, sid)
    assert end["status"] == "terminated", end
    assert "1 failed" in output_text(api, sid)
    detail = ok(api.get(f"/sessions/{sid}"))
    assert detail["launch"]["module"] == "pytest"
    assert detail["launch"]["args"] == ["-q", f"{CART}::test_total"]


def test_a_failing_unittest_test_stops_in_the_test_not_in_unittest(api: httpx.Client, sessions: Sessions) -> None:
    sid, _ = launch(sessions, module="unittest", args=["check_units"])
    stop = sessions.wait(sid)
    assert stop["status"] == "paused", stop
    assert stop["location"] == {"file": UNITS, "line": line_of(UNITS, "unit-assert"), "function": "test_total"}
    assert stop["exception"]["message"] == "4 != 5"
    names, _ = local_names(api, sid)
    assert names == {"self", "total"}
    end = next_stop(sessions, sid)
    assert end["status"] == "terminated", end
    assert end["exit_code"] == 1


def unit_stop(stop: Any) -> None:
    """The failing TestCase test's stop: at its assertEqual, not in unittest or pytest."""
    assert stop["status"] == "paused", stop
    assert stop["reason"] == "exception", stop
    assert stop["location"] == {"file": UNITS, "line": line_of(UNITS, "unit-assert"), "function": "test_total"}
    assert stop["exception"]["type"] == "AssertionError", stop
    assert stop["exception"]["message"] == "4 != 5", stop


def test_a_failing_unittest_test_under_pytest_stops_in_the_test(api: httpx.Client, sessions: Sessions) -> None:
    sid, launched = launch(sessions, module="pytest", args=["-q", UNITS])
    assert "each failing test" in launched["stops_on"], launched
    # the assertRaises, the expected failure and the skip never pause: the first stop is the real failure
    stop = sessions.wait(sid)
    unit_stop(stop)
    names, _ = local_names(api, sid)
    assert names == {"self", "total"}
    end = next_stop(sessions, sid)
    assert end["status"] == "terminated", end
    assert end["exit_code"] == 1
    assert outcome_counts(output_text(api, sid)) == {"failed": 1, "passed": 1, "skipped": 1, "xfailed": 1}

    narrowed, _ = launch(sessions, test=f"{UNITS}::CartTest::test_total", args=["-q"])
    unit_stop(sessions.wait(narrowed))


async def test_mcp_launch_of_a_failing_testcase_test_pauses_at_its_assert(tmp_path: Path) -> None:
    async with stdio_agent(tmp_path) as agent:
        stop = await agent.call("debug_launch", test=f"{UNITS}::CartTest::test_total", args=["-q"], cwd=FOLDER)
        unit_stop(stop)
        assert set(stop["locals"]) == {"self", "total"}, stop["locals"]
        end = await agent.call("debug_continue")
        assert end["status"] == "terminated", end
        await agent.call("debug_disconnect", forget=True)


def test_a_test_run_told_not_to_stop_runs_to_its_end(api: httpx.Client, sessions: Sessions) -> None:
    sid, launched = launch(sessions, module="pytest", args=["-q", CART], stop_on_exception="none")
    assert launched["stops_on"] == "breakpoints", launched
    end = sessions.wait(sid)
    assert end["status"] == "terminated", end
    assert end["exit_code"] == 1


def test_a_test_id_for_a_plain_script_is_refused_and_changes_nothing(api: httpx.Client, sessions: Sessions) -> None:
    sid = sessions.create()
    response = api.post(f"/sessions/{sid}/launch", json={"script": CART, "test": "check_cart.py::test_total"})
    err = error_of(response, 400, "invalid_request")
    assert "pytest" in err["hint"]
    assert ok(api.get(f"/sessions/{sid}"))["status"] == "created"
    bad = api.post(f"/sessions/{sid}/launch", json={"module": "json.tool", "test": "x"})
    assert error_of(bad, 400, "invalid_request")["details"]["module"] == "json.tool"


async def test_mcp_launch_of_one_failing_test_answers_with_its_locals(tmp_path: Path) -> None:
    async with stdio_agent(tmp_path) as agent:
        stop = await agent.call("debug_launch", test=f"{CART}::test_total", args=["-q"], cwd=FOLDER)
        assert stop["status"] == "paused", stop
        assert stop["location"]["function"] == "test_total"
        assert stop["code"] == "assert cart.total() == expected  # total-assert"
        assert stop["exception"]["message"].startswith("assert 4 == 5")
        assert set(stop["locals"]) == {"cart", "expected"}, stop["locals"]
        assert "each failing test" in stop["stops_on"]
        end = await agent.call("debug_continue")
        assert end["status"] == "terminated", end


def test_library_frames_of_a_failing_test_come_folded_and_expand_on_request(
    api: httpx.Client, sessions: Sessions
) -> None:
    sid, _ = launch(sessions, test=f"{CART}::test_total", args=["-q"])
    assert sessions.wait(sid)["status"] == "paused"
    folded = ok(api.get(f"/sessions/{sid}/stacktrace", params={"max_frames": 1000}))
    top, rest = folded["frames"][0], folded["frames"][1:]
    assert top["name"] == "test_total"
    assert "is_external" not in top
    assert [f["collapsed"] for f in rest if "collapsed" in f] == [folded["total_frames"] - 1], rest
    assert rest[0]["id"] == 1
    assert rest[0]["through"].startswith(f"{folded['total_frames'] - 1} "), rest[0]

    listed = ok(api.get(f"/sessions/{sid}/stacktrace", params={"max_frames": 1000, "library": "true"}))
    assert len(listed["frames"]) == listed["total_frames"] == folded["total_frames"]
    assert all(f["is_external"] for f in listed["frames"][1:])
    assert not any("collapsed" in f for f in listed["frames"])


async def test_mcp_stacktrace_folds_library_frames(tmp_path: Path) -> None:
    async with stdio_agent(tmp_path) as agent:
        await agent.call("debug_launch", test=f"{CART}::test_total", args=["-q"], cwd=FOLDER)
        folded = await agent.call("debug_stacktrace", max_frames=1000)
        assert folded["frames"][0]["name"] == "test_total"
        assert len(folded["frames"]) == 2, folded  # the test, then one entry for pytest, pluggy and runpy
        assert folded["frames"][1]["collapsed"] == folded["total_frames"] - 1
        listed = await agent.call("stacktrace_get", max_frames=1000, library=True)
        assert len(listed["frames"]) == folded["total_frames"]
        await agent.call("debug_disconnect", forget=True)


def test_cli_launch_of_a_failing_testcase_under_pytest_pauses_at_its_assert(relay: Relay) -> None:
    from tests.integration.test_cli import Cli

    cli = Cli(relay)
    stop = cli("launch", "--module", "pytest", "--cwd", FOLDER, "--", "-q", UNITS)  # answers the first stop
    unit_stop(stop)
    assert set(stop["locals"]) == {"self", "total"}, stop
    cli("delete", stop["session_id"])


async def test_mcp_stop_of_a_test_run_leaves_out_the_runners_banner_and_warnings(tmp_path: Path) -> None:
    """pytest's banner (platform, rootdir, plugins, collected) and the warnings its plugins print as they load
    say nothing of the failing test: the stop's output is the test's own; the output pages keep all of it."""
    project = tmp_path / "project"
    project.mkdir()
    (project / "test_price.py").write_text(
        "def test_price():\n    print('pricing the cart')\n    assert 2 + 2 == 5  # price-assert\n"
    )
    env = {"DEBUGRELAY_ALLOWED_ROOTS": str(tmp_path)}
    async with stdio_agent(tmp_path, env=env) as agent:
        stop = await agent.call("debug_launch", test="test_price.py::test_price", args=["-s"], cwd=str(project))
        assert stop["status"] == "paused", stop
        said = stop.get("output", "")
        assert "pricing the cart" in said, stop
        for banner in ("test session starts", "platform ", "rootdir:", "plugins:", "collected 1 item", "Warning:"):
            assert banner not in said, stop
        assert "output pages keep them" in stop["output_left_out"], stop
        printed = await agent.call("debug_output")
        assert "test session starts" in str(printed), printed
        await agent.call("debug_disconnect")
