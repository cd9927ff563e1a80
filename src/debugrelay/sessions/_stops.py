"""Events of a session's target: output, stops and ends, and how a stop is presented (its location, threads,
exception, the exception a step came out by). One process's stop is shown at a time; the others wait their turn."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
from pathlib import PurePosixPath
from typing import TYPE_CHECKING, Any

import msgspec

from debugrelay.dap import (
    Channel,
    ExitedEvent,
    OutputEvent,
    StackFrame,
    StackTraceBody,
    StoppedEvent,
    ThreadEvent,
    ThreadsBody,
    as_body,
    plain_exception_type,
)
from debugrelay.errors import NotFound, NotPaused, RelayError
from debugrelay.launchers import Target
from debugrelay.models import ExceptionInfo, Location, Stop, StoppedThread

from . import breakpoints as bps
from ._http import HTTP_RESPONSE
from ._reads import unquote_result, without_launch_frames

if TYPE_CHECKING:
    from ._session import Session

log = logging.getLogger(__name__)
ACTIVE = ("launching", "running", "paused")  # the statuses with a live target
CAPTURE_MARK = "[debugrelay-capture:"  # the lines of capture points (debugrelay.evidence)
CALLS_EVENT = "debugrelay.calls"  # calls of traced functions, sent by the target through its keeper
LOST = "its debug connection was lost while it ran (its network went, or it stopped answering): the relay ended it"


def on_event(session: Session, event: str, body: Any) -> None:
    if any(take(event, body) for take in list(session.event_filters)):
        return
    if event == "output":
        on_output(session, body)
    elif event == "stopped":
        arrived(session, None, as_body(body, StoppedEvent))
    elif event == "continued":
        on_continued(session, None)
    elif event == HTTP_RESPONSE:
        session.http.answered(body)
        session.notify()
    elif event == "debugrelay.process":
        if isinstance(body, dict) and session.processes.announced(body):
            session.announce()
    elif event == CALLS_EVENT:
        if session.calls.take(body):
            session.announce()
    elif event == "thread":
        thread = as_body(body, ThreadEvent)
        if thread.reason == "exited" and thread.thread_id is not None:
            session._threads.pop(thread.thread_id, None)
    elif event == "exited":
        session.record.exit_code = as_body(body, ExitedEvent).exit_code
    elif event in ("terminated", "_closed"):
        session.spawn(on_end(session, event, session.starts))


def on_output(session: Session, body: Any) -> None:
    out = as_body(body, OutputEvent)
    if out.category == "console" and bps.on_runs_report(session.record, out.output):
        return  # a breakpoint's runs, reported by the target: not the program's output
    if out.category == "console" and out.output.startswith(CAPTURE_MARK):
        return  # a capture point's row no relay collects any more (it restarted): not program output
    if out.category in ("stdout", "stderr") or (out.category == "console" and out.output):
        category = out.category
        if category == "stdout" and out.n is None and session.client is not None and session.client.keeper:
            # a keeper reads the program's pipes and numbers what it read: unnumbered stdout is debugpy's
            # own message (a logpoint), whole, never a piece of a line the program is printing
            category = "console"
        session.output.add(category, out.output, out.time, out.n)


def on_process_event(session: Session, pid: int, event: str, body: Any) -> None:
    """An event of a child process, through the keeper that holds its connection."""
    if any(take(event, body) for take in list(session.event_filters)):
        return
    if event == "output":
        on_output(session, body)
    elif event == "stopped":
        arrived(session, pid, as_body(body, StoppedEvent))
    elif event == "continued":
        on_continued(session, pid)
    elif event in ("exited", "terminated"):
        code = as_body(body, ExitedEvent).exit_code if event == "exited" else None
        session.processes.set_state(pid, "exited", code)
        session.processes.unqueue(pid)
        if session.processes.showing and session.processes.focus == pid:
            on_continued(session, pid)  # the child shown has gone: the next stop, if any, is shown
        session.announce()


def arrived(session: Session, process: int | None, body: StoppedEvent, known: Stop | None = None) -> None:
    """A process stopped: shown now, or once the process whose stop is shown goes on."""
    procs = session.processes
    if process is not None:
        procs.set_state(process, "paused")
    if procs.showing and process != procs.focus:
        procs.queue(process, body)
        session.announce()
        return
    if process != procs.focus:
        session._run_epoch += 1  # another process: nothing read of the last one's stop applies
        session._reads.clear()
    procs.focus, procs.showing, procs.shown_event = process, True, body
    first_event(session)
    session.spawn(on_stopped(session, body, session._run_epoch, known, process))


def first_event(session: Session) -> None:
    """The run's first stop (or its end): how long it took from the launch, counted once."""
    started, session.launched_at = session.launched_at, None
    if started is not None and session.metrics is not None:
        target = session.record.target
        session.metrics.first_stop.labels(target.kind if target is not None else "-").observe(
            time.monotonic() - started
        )


