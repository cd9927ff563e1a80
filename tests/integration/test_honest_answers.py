"""Deep and threaded programs answered honestly: a runaway recursion stops in the program's own code,
tracebacks in output are the program's own, a threaded stop says what changed, a step out of a frame
by an exception names it, values are shown whole or say where they were cut, objects show a few attributes.

On real debugpy targets, over HTTP and MCP.
"""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from tests.conftest import Sessions, line_of, ok, output_text, target
from tests.integration.test_mcp import stdio_agent

pytestmark = pytest.mark.integration

RUNAWAY = target("runaway.py")
CRASH = target("crash.py")
THREADS = target("many_threads.py")
STEP_RAISE = target("step_raise.py")
NESTED = target("nested_values.py")


def test_a_runaway_recursion_stops_in_the_users_file(api: httpx.Client, sessions: Sessions) -> None:
    sid = sessions.create()
    sessions.launch(sid, RUNAWAY, stop_on_exception="uncaught")
    stop = sessions.wait(sid)
    assert stop["status"] == "paused", stop
    assert stop["exception"]["type"] == "RecursionError", stop
    assert stop["location"]["file"] == RUNAWAY  # not the debugger's tracer, which overflowed as well
    assert stop["location"]["function"] == "depth"

    stack = ok(api.get(f"/sessions/{sid}/stacktrace", params={"max_frames": 5}))
    folded = stack["frames"][0]
    assert folded["repeated"] > 900, folded  # one entry for the whole recursion, read to its end
    assert folded["arguments"].startswith("node='root', n=9"), folded  # the innermost call's
    assert folded["last_arguments"] == "node='root', n=0", folded  # the first call's
    assert folded["through"].endswith(f"depth runaway.py:{line_of(RUNAWAY, 'recurse')}"), folded
    assert stack["total_frames"] == folded["repeated"] + 1  # + the module's frame

    assert ok(api.post(f"/sessions/{sid}/evaluate", json={"expression": "node"}))["result"] == "'root'"
    ok(api.post(f"/sessions/{sid}/continue", json={}))
    end = sessions.wait(sid)
    assert end["status"] == "terminated", end
    assert end["exit_code"] == 1


async def test_mcp_a_runaway_recursion_stops_by_default(tmp_path: Path) -> None:
    async with stdio_agent(tmp_path) as agent:
        stop = await agent.call("debug_launch", script=RUNAWAY)
        assert stop["status"] == "paused", stop
        assert stop["exception"]["type"] == "RecursionError"
        assert stop["location"]["file"] == RUNAWAY
        stack = await agent.call("debug_stacktrace", max_frames=3)
        assert stack["frames"][0]["repeated"] > 900, stack
        assert stack["frames"][0]["last_arguments"] == "node='root', n=0"


def _program_traceback(text: str) -> str:
    assert "Traceback (most recent call last):" in text, text
    return text[text.index("Traceback") :]


def test_a_traceback_in_output_is_the_programs_own(api: httpx.Client, sessions: Sessions) -> None:
    sid = sessions.create()
    sessions.launch(sid, CRASH)
    end = sessions.wait(sid)
    assert end["status"] == "terminated", end
    shown = _program_traceback(output_text(api, sid, "stderr"))
    first = shown.splitlines()[1]
    assert first.startswith(f'  File "{CRASH}", line'), shown  # no runpy, debugpy or pool frames first
    for relay_frame in ("runpy", "debugpy", "pydevd", "_debugrelay"):
        assert relay_frame not in shown, shown
    assert shown.rstrip().endswith("ValueError: invalid literal for int() with base 10: 'x'")


async def test_mcp_a_traceback_in_output_is_the_programs_own(tmp_path: Path) -> None:
    async with stdio_agent(tmp_path) as agent:
        end = await agent.call("debug_launch", script=CRASH, stop_on_exception="none")
        if end["status"] != "terminated":
            end = await agent.call("debug_wait")
        assert end["status"] == "terminated", end
        text = (await agent.call("debug_output"))["text"]
        shown = _program_traceback(text.replace("[stderr] ", ""))
        assert f'File "{CRASH}", line' in shown.splitlines()[1], shown
        assert "runpy" not in shown and "debugpy" not in shown, shown


def test_a_step_in_a_threaded_program_names_its_thread_and_lists_threads_only_when_they_change(
    api: httpx.Client, sessions: Sessions
) -> None:
    sid, first = sessions.start_at(THREADS, "main-start")
    assert first["thread_name"] == "MainThread" and first["thread_count"] == 11, first
    assert len(first["all_threads"]) == 11  # the first stop lists them
    ok(api.post(f"/sessions/{sid}/step-over", json={}))
    step = sessions.wait(sid)
    assert step["reason"] == "step", step
    assert step["thread_name"] == "MainThread" and step["thread_count"] == 11, step
    assert "all_threads" not in step, step  # the same 11 threads: not repeated
    assert len(ok(api.get(f"/sessions/{sid}/threads"))["threads"]) == 11  # on request


