"""Function traces of a session: trace a function, list its calls, read one call's whole run."""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

from debugrelay import traces
from debugrelay.errors import InvalidState, NotFound, RelayError
from debugrelay.models import CallList, CallRun, Origin, Trace, TracedCall, TraceList, TraceRecord, TraceRequest
from debugrelay.models._traces import MAX_TRACES_PER_SESSION, ValueWrite
from debugrelay.sessions import Session, seals

from ._core import ServiceCore

LIVE = ("running", "paused")
_BRIEF = ("trace_id", "function", "raised_line", "parent", "thread", "pid")


def _no_trace(trace_id: str) -> NotFound:
    return NotFound(
        f"no trace '{trace_id}' in this session",
        details={"trace_id": trace_id},
        hint="List the session's traces.",
    )


def _strings(value: Any) -> dict[str, str]:
    return {str(k): str(v) for k, v in value.items()} if isinstance(value, dict) else {}


def _brief(call: dict[str, Any]) -> dict[str, Any]:
    fields: dict[str, Any] = {k: call[k] for k in _BRIEF if call.get(k) is not None}
    fields["call_id"] = str(call.get("call_id"))
    fields.setdefault("trace_id", "")
    fields.setdefault("function", "")
    fields["args"] = _strings(call.get("args"))
    for key in ("returned", "raised"):
        if call.get(key) is not None:
            fields[key] = str(call[key])
    fields["lines"] = [n for n in call.get("lines") or [] if isinstance(n, int)]
    fields["running"] = bool(call.get("running"))
    return fields


