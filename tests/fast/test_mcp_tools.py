"""The MCP tools in process, over the relay's services and over its HTTP API: the same answers."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from mcp.types import CallToolResult

from debugrelay.mcp_server import DebugTools, build_server
from debugrelay.mcp_server import _catalog as catalog
from debugrelay.service import DebugService, RelayService

from .conftest import ADD, BASIC, LOOP

pytestmark = pytest.mark.asyncio


async def call(client: Client, tool: str, **args: Any) -> dict[str, Any]:
    result = await client.call_tool(tool, args)
    assert isinstance(result, CallToolResult)
    data: dict[str, Any] = json.loads(result.content[0].text)  # type: ignore[union-attr]
    assert not result.is_error, data
    return data


async def test_a_debugging_story_answers_the_same_either_way(service: DebugService) -> None:
    async with Client(build_server(service)) as tools:
        stop = await call(tools, "debug_launch", script=BASIC, breakpoints=[f"{BASIC}:{ADD}"])
        assert (stop["status"], stop["reason"], stop["location"]["line"]) == ("paused", "breakpoint", ADD)
        assert stop["code"] == "result = a + b  # add-body"
        assert stop["locals"] == {"a": "0", "b": "3"}
        assert stop["output"] == "adding 3\n"  # what the program printed before it stopped
        assert await call(tools, "evaluate", expression="b + 252", format="hex") == {"result": "0xff", "type": "int"}
        assert await call(tools, "evaluate", expression="b > 0", format="hex") == {"result": "True", "type": "bool"}
        stack = await call(tools, "debug_stacktrace")
        assert [f["name"] for f in stack["frames"]] == ["add"]
        step = await call(tools, "debug_step_over")
        assert (step["reason"], step["location"]["function"]) == ("step", "average")
        assert "output" not in step  # nothing printed since the last answer
        again = await call(tools, "debug_continue")
        assert (again["location"]["line"], again["locals"], again["output"]) == (
            ADD,
            {"a": "3", "b": "4"},
            "adding 4\n",
        )
        status = await call(tools, "debug_status")
        assert status["breakpoints"][0]["hit_count"] == 2
        end = await call(tools, "debug_disconnect")
        assert end["status"] == "terminated"


async def test_errors_name_tools_either_way(service: DebugService) -> None:
    async with Client(build_server(service)) as tools:
        result = await tools.call_tool("debug_evaluate", {"expression": "1"})
        error = json.loads(result.content[0].text)["error"]  # type: ignore[union-attr]
        assert result.is_error
        assert error["code"] == "session_not_found"
        assert "debug_launch" in error["hint"]


async def test_the_tool_list_is_small_and_every_argument_is_described(relay: RelayService) -> None:
    """The tool list is read by the model in every conversation: the debugger's tools stay within 12,100
    bytes of JSON, all of them within 15,200; an argument without a description of its own is one the
    server's instructions describe."""
    server = build_server(relay)
    async with Client(server) as client:
        tools = (await client.list_tools()).tools

    def size(chosen: list[Any]) -> int:
        dumped = [t.model_dump(by_alias=True, exclude_none=True, mode="json") for t in chosen]
        return len(json.dumps(dumped, separators=(",", ":")).encode())

    extra = {"debug_snapshot", "debug_analyze", "debug_capture", "debug_evidence", "debug_request"}
    core = [t for t in tools if t.name not in extra]
    assert len(core) == 26 and len(tools) == 31
    assert size(core) <= 12_100  # the debugger's tools (with processes: show_pid; a service: launch port; traces;
    # every launch option: launcher, image, published ports; run to a line)
    assert size(tools) <= 15_200  # with the evidence tools (snapshots, patterns, capture points), requests
    instructions = server.instructions or ""
    for tool in tools:
        for name, prop in tool.input_schema["properties"].items():
            assert prop.get("description") or f"{name} (" in instructions, f"{tool.name}.{name}"


async def test_each_tool_says_at_its_definition_what_the_list_says_of_it(relay: RelayService) -> None:
    """A tool's name, read-only annotation and place among the debugger's core tools are declared once, where
    the tool is defined (``@tool``), and the tool list follows them."""
    toolset = DebugTools(relay)
    specs, made = toolset.specs(), toolset.tools()
    assert [s.name for s in specs] == [t.name for t in made]
    assert len({s.name for s in specs}) == len(specs) == 31
    extra = {"debug_snapshot", "debug_analyze", "debug_capture", "debug_evidence", "debug_request"}
    assert {s.name for s in specs if not s.core} == extra
    for spec, tool in zip(specs, made, strict=True):
        assert bool(tool.annotations and tool.annotations.read_only_hint) == spec.read_only, spec.name


async def test_removing_all_breakpoints_lets_the_program_run_to_its_end(service: DebugService) -> None:
    async with Client(build_server(service)) as tools:
        stop = await call(tools, "debug_launch", script=BASIC, breakpoints=[f"{BASIC}:{ADD}", f"{BASIC}:{LOOP}"])
        assert stop["location"]["line"] == LOOP
        cleared = await call(tools, "debug_remove_breakpoint", breakpoint_id="all")
        assert cleared == {"session_id": stop["session_id"], "removed": ["bp_1", "bp_2"]}
        assert (await call(tools, "debug_status")).get("breakpoints", []) == []
        end = await call(tools, "debug_continue")
        assert (end["status"], end["exit_code"]) == ("terminated", 0)


async def test_an_argument_a_tool_does_not_take_is_refused_by_name_and_changes_nothing(relay: RelayService) -> None:
    """An argument the tool does not take (a misspelling, an option of another tool) is refused by name, not
    ignored; a wrong value names its argument in the relay's own error shape; nothing is launched."""
    async with Client(build_server(relay)) as tools:
        unknown = await tools.call_tool("debug_launch", {"script": BASIC, "frobnicate": 1})
        error = json.loads(unknown.content[0].text)["error"]  # type: ignore[union-attr]
        assert unknown.is_error
        assert (error["code"], error["details"]) == ("invalid_request", {"unknown": ["frobnicate"]})
        assert "'frobnicate'" in error["message"]
        wrong = await tools.call_tool("debug_launch", {"script": BASIC, "launcher": "moon"})
        error = json.loads(wrong.content[0].text)["error"]  # type: ignore[union-attr]
        assert wrong.is_error
        assert (error["code"], error["details"]) == ("invalid_request", {"arguments": ["launcher"]})
        assert (await call(tools, "debug_status"))["sessions"] == []


async def test_the_docs_show_the_tools_as_declared() -> None:
    """docs/agents.md's table of tools, their count and the tool list's size are made from the declarations:
    a tool added, renamed or described anew without the docs following fails here."""
    docs = (Path(__file__).parents[2] / "docs" / "agents.md").read_text(encoding="utf-8")
    made = catalog.section(await catalog.measure())
    assert catalog.rewritten(docs, made) == docs, "run: python -m debugrelay.mcp_server._catalog docs/agents.md"