async def test_mcp_a_step_without_locals_in_a_threaded_program_stays_small(tmp_path: Path) -> None:
    async with stdio_agent(tmp_path) as agent:
        first = await agent.call(
            "debug_launch", script=THREADS, breakpoints=[f"{THREADS}:{line_of(THREADS, 'main-start')}"]
        )
        assert first["thread_count"] == 11 and len(first["all_threads"]) == 11, first
        step = await agent.call("debug_step_over", locals=False)
        assert step["thread_name"] == "MainThread" and step["thread_count"] == 11, step
        assert "all_threads" not in step, step
        assert len((await agent.call("threads_list"))["threads"]) == 11


def test_a_step_that_leaves_a_function_by_an_exception_names_it(api: httpx.Client, sessions: Sessions) -> None:
    sid, _ = sessions.start_at(STEP_RAISE, "leaves-by-exception")
    step = ok(api.post(f"/sessions/{sid}/step-over", json={}))
    if step["status"] != "paused":
        step = sessions.wait(sid)
    assert step["location"]["line"] == line_of(STEP_RAISE, "caught"), step  # the caller's except
    left = step["left_by_exception"]
    assert left["type"] == "ValueError", step
    assert left["message"] == "invalid literal for int() with base 10: 'x'"
    assert left["location"] == {
        "file": STEP_RAISE,
        "line": line_of(STEP_RAISE, "leaves-by-exception"),
        "function": "parse",
    }

    ok(api.post(f"/sessions/{sid}/step-over", json={}))
    inside = sessions.wait(sid)  # a step within the except block: the same frame, nothing left it
    assert inside["reason"] == "step" and "left_by_exception" not in inside, inside


async def test_mcp_a_step_that_leaves_a_function_by_an_exception_names_it(tmp_path: Path) -> None:
    async with stdio_agent(tmp_path) as agent:
        bp = f"{STEP_RAISE}:{line_of(STEP_RAISE, 'leaves-by-exception')}"
        await agent.call("debug_launch", script=STEP_RAISE, breakpoints=[bp])
        step = await agent.call("debug_step_over", locals=False)
        assert step["code"] == "except ValueError as exc:  # caught", step
        assert step["left_by_exception"]["type"] == "ValueError", step
        assert "int()" in step["left_by_exception"]["message"]
        await agent.call("debug_continue")  # the second call of parse returns normally: no breakpoint stop left
        again = await agent.call("debug_status")
        assert "left_by_exception" not in again, again


def test_small_nested_values_are_shown_whole_and_a_cut_says_so(api: httpx.Client, sessions: Sessions) -> None:
    sid, _ = sessions.start_at(NESTED, "values-here")
    pair = ok(api.post(f"/sessions/{sid}/evaluate", json={"expression": "(cfg, 1)"}))
    assert pair["result"] == "({'db': {'host': 'h', 'port': 5432}}, 1)", pair  # not ({'db': {...}}, 1)
    assert "truncated" not in pair
    found = {v["name"]: v for v in ok(api.get(f"/sessions/{sid}/variables"))["variables"]}
    assert found["pair"]["value"] == "(7,)"
    assert found["loop"]["value"] == "[1, [...]]"  # a list holding itself keeps Python's mark
    deep = found["deep"]
    assert deep["value"] == "{'a': {'b': {'c': {'d': <cut: dict of 1>}}}}", deep  # not {...}
    assert deep["truncated"] is True and deep["variable_reference"], deep  # expand it from there
    big = found["big"]
    assert big["truncated"] is True and "..." not in big["value"], big
    assert "<cut: " in big["value"], big
    inner = ok(api.get(f"/sessions/{sid}/variables", params={"expand": "deep['a']['b']['c']"}))
    assert inner["variables"][0]["value"] == "{'e': 1}", inner
    # a named tuple field by field (not <Point, len() = 2>), a long string inside and a long repr by their start
    point = found["point"]["value"]
    assert point.startswith("Point(x=Point(x=[1, 1, 1, "), point
    assert "<cut: 41 more>], y={'k': 'vvvv" in point and point.endswith(" more chars>"), point
    assert point.count("<cut:") == 2, point  # cut before the string's own mark, never inside it
    whole = ok(api.post(f"/sessions/{sid}/evaluate", json={"expression": "point"}))["result"]
    assert whole.endswith("<cut: 172 more chars>}), y=2)"), whole
    shout = ok(api.post(f"/sessions/{sid}/evaluate", json={"expression": "shout"}))["result"]
    assert shout.startswith("Shout(aaaa") and shout.endswith(" more chars>"), shout
    assert all("..." not in v["value"] for v in found.values() if v["name"] != "loop"), found


