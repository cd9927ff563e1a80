"""Line, function and exception breakpoints, and named breakpoint profiles."""

from __future__ import annotations

from typing import Annotated, Any

import msgspec
from litestar import Controller, Request, delete, get, patch, post
from litestar.params import JSONBody

from debugrelay.models import (
    BreakpointList,
    BreakpointView,
    Deleted,
    ExceptionFiltersView,
    Input,
    Profile,
    ProfileApplied,
    ProfileList,
    ProfileSaved,
)
from debugrelay.models.limits import MAX_BREAKPOINTS_PER_REQUEST, ExceptionFilter, ExceptionType
from debugrelay.sessions import BreakpointUpdate, breakpoints

from ._body import any_body
from ._deps import Service


class ExceptionBreakpointsBody(Input):
    filters: list[ExceptionFilter] = msgspec.field(default_factory=list)
    exception_types: list[ExceptionType] = msgspec.field(default_factory=list)


class ProfileBody(Input):
    name: Annotated[str, msgspec.Meta(max_length=100)]
    session_id: str | None = None
    breakpoints: Annotated[list[dict[str, Any]], msgspec.Meta(max_length=MAX_BREAKPOINTS_PER_REQUEST)] | None = None


class BreakpointController(Controller):
    path = "/sessions/{session_id:str}"
    tags = ["breakpoints"]  # noqa: RUF012

    @post("/breakpoints", status_code=200, summary="Set one breakpoint, or several with a list (all or none)")
    async def add(
        self, service: Service, session_id: str, request: Request[Any, Any, Any]
    ) -> BreakpointView | BreakpointList:
        reqs, many = breakpoints.decode_requests(await any_body(request))
        created = await service.add_breakpoints(session_id, reqs)
        return BreakpointList(breakpoints=created) if many else created[0]

    @get("/breakpoints", summary="All breakpoints with verification, hit counts and never-hit marks")
    async def list_(self, service: Service, session_id: str) -> BreakpointList:
        return await service.breakpoints(session_id)

    @get("/breakpoints/{bp_id:str}", summary="One breakpoint")
    async def get_one(self, service: Service, session_id: str, bp_id: str) -> BreakpointView:
        return await service.breakpoint(session_id, bp_id)

    @patch("/breakpoints/{bp_id:str}", summary="Change condition, hit condition, log message, enabled, line")
    async def update(
        self, service: Service, session_id: str, bp_id: str, data: JSONBody[BreakpointUpdate]
    ) -> BreakpointView:
        return await service.update_breakpoint(session_id, bp_id, data)

    @delete("/breakpoints/{bp_id:str}", status_code=200, summary="Remove a breakpoint")
    async def remove(self, service: Service, session_id: str, bp_id: str) -> Deleted:
        return await service.remove_breakpoint(session_id, bp_id)

    @post(
        "/exception-breakpoints",
        status_code=200,
        summary="Pause on raised/uncaught exceptions, optionally only of given types (and subclasses)",
    )
    async def exceptions(
        self, service: Service, session_id: str, data: ExceptionBreakpointsBody
    ) -> ExceptionFiltersView:
        return await service.set_exception_breakpoints(session_id, list(data.filters), data.exception_types)

    @get("/exception-breakpoints", summary="Exception breakpoint filters in force")
    async def get_exceptions(self, service: Service, session_id: str) -> ExceptionFiltersView:
        return await service.exception_breakpoints(session_id)

    @post("/breakpoint-profiles/{name:str}/apply", status_code=200, summary="Set a profile's breakpoints")
    async def apply_profile(self, service: Service, session_id: str, name: str) -> ProfileApplied:
        return await service.apply_profile(session_id, name)


class ProfileController(Controller):
    path = "/breakpoint-profiles"
    tags = ["breakpoints"]  # noqa: RUF012

    @get("/", summary="Named breakpoint sets")
    async def list_profiles(self, service: Service) -> ProfileList:
        return await service.list_profiles()

    @get("/{name:str}", summary="One named breakpoint set")
    async def get_profile(self, service: Service, name: str) -> Profile:
        return await service.profile(name)

    @post("/", status_code=201, summary="Save a named breakpoint set (from a session, or given)")
    async def save_profile(self, service: Service, data: JSONBody[ProfileBody]) -> ProfileSaved:
        requests = None if data.breakpoints is None else breakpoints.decode_requests(data.breakpoints)[0]
        return await service.save_profile(data.name, session_id=data.session_id, requests=requests)
