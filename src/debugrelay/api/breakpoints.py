"""Line, function and exception breakpoints, and named breakpoint profiles."""

from __future__ import annotations

from typing import Annotated, Any

import msgspec
from litestar import Controller, Request, post
from litestar.params import JSONBody

from debugrelay.models import (
    BreakpointList,
    BreakpointView,
    Input,
    ProfileSaved,
)
from debugrelay.models.limits import MAX_BREAKPOINTS_PER_REQUEST, ExceptionFilter, ExceptionType
from debugrelay.sessions import breakpoints

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


class ProfileController(Controller):
    path = "/breakpoint-profiles"
    tags = ["breakpoints"]  # noqa: RUF012

    @post("/", status_code=201, summary="Save a named breakpoint set (from a session, or given)")
    async def save_profile(self, service: Service, data: JSONBody[ProfileBody]) -> ProfileSaved:
        requests = None if data.breakpoints is None else breakpoints.decode_requests(data.breakpoints)[0]
        return await service.save_profile(data.name, session_id=data.session_id, requests=requests)
