"""Line, function and exception breakpoints, and named breakpoint profiles."""

from __future__ import annotations

from typing import Any

import msgspec
from litestar import Controller, Request, delete, get, patch, post

from debugrelay.errors import InvalidRequest, NotFound
from debugrelay.models import BreakpointRecord, ExceptionFilters, Input
from debugrelay.sessions import BreakpointUpdate, SessionManager, breakpoints

from ._body import any_body

EXCEPTION_FILTERS = ("raised", "uncaught", "userUnhandled")
_HIDDEN = {"dap_id", "internal"}


class ExceptionBreakpointsBody(Input):
    filters: list[str] = msgspec.field(default_factory=list)
    exception_types: list[str] = msgspec.field(default_factory=list)


class ProfileBody(Input):
    name: str
    session_id: str | None = None
    breakpoints: list[dict[str, Any]] | None = None


def view(bp: BreakpointRecord) -> dict[str, Any]:
    data = msgspec.to_builtins(bp)
    data["breakpoint_id"] = data.pop("id")
    data["hit_count"] = bp.hit_count
    data["verified"] = bp.verified
    return {k: v for k, v in data.items() if k not in _HIDDEN}


class BreakpointController(Controller):
    path = "/sessions/{session_id:str}"
    tags = ["breakpoints"]  # noqa: RUF012

    @post("/breakpoints", status_code=200, summary="Set one breakpoint, or several with a list")
    async def add(self, manager: SessionManager, session_id: str, request: Request[Any, Any, Any]) -> Any:
        session = manager.get(session_id)
        reqs, many = breakpoints.parse_requests(await any_body(request))
        async with session.lock:
            created = await breakpoints.add(session, reqs)
        views = [view(b) for b in created]
        return {"breakpoints": views} if many else views[0]

    @get("/breakpoints", summary="All breakpoints with verification and hit counts")
    async def list_(self, manager: SessionManager, session_id: str) -> dict[str, Any]:
        session = manager.get(session_id)
        return {"breakpoints": [view(b) for b in session.record.breakpoints if not b.internal]}

    @patch("/breakpoints/{bp_id:str}", summary="Change condition, hit_condition, log_message or enabled")
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

    @post("/exception-breakpoints", status_code=200, summary="Pause on raised/uncaught exceptions, optionally of given types")
    async def exceptions(
        self, manager: SessionManager, session_id: str, data: ExceptionBreakpointsBody
    ) -> dict[str, Any]:
        bad = [f for f in data.filters if f not in EXCEPTION_FILTERS]
        if bad:
            raise InvalidRequest(
                f"unknown exception filter(s): {', '.join(bad)}",
                details={"filters": bad, "allowed": list(EXCEPTION_FILTERS)},
                hint="Use raised, uncaught or userUnhandled.",
            )
        bad_types = [t for t in data.exception_types if not t.replace(".", "").replace("_", "").isalnum()]
        if bad_types:
            raise InvalidRequest("exception_types must be class names", details={"exception_types": bad_types})
        session = manager.get(session_id)
        filters = data.filters or (["raised"] if data.exception_types else [])
        async with session.lock:
            previous = session.record.exception_filters
            session.record.exception_filters = ExceptionFilters(filters=filters, exception_types=data.exception_types)
            if session.client is not None and not session.client.closed.is_set():
                try:
                    await session.apply_exception_filters()
                except Exception:
                    session.record.exception_filters = previous
                    raise
            await session.save()
        return {"filters": filters, "exception_types": data.exception_types}

    @get("/exception-breakpoints", summary="Exception breakpoint filters in force")
    async def get_exceptions(self, manager: SessionManager, session_id: str) -> dict[str, Any]:
        filters = manager.get(session_id).record.exception_filters or ExceptionFilters()
        return {"filters": filters.filters, "exception_types": filters.exception_types}

    @post("/breakpoint-profiles/{name:str}/apply", status_code=200, summary="Set a named profile's breakpoints")
    async def apply_profile(self, manager: SessionManager, session_id: str, name: str) -> dict[str, Any]:
        saved = await manager.store.get_profile(name)
        if saved is None:
            raise NotFound(f"no breakpoint profile '{name}'", details={"name": name},
                           hint="List profiles with GET /breakpoint-profiles.")
        session = manager.get(session_id)
        reqs = [
            breakpoints.validate_request(breakpoints.BreakpointRequest(
                file=b.file, line=b.line, function=b.function, condition=b.condition,
                hit_condition=b.hit_condition, log_message=b.log_message, enabled=b.enabled))
            for b in saved
        ]
        async with session.lock:
            created = await breakpoints.add(session, reqs)
        return {"breakpoints": [view(b) for b in created]}


class ProfileController(Controller):
    path = "/breakpoint-profiles"
    tags = ["breakpoints"]  # noqa: RUF012

    @get("/", summary="Named breakpoint sets")
    async def list_profiles(self, manager: SessionManager) -> dict[str, Any]:
        profiles = await manager.store.list_profiles()
        return {"profiles": [{"name": n, "breakpoints": [view(b) for b in bps]} for n, bps in profiles.items()]}

    @post("/", status_code=201, summary="Save a named breakpoint set (from a session, or given)")
    async def save_profile(self, manager: SessionManager, data: ProfileBody) -> dict[str, Any]:
        if data.session_id:
            saved = [b for b in manager.get(data.session_id).record.breakpoints if not b.internal]
        elif data.breakpoints is not None:
            reqs, _ = breakpoints.parse_requests(data.breakpoints)
            saved = [
                BreakpointRecord(id=f"p{i}", kind="function" if r.function else "line", file=r.file, line=r.line,
                                 function=r.function, condition=r.condition, hit_condition=r.hit_condition,
                                 log_message=r.log_message, enabled=r.enabled)
                for i, r in enumerate(reqs, 1)
            ]
        else:
            raise InvalidRequest("give 'session_id' or 'breakpoints'")
        await manager.store.save_profile(data.name, saved)
        return {"name": data.name, "breakpoints": len(saved)}