def show_next(session: Session) -> None:
    waiting = session.processes.next_queued()
    if waiting is not None:
        process, body = waiting
        arrived(session, process, body, session.processes.set_aside.pop(process, None))


async def show_process(session: Session, pid: int) -> None:
    """Show the stop of another paused process: stack, variables, evaluate, steps and continue apply to
    it. The stop shown until now waits its turn and is shown again as it was (not a new stop)."""
    async with session.lock:
        session.require_paused()
        procs = session.processes
        key = procs.key(pid)
        if key == procs.focus:
            return
        body = procs.queued.get(key)
        if body is None:
            hint = "GET /sessions/{id}/processes lists the program's processes and their states."
            if procs.get(pid) is None and pid != procs.root_pid:
                raise NotFound(f"no process {pid} in this session", details={"pid": pid}, hint=hint)
            paused = [procs.root_pid if p is None else p for p in [procs.focus, *procs.queued]]
            raise NotPaused(f"process {pid} is not paused", details={"pid": pid, "paused": paused}, hint=hint)
        stop, shown = session.record.stop, procs.shown_event
        if stop is not None and shown is not None:
            procs.queue(procs.focus, shown)
            procs.set_aside[procs.focus] = stop
        del procs.queued[key]
        session._run_epoch += 1  # nothing read of the other process's stop applies
        session._reads.clear()
        session._frames.clear()
        session._refs.clear()
        procs.focus, procs.showing, procs.shown_event = key, True, body
        await on_stopped(session, body, session._run_epoch, procs.set_aside.pop(key, None), key)


def on_continued(session: Session, process: int | None = None) -> None:
    procs = session.processes
    if process is not None:
        procs.set_state(process, "running")
    if procs.showing and process != procs.focus:
        procs.unqueue(process)  # a waiting process went on (continue all, or by itself)
        return
    procs.focus, procs.showing = None, False
    continued(session)
    show_next(session)


def continued(session: Session) -> None:
    session._run_epoch += 1
    session._reads.clear()
    session._frames.clear()
    session._refs.clear()
    if session.status == "paused":
        session.record.status = "running"
        session.record.stop = None
        session.notify()


