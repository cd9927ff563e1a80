"""The client commands: each one call (or a few) of the relay's API for a shell, answered as
``(kind, data)``: ``kind`` says how --pretty renders ``data``."""

from __future__ import annotations

import argparse
import os
from typing import Any

import msgspec

from debugrelay.client import ApiError, RemoteService
from debugrelay.errors import InvalidRequest, RelayError
from debugrelay.models import BreakpointRequest, CaptureRequest, HttpCall, SnapshotBounds, TraceRequest
from debugrelay.models.limits import ResumeCommand
from debugrelay.service import policy

from ._client import cli_hint, cli_words, plain, split_id


async def cmd_sessions(s: RemoteService, a: argparse.Namespace) -> tuple[str, Any]:
    return "sessions", plain(await s.list_sessions())


async def cmd_create(s: RemoteService, a: argparse.Namespace) -> tuple[str, Any]:
    return "status", plain(await s.create_session(name=a.name))


async def cmd_delete(s: RemoteService, a: argparse.Namespace) -> tuple[str, Any]:
    return "plain", plain(await s.delete_session(await policy.session_or_latest(s, a.id)))


async def cmd_status(s: RemoteService, a: argparse.Namespace) -> tuple[str, Any]:
    return "status", plain(await s.status(await policy.session_or_latest(s, a.id)))


async def cmd_break(s: RemoteService, a: argparse.Namespace) -> tuple[str, Any]:
    given, rest = split_id(a.where, 0 if a.function else 1)
    sid = await policy.session_or_new(s, given)
    if a.function:
        request = BreakpointRequest(function=a.function)
    elif len(rest) == 1:
        request = policy.parse_location(rest[0])
    else:
        raise InvalidRequest(
            "give one FILE:LINE (or --function NAME)", hint="debugrelay break [ID] app/main.py:42 [--condition 'i > 3']"
        )
    request.condition, request.hit_condition, request.log_message = a.condition, a.hit, a.log
    created = (await s.add_breakpoints(sid, [request]))[0]
    return "breakpoints", {"session_id": sid, **plain(created)}


async def cmd_breakpoints(s: RemoteService, a: argparse.Namespace) -> tuple[str, Any]:
    return "breakpoints", plain(await s.breakpoints(await policy.session_or_latest(s, a.id)))


async def cmd_unbreak(s: RemoteService, a: argparse.Namespace) -> tuple[str, Any]:
    given, rest = split_id(a.ids, 0 if a.all else 1)
    sid = await policy.session_or_latest(s, given)
    if a.all:
        return "plain", plain(await s.clear_breakpoints(sid))
    if not rest:
        raise InvalidRequest("give the breakpoints to remove (or --all)", hint="debugrelay unbreak [ID] bp_1 bp_2")
    return "plain", [plain(await s.remove_breakpoint(sid, bp)) for bp in rest]


async def cmd_catch(s: RemoteService, a: argparse.Namespace) -> tuple[str, Any]:
    return "plain", plain(await s.set_exception_breakpoints(await policy.session_or_new(s, a.id), a.filters, a.types))


async def cmd_continue(s: RemoteService, a: argparse.Namespace) -> tuple[str, Any]:
    sid = await policy.session_or_latest(s, a.id)
    answer = await s.resume(sid, "continue", a.thread, a.timeout, a.locals, every=a.all)
    return "status", cli_words(plain(answer))


async def cmd_step(s: RemoteService, a: argparse.Namespace) -> tuple[str, Any]:
    sid = await policy.session_or_latest(s, a.id)
    steps: dict[str, ResumeCommand] = {"over": "step-over", "into": "step-into", "out": "step-out"}
    command = steps[a.kind]
    answer = await s.resume(sid, command, a.thread, a.timeout, a.locals)
    return "status", cli_words(plain(answer))


async def cmd_pause(s: RemoteService, a: argparse.Namespace) -> tuple[str, Any]:
    sid = await policy.session_or_latest(s, a.id)
    paused = await s.pause(sid)
    if not a.locals or paused.status != "paused":
        return "status", plain(paused)
    # the stop as continue and step answer it: its source line and locals
    return "status", plain(await s.wait(sid, 0, details=True))


