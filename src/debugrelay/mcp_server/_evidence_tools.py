"""MCP tools for seed 002's evidence: snapshots, post-mortem, capture points, evidence pages, pattern
analysis; and the prompt that carries the seed's hypothesis -> test -> evaluate workflow."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from mcp.server.mcpserver.prompts.base import Prompt
from pydantic import Field

from debugrelay.errors import InvalidRequest
from debugrelay.models import CaptureRequest, SnapshotBounds, TraceRequest
from debugrelay.service import policy

from ._stops import plain
from ._tools import SessionId, ToolGroup, tool

WORKFLOW = """\
Investigate {problem} in the debugrelay session {session} like a seasoned debugger: hypothesis -> \
test -> evaluate, cheapest evidence first.

1. Collect: debug_analyze(take=2) takes two snapshots a second apart and names known patterns \
(deadlock, starvation, busy loop, exception storm, stuck asyncio task, blocked event loop, leak) \
with their evidence ids. For a crash, debug_snapshot(snapshot_id='post_mortem') or exception_autopsy.
2. Hypothesis: state ONE cause that the evidence points at (a matched pattern is a strong hint, \
not a proof).
3. Test with 2-3 targeted calls: debug_evidence(id, grep=...) on a snapshot, a capture point \
(debug_capture at the suspect line with the expressions that would confirm it, then \
debug_capture(capture_id) for its rows), or debug_evaluate while paused.
4. Evaluate: confirmed, rejected or inconclusive. Rejected -> a new hypothesis; inconclusive -> \
more evidence, then test again. Go deeper only after a confirmation.
5. Report the root cause with the evidence ids that show it, and challenge your own conclusion: \
what would contradict it, and did you look? Prefer a fix the evidence supports over a guess.
"""


class EvidenceTools(ToolGroup):
    """Evidence about the whole program, kept by the relay: snapshots, patterns, capture points."""

    @tool(core=False, marks_unpersisted=False)
    async def debug_snapshot(
        self,
        *,
        snapshot_id: Annotated[
            str | None, Field(description="Read this one whole; 'post_mortem': the crash's.")
        ] = None,
        session_id: SessionId = None,
    ) -> dict[str, Any]:
        """Snapshot the whole program, running (paused a moment) or paused: each thread's stack, locals, locks
        held and awaited; asyncio tasks; process facts. Answers a summary and its id."""
        sid = await self._sid(session_id)
        if snapshot_id is not None:
            return plain(await self.backend.snapshot(sid, snapshot_id))
        return plain(await self.backend.take_snapshot(sid, SnapshotBounds()))

    @tool(core=False, marks_unpersisted=False)
    async def debug_analyze(
        self,
        *,
        snapshot_ids: Annotated[list[str] | None, Field(description="Default: the last two.")] = None,
        take: Annotated[int, Field(description="New snapshots to take first (2: leaks, busy loops).", ge=0, le=2)] = 0,
        interval: Annotated[float, Field(description="Seconds between them.", ge=0, le=30)] = 1.0,
        session_id: SessionId = None,
    ) -> dict[str, Any]:
        """Known patterns in snapshots, with evidence and next steps: crash, deadlock, starvation, busy loop,
        exception storm, stuck task, blocked event loop, leak. A hang: take=2."""
        sid = await self._sid(session_id)
        return plain(await self.backend.analyze(sid, snapshot_ids, take=take, interval=interval))

    @tool(core=False, marks_unpersisted=False)
    async def debug_capture(
        self,
        *,
        file: Annotated[str | None, Field(description="Absolute, or relative to the launch's folder.")] = None,
        line: Annotated[int | None, Field(description="1-based.", ge=1)] = None,
        expressions: Annotated[list[str] | None, Field(description="Default ['locals'].")] = None,
        condition: Annotated[str | None, Field(description="Record only then.")] = None,
        hit_limit: Annotated[int, Field(description="Rows, then removed.", ge=1, le=10000)] = 100,
        expires_in_seconds: Annotated[float, Field(description="Removed after.", gt=0, le=86400)] = 3600,
        capture_id: Annotated[str | None, Field(description="Its rows instead (start, count).")] = None,
        start: Annotated[int, Field(description="First row.", ge=0)] = 0,
        count: Annotated[int, Field(description="Rows.", ge=1, le=1000)] = 100,
        session_id: SessionId = None,
    ) -> dict[str, Any]:
        """Record expressions at FILE:LINE on each hit without pausing (a row per hit), before or during a
        run; capture_id reads the rows as a table."""
        if capture_id is not None:
            sid = await self._sid(session_id)
            return plain(await self.backend.capture_table(sid, capture_id, start, count))
        if file is None or line is None:
            raise InvalidRequest(
                "a capture point needs file and line (or capture_id to read one)",
                details={"file": file, "line": line},
                hint="debug_capture(file='app.py', line=42, expressions=['x']), then debug_capture(capture_id=...).",
            )
        sid = await self._sid_or_new(session_id)  # before a launch too, as a breakpoint is set
        request = CaptureRequest(
            file=policy.absolute(file, await policy.session_folder(self.backend, sid)),
            line=line,
            expressions=expressions or ["locals"],
            condition=condition,
            hit_limit=hit_limit,
            expires_in_seconds=expires_in_seconds,
        )
        return {"session_id": sid, **plain(await self.backend.add_capture(sid, request))}

    @tool(marks_unpersisted=False)
    async def debug_trace(
        self,
        *,
        function: Annotated[str | None, Field(description="Trace 'file.py:Class.method'.")] = None,
        keep: Annotated[int, Field(description="Calls kept.", ge=1, le=100_000)] = 1000,
        callees: Annotated[bool, Field(description="Its direct callees too.")] = False,
        calls: Annotated[str | None, Field(description="List this function's calls ('*': all).")] = None,
        outcome: Annotated[Literal["returned", "raised", "running"] | None, Field(description="Only these.")] = None,
        match: Annotated[str | None, Field(description="Text in an arg or result.")] = None,
        offset: Annotated[int, Field(description="First call listed.", ge=0)] = 0,
        limit: Annotated[int, Field(description="Calls listed.", ge=1, le=1000)] = 20,
        call_id: Annotated[str | None, Field(description="Read this call's run.")] = None,
        remove: Annotated[str | None, Field(description="A trace_id to stop.")] = None,
        session_id: SessionId = None,
    ) -> dict[str, Any]:
        """Every call of a function (args, result or raise) and a call's run line by line with what each line
        changed. Beats stepping when a value goes wrong across many calls or loops: trace, launch, find the
        call (calls, match), read it (call_id)."""
        if function is not None:
            folder = await policy.session_folder(self.backend, session_id) if session_id else None
            named = policy.traced_function(function, folder)
            sid = await policy.session_for_trace(self.backend, session_id, named)  # before a launch too
            request = TraceRequest(function=named, keep=keep, callees=callees)
            return {"session_id": sid, **plain(await self.backend.add_trace(sid, request))}
        sid = await self._sid(session_id)
        if remove is not None:
            return plain(await self.backend.remove_trace(sid, remove))
        if call_id is not None:
            return plain(await self.backend.traced_call(sid, call_id))
        if calls is not None or outcome is not None or match is not None:
            name = None if calls in (None, "*", "") else calls
            found = await self.backend.traced_calls(
                sid, function=name, outcome=outcome, match=match, offset=offset, limit=limit
            )
            return plain(found)
        return plain(await self.backend.traces(sid))

    @tool(read_only=True, core=False)
    async def debug_evidence(
        self,
        evidence_id: Annotated[str, Field(description="ev-... from a snapshot, table or analysis.")],
        *,
        offset: Annotated[int, Field(description="First line.", ge=0)] = 0,
        limit: Annotated[int, Field(description="Lines.", ge=1, le=1000)] = 200,
        grep: Annotated[str | None, Field(description="RE2 regex: no backreferences or lookarounds.")] = None,
    ) -> dict[str, Any]:
        """Page (offset, limit) or search (grep) what the relay kept whole."""
        return plain(await self.backend.evidence(evidence_id, offset=offset, limit=limit, grep=grep))


def investigate(problem: str = "the problem", session_id: str = "(the most recent)") -> str:
    """The hypothesis -> test -> evaluate workflow for a hang, a crash, a leak or a slow program."""
    return WORKFLOW.format(problem=problem, session=session_id)


def prompts() -> list[Prompt]:
    return [Prompt.from_function(investigate, name="investigate", description=investigate.__doc__)]
