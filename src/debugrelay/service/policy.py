"""The conveniences agents get from MCP and the CLI alike: the latest session, launch reuse, FILE:LINE."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

import msgspec

from debugrelay.errors import InvalidRequest, SessionNotFound
from debugrelay.models import (
    BreakpointRequest,
    BreakpointView,
    LaunchRequest,
    LaunchView,
    SessionSummary,
    Status,
    StopOnException,
)

from ._asking import asking_folder
from ._base import DebugService

RUNNING = ("launching", "running", "paused")


def parse_location(spec: str, cwd: str | None = None) -> BreakpointRequest:
    """``path/to/file.py:42`` as a line breakpoint; a relative path is taken from ``cwd`` (default: ours)."""
    path, sep, line = spec.strip().rpartition(":")
    if not sep or not path or not line.strip().isdigit():
        raise InvalidRequest(
            f"'{spec}' is not FILE:LINE", details={"breakpoint": spec}, hint="Write breakpoints as 'app/main.py:42'."
        )
    return BreakpointRequest(file=absolute(path, cwd), line=int(line))


def absolute(path: str, cwd: str | None = None) -> str:
    """``path`` made absolute against ``cwd``, itself taken from the asker's folder (``_asking``; without
    one, ours)."""
    base = asking_folder() or os.getcwd()
    return os.path.abspath(os.path.join(base, cwd or "", path))


async def relative_base(service: DebugService, session_id: str) -> str | None:
    """Where an action's relative path starts: the folder the agent asks from, else the session's launch
    folder (see :func:`launch_folder`). One rule for the CLI, MCP and HTTP."""
    return asking_folder() or await session_folder(service, session_id)


async def session_for_trace(service: DebugService, given: str | None, function: str) -> str:
    """Where a trace goes: the given session, else the newest one when it is not launched yet, its program
    still runs (the agent's current session, whatever file the function is in), or it ran the traced
    file (a later launch of that file goes there too, see :func:`launch_target`), else a new one."""
    if given:
        return given
    newest = await latest(service)
    if newest is not None:
        if newest.status == "created" or newest.status in RUNNING:
            return newest.session_id
        spec = (await service.session(newest.session_id)).launch or LaunchView()
        where = function.rpartition(":")[0]
        if spec.script and where and absolute(spec.script) == absolute(where):
            return newest.session_id
    return (await service.create_session()).session_id


def traced_function(function: str, cwd: str | None = None) -> str:
    """A trace's ``file:name`` with its file made absolute against ``cwd``; a module's or a bare name as given."""
    where, colon, name = function.rpartition(":")
    if colon and (where.endswith(".py") or "/" in where) and not os.path.isabs(where):
        return f"{absolute(where, cwd)}:{name}"
    return function


def launch_folder(script: str | None, cwd: str | None) -> str | None:
    """Where a launch's relative paths start: its ``cwd``, else the script's folder (where the program
    runs when no cwd is given); None for neither (a module run from here)."""
    if cwd:
        return absolute(cwd)
    return os.path.dirname(absolute(script)) if script else None


async def session_folder(service: DebugService, session_id: str) -> str | None:
    """Where a relative breakpoint file of a session starts: its launch's folder (see :func:`launch_folder`)."""
    spec = (await service.session(session_id)).launch or LaunchView()
    return launch_folder(spec.script, spec.cwd)


async def latest(service: DebugService) -> SessionSummary | None:
    found = (await service.list_sessions()).sessions
    return found[-1] if found else None


async def session_or_latest(service: DebugService, given: str | None) -> str:
    """The given session, else the most recent one."""
    if given:
        return given
    newest = await latest(service)
    if newest is None:
        raise SessionNotFound("there is no debug session yet", hint="")
    return newest.session_id


async def session_or_new(service: DebugService, given: str | None) -> str:
    """The given session, else the most recent one, else a new one (to hold breakpoints before a launch)."""
    if given:
        return given
    newest = await latest(service)
    return newest.session_id if newest else (await service.create_session()).session_id


async def launch_session(service: DebugService, given: str | None, script: str | None, module: str | None) -> str:
    """Where a launch goes: the given session; else the most recent one when it waits for a launch or ran
    the same program (a run still going is ended: launching again means restart); else a new session.

    ``script`` is compared as an absolute path.
    """
    return (await launch_target(service, given, script, module)).session_id


@dataclass
class LaunchTarget:
    """Where a launch goes (see :func:`launch_session`) and what that did to the sessions already there."""

    session_id: str
    reused: bool = False  # the session ran a program before: its breakpoints and settings carry over
    # the latest session, paused in another program: its program was ended (a launch of another program,
    # often a fixed copy, replaces it; the session stays and can be launched again)
    ended: dict[str, Any] | None = None


async def launch_target(
    service: DebugService, given: str | None, script: str | None, module: str | None
) -> LaunchTarget:
    """:func:`launch_session`, whether the session ran a program before (its breakpoints, exception
    settings and watches carry over: an answer says so), and the paused session whose program it ended."""
    if given:
        return LaunchTarget(given, reused=(await service.status(given)).status != "created")
    newest = await latest(service)
    ended = None
    if newest is not None:
        if newest.status == "created":
            return LaunchTarget(newest.session_id)
        launched = (await service.session(newest.session_id)).launch
        spec = launched or LaunchView()
        if (module and spec.module == module) or (script and spec.script == script):
            return LaunchTarget(newest.session_id, reused=True)  # a run still going is ended by the launch
        if newest.status == "paused" and launched is not None:  # a launched program, never an attached one
            await service.terminate(newest.session_id)
            ended = {
                "session_id": newest.session_id,
                "program": spec.script or spec.module,
                "was": "paused",
                "now": "terminated",
            }
    return LaunchTarget((await service.create_session()).session_id, ended=ended)


@dataclass
class PreparedLaunch:
    """A session readied for a launch: breakpoints and exception modes set, and what its answer says
    besides the program's first event."""

    session_id: str
    notes: dict[str, Any] = field(default_factory=dict)
    checked: list[BreakpointView] = field(default_factory=list)  # the launch's breakpoints, as set
    # the launch's stop_on_exception: as given, else None where the session's own exception breakpoints
    # carry over, else "uncaught" (these interfaces' default)
    stop_on_exception: StopOnException | None = "uncaught"


async def prepare_launch(
    service: DebugService,
    given: str | None,
    *,
    script: str | None,
    module: str | None,
    breakpoints: list[str],
    folder: str | None,
    stop_on_exception: StopOnException | None,
) -> PreparedLaunch:
    """The session a launch goes to (:func:`launch_target`), with the launch's ``FILE:LINE`` breakpoints
    (relative to ``folder``) set and checked now, as a breakpoint set on its own is, and the
    ``stop_on_exception`` its run gets: as given (for this run only), else the session's own exception
    breakpoints (the answer says they carry over), else "uncaught"."""
    target = await launch_target(service, given, script, module)
    sid = target.session_id
    notes: dict[str, Any] = {}
    if target.reused:
        notes["reused"] = True
        carried = (await service.breakpoints(sid)).breakpoints
        if carried:
            notes["carried_breakpoints"] = [brief_breakpoint(b) for b in carried]
    if target.ended is not None:
        notes["ended_session"] = target.ended
    checked = (
        await service.add_breakpoints(sid, [parse_location(b, folder) for b in breakpoints]) if breakpoints else []
    )
    if stop_on_exception is not None:
        return PreparedLaunch(sid, notes, checked, stop_on_exception)
    setting = await service.exception_breakpoints(sid)
    if not setting.carries_over:
        return PreparedLaunch(sid, notes, checked)
    notes["carried_exception_breakpoints"] = {"filters": setting.filters, "exception_types": setting.exception_types}
    return PreparedLaunch(sid, notes, checked, None)


# what only a launch's answer says
LAUNCH_WORDS = ("stops_on", "ready", "warning", "python", "interpreter", "published")


async def launch_and_wait(
    service: DebugService, prepared: PreparedLaunch, spec: LaunchRequest, timeout: float, *, details: bool
) -> tuple[Status, dict[str, Any]]:
    """The launch-and-wait workflow every interface offers: ``spec`` launched in the prepared session, then
    its first event within ``timeout`` s (a service, ``spec.ready``, has answered once it listens: no
    wait), with what the launch's answer said; and the launch's notes (:func:`launch_notes`)."""
    sid = prepared.session_id
    launched = await service.launch(sid, spec)
    status = await service.wait(sid, 0.0 if spec.ready is not None else timeout, False, details=details)
    said = {name: getattr(launched, name) for name in LAUNCH_WORDS if getattr(launched, name)}
    status = msgspec.structs.replace(status, **{k: v for k, v in said.items() if not getattr(status, k)})
    return status, await launch_notes(service, prepared, launched)


async def launch_notes(service: DebugService, prepared: PreparedLaunch, launched: Status) -> dict[str, Any]:
    """What a launch answer says besides the program's first event: the session reused, its program
    restarted or another session's ended, and the breakpoints that cannot stop the program, each with
    why and the line it could stop at instead. ``launched``: the launch's own answer."""
    notes = dict(prepared.notes)
    if launched.restarted:
        notes["restarted"] = launched.restarted
    when_set = {b.breakpoint_id: b for b in prepared.checked}
    unset = await unset_breakpoints(service, prepared.session_id)
    if unset:
        notes["unverified_breakpoints"] = [_unverified(b, when_set.get(b.breakpoint_id)) for b in unset]
    return notes


def _unverified(view: BreakpointView, when_set: BreakpointView | None) -> dict[str, Any]:
    """A breakpoint that cannot stop: why, and the line it could stop at (as found when it was set, if
    the program's end left no more)."""
    out = brief_breakpoint(view)
    message = view.message or (when_set.message if when_set else None)
    suggestion = view.suggestion or (when_set.suggestion if when_set else None)
    if message:
        out["message"] = message
    if suggestion:
        out["suggestion"] = msgspec.to_builtins(suggestion)  # the answer is JSON for every interface
    return out


async def unset_breakpoints(service: DebugService, session_id: str) -> list[BreakpointView]:
    """Line breakpoints of a session that cannot stop the program as it runs now: a file that does not
    exist, a line without code, a file that does not compile. A launch answer lists them: otherwise the
    program runs to its end past a breakpoint that was never set, and nothing says why."""
    listed = (await service.breakpoints(session_id)).breakpoints
    return [b for b in listed if b.kind == "line" and not b.verified]


def brief_breakpoint(view: BreakpointView) -> dict[str, Any]:
    """A breakpoint in one short object: id, where, and what makes it conditional."""
    out: dict[str, Any] = {"breakpoint_id": view.breakpoint_id}
    out["at"] = f"{view.file}:{view.line}" if view.kind == "line" else view.function
    extra = {"condition": view.condition, "hit_condition": view.hit_condition, "log_message": view.log_message}
    out.update({k: v for k, v in extra.items() if v})
    return out