async def cmd_wait(s: RemoteService, a: argparse.Namespace) -> tuple[str, Any]:
    sid = await policy.session_or_latest(s, a.id)
    return "status", plain(await s.wait(sid, a.timeout, a.autopsy, details=a.locals))


async def cmd_terminate(s: RemoteService, a: argparse.Namespace) -> tuple[str, Any]:
    return "status", plain(await s.terminate(await policy.session_or_latest(s, a.id)))


METHODS = ("GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS")


async def cmd_request(s: RemoteService, a: argparse.Namespace) -> tuple[str, Any]:
    """``[ID] [METHOD] PATH``: the relay sends it to the program; the response, or the stop it caused."""
    given, rest = split_id(a.words, 1)
    method = rest[0].upper() if len(rest) > 1 and rest[0].upper() in METHODS else "GET"
    path = rest[-1]
    headers = {}
    for header in a.header:
        name, _, value = header.partition(":")
        headers[name.strip()] = value.strip()
    call = msgspec.convert(
        {"method": method, "path": path, "headers": headers, "timeout": a.timeout, "port": a.port, "body": a.data},
        HttpCall,
    )
    sid = await policy.session_or_latest(s, given)
    return "status", cli_words(plain(await s.request(sid, call)))


async def cmd_stack(s: RemoteService, a: argparse.Namespace) -> tuple[str, Any]:
    sid = await policy.session_or_latest(s, a.id)
    return "stack", plain(await s.stacktrace(sid, a.thread, a.start, a.max, library=a.library))


async def cmd_threads(s: RemoteService, a: argparse.Namespace) -> tuple[str, Any]:
    return "threads", plain(await s.threads(await policy.session_or_latest(s, a.id)))


async def cmd_processes(s: RemoteService, a: argparse.Namespace) -> tuple[str, Any]:
    sid = await policy.session_or_latest(s, a.id)
    if a.show is not None:
        return "status", plain(await s.show_process(sid, a.show))
    return "processes", plain(await s.processes(sid))


async def cmd_vars(s: RemoteService, a: argparse.Namespace) -> tuple[str, Any]:
    sid = await policy.session_or_latest(s, a.id)
    if a.ref is not None:
        return "variables", plain(await s.variables(sid, a.ref, a.start, a.count))
    if a.expand or a.scope:
        found = await s.scoped_variables(
            sid,
            scope=a.scope or "all",
            frame_index=a.frame,
            thread_id=a.thread,
            expand=a.expand,
            start=a.start,
            count=a.count,
        )
        return "variables", plain(found)
    return "variables", plain(await s.frame_locals(sid, a.frame, thread_id=a.thread, start=a.start, count=a.count))


async def cmd_eval(s: RemoteService, a: argparse.Namespace) -> tuple[str, Any]:
    """One expression answers its result; several answer one result (or error) each, in order."""
    given, rest = split_id(a.words, 1)
    sid = await policy.session_or_latest(s, given)
    if len(rest) == 1:
        found = await s.evaluate(sid, rest[0], frame_index=a.frame, thread_id=a.thread, format=a.format)
        return "evaluation", plain(found)
    results = []
    for expression in rest:
        try:
            found = await s.evaluate(sid, expression, frame_index=a.frame, thread_id=a.thread, format=a.format)
        except (ApiError, RelayError) as exc:
            results.append({"expression": expression, "error": {**exc.to_dict(), "hint": cli_hint(exc)}})
        else:
            results.append({"expression": expression, **plain(found)})
    return "evaluations", {"results": results}


async def cmd_output(s: RemoteService, a: argparse.Namespace) -> tuple[str, Any]:
    return "output", plain(await s.output(await policy.session_or_latest(s, a.id), a.since, a.limit, a.stream))


async def cmd_autopsy(s: RemoteService, a: argparse.Namespace) -> tuple[str, Any]:
    found = await s.autopsy(
        await policy.session_or_latest(s, a.id),
        max_frames=a.max_frames,
        include_variables_for_frames=a.frames_with_variables,
    )
    return "autopsy", plain(found)


async def cmd_redactions(s: RemoteService, a: argparse.Namespace) -> tuple[str, Any]:
    return "redactions", plain(await s.redactions(await policy.session_or_latest(s, a.id)))


