"""The client commands: each one call (or a few) of the relay's API for a shell, answered as
``(kind, data)``: ``kind`` says how --pretty renders ``data``."""

from __future__ import annotations

import argparse
import os
from typing import Any

from debugrelay.client import ApiError, RemoteService
from debugrelay.errors import InvalidRequest, RelayError
from debugrelay.models import BreakpointRequest
from debugrelay.service import policy

from ._client import cli_hint, cli_words, plain, split_id


async def cmd_sessions(s: RemoteService, a: argparse.Namespace) -> tuple[str, Any]:
    return "sessions", await s.client.list_sessions()


async def cmd_create(s: RemoteService, a: argparse.Namespace) -> tuple[str, Any]:
    return "status", await s.client.create_session(name=a.name)


async def cmd_delete(s: RemoteService, a: argparse.Namespace) -> tuple[str, Any]:
    return "plain", await s.client.delete_session(await policy.session_or_latest(s, a.id))


async def cmd_status(s: RemoteService, a: argparse.Namespace) -> tuple[str, Any]:
    return "status", await s.client.status(await policy.session_or_latest(s, a.id))


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
    return "breakpoints", await s.client.breakpoints(await policy.session_or_latest(s, a.id))


async def cmd_unbreak(s: RemoteService, a: argparse.Namespace) -> tuple[str, Any]:
    given, rest = split_id(a.ids, 1)
    sid = await policy.session_or_latest(s, given)
    return "plain", [await s.client.remove_breakpoint(sid, bp) for bp in rest]


async def cmd_catch(s: RemoteService, a: argparse.Namespace) -> tuple[str, Any]:
    return "plain", await s.client.set_exception_breakpoints(await policy.session_or_new(s, a.id), a.filters, a.types)


async def cmd_continue(s: RemoteService, a: argparse.Namespace) -> tuple[str, Any]:
    sid = await policy.session_or_latest(s, a.id)
    answer = await s.client.resume(sid, "continue", thread_id=a.thread, timeout=a.timeout, locals=a.locals, every=a.all)
    return "status", cli_words(answer)


async def cmd_step(s: RemoteService, a: argparse.Namespace) -> tuple[str, Any]:
    sid = await policy.session_or_latest(s, a.id)
    answer = await s.client.resume(sid, f"step-{a.kind}", thread_id=a.thread, timeout=a.timeout, locals=a.locals)
    return "status", cli_words(answer)


async def cmd_pause(s: RemoteService, a: argparse.Namespace) -> tuple[str, Any]:
    sid = await policy.session_or_latest(s, a.id)
    paused = await s.client.pause(sid)
    if not a.locals or paused.get("status") != "paused":
        return "status", paused
    # the stop as continue and step answer it: its source line and locals
    return "status", await s.client.wait(sid, 0, locals=True)


async def cmd_wait(s: RemoteService, a: argparse.Namespace) -> tuple[str, Any]:
    sid = await policy.session_or_latest(s, a.id)
    return "status", await s.client.wait(sid, a.timeout, a.autopsy, locals=a.locals)


async def cmd_terminate(s: RemoteService, a: argparse.Namespace) -> tuple[str, Any]:
    return "status", await s.client.terminate(await policy.session_or_latest(s, a.id))


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
    call: dict[str, Any] = {"method": method, "path": path, "headers": headers, "timeout": a.timeout}
    if a.port is not None:
        call["port"] = a.port
    if a.data is not None:
        call["body"] = a.data
    sid = await policy.session_or_latest(s, given)
    return "status", cli_words(await s.client.request(sid, call))


async def cmd_stack(s: RemoteService, a: argparse.Namespace) -> tuple[str, Any]:
    sid = await policy.session_or_latest(s, a.id)
    return "stack", await s.client.stacktrace(sid, a.thread, a.start, a.max, library=a.library)


async def cmd_threads(s: RemoteService, a: argparse.Namespace) -> tuple[str, Any]:
    return "threads", await s.client.threads(await policy.session_or_latest(s, a.id))


async def cmd_processes(s: RemoteService, a: argparse.Namespace) -> tuple[str, Any]:
    sid = await policy.session_or_latest(s, a.id)
    if a.show is not None:
        return "status", await s.client.show_process(sid, a.show)
    return "processes", await s.client.processes(sid)


