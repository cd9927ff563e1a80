"""Line, function and exception breakpoints, and named breakpoint profiles."""

from __future__ import annotations

import re
from typing import Any

import msgspec
from litestar import Controller, Request, delete, get, patch, post

from debugrelay.errors import InvalidRequest, NotFound
from debugrelay.models import BreakpointRecord, ExceptionFilters, Input
from debugrelay.sessions import BreakpointUpdate, SessionManager, breakpoints

from ._body import any_body

EXCEPTION_FILTERS = breakpoints.EXCEPTION_FILTERS
_PROFILE_NAME = re.compile(r"[\w.@-]{1,100}")


class ExceptionBreakpointsBody(Input):
    filters: list[str] = msgspec.field(default_factory=list)
    exception_types: list[str] = msgspec.field(default_factory=list)


class ProfileBody(Input):
    name: str
    session_id: str | None = None
    breakpoints: list[dict[str, Any]] | None = None


def view(bp: BreakpointRecord, ended: bool = False) -> dict[str, Any]:
    return breakpoints.view(bp, ended)


def _ended(status: str) -> bool:
    return status in ("terminated", "failed")


def _check_profile_name(name: str) -> None:
    if not _PROFILE_NAME.fullmatch(name):
        raise InvalidRequest(
            f"'{name}' is not a profile name",
            details={"name": name},
            hint="Use 1-100 letters, digits, '_', '-', '.' or '@'.",
        )


class BreakpointController(Controller):
    path = "/sessions/{session_id:str}"
    tags = ["breakpoints"]  # noqa: RUF012

    @post("/breakpoints", status_code=200, summary="Set one breakpoint, or several with a list (all or none)")
    async def add(self, manager: SessionManager, session_id: str, request: Request[Any, Any, Any]) -> Any:
        session = manager.get(session_id)
        reqs, many = breakpoints.parse_requests(await any_body(request))
        async with session.lock:
            created = await breakpoints.add(session, reqs)
        views = [view(b) for b in created]
        return {"breakpoints": views} if many else views[0]

    @get("/breakpoints", summary="All breakpoints with verification, hit counts and never-hit marks")
    async def list_(self, manager: SessionManager, session_id: str) -> dict[str, Any]:
        session = manager.get(session_id)
        listed = await breakpoints.listing(session)
        ended = _ended(session.status)
        return {"breakpoints": [view(b, ended) for b in listed]}

    @get("/breakpoints/{bp_id:str}", summary="One breakpoint")
    async def get_one(self, manager: SessionManager, session_id: str, bp_id: str) -> dict[str, Any]:
        session = manager.get(session_id)
        await breakpoints.listing(session)
        return view(breakpoints.find(session.record, bp_id), _ended(session.status))

    @patch("/breakpoints/{bp_id:str}", summary="Change condition, hit condition, log message, enabled, line")
    async def update(
        self, manager: SessionManager, session_id: str, bp_id: str, data: BreakpointUpdate
    ) -> dict[str, Any]:
        session = manager.get(session_id)
        async with session.lock:
            bp = await breakpoints.update(session, bp_id, data)
        return view(bp)

    @delete("/breakpoints/{bp_id:str}", status_code=200, summary="Remove a breakpoint")
    async def remove(self, manager: SessionManager, session_id: str, bp_id: str) -> dict[str, Any]:
        session = manager.get(session_id)
        async with session.lock:
            await breakpoints.remove(session, bp_id)
        return {"deleted": True, "breakpoint_id": bp_id}

    @post(
        "/exception-breakpoints",
        status_code=200,
        summary="Pause on raised/uncaught exceptions, optionally only of given types (and subclasses)",
    )
    async def exceptions(
        self, manager: SessionManager, session_id: str, data: ExceptionBreakpointsBody
    ) -> dict[str, Any]:
        session = manager.get(session_id)
        wanted = await breakpoints.set_exception_filters(session, data.filters, data.exception_types)
        return {"filters": wanted.filters, "exception_types": wanted.exception_types}

    @get("/exception-breakpoints", summary="Exception breakpoint filters in force")
    async def get_exceptions(self, manager: SessionManager, session_id: str) -> dict[str, Any]:
        filters = manager.get(session_id).record.exception_filters or ExceptionFilters()
        return {"filters": filters.filters, "exception_types": filters.exception_types}

    @post("/breakpoint-profiles/{name:str}/apply", status_code=200, summary="Set a profile's breakpoints")
    async def apply_profile(self, manager: SessionManager, session_id: str, name: str) -> dict[str, Any]:
        session = manager.get(session_id)
        saved = await manager.store.get_profile(name)
        if saved is None:
            raise _no_profile(name)
        async with session.lock:
            created, skipped = await breakpoints.apply_saved(session, list(saved))
        out: dict[str, Any] = {"profile": name, "breakpoints": [view(b) for b in created]}
        if skipped:
            out["skipped"] = skipped
            out["warning"] = f"{len(skipped)} saved breakpoint(s) could not be set and were skipped"
        return out


class ProfileController(Controller):
    path = "/breakpoint-profiles"
    tags = ["breakpoints"]  # noqa: RUF012

    @get("/", summary="Named breakpoint sets")
    async def list_profiles(self, manager: SessionManager) -> dict[str, Any]:
        profiles = await manager.store.list_profiles()
        return {
            "profiles": [
                {"name": n, "breakpoints": [_profile_view(b) for b in bps]} for n, bps in sorted(profiles.items())
            ]
        }

    @get("/{name:str}", summary="One named breakpoint set")
    async def get_profile(self, manager: SessionManager, name: str) -> dict[str, Any]:
        saved = await manager.store.get_profile(name)
        if saved is None:
            raise _no_profile(name)
        return {"name": name, "breakpoints": [_profile_view(b) for b in saved]}

    @post("/", status_code=201, summary="Save a named breakpoint set (from a session, or given)")
    async def save_profile(self, manager: SessionManager, data: ProfileBody) -> dict[str, Any]:
        _check_profile_name(data.name)
        if (data.session_id is None) == (data.breakpoints is None):
            raise InvalidRequest("give either 'session_id' or 'breakpoints'", details={"name": data.name})
        if data.session_id:
            source = [b for b in manager.get(data.session_id).record.breakpoints if not b.internal]
        else:
            reqs, _ = breakpoints.parse_requests(data.breakpoints)
            source = [breakpoints.record_from(r) for r in reqs]
            for bp in source:
                breakpoints.verify_locally(bp)  # a line past the end is refused now, not at apply time
        saved = [breakpoints.profile_entry(b, i) for i, b in enumerate(source, 1)]
        replaced = await manager.store.get_profile(data.name) is not None
        await manager.store.save_profile(data.name, saved)
        return {"name": data.name, "breakpoints": len(saved), "replaced": replaced}


def _no_profile(name: str) -> NotFound:
    return NotFound(
        f"no breakpoint profile '{name}' (or it could not be read)",
        details={"name": name},
        hint="List profiles with GET /breakpoint-profiles.",
    )


def _profile_view(bp: BreakpointRecord) -> dict[str, Any]:
    data: dict[str, Any] = msgspec.to_builtins(bp)
    for key in ("id", "verified", "hit_count", "dap_id", "internal", "pending", "message", "suggestion"):
        data.pop(key, None)
    return data
