"""The MCP server driven by the SDK's own client: over stdio (``debugrelay mcp``, embedded or
forwarding to a relay) and over streamable HTTP at the relay's ``/mcp``, on real debugpy targets."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
import psutil
import pytest
from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.types import CallToolResult, Tool

from tests.conftest import Relay, free_port, line_of, ok, target

pytestmark = pytest.mark.integration

DEBUGRELAY = str(Path(sys.executable).parent / "debugrelay")
BASIC = target("basic.py")
LOOP = target("loop.py")
CRASH = target("crash.py")
OBJECTS = target("objects.py")
BUG = target("mcp_bug.py")
ADD = line_of(BASIC, "add-body")

DEBUG_TOOLS = {
    "debug_launch",
    "debug_attach",
    "debug_set_breakpoint",
    "debug_remove_breakpoint",
    "debug_continue",
    "debug_step_over",
    "debug_step_into",
    "debug_step_out",
    "debug_variables",
    "debug_evaluate",
    "debug_stacktrace",
    "debug_pause",
    "debug_disconnect",
    "debug_status",
}
INSPECTION_TOOLS = {
    "threads_list",
    "stacktrace_get",
    "variables_get",
    "evaluate",
    "object_inspect",
    "exception_autopsy",
    "breakpoint_wait",
    "debug_set_exception_breakpoints",
}


class Agent:
    """One MCP client session, counting what the agent paid: tool calls and response bytes."""

    def __init__(self, session: ClientSession, instructions: str = "") -> None:
        self.session = session
        self.instructions = instructions  # what the server said at initialize, once per conversation
        self.calls = 0
        self.text_bytes = 0  # what a model reads: the text content of each answer
        self.wire_bytes = 0  # the whole tools/call result as JSON (text + structured content)
        self.transcript: list[tuple[str, dict[str, Any], str]] = []

    async def tools(self) -> dict[str, Tool]:
        listed = await self.session.list_tools()
        return {t.name: t for t in listed.tools}

    async def _call(self, name: str, args: dict[str, Any]) -> tuple[CallToolResult, dict[str, Any]]:
        result = await self.session.call_tool(name, args)
        assert isinstance(result, CallToolResult)
        text = result.content[0].text  # type: ignore[union-attr]
        self.calls += 1
        self.text_bytes += len(text.encode())
        self.wire_bytes += len(result.model_dump_json(by_alias=True, exclude_none=True).encode())
        self.transcript.append((name, args, text))
        assert not text.startswith("Error"), f"{name}{args}: {text}"  # the SDK's own failure (invalid arguments)
        data: dict[str, Any] = json.loads(text)
        assert result.structured_content == data
        return result, data

    async def call(self, name: str, **args: Any) -> dict[str, Any]:
        result, data = await self._call(name, args)
        assert not result.is_error, f"{name}{args} failed: {data}"
        return data

    async def error(self, name: str, **args: Any) -> dict[str, Any]:
        result, data = await self._call(name, args)
        assert result.is_error, f"{name}{args} should fail: {data}"
        error: dict[str, Any] = data["error"]
        assert error["code"], error
        assert error["message"], error
        assert error["hint"], error
        return error


CHECKOUT = str(Path(__file__).resolve().parents[2])


@asynccontextmanager
async def stdio_agent(
    tmp_path: Path, *args: str, env: dict[str, str] | None = None, cwd: Path | None = None
) -> AsyncIterator[Agent]:
    """``debugrelay mcp`` as an MCP client configuration would start it, in ``cwd`` (the agent's folder:
    relative paths start there, and answers show the paths under it relative; default: an empty folder,
    so that the tests' files are named by their whole paths)."""
    folder = cwd or tmp_path / "agent-folder"
    folder.mkdir(exist_ok=True)
    params = StdioServerParameters(
        command=DEBUGRELAY,
        args=["mcp", *args],
        # the relay it embeds reads the checkout's sources (its workspace), wherever the agent works
        env={"DEBUGRELAY_STATE_DIR": str(tmp_path / "mcp-state"), "DEBUGRELAY_WORKSPACE": CHECKOUT, **(env or {})},
        cwd=folder,
    )
    with (tmp_path / "mcp-stderr.log").open("w") as errlog:
        async with stdio_client(params, errlog=errlog) as (read, write), ClientSession(read, write) as session:
            init = await session.initialize()
            yield Agent(session, init.instructions or "")


@asynccontextmanager
async def http_agent(relay: Relay) -> AsyncIterator[Agent]:
    async with streamable_http_client(f"{relay.url}/mcp") as (read, write), ClientSession(read, write) as session:
        init = await session.initialize()
        yield Agent(session, init.instructions or "")


async def check_tool_list(agent: Agent) -> None:
    tools = await agent.tools()
    assert set(tools) >= DEBUG_TOOLS | INSPECTION_TOOLS
    for tool in tools.values():
        assert tool.description, tool.name
        assert len(tool.description) > 40, tool.name
        for name, prop in tool.input_schema.get("properties", {}).items():
            # the arguments every tool shares are described once, in the server's instructions
            assert prop.get("description") or f"{name} (" in agent.instructions, f"{tool.name}.{name} is not described"
    assert tools["debug_status"].annotations
    assert tools["debug_status"].annotations.read_only_hint


async def basic_story(agent: Agent, *, fresh: bool) -> str:
    """Break in add(), launch, look around, step, step out, continue to the end: the session id.

    ``fresh``: the server has no other sessions, so every default ("the most recent session") is ours.
    """
    if fresh:
        bp = await agent.call("debug_set_breakpoint", file=BASIC, line=ADD)
        assert bp["verified"] is True
        stop = await agent.call("debug_launch", script=BASIC, args=["x"])
        assert stop["session_id"] == bp["session_id"]
    else:
        stop = await agent.call("debug_launch", script=BASIC, args=["x"], breakpoints=[f"{BASIC}:{ADD}"])
    sid = stop["session_id"]
    pick = {} if fresh else {"session_id": sid}
    assert stop["status"] == "paused", stop
    assert stop["reason"] == "breakpoint", stop
    assert stop["location"] == {"file": BASIC, "line": ADD, "function": "add"}
    assert stop["code"] == "result = a + b  # add-body"
    assert stop["locals"] == {"a": "0", "b": "3"}
    assert "hello stdout" in stop["output"]
    assert "[stderr] warn stderr" in stop["output"]

    variables = await agent.call("debug_variables", **pick)
    assert {v["name"]: v["value"] for v in variables["variables"]} == {"a": "0", "b": "3"}
    assert (await agent.call("debug_evaluate", expression="a + b", **pick)) == {"result": "3", "type": "int"}

    step = await agent.call("debug_step_over", **pick)
    assert step["reason"] == "step"
    assert step["location"]["line"] == ADD + 1
    assert step["locals"]["result"] == "3"
    stack = await agent.call("debug_stacktrace", **pick)
    assert [f["name"] for f in stack["frames"]][:3] == ["add", "average", "main"]
    assert stack["total_frames"] == 4

    caller = await agent.call("debug_evaluate", expression="values", frame_index=1, **pick)
    assert caller["result"] == "[3, 4, 5]"
    assert caller["ref"]
    out = await agent.call("debug_step_out", **pick)
    assert out["location"]["function"] == "average"

    status = await agent.call("debug_status", **pick)
    assert status["status"] == "paused"
    assert status["breakpoints"][0]["hit_count"] == 1
    removed = await agent.call(
        "debug_remove_breakpoint", breakpoint_id=status["breakpoints"][0]["breakpoint_id"], **pick
    )
    assert removed["removed"] == status["breakpoints"][0]["breakpoint_id"]

    end = await agent.call("debug_continue", **pick)
    assert end["status"] == "terminated", end
    assert end["exit_code"] == 0, end
    assert "mean 4.0 args ['x']" in end["output"]
    return sid


async def test_stdio_embedded_lists_tools_and_debugs_a_program(tmp_path: Path) -> None:
    async with stdio_agent(tmp_path) as agent:
        await check_tool_list(agent)
        assert (await agent.call("debug_status"))["sessions"] == []
        sid = await basic_story(agent, fresh=True)
        gone = await agent.call("debug_disconnect", forget=True)
        assert gone["deleted"] is True
        assert gone["session_id"] == sid
        assert (await agent.call("debug_status"))["sessions"] == []


async def test_relay_mcp_endpoint_shares_sessions_with_http(relay: Relay) -> None:
    async with http_agent(relay) as agent, httpx.AsyncClient(base_url=relay.url, timeout=60) as api:
        await check_tool_list(agent)
        sid = await basic_story(agent, fresh=False)
        listed = ok(await api.get("/sessions"))["sessions"]
        assert sid in {s["session_id"] for s in listed}  # made through MCP, seen over HTTP
        assert ok(await api.get(f"/sessions/{sid}/status"))["status"] == "terminated"

        # ...and the other way round: a session made over HTTP is driven through MCP
        other = ok(await api.post("/sessions", json={"launch": {"script": BASIC, "stop_on_entry": True}}), 201)
        stop = await agent.call("breakpoint_wait", session_id=other["session_id"])
        assert stop["status"] == "paused"
        assert stop["reason"] == "entry"
        status = await agent.call("debug_status", session_id=sid)
        assert other["session_id"] in {s["session_id"] for s in status["other_sessions"]}
        await agent.call("debug_disconnect", session_id=other["session_id"], forget=True)
        await agent.call("debug_disconnect", session_id=sid, forget=True)
        assert sid not in {s["session_id"] for s in ok(await api.get("/sessions"))["sessions"]}


async def test_stdio_forwards_to_a_running_relay(tmp_path: Path, relay: Relay) -> None:
    async with stdio_agent(tmp_path, "--url", relay.url) as agent, httpx.AsyncClient(base_url=relay.url) as api:
        await check_tool_list(agent)
        sid = await basic_story(agent, fresh=False)
        assert ok(await api.get(f"/sessions/{sid}"))["launch"]["args"] == ["x"]  # the relay holds it
        await agent.call("debug_disconnect", session_id=sid, forget=True)
        assert (await api.get(f"/sessions/{sid}")).status_code == 404


async def test_output_is_answered_once_across_mcp_processes_and_runs(tmp_path: Path, relay: Relay) -> None:
    """A client that starts a new MCP process per call gets each line once; a new run starts at its own."""
    async with stdio_agent(tmp_path, "--url", relay.url) as first:
        stop = await first.call("debug_launch", script=BASIC, args=["x"], breakpoints=[f"{BASIC}:{ADD}"])
        assert stop["locals"] == {"a": "0", "b": "3"}, stop
        assert sorted(stop["output"].splitlines()) == ["[stderr] warn stderr", "hello stdout"], stop
        sid = stop["session_id"]
    async with stdio_agent(tmp_path, "--url", relay.url) as second:
        again = await second.call("debug_continue", session_id=sid)
        assert again["locals"] == {"a": "3", "b": "4"}, again
        assert "output" not in again, again  # printed nothing since: the first process's answer had it
        status = await second.call("debug_status", session_id=sid)
        assert status["breakpoints"], status
        await second.call(
            "debug_remove_breakpoint", session_id=sid, breakpoint_id=status["breakpoints"][0]["breakpoint_id"]
        )
    async with stdio_agent(tmp_path, "--url", relay.url) as third:
        end = await third.call("debug_continue", session_id=sid)
        assert end["status"] == "terminated", end
        assert end["output"] == "mean 4.0 args ['x']\n", end

        rerun = await third.call("debug_launch", script=BASIC, args=["y"], session_id=sid, stop_on_entry=True)
        assert rerun["status"] == "paused", rerun
        assert "output" not in rerun, rerun  # the new run printed nothing yet; the last run's lines are not its
        rerun_end = await third.call("debug_continue", session_id=sid)
        assert rerun_end["status"] == "terminated", rerun_end
        # the new run's own lines, each once (a run's output is never taken for a repeat of the last run's)
        lines = rerun_end["output"].splitlines()
        assert sorted(lines) == ["[stderr] warn stderr", "hello stdout", "mean 4.0 args ['y']"], rerun_end
        gone = await third.call("debug_disconnect", session_id=sid)
        assert "output" not in gone, gone
    async with stdio_agent(tmp_path, "--url", relay.url) as fourth:
        status = await fourth.call("debug_disconnect", session_id=sid, forget=True)
        assert "output" not in status, status


def processes_under(folder: Path) -> list[str]:
    """Command lines of live processes that mention ``folder`` (targets started from it, their adapters)."""
    found = []
    for proc in psutil.process_iter(["cmdline", "status"]):
        cmdline = " ".join(proc.info.get("cmdline") or [])
        if str(folder) in cmdline and proc.info.get("status") != psutil.STATUS_ZOMBIE:
            found.append(cmdline)
    return found


async def test_closing_the_client_ends_the_programs_it_started(tmp_path: Path) -> None:
    script = tmp_path / "stays_paused.py"
    script.write_text("value = 1\nprint(value)\n")
    async with stdio_agent(tmp_path) as agent:
        stop = await agent.call("debug_launch", script=str(script), stop_on_entry=True)
        assert stop["status"] == "paused"
        assert processes_under(tmp_path)
    assert processes_under(tmp_path) == []


def debugpy_listening(port: int) -> subprocess.Popen[bytes]:
    """``python -m debugpy --listen PORT loop.py``, as someone starts a program to attach to later."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "debugpy", "--listen", f"127.0.0.1:{port}", LOOP],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 30
    while not any(
        c.laddr and c.laddr.port == port and c.status == psutil.CONN_LISTEN for c in psutil.net_connections("tcp")
    ):
        assert proc.poll() is None, "debugpy exited"
        assert time.monotonic() < deadline, "debugpy did not listen"
        time.sleep(0.05)  # polling for the port, as conftest polls for the relay
    return proc


def kill_debugpy(proc: subprocess.Popen[bytes], port: int) -> None:
    """The program and its debugpy adapter (which detaches from it)."""
    for other in psutil.process_iter(["cmdline"]):
        cmdline = " ".join(other.info.get("cmdline") or [])
        if "debugpy" in cmdline and f"--port {port}" in cmdline:
            other.kill()
    proc.kill()
    proc.wait()


async def test_attach_to_a_running_program_and_detach(tmp_path: Path) -> None:
    port = free_port()
    proc = debugpy_listening(port)
    forever = line_of(LOOP, "forever")
    try:
        async with stdio_agent(tmp_path) as agent:
            attached = await agent.call("debug_attach", port=port)
            assert attached["status"] == "running", attached
            await agent.call("debug_set_breakpoint", file=LOOP, line=forever)
            stop = await agent.call("breakpoint_wait")
            assert stop["status"] == "paused", stop
            assert stop["location"]["line"] == forever
            gone = await agent.call("debug_disconnect")
            assert gone["status"] == "terminated"
            assert gone["reason"] == "detached"
        assert proc.poll() is None  # detaching leaves the program running
    finally:
        kill_debugpy(proc, port)


async def test_running_target_answers_not_paused_and_still_running(tmp_path: Path) -> None:
    async with stdio_agent(tmp_path) as agent:
        started = await agent.call("debug_launch", script=LOOP, timeout=0)
        assert started["status"] == "running"
        assert "breakpoint_wait" in started["hint"]
        for tool in ("debug_variables", "debug_stacktrace", "variables_get", "exception_autopsy"):
            error = await agent.error(tool)
            assert error["code"] == "NOT_PAUSED", (tool, error)
            assert "breakpoint_wait" in error["hint"]
            assert "debug_pause" in error["hint"]
        assert (await agent.error("debug_evaluate", expression="1"))["code"] == "NOT_PAUSED"
        assert (await agent.call("debug_status"))["status"] == "running"

        waited = await agent.call("breakpoint_wait", timeout=0.2)
        assert waited["status"] == "running"
        assert waited["timed_out"] is True

        paused = await agent.call("debug_pause")
        assert paused["status"] == "paused", paused
        assert paused["reason"] == "pause", paused
        assert "locals" in paused
        resumed = await agent.call("debug_continue", timeout=0.2)
        assert resumed["status"] == "running"
        assert resumed["timed_out"] is True

        ended = await agent.call("debug_disconnect")
        assert ended["status"] == "terminated"


async def test_breakpoint_kinds_through_mcp(tmp_path: Path) -> None:
    async with stdio_agent(tmp_path) as agent:
        conditional = await agent.call("debug_set_breakpoint", file=BASIC, line=ADD, condition="b == 5")
        stop = await agent.call("debug_launch", script=BASIC)
        assert stop["locals"] == {"a": "7", "b": "5"}, stop
        await agent.call("debug_remove_breakpoint", breakpoint_id=conditional["breakpoint_id"])
        assert (await agent.call("debug_continue"))["status"] == "terminated"

        counted = await agent.call("debug_set_breakpoint", file=BASIC, line=ADD, hit_condition="2")
        stop = await agent.call("debug_launch", script=BASIC)  # the same program: the same session
        assert stop["session_id"] == counted["session_id"], stop
        assert stop["locals"]["b"] == "4", stop
        await agent.call("debug_remove_breakpoint", breakpoint_id=counted["breakpoint_id"])
        await agent.call("debug_continue")

        logpoint = await agent.call("debug_set_breakpoint", file=BASIC, line=ADD, log_message="add {a}+{b}")
        end = await agent.call("debug_launch", script=BASIC)
        assert end["status"] == "terminated", end
        assert "add 0+3" in end["output"]
        assert "add 7+5" in end["output"]
        await agent.call("debug_remove_breakpoint", breakpoint_id=logpoint["breakpoint_id"])

        await agent.call("debug_set_breakpoint", function="average")
        stop = await agent.call("debug_launch", script=BASIC)
        assert stop["reason"] == "function breakpoint" or stop["location"]["function"] == "average", stop
        assert stop["location"]["function"] == "average"
        await agent.call("debug_disconnect", forget=True)

        bad = await agent.error("debug_set_breakpoint", file=BASIC, line=9999)
        assert bad["code"] == "invalid_line"
        assert bad["details"]["max_line"] == 30
        await agent.call("debug_disconnect", forget=True)


async def test_exceptions_autopsy_and_breakpoint_wait(tmp_path: Path) -> None:
    raise_line = line_of(CRASH, "raise-here")
    async with stdio_agent(tmp_path) as agent:
        crash = await agent.call("debug_launch", script=CRASH)  # stops on uncaught exceptions by default
        assert crash["status"] == "paused", crash
        assert crash["reason"] == "exception", crash
        assert crash["exception"]["type"].endswith("ValueError")
        assert crash["exception"]["unhandled"] is True
        assert crash["location"]["line"] == raise_line
        assert crash["locals"] == {"text": "'x'"}
        assert "exception_autopsy" in crash["hint"]

        autopsy = await agent.call("exception_autopsy")
        assert autopsy["exception"]["type"].endswith("ValueError")
        assert autopsy["frames"][0]["function"] == "parse"
        waited = await agent.call("breakpoint_wait", include_autopsy=True)
        # the autopsy rides with the stop, without repeating what the stop says
        assert autopsy["exception"]["type"].endswith(waited["exception"]["type"])
        assert waited["autopsy"]["frames"][1:] == autopsy["frames"][1:]
        assert (await agent.call("debug_continue"))["status"] == "terminated"

        quiet = await agent.call("debug_launch", script=CRASH, stop_on_exception="none")
        assert quiet["status"] == "terminated"
        assert quiet["exit_code"] == 1
        assert "ValueError" in quiet["output"]

        filters = await agent.call(
            "debug_set_exception_breakpoints", filters=["raised"], exception_types=["ValueError"]
        )
        assert filters["filters"] == ["raised"]
        raised = await agent.call("debug_launch", script=CRASH)
        assert raised["reason"] == "exception", raised
        assert not raised["exception"].get("unhandled"), raised
        await agent.call("debug_disconnect", forget=True)


@pytest.mark.parametrize("mode", ["embedded", "forwarding"])
async def test_inspection_tools(tmp_path: Path, mode: str, request: pytest.FixtureRequest) -> None:
    inspect_line = line_of(OBJECTS, "inspect-here")
    args = ["--url", request.getfixturevalue("relay").url] if mode == "forwarding" else []
    async with stdio_agent(tmp_path, *args) as agent:
        stop = await agent.call("debug_launch", script=OBJECTS, breakpoints=[f"{OBJECTS}:{inspect_line}"])
        assert stop["reason"] == "breakpoint"
        threads = await agent.call("threads_list")
        assert threads["threads"][0]["is_current"] is True
        stack = await agent.call("stacktrace_get", start_frame=1, max_frames=1)
        assert [f["name"] for f in stack["frames"]] == ["<module>"]
        assert stack["total_frames"] == 2

        listed = await agent.call("variables_get", scope="locals")
        by_name = {v["name"]: v for v in listed["variables"]}
        assert by_name["count"]["value"] == "255"
        assert by_name["big"]["length"] == 100_000
        nested = await agent.call("variables_get", expand="nested['a']")
        assert "'b'" in [v["name"] for v in nested["variables"]]
        page = await agent.call("variables_get", expand="big", start=10, count=5)
        assert [v["value"] for v in page["variables"]] == ["10", "11", "12", "13", "14"]
        assert page["has_more"]

        assert (await agent.call("evaluate", expression="count", format="hex"))["result"] == "0xff"
        assert (await agent.call("evaluate", expression="count", format="binary"))["result"] == "0b11111111"
        # the same answer embedded and through a relay: only integers take a number format
        assert await agent.call("evaluate", expression="count > 0", format="hex") == {"result": "True", "type": "bool"}
        assert (await agent.call("evaluate", expression="-count", format="hex"))["result"] == "-0xff"
        broken = await agent.error("debug_evaluate", expression="no_such_name + 1")
        assert broken["code"] == "evaluation_error"
        assert "NameError" in broken["message"]

        root = await agent.call("object_inspect", object_ref="root", depth=2)
        assert root["type"].endswith("Node")
        assert root["has_circular_ref"] is True
        await agent.call("debug_disconnect", forget=True)


async def test_errors_carry_code_message_and_hint(tmp_path: Path) -> None:
    async with stdio_agent(tmp_path) as agent:
        none = await agent.error("debug_continue")
        assert none["code"] == "session_not_found"
        assert "debug_launch" in none["hint"]
        missing = await agent.error("debug_launch", script=str(tmp_path / "missing.py"))
        assert missing["code"] == "file_not_found"
        unknown = await agent.error("debug_status", session_id="sess_nope")
        assert unknown["code"] == "session_not_found"
        assert "debug_status" in unknown["hint"]
        bad = await agent.error("debug_set_breakpoint", file=BASIC, line=ADD, condition="b ==")
        assert bad["code"] == "invalid_condition"


async def test_an_agent_finds_the_planted_bug_from_tool_descriptions(tmp_path: Path) -> None:
    """A client that knows only the tool list finds the off-by-one.

    Each step uses what the previous answer or a tool description said; the numbers are printed for the
    note (run with -s to see them)."""
    async with stdio_agent(tmp_path) as agent:
        tools = await agent.tools()
        listing = len(
            json.dumps(
                [t.model_dump(by_alias=True, exclude_none=True, mode="json") for t in tools.values()],
                separators=(",", ":"),
            ).encode()
        )
        assert "uncaught" in tools["debug_launch"].description + json.dumps(tools["debug_launch"].input_schema)

        # 1. run it: debug_launch stops on the uncaught exception, with the frame's locals
        crash = await agent.call("debug_launch", script=BUG)
        assert crash["reason"] == "exception"
        assert crash["exception"]["type"].endswith("AssertionError")
        assert crash["exception"]["message"] == "expected 5 averages, got 4"
        assert crash["locals"]["averages"].count(",") == 3  # four averages, five expected
        # 2. the hint: the cause may be in these locals; exception_autopsy when it is in a caller
        assert crash["hint"].startswith("Stopped at an exception: its frame's locals are above;"), crash["hint"]
        assert "caller" in crash["hint"] and "exception_autopsy" in crash["hint"]
        autopsy = await agent.call("exception_autopsy")
        assert autopsy["frames"][0]["function"] == "main"
        # 3. the averages come from moving_average: stop there on the next run
        await agent.call("debug_set_breakpoint", function="moving_average")
        entry = await agent.call("debug_launch", script=BUG)
        assert entry["location"]["function"] == "moving_average"
        assert entry["locals"]["values"] == "[10, 12, 11, 13, 15, 14, 16]"
        assert entry["locals"]["window"] == "3"
        # 4. which windows does the loop visit, and which exist?
        visited = await agent.call("debug_evaluate", expression="list(range(len(values) - window))")
        windows = await agent.call("debug_evaluate", expression="len(values) - window + 1")
        assert visited["result"] == "[0, 1, 2, 3]"
        assert windows["result"] == "5"  # the off-by-one
        # 5. done
        await agent.call("debug_disconnect", forget=True)

        print(
            f"\nplanted-bug story: {agent.calls} tool calls, {agent.text_bytes} bytes of answers "
            f"({agent.wire_bytes} bytes as tools/call results with structured content); "
            f"tools/list: {len(tools)} tools, {listing} bytes"
        )
        for name, args, text in agent.transcript:
            print(f"  {name} {json.dumps(args)} -> {len(text.encode())} B")
        assert agent.calls == 7
        assert agent.text_bytes < 8_000  # answers stay compact
        assert listing <= 15_200  # the tool list, read in every conversation (tests/fast bounds its parts)