async def cmd_vars(s: RemoteService, a: argparse.Namespace) -> tuple[str, Any]:
    sid = await policy.session_or_latest(s, a.id)
    if a.ref is not None:
        return "variables", await s.client.variables(sid, a.ref, a.start, a.count)
    if a.expand or a.scope:
        return "variables", await s.client.frame_variables_by_scope(
            sid,
            scope=a.scope or "all",
            frame_index=a.frame,
            thread_id=a.thread,
            expand=a.expand,
            start=a.start,
            count=a.count,
        )
    return "variables", await s.client.frame_variables(sid, a.frame, a.thread, a.start, a.count)


async def cmd_eval(s: RemoteService, a: argparse.Namespace) -> tuple[str, Any]:
    """One expression answers its result; several answer one result (or error) each, in order."""
    given, rest = split_id(a.words, 1)
    sid = await policy.session_or_latest(s, given)
    if len(rest) == 1:
        return "evaluation", await s.client.evaluate(
            sid, rest[0], frame_index=a.frame, thread_id=a.thread, format=a.format
        )
    results = []
    for expression in rest:
        try:
            found = await s.client.evaluate(sid, expression, frame_index=a.frame, thread_id=a.thread, format=a.format)
        except (ApiError, RelayError) as exc:
            results.append({"expression": expression, "error": {**exc.to_dict(), "hint": cli_hint(exc)}})
        else:
            results.append({"expression": expression, **found})
    return "evaluations", {"results": results}


async def cmd_output(s: RemoteService, a: argparse.Namespace) -> tuple[str, Any]:
    return "output", await s.client.output(await policy.session_or_latest(s, a.id), a.since, a.limit, a.stream)


async def cmd_autopsy(s: RemoteService, a: argparse.Namespace) -> tuple[str, Any]:
    return "autopsy", await s.client.autopsy(
        await policy.session_or_latest(s, a.id),
        max_frames=a.max_frames,
        include_variables_for_frames=a.frames_with_variables,
    )


async def cmd_redactions(s: RemoteService, a: argparse.Namespace) -> tuple[str, Any]:
    return "redactions", await s.client.redactions(await policy.session_or_latest(s, a.id))


async def cmd_snapshot(s: RemoteService, a: argparse.Namespace) -> tuple[str, Any]:
    sid = await policy.session_or_latest(s, a.id)
    if a.show:
        return "snapshot", await s.client.snapshot(sid, a.show)
    bounds = {"frames": a.frames, "depth": a.depth, "items": a.items, "chars": a.chars, "max_bytes": a.max_bytes}
    return "snapshot", await s.client.take_snapshot(sid, **bounds)


async def cmd_snapshots(s: RemoteService, a: argparse.Namespace) -> tuple[str, Any]:
    return "snapshots", await s.client.snapshots(await policy.session_or_latest(s, a.id))


async def cmd_analyze(s: RemoteService, a: argparse.Namespace) -> tuple[str, Any]:
    sid = await policy.session_or_latest(s, a.id)
    return "analysis", await s.client.analyze(sid, snapshot_ids=a.snapshot or None, take=a.take, interval=a.interval)


async def cmd_capture(s: RemoteService, a: argparse.Namespace) -> tuple[str, Any]:
    given, rest = split_id(a.words, 1)
    sid = await policy.session_or_latest(s, given)
    where = policy.parse_location(rest[0], os.getcwd())
    body = {
        "file": where.file,
        "line": where.line,
        "expressions": rest[1:] or None,
        "condition": a.condition,
        "hit_limit": a.hit_limit,
        "expires_in_seconds": a.expires,
    }
    return "capture", await s.client.add_capture(sid, **body)


async def cmd_captures(s: RemoteService, a: argparse.Namespace) -> tuple[str, Any]:
    sid = await policy.session_or_latest(s, a.id)
    if a.rows:
        return "capture", await s.client.capture_table(sid, a.rows, start=a.start, count=a.count)
    return "captures", await s.client.captures(sid)


async def cmd_evidence(s: RemoteService, a: argparse.Namespace) -> tuple[str, Any]:
    return "evidence", await s.client.evidence(a.evidence_id, offset=a.offset, limit=a.limit, grep=a.grep)