async def on_stopped(
    session: Session, body: StoppedEvent, epoch: int, known: Stop | None = None, process: int | None = None
) -> None:
    if session.client is None:
        return
    client = Channel(session.client, process)
    tid = body.thread_id
    reason = body.reason
    answers = await asyncio.gather(
        client.request("stackTrace", {"threadId": tid, "startFrame": 0, "levels": 50}),
        client.request("threads"),
        return_exceptions=True,
    )
    trace = as_body(answers[0], StackTraceBody)  # a failed request (an exception) reads as empty
    listed = as_body(answers[1], ThreadsBody).threads
    if epoch != session._run_epoch:
        return  # resumed meanwhile
    session._threads = {t.id: t.name for t in listed}
    frames, total = without_launch_frames(trace.stack_frames, trace.total_frames or len(trace.stack_frames))
    session._frames = {tid: frames}
    session._totals = {tid: total}
    location = stop_location(session, frames[0]) if frames else None
    if known is not None and known.thread_id == tid and known.location == location:
        # the same stop, shown again by a relay that took the session over: not a new one
        session.record.stop = msgspec.structs.replace(
            known,
            process=process if process is not None else session.processes.root_pid,
            threads=[StoppedThread(thread_id=t, name=n) for t, n in session._threads.items()]
            if len(listed) > 1
            else [],
        )
        remember_stop(session, session.record.stop, frames)
        session.record.status = "paused"
        with contextlib.suppress(RelayError):
            await session.save()
        session.notify()  # after the save: whoever waits answers knowing whether the stop is persisted
        return
    hit, entry = bps.on_hit(session.record, body.hit_breakpoint_ids)
    if hit and frames:
        await bps.read_hits(session, frames[0].id, hit)
    exception = None
    if reason == "exception":
        exception = await exception_info(session, client, tid, location, frames)
        if not await bps.exception_wanted(session, frames, exception):
            # exception_types the relay filters itself (debugpy cannot): not one of them, go on
            with contextlib.suppress(RelayError):
                await client.request("continue", {"threadId": tid})
            if epoch == session._run_epoch:
                session.processes.showing = False
                session.processes.set_state(process, "running")
                show_next(session)
            return
    elif entry:
        reason = "entry"
    session.record.stop_count += 1
    threads, changed = threads_to_show(session, len(listed))
    stop = Stop(
        reason=reason,
        thread_id=tid,
        location=exception.location if exception is not None and exception.location else location,
        description=body.description or body.text,
        breakpoint_ids=hit,
        exception=exception,
        all_threads_stopped=body.all_threads_stopped,
        threads=threads,
        threads_changed=changed,
        left_by=await left_by(session, client, tid, reason, frames, depth=trace.total_frames or len(frames)),
        at=time.time(),
        seq=session.record.stop_count,
        process=process if process is not None else session.processes.root_pid,
    )
    if epoch != session._run_epoch:
        return
    remember_stop(session, stop, frames)
    session.record.stop = stop
    session.record.stop_history = [*session.record.stop_history, stop][-session.settings.stop_history :]
    session.record.status = "paused"
    with contextlib.suppress(RelayError):
        await session.save()
    session.notify()  # after the save: whoever waits answers knowing whether the stop is persisted
    if entry:
        with contextlib.suppress(RelayError):
            await bps.drop_entry(session)
            await session.save()


def remember_stop(session: Session, stop: Stop, frames: list[StackFrame]) -> None:
    """Keep what the stop's reads answer from while the agent reads it; the target resumes only after
    it is done (see resume)."""
    if session.on_stop is not None:
        session._snapshot = asyncio.ensure_future(session.on_stop(session, stop, frames))
        session._tasks.add(session._snapshot)
        session._snapshot.add_done_callback(session._tasks.discard)


async def left_by(
    session: Session, client: Channel, tid: int, reason: str, frames: list[StackFrame], *, depth: int
) -> ExceptionInfo | None:
    """After a step that came out of a deeper frame: the exception that carried it out, if one did."""
    before = session._tops.get(tid)
    top = frames[0] if frames else None
    if top is None:
        return None
    session._tops[tid] = (top.name, PurePosixPath((top.source and top.source.path) or "").name, depth)
    if reason != "step" or before is None or depth >= before[2] or not session.probe_available:
        return None
    try:
        body = await client.request(
            "evaluate",
            {
                "expression": f"__import__('_debugrelay_probe').left_by({before[0]!r}, {before[1]!r})",
                "frameId": top.id,
                "context": "clipboard",
            },
        )
        found = json.loads(unquote_result(body.get("result", "")))
    except (RelayError, ValueError):
        return None
    if not isinstance(found, dict) or "type" not in found:
        return None
    where = found.get("location")
    location = (
        Location(file=session.to_local(where.get("file")), line=where.get("line"), function=where.get("function"))
        if isinstance(where, dict)
        else None
    )
    return ExceptionInfo(
        type=str(found["type"]).removeprefix("builtins."),
        message=str(found.get("message", "")),
        location=location,
    )


