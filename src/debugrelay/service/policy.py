"""The conveniences agents get from MCP and the CLI alike: the latest session, launch reuse, FILE:LINE."""

from __future__ import annotations

import os

from debugrelay.errors import InvalidRequest, SessionNotFound
from debugrelay.models import SessionSummary
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
    if given:
        return given
    newest = await latest(service)
    if newest is not None:
        if newest.status == "created":
            return newest.session_id
        spec = (await service.session(newest.session_id)).launch or {}
        if (module and spec.get("module") == module) or (script and spec.get("script") == script):
            if newest.status in RUNNING:
                await service.terminate(newest.session_id)
            return newest.session_id
    return (await service.create_session()).session_id