def test_a_long_exception_message_is_said_by_its_start_and_the_count_of_the_rest(api: httpx.Client) -> None:
    stop = ok(api.post("/agent/debug_launch", json={"script": NESTED}))
    assert stop.get("reason") == "exception", stop
    message = stop["exception"]["message"]
    assert message.startswith("bad yyy") and message.endswith("<cut: 2004 more chars>"), stop  # 1000 said
    autopsy = ok(api.post("/agent/exception_autopsy", json={"session_id": stop["session_id"]}))
    assert autopsy["exception"]["message"] == message, autopsy
    ok(api.delete(f"/sessions/{stop['session_id']}"))


async def test_mcp_small_nested_values_are_shown_whole(tmp_path: Path) -> None:
    async with stdio_agent(tmp_path) as agent:
        stop = await agent.call(
            "debug_launch", script=NESTED, breakpoints=[f"{NESTED}:{line_of(NESTED, 'values-here')}"]
        )
        assert stop["locals"]["cfg"] == "{'db': {'host': 'h', 'port': 5432}}", stop["locals"]
        assert stop["locals"]["deep"] == "{'a': {'b': {'c': {'d': <cut: dict of 1>}}}}"
        assert "<cut: " in stop["locals"]["big"] and "..." not in stop["locals"]["big"], stop["locals"]
        pair = await agent.call("debug_evaluate", expression="(cfg, 1)")
        assert pair["result"] == "({'db': {'host': 'h', 'port': 5432}}, 1)", pair


def test_objects_in_locals_show_a_few_attributes(api: httpx.Client, sessions: Sessions) -> None:
    sid = sessions.create()
    sessions.bp(sid, NESTED, line_of(NESTED, "in-method"))
    sessions.bp(sid, NESTED, line_of(NESTED, "values-here"))
    sessions.launch(sid, NESTED)
    assert sessions.wait(sid)["location"]["function"] == "feed"
    found = {v["name"]: v for v in ok(api.get(f"/sessions/{sid}/variables"))["variables"]}
    shown = found["self"]["value"]
    assert shown.startswith("<Cat at 0x"), shown  # the address tells two cats apart
    assert shown.endswith(": name='Tom', hunger=3, owner={'name': 'Ann'}>"), shown

    ok(api.post(f"/sessions/{sid}/continue", json={}))
    assert sessions.wait(sid)["location"]["line"] == line_of(NESTED, "values-here")
    wide = {v["name"]: v for v in ok(api.get(f"/sessions/{sid}/variables"))["variables"]}["wide"]
    # the first ten attributes (four hid the ones that mattered), the rest said as a cut
    assert wide["value"].endswith(": a0=0, a1=1, a2=2, a3=3, a4=4, a5=5, a6=6, a7=7, a8=8, a9=9, <cut: 4 more>>"), wide
    assert wide["truncated"] is True and wide["variable_reference"], wide


async def test_mcp_objects_in_stop_locals_show_a_few_attributes(tmp_path: Path) -> None:
    async with stdio_agent(tmp_path) as agent:
        stop = await agent.call("debug_launch", script=NESTED, breakpoints=[f"{NESTED}:{line_of(NESTED, 'in-method')}"])
        assert "name='Tom', hunger=3" in stop["locals"]["self"], stop["locals"]  # self.hunger without a call


def test_object_inspect_writes_out_small_containers(api: httpx.Client, sessions: Sessions) -> None:
    sid = sessions.create()
    sessions.bp(sid, NESTED, line_of(NESTED, "values-here"))
    sessions.launch(sid, NESTED)
    assert sessions.wait(sid)["status"] == "paused"
    found = ok(api.post(f"/sessions/{sid}/object-inspect", json={"object_ref": "cat", "depth": 1}))
    fields = {f["name"]: f for f in found["fields"]}
    # at the depth asked for, a small dict of plain values is shown whole, not as "<dict of 1>"
    assert fields["owner"]["value"] == "{'name': 'Ann'}"
    assert "items" not in fields["owner"]  # and not listed a second time
    deep = ok(api.post(f"/sessions/{sid}/object-inspect", json={"object_ref": "cfg", "depth": 1}))
    assert deep["items"][0]["value"] == "{'host': 'h', 'port': 5432}"
    # a bigger one keeps its size, to be expanded by depth or path
    holder = ok(api.post(f"/sessions/{sid}/object-inspect", json={"object_ref": "[big]", "depth": 1}))
    big = holder["items"][0]
    assert big["value"] == "<list of 100>" and big["expandable"] is True


@pytest.mark.asyncio
async def test_mcp_object_inspect_writes_out_small_containers(tmp_path: Path) -> None:
    async with stdio_agent(tmp_path) as agent:
        await agent.call("debug_launch", script=NESTED, breakpoints=[f"{NESTED}:{line_of(NESTED, 'values-here')}"])
        found = await agent.call("object_inspect", object_ref="cat", depth=1)
        fields = {f["name"]: f for f in found["fields"]}
        assert fields["owner"]["value"] == "{'name': 'Ann'}"
        assert fields["hunger"]["value"] == "2"
