"""The client commands: each one call (or a few) of the relay's API for a shell, answered as
``(kind, data)``: ``kind`` says how --pretty renders ``data``."""

from __future__ import annotations

import argparse
import json
import os
from typing import Any

import msgspec

from debugrelay.client import ApiError, RemoteService
from debugrelay.errors import InvalidRequest, RelayError
from debugrelay.models import CaptureRequest, HttpCall, SnapshotBounds
from debugrelay.service import policy
from debugrelay.service._operations import CURRENT

from ._client import cli_hint, cli_words, plain, split_id


async def cmd_sessions(s: RemoteService, a: argparse.Namespace) -> tuple[str, Any]:
    return "sessions", plain(await s.list_sessions())


async def cmd_create(s: RemoteService, a: argparse.Namespace) -> tuple[str, Any]:
    return "status", plain(await s.create_session(name=a.name))


async def cmd_delete(s: RemoteService, a: argparse.Namespace) -> tuple[str, Any]:
    return "plain", plain(await s.delete_session(a.id or CURRENT))


async def cmd_status(s: RemoteService, a: argparse.Namespace) -> tuple[str, Any]:
    return "status", plain(await s.status(a.id or CURRENT))


async def cmd_break(s: RemoteService, a: argparse.Namespace) -> tuple[str, Any]:
    given, rest = split_id(a.where, 0 if a.function else 1)
    if a.function:
        where: dict[str, Any] = {"function": a.function}
    elif len(rest) == 1:
        found = policy.parse_location(rest[0])  # a relative FILE from here, as the relay would take it
        where = {"file": found.file, "line": found.line}
    else:
        raise InvalidRequest(
            "give one FILE:LINE (or --function NAME)", hint="debugrelay break [ID] app/main.py:42 [--condition 'i > 3']"
        )
    asked = {"condition": a.condition, "hit_condition": a.hit, "log_message": a.log, "session_id": given}
    return "breakpoints", await s.act("debug_set_breakpoint", {**where, **{k: v for k, v in asked.items() if v}})


async def cmd_breakpoints(s: RemoteService, a: argparse.Namespace) -> tuple[str, Any]:
    return "breakpoints", plain(await s.breakpoints(a.id or CURRENT))


async def cmd_unbreak(s: RemoteService, a: argparse.Namespace) -> tuple[str, Any]:
    given, rest = split_id(a.ids, 0 if a.all else 1)
    sid = given or CURRENT
    if a.all:
        return "plain", plain(await s.clear_breakpoints(sid))
    if not rest:
        raise InvalidRequest("give the breakpoints to remove (or --all)", hint="debugrelay unbreak [ID] bp_1 bp_2")
    return "plain", [plain(await s.remove_breakpoint(sid, bp)) for bp in rest]


async def cmd_catch(s: RemoteService, a: argparse.Namespace) -> tuple[str, Any]:
    return "plain", plain(await s.set_exception_breakpoints((a.id or CURRENT), a.filters, a.types))


def _event_args(a: argparse.Namespace, **more: Any) -> dict[str, Any]:
    """What an action answering an event takes from a command's flags (those given)."""
    asked = {"session_id": a.id, "thread_id": getattr(a, "thread", None), "timeout": a.timeout, "locals": a.locals}
    return {k: v for k, v in {**asked, **more}.items() if v is not None}


async def cmd_continue(s: RemoteService, a: argparse.Namespace) -> tuple[str, Any]:
    if a.all:  # every paused process of the program: the relay's resume says it
        answer = await s.resume(a.id or CURRENT, "continue", a.thread, a.timeout, a.locals, every=True)
        return "status", cli_words(plain(answer))
    return "status", await s.act("debug_continue", _event_args(a))


async def cmd_step(s: RemoteService, a: argparse.Namespace) -> tuple[str, Any]:
    return "status", await s.act(f"debug_step_{a.kind}", _event_args(a))


async def cmd_pause(s: RemoteService, a: argparse.Namespace) -> tuple[str, Any]:
    asked = {"session_id": a.id, "locals": a.locals}
    return "status", await s.act("debug_pause", {k: v for k, v in asked.items() if v is not None})


async def cmd_wait(s: RemoteService, a: argparse.Namespace) -> tuple[str, Any]:
    asked = {k: v for k, v in _event_args(a).items() if k != "thread_id"}
    return "status", await s.act("breakpoint_wait", {**asked, "include_autopsy": a.autopsy})


async def cmd_terminate(s: RemoteService, a: argparse.Namespace) -> tuple[str, Any]:
    return "status", plain(await s.terminate(a.id or CURRENT))


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
    sid = given or CURRENT
    return "status", cli_words(plain(await s.request(sid, call)))


async def cmd_stack(s: RemoteService, a: argparse.Namespace) -> tuple[str, Any]:
    sid = a.id or CURRENT
    return "stack", plain(await s.stacktrace(sid, a.thread, a.start, a.max, library=a.library))


async def cmd_threads(s: RemoteService, a: argparse.Namespace) -> tuple[str, Any]:
    return "threads", plain(await s.threads(a.id or CURRENT))


async def cmd_processes(s: RemoteService, a: argparse.Namespace) -> tuple[str, Any]:
    sid = a.id or CURRENT
    if a.show is not None:
        return "status", plain(await s.show_process(sid, a.show))
    return "processes", plain(await s.processes(sid))


