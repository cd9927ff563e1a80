"""The conveniences agents get from MCP and the CLI alike: the latest session, launch reuse, FILE:LINE."""

from __future__ import annotations

import os
from typing import Any

from debugrelay.errors import InvalidRequest, SessionNotFound
from debugrelay.models import BreakpointView, SessionSummary
from debugrelay.sessions import BreakpointRequest

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
    """``path`` made absolute against ``cwd`` (itself made absolute against ours)."""
    return os.path.abspath(os.path.join(os.path.abspath(cwd) if cwd else os.getcwd(), path))


def launch_folder(script: str | None, cwd: str | None) -> str | None:
    """Where a launch's relative paths start: its ``cwd``, else the script's folder (where the program
    runs when no cwd is given); None for neither (a module run from here)."""
    if cwd:
        return os.path.abspath(cwd)
    return os.path.dirname(absolute(script)) if script else None


async def session_folder(service: DebugService, session_id: str) -> str | None:
    """Where a relative breakpoint file of a session starts: its launch's folder (see :func:`launch_folder`)."""
    spec = (await service.session(session_id)).launch or {}
    return launch_folder(spec.get("script"), spec.get("cwd"))


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
    sid, _ = await launch_target(service, given, script, module)
    return sid


async def launch_target(
    service: DebugService, given: str | None, script: str | None, module: str | None
) -> tuple[str, bool]:
    """:func:`launch_session`, and whether the session ran a program before (its breakpoints, exception
    settings and watches carry over: an answer says so)."""
    if given:
        return given, (await service.status(given)).status != "created"
    newest = await latest(service)
    if newest is not None:
        if newest.status == "created":
            return newest.session_id, False
        spec = (await service.session(newest.session_id)).launch or {}
        if (module and spec.get("module") == module) or (script and spec.get("script") == script):
            if newest.status in RUNNING:
                await service.terminate(newest.session_id)
            return newest.session_id, True
    return (await service.create_session()).session_id, False


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