class TraceOps(ServiceCore):
    """The trace operations."""

    def _trace(self, session: Session, trace: TraceRecord, message: str | None = None) -> Trace:
        calls = session.calls
        return Trace(
            trace_id=trace.id,
            function=f"{trace.file}:{trace.qualname}",
            file=trace.file,
            qualname=trace.qualname,
            line=trace.line,
            keep=trace.keep,
            callees=trace.callees,
            reprs=trace.reprs,
            found=trace.id in calls.found,
            calls=calls.kept(trace.id),
            total=calls.total(trace.id),
            dropped=calls.dropped(trace.id),
            message=seals.UNSEALED_HINT if trace.unsealed else message,
            unsealed=trace.unsealed,
        )

    def _find_trace(self, session: Session, trace_id: str) -> TraceRecord:
        for trace in session.record.traces:
            if trace.id == trace_id:
                return trace
        raise _no_trace(trace_id)

    async def add_trace(self, session_id: str, request: TraceRequest) -> Trace:
        session = self._get(session_id)
        record = session.record
        if record.mode == "attach":
            raise InvalidState(
                "traces need a program the relay launched",
                details={"mode": "attach"},
                hint="Launch the program through the relay (its start-up hook records the calls); in an attached "
                "program, use capture points or breakpoints.",
            )
        workspace = list(session.policy.roots)
        found = await asyncio.to_thread(traces.resolve, record, session.source_roots(), request.function, workspace)
        async with session.lock:
            same = next((t for t in record.traces if t.file == found.file and t.qualname == found.qualname), None)
            if same is None and len(record.traces) >= MAX_TRACES_PER_SESSION:
                raise InvalidState(
                    f"a session traces at most {MAX_TRACES_PER_SESSION} functions",
                    details={"traces": len(record.traces), "max": MAX_TRACES_PER_SESSION},
                    hint="Remove a trace you no longer need.",
                )
            trace = TraceRecord(
                id=same.id if same is not None else f"t{record.next_trace}",
                file=found.file,
                qualname=found.qualname,
                line=found.line,
                keep=request.keep,
                callees=request.callees,
                reprs=request.reprs,
            )
            if same is None:
                record.next_trace += 1
                record.traces.append(trace)
            else:
                record.traces[record.traces.index(same)] = trace
            session.calls.follow()
            message = "Traced from the program's start (and at each relaunch): launch it."
            if session.status in LIVE:
                message = await self._apply(session, trace)
            await session.save()
        if found.others:
            message = f"{message} The name also matches {', '.join(found.others)}: give 'file:name' to pick another."
        return self._trace(session, trace, message)

    async def _apply(self, session: Session, trace: TraceRecord) -> str:
        """The trace put in place in the running program: what to tell the agent."""
        try:
            where = session.target.to_remote_path(trace.file) if session.target is not None else None
            answer = await traces.call(session, "add", traces.spec_of(trace, where))
        except RelayError as exc:  # the trace is kept either way: the next launch has it
            return f"Not applied in the running program ({exc.message}); it is at the next launch."
        if isinstance(answer, dict) and answer.get("found"):
            session.calls.found.add(trace.id)
            return "Traced from its next call."
        return "Not loaded by the program yet: traced from its first call."

    async def traces(self, session_id: str) -> TraceList:
        session = self._get(session_id)
        await session.calls.load()
        return TraceList(traces=[self._trace(session, t) for t in session.record.traces])

    async def remove_trace(self, session_id: str, trace_id: str) -> Trace:
        session = self._get(session_id)
        async with session.lock:
            trace = self._find_trace(session, trace_id)
            await session.calls.load()
            answer = self._trace(session, trace, "Removed: its calls went with it.")
            session.record.traces.remove(trace)
            if session.status in LIVE:
                try:
                    await traces.call(session, "remove", trace_id)
                except RelayError as exc:
                    answer.message = f"Removed here; the running program could not be told ({exc.message})."
            session.calls.follow()
            await session.save()
        return answer

    async def _read(self, session: Session) -> None:
        """The calls known so far: those kept, and a paused program's own (its running calls included)."""
        await session.calls.load()
        reading = session.calls.reading
        if reading is not None:  # asked for as the program stopped: what it brought is here once it is done
            await asyncio.wait({reading})
        if session.status == "paused" and session.record.traces:
            await self._take_paused(session)

    @staticmethod
    async def _take_paused(session: Session) -> None:
        batch = await traces.paused_calls(session)
        if batch is not None and session.calls.take(batch):
            await session.calls.save()

    def _read_ahead(self, session: Session) -> None:
        """A paused program's calls asked for now, as its stop is answered: the agent's next listing finds
        them here (a program that made many calls since the last it sent takes a while to say them)."""
        reading = session.calls.reading
        if session.status != "paused" or not session.record.traces or (reading is not None and not reading.done()):
            return

        async def read() -> None:
            with contextlib.suppress(RelayError):
                await session.calls.load()
                await self._take_paused(session)

        session.calls.reading = asyncio.create_task(read(), name=f"calls-{session.id}")

    async def traced_calls(
        self,
        session_id: str,
        *,
        function: str | None = None,
        outcome: str | None = None,
        match: str | None = None,
        trace_id: str | None = None,
        offset: int = 0,
        limit: int = 20,
    ) -> CallList:
        session = self._get(session_id)
        ids = [self._find_trace(session, trace_id).id] if trace_id else [t.id for t in session.record.traces]
        await self._read(session)
        found = session.calls.find(ids, function=function, outcome_is=outcome, match=match)
        page = found[offset : offset + limit]
        dropped = sum(session.calls.dropped(t) for t in ids)
        message = None
        if not session.record.traces:
            message = "No function is traced: add a trace first (POST .../traces)."
        elif not found and session.status in ("created", "launching"):
            message = "The program has not run yet: launch it."
        return CallList(
            calls=[TracedCall(**_brief(c)) for c in page],
            total=len(found),
            has_more=offset + len(page) < len(found),
            offset=offset,
            dropped=dropped,
            message=message,
        )

    async def traced_call(
        self,
        session_id: str,
        call_id: str,
        *,
        line: int | None = None,
        match: str | None = None,
        offset: int = 0,
        limit: int = 100,
    ) -> CallRun:
        session = self._get(session_id)
        await self._read(session)
        call = session.calls.get(call_id)
        if call is None:
            raise NotFound(
                f"no call '{call_id}' in this session's traces",
                details={"call_id": call_id},
                hint="List the calls (GET .../traces/calls); the oldest go past a trace's 'keep', and a relaunch "
                "starts afresh.",
            )
        run = _run(session, call)
        if line is None and match is None and offset == 0 and len(run.events) <= limit:
            return run
        kept = traces.events_with(run.events, line, match)
        run.events = kept[offset : offset + limit]
        run.events_total, run.offset, run.has_more = len(kept), offset, offset + len(run.events) < len(kept)
        return run

    async def value_origin(self, session_id: str, *, name: str, limit: int = 10) -> Origin:
        session = self._get(session_id)
        await self._read(session)
        calls = session.calls.find([t.id for t in session.record.traces])
        found = traces.writes_of(calls, name)
        if found:
            return Origin(name=name, writes=[ValueWrite(**w) for w in found[:limit]], total=len(found))
        writers = await asyncio.to_thread(self._writers, session, name)
        traced = {f"{t.file}:{t.qualname}" for t in session.record.traces}
        suggest = [w for w in writers if w not in traced][:3]
        if not session.record.traces:
            message = "No function is traced."
        elif not calls:
            message = "No traced call was recorded yet."
        else:
            message = f"No traced call wrote '{name}'."
        if suggest:
            message += " These functions assign it: trace them (debug_launch(trace=[...])) and run it again."
        else:
            message += " No function of the paused file or the traced ones assigns it: trace the function that made it."
        return Origin(name=name, writes=[], total=0, trace=suggest, message=message)

    @staticmethod
    def _writers(session: Session, name: str) -> list[str]:
        """``file:function`` of the functions that assign ``name``, in the stop's files, then the traced ones'."""
        files: list[str] = []
        stop = session.record.stop
        if stop is not None and stop.location is not None and stop.location.file:
            files.append(session.to_local(stop.location.file) or "")
        files += [t.file for t in session.record.traces]
        roots = session.source_roots()
        out: list[str] = []
        for file in dict.fromkeys(f for f in files if f):
            text = roots.read(file)
            if text is not None:
                out += [f"{file}:{qualname}" for qualname, _ in traces.writers_in(text, name)]
        return out

    async def finished_calls(self, session_id: str, newest: int) -> tuple[list[CallRun], int, int]:
        """The ``newest`` calls of the session's traces that finished, oldest first, each with its run, how
        many finished in all (those past a trace's ``keep`` too) and in which of the session's runs: what a
        stop's or an end's answer names. Only what the program sent as its calls returned: a paused program
        is not asked."""
        session = self._get(session_id)
        if not session.record.traces:
            return [], 0, session.starts
        self._read_ahead(session)
        await session.calls.load()
        ids = [t.id for t in session.record.traces]
        done = [c for c in session.calls.find(ids) if not c.get("running")]
        dropped = sum(session.calls.dropped(t) for t in ids)
        return [_run(session, c) for c in done[-newest:]] if newest > 0 else [], len(done) + dropped, session.starts


def _run(session: Session, call: dict[str, Any]) -> CallRun:
    """A kept call's whole run, its file as the user names it (not an image's path)."""
    events = [e for e in call.get("events") or [] if isinstance(e, dict)]
    cut = call.get("cut")
    return CallRun(
        **_brief(call),
        file=session.to_local(str(call.get("file") or "")) or "",
        line=int(call.get("line") or 0),
        events=events,
        callees=[str(c) for c in call.get("callees") or []],
        cut={str(k): int(v) for k, v in cut.items() if isinstance(v, int)} if isinstance(cut, dict) else None,
    )