async def cmd_vars(s: RemoteService, a: argparse.Namespace) -> tuple[str, Any]:
    sid = a.id or CURRENT
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
    sid = given or CURRENT
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
    return "output", plain(await s.output((a.id or CURRENT), a.since, a.limit, a.stream))


async def cmd_autopsy(s: RemoteService, a: argparse.Namespace) -> tuple[str, Any]:
    found = await s.autopsy(
        (a.id or CURRENT),
        max_frames=a.max_frames,
        include_variables_for_frames=a.frames_with_variables,
    )
    return "autopsy", plain(found)


async def cmd_redactions(s: RemoteService, a: argparse.Namespace) -> tuple[str, Any]:
    return "redactions", plain(await s.redactions(a.id or CURRENT))


async def cmd_snapshot(s: RemoteService, a: argparse.Namespace) -> tuple[str, Any]:
    sid = a.id or CURRENT
    if a.show:
        return "snapshot", plain(await s.snapshot(sid, a.show))
    given = {"frames": a.frames, "depth": a.depth, "items": a.items, "chars": a.chars, "max_bytes": a.max_bytes}
    bounds = msgspec.convert({k: v for k, v in given.items() if v is not None}, SnapshotBounds)
    return "snapshot", plain(await s.take_snapshot(sid, bounds))


async def cmd_snapshots(s: RemoteService, a: argparse.Namespace) -> tuple[str, Any]:
    return "snapshots", plain(await s.snapshots(a.id or CURRENT))


async def cmd_analyze(s: RemoteService, a: argparse.Namespace) -> tuple[str, Any]:
    sid = a.id or CURRENT
    return "analysis", plain(await s.analyze(sid, a.snapshot or None, take=a.take, interval=a.interval))


async def cmd_capture(s: RemoteService, a: argparse.Namespace) -> tuple[str, Any]:
    given, rest = split_id(a.words, 1)
    sid = given or CURRENT
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
    sid = a.id or CURRENT
    if a.rows:
        return "capture", plain(await s.capture_table(sid, a.rows, start=a.start, count=a.count))
    return "captures", plain(await s.captures(sid))


async def cmd_evidence(s: RemoteService, a: argparse.Namespace) -> tuple[str, Any]:
    return "evidence", plain(await s.evidence(a.evidence_id, offset=a.offset, limit=a.limit, grep=a.grep))


async def cmd_share(s: RemoteService, a: argparse.Namespace) -> tuple[str, Any]:
    given, names = split_id(a.words, 1)
    sid = given or CURRENT
    shared = await (s.unshare(sid, names=names) if a.withdraw else s.share(sid, names=names))
    return "share", {"session_id": shared.session_id, "shared_with": shared.shared_with}


async def cmd_audit(s: RemoteService, a: argparse.Namespace) -> tuple[str, Any]:
    page = await s.audit(session_id=a.session, who=a.who, offset=a.offset, limit=a.limit)
    return "audit", plain(page)


async def cmd_trace(s: RemoteService, a: argparse.Namespace) -> tuple[str, Any]:
    given, rest = split_id(a.words, 1)
    if a.remove:
        return "trace", plain(await s.remove_trace(given or CURRENT, rest[0]))
    asked = {"function": rest[0], "keep": a.keep, "callees": a.callees, "reprs": a.reprs, "session_id": given}
    return "trace", await s.act("debug_trace", {k: v for k, v in asked.items() if v is not None})


async def cmd_traces(s: RemoteService, a: argparse.Namespace) -> tuple[str, Any]:
    return "traces", plain(await s.traces(a.id or CURRENT))


async def cmd_calls(s: RemoteService, a: argparse.Namespace) -> tuple[str, Any]:
    given, rest = split_id(a.words, 0)
    asked = {"calls": rest[0] if rest else "*", "outcome": a.outcome, "match": a.match, "session_id": given}
    asked.update(offset=a.offset, limit=a.limit)
    return "calls", await s.act("debug_trace", {k: v for k, v in asked.items() if v is not None})


async def cmd_call(s: RemoteService, a: argparse.Namespace) -> tuple[str, Any]:
    given, rest = split_id(a.words, 1)
    asked = {"call_id": rest[0], "session_id": given}
    return "call", await s.act("debug_trace", {k: v for k, v in asked.items() if v is not None})


async def cmd_origin(s: RemoteService, a: argparse.Namespace) -> tuple[str, Any]:
    given, rest = split_id(a.words, 1)
    asked = {"origin": rest[0], "session_id": given}
    return "origin", await s.act("debug_trace", {k: v for k, v in asked.items() if v is not None})


async def cmd_act(s: RemoteService, a: argparse.Namespace) -> tuple[str, Any]:
    """``act NAME [KEY=VALUE...]``: any agent action (an MCP tool by name) in one request; a value is read
    as JSON (``line=12``, ``watch=true``, ``expressions='["a","b"]'``), else as text."""
    arguments: dict[str, Any] = {}
    for pair in a.pairs:
        key, sep, raw = pair.partition("=")
        if not sep or not key:
            raise InvalidRequest(
                f"'{pair}' is not KEY=VALUE", hint="e.g. debugrelay act debug_run_to file=app.py line=12"
            )
        try:
            arguments[key] = json.loads(raw)
        except ValueError:
            arguments[key] = raw
    answer = await s.act(a.action, arguments)
    return ("status" if "status" in answer else "plain"), answer
