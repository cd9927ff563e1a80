"""The evidence actions: snapshots, post-mortem, capture points, traces, evidence pages, pattern analysis."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field

from debugrelay.errors import InvalidRequest
from debugrelay.models import CaptureRequest, SnapshotBounds, TraceRequest

from .. import policy
from ._declare import ActionGroup, SessionId, action
from ._events import plain

CALLS_PAGE = 20  # calls a listing shows
RUN_PAGE = 100  # events of a call's run an answer shows (the recorder keeps at most 100 items a call)


class EvidenceTools(ActionGroup):
    """Evidence about the whole program, kept by the relay: snapshots, patterns, capture points."""

    @action(core=False, marks_unpersisted=False)
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

    @action(core=False, marks_unpersisted=False)
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

    @action(core=False, marks_unpersisted=False)
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
            file=policy.absolute(file, await policy.relative_base(self.backend, sid)),
            line=line,
            expressions=expressions or ["locals"],
            condition=condition,
            hit_limit=hit_limit,
            expires_in_seconds=expires_in_seconds,
        )
        return {"session_id": sid, **plain(await self.backend.add_capture(sid, request))}

    @action(marks_unpersisted=False)
    async def debug_trace(
        self,
        *,
        function: Annotated[str | None, Field(description="Trace 'file.py:Class.method'.")] = None,
        keep: Annotated[int, Field(description="Calls kept.", ge=1, le=100_000)] = 1000,
        callees: Annotated[bool, Field(description="Its direct callees too.")] = False,
        reprs: Annotated[bool, Field(description="Values by their own __repr__.")] = False,
        calls: Annotated[str | None, Field(description="Its calls ('*': all).")] = None,
        outcome: Annotated[Literal["returned", "raised", "running"] | None, Field(description="Only these.")] = None,
        match: Annotated[str | None, Field(description="Text in an arg or result.")] = None,
        offset: Annotated[int, Field(description="First call listed.", ge=0)] = 0,
        limit: Annotated[int, Field(description="Calls listed.", ge=1, le=1000)] = CALLS_PAGE,
        call_id: Annotated[str | None, Field(description="A call's run.")] = None,
        origin: Annotated[str | None, Field(description="Who wrote x, obj.attr.")] = None,
        remove: Annotated[str | None, Field(description="A trace_id to stop.")] = None,
        session_id: SessionId = None,
    ) -> dict[str, Any]:
        """Calls of a function (args, result or raise); a call's run: what each line changed. Beats stepping
        when a value goes wrong: launch with trace=[...]; calls+match finds it (a lone one: its run); origin:
        who wrote a value."""
        if function is not None:
            folder = await policy.relative_base(self.backend, session_id) if session_id else None
            named = policy.traced_function(function, folder)
            sid = await policy.session_for_trace(self.backend, session_id, named)  # before a launch too
            request = TraceRequest(function=named, keep=keep, callees=callees, reprs=reprs)
            return {"session_id": sid, **plain(await self.backend.add_trace(sid, request))}
        sid = await self._sid(session_id)
        if remove is not None:
            return plain(await self.backend.remove_trace(sid, remove))
        if call_id is not None:  # match: the events holding that text; limit: events (100 unless given)
            events = RUN_PAGE if limit == CALLS_PAGE else limit
            return plain(await self.backend.traced_call(sid, call_id, match=match, offset=offset, limit=events))
        if origin is not None:
            return plain(await self.backend.value_origin(sid, name=origin))
        if calls is not None or outcome is not None or match is not None:
            name = None if calls in (None, "*", "") else calls
            found = plain(
                await self.backend.traced_calls(
                    sid, function=name, outcome=outcome, match=match, offset=offset, limit=limit
                )
            )
            found["calls"] = [_brief_call(c) for c in found.get("calls") or []]
            if found.get("total") == 1 and len(found["calls"]) == 1:  # the one call found: its run, read next
                run = plain(await self.backend.traced_call(sid, found["calls"][0]["call_id"]))
                found["calls"][0]["run"] = run.get("events", [])
                if run.get("cut"):
                    found["calls"][0]["cut"] = run["cut"]
            return found
        return plain(await self.backend.traces(sid))

    @action(read_only=True, core=False)
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


def _brief_call(call: dict[str, Any]) -> dict[str, Any]:
    """A listed call without what its id already says (the process: ``PID.N``) or what goes without
    saying (the main thread)."""
    if str(call.get("call_id", "")).startswith(f"{call.get('pid')}."):
        call.pop("pid", None)
    if call.get("thread") == "MainThread":
        call.pop("thread")
    return call
