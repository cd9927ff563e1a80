"""Session lifecycle, launch/attach, execution control, wait, output and input."""

from __future__ import annotations

from typing import Annotated, Any, Literal

import msgspec
from litestar import Controller, Request, delete, get, patch, post
from litestar.params import JSONBody, QueryParameter

from debugrelay.errors import InvalidRequest
from debugrelay.models import (
    AttachSpec,
    Cleared,
    Deleted,
    HttpCall,
    HttpCallView,
    Input,
    InputSent,
    LaunchRequest,
    OutputPage,
    PathMapping,
    Ping,
    SessionDetail,
    SessionList,
    Status,
)
from debugrelay.models.limits import Host, InputText, Name, NamespaceName, Pid, PodName, Port, TimeoutMinutes
from debugrelay.service import STEP_WAIT

from ._body import optional_body
from ._deps import Service
from ._params import OutputLimit, ProcessId, Seconds


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


class SessionPatch(Input):
    name: Name | None = None
    timeout_minutes: TimeoutMinutes | None = None


class ResumeBody(Input):
    thread_id: int | None = None
    wait: Seconds | None = None
    timeout: Seconds | None = None
    # continue: every paused process of the program goes on, not only the one whose stop is shown
    all: bool = False


class WaitBody(Input):
    timeout: Seconds = 30.0
    include_autopsy: bool = False


class InputBody(Input):
    input: InputText | None = None
    text: InputText | None = None
    data: InputText | None = None
    newline: bool = False


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

    @get("/", summary="List sessions with their status")
    async def list_sessions(self, service: Service) -> SessionList:
        return await service.list_sessions()

    @get("/{session_id:str}", summary="Session detail")
    async def get_session(self, service: Service, session_id: str) -> SessionDetail:
        return await service.session(session_id)

    @patch("/{session_id:str}", summary="Rename a session or change its idle timeout")
    async def patch_session(self, service: Service, session_id: str, data: JSONBody[SessionPatch]) -> SessionDetail:
        return await service.update_session(session_id, name=data.name, timeout_minutes=data.timeout_minutes)

    @delete("/{session_id:str}", status_code=200, summary="End the target and forget the session")
    async def delete_session(self, service: Service, session_id: str) -> Deleted:
        return await service.delete_session(session_id)

    @get("/{session_id:str}/status", summary="Compact status: paused where and why, or exit code")
    async def status(self, service: Service, session_id: str) -> Status:
        return await service.status(session_id)

    @get("/{session_id:str}/ping", summary="Heartbeat: resets the idle timeout")
    async def ping(self, service: Service, session_id: str) -> Ping:
        return await service.ping(session_id)

    @post("/{session_id:str}/launch", status_code=200, summary="Launch a script or module under debugpy")
    async def launch(self, service: Service, session_id: str, data: JSONBody[LaunchRequest]) -> Status:
        return await service.launch(session_id, data)

    @post("/{session_id:str}/attach", status_code=200, summary="Attach to a debugpy listening at host:port or in a pid")
    async def attach(self, service: Service, session_id: str, data: JSONBody[AttachSpec]) -> Status:
        return await service.attach(session_id, data)

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
        if status.timed_out:
            status.message = f"{status.message}; call /wait or /pause"
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

    @post(
        "/{session_id:str}/request",
        status_code=200,
        summary="Send an HTTP request to the program (a service): answers with its response or the stop it caused",
    )
    async def request(self, service: Service, session_id: str, data: JSONBody[HttpCall]) -> Status:
        """Sent from where the relay reaches the target (a local target's loopback, a container's network).
        A stop first: the answer is that stop with ``request`` pending; its response comes with a later
        answer (``requests``) and stays readable at ``GET .../requests/{request_id}``."""
        return await service.request(session_id, data)

    @get("/{session_id:str}/requests/{request_id:str}", summary="A request sent to the program, and its response")
    async def request_result(self, service: Service, session_id: str, request_id: str) -> HttpCallView:
        return await service.request_result(session_id, request_id)

    @post(
        "/{session_id:str}/processes/{pid:int}/show",
        status_code=200,
        summary="Show the stop of another paused process: stack, variables, evaluate and steps apply to it",
    )
    async def show_process(self, service: Service, session_id: str, pid: ProcessId) -> Status:
        """The stop shown until now waits its turn, as ``processes_waiting`` says, and is shown again when
        this process goes on."""
        return await service.show_process(session_id, pid)

    @post("/{session_id:str}/pause", status_code=200, summary="Pause the running target")
    async def pause(self, service: Service, session_id: str) -> Status:
        return await service.pause(session_id)

    @post("/{session_id:str}/wait", status_code=200, summary="Long-poll until the target pauses or ends")
    async def wait(
        self, service: Service, session_id: str, request: Request[Any, Any, Any], details: Details = False
    ) -> Status:
        body = await optional_body(request, WaitBody) or WaitBody()
        return await service.wait(session_id, body.timeout, body.include_autopsy, details=details)

    @post(
        "/{session_id:str}/restart", status_code=200, summary="Restart the program with the same launch and breakpoints"
    )
    async def restart(self, service: Service, session_id: str) -> Status:
        return await service.restart(session_id)

    @post("/{session_id:str}/detach", status_code=200, summary="Disconnect and leave the target running")
    async def detach(self, service: Service, session_id: str) -> Status:
        return await service.detach(session_id)

    @post("/{session_id:str}/terminate", status_code=200, summary="Kill the target; the session stays")
    async def terminate(self, service: Service, session_id: str) -> Status:
        return await service.terminate(session_id)

    @get("/{session_id:str}/output", summary="stdout/stderr since a cursor, paginated")
    async def output(
        self,
        service: Service,
        session_id: str,
        since: str | None = None,
        limit: OutputLimit = 200,
        stream: str | None = None,
        *,
        newest: bool = False,
    ) -> OutputPage:
        """``newest``: the last ``limit`` entries after ``since`` instead of the first (``skipped`` says that
        earlier ones were left out; the cursor ends the output)."""
        return await service.output(session_id, since, limit, stream, newest=newest)

    @post("/{session_id:str}/output/new", status_code=200, summary="Output no answer carried yet, marked carried")
    async def new_output(self, service: Service, session_id: str) -> OutputPage:
        """The run's output since the last call (by any client, through any process): each line is answered
        once; a new run starts at its own first line."""
        return await service.new_output(session_id)

    @delete("/{session_id:str}/output", status_code=200, summary="Clear the output buffer")
    async def clear_output(self, service: Service, session_id: str) -> Cleared:
        return await service.clear_output(session_id)

    @post("/{session_id:str}/input", status_code=200, summary="Send text to the target's stdin")
    async def send_input(self, service: Service, session_id: str, data: JSONBody[InputBody]) -> InputSent:
        return await _send_input(service, session_id, data)

    @post("/{session_id:str}/stdin", status_code=200, summary="Alias of /input", include_in_schema=False)
    async def send_stdin(self, service: Service, session_id: str, data: JSONBody[InputBody]) -> InputSent:
        return await _send_input(service, session_id, data)


async def _send_input(service: Service, session_id: str, data: JSONBody[InputBody]) -> InputSent:
    text = data.input if data.input is not None else data.text if data.text is not None else data.data
    if text is None:
        raise InvalidRequest("give the text to send as 'input'", hint='e.g. {"input": "yes\\n"}')
    return await service.send_input(session_id, text, data.newline)