async def cmd_snapshot(s: RemoteService, a: argparse.Namespace) -> tuple[str, Any]:
    sid = await policy.session_or_latest(s, a.id)
    if a.show:
        return "snapshot", plain(await s.snapshot(sid, a.show))
    given = {"frames": a.frames, "depth": a.depth, "items": a.items, "chars": a.chars, "max_bytes": a.max_bytes}
    bounds = msgspec.convert({k: v for k, v in given.items() if v is not None}, SnapshotBounds)
    return "snapshot", plain(await s.take_snapshot(sid, bounds))


async def cmd_snapshots(s: RemoteService, a: argparse.Namespace) -> tuple[str, Any]:
    return "snapshots", plain(await s.snapshots(await policy.session_or_latest(s, a.id)))


async def cmd_analyze(s: RemoteService, a: argparse.Namespace) -> tuple[str, Any]:
    sid = await policy.session_or_latest(s, a.id)
    return "analysis", plain(await s.analyze(sid, a.snapshot or None, take=a.take, interval=a.interval))


async def cmd_capture(s: RemoteService, a: argparse.Namespace) -> tuple[str, Any]:
    given, rest = split_id(a.words, 1)
    sid = await policy.session_or_latest(s, given)
    where = policy.parse_location(rest[0], os.getcwd())
    found = {
        "file": where.file,
        "line": where.line,
        "expressions": rest[1:] or None,
        "condition": a.condition,
        "hit_limit": a.hit_limit,
        "expires_in_seconds": a.expires,
    }
    request = msgspec.convert({k: v for k, v in found.items() if v is not None}, CaptureRequest)
    return "capture", plain(await s.add_capture(sid, request))


async def cmd_captures(s: RemoteService, a: argparse.Namespace) -> tuple[str, Any]:
    sid = await policy.session_or_latest(s, a.id)
    if a.rows:
        return "capture", plain(await s.capture_table(sid, a.rows, start=a.start, count=a.count))
    return "captures", plain(await s.captures(sid))


async def cmd_evidence(s: RemoteService, a: argparse.Namespace) -> tuple[str, Any]:
    return "evidence", plain(await s.evidence(a.evidence_id, offset=a.offset, limit=a.limit, grep=a.grep))


async def cmd_share(s: RemoteService, a: argparse.Namespace) -> tuple[str, Any]:
    given, names = split_id(a.words, 1)
    sid = await policy.session_or_latest(s, given)
    shared = await (s.unshare(sid, names=names) if a.withdraw else s.share(sid, names=names))
    return "share", {"session_id": sid, "shared_with": shared.shared_with}


async def cmd_audit(s: RemoteService, a: argparse.Namespace) -> tuple[str, Any]:
    page = await s.audit(session_id=a.session, who=a.who, offset=a.offset, limit=a.limit)
    return "audit", plain(page)


async def cmd_trace(s: RemoteService, a: argparse.Namespace) -> tuple[str, Any]:
    given, rest = split_id(a.words, 1)
    if a.remove:
        return "trace", plain(await s.remove_trace(await policy.session_or_latest(s, given), rest[0]))
    function = policy.traced_function(rest[0], os.getcwd())
    sid = await policy.session_for_trace(s, given, function)
    request = TraceRequest(function=function, keep=a.keep, callees=a.callees)
    return "trace", {"session_id": sid, **plain(await s.add_trace(sid, request))}


async def cmd_traces(s: RemoteService, a: argparse.Namespace) -> tuple[str, Any]:
    return "traces", plain(await s.traces(await policy.session_or_latest(s, a.id)))


async def cmd_calls(s: RemoteService, a: argparse.Namespace) -> tuple[str, Any]:
    given, rest = split_id(a.words, 0)
    sid = await policy.session_or_latest(s, given)
    found = await s.traced_calls(
        sid,
        function=rest[0] if rest else None,
        outcome=a.outcome,
        match=a.match,
        offset=a.offset,
        limit=a.limit,
    )
    return "calls", plain(found)


async def cmd_call(s: RemoteService, a: argparse.Namespace) -> tuple[str, Any]:
    given, rest = split_id(a.words, 1)
    return "call", plain(await s.traced_call(await policy.session_or_latest(s, given), rest[0]))