def threads_to_show(session: Session, listed: int) -> tuple[list[StoppedThread], bool]:
    """A new stop's threads (when there are several) and whether they changed since the last stop."""
    shown = dict(session._threads) if listed > 1 else {}
    changed = shown != session._shown_threads
    session._shown_threads = shown
    return [StoppedThread(thread_id=t, name=n) for t, n in shown.items()], changed


async def exception_info(
    session: Session, client: Channel, tid: int, location: Location | None, frames: list[StackFrame] | None = None
) -> ExceptionInfo:
    try:
        info = await client.request("exceptionInfo", {"threadId": tid})
    except RelayError:
        return ExceptionInfo(type="Exception", location=location)
    details = info.get("details") or {}
    type_name = plain_exception_type(details.get("typeName") or info.get("exceptionId") or "") or "Exception"
    message = details.get("message")
    if message is None:
        message = info.get("description") or ""
    mode = info.get("breakMode")
    recursed = _recursive_call(type_name, frames or [])
    if recursed is not None:
        location = stop_location(session, recursed)
    return ExceptionInfo(
        type=type_name,
        message=message,
        unhandled=mode in ("unhandled", "userUnhandled"),
        break_mode=mode,
        location=location,
    )


def _recursive_call(type_name: str, frames: list[StackFrame]) -> StackFrame | None:
    """For a RecursionError, which Python raises as a call enters (its frames at the 'def' line): the
    innermost call of the same function on another line, the call that recursed."""
    if type_name.removeprefix("builtins.") != "RecursionError" or not frames:
        return None
    inner = frames[0]
    path = inner.source.path if inner.source is not None else None
    for frame in frames[1:]:
        if frame.name != inner.name or path is None or frame.source is None or frame.source.path != path:
            return None
        if frame.line != inner.line:
            return frame
    return None


def stop_location(session: Session, frame: StackFrame) -> Location:
    source = frame.source
    path = session.to_local(source.path) if source is not None else None
    return Location(file=path or (source.name if source else None), line=frame.line, function=frame.name)


async def on_end(session: Session, why: str, start: int) -> None:
    """The target of the session's ``start``-th start ended; nothing to do when another start followed it
    meanwhile (a launch that began again after the first target was lost)."""
    if session._ending or session.status not in ACTIVE or session.starts != start:
        return
    session._ending = True
    first_event(session)
    target, client = session.target, session.client
    exit_code = session.record.exit_code
    ended = session.record.ended
    if target is not None:
        exit_code = await _wait_exit(target, 2.0) if exit_code is None else exit_code
        lost = exit_code is None and why == "_closed"  # the connection ended, not the program: the relay ends it
        with contextlib.suppress(Exception):
            await target.terminate()
        if exit_code is None:
            exit_code = target.poll()
        ended = target.end_reason() or (LOST if lost else None)
    if client is not None:
        await client.close()
    if session.starts != start:
        return  # the launch gave this target up and started another meanwhile: the session is that one's
    session.record.ended = ended
    session.client = None
    await session.ports.close()
    session.record.published = []
    await session.output.flush()
    session.calls.ended()
    await session.calls.save()
    session.record.exit_code = exit_code
    session.record.status = "terminated"
    session.record.reason = session.record.reason or "target_exited"
    session.record.stop = None
    session.processes.ended()
    session._frames.clear()
    session._refs.clear()
    session._reads.clear()
    session._run_epoch += 1
    bps.mark_unhit(session.record)
    bps.drop_captures(session.record)
    with contextlib.suppress(RelayError):
        await session.save()
    session.notify()


async def _wait_exit(target: Target, timeout: float) -> int | None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        code = target.poll()
        if code is not None:
            return code
        await asyncio.sleep(0.02)
    return target.poll()
