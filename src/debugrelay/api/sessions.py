"""The session routes worded by hand: creating a session (launch or attach in one body), and continue and
the steps (one operation, four paths, an optional body)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

import msgspec
from litestar import Controller, Request, post
from litestar.params import QueryParameter

from debugrelay.models import (
    AttachSpec,
    Input,
    LaunchRequest,
    PathMapping,
    SessionDetail,
    Status,
)
from debugrelay.models.limits import Host, Name, NamespaceName, Pid, PodName, Port, Seconds, TimeoutMinutes
from debugrelay.service import STEP_WAIT

from ._body import optional_body
from ._deps import Service


class SessionCreate(Input):
    name: Name | None = None
    timeout_minutes: TimeoutMinutes | None = None
    mode: Literal["launch", "attach"] = "launch"
    host: Host = "127.0.0.1"
    port: Port | None = None
    pid: Pid | None = None
    pod: PodName | None = None
    namespace: NamespaceName | None = None
    path_mappings: list[PathMapping] = msgspec.field(default_factory=list)
    launch: LaunchRequest | None = None


class ResumeBody(Input):
    thread_id: int | None = None
    wait: Seconds | None = None
    timeout: Seconds | None = None
    # continue: every paused process of the program goes on, not only the one whose stop is shown
    all: bool = False


# ?locals=true: a stop comes with its source line, the top frame's locals and the watch values
Details = Annotated[
    bool, QueryParameter(name="locals", description="Answer a stop with its source line, locals and watch values.")
]


class SessionController(Controller):
    path = "/sessions"
    tags = ["sessions"]  # noqa: RUF012

    @post("/", status_code=201, summary="Create a debug session (launch mode, or attach to a debugpy)")
    async def create_session(self, service: Service, request: Request[Any, Any, Any]) -> SessionDetail:
        body = await optional_body(request, SessionCreate) or SessionCreate()
        attach = None
        if body.mode == "attach":
            attach = AttachSpec(
                host=body.host,
                port=body.port,
                pid=body.pid,
                pod=body.pod,
                namespace=body.namespace,
                path_mappings=body.path_mappings,
            )
        return await service.create_session(
            name=body.name, timeout_minutes=body.timeout_minutes, attach=attach, launch=body.launch
        )

    async def _resume(
        self,
        service: Service,
        session_id: str,
        request: Request[Any, Any, Any],
        command: str,
        *,
        default: float,
        details: bool,
    ) -> Status:
        body = await optional_body(request, ResumeBody) or ResumeBody()
        wait = body.timeout if body.timeout is not None else body.wait
        status = await service.resume(
            session_id, command, body.thread_id, default if wait is None else wait, details=details, every=body.all
        )
        if status.timed_out and status.hint is None:  # the next step, in the API's words
            status.hint = "POST /sessions/{id}/wait waits for the next stop; POST /sessions/{id}/pause pauses it."
        return status

    @post("/{session_id:str}/continue", status_code=200, summary="Resume until the next breakpoint or the end")
    async def continue_(
        self, service: Service, session_id: str, request: Request[Any, Any, Any], details: Details = False
    ) -> Status:
        return await self._resume(service, session_id, request, "continue", default=0.0, details=details)

    @post("/{session_id:str}/step-over", status_code=200, summary="Run the current line; answers with the new location")
    async def step_over(
        self, service: Service, session_id: str, request: Request[Any, Any, Any], details: Details = False
    ) -> Status:
        return await self._resume(service, session_id, request, "step-over", default=STEP_WAIT, details=details)

    @post("/{session_id:str}/step-into", status_code=200, summary="Step into the call on the current line")
    async def step_into(
        self, service: Service, session_id: str, request: Request[Any, Any, Any], details: Details = False
    ) -> Status:
        return await self._resume(service, session_id, request, "step-into", default=STEP_WAIT, details=details)

    @post("/{session_id:str}/step-out", status_code=200, summary="Finish the current function; stop in its caller")
    async def step_out(
        self, service: Service, session_id: str, request: Request[Any, Any, Any], details: Details = False
    ) -> Status:
        return await self._resume(service, session_id, request, "step-out", default=STEP_WAIT, details=details)

    @post("/{session_id:str}/threads/{thread_id:int}/continue", status_code=200, summary="Resume one thread")
    async def continue_thread(self, service: Service, session_id: str, thread_id: int) -> Status:
        return await service.resume(session_id, "continue", thread_id, 0.0)
