"""Seed 002's evidence through MCP: the hang story in three calls (forwarding to a relay), capture
points over the relay's /mcp, a post-mortem in the embedded server, and the investigate prompt."""

from __future__ import annotations

from pathlib import Path

import pytest

from debugrelay.service.actions import SHARED
from tests.conftest import Relay, line_of, target
from tests.integration.test_mcp import http_agent, stdio_agent

pytestmark = pytest.mark.integration

DEADLOCK = target("ev_deadlock.py")
LOOP = target("ev_loop.py")
CRASH = target("ex_thread.py")
EVIDENCE_TOOLS = {
    "debug_snapshot",
    "debug_analyze",
    "debug_capture",
    "debug_evidence",
}


async def test_a_hanging_service_is_named_a_deadlock_in_three_calls(tmp_path: Path, relay: Relay) -> None:
    async with stdio_agent(tmp_path, "--url", relay.url) as agent:
        tools = await agent.tools()
        assert set(tools) >= EVIDENCE_TOOLS
        described = tools["debug_snapshot"].input_schema["properties"]
        assert all(p.get("description") for name, p in described.items() if name not in SHARED)
        launched = await agent.call("debug_launch", script=DEADLOCK, timeout=1)
        assert launched["status"] == "running" and launched["timed_out"] is True
        sid = launched["session_id"]
        snap = await agent.call("debug_snapshot", session_id=sid)
        waits = {t["name"]: t.get("waits_for", "") for t in snap["threads"]}
        assert waits["transfer"].startswith("lock_b") and waits["audit"].startswith("lock_a")
        found = await agent.call("debug_analyze", session_id=sid, snapshot_ids=[snap["snapshot_id"]])
        (deadlock,) = [m for m in found["matches"] if m["pattern"] == "deadlock"]
        stacks = {t["thread"]: t["stack"][0] for t in deadlock["evidence"]["threads"]}
        assert stacks == {
            "transfer": f"ev_deadlock.py:{line_of(DEADLOCK, 'transfer-waits')} transfer",
            "audit": f"ev_deadlock.py:{line_of(DEADLOCK, 'audit-waits')} audit",
        }
        assert agent.calls == 3
        # what the story costs an agent (docs/agents.md quotes it)
        sizes = ", ".join(f"{name} {len(text.encode())}" for name, _, text in agent.transcript[-3:])
        print(f"\nhang story: {agent.calls} calls, {agent.text_bytes} bytes of answers ({sizes})")
        assert agent.text_bytes < 8000
        await agent.call("debug_disconnect", session_id=sid, forget=True)


async def test_a_capture_point_over_the_relays_mcp_endpoint(relay: Relay) -> None:
    async with http_agent(relay) as agent:
        stop = await agent.call("debug_launch", script=LOOP, args=["300"], stop_on_entry=True)
        sid = stop["session_id"]
        point = await agent.call(
            "debug_capture", file=LOOP, line=line_of(LOOP, "loop-body"), expressions=["i"], session_id=sid
        )
        assert point["state"] == "active"
        end = await agent.call("debug_continue", session_id=sid)
        assert end["status"] == "terminated" and "done" in end["output"]
        table = await agent.call("debug_capture", capture_id=point["capture_id"], session_id=sid, count=10)
        assert table["total"] == 100 and [r[2] for r in table["rows"]] == list(range(10))
        rows = await agent.call("debug_evidence", evidence_id=table["evidence_id"], grep='"i": 99\\b')
        assert rows["matches"] == 1
        prompts = await agent.session.list_prompts()
        assert "investigate" in {p.name for p in prompts.prompts}
        text = await agent.session.get_prompt("investigate", {"problem": "a hang"})
        assert "hypothesis" in str(text.messages[0].content).lower()
        await agent.call("debug_disconnect", session_id=sid, forget=True)


async def test_the_post_mortem_of_a_crash_answers_after_the_program_is_gone(tmp_path: Path) -> None:
    async with stdio_agent(tmp_path) as agent:
        stop = await agent.call("debug_launch", script=CRASH)
        assert stop["reason"] == "exception"
        end = await agent.call("debug_continue")
        assert end["status"] == "terminated"
        autopsy = await agent.call("exception_autopsy")
        assert autopsy["post_mortem"].startswith("ev-")
        assert autopsy["frames"][0]["line"] == line_of(CRASH, "worker-raise")
        whole = await agent.call("debug_snapshot", snapshot_id="post_mortem")
        assert whole["reason"] == "post_mortem"
        assert whole["data"]["autopsy"]["exception"]["type"] == "IndexError"
        error = await agent.error("debug_snapshot", session_id=stop["session_id"])
        assert error["code"] == "invalid_state"


async def test_a_capture_point_set_before_any_launch_records_one_run_and_is_never_shown_as_a_breakpoint(
    relay: Relay,
) -> None:
    """debug_capture first (no session yet), then the launch; the
    capture's logpoint is its own, not a breakpoint the agent set: not listed, not carried into the next
    run, where it records nothing."""
    async with http_agent(relay) as agent:
        point = await agent.call("debug_capture", file=LOOP, line=line_of(LOOP, "loop-body"))
        assert point["state"] == "active" and point["file"] == LOOP, point
        sid = point["session_id"]
        end = await agent.call("debug_launch", script=LOOP, args=["30"], session_id=sid)
        assert end["status"] == "terminated", end
        table = await agent.call("debug_capture", capture_id=point["capture_id"], session_id=sid)
        assert table["total"] == 30 and table["capture"]["state"] == "ended", table
        status = await agent.call("debug_status", session_id=sid)
        assert "breakpoints" not in status or status["breakpoints"] in (0, []), status
        again = await agent.call("debug_launch", script=LOOP, args=["30"], session_id=sid)
        assert again["status"] == "terminated" and "carried_breakpoints" not in again, again
        after = await agent.call("debug_capture", capture_id=point["capture_id"], session_id=sid)
        assert after["total"] == 30  # the second run recorded nothing
        await agent.call("debug_disconnect", session_id=sid, forget=True)
